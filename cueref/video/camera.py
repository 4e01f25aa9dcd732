"""A live camera read with OpenCV (a camera index: 0, 1 ...); used through
:class:`~cueref.video.VideoReader`.

A frame's ``t_s`` is the camera's own clock when the driver gives one (shifted so the first frame
sits at its monotonic time since the camera was opened), else the monotonic time of the read; its
``index`` counts the frames grabbed since opening. A camera cannot seek.
"""

from __future__ import annotations

import time

import cv2

from cueref.video.errors import VideoError, VideoOpenError
from cueref.video.frame import Frame
from cueref.video.rate import fps_fraction

__all__ = ["CameraCapture"]


class CameraCapture:
    """Camera ``index`` opened with :class:`cv2.VideoCapture`.

    Raises:
        VideoOpenError: no such camera, or it is in use or not accessible.
    """

    kind = "camera"
    index_is_exact = True
    duration_s = frame_count = codec = pix_fmt = format_name = None  # a live camera's header says none of these

    def __init__(self, index: int) -> None:
        self._index = index
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
        self.width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        self.height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        fps = cap.get(cv2.CAP_PROP_FPS)
        self.rate = fps_fraction(fps) if fps and fps > 0 else None
        self._opened_at = time.monotonic()
        self._clock_offset_s: float | None = None
        self.frames_read = 0

    def read(self) -> Frame:
        ok, image = self._cap.read()
        if not ok or image is None:
            raise VideoError(
                f"camera {self._index} stopped delivering frames after "
                f"{self.frames_read} frame(s); check the cable/connection"
            )
        now = time.monotonic() - self._opened_at
        pos_ms = self._cap.get(cv2.CAP_PROP_POS_MSEC)
        t_s = now
        if pos_ms and pos_ms > 0:
            # Camera clock, shifted so the first frame sits at its
            # monotonic time since open.
            if self._clock_offset_s is None:
                self._clock_offset_s = now - pos_ms / 1000.0
            t_s = pos_ms / 1000.0 + self._clock_offset_s
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        elif image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
        image.flags.writeable = False
        frame = Frame(index=self.frames_read, t_s=float(t_s), image=image)
        self.frames_read += 1
        return frame

    def seek(self, t_s: float) -> None:
        raise VideoError(f"cannot seek camera {self._index}: live cameras are not seekable")

    def close(self) -> None:
        self._cap.release()
