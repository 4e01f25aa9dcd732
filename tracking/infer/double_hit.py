"""A double hit: the cue touches the struck ball again during the shot (ficha 5.7, bar billiards 3b q).

After the strike, the struck ball speeds up again along its way with nothing else to explain it (no
ball, no cushion) while the cue is still at it. A second touch within a few milliseconds of the
first (a push) adds its speed before the next frame: it then looks exactly like a slightly harder
strike, and no camera at 30 or 60 frames a second can tell the two apart; only a later touch, after
at least a frame, is seen.
"""

from __future__ import annotations

import numpy as np

from tracking.events import CueContact
from tracking.infer.shot import ShotContext

__all__ = ["infer_double_hit"]


def infer_double_hit(ctx: ShotContext) -> list[CueContact]:
    cfg = ctx.config
    s = ctx.motions[ctx.striker]
    out: list[CueContact] = []
    for kink in s.kinks:
        if kink.explained or kink.t - ctx.t_strike > cfg.double_hit_window_s:
            continue
        v_in, v_out = kink.v_in, kink.v_out
        s_in, s_out = float(np.linalg.norm(v_in)), float(np.linalg.norm(v_out))
        along = float(v_out @ v_in) / max(s_in * s_out, 1e-9)
        if s_out - s_in < max(cfg.min_dv_mm_s, 0.2 * s_in) or along < 0.9:
            continue
        # the cue's tip must be at the ball: behind it, within reach of its surface
        _, tip = ctx.cue_tip(kink.xy, kink.t - 2 * ctx.dt, kink.t + ctx.dt, ctx.R + cfg.cue_reach_mm)
        if tip > ctx.R + cfg.cue_reach_mm:
            continue
        kink.explained = True
        out.append(CueContact(t_s=kink.t, ball=s.id, xy_mm=(float(kink.xy[0]), float(kink.xy[1])), confidence=0.9))
    return out
