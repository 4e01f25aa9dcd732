"""Matching tracks to detections: a pure function over a cost matrix (SORT's shape, scipy's solver)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["Association", "associate"]


@dataclass(frozen=True, slots=True, eq=False)
class Association:
    """The three-way result: ``matches`` (k, 2) rows of (track, detection); the rest unmatched."""

    matches: np.ndarray  # (k, 2) int
    unmatched_tracks: np.ndarray  # (m,) int, ascending
    unmatched_detections: np.ndarray  # (d,) int, ascending


def associate(cost: np.ndarray, max_cost: float | np.ndarray) -> Association:
    """Match tracks (rows) to detections (columns) at the least total cost; a pair costlier than
    ``max_cost`` (a scalar, or one value per track) stays unmatched, as does anything infinite."""
    cost = np.asarray(cost, dtype=np.float64)
    n, m = cost.shape
    if n == 0 or m == 0:
        return Association(np.zeros((0, 2), dtype=int), np.arange(n), np.arange(m))
    limit = np.broadcast_to(np.asarray(max_cost, dtype=np.float64).reshape(-1, 1) if np.ndim(max_cost) else max_cost, (n, m))
    allowed = np.isfinite(cost) & (cost <= limit)
    # forbidden pairs cost more than any set of allowed ones, so the solver never prefers them
    big = (np.abs(cost[allowed]).sum() + 1.0) * 2.0 if allowed.any() else 1.0
    rows, cols = linear_sum_assignment(np.where(allowed, cost, big))
    keep = allowed[rows, cols]
    rows, cols = rows[keep], cols[keep]
    left_rows, left_cols = np.ones(n, bool), np.ones(m, bool)
    left_rows[rows], left_cols[cols] = False, False
    return Association(
        np.stack([rows, cols], axis=1).astype(int) if len(rows) else np.zeros((0, 2), dtype=int),
        np.flatnonzero(left_rows),
        np.flatnonzero(left_cols),
    )
