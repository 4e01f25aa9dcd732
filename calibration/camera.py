"""A calibrated camera: lens (camera matrix and distortion), the cloth-plane homography and the
camera's position above the table, mapping image pixels to table millimetres at any height.

Points seen in the image are first undistorted (``cv2.undistortPoints`` with the camera matrix, so
undistorted points are still pixels), then mapped by the cloth-plane :class:`Homography` to table
millimetres. A point that is ``h_mm`` above the cloth (a ball's centre is one radius up) is seen
along the ray from the camera centre ``C``: the ray meets the cloth at ``P0`` and the plane at
height ``h`` at ``P0 + (C_xy - P0) * h / C_h`` (parallax). Without that correction a
ball near a corner of a 1.42 m table seen from 1.2 m is placed ~18 mm outwards.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

import cv2
import numpy as np

from calibration.homography import CalibrationError, Homography, as_points

__all__ = [
    "Calibration",
    "camera_pose",
    "focal_from_homography",
    "default_camera_matrix",
    "undistort_points",
    "undistort_px",
    "distort_px",
]

log = logging.getLogger(__name__)

# OpenCV's default 5 iterations leave ~0.5 px of error at k1 = -0.25 near the image corners.
UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-10)

DEFAULT_FOCAL_PER_WIDTH = 0.9  # f = 0.9 * image width (a 58 degree horizontal field of view) when nothing better is known


def default_camera_matrix(image_size: tuple[int, int], focal_px: float | None = None) -> np.ndarray:
    """A pinhole camera matrix with the principal point at the image centre and square pixels."""
    w, h = image_size
    f = float(focal_px) if focal_px else DEFAULT_FOCAL_PER_WIDTH * w
    return np.array([[f, 0.0, (w - 1) / 2.0], [0.0, f, (h - 1) / 2.0], [0.0, 0.0, 1.0]])


def undistort_points(points: np.ndarray, camera_matrix: np.ndarray, dist: np.ndarray | None, new_matrix: np.ndarray | None,
                     criteria: tuple = UNDISTORT_CRITERIA) -> np.ndarray:
    """``cv2.undistortPoints`` iterated to ``criteria`` (N, 1, 2): OpenCV 5 takes the criteria there,
    OpenCV 4 in ``undistortPointsIter``."""
    if hasattr(cv2, "undistortPointsIter"):
        return cv2.undistortPointsIter(points, camera_matrix, dist, None, new_matrix, criteria)
    return cv2.undistortPoints(points, camera_matrix, dist, None, None, new_matrix, criteria)


def undistort_px(points_px: object, camera_matrix: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Image pixels (N, 2) -> undistorted pixels (N, 2) of the same camera matrix."""
    p = as_points(points_px)
    if len(p) == 0 or not np.any(dist):
        return p.copy()
    return undistort_points(p.reshape(-1, 1, 2), camera_matrix, dist, camera_matrix).reshape(-1, 2)


