"""The plane-to-plane map between (undistorted) image pixels and table millimetres.

:class:`Homography` follows scikit-image's transform style: it is built from correspondences, it is
called on an ``(N, 2)`` array and returns an ``(N, 2)`` array, and :meth:`Homography.inverse` maps
the other way::

    h = Homography.from_correspondences(corners_px, corners_mm)   # raises CalibrationError
    xy_mm = h(xy_px)                                               # (N, 2) -> (N, 2)
    xy_px = h.inverse(xy_mm)

Pixels are ``(col, row)`` with the origin at the top-left of the image; millimetres are in the
table frame of :mod:`calibration.table`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["CalibrationError", "Homography", "as_points"]


class CalibrationError(ValueError):
    """Calibration could not be done or is not good enough.

    ``reason`` says what was seen, ``hint`` what to do about it; ``str(error)`` joins both.
    """

    def __init__(self, reason: str, hint: str = ""):
        self.reason, self.hint = reason, hint
        super().__init__(f"{reason}. {hint}" if hint else reason)


def as_points(points: object, name: str = "points") -> np.ndarray:
    """``points`` as a float64 ``(N, 2)`` array; a single ``(2,)`` point becomes ``(1, 2)``."""
    a = np.asarray(points, dtype=np.float64)
    if a.ndim == 1 and a.shape[0] == 2:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{name} must be an (N, 2) array of (x, y) pairs, got shape {a.shape}")
    return a


def _apply(matrix: np.ndarray, pts: np.ndarray) -> np.ndarray:
    if len(pts) == 0:
        return np.empty((0, 2))
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), matrix).reshape(-1, 2)


def _cross(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _degeneracy(pts: np.ndarray, name: str, scale: float) -> str | None:
    """Why a set of points cannot anchor a homography (None when it can)."""
    if len(pts) < 4:
        return f"{len(pts)} {name} given; a homography needs at least 4"
    if not np.all(np.isfinite(pts)):
        return f"the {name} contain NaN or infinite values"
    centred = pts - pts.mean(axis=0)
    sv = np.linalg.svd(centred, compute_uv=False)
    if sv[1] <= 1e-6 * max(scale, 1.0) * np.sqrt(len(pts)):
        return f"the {name} all lie on one line"
    # Four points with three on one line (or two equal) still leave the map undetermined.
    if len(pts) == 4:
        for i in range(4):
            tri = np.delete(pts, i, axis=0)
            area = abs(_cross(tri[1] - tri[0], tri[2] - tri[0])) / 2
            if area <= 1e-4 * scale * scale:
                return f"three of the four {name} lie on one line (or two coincide)"
    return None


@dataclass(frozen=True, slots=True, eq=False)
class Homography:
    """A projective map of the plane. ``matrix`` (3, 3) maps source points to destination points
    (here: undistorted image pixels to table millimetres)."""

    matrix: np.ndarray  # (3, 3) float64, normalised so that matrix[2, 2] == 1

    def __post_init__(self) -> None:
        m = np.asarray(self.matrix, dtype=np.float64)
        if m.shape != (3, 3) or not np.all(np.isfinite(m)):
            raise CalibrationError(f"a homography must be a finite 3x3 matrix, got shape {m.shape}")
        det = np.linalg.det(m)
        if abs(det) < 1e-15 * max(1.0, np.abs(m).max() ** 3) or abs(m[2, 2]) < 1e-15:
            raise CalibrationError("the homography matrix is singular", "recalibrate from a clear view of the table")
        object.__setattr__(self, "matrix", m / m[2, 2])

    @classmethod
    def from_correspondences(cls, src: object, dst: object, ransac_threshold: float | None = None) -> "Homography":
        """The homography taking ``src`` (N, 2) onto ``dst`` (N, 2), N >= 4, by cv2.findHomography:
        least squares, or RANSAC when ``ransac_threshold`` (a reprojection distance in destination
        units) is given.

        Raises :class:`CalibrationError` when the points are too few, non-finite, collinear, or the
        fit fails."""
        s, d = as_points(src, "source points"), as_points(dst, "destination points")
        if len(s) != len(d):
            raise CalibrationError(f"{len(s)} source points but {len(d)} destination points",
                                   "give one table point for each image point")
        for pts, name in ((s, "image points"), (d, "table points")):
            scale = float(np.ptp(pts, axis=0).max()) if len(pts) and np.all(np.isfinite(pts)) else 1.0
            why = _degeneracy(pts, name, scale)
            if why:
                raise CalibrationError(why, "give four or more points spread over the table, no three on one line")
        method = cv2.RANSAC if ransac_threshold is not None else 0
        m, _ = cv2.findHomography(s.reshape(-1, 1, 2), d.reshape(-1, 1, 2), method,
                                  ransac_threshold if ransac_threshold is not None else 3.0)
        if m is None:
            raise CalibrationError("OpenCV found no homography for these points",
                                   "check that the points are given in the same order on both sides")
        h = cls(m)
        # Every source point must map to a finite point in front of the "horizon" line.
        w = (np.c_[s, np.ones(len(s))] @ h.matrix.T)[:, 2]
        if np.any(np.abs(w) < 1e-9) or (np.any(w > 0) and np.any(w < 0)):
            raise CalibrationError("the points do not form a consistent perspective view (some map through infinity)",
                                   "check the order of the points: corners go TL, TR, BR, BL")
        return h

    def __call__(self, points: object) -> np.ndarray:
        """Map (N, 2) source points to (N, 2) destination points."""
        return _apply(self.matrix, as_points(points))

    def inverse(self, points: object) -> np.ndarray:
        """Map (N, 2) destination points back to (N, 2) source points."""
        return _apply(self.inverse_matrix, as_points(points))

    @property
    def inverse_matrix(self) -> np.ndarray:
        inv = np.linalg.inv(self.matrix)
        return inv / inv[2, 2]

    def residuals(self, src: object, dst: object) -> np.ndarray:
        """Distances (N,) between ``self(src)`` and ``dst``, in destination units."""
        return np.linalg.norm(self(src) - as_points(dst), axis=1)

    def preserves_orientation(self, at: object) -> bool:
        """Whether the map keeps clockwise as clockwise near the point ``at`` (a mirrored map means
        the correspondences were given in the wrong order)."""
        p = as_points(at)[0]
        e = 1e-3 * max(1.0, float(np.abs(p).max()))
        q = self(np.array([p, p + (e, 0.0), p + (0.0, e)]))
        return _cross(q[1] - q[0], q[2] - q[0]) > 0
