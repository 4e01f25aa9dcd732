"""Video input/output for cueref: the project's single place that touches video.

Reading
-------
:class:`VideoReader` reads three kinds of source and yields :class:`Frame` values:

* a **file** path (``str`` or :class:`os.PathLike`) -- decoded with PyAV;
* a **stream URL** (anything containing ``://``: ``rtsp://``, ``http://`` ...) --
  decoded with PyAV;
* a **camera index** (``int`` or a string of digits such as ``"0"``) -- read with
  :class:`cv2.VideoCapture`.

Every frame carries its presentation time ``t_s`` in **seconds**. For files and
URLs it comes from the container (``frame.pts * stream.time_base``, measured from
the stream's ``start_time`` so the first frame is at ~0 s); it is never derived
from ``index / fps``, so variable-frame-rate files and 29.97 (30000/1001) fps
files are timed exactly. Rates are kept as :class:`fractions.Fraction`.

Frame indices
-------------
``Frame.index`` is the frame's true position (0-based, presentation order) in
the stream, counting the packets the container holds:

* reading sequentially from the start, frames are counted as they are decoded
  (a frame the decoder drops still consumes its index, so indices stay true);
* after :meth:`VideoReader.seek` on a **file**, the index of the first frame
  decoded (at the keyframe) is the number of packets whose pts is smaller than
  its pts, and frames decoded from there on are counted. This is exact: the
  reader scans packet timestamps (demux only, no decoding) from the start of
  the file with a second demuxer, lazily and incrementally (the scan state is
  cached, so it costs at most one demux pass per reader, roughly the time to
  read the file from disk);
* after a seek on a **URL**, it is estimated as ``round(t_s * fps)``
  (:attr:`VideoReader.index_is_exact` becomes ``False``);
* for a **camera** it is the number of frames grabbed since opening.

Damaged files
-------------
The reader yields every good frame decoded before the damage and then raises a
:class:`DamagedVideoError` subclass from the next ``read()`` / ``next()``:

* :class:`TruncatedVideoError` when the file ends before the data its header
  promises: the MP4 sample table points past the end of the file, the last
  packet is partial, or -- when PyAV silently stops -- fewer frames than the
  header's frame count were decoded (beyond ``max(2, 1 %)`` frames) or, with no
  frame count, the video ends well before the header's duration (see
  ``VideoReader._check_complete``); smaller shortfalls are only logged.
  Containers that promise nothing (MPEG-TS, an unfinished Matroska recording)
  simply end;
* :class:`CorruptVideoError` when the demuxer or decoder reports an error in
  the middle of the file.

Both carry ``path``, ``frames_read``, ``last_index``, ``last_t_s``, ``reason``
and ``expected_frames``. Frames still held in the decoder's reorder buffer
when the damage is hit are recovered only if no earlier frame is missing, so
the frames delivered always form a gap-free run. Pass ``on_corrupt="skip"`` to
log damage and keep decoding instead (the default for URLs, whose live streams
routinely lose packets). Limitation: H.264 conceals some bit errors inside
slice data without reporting anything through PyAV; such frames come out
visibly damaged but are not detected.

Writing
-------
:class:`VideoWriter` writes H.264 (libx264, yuv420p) in MP4 with
``movflags=+faststart`` so the result plays in a browser. It writes to a hidden
temporary file in the destination directory and renames it on :meth:`close`,
so a crash never leaves a half-written file under the final name.

Images are ``numpy.ndarray`` of shape ``(H, W, 3)``, dtype ``uint8``, channel
order BGR (as OpenCV).

The module configures nothing at import time and logs through
``logging.getLogger(__name__)``.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import math
import os
import re
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Iterator, Literal, Mapping

import av
import cv2
import numpy as np
from av.video.reformatter import Interpolation

__all__ = [
    "Frame",
    "VideoInfo",
    "VideoReader",
    "VideoWriter",
    "probe",
    "VideoError",
    "VideoNotFoundError",
    "VideoOpenError",
    "DamagedVideoError",
    "TruncatedVideoError",
    "CorruptVideoError",
    "VideoWriteError",
]

log = logging.getLogger(__name__)

#: Slack (seconds) when comparing a frame time with a requested seek time, so a
#: time computed a different way in floating point (e.g. ``i * 1001 / 30000``)
#: still selects frame ``i``.
_SEEK_EPS_S = 1e-9

#: swscale flags for YUV -> BGR on read: bilinear, accurate rounding and full
#: horizontal chroma interpolation. About 5x the cost of swscale's default
#: (~8 ms instead of ~1.5 ms per 1080p frame) but the chroma is no longer
#: blocky, which matters for telling ball colours apart.
_READ_SWS_FLAGS = (
    Interpolation.BILINEAR
    | Interpolation.ACCURATE_RND
    | Interpolation.FULL_CHR_H_INT
)
#: swscale flags for BGR -> YUV 4:2:0 on write.
_WRITE_SWS_FLAGS = (
    Interpolation.BILINEAR | Interpolation.ACCURATE_RND
)

#: In ``on_corrupt="skip"`` mode, give up after this many demux errors in a
#: row (a dead network stream would otherwise fail forever).
_MAX_DEMUX_ERRORS = 10

#: MPEG clock; divisible by every common frame duration (1/24, 1/25, 1/30,
#: 1001/30000, 1/50, 1/60, 1001/60000 ...) and by milliseconds.
_BASE_CLOCK = 90_000


# --------------------------------------------------------------------------- errors


class VideoError(Exception):
    """Base class of every error raised by :mod:`cueref.video`."""


class VideoNotFoundError(VideoError, FileNotFoundError):
    """The video file does not exist."""


class VideoOpenError(VideoError):
    """The source exists but cannot be opened as video (not a video, no video
    stream, unreachable URL, camera that cannot be opened ...)."""


class DamagedVideoError(VideoError):
    """Decoding stopped early because the file is damaged.

    Raised *after* all good frames before the damage have been delivered.

    Attributes:
        path: the file or URL.
        frames_read: number of frames this reader delivered before the error.
        last_index: index of the last good frame delivered, or ``None``.
        last_t_s: time (seconds) of the last good frame delivered, or ``None``.
        reason: what FFmpeg / the reader reported.
        expected_frames: frame count the container header promised, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        frames_read: int,
        last_index: int | None,
        last_t_s: float | None,
        reason: str,
        expected_frames: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.frames_read = frames_read
        self.last_index = last_index
        self.last_t_s = last_t_s
        self.reason = reason
        self.expected_frames = expected_frames


