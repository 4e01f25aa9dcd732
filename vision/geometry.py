"""What the calibration predicts about a ball's picture: where its silhouette lies and how large it is.

Built on :class:`calibration.camera.Calibration`'s public data only (its cloth-plane homography, the
camera centre above the table and the lens), :class:`TableView` is the full pinhole camera as one
3 x 4 matrix: a table point ``(x, y, h)`` (``h`` up from the cloth) is seen where the ray from the
camera centre ``C`` through it meets the cloth, ``p0 = C + (p - C) * C_h / (C_h - h)``, which in
homogeneous coordinates is linear::

    (x, y, h, 1) -> H^-1 @ [[C_h, 0, -C_x, 0], [0, C_h, -C_y, 0], [0, 0, -1, C_h]] @ (x, y, h, 1)

(``H^-1`` maps table mm on the cloth to undistorted pixels). A sphere's outline under a projective
camera is the conic whose dual is ``P Q* P^T`` (``Q*`` the sphere's dual quadric), so the outline of
a ball anywhere on or above the table is known exactly: its centre lies slightly outwards of the
projection of the ball's centre (by ``f tan(theta) (r / D)^2``, up to ~0.5 px near the corners of a
1080p picture), and its size is the radius a detector should fit there. The outline is sampled,
passed through the lens's distortion, and summarised as a centre and a mean radius in the picture,
and as its shape: off the camera's axis by ``theta`` a ball's outline is an ellipse stretched by about
``1 / cos(theta)`` along the line from the picture's centre (by a third at the edge of a low, wide
camera's picture), which an edge fit must expect (:meth:`TableView.shape_at_px`).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.numeric import clip
from calibration.table import TableProfile

__all__ = ["TableView"]

_OUTLINE_SAMPLES = 16  # points on a ball's outline: the mean of 16 is the ellipse's centre to ~1e-3 px
_OUTLINE_ANGLES = np.linspace(0.0, 2 * math.pi, _OUTLINE_SAMPLES, endpoint=False)
_OUTLINE_UNIT = np.stack([np.cos(_OUTLINE_ANGLES), np.sin(_OUTLINE_ANGLES)], -1)  # (S, 2)


def _mean_radius(pts: np.ndarray, sil: np.ndarray) -> np.ndarray:
    """The mean distance (N,) of outline points (N, S, 2) from their centres (N, 2)."""
    return np.linalg.norm(pts - sil[:, None, :], axis=2).mean(axis=1)


class TableView:
    """The camera of one calibration, as a detector needs it (all methods vectorised).

    ``radius_grid_px`` is the apparent radius of a resting ball over the picture on a coarse grid
    (``grid_step_px`` apart), for sizing search windows without a projection per pixel;
    ``shape_grid`` (gy, gx, 3) the outline's shape there (:meth:`shape_at_px`)."""

    def __init__(self, calibration: Calibration, profile: TableProfile, grid_step_px: int = 32):
        self.cal = calibration
        self.profile = profile
        self.r_mm = float(calibration.ball_radius_mm)
        cx, cy, ch = (float(v) for v in calibration.camera_xyh_mm)
        self.camera_xyh_mm = np.array([cx, cy, ch])
        lift = np.array([[ch, 0.0, -cx, 0.0], [0.0, ch, -cy, 0.0], [0.0, 0.0, -1.0, ch]])
        self.P = calibration.homography.inverse_matrix @ lift  # (x, y, h, 1) -> undistorted px, homogeneous
        self.size = calibration.image_size
        self._has_lens = bool(np.any(calibration.dist_coeffs))
        w, h = self.size
        self.grid_step_px = grid_step_px
        gx = np.arange(0, w + grid_step_px, grid_step_px, dtype=np.float64)
        gy = np.arange(0, h + grid_step_px, grid_step_px, dtype=np.float64)
        grid = np.stack(np.meshgrid(gx, gy), -1).reshape(-1, 2)
        xy = calibration.balls_to_table_mm(grid)
        pts, proj = self._outline_points(xy, 0.0)
        sil = pts.mean(axis=1)
        rad = _mean_radius(pts, sil)
        self.radius_grid_px = rad.reshape(len(gy), len(gx)).astype(np.float32)
        # how far a resting ball's outline centre lies outwards of the picture of its centre (float64: it
        # is subtracted from measured centres, a smooth fraction of a pixel read to ~1e-4 px off the grid)
        off = sil - proj
        off[~np.isfinite(off).all(axis=1)] = 0.0  # beyond the camera's view
        self._offset_grid = off.reshape(len(gy), len(gx), 2)
        # the outline's shape: points spread evenly in an ellipse's parameter have the covariance
        # C = V diag(a^2, b^2) V^T / 2 (any affine map, as the lens is over a ball's width, keeps that), so the
        # outline is (p - c)^T (2 C)^-1 (p - c) = 1; scaled by the mean radius squared, a circle's is I
        d = pts - sil[:, None, :]
        cov = np.einsum("nsi,nsj->nij", d, d) / _OUTLINE_SAMPLES
        shape = np.linalg.inv(2.0 * cov + 1e-12 * np.eye(2)) * (rad * rad)[:, None, None]
        shape[~np.isfinite(shape).all(axis=(1, 2))] = np.eye(2)  # beyond the camera's view: a circle
        self.shape_grid = np.stack([shape[:, 0, 0], shape[:, 0, 1], shape[:, 1, 1]], -1).reshape(len(gy), len(gx), 3).astype(np.float32)

    # ---- projection --------------------------------------------------------------------------
    def project(self, xyh_mm: np.ndarray) -> np.ndarray:
        """Table points (N, 3) ``(x, y, h up)`` -> picture pixels (N, 2), with the lens's distortion."""
        p = np.asarray(xyh_mm, dtype=np.float64).reshape(-1, 3)
        q = np.c_[p, np.ones(len(p))] @ self.P.T
        und = q[:, :2] / q[:, 2:3]
        return self.cal.distort_px(und) if self._has_lens else und

    def outline(self, xy_mm: np.ndarray, lift_mm: np.ndarray | float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For balls at ``xy_mm`` (N, 2) whose bottoms are ``lift_mm`` above the cloth: the centre of
        each one's outline in the picture (N, 2), the picture of its centre (N, 2) and the outline's
        mean radius (N,), all in distorted pixels."""
        pts, proj = self._outline_points(xy_mm, lift_mm)
        sil = pts.mean(axis=1)
        return sil, proj, _mean_radius(pts, sil)

    def _outline_points(self, xy_mm: np.ndarray, lift_mm: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """Points (N, S, 2) evenly spread in the parameter of each ball's outline ellipse, and the
        picture of its centre (N, 2), in distorted pixels."""
        xy = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        n = len(xy)
        if n == 0:
            return np.zeros((0, _OUTLINE_SAMPLES, 2)), np.zeros((0, 2))
        r = self.r_mm
        s = np.empty((n, 3))  # (N, 3) centres
        s[:, :2] = xy
        s[:, 2] = np.asarray(lift_mm, dtype=np.float64) + r
        # dual quadric of each sphere: [[s s^T - r^2 I, s], [s^T, 1]]
        q = np.zeros((n, 4, 4))
        q[:, :3, :3] = s[:, :, None] * s[:, None, :] - r * r * np.eye(3)
        q[:, :3, 3] = s
        q[:, 3, :3] = s
        q[:, 3, 3] = 1.0
        dual = self.P @ q @ self.P.T  # (N, 3, 3) dual conic of each outline
        centre = dual[:, :2, 2] / dual[:, 2:3, 2]
        conic = np.linalg.inv(dual)
        m = conic[:, :2, :2]
        k = np.einsum("ni,nij,nj->n", centre, m, centre) - conic[:, 2, 2]  # (p - c)^T M (p - c) = k on the outline
        lam, vec = np.linalg.eigh(m)
        axes = np.sqrt(np.maximum(k[:, None] / lam, 0.0))  # (N, 2) semi-axes along vec's columns
        pts = centre[:, None, :] + np.einsum("nij,nsj->nsi", vec, _OUTLINE_UNIT[None, :, :] * axes[:, None, :])
        proj = s @ self.P[:, :3].T + self.P[:, 3]
        proj = proj[:, :2] / proj[:, 2:3]
        if self._has_lens:  # through the lens, outlines and centres in one call (point by point: the same)
            both = self.cal.distort_px(np.concatenate([pts.reshape(-1, 2), proj]))
            pts, proj = both[:-n].reshape(n, _OUTLINE_SAMPLES, 2), both[-n:]
        return pts, proj

    def radius_at_px(self, xy_px: np.ndarray) -> np.ndarray:
        """Apparent radius (px) of a resting ball whose picture is centred at ``xy_px`` (N, 2),
        interpolated from the coarse grid."""
        return self._on_grid(self.radius_grid_px, xy_px)

    def shape_at_px(self, xy_px: np.ndarray) -> np.ndarray:
        """The shape (N, 2, 2) of a resting ball's outline centred at ``xy_px`` (N, 2): the symmetric
        ``A`` for which the outline lies ``R / sqrt(u^T A u)`` px from its centre in the direction
        ``u``, ``R`` the mean radius (:meth:`radius_at_px`); the identity for a circle. Interpolated
        from the coarse grid."""
        a = self._on_grid(self.shape_grid, xy_px)  # (N, 3): a00, a01, a11, read at once
        return a[:, [0, 1, 1, 2]].reshape(-1, 2, 2)

    def _on_grid(self, g: np.ndarray, xy_px: np.ndarray) -> np.ndarray:
        """Bilinear read of a coarse grid (gy, gx) or (gy, gx, C) (``grid_step_px`` apart) at picture
        points (N, 2): (N,) or (N, C)."""
        p = np.asarray(xy_px, dtype=np.float64).reshape(-1, 2) / self.grid_step_px
        x = clip(p[:, 0], 0, g.shape[1] - 1.001)
        y = clip(p[:, 1], 0, g.shape[0] - 1.001)
        x0, y0 = x.astype(int), y.astype(int)
        fx, fy = (v.reshape(v.shape + (1,) * (g.ndim - 2)) for v in (x - x0, y - y0))
        top = g[y0, x0] * (1 - fx) + g[y0, x0 + 1] * fx
        bottom = g[y0 + 1, x0] * (1 - fx) + g[y0 + 1, x0 + 1] * fx
        return top * (1 - fy) + bottom * fy

    def radius_map(self, size: tuple[int, int]) -> np.ndarray:
        """The resting ball's apparent radius (full-resolution px) over a picture scaled to ``size``."""
        return cv2.resize(self.radius_grid_px, size, interpolation=cv2.INTER_LINEAR)

    # ---- from pixels to the table --------------------------------------------------------------
    def balls_to_table(self, sil_px: np.ndarray, lift_mm: np.ndarray | float = 0.0, iterations: int = 1) -> np.ndarray:
        """Table positions (N, 2) of balls whose outlines are centred at ``sil_px`` (N, 2) and whose
        bottoms are ``lift_mm`` above the cloth: the outline's outward offset is removed. For a ball on
        the cloth it is read off a grid made once (bilinear: within ~1e-4 px of the exact offset); for
        one in the air it is found by fixed point (it changes by far less than a pixel over a ball's
        width, so that one step leaves an error of about 3e-5 mm, two about 1e-8 mm)."""
        sil = np.asarray(sil_px, dtype=np.float64).reshape(-1, 2)
        if len(sil) == 0:
            return np.zeros((0, 2))
        lift = np.broadcast_to(np.asarray(lift_mm, dtype=np.float64), (len(sil),))
        up = lift != 0.0
        xy = self._to_table(sil - np.where(up[:, None], 0.0, self._on_grid(self._offset_grid, sil)), lift)
        if up.any():
            for _ in range(iterations):
                s, c, _ = self.outline(xy[up], lift[up])
                xy[up] = self._to_table(sil[up] - (s - c), lift[up])
        return xy

    def _to_table(self, px: np.ndarray, lift: np.ndarray) -> np.ndarray:
        """Picture pixels (N, 2) -> table mm of points at heights ``r + lift`` (N,)."""
        p0 = self.cal.to_table_mm(px)
        c = self.camera_xyh_mm
        k = ((self.r_mm + lift) / c[2])[:, None]
        return p0 + (c[None, :2] - p0) * k

    def lift_from_radius(self, sil_px: np.ndarray, radius_px: np.ndarray) -> np.ndarray:
        """How far above the cloth (mm, the ball's bottom) balls seen centred at ``sil_px`` with
        outline radius ``radius_px`` are: the apparent size scales as one over the distance from the
        camera, so a ball seen r' / r times larger than at rest is that much nearer along its ray.
        ``radius_px`` may hold several radii per ball, (..., N): the lifts come out in its shape
        (the picture is mapped to the table once for all of them)."""
        sil = np.asarray(sil_px, dtype=np.float64).reshape(-1, 2)
        if len(sil) == 0:
            return np.zeros(np.shape(radius_px))
        rest = self.radius_at_px(sil)
        c = self.camera_xyh_mm
        xy_rest = self._to_table(sil, np.zeros(len(sil)))
        d_rest = np.sqrt(np.sum((xy_rest - c[:2]) ** 2, axis=1) + (c[2] - self.r_mm) ** 2)
        d = d_rest * rest / np.maximum(np.asarray(radius_px, dtype=np.float64), 1e-6)
        # the centre slides along its ray towards the camera: height goes as the distance
        centre_h = c[2] - (c[2] - self.r_mm) * d / d_rest
        return centre_h - self.r_mm
