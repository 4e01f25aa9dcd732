"""Decoding files and stream URLs with PyAV: exact container timestamps, exact frame indices after a
seek, and damage (a truncated or corrupt file) reported after the last good frame.

Frame times
-----------
Every frame's ``t_s`` is its presentation time from the container (``frame.pts * stream.time_base``,
measured from the stream's ``start_time`` so the first frame is at ~0 s); it is never derived from
``index / fps``, so variable-frame-rate files and 29.97 (30000/1001) fps files are timed exactly.

Frame indices
-------------
``Frame.index`` is the frame's true position (0-based, presentation order) in the stream, counting
the packets the container holds:

* reading sequentially from the start, frames are counted as they are decoded (a frame the decoder
  drops still consumes its index, so indices stay true);
* after :meth:`PyAVDecoder.seek` on a **file**, the index of the first frame decoded (at the keyframe)
  is the number of packets whose pts is smaller than its pts, and frames decoded from there on are
  counted. This is exact: the decoder scans packet timestamps (demux only, no decoding) from the
  start of the file with a second demuxer, lazily and incrementally (:class:`PtsIndex`: at most one
  demux pass per reader, roughly the time to read the file from disk). The review report's clip per
  shot relies on it: its frames line up with ``tracks.csv``;
* after a seek on a **URL**, it is estimated as ``round(t_s * fps)`` (``index_is_exact`` becomes
  ``False``).

Damaged files
-------------
The decoder yields every good frame decoded before the damage and then raises a
:class:`~cueref.video.errors.DamagedVideoError` subclass from the next ``read()``:

* :class:`~cueref.video.errors.TruncatedVideoError` when the file ends before the data its header
  promises: the MP4 sample table points past the end of the file, the last packet is partial, or --
  when PyAV silently stops -- fewer frames than the header's frame count were decoded (beyond
  ``max(2, 1 %)`` frames) or, with no frame count, the video ends well before the header's duration
  (see :meth:`PyAVDecoder._check_complete`); smaller shortfalls are only logged. Containers that
  promise nothing (MPEG-TS, an unfinished Matroska recording) simply end;
* :class:`~cueref.video.errors.CorruptVideoError` when the demuxer or decoder reports an error in the
  middle of the file.

Frames still held in the decoder's reorder buffer when the damage is hit are recovered only if no
earlier frame is missing, so the frames delivered always form a gap-free run. With
``on_corrupt="skip"`` damage is logged and decoding goes on (the default for URLs, whose live streams
routinely lose packets). Limitation: H.264 conceals some bit errors inside slice data without
reporting anything through PyAV; such frames come out visibly damaged but are not detected.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import math
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from typing import Literal

import av
import cv2
import numpy as np
from av.video.reformatter import Interpolation

from cueref.video.errors import (
    CorruptVideoError,
    DamagedVideoError,
    TruncatedVideoError,
    VideoError,
    VideoNotFoundError,
    VideoOpenError,
    ffmpeg_reason,
)
from cueref.video.frame import Frame
from cueref.video.rate import BASE_CLOCK, stream_rate

__all__ = ["PyAVDecoder", "PtsIndex"]

log = logging.getLogger("cueref.video")

#: Slack (seconds) when comparing a frame time with a requested seek time, so a
#: time computed a different way in floating point (e.g. ``i * 1001 / 30000``)
#: still selects frame ``i``.
_SEEK_EPS_S = 1e-9

#: swscale flags for YUV -> BGR: bilinear, accurate rounding and full horizontal
#: chroma interpolation. The chroma is no longer blocky, which matters for telling
#: ball colours apart. Converted to packed bgr24 they are slow; see :func:`_to_bgr`
#: for the cheaper way.
_SWS_FLAGS = (
    Interpolation.BILINEAR
    | Interpolation.ACCURATE_RND
    | Interpolation.FULL_CHR_H_INT
)

#: Frames of a file decoded ahead of the one being delivered while their colour conversion runs in the
#: converting thread (decoding and swscale both release the GIL, so the two overlap each other and the
#: caller's Python work). One is enough for the overlap; each costs one picture of memory (~6 MB at
#: 1080p). A stream URL decodes none ahead: a live frame is never held back waiting for the next.
_CONVERT_AHEAD = 1


def _to_bgr(avf: av.VideoFrame) -> np.ndarray:
    """The frame as BGR (h, w, 3) uint8, read-only. swscale converts to planar GBR (``gbrp``) with
    :data:`_SWS_FLAGS` and OpenCV interleaves the planes: the same pixels as swscale's packed
    ``bgr24`` with the same flags (bit for bit on even frame sizes, measured on 4:2:0, 4:2:2, 4:4:4,
    NV12, 10-bit and grey sources: ``tests/test_video.py``; within one grey level at an odd size's last
    column), for a third less decoding CPU per 1080p frame (``bench/throughput_bench.py``: swscale's
    accurate packed-RGB output path is the slow one)."""
    h, w = avf.height, avf.width
    g, b, r = (np.frombuffer(p, np.uint8).reshape(-1, p.line_size)[:h, :w]
               for p in avf.reformat(format="gbrp", interpolation=_SWS_FLAGS).planes)
    image = cv2.merge([b, g, r])
    image.flags.writeable = False
    return image


#: In ``on_corrupt="skip"`` mode, give up after this many demux errors in a
#: row (a dead network stream would otherwise fail forever).
_MAX_DEMUX_ERRORS = 10


class PtsIndex:
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
                log.debug("pts scan stopped early: %s", ffmpeg_reason(exc))
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



class PyAVDecoder:
    """A video file (``kind="file"``) or a stream URL (``kind="url"``) decoded with PyAV; used through
    :class:`~cueref.video.VideoReader`.

    Args:
        source: the file path or URL.
        kind: ``"file"`` or ``"url"``.
        on_corrupt: ``"raise"``: stop at the first damage and raise a :class:`DamagedVideoError` after
            the good frames (default for files); ``"skip"``: log a warning and keep decoding (default
            for URLs).
        timeout_s: network timeout in seconds for URLs (open and read).

    Raises:
        VideoNotFoundError: the file does not exist.
        VideoOpenError: the source cannot be opened as a video.
    """

    def __init__(self, source: str, kind: Literal["file", "url"], *,
                 on_corrupt: Literal["raise", "skip"] | None = None, timeout_s: float = 10.0) -> None:
        self._source = source
        self._kind = kind
        self._container = None
        self._pts_index: PtsIndex | None = None
        self._ready: deque = deque()  # decoded av.VideoFrame not yet delivered
        self._converting: ThreadPoolExecutor | None = None  # the colour conversion's thread, from the first read
        self._in_flight: deque[tuple[int, float, Future]] = deque()  # (index, t_s, its BGR picture to come)
        self._raised: BaseException | None = None  # the decoder's error, raised after the frames in flight
        self._frames_read = 0
        self._last_index: int | None = None
        self._last_t_s: float | None = None
        self._pending_error: VideoError | None = None
        self._error_raised = False
        self._eof = False
        if on_corrupt is None:
            on_corrupt = "skip" if kind == "url" else "raise"
        if on_corrupt not in ("raise", "skip"):
            raise ValueError(f"on_corrupt must be 'raise' or 'skip', got {on_corrupt!r}")
        self._on_corrupt = on_corrupt
        self._open(timeout_s)

    # ------------------------------------------------------------------ opening

    def _open(self, timeout_s: float) -> None:
        source = self._source
        opts: dict[str, str] = {}
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
                opts["rtsp_transport"] = "tcp"  # UDP loses packets on any busy network
            kwargs["timeout"] = timeout_s
        self._open_args = (opts or None, kwargs)
        self._open_container()
        stream = self._stream
        self._tb = Fraction(stream.time_base) if stream.time_base else Fraction(1, BASE_CLOCK)
        self._start_pts = stream.start_time if stream.start_time is not None else 0
        self.rate = stream_rate(stream)
        self.width = stream.codec_context.width
        self.height = stream.codec_context.height
        self.index_is_exact = True
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
        reason = ffmpeg_reason(exc)
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

    # ------------------------------------------------------------------ properties

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def frames_read(self) -> int:
        return self._frames_read

    @property
    def duration_s(self) -> float | None:
        """Duration of the video stream in seconds, or ``None`` (live streams)."""
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
        if self._stream.frames:
            return int(self._stream.frames)
        d, r = self.duration_s, self.rate
        if d is not None and r:
            return int(round(d * float(r)))
        return None

    @property
    def codec(self) -> str:
        return self._stream.codec_context.name

    @property
    def pix_fmt(self) -> str | None:
        return self._stream.codec_context.pix_fmt

    @property
    def format_name(self) -> str | None:
        return self._container.format.name

    def close(self) -> None:
        self._in_flight.clear()
        if self._converting is not None:
            self._converting.shutdown(wait=True)  # no conversion may outlive the decoder's buffers
            self._converting = None
        if self._pts_index is not None:
            self._pts_index.close()
            self._pts_index = None
        if self._container is not None:
            try:
                self._container.close()
            except Exception as exc:  # pragma: no cover
                log.debug("closing %s: %s", self._source, exc)
            self._container = None
        self._ready.clear()

    # ------------------------------------------------------------------ reading

    def read(self) -> Frame | None:
        """The next frame, or ``None`` at the end; raises :class:`DamagedVideoError` once, after the last
        good frame of a damaged file.

        In a file, colour conversion overlaps decoding (:data:`_CONVERT_AHEAD`): the next frame is decoded
        and handed to the converting thread before this one's picture is waited for."""
        if self._converting is None:
            self._converting = ThreadPoolExecutor(1, thread_name_prefix="cueref-bgr")
        ahead = _CONVERT_AHEAD if self._kind == "file" else 0
        while len(self._in_flight) <= ahead and self._raised is None:
            try:
                got = self._next_decoded()
            except Exception as e:  # noqa: BLE001 - raised after the frames decoded before it
                self._raised = e
                break
            if got is None:
                break
            index, t_s, avf = got
            self._in_flight.append((index, t_s, self._converting.submit(_to_bgr, avf)))
        if self._in_flight:
            index, t_s, image = self._in_flight.popleft()
            return Frame(index=index, t_s=t_s, image=image.result())
        if self._raised is not None:
            e, self._raised = self._raised, None
            raise e
        return None

    def _next_decoded(self):
        """``(index, t_s, av.VideoFrame)`` of the next frame to deliver, or ``None`` at the end; raises
        :class:`DamagedVideoError` once, after the last good frame of a damaged file."""
        while True:
            while self._ready:
                got = self._deliver(self._ready.popleft())
                if got is not None:
                    return got
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
                self._damage(ffmpeg_reason(exc), packet=None)
                self._packets = self._container.demux(self._stream)
                return
            self._damage(ffmpeg_reason(exc), packet=None, fatal=True)
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
            self._damage(ffmpeg_reason(exc), packet=packet)
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
            log.debug("%s: error while draining decoder: %s", self._source, ffmpeg_reason(exc))

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
        elif self._last_decoded_t_s is not None and self.rate and (
            self._stream.duration or self._container.duration
        ):
            if self._stream.duration:  # the video stream's own duration
                promised_s = float(self._stream.duration * self._tb)
                limit_s = max(0.5, 0.02 * promised_s)
            else:  # container duration: may include a longer audio track
                promised_s = self._container.duration / av.time_base
                limit_s = max(1.0, 0.05 * promised_s)
            got_s = self._last_decoded_t_s + 1.0 / float(self.rate)
            short_s = promised_s - got_s
            if short_s > 2.0 / float(self.rate):
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

    def _deliver(self, avf) -> tuple[int, float, av.VideoFrame] | None:
        """Account for one decoded frame; return its index, time and picture, or None when it
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
            step = 1.0 / float(self.rate) if self.rate else 0.0
            last = self._last_decoded_t_s
            t_s = last + step if last is not None else 0.0
        index = self._next_index
        self._next_index += 1
        self._last_decoded_t_s = t_s
        if self._seek_target_s is not None:
            if t_s < self._seek_target_s - _SEEK_EPS_S:
                return None
            self._seek_target_s = None
        self._frames_read += 1
        self._last_index, self._last_t_s = index, t_s
        self._in_error_burst = False
        return index, t_s, avf

    def _index_after_seek(self, pts: int | None) -> int:
        if pts is None:
            self.index_is_exact = False
            return int(round(self._seek_target_s * float(self.rate))) if self.rate else 0
        if self._kind == "file":
            if self._pts_index is None:
                self._pts_index = PtsIndex(self._source)
            return self._pts_index.rank(pts)
        self.index_is_exact = False
        t = float((pts - self._start_pts) * self._tb)
        return int(round(t * float(self.rate))) if self.rate else 0

    # ------------------------------------------------------------------ seeking

    def seek(self, t_s: float) -> None:
        """Position the reader so the next frame read is the first frame with
        ``frame.t_s >= t_s`` (seconds from the start of the stream).

        Seeks to the preceding keyframe and decodes forward; frames before
        ``t_s`` are decoded but not delivered. Seeking past the end makes the
        next ``read()`` return ``None``.

        Raises:
            VideoError: the stream cannot seek.
        """
        self._in_flight.clear()
        self._raised = None
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
                    f"cannot seek {self._source!r} to {t_s:.3f} s: {ffmpeg_reason(exc)}"
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

