"""A double hit: the cue touches the struck ball again during the shot (ficha 5.7, bar billiards 3b q).

A struck ball leaves the tip faster than the tip goes, so the cue, following through, only reaches it
again when something slowed it within the stroke: a ball close in front. The struck ball met a ball
within the cue's follow-through (``follow_mm`` from its place, within ``double_hit_window_s`` of the
strike) and goes on after it, along their line of centres (the way that ball leaves), at ``push_share``
or more of that ball's speed and mostly along that line (``push_along``) or, on a cut, going sideways,
faster along it than a follow's spin can have taken it by then (``spin_accel_mm_s2``: the cloth's
sliding friction) with the tip right at it (``cue_push_mm``); the cue's tip at it in either case: that
is the double hit a camera sees. Both speeds are fitted up to either ball's next contact. A ball met that is backed
by a cushion or another ball (``backed_mm``) passes the hit on at once and proves nothing. A ball
meeting a ball keeps a few per cent of its speed along that line (ball-ball restitution); a follow
shot's spin takes it on only as friction grips, a few centimetres a second by the next frame. Frozen
balls (ficha 4.5: under 1 mm apart) are left to the frozen-ball rule.

A free ball caught again by the cue would need a cue still speeding up after the strike (a push
stroke): a foul the camera cannot tell from a harder strike, which the rules leave to the operator
(push shots are operator inputs). Before 2026-11-28 a free ball speeding up along its way with the cue
at it was called a double hit; on the held-out run it found no double hit the rule above missed and made
2 of the 7 false calls (``docs/tracking.md``, "The full run, 2026-11-28").
"""

from __future__ import annotations

import numpy as np

from tracking.events import CueContact
from tracking.infer.shot import ShotContext

__all__ = ["infer_double_hit"]


def _pushed_through(ctx: ShotContext, contacts: list) -> CueContact | None:
    """The struck ball's first contact with a ball, if the cue pushed it on through that ball (the
    module docstring)."""
    cfg = ctx.config
    s = ctx.motions[ctx.striker]
    if s.r0 is None:
        return None
    mine = sorted((c for c in contacts if ctx.striker in (c.a, c.b) and c.a != c.b), key=lambda c: c.t)
    if not mine:
        return None
    c = mine[0]
    o = ctx.motions[c.b if c.a == ctx.striker else c.a]
    if c.t - ctx.t_strike > cfg.double_hit_window_s or o.r0 is None:
        return None
    xs = s.at(c.t)
    if xs is None or np.linalg.norm(xs - s.r0) > cfg.follow_mm:
        return None
    if np.linalg.norm(o.r0 - s.r0) < 2 * ctx.R + 1.0:
        return None  # frozen to it (ficha 4.5)
    # a ball backed by a cushion or by another ball passes the hit on at once: what the struck ball does
    # then is no sign of the cue
    if ctx.geometry_inside(o.r0) < ctx.R + cfg.backed_mm or any(
            m is not s and m is not o and m.present0 and m.r0 is not None
            and np.linalg.norm(m.r0 - o.r0) < 2 * ctx.R + cfg.backed_mm for m in ctx.motions):
        return None
    # each ball's velocity over its measured places from half a frame after the contact (its time is
    # known to a few milliseconds: a sample just before it is still the way in) to two frames on; the
    # line of centres is the way the ball met leaves (the places at the contact's estimated time point
    # elsewhere when the striker was fast: a few milliseconds early is centimetres short), and before
    # either meets anything else (a ball met 40 ms on bends the way the samples' line is fitted to)
    t_a = c.t + 0.5 * ctx.dt
    t_b = min([t_a + max(2.0 * ctx.dt, 0.05)] + [c2.t for c2 in contacts if c2.t > c.t and ({c2.a, c2.b} & {s.i, o.i})])
    v_s, v_o = _velocity(s, t_a, t_b), _velocity(o, t_a, t_b)
    if v_s is None or v_o is None:
        return None
    u_o = float(np.linalg.norm(v_o))
    n = v_o / max(u_o, 1e-9)
    u_s = float(v_s @ n)
    # pushed on: along the way of the ball it met, nearly as fast; a cut leaves it going sideways, and a
    # follow's spin takes it on along the line only as the cloth grips, so going sideways too it was
    # pushed when it goes on faster than the spin can have taken it by the middle of the samples
    if u_o < cfg.push_min_mm_s or u_s < cfg.push_share * u_o:
        return None
    sideways = u_s < cfg.push_along * float(np.linalg.norm(v_s))
    if sideways and u_s < cfg.spin_accel_mm_s2 * (0.5 * (t_a + t_b) - c.t) + cfg.spin_margin_mm_s:
        return None
    _, tip = ctx.cue_tip(xs, c.t - 2 * ctx.dt, c.t + ctx.dt, ctx.R + cfg.cue_reach_mm, past_mm=cfg.follow_mm)
    # (going sideways, the push is believed only of a tip right at the ball: a thin cut's own throw and
    # spin can send a ball on that way too, the tip left behind it)
    if tip > ctx.R + (cfg.cue_push_mm if sideways else cfg.cue_reach_mm):
        return None
    conf = 0.9 if u_s >= 0.75 * u_o else 0.75
    return CueContact(t_s=float(c.t), ball=s.id, xy_mm=(float(xs[0]), float(xs[1])), confidence=conf)


def _velocity(m, t_a: float, t_b: float) -> np.ndarray | None:
    """The mean velocity (2,) of ball ``m`` over its measured places from ``t_a`` to ``t_b`` (a straight
    line fitted to them; None: fewer than two)."""
    sel = (m.ts >= t_a) & (m.ts <= t_b)
    if np.count_nonzero(sel) < 2:
        return None
    return np.polyfit(m.ts[sel], m.zs[sel], 1)[0]


def infer_double_hit(ctx: ShotContext, contacts: list) -> list[CueContact]:
    """The shot's double hit, if the cue pushed the struck ball on through a ball close in front."""
    pushed = _pushed_through(ctx, contacts)
    return [] if pushed is None else [pushed]