def distort_px(points_px: object, camera_matrix: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Undistorted pixels (N, 2) -> pixels as the lens shows them (N, 2)."""
    p = as_points(points_px)
    if len(p) == 0 or not np.any(dist):
        return p.copy()
    norm = cv2.undistortPoints(p.reshape(-1, 1, 2), camera_matrix, None).reshape(-1, 2)  # K^-1 only
    xyz = np.c_[norm, np.ones(len(norm))]
    out, _ = cv2.projectPoints(xyz, np.zeros(3), np.zeros(3), camera_matrix, dist)
    return out.reshape(-1, 2)


def focal_from_homography(h_mm_to_px: np.ndarray, principal_point: tuple[float, float]) -> float | None:
    """Focal length (px) implied by a plane's homography (table mm -> undistorted px), assuming
    square pixels and the given principal point (the orthogonality of the plane's axes, Zhang 2000).

    Returns None when the view is too close to fronto-parallel for the focal length to show."""
    t = np.array([[1.0, 0, -principal_point[0]], [0, 1.0, -principal_point[1]], [0, 0, 1.0]])
    m = t @ h_mm_to_px
    m = m / np.linalg.norm(m[:2, :2])
    h1, h2 = m[:, 0], m[:, 1]
    # a / f^2 + b = 0 for each of the two constraints h1'Wh2 = 0 and h1'Wh1 = h2'Wh2, W = diag(1/f^2, 1/f^2, 1).
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    # How much perspective there is, relative to the in-plane scale: below this f cannot be told.
    if np.abs(b).max() < 1e-12 or float(a @ a) == 0.0:
        return None
    u = -float(a @ b) / float(a @ a)
    if u <= 0:
        return None
    return 1.0 / math.sqrt(u)


def camera_pose(h_px_to_mm: Homography, camera_matrix: np.ndarray, length_mm: float, width_mm: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Camera pose from the table corners by cv2.solvePnP (IPPE, planar): returns ``(rvec, tvec,
    centre_xyh_mm)`` where ``centre_xyh_mm`` is the camera centre over the table frame ``(x, y)``
    and its height above the cloth."""
    corners_mm = np.array([[0, 0], [length_mm, 0], [length_mm, width_mm], [0, width_mm]], dtype=np.float64)
    corners_px = h_px_to_mm.inverse(corners_mm)
    obj = np.c_[corners_mm, np.zeros(4)]
    ok, rvec, tvec = cv2.solvePnP(obj, corners_px, camera_matrix, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError("cv2.solvePnP found no camera pose for the table corners",
                               "give the camera height (--camera-height-mm) or the focal length (--focal-px)")
    r, _ = cv2.Rodrigues(rvec)
    c = (-r.T @ tvec).ravel()
    # z = x cross y points into the table (x right, y down as seen from above): the camera has c_z < 0.
    if c[2] >= 0:
        raise CalibrationError("the camera pose found puts the camera under the table",
                               "check the corner order (TL, TR, BR, BL as seen in the image)")
    return rvec.ravel(), tvec.ravel(), np.array([c[0], c[1], -c[2]])


@dataclass(frozen=True, slots=True, eq=False)
class Calibration:
    """Everything needed to turn image pixels into table millimetres.

    ``homography`` maps *undistorted* pixels to millimetres on the cloth; ``camera_xyh_mm`` is the
    camera centre above the table frame (x, y, height above the cloth), used for points above the
    cloth. ``corners_px`` are the playing-surface corners TL, TR, BR, BL as seen in the image
    (distorted). ``residuals`` holds the quality figures (see docs/calibration.md)."""

    image_size: tuple[int, int]  # (width, height) px
    camera_matrix: np.ndarray  # (3, 3)
    dist_coeffs: np.ndarray  # (5,) k1 k2 p1 p2 k3
    homography: Homography  # undistorted px -> table mm (cloth plane)
    camera_xyh_mm: tuple[float, float, float]  # camera centre (x_mm, y_mm) and height above the cloth (mm)
    corners_px: np.ndarray  # (4, 2) TL TR BR BL, in the (distorted) image
    length_mm: float
    width_mm: float
    ball_radius_mm: float
    profile_name: str = ""
    method: str = "automatic"  # "automatic" | "manual"
    residuals: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        k = np.asarray(self.camera_matrix, dtype=np.float64)
        d = np.zeros(5)
        dc = np.asarray(self.dist_coeffs, dtype=np.float64).ravel()
        d[: min(5, len(dc))] = dc[:5]
        if k.shape != (3, 3):
            raise CalibrationError(f"camera matrix must be 3x3, got {k.shape}")
        if self.camera_xyh_mm[2] <= 0:
            raise CalibrationError(f"camera height {self.camera_xyh_mm[2]:g} mm is not above the table")
        object.__setattr__(self, "camera_matrix", k)
        object.__setattr__(self, "dist_coeffs", d)
        object.__setattr__(self, "corners_px", as_points(self.corners_px, "corners_px"))
        object.__setattr__(self, "residuals", MappingProxyType(dict(self.residuals)))
        object.__setattr__(self, "image_size", (int(self.image_size[0]), int(self.image_size[1])))

    @property
    def camera_height_mm(self) -> float:
        return float(self.camera_xyh_mm[2])

    def undistort_px(self, points_px: object) -> np.ndarray:
        return undistort_px(points_px, self.camera_matrix, self.dist_coeffs)

    def distort_px(self, points_px: object) -> np.ndarray:
        return distort_px(points_px, self.camera_matrix, self.dist_coeffs)

    def to_table_mm(self, points_px: object, h_mm: float = 0.0) -> np.ndarray:
        """Image pixels (N, 2) -> table mm (N, 2) of points ``h_mm`` above the cloth."""
        p0 = self.homography(self.undistort_px(points_px))
        if h_mm == 0.0:
            return p0
        cx, cy, ch = self.camera_xyh_mm
        return p0 + (np.array([cx, cy]) - p0) * (h_mm / ch)

    def to_image_px(self, points_mm: object, h_mm: float = 0.0) -> np.ndarray:
        """Table mm (N, 2) of points ``h_mm`` above the cloth -> image pixels (N, 2)."""
        p = as_points(points_mm)
        if h_mm != 0.0:
            cx, cy, ch = self.camera_xyh_mm
            c = np.array([cx, cy])
            p = c + (p - c) * (ch / (ch - h_mm))
        return self.distort_px(self.homography.inverse(p))

    def balls_to_table_mm(self, centres_px: object) -> np.ndarray:
        """Image centres of balls (N, 2) -> their table positions (N, 2), seen at ball-centre height."""
        return self.to_table_mm(centres_px, self.ball_radius_mm)

    def with_residuals(self, **more: object) -> "Calibration":
        return replace(self, residuals={**self.residuals, **more})
