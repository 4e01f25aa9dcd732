"""Balls leaving the playing surface over a cushion, and coming back by their own means.

A ball that vanishes from the cloth during a shot outside every pocket's reach, after its path
crossed a cushion line (flying: vision sees it airborne, over the rail), left the table when its
centre reached the cushion's line, as the physics of a jump over the nose has it. A ball that left
and is seen on the cloth again before the shot ends came back by itself (``returned``, bar
billiards 2d a).
"""

from __future__ import annotations

import numpy as np

from tracking.events import OffTable, Returned
from tracking.infer.pot import vanished
from tracking.infer.shot import ShotContext
from tracking.tracks import TrackState

__all__ = ["infer_off_table"]


def infer_off_table(ctx: ShotContext, potted: set[int]) -> tuple[list[OffTable | Returned], set[int]]:
    """Off-table and returned events, and the balls they account for."""
    cfg = ctx.config
    g = ctx.geometry
    out: list[OffTable | Returned] = []
    done: set[int] = set()
    for m in ctx.motions:
        if m.i in potted:
            continue
        state = ctx.frames.state[:, m.i]
        last = vanished(ctx, m)
        gone = np.flatnonzero(state == TrackState.OFF)
        came_back = last is None and m.moved and len(gone) and gone[0] > 0 and np.any(state[gone[-1] + 1:] != TrackState.OFF)
        if last is None and not came_back:
            continue
        if came_back:
            k_off = int(gone[0])
            t_last = float(ctx.frames.t[max(k_off - 1, 0)])
            p = m.piece_at(t_last)
            if p is None or m.t_start is None or not p.t_first - ctx.dt <= t_last <= p.t_last + ctx.dt:
                continue  # it vanished at rest and was found there again: the tracker lost it a while
            xy, v = p.at(t_last), p.velocity(t_last)
        else:
            t_last, xy, v = last
        # the cushion line its path crossed: the one it was beyond or heading to
        best = None
        for line in g.main_lines:
            d = float(line.distance(xy))
            vn = line.inward * float(v[line.axis])
            if d > cfg.off_table_reach_mm or (vn >= 0 and d > 0):
                continue
            if best is None or d < best[0]:
                best = (d, line, vn)
        if best is None:
            continue
        d, line, vn = best
        t = t_last - d / vn if vn < 0 else t_last
        xy_cross = xy + v * (t - t_last)
        airborne = bool(np.any(ctx.frames.state[:, m.i] == TrackState.AIRBORNE))
        conf = 0.95 if airborne else 0.7
        out.append(OffTable(t_s=t, ball=m.id, xy_mm=(float(xy_cross[0]), float(xy_cross[1])), confidence=conf))
        done.add(m.i)
        if came_back:
            k_back = int(gone[-1]) + 1
            zb = ctx.frames.xy[k_back, m.i]
            out.append(Returned(t_s=float(ctx.frames.t[k_back]), ball=m.id, xy_mm=(float(zb[0]), float(zb[1])), confidence=0.8))
    return out, done
