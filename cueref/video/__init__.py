"""Video input and output for cueref: the project's single place that touches video.

* :class:`VideoReader` (:mod:`.reader`) reads a file or a stream URL with PyAV (:mod:`.decoder`:
  container timestamps, exact frame indices after a seek, damaged files reported after the last good
  frame) or a camera with OpenCV (:mod:`.camera`), and yields :class:`Frame` values
  ``(index, t_s, image)`` (:mod:`.frame`); a frame's time always comes from the source's own clock,
  never from ``index / fps``;
* :func:`prefetch` (:mod:`.prefetch`) decodes in its own thread through a bounded queue;
* :class:`VideoWriter` (:mod:`.writer`) writes H.264 MP4 that browsers play, atomically;
* :mod:`.errors` holds the errors, :mod:`.rate` the frame-rate helper both sides share.

Images are ``(H, W, 3)`` ``uint8`` BGR arrays (as OpenCV). Nothing is configured at import time;
everything logs through ``logging.getLogger("cueref.video")``. Vision and tracking never import this
package: they take plain arrays and times.
"""

from cueref.video.errors import (
    CorruptVideoError,
    DamagedVideoError,
    TruncatedVideoError,
    VideoError,
    VideoNotFoundError,
    VideoOpenError,
    VideoWriteError,
)
from cueref.video.frame import Frame, VideoInfo
from cueref.video.prefetch import prefetch
from cueref.video.reader import VideoReader
from cueref.video.writer import VideoWriter

__all__ = [
    "Frame",
    "VideoInfo",
    "VideoReader",
    "VideoWriter",
    "prefetch",
    "VideoError",
    "VideoNotFoundError",
    "VideoOpenError",
    "DamagedVideoError",
    "TruncatedVideoError",
    "CorruptVideoError",
    "VideoWriteError",
]
