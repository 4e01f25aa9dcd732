"""The simulated overhead camera: a pinhole with OpenCV's lens distortion, mounted above the table.

Frames
------
The API takes **table points** ``(x_mm, y_mm, h_mm)``: ``x, y`` in the table frame of
:mod:`calibration.table` (origin at the head-top corner of the playing surface, x along the length,
y across) and ``h_mm`` the height **up** from the cloth. Seen from above with the head end on the
left, x points right and y points down the picture, so (x, y, up) is a *left-handed* triple. OpenCV
needs a right-handed world frame, so the camera's world frame is

    world = (x_mm, y_mm, -h_mm)          (z points down, into the table)

and the pose ``(rvec, tvec)`` maps world to camera coordinates as in :func:`cv2.projectPoints`:
``X_cam = R(rvec) @ world + tvec``. A camera straight above the table centre with the picture's
x along the table's x has ``R = I`` and ``tvec = -(L/2, W/2, -height)``.

Pixels are ``(col, row)``, origin at the top-left pixel's centre (OpenCV's convention). Distortion
is OpenCV's ``(k1, k2, p1, p2, k3)``; projection goes through :func:`cv2.projectPoints`, so it
matches OpenCV exactly.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Mapping

import cv2
import numpy as np

from calibration.camera import undistort_points
from calibration.table import TableProfile

__all__ = ["CameraModel", "mount_camera", "table_to_world"]

log = logging.getLogger(__name__)


def table_to_world(xyh_mm: np.ndarray) -> np.ndarray:
    """Table points ``(N, 3)`` as (x, y, height up) -> the camera's world frame (x, y, -height)."""
    p = np.asarray(xyh_mm, dtype=np.float64).reshape(-1, 3).copy()
    p[:, 2] = -p[:, 2]
    return p


