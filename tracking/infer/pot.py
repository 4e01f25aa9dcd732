"""Pots: which pocket or bed hole, and when, in drop order.

A ball that leaves the table during a shot and is not seen again on the cloth is potted when its
path runs into a pocket's drop circle (or a bed hole): the time is when its last piece reaches the
circle (the drop order comes from these times, not from the frame it vanished in). A ball seen in a
pocket's net is potted there. A ball struck at rest into a pocket faster than any frame shows (last
seen still as a contact reached it, never seen again) is potted where its way along the line of
centres runs, at a low confidence: the camera did not see it go. A ball that stops in the jaws stays
on the table: it is no pot, and a hand lifting it out later is a ``ball_removed``. A ball coming to
rest on a bed hole's edge and dropping later (bar billiards 2f b) is potted with ``edge_wait_s``, the
time it sat there, unless another ball reached it first (then it was knocked in, no earlier than that).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tracking.events import Pot
from tracking.geometry import TableGeometry
from tracking.infer.contact import Contact, velocity_before
from tracking.infer.jump import landing_time
from tracking.infer.shot import BallMotion, ShotContext
from tracking.tracks import TrackState

__all__ = ["infer_pots", "vanished", "flew_over", "way_on"]


def vanished(ctx: ShotContext, m: BallMotion) -> tuple[float, np.ndarray, np.ndarray] | None:
    """For a ball that was on the table and is no longer at the end of the shot: its last seen time,
    place and velocity; None for a ball still on the table (or never on it)."""
    if m.k_last < 0 or m.end_state in (TrackState.SEEN, TrackState.OCCLUDED, TrackState.MISSING, TrackState.AIRBORNE):
        return None
    t_last = float(ctx.frames.t[m.k_last])
    z = ctx.frames.z[m.k_last, m.i]
    if m.moved and m.pieces:
        p = m.pieces[-1]
        return t_last, p.at(t_last), p.velocity(t_last)
    return t_last, z, np.zeros(2)


def way_on(ctx: ShotContext, m: BallMotion, t_last: float, xy: np.ndarray, v: np.ndarray, n: int,
           from_last: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ball's way at ``n`` times (n,) from the start of its last piece (its last sighting if it
    never moved, or with ``from_last``) to ``pot_horizon_frames`` past its last sighting, and its places
    there (n, 2): the piece up to the last sighting, then straight on from ``xy`` at the last velocity ``v``."""
    p = m.pieces[-1] if m.moved and m.pieces else None
    ts = np.linspace(p.t_first if p is not None and not from_last else t_last, t_last + ctx.config.pot_horizon_frames * ctx.dt, n)
    pos = p.at(ts) if p is not None else np.repeat(xy[None], n, axis=0)
    after = ts > t_last
    pos[after] = xy + np.outer(ts[after] - t_last, v)
    return ts, pos


def _entry(ctx: ShotContext, m: BallMotion, t_last: float, xy: np.ndarray, v: np.ndarray, k: int) -> float:
    """When the ball's path reached drop circle ``k`` (before its last sighting if it was already inside)."""
    g = ctx.geometry
    centre, r = g.pocket_xy[k], g.pocket_r[k]
    if m.moved and m.pieces:
        ts, pos = way_on(ctx, m, t_last, xy, v, 600)
        d = np.linalg.norm(pos - centre, axis=1) - r
        inside = np.flatnonzero(d <= 0)
        if len(inside):
            j = int(inside[0])
            if j == 0:
                return float(ts[0])
            return float(ts[j - 1] + (ts[j] - ts[j - 1]) * d[j - 1] / (d[j - 1] - d[j]))
    return t_last + 0.5 * ctx.dt


