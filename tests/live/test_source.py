"""cueref.live.source: a live frame source survives a stalled stream (reopened, the gap reported), keeps
the newest frames when the referee falls behind, plays a file at the speed of its timestamps, and
hands a file's damage to the referee after the good frames."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from cueref.live.source import LiveSource, SourceConfig, source_kind
from cueref.pipeline import SourceGap
from cueref.video import DamagedVideoError, Frame, VideoError, VideoReader
from tests._realdata import REALDATA
from tests.live._live import BLANK, TruthReader
from tests.pipeline._standins import load_clip


class Connection:
    """A stream connection: frames ``first .. first+n-1`` at ``fps`` (its clock starts at 0, as a reopened
    stream's does), then silence (``stall=True``: ``read`` blocks until the network read times out after
    ``timeout_s``) or the end."""

    def __init__(self, first: int, n: int, fps: float = 50.0, stall: bool = False, timeout_s: float = 1.0):
        self.first, self.n, self.fps, self.stall, self.timeout_s = first, n, fps, stall, timeout_s
        self.i = 0
        self.closed = threading.Event()
        self.info = None

    def read(self) -> Frame | None:
        if self.i >= self.n:
            if self.stall and not self.closed.wait(self.timeout_s):
                raise VideoError("network read timed out")
            return None
        time.sleep(1 / self.fps)
        frame = Frame(self.first + self.i, self.i / self.fps, BLANK)
        self.i += 1
        return frame

    def close(self) -> None:
        self.closed.set()


def frames_and_gaps(source, until_index):
    out = []
    for item in source:
        out.append(item)
        if isinstance(item, Frame) and item.index >= until_index:
            break
    return out


def test_the_kind_of_a_source():
    assert [source_kind(s) for s in (0, "1", "rtsp://cam/stream", "http://h/x.ts", "match.mp4")] == [
        "camera", "camera", "url", "url", "file"]


def test_a_stalled_stream_is_reopened_and_the_gap_reported():
    """The stream goes silent after 30 frames; after 0.3 s the source gives the connection up and opens a
    new one, whose clock starts again at 0: the session's clock and frame indices run on, and one gap
    spans the silence."""
    conns = iter([Connection(0, 30, stall=True), Connection(100, 40)])
    opened: list[Connection] = []

    def opener():
        opened.append(next(conns))
        return opened[-1]

    with LiveSource("rtsp://cam/stream", config=SourceConfig(stall_s=0.3), opener=opener) as source:
        items = frames_and_gaps(source, 60)
        assert source.stalls == 1 and source.reopens == 1 and source.gaps == 1
    frames = [i for i in items if isinstance(i, Frame)]
    (gap,) = [i for i in items if isinstance(i, SourceGap)]
    assert [f.index for f in frames] == list(range(61))
    times = [f.t_s for f in frames]
    assert all(b > a for a, b in zip(times, times[1:]))
    assert gap.t_s == frames[29].t_s and gap.until_s == frames[30].t_s and "reopened" in gap.reason
    assert 0.3 <= gap.until_s - gap.t_s < 1.0  # the silence, measured on the wall clock
    assert items.index(gap) == 30  # between the last frame before and the first after
    assert all(abs((b - a) - 1 / 50) < 1e-9 for a, b in zip(times[30:], times[31:]))  # the new connection's own clock
    assert opened[0].closed.wait(2.0)  # the stalled connection is let go when its read times out


def test_a_stream_that_ends_is_reopened():
    conns = iter([Connection(0, 10), Connection(0, 10)])
    with LiveSource("http://cam/live.ts", opener=lambda: next(conns)) as source:
        items = frames_and_gaps(source, 19)
    assert [i.index for i in items if isinstance(i, Frame)] == list(range(20))
    assert source.reopens == 1 and source.stalls == 0


def test_a_file_played_in_real_time_takes_its_duration():
    clip = load_clip("ficha/suicide")  # 3.9 s
    reader = TruthReader(clip)
    start = time.monotonic()
    with LiveSource("suicide.mp4", realtime=True, opener=lambda: reader) as source:
        frames = list(source)
    elapsed = time.monotonic() - start
    assert [f.index for f in frames] == list(range(clip.truth.n_frames))
    assert [f.t_s for f in frames] == [float(t) for t in clip.truth.t_s]  # a file keeps its own times
    assert clip.truth.t_s[-1] - 0.05 < elapsed < clip.truth.t_s[-1] + 0.5


def test_a_referee_that_falls_behind_loses_the_oldest_frames_and_hears_of_it():
    """A file played live to a referee that takes 0.1 s a frame (three times the frame interval): the
    source keeps the newest frames, drops the rest, and each jump beyond max_gap_s is a gap."""
    clip = load_clip("ficha/suicide")
    reader = TruthReader(clip)
    with LiveSource("suicide.mp4", realtime=True, config=SourceConfig(queue_frames=2, max_gap_s=0.2),
                    opener=lambda: reader) as source:
        items = []
        for item in source:
            items.append(item)
            if isinstance(item, Frame):
                time.sleep(0.1)
    frames = [i for i in items if isinstance(i, Frame)]
    assert source.dropped > 0 and len(frames) < clip.truth.n_frames
    assert frames[-1].index == clip.truth.n_frames - 1  # the newest frame always arrives
    for gap in (i for i in items if isinstance(i, SourceGap)):
        assert gap.until_s - gap.t_s > 0.2 and "dropped" in gap.reason


def test_a_file_read_as_fast_as_the_referee_takes_it_loses_nothing():
    clip = load_clip("ficha/suicide")
    reader = TruthReader(clip)
    with LiveSource("suicide.mp4", config=SourceConfig(queue_frames=1), opener=lambda: reader) as source:
        frames = []
        for f in source:
            frames.append(f)
            time.sleep(0.002)
    assert [f.index for f in frames] == list(range(clip.truth.n_frames)) and source.dropped == 0


class Damaged(TruthReader):
    def read(self):
        if self.i == 20:
            raise DamagedVideoError("suicide.mp4: damaged after frame 19", path="suicide.mp4", frames_read=20, last_index=19, last_t_s=self.t_s[19],
                                    reason="Invalid data found when processing input")
        return super().read()


def test_a_damaged_file_gives_its_good_frames_then_the_error():
    reader = Damaged(load_clip("ficha/suicide"))
    got = []
    with pytest.raises(DamagedVideoError):
        with LiveSource("suicide.mp4", opener=lambda: reader) as source:
            for f in source:
                got.append(f)
    assert len(got) == 20


def test_a_source_with_no_frame_is_refused():
    class Empty(TruthReader):
        def read(self):
            return None

    with pytest.raises(VideoError, match="holds no frame"):
        LiveSource("empty.mp4", opener=lambda: Empty(load_clip("ficha/suicide")))


def test_closing_stops_a_source_blocked_in_a_stall():
    """Closing from another thread ends the iteration even while the stream is silent."""
    conn = Connection(0, 5, stall=True, timeout_s=0.8)
    source = LiveSource("rtsp://cam/stream", config=SourceConfig(stall_s=60), opener=lambda: conn)
    threading.Timer(0.5, source.close).start()
    start = time.monotonic()
    assert len(list(source)) == 5
    assert time.monotonic() - start < 1.0
    assert conn.closed.wait(2.0)  # its read timed out and the connection was closed


JAMES = REALDATA / "james-ecd-pool" / "video-1531832402.mp4"


@pytest.mark.skipif(not JAMES.exists(), reason="real clip from james-ecd/pool-ball-tracker (james-ecd-pool) not present "
                                               "in the shared real-footage folder (or $CUEREF_REALDATA)")
def test_a_real_clip_plays_in_real_time_with_nothing_dropped():
    """A real overhead clip (an English pub table's break, 1280x720 at 25 fps, 4.9 s) decoded with PyAV
    and played at the speed of its timestamps: every frame arrives, with its own time, each within a
    frame interval or two of when a camera would have delivered it."""
    lags = []
    with LiveSource(str(JAMES), realtime=True) as source:
        frames = []
        for f in source:
            lags.append(time.monotonic() - (source._anchor_s + f.t_s - source.first.t_s))
            frames.append(f)
    with VideoReader(JAMES) as reader:
        times = [f.t_s for f in reader]
    assert [f.t_s for f in frames] == times and source.dropped == 0 and source.gaps == 0
    assert sorted(lags)[len(lags) // 2] < 0.08
