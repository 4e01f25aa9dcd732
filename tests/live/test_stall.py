"""A live stream that stalls mid-shot, end to end: the sample served over local HTTP as a camera serves
MPEG-TS, read by :class:`~cueref.live.source.LiveSource` through PyAV, refereed by a live session with the
stand-in stages. The stream goes silent for 0.6 s during the shot (and comes back at its next keyframe); the source gives the connection up,
reopens the stream, and the referee's log marks the gap ``unobserved`` with no event inside it; the
shot's call waits for the operator."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from cueref.live.source import LiveSource, SourceConfig
from tests.live._live import Collected, standin_session
from tests.live._stream import LiveStream
from tests.pipeline._standins import TruthDetector, load_clip
from tracking.events import Unobserved
from vision.types import FrameDetections

pytestmark = pytest.mark.slow


class NearestFrame(TruthDetector):
    """The stand-in detector for a stream: a frame's time on the session's clock names the clip's frame
    (a reopened stream's frames carry the session's indices, not the clip's)."""

    def detect(self, image, frame, t_s) -> FrameDetections:
        k = int(np.argmin(np.abs(np.asarray(self.truth.t_s) - t_s)))
        return super().detect(image, k, float(self.truth.t_s[k]))


def test_a_stream_that_stalls_mid_shot_is_reopened_and_the_gap_is_unobserved():
    clip = load_clip("ficha/miss")  # shot 1.0-3.92 s; the cue ball leaves T2 at 2.48 s
    collected = Collected()
    with LiveStream(clip.video) as stream:
        stream.stall(at_s=1.7, for_s=0.6)
        threading.Timer(0.2, stream.start).start()  # the source connects first: the stream starts with it
        source = LiveSource(stream.url, config=SourceConfig(stall_s=0.5, timeout_s=3.0))
        session = standin_session(clip, source, consumers=[collected], detector=NearestFrame(clip))
        worker = threading.Thread(target=session.run)
        worker.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r.steps for r in collected.results):
            time.sleep(0.1)
        session.stop()
        worker.join(timeout=10)
    assert not worker.is_alive()
    assert source.stalls >= 1 and source.reopens >= 1

    log = [e for r in collected.results for e in r.events]
    spans = [e for e in log if isinstance(e, Unobserved)]
    assert len(spans) == 1, log
    span = spans[0]
    assert 1.5 < span.t_s < 1.8 and span.until_s >= 2.3 and "reopened" in span.reason
    assert not [e for e in log if span.t_s < e.t_s <= span.until_s]  # no event crosses the gap
    assert [r.valid for r in collected.results].count(False) == 1  # the first frame after it
    calls = [s.decision for r in collected.results for s in r.steps]
    assert calls and calls[0].shot == 0 and calls[0].pending is not None
