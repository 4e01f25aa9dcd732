""":class:`VideoWriter`: H.264 (libx264, yuv420p) in MP4 with ``movflags=+faststart``, so the result
plays in a browser. It writes to a hidden temporary file in the destination folder and renames it on
:meth:`VideoWriter.close`, so a crash never leaves a half-written file under the final name.

Images are ``numpy.ndarray`` of shape ``(H, W, 3)``, dtype ``uint8``, channel order BGR (as OpenCV).
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.reformatter import Interpolation

from cueref.video.errors import VideoWriteError, ffmpeg_reason
from cueref.video.frame import Frame
from cueref.video.rate import BASE_CLOCK, fps_fraction

__all__ = ["VideoWriter"]

log = logging.getLogger("cueref.video")

#: swscale flags for BGR -> YUV 4:2:0.
_SWS_FLAGS = Interpolation.BILINEAR | Interpolation.ACCURATE_RND


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
        try:
            self._fps = fps_fraction(fps)
        except ValueError as e:
            raise VideoWriteError(str(e)) from None
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
        den = BASE_CLOCK * self._fps.numerator // math.gcd(BASE_CLOCK, self._fps.numerator)
        if den > 2**31 - 1:
            den = BASE_CLOCK
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
            format="yuv420p", interpolation=_SWS_FLAGS
        )
        frame.pts = pts
        frame.time_base = self._tb
        try:
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        except av.FFmpegError as exc:
            raise VideoWriteError(f"encoding frame {self._frames} of {str(self._path)!r} failed: "
                                  f"{ffmpeg_reason(exc)}") from exc
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
