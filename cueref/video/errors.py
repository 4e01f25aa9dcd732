"""The errors of :mod:`cueref.video`: every one says what went wrong with which source and what to do."""

from __future__ import annotations

__all__ = [
    "VideoError",
    "VideoNotFoundError",
    "VideoOpenError",
    "DamagedVideoError",
    "TruncatedVideoError",
    "CorruptVideoError",
    "VideoWriteError",
    "ffmpeg_reason",
]


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


def ffmpeg_reason(exc: BaseException) -> str:
    """Short human reason from a PyAV exception (without the errno noise)."""
    strerror = getattr(exc, "strerror", None)
    if strerror:
        return str(strerror)
    return str(exc) or type(exc).__name__
