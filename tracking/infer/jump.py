"""Jumps: a ball off the cloth (vision's ``AIRBORNE`` with a height) during a shot.

Each airborne spell's heights are fitted with the free flight ``h(t) = vz (t - t0) - g/2 (t - t0)^2``
(g known, so a linear least-squares fit of two numbers), whose roots give the take-off and the
landing between frames; the event is logged at the take-off with ``airborne_s``, the flight time.
A spell starting at the strike (a jump shot) takes off at the strike.

Vision reads no height off a fast ball (motion blur stretches its outline out of round), so most
jump shots come with no airborne spell at all; :func:`implied_jumps` adds the jumps the paths prove:
a ball that left the table over a cushion, and a ball whose path ran through a ball at rest that
stayed put (Sinuca de Ficha 5.4: the cue ball jumping a ball).
"""

from __future__ import annotations

import math

import numpy as np

from tracking.events import Jump
from tracking.infer.shot import BallMotion, ShotContext
from tracking.tracks import TrackState

__all__ = ["infer_jumps", "implied_jumps", "landing_time", "G_MM_S2"]

G_MM_S2 = 9810.0


def _spells(air: np.ndarray, max_gap: int) -> list[tuple[int, int]]:
    ks = np.flatnonzero(air)
    out: list[tuple[int, int]] = []
    for k in ks:
        if out and k - out[-1][1] <= max_gap + 1:
            out[-1] = (out[-1][0], int(k))
        else:
            out.append((int(k), int(k)))
    return out


def _flight(tt: np.ndarray, hh: np.ndarray) -> tuple[float, float] | None:
    """Take-off and landing times of the free flight through heights ``hh`` at times ``tt`` (two or
    more samples), or None when no flight fits them."""
    # h + g/2 t^2 = c1 t + c0 (t relative to the first sample for conditioning)
    u = tt - tt[0]
    A = np.stack([u, np.ones_like(u)], axis=1)
    c1, c0 = np.linalg.lstsq(A, hh + 0.5 * G_MM_S2 * u ** 2, rcond=None)[0]
    roots = np.roots([-0.5 * G_MM_S2, c1, c0])
    roots = np.sort(roots[np.isreal(roots)].real)
    if len(roots) != 2:
        return None
    return float(tt[0] + roots[0]), float(tt[0] + roots[1])


def landing_time(ctx: ShotContext, i: int, k_last: int) -> float | None:
    """When ball ``i``, in the air at frame ``k_last``, comes down to the cloth's height: from the free
    flight fitted to the airborne spell ending there (None: fewer than two heights in it)."""
    f = ctx.frames
    air = (f.state[: k_last + 1, i] == TrackState.AIRBORNE) & (f.height[: k_last + 1, i] > ctx.config.jump_min_mm)
    if not air[-1]:
        return None
    k0, k1 = _spells(air, 1)[-1]
    ks = np.arange(k0, k1 + 1)
    ks = ks[air[ks]]
    if len(ks) < 2:
        return None
    fl = _flight(f.t[ks], f.height[ks, i])
    return None if fl is None else fl[1]


def infer_jumps(ctx: ShotContext) -> list[Jump]:
    cfg = ctx.config
    out: list[Jump] = []
    t = ctx.frames.t
    for m in ctx.moving():
        h = ctx.frames.height[:, m.i]
        air = (ctx.frames.state[:, m.i] == TrackState.AIRBORNE) & (h > cfg.jump_min_mm)
        for k0, k1 in _spells(air, 1):
            ks = np.arange(k0, k1 + 1)
            ks = ks[air[ks]]
            tt, hh = t[ks], h[ks]
            if len(ks) >= 2:
                fl = _flight(tt, hh)
                t_up, t_down = fl if fl is not None else (tt[0] - ctx.dt / 2, tt[-1] + ctx.dt / 2)
            else:
                # one sample: a symmetric flight through it at the height seen
                vz = np.sqrt(2 * G_MM_S2 * max(hh[0], 0.0))
                t_up, t_down = tt[0] - vz / G_MM_S2, tt[0] + vz / G_MM_S2
            if m.i == ctx.striker and abs(t_up - ctx.t_strike) < 2 * ctx.dt:
                t_up = ctx.t_strike  # a jump shot leaves the cloth at the strike
            t_up = max(t_up, ctx.t_strike)
            xy = m.at(t_up)
            if xy is None:
                xy = ctx.frames.xy[k0, m.i]
            conf = 0.95 if len(ks) >= 2 else 0.75
            out.append(Jump(t_s=float(t_up), ball=m.id, xy_mm=(float(xy[0]), float(xy[1])),
                            airborne_s=round(float(max(t_down - t_up, ctx.dt)), 4), confidence=conf))
    return out