def _beyond_pocket_back(ctx: ShotContext, z: np.ndarray) -> bool:
    """Whether a place measured on the cloth (not in a net) lies over a six-pocket table's pocket further
    out than a ball in it can be: its centre more than the drop circle's radius less a ball's radius (and
    ``beyond_line_mm``) past the pocket's centre, away from the cloth. Only a ball in the air over the
    pocket is seen there: vision places a ball on the plane of a resting ball's centre, so one dropping
    in, or lying in the net, is seen nearer the point under the camera, and one flying over further out."""
    g = ctx.geometry
    n = int(np.count_nonzero(~g.is_hole))
    if n == 0 or len(z) == 0:
        return False
    centre, r = g.pocket_xy[:n], g.pocket_r[:n]
    out = centre - np.clip(centre, 0.0, [g.length_mm, g.width_mm])  # away from the playing surface
    size = np.linalg.norm(out, axis=1)
    ok = size > 1e-6
    out = out[ok] / size[ok, None]
    centre, r = centre[ok], r[ok]
    rel = z[:, None, :] - centre[None]  # (sightings, pockets, 2)
    depth = (rel * out[None]).sum(axis=2)
    aside = np.abs(rel[..., 0] * out[None, :, 1] - rel[..., 1] * out[None, :, 0])
    return bool(np.any((depth > r - ctx.R + ctx.config.beyond_line_mm) & (aside < r)))


def _way_crosses_a_cushion(ctx: ShotContext, m: BallMotion, t_last: float, xy: np.ndarray, v: np.ndarray) -> bool:
    """Whether the ball's way on from its last sighting (its last piece, then straight on at its last
    velocity for ``pot_horizon_frames``) crosses a cushion's line alongside the cushion before it comes
    into any drop circle: a ball not seen again after that did not come off the cushion, it flew over.
    (Going ``beyond_line_mm`` beyond the line: a ball rolling along a cushion, frozen to it, runs on the
    line itself, and its fitted path wanders a fraction of a millimetre either side.)"""
    return _cushion_before_pocket(ctx.geometry, way_on(ctx, m, t_last, xy, v, 200)[1], ctx.config.beyond_line_mm)


def _cushion_before_pocket(g: TableGeometry, pos: np.ndarray, beyond_mm: float = 0.0) -> bool:
    """Whether the way through the places ``pos`` (n, 2) goes ``beyond_mm`` over a cushion's line
    alongside the cushion (not in a pocket's mouth) before it comes into any drop circle."""
    in_pocket = np.flatnonzero(np.any(np.linalg.norm(pos[:, None] - g.pocket_xy[None], axis=2) <= g.pocket_r[None], axis=1))
    end = int(in_pocket[0]) if len(in_pocket) else len(pos)
    for line in g.main_lines:
        d = line.distance(pos[:end])
        cross = np.flatnonzero(d <= -beyond_mm)
        if len(cross) and d[0] > 0 and bool(line.spans(pos[cross[0]])):
            return True
    return False


def flew_over(ctx: ShotContext, m: BallMotion, t_last: float, xy: np.ndarray, v: np.ndarray) -> bool:
    """Whether the ball was seen beyond a cushion's line alongside the cushion or beyond a pocket's back
    (where only a ball in the air can be), or its way on crossed a cushion line alongside its cushion
    (not in a pocket's mouth) before it could reach a drop circle, or, in the air when last seen, it was
    seen beyond the table's edge over no drop circle or its free flight comes down beyond the table's
    edge clear of every pocket: it flew off the table over the cushion (as the physics of a jump over the nose
    has it) or over a pocket, and fell in none."""
    f = ctx.frames
    g = ctx.geometry
    seen = np.flatnonzero(np.isfinite(f.z[: m.k_last + 1, m.i, 0]))[-3:]
    # measured beyond a cushion's line alongside the cushion, where no ball on the cloth can be (vision
    # reads no height off a fast ball, so one flying over the nose is reported on the cloth)
    z = f.z[seen, m.i]
    if any(np.any((line.distance(z) < -ctx.config.beyond_line_mm) & line.spans(z)) for line in g.main_lines):
        return True
    if _beyond_pocket_back(ctx, z[f.state[seen, m.i] != TrackState.IN_POCKET]):
        return True
    # its way on meets a cushion alongside the cushion before any drop circle, and it was never seen
    # again (not coming off that cushion): it flew over it
    if _way_crosses_a_cushion(ctx, m, t_last, xy, v):
        return True
    # (in the air in one of its last sightings: landing on the rail or beyond, it may read on the cloth)
    if not np.any((f.state[seen, m.i] == TrackState.AIRBORNE) & (f.height[seen, m.i] > ctx.config.jump_min_mm)):
        return False
    if not g.on_table(xy, ctx.R) and not np.any(np.linalg.norm(g.pocket_xy - xy, axis=1) <= g.pocket_r):
        return True  # seen in the air beyond the table's edge, over no drop circle: it passed over the pockets
    t_down = landing_time(ctx, m.i, m.k_last)
    if t_down is not None and t_down > t_last:
        # where its flight comes down: beyond the table's edge and clear of every pocket (its hole, and
        # the mouth and back round it that catch a ball coming down within a pocket's width of the
        # hole), it flew over (high over a pocket's mouth, say) and fell in none
        land = xy + v * (t_down - t_last)
        if not g.on_table(land) and not np.any(np.linalg.norm(g.pocket_xy - land, axis=1) <= 2 * g.pocket_r):
            return True
    return False


