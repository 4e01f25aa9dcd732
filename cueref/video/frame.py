"""The values the video readers hand out: one decoded :class:`Frame`, and a :class:`VideoInfo`
summary of a source's header. Plain values (an array, a time, an index), so that vision and tracking
take them without importing anything of ``cueref``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Frame", "VideoInfo"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Frame:
    """One decoded video frame.

    Attributes:
        index: 0-based position of the frame in the stream (presentation order).
        t_s: presentation time in seconds from the start of the stream.
        image: ``(H, W, 3)`` ``uint8`` BGR image. Frames produced by
            :class:`~cueref.video.VideoReader` have a read-only image; use
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
    """What a source's header says about its video stream.

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