def _take_off(ctx: ShotContext, m: BallMotion, t: float) -> float:
    """When ball ``m``, known to be in the air at ``t``, left the cloth at the latest: the strike for the
    struck ball with nothing before (a jump shot), else the last change of its path before ``t`` (the
    blow that lifted it), else ``t`` itself."""
    kinks = [k.t for k in m.kinks if k.t < t]
    if kinks:
        return float(kinks[-1])
    if m.i == ctx.striker:
        return float(ctx.t_strike)
    return float(t)


def implied_jumps(ctx: ShotContext, seen: list[Jump], left: list) -> list[Jump]:
    """Jumps that vision did not see (a ball blurred by its speed shows no outline to read a height off)
    but that the balls' paths prove: a ball that left the table over a cushion (``left``: the shot's
    ``off_table`` events) flew over its nose; and a ball whose path ran through a ball at rest, which
    did not move, passed over it. One jump per ball and spell: none where ``seen`` has one already."""
    cfg = ctx.config
    R = ctx.R
    out: list[Jump] = []
    have: dict[str, list[Jump]] = {}
    for j in seen:
        have.setdefault(j.ball, []).append(j)

    def known(ball: str, t0: float, t1: float) -> bool:
        return any(j.t_s - ctx.dt <= t1 and t0 <= j.t_s + j.airborne_s + ctx.dt for j in have.get(ball, []))

    def add(m: BallMotion, t_air: float, t_end: float, conf: float) -> None:
        t_up = max(_take_off(ctx, m, t_air), ctx.t_strike)
        if known(m.id, t_up, t_end):
            return
        xy = m.at(t_up)
        xy = m.r0 if xy is None else xy
        j = Jump(t_s=float(t_up), ball=m.id, xy_mm=(float(xy[0]), float(xy[1])),
                 airborne_s=math.ceil(max(t_end - t_up, ctx.dt) * 1e4) / 1e4, confidence=conf)
        out.append(j)
        have.setdefault(m.id, []).append(j)

    by_id = {m.id: m for m in ctx.motions}
    for e in left:
        m = by_id.get(getattr(e, "ball", None))
        if e.kind == "off_table" and m is not None and m.moved:
            add(m, float(e.t_s), float(e.t_s), float(e.confidence))
    # a path through a ball at rest: deeper into it than the noise of a fast ball's place could put it
    reach = 2.0 * R - cfg.jump_over_mm
    still = [o for o in ctx.motions if o.present0 and o.r0 is not None]
    for m in ctx.moving():
        for p in m.pieces:
            ts = np.arange(p.t_first, p.t_last, ctx.dt / 8.0)
            if len(ts) < 2:
                continue
            xy = p.at(ts)
            # measured on both sides within a few frames: the path between is followed, not guessed
            seen_t = m.ts[p.i0: p.i1 + 1]
            for o in still:
                if o is m or any(q is not None and np.linalg.norm(q - o.r0) < reach for q in (m.r0, m.r1)):
                    continue  # two balls resting in one place: one ball tracked twice
                d = np.linalg.norm(xy - o.r0, axis=1)
                inside = d < reach
                if not inside.any():
                    continue
                k = int(np.argmin(d))
                t_c = float(ts[k])
                over = d < 2.0 * R
                t0, t1 = float(ts[over][0]), float(ts[over][-1])
                if o.moved and o.t_start is not None and o.t_start < t1 + cfg.jump_over_still_s:
                    continue  # it moved soon after: struck (its start seen late), not flown over
                kf = int(np.clip(np.searchsorted(ctx.frames.t, t_c), 0, len(ctx.frames.t) - 1))
                if ctx.frames.state[kf, o.i] in (TrackState.OFF, TrackState.IN_POCKET) or ctx.geometry.nearest_pocket(o.r0)[1] < 0:
                    continue  # potted (in a net, or in a pocket's mouth): a ball's way into the pocket runs over it
                before, after = seen_t[seen_t <= t_c], seen_t[seen_t >= t_c]
                if not len(before) or not len(after) or after[0] - before[-1] > 4.5 * ctx.dt:
                    continue
                add(m, t0, t1, 0.9 if d[k] < R else 0.75)
    return out
