"""Bar-billiards pins: down, or moved but standing (bar billiards 2h).

Vision reads each pin every frame (standing on its spot, moved, down). A pin is down when it reads
down for most of the last ``pin_settle_s`` of the shot (a wobbling pin misread for a frame does not
count); it moved when it stands at the end more than ``pin_moved_mm`` from where it stood at the
start, or when a ball bounced off it (every touch shifts a pin a little, more than a camera may
see). The time is the moment a ball's path reached the pin (a ball kink there), else the first frame
it read down or moved.
"""

from __future__ import annotations

import numpy as np

from tracking.events import PinDown, PinMoved
from tracking.infer.shot import ShotContext
from vision.types import PinState

__all__ = ["infer_pins"]


def _touch_time(ctx: ShotContext, j: int, before: float) -> float | None:
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


def infer_pins(ctx: ShotContext) -> list[PinDown | PinMoved]:
    cfg = ctx.config
    g = ctx.geometry
    f = ctx.frames
    out: list[PinDown | PinMoved] = []
    if f.pin_state is None or len(g.pin_ids) == 0:
        return out
    t = f.t
    settle = t >= t[-1] - cfg.pin_settle_s
    for j, pid in enumerate(g.pin_ids):
        if j >= f.pin_state.shape[1]:
            break
        st = f.pin_state[:, j]
        if st[0] == PinState.DOWN and np.mean(st[: max(3, int(np.sum(settle)))] == PinState.DOWN) > 0.5:
            continue  # already down when the shot began
        down_end = np.mean(st[settle] == PinState.DOWN) > 0.5
        if down_end:
            first = np.flatnonzero(st == PinState.DOWN)
            t_first = float(t[first[0]]) if len(first) else float(t[-1])
            t_hit = _touch_time(ctx, j, t_first)
            out.append(PinDown(t_s=t_hit if t_hit is not None else t_first, pin=pid,
                               xy_mm=(float(g.pin_xy[j, 0]), float(g.pin_xy[j, 1])), confidence=0.95))
            continue
        standing = st != PinState.DOWN
        xy0 = np.nanmedian(f.pin_xy[: max(3, int(np.sum(settle))), j][standing[: max(3, int(np.sum(settle)))]], axis=0) \
            if np.any(standing[: max(3, int(np.sum(settle)))]) else g.pin_xy[j]
        tail = settle & standing & np.isfinite(f.pin_xy[:, j, 0])
        if not np.any(tail):
            continue
        xy1 = np.nanmedian(f.pin_xy[tail, j], axis=0)
        shifted = float(np.linalg.norm(xy1 - xy0)) > cfg.pin_moved_mm
        t_hit = _touch_time(ctx, j, float(t[-1]))
        if shifted or t_hit is not None:
            if t_hit is None:
                moved = np.flatnonzero(st == PinState.MOVED)
                t_hit = float(t[moved[0]]) if len(moved) else float(t[-1])
            out.append(PinMoved(t_s=t_hit, pin=pid, xy_mm=(float(xy1[0]), float(xy1[1])), confidence=0.9 if shifted else 0.75))
    return out
