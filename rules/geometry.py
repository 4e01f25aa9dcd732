"""Straight-line geometry the referee needs, once for every engine: can the cue ball reach this ball
or a cushion (ficha 4.4.1 and 4.4.2, Sinuca Brasileira's snooker in rules 12 and 13.4, ficha 4.3's
covered ball), frozen balls (ficha 4.5), re-spotting.

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


def clear_ahead(start: XY, ends: np.ndarray, obstacles: Iterable[XY], radius_mm: float, slack_mm: float = 0.0) -> np.ndarray:
    """For each straight roll of a ball of ``radius_mm`` from ``start`` to one of ``ends`` (k, 2):
    whether no obstacle ball (centres ``obstacles``) lies in its way; returns (k,) bool.

    Only a ball ahead of the start can block: one touching the moving ball from behind (tracking puts
    frozen balls a hair too close) does not stop it rolling away. ``slack_mm`` widens the corridor
    (positive) or narrows it."""
    start_ = np.asarray(start, dtype=float)
    ends_ = np.asarray(ends, dtype=float).reshape(-1, 2)
    obs = np.asarray(list(obstacles), dtype=float).reshape(-1, 2)
    if len(obs) == 0:
        return np.ones(len(ends_), dtype=bool)
    u = ends_ - start_  # (k, 2)
    proj = (u @ (obs - start_).T) / np.maximum(np.einsum("ij,ij->i", u, u), 1e-12)[:, None]  # (k, m)
    closest = start_ + np.clip(proj, 0.0, 1.0)[..., None] * u[:, None, :]  # (k, m, 2)
    dist = np.linalg.norm(closest - obs[None, :, :], axis=2)
    blocked = (proj > 0.0) & (dist < 2 * radius_mm + slack_mm - 1e-6)
    return ~blocked.any(axis=1)


def path_clear(start: XY, end: XY, obstacles: Iterable[XY], radius_mm: float, slack_mm: float = 0.0) -> bool:
    """Whether a ball of ``radius_mm`` can roll from ``start`` to ``end`` (centres) without touching
    any obstacle ball ahead of it (:func:`clear_ahead`)."""
    return bool(clear_ahead(start, np.asarray([end], dtype=float), obstacles, radius_mm, slack_mm)[0])


def contact_points(target: XY, radius_mm: float, n: int = 72) -> np.ndarray:
    """Cue-ball centre positions touching ``target`` all round: (n, 2)."""
    ang = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.asarray(target, dtype=float) + 2 * radius_mm * np.stack([np.cos(ang), np.sin(ang)], axis=1)


def can_hit(cue: XY, target: XY, others: Iterable[XY], radius_mm: float, touching_mm: float = 0.0, n: int = 144) -> bool:
    """Whether the cue ball can reach some part of ``target`` in a straight line, no cushion first
    (ficha 4.4.1, the snooker of Sinuca Brasileira rules 12 and 13.4): some contact position around
    the target is reachable, approached from the cue ball's side, with no ball of ``others`` ahead in
    the way. A target closer than ``touching_mm`` (gap) to the cue ball touches it and can always be
    played."""
    if math.dist(cue, target) < 2 * radius_mm + touching_mm:
        return True
    # the cue ball must arrive from its own side: its path may not cross the target on the way
    pts = contact_points(target, radius_mm, n)
    return bool(clear_ahead(cue, pts, [target, *others], radius_mm).any())


def can_reach_cushion(cue: XY, others: Iterable[XY], profile: TableProfile, n: int = 360) -> bool:
    """Whether the cue ball can roll straight to some cushion without touching another ball ahead of
    it (ficha 4.4.1 and 4.4.2)."""
    r = profile.ball_radius_mm
    length, width = profile.length_mm, profile.width_mm
    x, y = cue
    ends = []
    for ang in np.linspace(0.0, 2 * math.pi, n, endpoint=False):
        dx, dy = math.cos(ang), math.sin(ang)
        ts = [t for t in (
            (length - r - x) / dx if dx > 1e-9 else math.inf, (r - x) / dx if dx < -1e-9 else math.inf,
            (width - r - y) / dy if dy > 1e-9 else math.inf, (r - y) / dy if dy < -1e-9 else math.inf,
        ) if t >= 0]
        t = max(min(ts) if ts else 0.0, 1e-6)
        ends.append((x + dx * t, y + dy * t))
    return bool(clear_ahead(cue, np.asarray(ends), others, r).any())


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


def covered_in_pocket(ball: str, opponents: Sequence[str], positions: Mapping[str, XY], cue: str, profile: TableProfile,
                      touching_mm: float, near_mm: float, cover_gap_mm: float) -> tuple[str, tuple[str, ...]] | None:
    """Ficha 4.3: ``ball`` lies in a pocket's jaws (its edge within ``near_mm`` of the mouth) and an
    opponent ball blocks its way in, or touches it (gap under ``cover_gap_mm``) so that the cue ball
    cannot reach it straight. Returns (pocket id, covering balls) or None."""
    r = profile.ball_radius_mm
    xy = positions[ball]
    opp_xy = {b: positions[b] for b in opponents}
    if not opp_xy:
        return None
    for p in profile.pockets:
        if segment_distances(p.jaws_mm[0], p.jaws_mm[1], [xy])[0] - r > near_mm:
            continue
        to_pocket = math.dist(xy, p.xy_mm)
        blockers = [b for b, o in opp_xy.items() if math.dist(o, p.xy_mm) < to_pocket and segment_distances(xy, p.xy_mm, [o])[0] < 2 * r]
        touching = [b for b, o in opp_xy.items() if math.dist(o, xy) - 2 * r < cover_gap_mm]
        if touching:
            others = [v for k, v in positions.items() if k not in (cue, ball)]
            if can_hit(positions[cue], xy, others, r, touching_mm):
                touching = []
        covers = tuple(sorted(set(blockers) | set(touching)))
        if covers:
            return p.id, covers
    return None


def respot_spot(own: XY, other_spots: Sequence[XY], positions: Mapping[str, XY], radius_mm: float, length_mm: float) -> XY | None:
    """Where a ball is re-spotted (snooker, Sinuca Brasileira rule 1): its own spot if free, else the
    first free spot of ``other_spots`` (highest value first), else as near as possible to its own spot
    between it and the top (foot, x = length) cushion, else towards the head cushion; None when its
    whole line is taken."""
    r = radius_mm
    for spot in (own, *other_spots):
        if spot_free(spot, positions, r):
            return spot
    x0, y = own
    blocked: list[tuple[float, float]] = []
    for ox, oy in positions.values():
        dy = abs(oy - y)
        if dy < 2 * r:
            half = math.sqrt((2 * r) ** 2 - dy**2)
            blocked.append((ox - half, ox + half))

    def free(x: float) -> bool:
        return all(not (lo < x < hi) for lo, hi in blocked)

    for x in sorted([x0] + [hi for _, hi in blocked if hi >= x0]):
        if x <= length_mm - r and free(x):
            return (x, y)
    for x in sorted([lo for lo, _ in blocked if lo <= x0], reverse=True):
        if x >= r and free(x):
            return (x, y)
    return None
