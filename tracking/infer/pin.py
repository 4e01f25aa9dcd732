"""Bar-billiards pins: down, or moved but standing (bar billiards 2h).

Vision reads each pin every frame (standing on its spot, moved, down). A pin stood when the shot
began when it reads standing three frames running from ``pin_settle_s`` before the strike on (a pin
knocked over in the last shot is set up again on its spot between shots, as late as the strike;
one read down all along fell before). A pin is down when it stood at the strike and reads down for most of the last ``pin_settle_s`` of the
shot (a wobbling pin misread for a frame does not count), or for ``pin_settle_s`` running before it
stood again (a fallen pin does not stand up by itself: it was set up on its spot again before the
shot was called over, as while the call waits seconds for a ball on a hole's edge); it moved when it stands at the end more
than ``pin_moved_mm`` from where it stood at the strike, or when a ball touched it: a ball bounced
off it (a kink in its path against the pin), or its path came within touching distance of the pin
(``pin_touch_mm`` beyond the ball's radius plus the pin's: a glancing touch deflects the ball by
less than any frame shows, and every touch shifts a pin a little, more than a camera may see). The
time is the moment a ball reached the pin, else the first frame it read down or moved.
"""

from __future__ import annotations

import numpy as np

from tracking.events import PinDown, PinMoved
from tracking.infer.shot import ShotContext
from vision.types import PinState

__all__ = ["infer_pins"]


def _kink_time(ctx: ShotContext, j: int, before: float) -> float | None:
    """The time a ball's kink brought it against pin ``j`` (the last one before ``before``)."""
    g = ctx.geometry
    reach = ctx.R + g.pin_r[j] + ctx.config.cushion_tol_mm
    best = None
    for m in ctx.moving():
        for kink in m.kinks:
            if kink.t <= before + ctx.dt and np.linalg.norm(kink.xy - g.pin_xy[j]) <= reach:
                if best is None or kink.t > best:
                    best = kink.t
                kink.explained = True
    return best


def _graze_time(ctx: ShotContext, j: int, before: float) -> float | None:
    """The first time a ball's path, coming from further away, reached touching distance of pin ``j``
    (the ball's and the pin's radii plus ``pin_touch_mm``) before ``before``: along one of its pieces
    of free motion, or where it came to rest against the pin."""
    g = ctx.geometry
    touch = ctx.R + g.pin_r[j] + ctx.config.pin_touch_mm
    best = None
    for m in ctx.moving():
        if m.r0 is None or not m.pieces or float(np.linalg.norm(m.r0 - g.pin_xy[j])) <= touch:
            continue  # (a ball resting against the pin and struck away from it does not move it)
        for p in m.pieces:
            ts = np.linspace(p.t_first, p.t_last, max(2, 4 * p.n))
            d = np.linalg.norm(p.at(ts) - g.pin_xy[j], axis=1)
            k = int(np.argmin(d))
            if d[k] <= touch and ts[k] <= before + ctx.dt:
                best = float(ts[k]) if best is None else min(best, float(ts[k]))
                break
        if m.r1 is not None and m.t_stop is not None and float(np.linalg.norm(m.r1 - g.pin_xy[j])) <= touch:
            # it rolled up against the pin and stopped there: when its last piece reached it
            p = m.pieces[-1]
            ts = np.linspace(p.t_first, max(m.t_stop, p.t_last), max(2, 4 * p.n))
            reach = np.flatnonzero(np.linalg.norm(p.at(ts) - g.pin_xy[j], axis=1) <= touch)
            t_touch = float(ts[reach[0]]) if len(reach) else p.t_last
            if t_touch <= before + ctx.dt:
                best = t_touch if best is None else min(best, t_touch)
    return best


