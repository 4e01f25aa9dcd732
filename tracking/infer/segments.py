"""A ball's path during a shot as pieces of free motion, split where something changed its velocity.

Between two events (a strike, a contact, a cushion) a ball on the cloth moves with a nearly constant
acceleration: friction while it slides, a little rolling resistance while it rolls; so each axis is
a quadratic in time. :func:`segment` finds the split points that explain the measurements best with
the fewest pieces: an optimal partition by dynamic programming (each piece's cost is its weighted
least-squares residual, plus a penalty per piece, the Bayesian information criterion's), in
O(m^2) NumPy for m measurements. Times between two frames where a velocity changed are then found
by intersecting the neighbouring pieces, not snapped to a frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Piece", "segment", "fit_piece"]


@dataclass(frozen=True, slots=True, eq=False)
class Piece:
    """One piece of free motion: samples ``i0..i1`` (inclusive) of the ball's measurements, and
    ``x(t) = c[0] + c[1] (t - t0) + c[2] (t - t0)^2`` per axis (``cx``, ``cy``)."""

    i0: int
    i1: int
    t0: float  # the time origin of the polynomials (the first sample's time)
    t_first: float
    t_last: float
    cx: np.ndarray  # (3,)
    cy: np.ndarray  # (3,)
    rms: float  # weighted residual per sample, in units of the noise

    def at(self, t: float | np.ndarray) -> np.ndarray:
        """Position(s) at ``t``: (2,) or (k, 2)."""
        u = np.asarray(t, dtype=np.float64) - self.t0
        return np.stack([self.cx[0] + self.cx[1] * u + self.cx[2] * u * u, self.cy[0] + self.cy[1] * u + self.cy[2] * u * u], axis=-1)

    def velocity(self, t: float | np.ndarray) -> np.ndarray:
        u = np.asarray(t, dtype=np.float64) - self.t0
        return np.stack([self.cx[1] + 2 * self.cx[2] * u, self.cy[1] + 2 * self.cy[2] * u], axis=-1)

    @property
    def n(self) -> int:
        return self.i1 - self.i0 + 1


def fit_piece(t: np.ndarray, z: np.ndarray, w: np.ndarray, i0: int, i1: int, degree: int = 2) -> Piece:
    """Weighted least-squares polynomial (degree 2, or less for few samples) of samples ``i0..i1``."""
    tt, zz, ww = t[i0:i1 + 1], z[i0:i1 + 1], w[i0:i1 + 1]
    deg = min(degree, len(tt) - 1)
    t0 = float(tt[0])
    u = tt - t0
    A = np.stack([u ** p for p in range(deg + 1)], axis=1) * np.sqrt(ww)[:, None]
    bx, by = zz[:, 0] * np.sqrt(ww), zz[:, 1] * np.sqrt(ww)
    cx = np.linalg.lstsq(A, bx, rcond=None)[0]
    cy = np.linalg.lstsq(A, by, rcond=None)[0]
    res = np.sum((A @ cx - bx) ** 2) + np.sum((A @ cy - by) ** 2)
    dof = max(2 * (len(tt) - deg - 1), 1)
    pad = np.zeros(3)
    return Piece(i0, i1, t0, float(tt[0]), float(tt[-1]), np.concatenate([cx, pad])[:3], np.concatenate([cy, pad])[:3],
                 math.sqrt(res / dof))


def segment(t: np.ndarray, z: np.ndarray, sigma: np.ndarray, penalty: float, max_span_s: float = 4.0,
            max_accel_mm_s2: float = math.inf) -> list[Piece]:
    """Split measurements ``z`` (m, 2) at times ``t`` (m,) with noise ``sigma`` (m,) into pieces of
    quadratic motion; ``penalty`` is the cost of one more piece in units of sigma^2 (the residual a
    split must remove to be believed). Pieces have at least two samples; none spans more than
    ``max_span_s`` (a cap on the work, not on the motion: a long roll comes out in two pieces).
    A piece's acceleration may exceed ``max_accel_mm_s2`` by no more than four times its standard
    error: a parabola through three samples either side of a bounce fits them exactly, but no ball
    rolling freely turns that hard."""
    m = len(t)
    if m == 0:
        return []
    if m <= 2:
        return [fit_piece(t, z, 1.0 / sigma ** 2, 0, m - 1)]
    w = 1.0 / sigma ** 2
    best = np.full(m + 1, np.inf)  # best[b + 1]: the cost of samples 0..b
    best[0] = 0.0
    start = np.zeros(m, dtype=int)
    scale = 0.1  # seconds: keeps the powers of the local time near 1
    for b in range(1, m):
        a_lo = int(np.searchsorted(t, t[b] - max_span_s))
        a_lo = min(a_lo, b - 1)
        idx = slice(a_lo, b + 1)
        u = (t[idx] - t[b]) / scale
        zz = z[idx] - z[b]
        ww = w[idx]
        # moments summed from each start a to the end b (reverse cumulative sums)
        P = np.stack([ww * u ** p for p in range(5)], axis=1)[::-1].cumsum(axis=0)[::-1]
        Tx = np.stack([ww * zz[:, 0] * u ** p for p in range(3)], axis=1)[::-1].cumsum(axis=0)[::-1]
        Ty = np.stack([ww * zz[:, 1] * u ** p for p in range(3)], axis=1)[::-1].cumsum(axis=0)[::-1]
        Q = (ww * (zz ** 2).sum(axis=1))[::-1].cumsum()[::-1]
        n = b - a_lo + 1
        sse = np.zeros(n)
        # starts with at least three samples: a quadratic fit; two samples fit exactly (a line)
        k3 = n - 2
        if k3 > 0:
            M = np.empty((k3, 3, 3))
            for r in range(3):
                for c in range(3):
                    M[:, r, c] = P[:k3, r + c]
            M[:, [0, 1, 2], [0, 1, 2]] += 1e-12
            # one factorisation for the three right-hand sides: x, y and the unit vector of the acceleration
            rhs = np.zeros((k3, 3, 3))
            rhs[:, :, 0], rhs[:, :, 1], rhs[:, 2, 2] = Tx[:k3], Ty[:k3], 1.0
            sol = np.linalg.solve(M, rhs)
            rx, ry = sol[:, :, 0], sol[:, :, 1]
            sse[:k3] = Q[:k3] - (rx * Tx[:k3]).sum(axis=1) - (ry * Ty[:k3]).sum(axis=1)
            if math.isfinite(max_accel_mm_s2):
                accel = 2.0 * np.hypot(rx[:, 2], ry[:, 2]) / scale ** 2
                err = 2.0 * np.sqrt(np.maximum(sol[:, 2, 2], 0.0)) / scale ** 2
                sse[:k3][accel > max_accel_mm_s2 + 4.0 * err] = np.inf
        sse = np.maximum(sse, 0.0)
        # pieces of two samples: allowed, exact; their cost is only the penalty
        total = best[a_lo:b + 1][:n - 1] + sse[:n - 1] + penalty
        j = int(np.argmin(total))
        best[b + 1] = total[j]
        start[b] = a_lo + j
    # walk back the partition
    cuts = []
    b = m - 1
    while b >= 0:
        a = start[b]
        cuts.append((a, b))
        b = a - 1
    cuts.reverse()
    return [fit_piece(t, z, w, a, b) for a, b in cuts]
