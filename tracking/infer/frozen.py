"""Frozen balls at the strike: a ball touching the struck ball (a gap under ``frozen_gap_mm``, within
what the rest positions can tell) that starts to move with it was pushed by the strike itself, before
anything else reached it. The contact is logged at the strike, with the struck ball as ``a``;
ficha 4.5 judges from it, and from the strike's positions, whether that is a foul."""

from __future__ import annotations

import numpy as np

from tracking.infer.contact import Contact
from tracking.infer.shot import ShotContext

__all__ = ["frozen_pushes"]


def frozen_pushes(ctx: ShotContext) -> list[Contact]:
    cfg = ctx.config
    s = ctx.motions[ctx.striker]
    out: list[Contact] = []
    if s.r0 is None:
        return out
    for b in ctx.motions:
        if b is s or b.r0 is None or not b.moved or b.t_start is None:
            continue
        gap = float(np.linalg.norm(b.r0 - s.r0)) - 2 * ctx.R
        if gap < cfg.frozen_gap_mm and b.t_start - ctx.t_strike < 2.5 * ctx.dt:
            n = (b.r0 - s.r0) / max(float(np.linalg.norm(b.r0 - s.r0)), 1e-9)
            out.append(Contact(s.i, b.i, ctx.t_strike + 1e-4, s.r0 + n * ctx.R, 0.9, 0.0))
            b.cause = "ball"
    return out