def _lay_down(down: np.ndarray, t: np.ndarray, dt: float, span: float) -> bool:
    """Whether the readings ``down`` (bool, at times ``t``) hold a run of down readings lasting
    ``span`` seconds (a frame counts ``dt``)."""
    if not down.any():
        return False
    edges = np.diff(np.r_[0, down.astype(np.int8), 0])
    first, past = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return bool(np.any(t[past - 1] - t[first] + dt >= span - 1e-9))


def _came_near(ctx: ShotContext, j: int) -> bool:
    """Whether a ball was measured after the strike within a ball's width of touching pin ``j``."""
    g = ctx.geometry
    f = ctx.frames
    after = f.t >= ctx.t_strike
    d = np.linalg.norm(f.z[after] - g.pin_xy[j], axis=2)
    return bool(np.any(d[np.isfinite(d)] <= 3 * ctx.R + g.pin_r[j]))


def infer_pins(ctx: ShotContext) -> list[PinDown | PinMoved]:
    cfg = ctx.config
    g = ctx.geometry
    f = ctx.frames
    out: list[PinDown | PinMoved] = []
    if f.pin_state is None or len(g.pin_ids) == 0:
        return out
    t = f.t
    settle = t >= t[-1] - cfg.pin_settle_s
    window = np.flatnonzero(t >= ctx.t_strike - cfg.pin_settle_s)
    for j, pid in enumerate(g.pin_ids):
        if j >= f.pin_state.shape[1]:
            break
        st = f.pin_state[:, j]
        standing = (st != PinState.DOWN) & np.isfinite(f.pin_xy[:, j, 0])
        # standing when the shot began: read standing three frames running from just before the strike
        # (a pin knocked over in the last shot is set up on its spot between shots, as late as the strike)
        up = standing[window]
        runs = np.flatnonzero(up[:-2] & up[1:-1] & up[2:]) if len(up) >= 3 else np.zeros(0, dtype=int)
        if not len(runs):
            continue  # down all along: it fell in an earlier shot
        k_up = int(window[runs[0]])
        n_up = 3
        while k_up + n_up < len(t) and standing[k_up + n_up] and t[k_up + n_up] < ctx.t_strike:
            n_up += 1
        down_end = np.mean(st[settle] == PinState.DOWN) > 0.5 or _lay_down(st[k_up:] == PinState.DOWN, t[k_up:], ctx.dt,
                                                                              cfg.pin_settle_s)
        if down_end:
            first = np.flatnonzero(st[k_up:] == PinState.DOWN)
            t_first = float(t[k_up + first[0]]) if len(first) else float(t[-1])
            t_hit = _kink_time(ctx, j, t_first)
            if t_hit is None:
                t_hit = _graze_time(ctx, j, t_first)
            out.append(PinDown(t_s=t_hit if t_hit is not None else t_first, pin=pid,
                               xy_mm=(float(g.pin_xy[j, 0]), float(g.pin_xy[j, 1])), confidence=0.95))
            continue
        xy0 = np.nanmedian(f.pin_xy[k_up:k_up + n_up, j], axis=0)
        tail = settle & standing
        if not np.any(tail):
            continue
        xy1 = np.nanmedian(f.pin_xy[tail, j], axis=0)
        # (only a ball moves a pin: one set back on its spot at the strike has not moved)
        shifted = float(np.linalg.norm(xy1 - xy0)) > cfg.pin_moved_mm and _came_near(ctx, j)
        t_hit = _kink_time(ctx, j, float(t[-1]))
        conf = 0.9 if shifted else 0.75
        if t_hit is None:
            t_hit = _graze_time(ctx, j, float(t[-1]))
            conf = 0.9 if shifted else 0.7
        if shifted or t_hit is not None:
            if t_hit is None:
                moved = np.flatnonzero(st[k_up:] == PinState.MOVED)
                t_hit = float(t[k_up + moved[0]]) if len(moved) else float(t[-1])
            out.append(PinMoved(t_s=t_hit, pin=pid, xy_mm=(float(xy1[0]), float(xy1[1])), confidence=conf))
    return out
