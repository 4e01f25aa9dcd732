"""Balls that move with nothing to explain it, and the episodes that are no shot at all.

A ball at rest that starts to move with no strike, no ball reaching it and no cushion is touched
(ficha 5.5, 5.6; bar billiards 3b g): by a hand, a sleeve, the cue. When a cue-shaped occluder's
tip was at it, it is the cue touching it (``cue_contact``); otherwise ``ball_touched``. When the
first ball of an episode moves without the cue near it and slower than a strike, the episode is a
touch, not a shot.
"""

from __future__ import annotations

import numpy as np

from tracking.events import BallTouched, CueContact
from tracking.infer.shot import BallMotion, ShotContext

__all__ = ["infer_touched", "is_strike"]


def _start_speed(m: BallMotion) -> float:
    if not m.pieces:
        return 0.0
    p = m.pieces[0]
    return float(np.linalg.norm(p.velocity(p.t_first)))


def _travel(m: BallMotion) -> float:
    """How far the ball got from where it rested (its furthest measured place)."""
    if m.r0 is None or len(m.zs) == 0:
        return 0.0
    return float(np.max(np.linalg.norm(m.zs - m.r0, axis=1)))


def is_strike(ctx: ShotContext, m: BallMotion) -> tuple[str, float]:
    """What set the first ball of an episode moving, and how sure that is: ``"cue"`` (a strike: the
    episode is a shot), ``"hand"`` (a touch) or ``"carry"`` (lifted off the cloth by a hand)."""
    cfg = ctx.config
    assert m.r0 is not None and m.t_start is not None
    near, cue = ctx.cue_near(m.r0, m.t_start - cfg.cue_window_s, m.t_start + ctx.dt, ctx.R + cfg.cue_reach_mm)
    speed = _start_speed(m)
    if cue:
        return "cue", 1.0
    k = m.k_move if m.k_move is not None else 0
    if near and np.any(ctx.frames.height[k: k + 3, m.i] > cfg.jump_min_mm):
        return "carry", 0.9  # lifted off the cloth with a hand at it
    if speed >= cfg.strike_speed_mm_s:
        return "cue", 0.9 if near else 0.8
    if near:
        return "hand", 0.8  # a slow push with a hand or an arm near: a touch
    # a slow start with nothing seen near it: a hand that touches a ball is seen beside it, a cue need
    # not be (its tip's short travel in a soft stroke, the player down on the shot since the video
    # began and so part of the picture's background): the cue, unsure
    return "cue", 0.6


def infer_touched(ctx: ShotContext) -> list[BallTouched | CueContact]:
    cfg = ctx.config
    out: list[BallTouched | CueContact] = []
    for m in ctx.moving():
        if m.i == ctx.striker or m.cause is not None or m.r0 is None or m.t_start is None or m.nudged:
            continue  # a nudge nothing explains is more likely the noise than a hand
        if _travel(m) < cfg.touch_min_mm:
            continue  # too little to call a foul on: most likely the tracks' noise
        near, cue = ctx.cue_near(m.r0, m.t_start - cfg.cue_window_s, m.t_start + ctx.dt, ctx.R + cfg.cue_reach_mm)
        conf = 0.9 if near else 0.7
        m.cause = "cue" if cue else "hand"
        xy = (float(m.r0[0]), float(m.r0[1]))
        if cue:
            out.append(CueContact(t_s=m.t_start, ball=m.id, xy_mm=xy, confidence=conf))
        else:
            out.append(BallTouched(t_s=m.t_start, ball=m.id, xy_mm=xy, confidence=conf))
    return out