def _still_before(ctx: ShotContext, m: BallMotion, t_last: float) -> float:
    """How long the ball stood still where it was last seen before it dropped (0 for a ball that
    dropped on the move): the time since its measurements last strayed from that place."""
    z = ctx.frames.z[: m.k_last + 1, m.i]
    ks = np.flatnonzero(np.isfinite(z[:, 0]))
    if len(ks) < 2:
        return 0.0
    d = np.linalg.norm(z[ks] - z[ks[-1]], axis=1)
    away = np.flatnonzero(d > max(ctx.config.move_mm, 3.0 * m.sigma0))
    first_still = ks[away[-1] + 1] if len(away) else ks[0]
    wait = t_last - float(ctx.frames.t[first_still])
    return wait if wait > 2.5 * ctx.dt else 0.0


def _hidden_drop(ctx: ShotContext, m: BallMotion, t: float, min_s: float) -> bool:
    """Whether something hid the ball where it dropped at ``t``: the tracker had it under an occluder
    from the next frame for at least ``min_s`` (a hand that could have taken it stays that long; a
    blob for a frame or two in the pocket's mouth is the ball itself going down)."""
    f = ctx.frames
    k = min(int(np.argmin(np.abs(f.t - t))) + 1, f.n_frames - 1)
    if f.state[k, m.i] != TrackState.OCCLUDED:
        return False
    run = k
    while run + 1 < f.n_frames and f.state[run + 1, m.i] == TrackState.OCCLUDED:
        run += 1
    return run == f.n_frames - 1 or float(f.t[run] - f.t[k]) + ctx.dt >= min_s


def _struck_unseen(ctx: ShotContext, m: BallMotion, t_last: float, contacts: Sequence[Contact]) -> tuple[int, float, np.ndarray] | None:
    """For a ball last seen at rest as a contact reached it and never seen again (too fast for the
    camera from the blow on): the drop circle that its way along the line of centres, straight from
    where it rested, runs into before it crosses a cushion line alongside its cushion, the time it got
    there at the striker's speed of approach, and the place; None if there is no such blow or way."""
    g = ctx.geometry
    if m.r0 is None:
        return None
    blows = [c for c in contacts if c.b == m.i and -ctx.dt <= c.t - t_last <= 2.0 * ctx.dt]
    if not blows:
        return None
    c = blows[0]
    u = m.r0 - c.xy
    size = float(np.linalg.norm(u))
    if size < 0.5 * ctx.R:
        return None  # no line of centres to follow
    u = u / size
    s = np.linspace(0.0, float(np.hypot(g.length_mm, g.width_mm)), 800)
    pos = m.r0 + s[:, None] * u
    gap = np.linalg.norm(pos[:, None] - g.pocket_xy[None], axis=2) - g.pocket_r[None]
    inside = np.flatnonzero(np.any(gap <= 0.0, axis=1))
    if not len(inside):
        return None
    j = int(inside[0])
    if _cushion_before_pocket(g, pos):
        return None  # it would have come off that cushion, and been seen
    k = int(np.argmin(gap[j]))
    # it leaves along the line of centres at about the striker's speed into the blow (equal masses)
    v_in = float(np.linalg.norm(velocity_before(ctx.motions[c.a], c.t, ctx.dt)))
    return k, float(c.t + s[j] / max(float(c.approach), v_in, 100.0)), pos[j]


