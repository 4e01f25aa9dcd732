"""Tests for cueref.video: timestamps, seeking, writing, damaged files, errors.

All videos are tiny (64x48 .. 160x120) and made in ``tmp_path``.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import logging
import os
import threading
import time
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cueref.video import (
    CorruptVideoError,
    DamagedVideoError,
    Frame,
    TruncatedVideoError,
    VideoError,
    VideoInfo,
    VideoNotFoundError,
    VideoOpenError,
    VideoReader,
    VideoWriteError,
    VideoWriter,
    prefetch,
)
from cueref.video.rate import fps_fraction

NTSC = Fraction(30000, 1001)


# --------------------------------------------------------------------------- helpers


def probe(path) -> VideoInfo:
    """A video's header, read the way the referee reads it."""
    with VideoReader(path) as reader:
        return reader.info


def pattern(i: int, w: int = 64, h: int = 48) -> np.ndarray:
    """Smooth moving colour gradient, (h, w, 3) uint8 BGR; compresses well."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    b = 128 + 100 * np.sin((xx + 2 * i) / 9.0)
    g = 128 + 100 * np.cos((yy + i) / 7.0)
    r = (xx * 2 + yy + 3 * i) % 256
    return np.stack([b, g, r], axis=-1).astype(np.uint8)


def write_with_pyav(path: Path, pts: list[int], time_base: Fraction, rate: Fraction,
                    w: int = 64, h: int = 48, gop: int = 12) -> None:
    """Write an MP4 directly with PyAV (independent of VideoWriter), frame i at
    ``pts[i] * time_base`` seconds. Uses B-frames, like typical camera files."""
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=rate)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        s.time_base = time_base
        s.codec_context.time_base = time_base
        s.options = {"preset": "ultrafast", "g": str(gop), "bf": "2"}
        for i, p in enumerate(pts):
            f = av.VideoFrame.from_ndarray(pattern(i, w, h), format="bgr24")
            f.pts, f.time_base = p, time_base
            for pkt in s.encode(f):
                c.mux(pkt)
        for pkt in s.encode(None):
            c.mux(pkt)


def write_cfr(path: Path, n: int, fps=30, w: int = 64, h: int = 48, **kw) -> Path:
    kw.setdefault("preset", "ultrafast")
    with VideoWriter(path, fps, **kw) as writer:
        for i in range(n):
            writer.write(pattern(i, w, h))
    return path


def read_all(path) -> list[Frame]:
    with VideoReader(path) as reader:
        return list(reader)


def read_until_error(path, **kw) -> tuple[list[Frame], BaseException | None]:
    frames: list[Frame] = []
    with VideoReader(path, **kw) as reader:
        try:
            for frame in reader:
                frames.append(frame)
        except VideoError as exc:
            assert reader.read() is None  # error is raised once, then end of stream
            return frames, exc
    return frames, None


# --------------------------------------------------------------------------- timestamps


def test_constant_30fps_timestamps_and_indices(tmp_path):
    path = write_cfr(tmp_path / "cfr30.mp4", 45, fps=30)
    with VideoReader(path) as reader:
        assert reader.kind == "file"
        assert reader.info.path == str(path)
        assert (reader.width, reader.height) == (64, 48)
        assert reader.fps == pytest.approx(30.0)
        assert reader.fps_fraction == Fraction(30)
        assert reader.frame_count == 45
        assert reader.duration_s == pytest.approx(1.5, abs=1e-6)
        frames = list(reader)
    assert [f.index for f in frames] == list(range(45))
    for f in frames:
        assert f.t_s == pytest.approx(f.index / 30, rel=1e-6, abs=1e-9)
        assert f.image.shape == (48, 64, 3) and f.image.dtype == np.uint8


@pytest.mark.parametrize("maker", ["pyav", "writer_fraction", "writer_float"])
def test_ntsc_29_97_timestamps_not_truncated(tmp_path, maker):
    n = 60
    path = tmp_path / f"ntsc_{maker}.mp4"
    if maker == "pyav":  # as a camera/ffmpeg would write it: time base 1001/30000
        write_with_pyav(path, list(range(n)), Fraction(1001, 30000), NTSC)
    else:
        write_cfr(path, n, fps=NTSC if maker == "writer_fraction" else 29.97)
    with VideoReader(path) as reader:
        assert reader.fps_fraction == NTSC
        assert reader.fps == pytest.approx(30000 / 1001, rel=1e-9)
        frames = list(reader)
    assert [f.index for f in frames] == list(range(n))
    for f in frames:
        assert f.t_s == pytest.approx(f.index * 1001 / 30000, rel=1e-6, abs=1e-9)
    # not index/int(fps): by frame 59 that would be 2 ms off
    assert abs(frames[-1].t_s - 59 / 30) > 1e-3


VFR_TIMES = [0.0, 0.033, 0.1, 0.15, 0.3, 0.31, 0.5, 0.9, 1.0, 1.234]


def test_variable_frame_rate_roundtrip_through_writer(tmp_path):
    path = tmp_path / "vfr.mp4"
    with VideoWriter(path, fps=30, preset="ultrafast") as writer:
        for i, t in enumerate(VFR_TIMES):
            writer.write(pattern(i), t_s=t)
    frames = read_all(path)
    assert [f.index for f in frames] == list(range(len(VFR_TIMES)))
    assert [f.t_s for f in frames] == pytest.approx(VFR_TIMES, abs=1e-3)
    info = probe(path)
    assert info.frame_count == len(VFR_TIMES)
    assert info.duration_s >= VFR_TIMES[-1]  # the MP4 does not cut the last frames


def test_variable_frame_rate_file_from_pyav(tmp_path):
    """Millisecond time base with B-frames, written without VideoWriter."""
    path = tmp_path / "vfr_pyav.mp4"
    write_with_pyav(path, [round(t * 1000) for t in VFR_TIMES], Fraction(1, 1000), Fraction(30))
    frames = read_all(path)
    assert [f.index for f in frames] == list(range(len(VFR_TIMES)))
    assert [f.t_s for f in frames] == pytest.approx(VFR_TIMES, abs=1e-3)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gaps_ms=st.lists(st.integers(min_value=1, max_value=250), min_size=1, max_size=12))
def test_vfr_roundtrip_property(tmp_path, gaps_ms):
    times = [0.0]
    for g in gaps_ms:
        times.append(times[-1] + g / 1000)
    path = tmp_path / "prop.mp4"
    with VideoWriter(path, fps=30, preset="ultrafast") as writer:
        for i, t in enumerate(times):
            writer.write(pattern(i), t_s=t)
    frames = read_all(path)
    assert [f.t_s for f in frames] == pytest.approx(times, abs=1e-3)
    assert [f.index for f in frames] == list(range(len(times)))


# --------------------------------------------------------------------------- seeking


@pytest.fixture()
def ntsc_clip(tmp_path) -> tuple[Path, list[Frame]]:
    """90 frames at 30000/1001 fps, B-frames, keyframe every 12 frames."""
    path = tmp_path / "seek.mp4"
    write_with_pyav(path, list(range(90)), Fraction(1001, 30000), NTSC, gop=12)
    return path, read_all(path)


@pytest.mark.parametrize(
    "t", [0.0, 1001 / 30000, 0.5, 10 * 1001 / 30000, 1.0, 1.2345, 37 * 1001 / 30000 + 1e-4, 2.9]
)
def test_seek_gives_first_frame_at_or_after_t(ntsc_clip, t):
    path, ref = ntsc_clip
    expected = next(f for f in ref if f.t_s >= t - 1e-9)
    with VideoReader(path) as reader:
        reader.seek(t)
        f = reader.read()
        assert f.index == expected.index
        assert f.t_s == pytest.approx(expected.t_s, abs=1e-9)
        assert f.t_s >= t - 1e-9
        assert expected.index == 0 or ref[expected.index - 1].t_s < t
        assert np.array_equal(f.image, expected.image)
        assert reader.index_is_exact
        # reading continues with consecutive indices and the same times
        nxt = reader.read()
        assert nxt.index == f.index + 1
        assert nxt.t_s == pytest.approx(ref[nxt.index].t_s, abs=1e-9)


def test_seek_backwards_past_end_and_before_start(ntsc_clip):
    path, ref = ntsc_clip
    with VideoReader(path) as reader:
        frames = list(reader)
        assert len(frames) == 90
        reader.seek(2.0)
        assert reader.read().index == ref[next(i for i, f in enumerate(ref) if f.t_s >= 2.0)].index
        reader.seek(100.0)
        assert reader.read() is None
        reader.seek(-5.0)
        assert reader.read().index == 0
        reader.seek(1.0)
        rest = list(reader)
        assert [f.index for f in rest] == list(range(rest[0].index, 90))
        assert rest[0].t_s >= 1.0 > ref[rest[0].index - 1].t_s


def test_seek_in_variable_frame_rate_file(tmp_path):
    path = tmp_path / "vfr_seek.mp4"
    write_with_pyav(path, [round(t * 1000) for t in VFR_TIMES], Fraction(1, 1000), Fraction(30), gop=3)
    with VideoReader(path) as reader:
        for t in [0.0, 0.2, 0.31, 0.6, 1.1]:
            reader.seek(t)
            f = reader.read()
            i = next(i for i, v in enumerate(VFR_TIMES) if v >= t)
            assert f.index == i
            assert f.t_s == pytest.approx(VFR_TIMES[i], abs=1e-3)


# --------------------------------------------------------------------------- writer


def test_writer_output_is_browser_friendly_h264_mp4(tmp_path):
    n, w, h = 30, 160, 120
    path = tmp_path / "out.mp4"
    images = [pattern(i, w, h) for i in range(n)]
    with VideoWriter(path, fps=30, crf=18) as writer:
        for img in images:
            writer.write(img)
        assert writer.frames_written == n
    info = probe(path)
    assert isinstance(info, VideoInfo)
    assert info.codec == "h264"
    assert info.pix_fmt == "yuv420p"
    assert "mp4" in info.format_name
    assert (info.width, info.height, info.frame_count) == (w, h, n)
    assert info.fps == pytest.approx(30.0)
    assert info.duration_s == pytest.approx(1.0, abs=1e-6)
    with av.open(str(path)) as c:  # independent check with PyAV
        s = c.streams.video[0]
        assert s.codec_context.name == "h264" and s.codec_context.pix_fmt == "yuv420p"
        assert "mp4" in c.format.name
    data = path.read_bytes()
    assert data.index(b"moov") < data.index(b"mdat"), "faststart: moov must precede mdat"
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask, "the video gets ordinary permissions, not the temp file's 0600"
    frames = read_all(path)
    assert len(frames) == n
    diffs = [np.abs(f.image.astype(np.int16) - img).mean() for f, img in zip(frames, images)]
    assert max(diffs) < 4.0, diffs


def test_writer_pads_odd_size_and_infers_size(tmp_path):
    path = tmp_path / "odd.mp4"
    with VideoWriter(path, fps=25, preset="ultrafast") as writer:
        assert writer.width is None
        for i in range(5):
            writer.write(pattern(i, 63, 47))
        assert (writer.width, writer.height) == (64, 48)
    frames = read_all(path)
    assert frames[0].image.shape == (48, 64, 3)
    assert np.abs(frames[0].image[:47, :63].astype(np.int16) - pattern(0, 63, 47)).mean() < 4.0
    assert [f.t_s for f in frames] == pytest.approx([i / 25 for i in range(5)])


def test_writer_accepts_frames_and_keeps_their_times(tmp_path):
    src = tmp_path / "src.mp4"
    write_with_pyav(src, [round(t * 1000) for t in VFR_TIMES], Fraction(1, 1000), Fraction(30))
    dst = tmp_path / "copy.mp4"
    with VideoReader(src) as reader, VideoWriter(dst, fps=30, preset="ultrafast") as writer:
        for frame in reader:
            writer.write(frame)
    assert [f.t_s for f in read_all(dst)] == pytest.approx(VFR_TIMES, abs=1e-3)


def test_writer_uses_temp_file_and_renames_on_close(tmp_path):
    path = tmp_path / "atomic.mp4"
    writer = VideoWriter(path, fps=30, preset="ultrafast")
    writer.write(pattern(0))
    assert not path.exists()
    parts = list(tmp_path.glob(".atomic.mp4.*.part"))
    assert len(parts) == 1
    writer.write(pattern(1))
    writer.close()
    assert path.exists() and not parts[0].exists()
    assert len(read_all(path)) == 2


def test_writer_crash_leaves_no_file_named_like_a_good_one(tmp_path):
    path = tmp_path / "crash.mp4"
    with pytest.raises(RuntimeError):
        with VideoWriter(path, fps=30, preset="ultrafast") as writer:
            writer.write(pattern(0))
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_writer_rejects_bad_input(tmp_path):
    with pytest.raises(VideoWriteError, match="does not exist"):
        VideoWriter(tmp_path / "no_dir" / "x.mp4", fps=30)
    with pytest.raises(VideoWriteError, match="fps"):
        VideoWriter(tmp_path / "x.mp4", fps=0)
    with VideoWriter(tmp_path / "x.mp4", fps=30, size=(64, 48), preset="ultrafast") as writer:
        with pytest.raises(VideoWriteError, match=r"\(H, W, 3\) uint8"):
            writer.write(np.zeros((48, 64), np.uint8))
        with pytest.raises(VideoWriteError, match=r"\(H, W, 3\) uint8"):
            writer.write(np.zeros((48, 64, 3), np.float32))
        with pytest.raises(VideoWriteError, match="64x48"):
            writer.write(pattern(0, 32, 24))
        writer.write(pattern(0), t_s=0.5)
        with pytest.raises(VideoWriteError, match="increase"):
            writer.write(pattern(1), t_s=0.5)
        writer.write(pattern(1), t_s=0.6)
    assert [f.t_s for f in read_all(tmp_path / "x.mp4")] == pytest.approx([0.0, 0.1], abs=1e-6)


# --------------------------------------------------------------------------- frame value


def test_frame_is_a_frozen_value(tmp_path):
    frame = read_all(write_cfr(tmp_path / "f.mp4", 2))[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        frame.t_s = 1.0  # type: ignore[misc]
    assert not frame.image.flags.writeable
    assert frame != Frame(frame.index, frame.t_s, frame.image)  # eq=False: identity
    assert "image.shape=(48, 64, 3)" in repr(frame)


# --------------------------------------------------------------------------- errors


def test_missing_file(tmp_path):
    path = tmp_path / "missing.mp4"
    with pytest.raises(VideoNotFoundError) as exc_info:
        VideoReader(path)
    assert str(path) in str(exc_info.value) and "does not exist" in str(exc_info.value)
    assert isinstance(exc_info.value, FileNotFoundError)
    with pytest.raises(VideoNotFoundError):
        probe(path)


def test_text_file_renamed_mp4(tmp_path):
    path = tmp_path / "notes.mp4"
    path.write_text("these are not the frames you are looking for\n" * 20)
    with pytest.raises(VideoOpenError) as exc_info:
        VideoReader(path)
    msg = str(exc_info.value)
    assert str(path) in msg and "not a video" in msg and "ffmpeg" in msg


def test_empty_file_and_directory(tmp_path):
    empty = tmp_path / "empty.mp4"
    empty.touch()
    with pytest.raises(VideoOpenError, match="empty"):
        VideoReader(empty)
    with pytest.raises(VideoOpenError, match="directory"):
        VideoReader(tmp_path)


@pytest.fixture()
def clip90(tmp_path) -> tuple[Path, list[Frame]]:
    path = write_cfr(tmp_path / "clip.mp4", 90, w=160, h=120, keyframe_interval_s=1.0)
    return path, read_all(path)


def test_truncated_file_yields_good_frames_then_raises(clip90, tmp_path):
    path, ref = clip90
    data = path.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    frames, exc = read_until_error(cut)
    assert isinstance(exc, TruncatedVideoError)
    assert 0 < len(frames) < 90
    assert [f.index for f in frames] == list(range(len(frames)))
    for f in frames:
        assert np.array_equal(f.image, ref[f.index].image)
    assert exc.frames_read == len(frames)
    assert exc.last_index == frames[-1].index
    assert exc.last_t_s == pytest.approx(frames[-1].t_s)
    assert exc.expected_frames == 90
    msg = str(exc)
    assert str(cut) in msg and "truncated" in msg and f"index {frames[-1].index}" in msg


def test_truncated_at_packet_boundary_is_detected(clip90, tmp_path):
    """A cut between two packets gives no decoder error; the reader still notices."""
    path, _ = clip90
    with av.open(str(path)) as c:
        entries = list(c.streams.video[0].index_entries)
    end = entries[40].pos + entries[40].size
    cut = tmp_path / "cut_boundary.mp4"
    cut.write_bytes(path.read_bytes()[:end])
    frames, exc = read_until_error(cut)
    assert isinstance(exc, TruncatedVideoError)
    assert [f.index for f in frames] == list(range(41))
    assert str(cut) in str(exc)


def test_garbage_in_the_middle(clip90, tmp_path):
    path, ref = clip90
    data = bytearray(path.read_bytes())
    start, stop = int(len(data) * 0.45), int(len(data) * 0.55)
    data[start:stop] = np.random.default_rng(7).integers(0, 256, stop - start, np.uint8).tobytes()
    bad = tmp_path / "garbage.mp4"
    bad.write_bytes(bytes(data))
    with av.open(str(path)) as c:  # frames whose data lies entirely before the garbage
        entries = list(c.streams.video[0].index_entries)
    clean_before = sum(1 for e in entries if e.pos + e.size <= start)

    frames, exc = read_until_error(bad)
    assert isinstance(exc, CorruptVideoError) and isinstance(exc, DamagedVideoError)
    assert clean_before <= len(frames) < 90
    assert [f.index for f in frames] == list(range(len(frames)))
    for f in frames[:clean_before]:
        assert np.array_equal(f.image, ref[f.index].image)
    assert exc.frames_read == len(frames) and exc.last_index == len(frames) - 1
    assert str(bad) in str(exc) and "corrupt" in str(exc)


def test_skip_mode_decodes_past_damage_and_keeps_true_indices(clip90, tmp_path, caplog):
    path, ref = clip90
    data = bytearray(path.read_bytes())
    start, stop = int(len(data) * 0.45), int(len(data) * 0.55)
    data[start:stop] = np.random.default_rng(7).integers(0, 256, stop - start, np.uint8).tobytes()
    bad = tmp_path / "garbage_skip.mp4"
    bad.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="cueref.video"):
        frames, exc = read_until_error(bad, on_corrupt="skip")
    assert exc is None
    assert frames[-1].index == 89
    assert frames[-1].t_s == pytest.approx(ref[89].t_s)
    indices = [f.index for f in frames]
    assert indices == sorted(set(indices))
    assert any("damaged" in r.getMessage() for r in caplog.records)


def test_nonexistent_camera_gives_clear_error(capfd):
    t0 = time.monotonic()
    for source in (99, "99"):
        with pytest.raises(VideoOpenError, match="camera 99"):
            VideoReader(source)
    assert time.monotonic() - t0 < 5.0
    assert "Traceback" not in capfd.readouterr().err


# --------------------------------------------------------------------------- URLs


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture()
def http_root(tmp_path):
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_http_url_reads_container_timestamps(http_root):
    root, base = http_root
    write_with_pyav(root / "net.mp4", list(range(30)), Fraction(1001, 30000), NTSC, gop=10)
    with VideoReader(f"{base}/net.mp4") as reader:
        assert reader.kind == "url"
        frames = list(reader)
        assert [f.index for f in frames] == list(range(30))
        assert frames[-1].t_s == pytest.approx(29 * 1001 / 30000, rel=1e-6)
        reader.seek(0.5)
        f = reader.read()
        assert f.t_s >= 0.5 and f.index == 15  # estimated as round(t_s * fps) for URLs
        assert not reader.index_is_exact


def test_unreachable_url(http_root):
    _, base = http_root
    url = f"{base}/nothing-here.mp4"
    with pytest.raises(VideoOpenError) as exc_info:
        VideoReader(url, timeout_s=5)
    assert url in str(exc_info.value)


# --------------------------------------------------------------------------- other containers


def _write_container(path: Path, fmt: str, n: int = 60) -> None:
    with av.open(str(path), "w", format=fmt) as c:
        s = c.add_stream("libx264", rate=NTSC)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        s.options = {"preset": "ultrafast", "g": "12", "bf": "2"}
        for i in range(n):
            f = av.VideoFrame.from_ndarray(pattern(i), format="bgr24")
            f.pts, f.time_base = i, Fraction(1001, 30000)
            for pkt in s.encode(f):
                c.mux(pkt)
        for pkt in s.encode(None):
            c.mux(pkt)


@pytest.mark.parametrize("fmt, ext", [("mpegts", "ts"), ("matroska", "mkv")])
def test_other_containers_time_from_stream_start_and_seek(tmp_path, fmt, ext):
    """MPEG-TS starts at a non-zero pts and seeks by byte position (it may land
    after the target or mid-GOP); Matroska has a 1 ms time base."""
    path = tmp_path / f"clip.{ext}"
    _write_container(path, fmt)
    ref = read_all(path)
    assert [f.index for f in ref] == list(range(60))
    assert ref[0].t_s == 0.0
    for f in ref:
        assert f.t_s == pytest.approx(f.index * 1001 / 30000, abs=1e-3)
    with VideoReader(path) as reader:
        for t in [0.2, 1.0, 1.3, 1.9, 0.0, 5.0]:
            reader.seek(t)
            f = reader.read()
            expected = next((r for r in ref if r.t_s >= t - 1e-9), None)
            if expected is None:
                assert f is None
            else:
                assert (f.index, f.t_s) == (expected.index, expected.t_s)
                assert np.array_equal(f.image, expected.image)


def test_truncated_matroska_detected_from_header_duration(tmp_path):
    """Matroska stores no frame count; the header's duration is the promise."""
    path = tmp_path / "rec.mkv"
    _write_container(path, "matroska", n=150)  # 5.005 s
    cut = tmp_path / "rec_cut.mkv"
    data = path.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    frames, exc = read_until_error(cut)
    assert isinstance(exc, TruncatedVideoError)
    assert 0 < len(frames) < 150
    assert [f.index for f in frames] == list(range(len(frames)))
    assert str(cut) in str(exc) and "5.005 s" in str(exc)