@dataclass(frozen=True, slots=True)
class CameraModel:
    """A calibrated camera: image size, intrinsics, OpenCV distortion and pose over the table.

    ``rvec``/``tvec`` map the world frame (module docstring) to the camera frame, in millimetres.
    """

    size: tuple[int, int]  # (width, height) px
    fx: float
    fy: float
    cx: float
    cy: float
    dist: tuple[float, float, float, float, float]  # k1, k2, p1, p2, k3
    rvec: tuple[float, float, float]
    tvec: tuple[float, float, float]  # mm

    @property
    def width(self) -> int:
        return self.size[0]

    @property
    def height(self) -> int:
        return self.size[1]

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def dist_coeffs(self) -> np.ndarray:
        return np.asarray(self.dist, dtype=np.float64)

    @property
    def R(self) -> np.ndarray:
        """World-to-camera rotation (3, 3)."""
        return cv2.Rodrigues(np.asarray(self.rvec, dtype=np.float64))[0]

    @property
    def centre_world(self) -> np.ndarray:
        """The camera's optical centre in the world frame (x, y, -height)."""
        return -self.R.T @ np.asarray(self.tvec, dtype=np.float64)

    @property
    def height_mm(self) -> float:
        """Height of the optical centre above the cloth."""
        return float(-self.centre_world[2])

    def project(self, xyh_mm: np.ndarray) -> np.ndarray:
        """Pixels ``(N, 2)`` of table points ``(N, 3)`` (x_mm, y_mm, height up mm), with distortion."""
        world = table_to_world(xyh_mm)
        if len(world) == 0:
            return np.zeros((0, 2))
        px, _ = cv2.projectPoints(world, np.asarray(self.rvec, float), np.asarray(self.tvec, float), self.K, self.dist_coeffs)
        return px.reshape(-1, 2)

    def depth_mm(self, xyh_mm: np.ndarray) -> np.ndarray:
        """Distance along the optical axis (camera z) of table points ``(N, 3)``."""
        world = table_to_world(xyh_mm)
        return world @ self.R[2] + self.tvec[2]

    def pixel_rays(self, px: np.ndarray) -> np.ndarray:
        """Unit ray directions ``(..., 3)`` in the world frame through pixels ``(..., 2)`` (distortion
        removed with OpenCV's iterative undistortion)."""
        px = np.asarray(px, dtype=np.float64)
        shape = px.shape[:-1]
        pts = px.reshape(-1, 1, 2)
        crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
        n = undistort_points(pts, self.K, self.dist_coeffs, None, crit).reshape(-1, 2)
        d = np.concatenate([n, np.ones((len(n), 1))], axis=1) @ self.R  # R^T applied to row vectors
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        return d.reshape(*shape, 3)

    def table_corners_px(self, profile: TableProfile) -> np.ndarray:
        """Playing-surface corners (TL, TR, BR, BL) on the cloth, in pixels ``(4, 2)``."""
        c = np.array([[x, y, 0.0] for x, y in profile.corners_mm])
        return self.project(c)

    def to_dict(self) -> dict[str, Any]:
        return {
            "size": [int(self.size[0]), int(self.size[1])],
            "fx": float(self.fx), "fy": float(self.fy), "cx": float(self.cx), "cy": float(self.cy),
            "dist": [float(v) for v in self.dist],
            "rvec": [float(v) for v in self.rvec],
            "tvec": [float(v) for v in self.tvec],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CameraModel":
        return cls(
            size=(int(d["size"][0]), int(d["size"][1])),
            fx=float(d["fx"]), fy=float(d["fy"]), cx=float(d["cx"]), cy=float(d["cy"]),
            dist=tuple(float(v) for v in d["dist"]),  # type: ignore[arg-type]
            rvec=tuple(float(v) for v in d["rvec"]),  # type: ignore[arg-type]
            tvec=tuple(float(v) for v in d["tvec"]),  # type: ignore[arg-type]
        )

    def moved(self, drot_deg: tuple[float, float, float] = (0.0, 0.0, 0.0), dshift_mm: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> "CameraModel":
        """The same camera bumped: rotated by small angles (about its own x, y, z axes, degrees) and its
        centre shifted in the world frame (mm). Used for a camera bumped mid-clip."""
        dR = cv2.Rodrigues(np.radians(np.asarray(drot_deg, dtype=np.float64)))[0]
        R_new = dR @ self.R
        c_new = self.centre_world + np.asarray(dshift_mm, dtype=np.float64)
        rvec = cv2.Rodrigues(R_new)[0].ravel()
        tvec = -R_new @ c_new
        return CameraModel(self.size, self.fx, self.fy, self.cx, self.cy, self.dist,
                           tuple(float(v) for v in rvec), tuple(float(v) for v in tvec))  # type: ignore[arg-type]


def _look_at(centre_w: np.ndarray, target_w: np.ndarray, yaw_rad: float) -> np.ndarray:
    """World-to-camera rotation for a camera at ``centre_w`` looking at ``target_w``, its picture x axis
    as close as possible to the table direction at angle ``yaw_rad`` from the table's x axis."""
    z = target_w - centre_w
    z /= np.linalg.norm(z)
    a = np.array([math.cos(yaw_rad), math.sin(yaw_rad), 0.0])
    x = a - (a @ z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z])


def _extent_points(profile: TableProfile) -> np.ndarray:
    """Table points that must be in view: the outer corners of the rails (at cushion height) and the
    rails' mid points."""
    m = profile.rail_width_mm
    L, W, h = profile.length_mm, profile.width_mm, profile.cushion_nose_height_mm
    xs, ys = (-m, L / 2, L + m), (-m, W / 2, W + m)
    return np.array([[x, y, h] for x in xs for y in ys if not (x == L / 2 and y == W / 2)])


def mount_camera(
    profile: TableProfile,
    height_mm: float | None = None,
    tilt_deg: float | None = None,
    tilt_dir_deg: float | None = None,
    yaw_deg: float | None = None,
    k1: float | None = None,
    k2: float | None = None,
    resolution: tuple[int, int] = (1280, 720),
    margin: float = 0.04,
    rng: np.random.Generator | None = None,
) -> CameraModel:
    """A camera ``height_mm`` above the cloth, looking at the table's centre.

    ``tilt_deg`` tilts the optical axis off the vertical (the camera sits off-centre, towards
    ``tilt_dir_deg`` measured from the table's x axis, and looks back at the centre); ``yaw_deg``
    turns the picture about the axis. The focal length is the largest that keeps the whole table and
    its rails inside the picture with ``margin`` (a fraction of each half-size) to spare. ``k1``/``k2``
    are the radial distortion; ``k1`` is limited so that the distortion stays monotonic over the
    picture (OpenCV's model folds back beyond that, which no real lens does).

    An argument left as ``None`` takes its default (height 1500 mm, no tilt, no yaw, k1 = -0.1,
    k2 = 0) or, with ``rng`` given, is drawn at random: height 1.2-2.5 m, tilt 0-10 degrees in any
    direction, yaw +-3 degrees, k1 0 to -0.25, k2 -0.02 to 0.05 (but never enough to undo k1's barrel at
    the rails' corners), and a principal point up to 1 % off the picture's centre.
    """
    w, h = resolution
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0

    def pick(value: float | None, default: float, lo: float, hi: float) -> float:
        if value is not None:
            return float(value)
        return float(rng.uniform(lo, hi)) if rng is not None else default

    height_mm = pick(height_mm, 1500.0, 1200.0, 2500.0)
    tilt_deg = pick(tilt_deg, 0.0, 0.0, 10.0)
    tilt_dir_deg = pick(tilt_dir_deg, 0.0, 0.0, 360.0)
    yaw_deg = pick(yaw_deg, 0.0, -3.0, 3.0)
    k1 = pick(k1, -0.1, -0.25, 0.0)
    k2 = pick(k2, 0.0, -0.02, 0.05)
    if rng is not None:
        cx += float(rng.uniform(-0.01, 0.01)) * w
        cy += float(rng.uniform(-0.01, 0.01)) * h
    if not 300 <= height_mm <= 6000:
        raise ValueError(f"camera height {height_mm:g} mm is not a plausible mount (300-6000 mm)")
    if not 0 <= tilt_deg < 45:
        raise ValueError(f"camera tilt {tilt_deg:g} degrees must be between 0 and 45")
    target = np.array([profile.length_mm / 2, profile.width_mm / 2, 0.0])
    t = math.radians(tilt_deg)
    d = math.radians(tilt_dir_deg)
    centre = target + np.array([math.cos(d) * height_mm * math.tan(t), math.sin(d) * height_mm * math.tan(t), -height_mm])
    R = _look_at(centre, target, math.radians(yaw_deg))
    tvec = -R @ centre
    pts = table_to_world(_extent_points(profile))
    cam = pts @ R.T + tvec
    xn, yn = cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]
    # The picture's corners reach beyond the rails' corners: check the fold 25 % further out.
    r2_max = float(np.max(xn**2 + yn**2)) * 1.25**2
    # d(r * (1 + k1 r^2 + k2 r^4))/dr = 1 + 3 k1 r^2 + 5 k2 r^4 must stay well above 0 over the picture.
    slope = 1 + 3 * k1 * r2_max + 5 * k2 * r2_max**2
    if slope < 0.5:
        k1_new = (0.5 - 1 - 5 * k2 * r2_max**2) / (3 * r2_max)
        log.info("k1 %.3f folds the picture over at r=%.2f; limited to %.3f", k1, math.sqrt(r2_max), k1_new)
        k1 = min(0.0, k1_new)
    if rng is not None and k1 < 0:
        # a drawn k2 must not turn the barrel lens into a pincushion at the rails' corners
        k2 = min(k2, -k1 / (r2_max / 1.25**2))
    dist = (float(k1), float(k2), 0.0, 0.0, 0.0)
    # Largest focal length that keeps every extent point inside the picture with the margin.
    rad = 1 + k1 * (xn**2 + yn**2) + k2 * (xn**2 + yn**2) ** 2
    xd, yd = xn * rad, yn * rad
    fx_lim = np.where(xd > 0, (w - 1 - cx) / np.maximum(xd, 1e-9), cx / np.maximum(-xd, 1e-9))
    fy_lim = np.where(yd > 0, (h - 1 - cy) / np.maximum(yd, 1e-9), cy / np.maximum(-yd, 1e-9))
    f = float(min(fx_lim.min(), fy_lim.min())) * (1 - margin)
    rvec = cv2.Rodrigues(R)[0].ravel()
    return CameraModel((int(w), int(h)), f, f, float(cx), float(cy), dist,
                       tuple(float(v) for v in rvec), tuple(float(v) for v in tvec))  # type: ignore[arg-type]
