"""Straight-line geometry the referee needs: is there a clear path for a ball (ficha 4.4.1 and 4.4.2,
brasileira rule 12's snooker, ficha 4.3 covered ball), frozen balls (ficha 4.5), re-spotting.

Pure NumPy; positions are table millimetres (see :mod:`calibration.table`). A *path* is the sweep of
a ball of radius ``r`` moving in a straight line: it is blocked by any other ball whose centre comes
closer than ``2 r`` to the moving centre's segment.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

from calibration.table import TableProfile

XY = tuple[float, float]


def segment_distances(a: XY, b: XY, points: np.ndarray) -> np.ndarray:
    """Distance from each of ``points`` (n, 2) to the segment a-b; returns (n,)."""
    p = np.asarray(points, dtype=float).reshape(-1, 2)
    a_ = np.asarray(a, dtype=float)
    ab = np.asarray(b, dtype=float) - a_
    denom = float(ab @ ab)
    if denom == 0.0:
        return np.linalg.norm(p - a_, axis=1)
    t = np.clip(((p - a_) @ ab) / denom, 0.0, 1.0)
    return np.linalg.norm(p - (a_ + t[:, None] * ab), axis=1)


def path_clear(start: XY, end: XY, obstacles: Iterable[XY], radius_mm: float, slack_mm: float = 0.0) -> bool:
    """Whether a ball of ``radius_mm`` can roll from ``start`` to ``end`` (centres) without touching
    any obstacle ball (centres ``obstacles``). ``slack_mm`` widens the corridor (positive) or narrows it."""
    obs = np.asarray(list(obstacles), dtype=float).reshape(-1, 2)
    if len(obs) == 0:
        return True
    return bool(np.all(segment_distances(start, end, obs) >= 2 * radius_mm + slack_mm))


def contact_points(target: XY, radius_mm: float, n: int = 72) -> np.ndarray:
    """Cue-ball centre positions touching ``target`` all round: (n, 2)."""
    ang = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.asarray(target, dtype=float) + 2 * radius_mm * np.stack([np.cos(ang), np.sin(ang)], axis=1)


def can_hit_directly(cue: XY, target: XY, others: Iterable[XY], radius_mm: float, n: int = 144) -> bool:
    """Whether the cue ball can reach any part of ``target`` in a straight line (no cushion first):
    some contact position around the target is reachable with the path clear of ``others``."""
    obs = [o for o in others]
    for c in contact_points(target, radius_mm, n):
        # the contact must be approached from the cue ball's side: the cue ball's centre may not pass
        # through the target itself on the way
        if segment_distances(cue, tuple(c), np.asarray([target]))[0] < 2 * radius_mm - 1e-6:
            continue
        if path_clear(cue, tuple(c), obs, radius_mm):
            return True
    return False


def can_reach_cushion(cue: XY, others: Iterable[XY], profile: TableProfile, n: int = 360) -> bool:
    """Whether the cue ball can roll straight to some cushion without touching another ball."""
    r = profile.ball_radius_mm
    obs = list(others)
    L, W = profile.length_mm, profile.width_mm
    for ang in np.linspace(0.0, 2 * math.pi, n, endpoint=False):
        dx, dy = math.cos(ang), math.sin(ang)
        ts = []
        if dx > 1e-9:
            ts.append((L - r - cue[0]) / dx)
        if dx < -1e-9:
            ts.append((r - cue[0]) / dx)
        if dy > 1e-9:
            ts.append((W - r - cue[1]) / dy)
        if dy < -1e-9:
            ts.append((r - cue[1]) / dy)
        t = min(t for t in ts if t >= 0) if any(t >= 0 for t in ts) else 0.0
        end = (cue[0] + dx * t, cue[1] + dy * t)
        if path_clear(cue, end, obs, r):
            return True
    return False


def frozen_to(ball: XY, positions: Mapping[str, XY], radius_mm: float, gap_mm: float = 1.0, exclude: Sequence[str] = ()) -> tuple[str, ...]:
    """Ids of the balls whose gap to ``ball`` is under ``gap_mm`` (ficha 4.5: touching, "frozen")."""
    out = []
    for bid, xy in positions.items():
        if bid in exclude:
            continue
        gap = math.dist(ball, xy) - 2 * radius_mm
        if gap < gap_mm:
            out.append(bid)
    return tuple(out)


def spot_free(spot: XY, positions: Mapping[str, XY], radius_mm: float, exclude: Sequence[str] = ()) -> bool:
    """Whether a ball can be placed on ``spot`` without touching another ball."""
    return all(math.dist(spot, xy) >= 2 * radius_mm for bid, xy in positions.items() if bid not in exclude)