class TruncatedVideoError(DamagedVideoError):
    """The file ends before the data its header promises (cut-short recording or
    incomplete copy)."""


class CorruptVideoError(DamagedVideoError):
    """The demuxer or decoder reported invalid data in the middle of the file."""


class VideoWriteError(VideoError):
    """Writing a video failed or was given invalid input."""


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Frame:
    """One decoded video frame.

    Attributes:
        index: 0-based position of the frame in the stream (presentation order).
        t_s: presentation time in seconds from the start of the stream.
        image: ``(H, W, 3)`` ``uint8`` BGR image. Frames produced by
            :class:`VideoReader` have a read-only image; use
            ``frame.image.copy()`` to draw on it.
    """

    index: int
    t_s: float
    image: np.ndarray  # (H, W, 3) uint8 BGR

    def __repr__(self) -> str:
        shape = getattr(self.image, "shape", None)
        return f"Frame(index={self.index}, t_s={self.t_s:.6f}, image.shape={shape})"


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """What a container header says about its video stream.

    Attributes:
        path: file path or URL (``str``), or camera index (``int``).
        width, height: frame size in pixels.
        fps: average frame rate in frames per second, or ``None`` if unknown.
        frame_count: number of frames (exact from the header when it has one,
            else ``round(duration_s * fps)``), or ``None``.
        duration_s: duration of the video stream in seconds, or ``None``.
        codec: decoder name, e.g. ``"h264"`` (``None`` for cameras).
        pix_fmt: pixel format of the coded stream, e.g. ``"yuv420p"``, or ``None``.
        format_name: demuxer name, e.g. ``"mov,mp4,m4a,3gp,3g2,mj2"``, or ``None``.
    """

    path: str | int
    width: int
    height: int
    fps: float | None
    frame_count: int | None
    duration_s: float | None
    codec: str | None
    pix_fmt: str | None = None
    format_name: str | None = None


# --------------------------------------------------------------------------- helpers


def _is_camera(source: object) -> bool:
    if isinstance(source, bool):
        return False
    if isinstance(source, int):
        return True
    return isinstance(source, str) and source.strip().isdigit()


