"""Ball-cushion contacts: which cushion (the profile's ids), when and where on its nose.

* A kink of a moving ball whose centre is then one radius from a cushion nose (alongside the
  cushion, not in a pocket mouth), with the velocity across the cushion turning from in to out:
  the time is when the piece before it reaches the cushion line. Near a pocket the jaw points count
  as the cushion they end.
* A ball resting against a cushion and struck into it by another ball (a rack ball, ficha 3.2)
  bounces off it at once: no kink of its own is seen, only that it leaves along the cushion's
  mirror image of the line of centres.
"""

from __future__ import annotations

import numpy as np

from tracking.events import BallCushion
from tracking.infer.contact import Contact
from tracking.infer.shot import BallMotion, Kink, ShotContext

__all__ = ["infer_cushions"]


def _line_time(m: BallMotion, kink: Kink, line, dt: float) -> float:
    """When the piece before the kink brings the centre onto the cushion line."""
    p = m.pieces[kink.piece]
    ts = np.linspace(kink.t - 1.5 * dt, kink.t + 0.5 * dt, 401)
    d = line.distance(p.at(ts))
    inside = np.flatnonzero(d <= 0)
    if len(inside) == 0:
        return kink.t
    k = int(inside[0])
    if k == 0:
        return float(ts[0])
    d0, d1 = d[k - 1], d[k]
    return float(ts[k - 1] + (ts[k] - ts[k - 1]) * d0 / (d0 - d1))


def infer_cushions(ctx: ShotContext, contacts: list[Contact]) -> list[BallCushion]:
    cfg = ctx.config
    g = ctx.geometry
    dt = ctx.dt
    out: list[BallCushion] = []
    for m in ctx.moving():
        for kink in m.kinks:
            if kink.dv < cfg.min_dv_mm_s:
                continue  # (a kink a ball contact explains may still be a cushion too: both in one frame)
            best = None
            for line in g.lines:
                d = float(line.distance(kink.xy))
                v_in = line.inward * kink.v_in[line.axis]
                v_out = line.inward * kink.v_out[line.axis]
                # where two pieces meet is known to about a hundredth of a second of the speed across
                # (more when a ball contact explains the kink: then it must be right at the line)
                tol = cfg.cushion_tol_mm + (0.0 if kink.explained else cfg.cushion_tol_s * abs(v_in))
                if abs(d) > tol or not line.spans(kink.xy, ctx.R):
                    continue
                if v_in > -cfg.min_dv_mm_s / 2 or v_out < 0.2 * -v_in:
                    continue  # no bounce: the speed across the cushion must turn from in to out
                score = abs(d)
                if best is None or score < best[0]:
                    best = (score, line)
            if best is not None:
                line = best[1]
                t = _line_time(m, kink, line, dt)
                xy = line.contact_point(m.pieces[kink.piece].at(t))
                conf = 0.95 if abs(best[0]) < cfg.cushion_tol_mm / 2 else 0.8
                out.append(BallCushion(t_s=t, ball=m.id, cushion=line.id, xy_mm=xy, confidence=conf))
                kink.explained = True
                continue
            if len(g.jaw_xy):
                dj = np.linalg.norm(g.jaw_xy - kink.xy, axis=1) - ctx.R
                j = int(np.argmin(dj))
                if abs(dj[j]) <= cfg.cushion_tol_mm:
                    out.append(BallCushion(t_s=kink.t, ball=m.id, cushion=g.jaw_ids[j],
                                           xy_mm=(float(g.jaw_xy[j, 0]), float(g.jaw_xy[j, 1])), confidence=0.8))
                    kink.explained = True
    # grazing: a piece whose path comes in from clear of a cushion and reaches its line at a shallow
    # angle (the bounce too small for any kink to show)
    for m in ctx.moving():
        for p in m.pieces:
            # (not past the last sighting of a ball that then left the table: it may have flown off)
            ts = np.linspace(p.t_first - 0.5 * dt, p.t_last + (0.5 * dt if p is not m.pieces[-1] or m.r1 is not None else 0.0), 201)
            pos = p.at(ts)
            for line in g.main_lines:
                d = line.distance(pos)
                hit = np.flatnonzero(d <= 0.0)
                if len(hit) == 0 or d[0] < cfg.graze_from_mm:
                    continue
                t = float(ts[hit[0]])
                if not line.spans(pos[hit[0]]) or any(
                        isinstance(e, BallCushion) and e.ball == m.id and e.cushion == line.id and abs(e.t_s - t) < 2 * dt for e in out):
                    continue
                out.append(BallCushion(t_s=t, ball=m.id, cushion=line.id, xy_mm=line.contact_point(pos[hit[0]]), confidence=0.75))
    # balls that roll up to a cushion and stop against it (the bounce too small to see)
    for m in ctx.moving():
        if m.r1 is None or not m.pieces:
            continue
        p = m.pieces[-1]
        v = p.velocity(p.t_last)
        for line in g.main_lines:
            if abs(float(line.distance(m.r1))) > cfg.frozen_cushion_mm or not line.spans(m.r1):
                continue
            if line.inward * v[line.axis] >= -cfg.min_dv_mm_s / 4:
                continue  # not rolling towards it at the end
            if any(isinstance(e, BallCushion) and e.ball == m.id and e.cushion == line.id and e.t_s > p.t_first - dt for e in out):
                continue
            ts = np.linspace(p.t_last - dt, (m.t_stop or p.t_last) + dt, 201)
            d = line.distance(p.at(ts))
            k = int(np.argmax(d <= 0.0)) if np.any(d <= 0.0) else int(np.argmin(d))
            out.append(BallCushion(t_s=float(ts[k]), ball=m.id, cushion=line.id, xy_mm=line.contact_point(m.r1), confidence=0.8))
    # balls struck while resting against a cushion
    for c in contacts:
        b = ctx.motions[c.b]
        a = ctx.motions[c.a]
        if b.r0 is None or not b.pieces:
            continue
        pa = a.at(c.t - 1e-4) if a.moved else a.r0
        if pa is None:
            continue
        n = b.r0 - pa
        n = n / max(float(np.linalg.norm(n)), 1e-9)
        for line in g.main_lines:
            d = float(line.distance(b.r0))
            if d > cfg.frozen_cushion_mm or not line.spans(b.r0):
                continue
            # a ball against the cushion pushed with any part of the blow into it bounces off it at once
            if line.inward * n[line.axis] < -0.005:
                out.append(BallCushion(t_s=c.t + 1e-4, ball=b.id, cushion=line.id, xy_mm=line.contact_point(b.r0),
                                       confidence=0.85))
    return out
