"""The aiming helper: a shot that pots a given ball in a given pocket (or bed hole).

Ghost-ball aiming: the cue ball is sent to the point ``2R`` behind the object ball on the line from
the pocket through the object ball; the paths of both balls are checked clear of other balls, pins and
the pocket's jaws; then (``verify=True``) the shot is simulated and, if the throw of the cut or the
cloth bends it off, the direction is corrected in small steps until the simulation pots the ball.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator.physics import DEFAULT_PARAMS, PhysicsParams, Shot, World, simulate
from simulator.scene import BallStatus
from rules.geometry import path_clear, segment_distances
from tracking.events import BallBall, Pot

__all__ = ["PotPlan", "pot_geometry", "aim_pot", "pot_speed"]

MAX_CUT_DEG = 78.0  # thinner cuts are not attempted
CORRECTIONS_DEG = (0.0, 0.15, -0.15, 0.3, -0.3, 0.5, -0.5, 0.8, -0.8, 1.2, -1.2, 1.7, -1.7)


@dataclass(frozen=True, slots=True)
class PotPlan:
    """The geometry of one pot: where the cue ball must go (``ghost_xy_mm``), the direction, the cut
    angle (0 = full ball) and the two path lengths; ``difficulty`` ranks plans (lower is easier)."""

    ball: str
    pocket: str
    cue: str
    cue_xy_mm: tuple[float, float]
    ghost_xy_mm: tuple[float, float]
    direction_deg: float
    cut_deg: float
    cue_path_mm: float
    object_path_mm: float

    @property
    def difficulty(self) -> float:
        c = math.radians(self.cut_deg)
        return (self.cue_path_mm + 2.0 * self.object_path_mm) / max(math.cos(c), 0.05)


def _targets(world: World, pocket: str) -> tuple[list[tuple[float, float]], tuple[tuple[float, float], ...]]:
    """Aim points (best first) and jaw points of a pocket, or the centre of a bed hole. A pocket's
    aim points lie across its mouth, halfway from the jaw line to the drop centre: the middle first,
    then towards either jaw (a ball running along a cushion needs the near side)."""
    prof = world.profile
    for p in prof.pockets:
        if p.id == pocket:
            (ax, ay), (bx, by) = p.jaws_mm
            mx, my = (ax + bx) / 2, (ay + by) / 2
            inx, iny = (p.xy_mm[0] - mx) * 0.5, (p.xy_mm[1] - my) * 0.5
            pts = []
            for frac in (0.0, 0.2, -0.2, 0.4, -0.4, 0.6, -0.6):
                pts.append((mx + frac * (bx - ax) / 2 + inx, my + frac * (by - ay) / 2 + iny))
            return pts, p.jaws_mm
    for h in prof.holes:
        if h.id == pocket:
            return [h.xy_mm], ()
    raise KeyError(f"{prof.name} has no pocket or hole {pocket!r}")


def pot_geometry(world: World, ball: str, pocket: str, cue: str | None = None,
                 cue_xy_mm: tuple[float, float] | None = None) -> PotPlan | None:
    """The ghost-ball plan for potting ``ball`` in ``pocket`` with ``cue`` (default: the profile's cue
    ball) from where it lies (or from ``cue_xy_mm``, a ball in hand); None when the cut is too thin or
    a path is blocked."""
    prof = world.profile
    cue = cue or prof.cue_ball
    if cue is None or cue == ball:
        return None
    obj = world.ball(ball)
    if obj.status is not BallStatus.ON_TABLE:
        return None
    c = cue_xy_mm if cue_xy_mm is not None else world.ball(cue).xy_mm
    targets, jaws = _targets(world, pocket)
    for target in targets:
        plan = _plan(world, ball, pocket, cue, c, target, jaws)
        if plan is not None:
            return plan
    return None


def _plan(world: World, ball: str, pocket: str, cue: str, c, target, jaws) -> PotPlan | None:
    prof = world.profile
    R = prof.ball_radius_mm
    b = world.ball(ball).xy_mm
    ux, uy = target[0] - b[0], target[1] - b[1]
    d_obj = math.hypot(ux, uy)
    if d_obj < 1e-6:
        return None
    ux, uy = ux / d_obj, uy / d_obj
    g = (b[0] - 2 * R * ux, b[1] - 2 * R * uy)
    if not prof.contains(g, R - 1.0):
        return None
    dx, dy = g[0] - c[0], g[1] - c[1]
    d_cue = math.hypot(dx, dy)
    if d_cue < 1e-6:
        return None
    cut = math.degrees(math.acos(max(-1.0, min(1.0, (dx * ux + dy * uy) / d_cue))))
    if cut > MAX_CUT_DEG:
        return None
    others = [o.xy_mm for o in world.balls if o.on_table and o.id not in (cue, ball)]
    pins = [p.xy_mm for p in world.pins if p.up]
    pin_r = max((p.radius_mm for p in prof.pins), default=0.0)
    if not path_clear(c, g, others, R):
        return None
    if pins and not _clear_of(c, g, pins, R + pin_r + 1.0):
        return None
    end = target
    if not path_clear(b, end, others, R):
        return None
    if pins and not _clear_of(b, end, pins, R + pin_r + 1.0):
        return None
    if jaws and not _clear_of(b, end, list(jaws), R):
        return None
    return PotPlan(ball, pocket, cue, c, g, math.degrees(math.atan2(dy, dx)), cut, d_cue, d_obj)


def _clear_of(a, b, points, dist_mm: float) -> bool:
    if not points:
        return True
    return bool((segment_distances(a, b, np.asarray(points, dtype=float)) >= dist_mm).all())


def pot_speed(plan: PotPlan, params: PhysicsParams = DEFAULT_PARAMS, arrive_mm_s: float = 500.0) -> float:
    """A cue speed that brings the object ball to the pocket at about ``arrive_mm_s``: the object ball
    needs ``sqrt(arrive^2 + 2 mu_r g d)`` (plus a slide allowance), the cue ball passes on
    ``(1 + e)/2 cos(cut)`` of its speed and loses ``2 mu_r g d`` of the square on the way."""
    g = 9810.0
    f = params.mu_roll * g
    v_obj = 1.25 * math.sqrt(arrive_mm_s**2 + 2 * f * plan.object_path_mm)
    v_hit = v_obj / ((1 + params.e_ball) / 2 * max(math.cos(math.radians(plan.cut_deg)), 0.2))
    v = 1.1 * math.sqrt(v_hit**2 + 2 * f * plan.cue_path_mm)
    return float(min(max(v, 600.0), 6000.0))


def aim_pot(world: World, ball: str, pocket: str, cue: str | None = None, speed_mm_s: float | None = None,
            top: float = 0.2, side: float = 0.0, place_xy_mm: tuple[float, float] | None = None,
            params: PhysicsParams = DEFAULT_PARAMS, verify: bool = True, seed: int = 0) -> Shot | None:
    """A shot that pots ``ball`` in ``pocket`` (a pocket id, or a bed-hole id on a bar-billiards table),
    or None if no clear ghost-ball line exists (or, with ``verify``, no small correction of it pots
    the ball in the simulation without also potting the cue ball)."""
    plan = pot_geometry(world, ball, pocket, cue, place_xy_mm)
    if plan is None:
        return None
    speed = speed_mm_s if speed_mm_s is not None else pot_speed(plan, params)
    first = Shot(plan.cue, plan.direction_deg, speed, side=side, top=top, place_xy_mm=place_xy_mm)
    if not verify:
        return first
    for corr in CORRECTIONS_DEG:
        shot = Shot(plan.cue, plan.direction_deg + corr, speed, side=side, top=top, place_xy_mm=place_xy_mm)
        res = simulate(world, shot, params=params, rng=seed)
        contacts = [e for e in res.events if isinstance(e, BallBall)]
        if not contacts or {contacts[0].a, contacts[0].b} != {plan.cue, ball}:
            continue
        pots = [e for e in res.events if isinstance(e, Pot)]
        if any(p.ball == plan.cue for p in pots):
            continue
        if any(p.ball == ball and p.pocket == pocket for p in pots):
            return shot
    return None