def infer_pots(ctx: ShotContext, contacts: Sequence[Contact] = ()) -> tuple[list[Pot], set[int]]:
    """The shot's pots, and the balls they account for (``contacts``: the shot's ball-ball contacts,
    for a ball struck into a pocket too fast for any frame to see it go)."""
    cfg = ctx.config
    g = ctx.geometry
    out: list[Pot] = []
    done: set[int] = set()
    if len(g.pocket_xy) == 0:
        return out, done
    for m in ctx.motions:
        last = vanished(ctx, m)
        if last is None:
            continue
        t_last, xy, v = last
        speed = float(np.linalg.norm(v))
        seen_in_net = bool(np.any(ctx.frames.state[:, m.i] == TrackState.IN_POCKET))
        # the drop circle its path heads into: where it would be a few frames on
        reach = max(speed * cfg.pot_horizon_frames * ctx.dt, 0.0)
        ahead = xy + (v / speed * min(reach, cfg.pot_reach_mm) if speed > 1 else 0.0)
        d_now = np.linalg.norm(g.pocket_xy - xy, axis=1) - g.pocket_r
        d_ahead = np.linalg.norm(g.pocket_xy - ahead, axis=1) - g.pocket_r
        k = int(np.argmin(np.minimum(d_now, d_ahead)))
        near = min(d_now[k], d_ahead[k])
        if seen_in_net or near <= cfg.pot_near_mm:
            if flew_over(ctx, m, t_last, xy, v):
                continue  # off the table, not potted (a net it is claimed in may hold a ball potted before)
            still = not m.moved or (m.nudged and m.cause != "ball")
            # (a ball nothing reached only drops from a hole's edge; otherwise a hand took it)
            if not still or (g.is_hole[k] and d_now[k] > -ctx.R):
                t = _entry(ctx, m, t_last, xy, v, k)
                edge_wait = _still_before(ctx, m, t_last) if g.is_hole[k] else 0.0
                hit = [c.t for c in contacts if m.i in (c.a, c.b) and c.t <= t_last + ctx.dt]
                if hit:  # a ball reached it before it went: knocked in, not dropping from the edge by itself,
                    edge_wait, t = 0.0, max(t, max(hit))  # and not before that ball reached it
                conf = 0.99 if seen_in_net else (0.95 if near <= 0 or d_now[k] < 2 * ctx.R else 0.8)
                if _hidden_drop(ctx, m, t, cfg.hidden_min_s):
                    conf = min(conf, cfg.hidden_confidence)
                pos = xy if t >= t_last else (m.at(t) if m.at(t) is not None else xy)
                out.append(Pot(t_s=t, ball=m.id, pocket=g.pocket_ids[k], xy_mm=(float(pos[0]), float(pos[1])),
                               edge_wait_s=round(edge_wait, 3), confidence=conf))
                done.add(m.i)
                continue
        if speed * ctx.dt < cfg.move_mm and not seen_in_net:
            # last seen still (or hardly moving), and gone: struck by a ball into a pocket faster than the
            # frames show (a blurred streak vision does not find), a pot the camera did not see: the rules ask
            struck = _struck_unseen(ctx, m, t_last, contacts)
            if struck is not None:
                k, t, pos = struck
                out.append(Pot(t_s=t, ball=m.id, pocket=g.pocket_ids[k], xy_mm=(float(pos[0]), float(pos[1])),
                               edge_wait_s=0.0, confidence=cfg.hidden_confidence))
                done.add(m.i)
    out.sort(key=lambda p: p.t_s)
    return out, done
