"""Jumps: a ball off the cloth (vision's ``AIRBORNE`` with a height) during a shot.

Each airborne spell's heights are fitted with the free flight ``h(t) = vz (t - t0) - g/2 (t - t0)^2``
(g known, so a linear least-squares fit of two numbers), whose roots give the take-off and the
landing between frames; the event is logged at the take-off with ``airborne_s``, the flight time.
A spell starting at the strike (a jump shot) takes off at the strike.
"""

from __future__ import annotations

import numpy as np

from tracking.events import Jump
from tracking.infer.shot import ShotContext
from tracking.tracks import TrackState

__all__ = ["infer_jumps", "landing_time", "G_MM_S2"]

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
