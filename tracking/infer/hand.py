"""Balls a hand takes off the table while a shot is being set up: the ball, at rest, is covered by a
hand and is gone when the hand leaves. A removal that the strike follows within the half second the
tracker waits before it gives a ball up is only seen in the shot's frames, so the shot analysis
reports it (before the strike, among the shot's ``before`` events). A ball lifted out of a pocket's
jaws is removed, never potted. A ball that was not on the table when the shot began (seen first in
the shot, not standing where an arm hid it) and is gone again was never in play: a hand or a sleeve
taken for a ball for a moment, no removal. (Placements and removals in quiet time are watched live by
:class:`tracking.infer.EventInferer`.)"""

from __future__ import annotations

import numpy as np

from tracking.events import BallRemoved
from tracking.geometry import polygon_distance
from tracking.infer.pot import vanished
from tracking.infer.shot import ShotContext

__all__ = ["removed_in_shot"]


def removed_in_shot(ctx: ShotContext, accounted: set[int]) -> tuple[list[BallRemoved], set[int]]:
    out: list[BallRemoved] = []
    done: set[int] = set()
    for m in ctx.motions:
        if m.i in accounted or m.r0 is None or not m.present0 or (m.moved and not (m.nudged and m.cause is None)):
            continue
        last = vanished(ctx, m)
        if last is None:
            continue
        t_last = last[0]
        k = int(np.searchsorted(ctx.frames.t, t_last))
        ks = range(max(k - 1, 0), min(k + 3, ctx.frames.n_frames))
        hand = any(polygon_distance(poly, m.r0[None])[0] < ctx.R for j in ks for poly in ctx.frames.occluders[j])
        out.append(BallRemoved(t_s=t_last, ball=m.id, xy_mm=(float(m.r0[0]), float(m.r0[1])), confidence=0.9 if hand else 0.6))
        done.add(m.i)
    return out, done
