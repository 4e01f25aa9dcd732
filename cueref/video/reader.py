""":class:`VideoReader`: one way to read frames from a video file, a stream URL or a camera."""

from __future__ import annotations

import os
import re
from fractions import Fraction
from typing import Iterator, Literal

from cueref.video.camera import CameraCapture
from cueref.video.decoder import PyAVDecoder
from cueref.video.errors import VideoError
from cueref.video.frame import Frame, VideoInfo

__all__ = ["VideoReader"]


def _is_camera(source: object) -> bool:
    if isinstance(source, bool):
        return False
    if isinstance(source, int):
        return True
    return isinstance(source, str) and source.strip().isdigit()


def _is_url(source: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*://", source) is not None


class VideoReader:
    """Iterate over the frames of a video file, stream URL or camera.

    Use as a context manager and iterator::

        with VideoReader("match.mp4") as reader:
            for frame in reader:          # Frame(index, t_s, image)
                ...

    A **file** path (``str`` or :class:`os.PathLike`) or a **stream URL** (anything with ``://``:
    ``rtsp://``, ``http://`` ...) is decoded with PyAV (:mod:`cueref.video.decoder`: container
    timestamps, exact indices after a seek, damaged files); a **camera index** (``int`` or a string of
    digits such as ``"0"``) is read with OpenCV (:mod:`cueref.video.camera`).

    Args:
        source: file path, URL, or camera index.
        on_corrupt: ``"raise"`` -- stop at the first damage and raise a
            :class:`~cueref.video.errors.DamagedVideoError` after the good frames (default for files);
            ``"skip"`` -- log a warning and keep decoding (default for URLs). Cameras ignore it.
        timeout_s: network timeout in seconds for URLs (open and read).

    Raises:
        VideoNotFoundError: the file does not exist.
        VideoOpenError: the source cannot be opened as a video.
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | int,
        *,
        on_corrupt: Literal["raise", "skip"] | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self._closed = True
        if _is_camera(source):
            self._source: str | int = int(source)
            self._src: PyAVDecoder | CameraCapture = CameraCapture(int(source))
        else:
            path = os.fspath(source)
            self._source = path if isinstance(path, str) else os.fsdecode(path)
            kind = "url" if _is_url(self._source) else "file"
            self._src = PyAVDecoder(self._source, kind, on_corrupt=on_corrupt, timeout_s=timeout_s)
        self._closed = False

    # ------------------------------------------------------------------ properties

    @property
    def kind(self) -> str:
        """``"file"``, ``"url"`` or ``"camera"``."""
        return self._src.kind

    @property
    def width(self) -> int:
        """Frame width in pixels."""
        return self._src.width

    @property
    def height(self) -> int:
        """Frame height in pixels."""
        return self._src.height

    @property
    def fps_fraction(self) -> Fraction | None:
        """Average frame rate (frames per second) as an exact Fraction, or ``None``."""
        return self._src.rate

    @property
    def fps(self) -> float | None:
        """Average frame rate in frames per second (``float(fps_fraction)``), or
        ``None`` when unknown (some cameras)."""
        return float(self._src.rate) if self._src.rate else None

    @property
    def duration_s(self) -> float | None:
        """Duration of the video stream in seconds, or ``None`` (cameras, live streams)."""
        return self._src.duration_s

    @property
    def frame_count(self) -> int | None:
        """Number of frames: exact when the container header stores it, else an
        estimate ``round(duration_s * fps)``, else ``None`` (cameras, live streams)."""
        return self._src.frame_count

    @property
    def info(self) -> VideoInfo:
        """Header information as a :class:`VideoInfo`."""
        s = self._src
        return VideoInfo(path=self._source, width=s.width, height=s.height, fps=self.fps, frame_count=s.frame_count,
                         duration_s=s.duration_s, codec=s.codec, pix_fmt=s.pix_fmt, format_name=s.format_name)

    @property
    def index_is_exact(self) -> bool:
        """``False`` once frame indices are estimates (after a seek on a URL)."""
        return self._src.index_is_exact

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
        return f"VideoReader({self._source!r}, kind={self.kind!r}, closed={self._closed})"

    def close(self) -> None:
        """Release the file, stream or camera. Safe to call more than once."""
        if not self._closed:
            self._closed = True
            self._src.close()

    def _open_source(self) -> PyAVDecoder | CameraCapture:
        if self._closed:
            raise VideoError(f"reader for {self._source!r} is closed")
        return self._src

    def read(self) -> Frame | None:
        """Return the next frame, or ``None`` at the end of the video.

        Raises:
            DamagedVideoError: once, after the last good frame of a damaged file.
            VideoError: camera stopped delivering frames, or reader closed.
        """
        return self._open_source().read()

    def seek(self, t_s: float) -> None:
        """Position the reader so the next frame read is the first frame with
        ``frame.t_s >= t_s`` (seconds from the start of the stream).

        Seeks to the preceding keyframe and decodes forward; frames before
        ``t_s`` are decoded but not delivered. Seeking past the end makes the
        next ``read()`` return ``None``. The review report's clip per shot seeks this way.

        Raises:
            VideoError: the source is a camera or a stream that cannot seek, or the reader is closed.
        """
        self._open_source().seek(t_s)
