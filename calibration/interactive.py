"""A small window to place the four playing-surface corners by hand.

Left-click and drag moves the nearest corner (a click far from every corner places the next unset
one); the mouse wheel or ``+``/``-`` zooms about the cursor; ``r`` resets; Enter or Space accepts;
Esc cancels. The corners are TL, TR, BR, BL: clockwise from the top of the head end.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.detect import find_cloth, order_quad
from calibration.homography import CalibrationError
from calibration.table import TableProfile

__all__ = ["CornerEditor", "pick_corners", "require_display"]

NAMES = ("TL", "TR", "BR", "BL")
WINDOW = "cueref calibrate: drag the corners, Enter to accept, Esc to cancel"
NO_WINDOW_HINT = "run it where a window can open (a desktop session, or ssh -X), or give the corners with --corners 'x,y x,y x,y x,y'"
_PROBE = "import cv2; cv2.namedWindow('cueref-probe'); cv2.waitKey(1); cv2.destroyAllWindows()"


def require_display() -> None:
    """Refuse, with what to do, where no window can be opened. OpenCV's GUI backend aborts the whole
    process when it finds no display, so a window is first opened in a short-lived child process."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise CalibrationError("--interactive needs a window, but there is no display (DISPLAY is not set)", NO_WINDOW_HINT)
    try:
        probe = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise CalibrationError("--interactive needs a window, but opening one did not finish in 30 s", NO_WINDOW_HINT) from None
    if probe.returncode != 0:
        lines = [line.strip() for line in probe.stderr.splitlines() if line.strip()]
        why = lines[0] if lines else f"exit status {probe.returncode}"
        raise CalibrationError(f"--interactive needs a window, but none can be opened here ({why})", NO_WINDOW_HINT)


@dataclass
class CornerEditor:
    """The editing state, separate from the window so it can be tested: corners in image pixels and
    the zoom (a scale about a centre)."""

    size: tuple[int, int]  # image (width, height)
    corners: dict[str, tuple[float, float]] = field(default_factory=dict)
    zoom: float = 1.0
    centre: tuple[float, float] = (0.0, 0.0)
    grabbed: str | None = None
    grab_radius_px: float = 25.0

    def to_image(self, x: float, y: float) -> tuple[float, float]:
        """Window pixel -> image pixel."""
        w, h = self.size
        return (self.centre[0] + (x - w / 2) / self.zoom, self.centre[1] + (y - h / 2) / self.zoom)

    def to_window(self, x: float, y: float) -> tuple[float, float]:
        w, h = self.size
        return ((x - self.centre[0]) * self.zoom + w / 2, (y - self.centre[1]) * self.zoom + h / 2)

    def press(self, x: float, y: float) -> None:
        p = self.to_image(x, y)
        near = [(np.hypot(p[0] - c[0], p[1] - c[1]) * self.zoom, n) for n, c in self.corners.items()]
        near = [t for t in near if t[0] <= self.grab_radius_px]
        if near:
            self.grabbed = min(near)[1]
        else:
            free = [n for n in NAMES if n not in self.corners]
            self.grabbed = free[0] if free else None
        if self.grabbed:
            self.corners[self.grabbed] = p

    def drag(self, x: float, y: float) -> None:
        if self.grabbed:
            self.corners[self.grabbed] = self.to_image(x, y)

    def release(self) -> None:
        self.grabbed = None

    def zoom_at(self, x: float, y: float, factor: float) -> None:
        """Zoom by ``factor`` keeping the image point under the cursor in place."""
        p = self.to_image(x, y)
        self.zoom = float(np.clip(self.zoom * factor, 1.0, 16.0))
        w, h = self.size
        self.centre = (p[0] - (x - w / 2) / self.zoom, p[1] - (y - h / 2) / self.zoom)
        if self.zoom == 1.0:
            self.centre = (w / 2, h / 2)

    def view(self, image: np.ndarray) -> np.ndarray:
        w, h = self.size
        m = np.array([[self.zoom, 0, w / 2 - self.centre[0] * self.zoom], [0, self.zoom, h / 2 - self.centre[1] * self.zoom]])
        out = cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_NEAREST if self.zoom > 2 else cv2.INTER_LINEAR)
        pts = [self.to_window(*self.corners[n]) for n in NAMES if n in self.corners]
        if len(pts) > 1:
            cv2.polylines(out, [np.round(np.array(pts)).astype(np.int32)], len(pts) == 4, (0, 255, 255), 1, cv2.LINE_AA)
        for n in NAMES:
            if n in self.corners:
                x, y = self.to_window(*self.corners[n])
                cv2.drawMarker(out, (int(round(x)), int(round(y))), (0, 0, 255), cv2.MARKER_CROSS, 20, 1)
                cv2.putText(out, n, (int(x) + 6, int(y) - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 255), 1, cv2.LINE_AA)
        return out


def pick_corners(image: np.ndarray, profile: TableProfile, start: dict[str, tuple[float, float]] | None = None
                 ) -> dict[str, tuple[float, float]]:
    """Open the window and return the four corners the user accepted. Starts from ``start``, else
    from the cloth's outline if one is found."""
    h, w = image.shape[:2]
    ed = CornerEditor((w, h), dict(start or {}), centre=(w / 2, h / 2))
    if not ed.corners:
        try:
            quad, _ = order_quad(find_cloth(image).quad_px)
            ed.corners = {n: (float(x), float(y)) for n, (x, y) in zip(NAMES, quad)}
        except CalibrationError:
            pass

    def on_mouse(event: int, x: int, y: int, flags: int, _param: object) -> None:
        if event == cv2.EVENT_LBUTTONDOWN:
            ed.press(x, y)
        elif event == cv2.EVENT_MOUSEMOVE and flags & cv2.EVENT_FLAG_LBUTTON:
            ed.drag(x, y)
        elif event == cv2.EVENT_LBUTTONUP:
            ed.release()
        elif event == cv2.EVENT_MOUSEWHEEL:
            ed.zoom_at(x, y, 1.25 if cv2.getMouseWheelDelta(flags) > 0 else 0.8)

    require_display()
    try:
        cv2.namedWindow(WINDOW, cv2.WINDOW_AUTOSIZE)
    except cv2.error as e:
        raise CalibrationError(f"no window can be opened here ({e.err})", NO_WINDOW_HINT) from None
    cv2.setMouseCallback(WINDOW, on_mouse)
    last = (w / 2, h / 2)
    try:
        while True:
            cv2.imshow(WINDOW, ed.view(image))
            key = cv2.waitKey(30) & 0xFF
            if key in (13, 10, 32) and len(ed.corners) == 4:
                return {n: ed.corners[n] for n in NAMES}
            if key == 27:
                raise CalibrationError("calibration cancelled in the window", "run again, or give --corners")
            if key in (ord("+"), ord("=")):
                ed.zoom_at(*last, 1.25)
            elif key == ord("-"):
                ed.zoom_at(*last, 0.8)
            elif key == ord("r"):
                ed.corners, ed.zoom, ed.centre = dict(start or {}), 1.0, (w / 2, h / 2)
    finally:
        cv2.destroyWindow(WINDOW)