def _is_url(source: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*://", source) is not None


def _ffmpeg_reason(exc: BaseException) -> str:
    """Short human reason from a PyAV exception (without the errno noise)."""
    strerror = getattr(exc, "strerror", None)
    if strerror:
        return str(strerror)
    return str(exc) or type(exc).__name__


def _fps_fraction(fps: float | int | Fraction) -> Fraction:
    """Frame rate as an exact Fraction; floats close to NTSC rates snap to
    ``n * 1000 / 1001`` (29.97 -> 30000/1001)."""
    if isinstance(fps, Fraction):
        f = fps
    elif isinstance(fps, (int, np.integer)) and not isinstance(fps, bool):
        f = Fraction(int(fps))
    else:
        try:
            x = float(fps)
        except (TypeError, ValueError):
            raise VideoWriteError(f"fps must be a positive number, got {fps!r}") from None
        if not math.isfinite(x):
            raise VideoWriteError(f"fps must be a positive number, got {fps!r}")
        f = None
        for base in (24, 30, 48, 60, 120, 240):
            ntsc = base * 1000 / 1001
            if abs(x - ntsc) < 5e-3:
                f = Fraction(base * 1000, 1001)
                break
        if f is None:
            f = Fraction(x).limit_denominator(1001)
    if f <= 0:
        raise VideoWriteError(f"fps must be a positive number, got {fps!r}")
    return f


def _rate_of(stream) -> Fraction | None:
    for attr in ("average_rate", "guessed_rate", "base_rate"):
        r = getattr(stream, attr, None)
        if r:
            return Fraction(r)
    return None


# --------------------------------------------------------------------------- pts scan


class _PtsIndex:
    """Exact frame ranks from packet timestamps, built by a demux-only pass.

    ``rank(pts)`` is the number of (non-discarded) video packets whose pts is
    smaller than ``pts``, i.e. the 0-based index of the frame with that pts.
    Scanning stops as soon as a packet with ``dts >= pts`` has been seen (all
    later packets then have ``pts >= dts >= pts``) and resumes from there on
    the next call, so the cost over a reader's life is at most one demux pass.
    """

    def __init__(self, path: str) -> None:
        self._container = av.open(path)
        stream = self._container.streams.video[0]
        self._packets = self._container.demux(stream)
        self._sorted: list[int] = []
        self._max_dts: int | None = None
        self._done = False

    def rank(self, pts: int) -> int:
        while not self._done and (self._max_dts is None or self._max_dts < pts):
            try:
                packet = next(self._packets)
            except StopIteration:
                self._finish()
                break
            except av.FFmpegError as exc:  # damaged tail: rank what we have
                log.debug("pts scan stopped early: %s", _ffmpeg_reason(exc))
                self._finish()
                break
            if packet.size == 0 or packet.is_discard or packet.pts is None:
                continue
            bisect.insort(self._sorted, packet.pts)
            if packet.dts is not None:
                self._max_dts = packet.dts if self._max_dts is None else max(self._max_dts, packet.dts)
        return bisect.bisect_left(self._sorted, pts)

    def _finish(self) -> None:
        self._done = True
        self.close()

    def close(self) -> None:
        if self._container is not None:
            try:
                self._container.close()
            finally:
                self._container = None


# --------------------------------------------------------------------------- reader


class VideoReader:
    """Iterate over the frames of a video file, stream URL or camera.

    Use as a context manager and iterator::

        with VideoReader("match.mp4") as reader:
            for frame in reader:          # Frame(index, t_s, image)
                ...

    Args:
        source: file path, URL (``rtsp://``, ``http://`` ...), or camera index
            (``int`` or string of digits).
        on_corrupt: ``"raise"`` -- stop at the first damage and raise a
            :class:`DamagedVideoError` after the good frames (default for files);
            ``"skip"`` -- log a warning and keep decoding (default for URLs).
            Cameras ignore it.
        options: extra FFmpeg options for ``av.open`` (files and URLs). For
            ``rtsp://`` the default is ``{"rtsp_transport": "tcp"}``.
        timeout_s: network timeout in seconds for URLs (open and read).
        accurate_color: convert YUV to BGR with accurate rounding and full
            chroma interpolation (default). ``False`` uses swscale's faster
            default (~1.5 instead of ~8 ms per 1080p frame) with blockier colour.

    Raises:
        VideoNotFoundError: the file does not exist.
        VideoOpenError: the source cannot be opened as a video.
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | int,
        *,
        on_corrupt: Literal["raise", "skip"] | None = None,
        options: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        accurate_color: bool = True,
    ) -> None:
        self._closed = False
        self._sws_flags = _READ_SWS_FLAGS if accurate_color else None
        self._container = None
        self._cap = None
        self._pts_index: _PtsIndex | None = None
        self._ready: deque = deque()  # decoded av.VideoFrame not yet delivered
        self._frames_read = 0
        self._last_index: int | None = None
        self._last_t_s: float | None = None
        self._pending_error: VideoError | None = None
        self._error_raised = False
        self._eof = False

        if _is_camera(source):
            self._kind = "camera"
            self._source: str | int = int(source)
            self._open_camera(int(source))
            return

        source_str = os.fspath(source)
        if not isinstance(source_str, str):
            source_str = os.fsdecode(source_str)
        self._source = source_str
        self._kind = "url" if _is_url(source_str) else "file"
        if on_corrupt is None:
            on_corrupt = "skip" if self._kind == "url" else "raise"
        if on_corrupt not in ("raise", "skip"):
            raise ValueError(f"on_corrupt must be 'raise' or 'skip', got {on_corrupt!r}")
        self._on_corrupt = on_corrupt
        self._open_pyav(source_str, options, timeout_s)

    # ------------------------------------------------------------------ opening

    def _open_pyav(self, source: str, options: Mapping[str, str] | None, timeout_s: float) -> None:
        opts = dict(options or {})
        kwargs = {}
        if self._kind == "file":
            if not os.path.exists(source):
                raise VideoNotFoundError(f"video file {source!r} does not exist")
            if os.path.isdir(source):
                raise VideoOpenError(f"{source!r} is a directory, not a video file")
            if not os.access(source, os.R_OK):
                raise VideoOpenError(f"video file {source!r} is not readable (permission denied)")
        else:
            if source.lower().startswith("rtsp://"):
                opts.setdefault("rtsp_transport", "tcp")
            kwargs["timeout"] = timeout_s
        self._open_args = (opts or None, kwargs)
        self._open_container()
        stream = self._stream
        self._tb = Fraction(stream.time_base) if stream.time_base else Fraction(1, _BASE_CLOCK)
        self._start_pts = stream.start_time if stream.start_time is not None else 0
        self._rate = _rate_of(stream)
        self._width = stream.codec_context.width
        self._height = stream.codec_context.height
        self._index_is_exact = True
        self._truncated_hint = self._check_structure()
        self._reset_decode_state(next_index=0)

    def _open_container(self) -> None:
        """(Re)open the PyAV container; sets ``_container`` and ``_stream``."""
        source = self._source
        options, kwargs = self._open_args
        try:
            container = av.open(source, options=options, **kwargs)
        except av.FFmpegError as exc:
            raise VideoOpenError(self._open_failure_message(source, exc)) from exc
        except OSError as exc:
            raise VideoOpenError(f"cannot open {source!r}: {exc}") from exc
        if not container.streams.video:
            kinds = ", ".join(s.type for s in container.streams) or "nothing"
            container.close()
            raise VideoOpenError(
                f"{source!r} has no video stream (only {kinds}); give a file that contains video"
            )
        stream = container.streams.video[0]
        # Slice threading only: frame threading delays and sometimes hides
        # decoder errors, which would break damage detection.
        stream.thread_type = "SLICE"
        self._container, self._stream = container, stream

    def _restart(self) -> None:
        """Start decoding again from the very first packet. Reopens the source:
        seeking to the start is not reliable in every container (MPEG-TS
        lands after the first keyframe)."""
        old = self._container
        self._container = None
        if old is not None:
            old.close()
        self._open_container()
        self._reset_decode_state(next_index=0)

    def _open_failure_message(self, source: str, exc: BaseException) -> str:
        reason = _ffmpeg_reason(exc)
        if self._kind == "url":
            return (
                f"cannot open stream {source!r}: {reason}. Check the URL, that the "
                "camera/server is reachable from this machine, and any credentials."
            )
        size = os.path.getsize(source)
        if size == 0:
            return f"video file {source!r} is empty (0 bytes); re-record or re-copy it"
        hint = ""
        try:
            with open(source, "rb") as fh:
                head = fh.read(12)
        except OSError:
            head = b""
        if head[4:8] == b"ftyp":
            hint = (
                " It starts like an MP4, so its recording was probably interrupted before "
                "the index (moov atom) was written; a tool such as untrunc may recover it."
            )
        return (
            f"{source!r} is not a video PyAV can decode: {reason}. Check that the file "
            "is a complete video (play it with ffplay or VLC) or re-encode it with "
            "`ffmpeg -i INPUT -c:v libx264 OUTPUT.mp4`." + hint
        )

    def _check_structure(self) -> bool:
        """True when the container index points past the end of the file
        (an MP4 cut short after its header was written)."""
        if self._kind != "file":
            return False
        try:
            entries = self._stream.index_entries
            size = os.path.getsize(self._source)
            end = max((e.pos + e.size for e in entries if e.pos >= 0), default=0)
        except Exception:  # index_entries is optional API; never fatal
            return False
        if end > size:
            log.warning(
                "%s: container index refers to %d bytes but the file has %d; "
                "the file looks truncated", self._source, end, size,
            )
            return True
        return False

    def _open_camera(self, index: int) -> None:
        # OpenCV prints probing noise (and an internal exception text) on
        # failure; silence it for the duration of the open only.
        previous = None
        try:
            previous = cv2.utils.logging.getLogLevel()
            cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        except Exception:  # pragma: no cover - older OpenCV
            previous = None
        try:
            cap = cv2.VideoCapture(index)
            opened = cap.isOpened()
        except cv2.error as exc:
            raise VideoOpenError(f"cannot open camera {index}: {exc}") from None
        finally:
            if previous is not None:
                cv2.utils.logging.setLogLevel(previous)
        if not opened:
            cap.release()
            raise VideoOpenError(
                f"cannot open camera {index}: no such camera or it is in use. "
                "Check that it is connected, that another program is not using it, "
                "and that this user may access it (e.g. /dev/video* on Linux)."
            )
        self._cap = cap
        self._index_is_exact = True
        self._width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        self._height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        fps = cap.get(cv2.CAP_PROP_FPS)
        self._rate = Fraction(fps).limit_denominator(1001) if fps and fps > 0 else None
        self._opened_at = time.monotonic()
        self._cam_offset_s: float | None = None
        self._next_index = 0

    # ------------------------------------------------------------------ properties

    @property
    def path_or_source(self) -> str | int:
        """The file path or URL (``str``) or camera index (``int``)."""
        return self._source

    @property
    def kind(self) -> str:
        """``"file"``, ``"url"`` or ``"camera"``."""
        return self._kind

    @property
    def width(self) -> int:
        """Frame width in pixels."""
        return self._width

    @property
    def height(self) -> int:
        """Frame height in pixels."""
        return self._height

    @property
    def fps_fraction(self) -> Fraction | None:
        """Average frame rate (frames per second) as an exact Fraction, or ``None``."""
        return self._rate

    @property
    def fps(self) -> float | None:
        """Average frame rate in frames per second (``float(fps_fraction)``), or
        ``None`` when unknown (some cameras)."""
        return float(self._rate) if self._rate else None

    @property
    def duration_s(self) -> float | None:
        """Duration of the video stream in seconds, or ``None`` (cameras, live streams)."""
        if self._kind == "camera":
            return None
        s = self._stream
        if s.duration:
            return float(s.duration * self._tb)
        c = self._container
        if c is not None and c.duration:
            return c.duration / av.time_base
        return None

    @property
    def frame_count(self) -> int | None:
        """Number of frames: exact when the container header stores it, else an
        estimate ``round(duration_s * fps)``, else ``None``."""
        if self._kind == "camera":
            return None
        if self._stream.frames:
            return int(self._stream.frames)
        d, r = self.duration_s, self._rate
        if d is not None and r:
            return int(round(d * float(r)))
        return None

    @property
    def codec(self) -> str | None:
        """Decoder name (e.g. ``"h264"``), ``None`` for cameras."""
        return None if self._kind == "camera" else self._stream.codec_context.name

    @property
    def info(self) -> VideoInfo:
        """Header information as a :class:`VideoInfo`."""
        return VideoInfo(
            path=self._source,
            width=self.width,
            height=self.height,
            fps=self.fps,
            frame_count=self.frame_count,
            duration_s=self.duration_s,
            codec=self.codec,
            pix_fmt=None if self._kind == "camera" else self._stream.codec_context.pix_fmt,
            format_name=None if self._kind == "camera" else self._container.format.name,
        )

    @property
    def frames_read(self) -> int:
        """Number of frames delivered so far."""
        return self._frames_read

    @property
    def index_is_exact(self) -> bool:
        """``False`` once frame indices are estimates (after a seek on a URL)."""
        return self._index_is_exact

    # ------------------------------------------------------------------ protocol

    def __enter__(self) -> "VideoReader":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        return self

    def __next__(self) -> Frame:
        frame = self.read()
        if frame is None:
            raise StopIteration
        return frame

    def __repr__(self) -> str:
        return f"VideoReader({self._source!r}, kind={self._kind!r}, closed={self._closed})"

    def close(self) -> None:
        """Release the file, stream or camera. Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        if self._pts_index is not None:
            self._pts_index.close()
            self._pts_index = None
        if self._container is not None:
            try:
                self._container.close()
            except Exception as exc:  # pragma: no cover
                log.debug("closing %s: %s", self._source, exc)
            self._container = None
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        self._ready.clear()

    # ------------------------------------------------------------------ reading

    def read(self) -> Frame | None:
        """Return the next frame, or ``None`` at the end of the video.

        Raises:
            DamagedVideoError: once, after the last good frame of a damaged file.
            VideoError: camera stopped delivering frames, or reader closed.
        """
        if self._closed:
            raise VideoError(f"reader for {self._source!r} is closed")
        if self._kind == "camera":
            return self._read_camera()
        while True:
            while self._ready:
                frame = self._deliver(self._ready.popleft())
                if frame is not None:
                    return frame
            if self._eof:
                if self._final_check_due:
                    self._final_check_due = False
                    self._check_complete()
                if self._pending_error is not None and not self._error_raised:
                    self._error_raised = True
                    self._finalise_error()
                    raise self._pending_error
                return None
            self._pump()

    def _read_camera(self) -> Frame | None:
        ok, image = self._cap.read()
        if not ok or image is None:
            raise VideoError(
                f"camera {self._source} stopped delivering frames after "
                f"{self._frames_read} frame(s); check the cable/connection"
            )
        now = time.monotonic() - self._opened_at
        pos_ms = self._cap.get(cv2.CAP_PROP_POS_MSEC)
        t_s = now
        if pos_ms and pos_ms > 0:
            # Camera clock, shifted so the first frame sits at its
            # monotonic time since open.
            if self._cam_offset_s is None:
                self._cam_offset_s = now - pos_ms / 1000.0
            t_s = pos_ms / 1000.0 + self._cam_offset_s
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        elif image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
        image.flags.writeable = False
        frame = Frame(index=self._next_index, t_s=float(t_s), image=image)
        self._next_index += 1
        self._frames_read += 1
        self._last_index, self._last_t_s = frame.index, frame.t_s
        return frame

    # --- PyAV decoding state machine -------------------------------------------

    def _reset_decode_state(self, next_index: int | None) -> None:
        self._packets = self._container.demux(self._stream)
        self._ready.clear()
        self._heap: list[int] = []  # pts of demuxed packets not yet accounted for
        self._next_index = next_index  # None -> set from the first frame (after seek)
        self._seek_target_s: float | None = None
        self._drained = False
        self._eof = False
        self._after_error = False
        self._in_error_burst = False
        self._final_check_due = False
        self._demux_errors = 0
        self._last_decoded_t_s: float | None = None
        self._discarded_packets = 0
        self._from_start = next_index == 0
        self._pts_missing_logged = False

    def _pump(self) -> None:
        """Demux one packet and decode it into ``self._ready`` (or finish)."""
        try:
            packet = next(self._packets)
        except StopIteration:
            self._drain()
            self._eof = True
            self._final_check_due = not self._after_error
            return
        except av.FFmpegError as exc:
            self._demux_errors += 1
            if self._on_corrupt == "skip" and self._demux_errors <= _MAX_DEMUX_ERRORS:
                # The demux generator ends on an exception; start a new one,
                # which continues from the current read position.
                self._damage(_ffmpeg_reason(exc), packet=None)
                self._packets = self._container.demux(self._stream)
                return
            self._damage(_ffmpeg_reason(exc), packet=None, fatal=True)
            return
        self._demux_errors = 0
        if packet.size == 0:  # PyAV's end-of-stream flush packet
            return
        if packet.is_discard:  # edit-list pre-roll: decoded, never shown
            self._discarded_packets += 1
        elif packet.pts is not None:
            heapq.heappush(self._heap, packet.pts)
        if packet.is_corrupt and self._on_corrupt == "raise":
            self._damage("the demuxer flagged a packet as corrupt (partial or damaged data)",
                         packet=packet)
            return
        try:
            frames = self._stream.decode(packet)
        except av.FFmpegError as exc:
            self._damage(_ffmpeg_reason(exc), packet=packet)
            return
        self._ready.extend(frames)

    def _drain(self) -> None:
        if self._drained:
            return
        self._drained = True
        try:
            self._ready.extend(self._stream.codec_context.decode(None))
        except av.error.EOFError:
            pass
        except av.FFmpegError as exc:
            log.debug("%s: error while draining decoder: %s", self._source, _ffmpeg_reason(exc))

    def _damage(self, reason: str, *, packet, fatal: bool = False) -> None:
        """Handle a demux/decode error according to ``on_corrupt`` (``fatal``:
        stop even in skip mode, e.g. a stream that keeps failing)."""
        truncated = self._truncated_hint or self._packet_reaches_eof(packet)
        where = (
            f"after frame {self._last_index} (t={self._last_t_s:.3f} s)"
            if self._last_index is not None else "before the first frame"
        )
        if self._on_corrupt == "skip" and not fatal:
            # One warning per burst of errors (a burst ends at the next good frame).
            level = logging.DEBUG if self._in_error_burst else logging.WARNING
            self._in_error_burst = True
            log.log(level, "%s: damaged video data %s, skipping: %s", self._source, where, reason)
            return
        # Recover frames already decoded and held in the reorder buffer, then
        # look ahead (demux only) far enough to know which of them are
        # preceded by a missing frame; _deliver stops at the first gap.
        self._after_error = True
        self._drain()
        if self._ready:
            horizon = max((f.pts for f in self._ready if f.pts is not None), default=None)
            if horizon is not None:
                self._lookahead(horizon)
        self._eof = True
        self._pending_error = self._make_damage_error(reason, truncated)

    def _packet_reaches_eof(self, packet) -> bool:
        """True when the failing packet ends at the end of the file (a partial
        last packet: the file was cut inside it)."""
        if self._kind != "file" or packet is None:
            return False
        try:
            return packet.pos is not None and packet.pos >= 0 and (
                packet.pos + packet.size >= os.path.getsize(self._source)
            )
        except OSError:
            return False

    def _lookahead(self, horizon_pts: int) -> None:
        while True:
            try:
                packet = next(self._packets)
            except (StopIteration, av.FFmpegError):
                return
            if packet.size == 0:
                continue
            if packet.pts is not None and not packet.is_discard:
                heapq.heappush(self._heap, packet.pts)
            if packet.dts is not None and packet.dts >= horizon_pts:
                return

    def _make_damage_error(self, reason: str, truncated: bool) -> DamagedVideoError:
        cls = TruncatedVideoError if truncated else CorruptVideoError
        expected = int(self._stream.frames) if self._stream.frames else None
        # Message finalised at raise time (frames delivered may still grow).
        return cls(
            "", path=self._source, frames_read=0, last_index=None, last_t_s=None,
            reason=reason, expected_frames=expected,
        )

    def _finalise_error(self) -> None:
        err = self._pending_error
        if not isinstance(err, DamagedVideoError):
            return
        err.frames_read = self._frames_read
        err.last_index = self._last_index
        err.last_t_s = self._last_t_s
        if self._last_index is not None:
            good = (f"last good frame: index {self._last_index} at t={self._last_t_s:.3f} s "
                    f"({self._frames_read} frame(s) read)")
        else:
            good = "no frame could be decoded"
        promised = ""
        if err.expected_frames:
            promised = f"; the header promises {err.expected_frames} frames"
            if self.duration_s:
                promised += f" ({self.duration_s:.3f} s)"
        noun = "video file" if self._kind == "file" else "stream"
        if isinstance(err, TruncatedVideoError):
            what = f"{noun} is truncated"
            todo = ("The recording was probably interrupted or the copy is incomplete: "
                    "re-copy or re-record it; the frames above can still be used.")
        else:
            what = f"{noun} is corrupt"
            todo = ("Re-copy the file if possible, or re-encode it with ffmpeg; pass "
                    "on_corrupt='skip' to decode past the damage.")
        err.args = (f"{self._source!r}: {what}: {good}{promised}; reason: {err.reason}. {todo}",)

    def _check_complete(self) -> None:
        """At a clean end of stream: detect a silent truncation.

        Raises (via the pending error) when the container index points past the
        end of the file, when fewer frames than the header's frame count were
        found (beyond ``max(2, 1 %)``), or -- for containers without a frame
        count (Matroska ...) -- when the last frame ends more than
        ``max(0.5 s, 2 %)`` before the video stream's duration in the header
        (``max(1 s, 5 %)`` when only the container's duration is known, which
        may include a longer audio track). Smaller shortfalls are only logged,
        as is everything in ``on_corrupt="skip"`` mode. Containers that promise
        nothing (MPEG-TS, an unfinished Matroska recording) cannot be checked.
        """
        if self._kind != "file" or self._next_index is None:
            return
        reason = None
        severe = False
        expected = int(self._stream.frames) if self._stream.frames else None
        if expected is not None:
            got = self._next_index + (self._discarded_packets if self._from_start else 0)
            short = expected - got
            if short > 0:
                reason = f"stream ended after {got} of {expected} frames"
                severe = self._truncated_hint or short > max(2, expected // 100)
        elif self._last_decoded_t_s is not None and self._rate and (
            self._stream.duration or self._container.duration
        ):
            if self._stream.duration:  # the video stream's own duration
                promised_s = float(self._stream.duration * self._tb)
                limit_s = max(0.5, 0.02 * promised_s)
            else:  # container duration: may include a longer audio track
                promised_s = self._container.duration / av.time_base
                limit_s = max(1.0, 0.05 * promised_s)
            got_s = self._last_decoded_t_s + 1.0 / float(self._rate)
            short_s = promised_s - got_s
            if short_s > 2.0 / float(self._rate):
                reason = (f"stream ended at {got_s:.3f} s of the {promised_s:.3f} s "
                          "the header promises")
                severe = self._truncated_hint or short_s > limit_s
        elif self._truncated_hint:
            reason, severe = "the container index points past the end of the file", True
        if reason is None:
            return
        if severe and self._on_corrupt == "raise":
            self._pending_error = TruncatedVideoError(
                "", path=self._source, frames_read=0, last_index=None, last_t_s=None,
                reason=reason, expected_frames=expected,
            )
        else:
            log.warning("%s: %s", self._source, reason)

    def _deliver(self, avf) -> Frame | None:
        """Account for one decoded frame; return it as a Frame, or None when it
        is skipped (before a seek target, or after a gap following damage)."""
        pts = avf.pts
        if self._next_index is None:
            # First frame after a seek: establish the true index.
            self._next_index = self._index_after_seek(pts)
            if pts is not None:
                while self._heap and self._heap[0] < pts:
                    heapq.heappop(self._heap)  # undecodable leading frames
        if pts is not None:
            missing = 0
            while self._heap and self._heap[0] < pts:
                heapq.heappop(self._heap)
                missing += 1
            if missing:
                if self._after_error:
                    # A frame before this one is lost: stop here, the frames
                    # delivered so far form a gap-free run.
                    self._ready.clear()
                    return None
                log.warning("%s: %d frame(s) could not be decoded before t=%.3f s",
                            self._source, missing, float((pts - self._start_pts) * self._tb))
                self._next_index += missing
            if self._heap and self._heap[0] == pts:
                heapq.heappop(self._heap)
            t_s = float((pts - self._start_pts) * self._tb)
        else:
            if not self._pts_missing_logged:
                log.info("%s: frames without pts; timing them from the frame rate", self._source)
                self._pts_missing_logged = True
            step = 1.0 / float(self._rate) if self._rate else 0.0
            last = self._last_decoded_t_s
            t_s = last + step if last is not None else 0.0
        index = self._next_index
        self._next_index += 1
        self._last_decoded_t_s = t_s
        if self._seek_target_s is not None:
            if t_s < self._seek_target_s - _SEEK_EPS_S:
                return None
            self._seek_target_s = None
        image = avf.to_ndarray(format="bgr24", interpolation=self._sws_flags)
        image.flags.writeable = False
        frame = Frame(index=index, t_s=t_s, image=image)
        self._frames_read += 1
        self._last_index, self._last_t_s = index, t_s
        self._in_error_burst = False
        return frame

    def _index_after_seek(self, pts: int | None) -> int:
        if pts is None:
            self._index_is_exact = False
            return int(round(self._seek_target_s * float(self._rate))) if self._rate else 0
        if self._kind == "file":
            if self._pts_index is None:
                self._pts_index = _PtsIndex(self._source)
            return self._pts_index.rank(pts)
        self._index_is_exact = False
        t = float((pts - self._start_pts) * self._tb)
        return int(round(t * float(self._rate))) if self._rate else 0

    # ------------------------------------------------------------------ seeking

    def seek(self, t_s: float) -> None:
        """Position the reader so the next frame read is the first frame with
        ``frame.t_s >= t_s`` (seconds from the start of the stream).

        Seeks to the preceding keyframe and decodes forward; frames before
        ``t_s`` are decoded but not delivered. Seeking past the end makes the
        next ``read()`` return ``None``.

        Raises:
            VideoError: the source is a camera or a stream that cannot seek.
        """
        if self._closed:
            raise VideoError(f"reader for {self._source!r} is closed")
        if self._kind == "camera":
            raise VideoError(f"cannot seek camera {self._source}: live cameras are not seekable")
        t_s = max(0.0, float(t_s))
        target_pts = self._start_pts + math.floor(Fraction(t_s) / self._tb)
        backoff_s = 0.0
        for _attempt in range(8):
            seek_pts = target_pts - math.ceil(Fraction(backoff_s) / self._tb)
            if seek_pts <= self._start_pts:
                break
            try:
                self._container.seek(seek_pts, stream=self._stream, backward=True)
            except av.FFmpegError as exc:
                raise VideoError(
                    f"cannot seek {self._source!r} to {t_s:.3f} s: {_ffmpeg_reason(exc)}"
                ) from exc
            try:
                self._stream.codec_context.flush_buffers()
            except Exception:  # pragma: no cover - flush is best effort
                pass
            self._reset_decode_state(next_index=None)
            self._clear_error()
            self._seek_target_s = t_s
            # Make sure we landed at or before the target: a demuxer may land
            # after it (MPEG-TS seeks by byte position, possibly onto the last
            # packets, leaving nothing decodable). Peek at the first frame.
            first = self._peek_first_frame()
            if first is not None and (first.pts is None or first.pts <= target_pts):
                return
            backoff_s = 1.0 if backoff_s == 0 else backoff_s * 4
            log.debug("%s: seek to %.3f s landed late; retrying %.1f s earlier",
                      self._source, t_s, backoff_s)
        # Target at (or near) the start, or seeking keeps landing late:
        # decode from the very first packet.
        try:
            self._restart()
        except VideoError as exc:
            raise VideoError(f"cannot seek {self._source!r} to {t_s:.3f} s: {exc}") from exc
        self._clear_error()
        self._seek_target_s = t_s

    def _clear_error(self) -> None:
        self._pending_error = None
        self._error_raised = False

    def _peek_first_frame(self):
        while not self._ready and not self._eof:
            self._pump()
        return self._ready[0] if self._ready else None


# --------------------------------------------------------------------------- probe


def probe(path: str | os.PathLike[str] | int) -> VideoInfo:
    """Read a video's header (no decoding) and return a :class:`VideoInfo`.

    Accepts whatever :class:`VideoReader` accepts. Raises the same errors.
    """
    with VideoReader(path) as reader:
        return reader.info


# --------------------------------------------------------------------------- writer


class VideoWriter:
    """Write BGR images to an H.264 MP4 file that plays in browsers.

    Args:
        path: destination file (``.mp4``); its directory must exist. An existing
            file is replaced only when :meth:`close` succeeds.
        fps: nominal frame rate (frames per second): ``int``, ``float`` or
            ``Fraction``. Floats near NTSC rates snap to them (29.97 ->
            30000/1001). Frames written without ``t_s`` are spaced ``1 / fps``
            seconds apart.
        size: ``(width, height)`` in pixels; inferred from the first image when
            ``None``. Odd sizes are padded by one pixel (edge-replicated) to
            the even size H.264/yuv420p requires; :attr:`width` /
            :attr:`height` give the encoded size.
        crf: x264 constant rate factor (0 lossless ... 51 worst; 23 default).
        preset: x264 preset (``"ultrafast"`` ... ``"veryslow"``); the default
            ``"veryfast"`` encodes several times faster than x264's own default
            (``"medium"``) for a somewhat larger file, so it can follow a live
            camera.
        keyframe_interval_s: maximum distance between keyframes in seconds
            (short intervals make seeking cheap).

    The file is written as a hidden ``.<name>.*.part`` file next to ``path``
    and renamed on :meth:`close`; leaving the ``with`` block through an
    exception deletes the partial file instead.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fps: float | int | Fraction,
        size: tuple[int, int] | None = None,
        crf: int = 23,
        *,
        preset: str = "veryfast",
        keyframe_interval_s: float = 2.0,
    ) -> None:
        self._path = Path(os.fspath(path))
        self._fps = _fps_fraction(fps)
        if not 0 <= int(crf) <= 51:
            raise VideoWriteError(f"crf must be in 0..51, got {crf!r}")
        self._crf = int(crf)
        self._preset = preset
        self._keyint = max(1, int(round(keyframe_interval_s * float(self._fps))))
        if not self._path.parent.is_dir():
            raise VideoWriteError(
                f"cannot write {str(self._path)!r}: directory {str(self._path.parent)!r} does not exist"
            )
        if self._path.is_dir():
            raise VideoWriteError(f"cannot write {str(self._path)!r}: it is a directory")
        self._size: tuple[int, int] | None = None
        if size is not None:
            w, h = (int(v) for v in size)
            if w <= 0 or h <= 0:
                raise VideoWriteError(f"size must be positive (width, height), got {size!r}")
            self._size = (w, h)
        # Time base: exact for both 1/fps steps and the 90 kHz clock.
        den = _BASE_CLOCK * self._fps.numerator // math.gcd(_BASE_CLOCK, self._fps.numerator)
        if den > 2**31 - 1:
            den = _BASE_CLOCK
        self._tb = Fraction(1, den)
        self._step = self._fps.denominator * den / self._fps.numerator  # ticks per frame
        self._container = None
        self._stream = None
        self._tmp_path: Path | None = None
        self._last_pts: int | None = None
        self._t0: Fraction | None = None
        self._frames = 0
        self._closed = False
        self._pad_logged = False

    # ------------------------------------------------------------------ properties

    @property
    def path(self) -> Path:
        """Final destination path."""
        return self._path

    @property
    def fps(self) -> float:
        """Nominal frame rate (frames per second)."""
        return float(self._fps)

    @property
    def width(self) -> int | None:
        """Encoded width in pixels (even), or ``None`` before the size is known."""
        return None if self._size is None else self._size[0] + self._size[0] % 2

    @property
    def height(self) -> int | None:
        """Encoded height in pixels (even), or ``None`` before the size is known."""
        return None if self._size is None else self._size[1] + self._size[1] % 2

    @property
    def frames_written(self) -> int:
        return self._frames

    # ------------------------------------------------------------------ protocol

    def __enter__(self) -> "VideoWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __repr__(self) -> str:
        return f"VideoWriter({str(self._path)!r}, fps={self._fps}, frames={self._frames})"

    # ------------------------------------------------------------------ writing

    def _open(self) -> None:
        w, h = self.width, self.height
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self._path.name}.", suffix=".part", dir=self._path.parent
        )
        os.close(fd)
        self._tmp_path = Path(tmp)
        try:
            container = av.open(tmp, "w", format="mp4", options={"movflags": "+faststart"})
            stream = container.add_stream("libx264", rate=self._fps)
            stream.width, stream.height = w, h
            stream.pix_fmt = "yuv420p"
            stream.time_base = self._tb
            stream.codec_context.time_base = self._tb
            # No B-frames: with them x264 derives dts from reordered pts and the
            # MP4 duration/edit list comes out wrong for variable frame rates.
            stream.options = {
                "crf": str(self._crf),
                "preset": self._preset,
                "g": str(self._keyint),
                "bf": "0",
            }
        except Exception as exc:
            self._tmp_path.unlink(missing_ok=True)
            raise VideoWriteError(f"cannot create H.264 writer for {str(self._path)!r}: {exc}") from exc
        self._container, self._stream = container, stream
        log.debug("writing %s via %s (%dx%d, %s fps, time base %s)",
                  self._path, tmp, w, h, self._fps, self._tb)

    def write(self, image_bgr: np.ndarray | Frame, t_s: float | None = None) -> None:
        """Append one frame.

        Args:
            image_bgr: ``(H, W, 3)`` ``uint8`` BGR image, or a :class:`Frame`
                (its ``t_s`` is used when ``t_s`` is not given).
            t_s: presentation time in seconds. When given, it sets the frame's
                timestamp exactly (variable frame rate round-trips); times must
                increase strictly and the first one becomes time 0 of the file.
                When ``None``, the frame comes ``1 / fps`` after the previous one.
        """
        if self._closed:
            raise VideoWriteError(f"writer for {str(self._path)!r} is closed")
        if isinstance(image_bgr, Frame):
            if t_s is None:
                t_s = image_bgr.t_s
            image_bgr = image_bgr.image
        img = np.asarray(image_bgr)
        if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
            raise VideoWriteError(
                f"image must be (H, W, 3) uint8 BGR, got shape {img.shape} dtype {img.dtype}"
            )
        h, w = img.shape[:2]
        if self._size is None:
            self._size = (w, h)
        if (w, h) != self._size:
            raise VideoWriteError(
                f"frame {self._frames} is {w}x{h} but the video is {self._size[0]}x{self._size[1]}"
            )
        if w % 2 or h % 2:
            if not self._pad_logged:
                log.info("%s: padding %dx%d frames to even size %dx%d for H.264",
                         self._path, w, h, self.width, self.height)
                self._pad_logged = True
            img = np.pad(img, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge")
        img = np.ascontiguousarray(img)

        if t_s is not None:
            t = Fraction(float(t_s))
            if self._t0 is None:
                self._t0 = t
            pts = round((t - self._t0) / self._tb)
        elif self._last_pts is None:
            pts = 0
            self._t0 = Fraction(0)
        else:
            pts = self._last_pts + round(self._step)
        if self._last_pts is not None and pts <= self._last_pts:
            raise VideoWriteError(
                f"t_s must increase strictly: frame {self._frames} at t={t_s} s is not after "
                f"the previous frame (t={float(self._last_pts * self._tb + self._t0):.6f} s)"
            )

        if self._container is None:
            self._open()
        frame = av.VideoFrame.from_ndarray(img, format="bgr24").reformat(
            format="yuv420p", interpolation=_WRITE_SWS_FLAGS
        )
        frame.pts = pts
        frame.time_base = self._tb
        try:
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        except av.FFmpegError as exc:
            raise VideoWriteError(f"encoding frame {self._frames} of {str(self._path)!r} failed: "
                                  f"{_ffmpeg_reason(exc)}") from exc
        self._last_pts = pts
        self._frames += 1

    def close(self) -> None:
        """Flush the encoder, finish the MP4 and move it to :attr:`path`.

        With no frames written, nothing is created (a warning is logged).
        """
        if self._closed:
            return
        self._closed = True
        if self._container is None:
            log.warning("%s: no frames written; no file created", self._path)
            return
        try:
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            self._container.close()
            self._container = None
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self._tmp_path, 0o666 & ~umask)  # mkstemp made it private; a video is an ordinary file
            os.replace(self._tmp_path, self._path)
        except Exception as exc:
            self._discard_tmp()
            raise VideoWriteError(f"finishing {str(self._path)!r} failed: {exc}") from exc
        log.debug("wrote %s (%d frames)", self._path, self._frames)

    def abort(self) -> None:
        """Stop writing and delete the partial file; :attr:`path` is untouched."""
        if self._closed:
            return
        self._closed = True
        self._discard_tmp()
        log.info("%s: writing aborted; partial output deleted", self._path)

    def _discard_tmp(self) -> None:
        if self._container is not None:
            try:
                self._container.close()
            except Exception:
                pass
            self._container = None
        if self._tmp_path is not None:
            self._tmp_path.unlink(missing_ok=True)