# --------------------------------------------------------------------------- decoding in its own thread


def test_prefetch_gives_the_frames_in_order_then_the_source_error(clip90, tmp_path):
    """A damaged file read through the decode thread: the same good frames, then the same error."""
    path, _ = clip90
    bad = tmp_path / "cut.mp4"
    data = path.read_bytes()
    bad.write_bytes(data[: len(data) * 2 // 3])
    direct, direct_exc = read_until_error(bad)
    threaded = []
    with VideoReader(bad) as reader:
        with pytest.raises(DamagedVideoError) as exc_info:
            for frame in prefetch(reader, maxsize=3):
                threaded.append(frame)
    assert [(f.index, f.t_s) for f in threaded] == [(f.index, f.t_s) for f in direct]
    assert type(exc_info.value) is type(direct_exc) and exc_info.value.frames_read == len(direct)


def test_colour_conversion_in_its_thread_gives_pyavs_pictures_and_stops_with_the_reader(clip90):
    """The reader converts a file's next frame while this one is handed over: the pictures are those
    PyAV converts in this thread with the same flags, and the converting thread ends with the reader."""
    from cueref.video.decoder import _SWS_FLAGS

    path, ref = clip90
    with av.open(str(path)) as c:
        direct = [f.to_ndarray(format="bgr24", interpolation=_SWS_FLAGS) for f in c.decode(video=0)]
    assert len(ref) == len(direct) == 90
    assert all(np.array_equal(f.image, d) for f, d in zip(ref, direct))
    assert not any(f.image.flags.writeable for f in ref)
    with VideoReader(path) as reader:
        reader.read()
        assert [t for t in threading.enumerate() if t.name.startswith("cueref-bgr")]
    assert not [t for t in threading.enumerate() if t.name.startswith("cueref-bgr")]


def test_prefetch_holds_at_most_maxsize_items_and_stops_when_closed():
    produced = []

    def source():
        for i in range(1000):
            produced.append(i)
            yield i

    gen = prefetch(source(), maxsize=4)
    assert next(gen) == 0
    time.sleep(0.3)  # the producer runs ahead until the queue is full
    assert len(produced) <= 1 + 4 + 1  # the one handed over, the queue, the one waiting to be put
    gen.close()  # stops and joins the thread
    n = len(produced)
    time.sleep(0.2)
    assert len(produced) == n < 1000
    assert not [t for t in threading.enumerate() if t.name == "cueref-decode"]


def test_prefetch_refuses_an_empty_queue():
    with pytest.raises(ValueError, match="at least one"):
        next(prefetch([1, 2], maxsize=0))


@pytest.mark.parametrize("given, want", [
    (30, Fraction(30)), (29.97, NTSC), (29.97002997, NTSC), (59.94, Fraction(60000, 1001)),
    (25.0, Fraction(25)), (12.5, Fraction(25, 2)), (Fraction(24000, 1001), Fraction(24000, 1001)),
])
def test_one_frame_rate_helper_snaps_ntsc_rates(given, want):
    """The writer's fps and a camera's reported rate go through the same helper."""
    assert fps_fraction(given) == want


@pytest.mark.parametrize("bad", [0, -30, float("nan"), float("inf"), "fast", None, True])
def test_frame_rate_helper_refuses_what_is_not_a_positive_number(bad):
    with pytest.raises(ValueError, match="fps must be a positive number"):
        fps_fraction(bad)


@pytest.mark.parametrize("pix_fmt", ["yuv420p", "yuvj420p", "nv12", "yuv422p", "yuv444p", "yuv420p10le", "gray", "rgb24"])
def test_colour_conversion_through_planar_gbr_is_swscales_packed_bgr(pix_fmt):
    """The reader converts through planar GBR (half the cost of swscale's accurate packed BGR): the same
    pixels as the packed conversion with the same flags, whatever the source's pixel format."""
    from cueref.video.decoder import _SWS_FLAGS, _to_bgr

    rng = np.random.default_rng(5)
    picture = cv2.GaussianBlur(rng.integers(0, 256, (72, 128, 3), dtype=np.uint8), (0, 0), 1.5)
    frame = av.VideoFrame.from_ndarray(picture, format="bgr24").reformat(format=pix_fmt)
    image = _to_bgr(frame)
    assert np.array_equal(image, frame.to_ndarray(format="bgr24", interpolation=_SWS_FLAGS))
    assert image.shape == (72, 128, 3) and image.dtype == np.uint8 and not image.flags.writeable
