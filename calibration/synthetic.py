"""Synthetic overhead views of a table with an exactly known camera, for calibration's self-tests and
benchmark (issue 4, "done when").

The table is drawn flat (cloth, cushion tops, rails, floor, pockets or bed holes and pins, a few
balls) on a millimetre canvas, then seen through a pinhole camera with radial distortion: every
image pixel is undistorted (``cv2.undistortPoints``), its ray is met with the cloth plane, and the
canvas is sampled there (``cv2.remap``). The true camera is returned with the image, so a test can
project any table point (``cv2.projectPoints``) and compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.table import TableProfile

__all__ = ["SyntheticCamera", "SyntheticView", "mount", "render_view"]

CUSHION_MM = 45.0  # cushion width from the nose to the rail (cushion top seen from above)


@dataclass(frozen=True, slots=True, eq=False)
class SyntheticCamera:
    image_size: tuple[int, int]  # (width, height)
    camera_matrix: np.ndarray  # (3, 3)
    dist_coeffs: np.ndarray  # (5,)
    rvec: np.ndarray  # (3,) table frame -> camera
    tvec: np.ndarray  # (3,)

    @property
    def centre_xyh_mm(self) -> np.ndarray:
        r, _ = cv2.Rodrigues(self.rvec)
        c = -r.T @ self.tvec
        return np.array([c[0], c[1], -c[2]])

    def project(self, xy_mm: np.ndarray, h_mm: float = 0.0) -> np.ndarray:
        """Table points (N, 2) at ``h_mm`` above the cloth -> image pixels (N, 2)."""
        p = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        obj = np.c_[p, np.full(len(p), -h_mm)]  # z points into the table
        out, _ = cv2.projectPoints(obj, self.rvec, self.tvec, self.camera_matrix, self.dist_coeffs)
        return out.reshape(-1, 2)


@dataclass(frozen=True, slots=True, eq=False)
class SyntheticView:
    image: np.ndarray  # (H, W, 3) uint8 BGR
    camera: SyntheticCamera
    profile: TableProfile


def mount(profile: TableProfile, image_size: tuple[int, int] = (1280, 720), height_mm: float = 1600.0,
          tilt_deg: float = 0.0, tilt_dir_deg: float = 0.0, yaw_deg: float = 0.0, k1: float = 0.0,
          fill: float = 0.88, offset_mm: tuple[float, float] = (0.0, 0.0)) -> SyntheticCamera:
    """A camera ``height_mm`` above the table centre (shifted by ``offset_mm``), looking down, tilted
    by ``tilt_deg`` towards ``tilt_dir_deg`` and turned by ``yaw_deg``, with a focal length that makes
    the table and rails fill ``fill`` of the image width."""
    w, h = image_size
    span_mm = profile.length_mm + 2 * (profile.rail_width_mm + CUSHION_MM)
    span_h = profile.width_mm + 2 * (profile.rail_width_mm + CUSHION_MM)
    f = min(fill * w / span_mm, fill * h / span_h) * height_mm
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    a = math.radians(tilt_dir_deg)
    axis = np.array([math.cos(a), math.sin(a), 0.0]) * math.radians(tilt_deg)
    r_tilt, _ = cv2.Rodrigues(axis)
    r_yaw, _ = cv2.Rodrigues(np.array([0.0, 0.0, math.radians(yaw_deg)]))
    r = r_tilt @ r_yaw
    # Keep the table centre on the optical axis whatever the tilt: place the camera along the axis.
    centre = np.array([profile.length_mm / 2 + offset_mm[0], profile.width_mm / 2 + offset_mm[1], 0.0])
    c = centre - r.T @ np.array([0.0, 0.0, 1.0]) * height_mm
    tvec = -r @ c
    rvec, _ = cv2.Rodrigues(r)
    return SyntheticCamera((w, h), k, np.array([k1, 0.0, 0.0, 0.0, 0.0]), rvec.ravel(), tvec.ravel())


def _canvas(profile: TableProfile, rng: np.random.Generator, px_per_mm: float, margin_mm: float,
            cloth_bgr: tuple[int, int, int], n_balls: int) -> np.ndarray:
    L, W = profile.length_mm, profile.width_mm
    cw, rw = CUSHION_MM, profile.rail_width_mm
    width = int((L + 2 * margin_mm) * px_per_mm)
    height = int((W + 2 * margin_mm) * px_per_mm)

    def P(x: float, y: float) -> tuple[int, int]:
        return (int(round((x + margin_mm) * px_per_mm * 16)), int(round((y + margin_mm) * px_per_mm * 16)))

    def rect(x0, y0, x1, y1, colour):
        cv2.rectangle(img, P(x0, y0), P(x1, y1), colour, -1, cv2.LINE_AA, 4)

    def circle(xy, r_mm, colour):
        cv2.circle(img, P(*xy), int(r_mm * px_per_mm * 16), colour, -1, cv2.LINE_AA, 4)

    floor = tuple(int(v) for v in rng.integers(120, 200, 3))
    img = np.empty((height, width, 3), np.uint8)
    img[:] = floor
    wood = (int(rng.integers(20, 50)), int(rng.integers(40, 70)), int(rng.integers(70, 120)))
    rect(-cw - rw, -cw - rw, L + cw + rw, W + cw + rw, wood)
    top = tuple(int(min(255, v * 1.18 + 8)) for v in cloth_bgr)
    rect(-cw, -cw, L + cw, W + cw, top)
    face = tuple(int(v * 0.55) for v in cloth_bgr)
    rect(-6, -6, L + 6, W + 6, face)  # the cushion nose face, seen edge-on from above
    rect(0, 0, L, W, cloth_bgr)
    for pk in profile.pockets:  # the opening between the jaws, then the drop
        (ax, ay), (bx, by) = pk.jaws_mm
        mouth = np.array([[ax, ay], [bx, by]], float)
        out = np.array([pk.xy_mm[0], pk.xy_mm[1]]) * 2 - mouth.mean(axis=0)
        poly = np.array([P(*mouth[0]), P(*mouth[1]), P(*(out + (mouth[1] - mouth.mean(0)))),
                         P(*(out + (mouth[0] - mouth.mean(0))))], np.int32)
        cv2.fillConvexPoly(img, poly, (12, 12, 12), cv2.LINE_AA, 4)
        circle(pk.xy_mm, pk.radius_mm, (8, 8, 8))
    for hole in profile.holes:
        circle(hole.xy_mm, hole.radius_mm, (10, 10, 10))
    for pin in profile.pins:
        colour = {"black": (20, 20, 20), "red": (30, 30, 200), "white": (235, 235, 235)}.get(pin.colour, (200, 200, 200))
        circle(pin.xy_mm, pin.radius_mm, colour)
    r = profile.ball_radius_mm
    for _ in range(n_balls):
        xy = (float(rng.uniform(r, L - r)), float(rng.uniform(r, W - r)))
        colour = [(235, 235, 235), (30, 30, 200), (20, 200, 240), (20, 20, 20)][int(rng.integers(0, 4))]
        circle(xy, r, colour)
    noise = rng.normal(0.0, 4.0, img.shape[:2])[..., None]
    return np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)


def render_view(profile: TableProfile, camera: SyntheticCamera, seed: int = 0, light: float = 1.0,
                n_balls: int = 6, cloth_bgr: tuple[int, int, int] | None = None) -> SyntheticView:
    """Render the table as ``camera`` sees it. ``light`` scales the brightness (0.5 dim to 1.4 bright);
    a random gradient and vignetting vary it over the picture."""
    rng = np.random.default_rng(seed)
    w, h = camera.image_size
    r, _ = cv2.Rodrigues(camera.rvec)
    # Resolution of the canvas: a little finer than the image at the table.
    mm_per_px = camera.centre_xyh_mm[2] / camera.camera_matrix[0, 0]
    px_per_mm = min(2.5, 1.6 / mm_per_px)
    margin = profile.rail_width_mm + CUSHION_MM + 400.0
    if cloth_bgr is None:
        base = np.array(profile.cloth_rgb[::-1], float)
        cloth_bgr = tuple(int(v) for v in np.clip(base * rng.uniform(0.85, 1.15, 3), 0, 255))
    canvas = _canvas(profile, rng, px_per_mm, margin, cloth_bgr, n_balls)
    # The pixel -> canvas map is smooth: compute it on a grid every 4 px and interpolate.
    step = 4
    gu, gv = np.meshgrid(np.arange(0, w + step, step, dtype=np.float64), np.arange(0, h + step, step, dtype=np.float64))
    pix = np.stack([gu.ravel(), gv.ravel()], axis=1).reshape(-1, 1, 2)
    norm = cv2.undistortPoints(pix, camera.camera_matrix, camera.dist_coeffs, None, None, None,
                               (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-10)).reshape(-1, 2)
    plane = np.c_[r[:, 0], r[:, 1], camera.tvec]  # (x, y, 1) on the cloth -> camera coordinates
    xyw = np.c_[norm, np.ones(len(norm))] @ np.linalg.inv(plane).T
    xy = xyw[:, :2] / xyw[:, 2:3]
    gx_map = ((xy[:, 0] + margin) * px_per_mm).reshape(gu.shape)
    gy_map = ((xy[:, 1] + margin) * px_per_mm).reshape(gu.shape)
    us, vs = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    coords = [(vs / step).astype(np.float32), (us / step).astype(np.float32)]
    mx = cv2.remap(gx_map.astype(np.float32), coords[1], coords[0], cv2.INTER_CUBIC)
    my = cv2.remap(gy_map.astype(np.float32), coords[1], coords[0], cv2.INTER_CUBIC)
    img = cv2.remap(canvas, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(90, 90, 90))
    gx, gy = rng.uniform(-0.25, 0.25, 2)
    ramp = 1.0 + gx * (us / w - 0.5) + gy * (vs / h - 0.5)
    vign = 1.0 - 0.25 * (((us - w / 2) / w) ** 2 + ((vs - h / 2) / h) ** 2) * 2
    tint = rng.uniform(0.92, 1.08, 3)
    out = img.astype(np.float32) * (light * ramp * vign)[..., None] * tint
    out += rng.normal(0.0, 2.0, out.shape)
    return SyntheticView(np.clip(out, 0, 255).astype(np.uint8), camera, profile)
