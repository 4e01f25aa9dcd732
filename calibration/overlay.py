"""Drawing a calibration over a picture, for a person to check it: the playing surface's edges (the
cushion noses, bent as the lens bends them), the pockets or bed holes and pins where the profile
puts them, and the landmarks that calibration found."""

from __future__ import annotations

from typing import Mapping

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.table import TableProfile

__all__ = ["draw_calibration"]

EDGE_BGR = (0, 255, 255)
PROFILE_BGR = (255, 0, 255)
FOUND_BGR = (0, 255, 0)


def _poly(img: np.ndarray, cal: Calibration, pts_mm: np.ndarray, colour, closed: bool = False, thickness: int = 1) -> None:
    px = cal.to_image_px(pts_mm)
    cv2.polylines(img, [np.round(px * 16).astype(np.int32)], closed, colour, thickness, cv2.LINE_AA, 4)


def _circle_mm(img: np.ndarray, cal: Calibration, xy_mm, r_mm: float, colour, thickness: int = 1) -> None:
    ang = np.linspace(0, 2 * np.pi, 48)
    pts = np.asarray(xy_mm, float)[None, :] + r_mm * np.c_[np.cos(ang), np.sin(ang)]
    _poly(img, cal, pts, colour, True, thickness)


def draw_calibration(image: np.ndarray, cal: Calibration, profile: TableProfile,
                     found_mm: Mapping[str, np.ndarray] | None = None, thickness: int = 1) -> np.ndarray:
    """A copy of ``image`` with the calibration drawn on it: cushion lines (yellow), the profile's
    pockets, holes and pins (magenta), found landmark centres (green crosses), corner labels."""
    out = np.ascontiguousarray(image.copy())
    L, W = profile.length_mm, profile.width_mm
    for a, b in zip(profile.corners_mm, profile.corners_mm[1:] + profile.corners_mm[:1]):
        _poly(out, cal, np.linspace(a, b, 60), EDGE_BGR, thickness=thickness)
    for p in profile.pockets:
        _circle_mm(out, cal, p.xy_mm, p.radius_mm, PROFILE_BGR, thickness)
    for h in profile.holes:
        _circle_mm(out, cal, h.xy_mm, h.radius_mm, PROFILE_BGR, thickness)
    for pin in profile.pins:
        _circle_mm(out, cal, pin.xy_mm, pin.radius_mm, PROFILE_BGR, thickness)
    if profile.baulk_x_mm is not None:
        _poly(out, cal, np.linspace((profile.baulk_x_mm, 0.0), (profile.baulk_x_mm, W), 30), PROFILE_BGR, thickness=1)
    for xy in (found_mm or {}).values():
        c = cal.to_image_px(np.asarray(xy, float)[None, :])[0]
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), FOUND_BGR, cv2.MARKER_CROSS, 12, 1, cv2.LINE_AA)
    for name, c in zip(("TL", "TR", "BR", "BL"), cal.corners_px):
        centre = cal.to_image_px(np.array([[L / 2, W / 2]]))[0]
        pos = c + (c - centre) / (np.linalg.norm(c - centre) + 1e-9) * 14 - (10, -5)
        cv2.putText(out, name, (int(pos[0]), int(pos[1])), cv2.FONT_HERSHEY_SIMPLEX, 0.45, EDGE_BGR, 1, cv2.LINE_AA)
    return out
