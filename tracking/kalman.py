"""The ball filter: a constant-velocity Kalman filter on the table plane, F and H written out.

State ``[x, vx, y, vy]`` in mm and mm/s; the camera measures ``[x, y]``. filterpy's
``kinematic_kf(dim=2, order=1, dim_z=2)`` builds a wrong H (it measures x and vx), so H is written
here by hand, and F and Q are built for each step's real time step (``predict(F=..., Q=...)``):
frame times come from the video's timestamps, so dropped frames simply make a longer step.

The process noise is a piecewise-constant white acceleration: a ball at rest barely moves (its
position averages down the measurement noise), a rolling ball decelerates by about 0.1 g and a
sliding one by 0.2 g, so the tracker picks the acceleration by the ball's mode.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from filterpy.common import Q_discrete_white_noise
from filterpy.kalman import KalmanFilter
from scipy.linalg import block_diag

__all__ = ["H", "transition", "process_noise", "ball_filter", "reflect"]

H = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])  # we measure position: x and y


@lru_cache(maxsize=64)
def transition(dt_s: float) -> np.ndarray:
    """F for a step of ``dt_s`` seconds: x += vx dt, y += vy dt (read-only; cached per step)."""
    F = block_diag(*[np.array([[1.0, dt_s], [0.0, 1.0]])] * 2)
    F.setflags(write=False)
    return F


@lru_cache(maxsize=64)
def _unit_noise(dt_s: float) -> np.ndarray:
    Q = Q_discrete_white_noise(dim=2, dt=dt_s, var=1.0, block_size=2)
    Q.setflags(write=False)
    return Q


def process_noise(dt_s: float, accel_mm_s2: float) -> np.ndarray:
    """Q of a white acceleration of standard deviation ``accel_mm_s2`` held over the step."""
    return _unit_noise(dt_s) * accel_mm_s2 ** 2


def ball_filter(xy_mm: np.ndarray, sigma_mm: float, v_mm_s: np.ndarray | None = None, sigma_v_mm_s: float = 50.0) -> KalmanFilter:
    """A filter started at ``xy_mm`` (measured with noise ``sigma_mm``), moving at ``v_mm_s`` (default
    at rest) known to ``sigma_v_mm_s``."""
    kf = KalmanFilter(dim_x=4, dim_z=2)
    v = np.zeros(2) if v_mm_s is None else np.asarray(v_mm_s, dtype=np.float64)
    kf.x = np.array([xy_mm[0], v[0], xy_mm[1], v[1]], dtype=np.float64)
    kf.H = H.copy()
    kf.R = np.eye(2) * sigma_mm ** 2
    kf.P = np.diag([sigma_mm ** 2, sigma_v_mm_s ** 2, sigma_mm ** 2, sigma_v_mm_s ** 2])
    return kf


def reflect(kf: KalmanFilter, axis: int, line_mm: float, restitution: float) -> None:
    """Mirror the filter's position in the line ``coordinate[axis] = line_mm`` and reverse (and damp by
    ``restitution``) the velocity across it: the prediction of a ball that reached a cushion.

    The covariance goes through the same linear map, so the gate keeps its shape."""
    i = 2 * axis
    J = np.eye(4)
    J[i, i] = -1.0
    J[i + 1, i + 1] = -restitution
    offset = np.zeros(4)
    offset[i] = 2.0 * line_mm
    kf.x = J @ kf.x + offset
    kf.P = J @ kf.P @ J.T
