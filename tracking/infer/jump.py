"""Jumps: a ball off the cloth (vision's ``AIRBORNE`` with a height) during a shot.

Each airborne spell's heights are fitted with the free flight ``h(t) = vz (t - t0) - g/2 (t - t0)^2``
(g known, so a linear least-squares fit of two numbers), whose roots give the take-off and the
landing between frames; the event is logged at the take-off with ``airborne_s``, the flight time.
A spell starting at the strike (a jump shot) takes off at the strike.

Vision reads no height off a fast ball (motion blur stretches its outline out of round), so most
jump shots come with no airborne spell at all; :func:`parallax_jumps` reads the struck ball's flight
off its parallax (the camera's place known), and :func:`implied_jumps` adds the jumps the paths prove:
a ball that left the table over a cushion, and a ball whose path ran through a ball at rest that
stayed put (Sinuca de Ficha 5.4: the cue ball jumping a ball).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from tracking.events import Jump
from tracking.infer.shot import BallMotion, ShotContext
from tracking.tracks import TrackState

__all__ = ["infer_jumps", "implied_jumps", "parallax_jumps", "landing_time", "G_MM_S2"]

G_MM_S2 = 9810.0

log = logging.getLogger(__name__)


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


def _residuals(A: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The least weighted residuals (k,) of paths ``z`` ((n, 2), or (k, n, 2)) on the bases ``A`` (k, n, p),
    with weights ``w`` ((n,) or (k, n)): every fit at once, by its normal equations."""
    w = np.broadcast_to(w, A.shape[:2])
    z = np.broadcast_to(z, A.shape[:2] + (2,))
    Aw = A * w[:, :, None]
    M = np.einsum("kni,knj->kij", Aw, A) + 1e-9 * np.eye(A.shape[2])
    b = np.einsum("kni,knd->kid", Aw, z)
    coef = np.linalg.solve(M, b)
    return np.einsum("kn,knd->k", w, z * z) - np.einsum("kid,kid->k", coef, b)


def parallax_jumps(ctx: ShotContext, contacts: list) -> list[Jump]:
    """A jump shot's flight read off the struck ball's path when vision read no height (a blurred ball).

    Vision places a ball on the plane of a resting ball's centre; one ``h`` higher is seen further from
    the point under the camera, by its distance from it times ``h / (H - R - h)`` (``H`` the camera's
    height): 10 to 40 mm for a jump shot. So a flight from the strike bends the measured path out and,
    where the ball lands, abruptly back onto its line; a ball on the cloth bends only smoothly (friction
    changes its velocity, never at once), or at a ball or a cushion.

    From the strike to the struck ball's first contact with a ball or its first approach to a cushion
    (at most ``flight_window_s``), each flight ``h(t) = g/2 (t - t0)(t0 + T - t)`` (``T`` up to
    ``flight_max_s``) is tried on the samples up to ``flight_after_s`` past its landing, two or more of
    them after it: the places moved back along their rays from the camera to the flight's height must
    fit a flight (from the rest place at one velocity, as nothing slows a ball in the air, then any
    quadratic from where it lands: ``v min(u, T) + v' (u - T)+ + a (u - T)+^2``) better than the places as
    measured fit a ball on the cloth (a quadratic bending smoothly into another at some sample:
    ``v u + a u^2 + b (u - u_b)+^2``, as many numbers) by ``flight_gain`` (noise units squared), fit as
    well as the noise lets them, and be moved by ``flight_shift_sigmas`` of the noise somewhere (better
    by ``flight_ask_gain`` only: a jump said with a confidence that makes the rules engine ask). Both
    paths leave the rest place at the best time within half a frame of the strike's estimate (the first
    piece run back to it, bent by the flight itself). The camera's place is the calibration's
    (``ctx.camera_xyh_mm``); without it nothing is read."""
    cfg = ctx.config
    cam = ctx.camera_xyh_mm
    if cam is None or ctx.striker < 0:
        return []
    m = ctx.motions[ctx.striker]
    if not m.moved or m.r0 is None or not len(m.ts):
        return []
    t0 = float(ctx.t_strike)
    t_end = t0 + cfg.flight_window_s
    for c in contacts:
        if m.i in (c.a, c.b):
            t_end = min(t_end, float(c.t) - 0.5 * ctx.dt)
    sel = (m.ts > t0) & (m.ts <= t_end)
    speed = np.array([np.linalg.norm(m.piece_at(t).velocity(t)) for t in m.ts])
    # a cushion bends the path at once too: up to the first place from which the ball could reach a
    # cushion's line (a radius and the noise off it) before the next frame
    reach = ctx.R + 10.0 + speed * ctx.dt
    near = np.flatnonzero(sel & (np.array([ctx.geometry_inside(z) for z in m.zs]) < reach))
    if len(near):
        sel[near[0] + 1:] = False
    if np.count_nonzero(sel) < 5:
        return []
    c_xy, H = np.asarray(cam[:2], dtype=np.float64), float(cam[2]) - ctx.R  # the camera over the balls' centres' plane
    ts, zs = m.ts[sel], m.zs[sel] - m.r0
    n = len(ts)
    speed = speed[sel]
    sigma = np.hypot(m.sigma0, cfg.blur_s * speed) * m.noise_scale
    starts = t0 + np.arange(-0.5, 0.5 + 1e-9, 0.125) * ctx.dt
    starts = starts[starts < ts[0]]
    flights = np.arange(2 * ctx.dt, cfg.flight_max_s + 1e-9, ctx.dt / 4)
    S, F = np.meshgrid(starts, flights, indexing="ij")
    S, F = S.ravel(), F.ravel()  # every (take-off, flight time)
    u = ts[None, :] - S[:, None]  # (k, n)
    inside = u <= F[:, None] + cfg.flight_after_s
    landed = np.count_nonzero(inside & (u > F[:, None]), axis=1)
    ok = landed >= 2
    if not ok.any():
        return []
    S, F, u, inside = S[ok], F[ok], u[ok], inside[ok]
    w = inside / sigma[None, :] ** 2
    # the flight: each place moved back along its ray to the flight's height, then fitted
    h = np.clip(0.5 * G_MM_S2 * u * (F[:, None] - u), 0.0, 0.9 * H)
    back = (c_xy - m.r0) + (zs[None] - (c_xy - m.r0)) * ((H - h) / H)[:, :, None]
    after = np.clip(u - F[:, None], 0.0, None)
    flown = _residuals(np.stack([np.minimum(u, F[:, None]), after, after * after], axis=2), back, w)
    # on the cloth: the places as measured, bending at each sample in turn (the best bend counts)
    bends = np.clip(u[:, :, None] - u[:, None, :n - 2], 0.0, None) ** 2  # (k, n, bend)
    k, nb = len(S), n - 2
    A0 = np.concatenate([np.repeat(np.stack([u, u * u], axis=2)[:, None], nb, axis=1),
                         bends.transpose(0, 2, 1)[:, :, :, None]], axis=3).reshape(k * nb, n, 3)
    rolled = _residuals(A0, zs, np.repeat(w, nb, axis=0)).reshape(k, nb).min(axis=1)
    # per flight time: each path from its own best take-off
    gain = np.full(len(flights), -np.inf)
    pick = np.zeros(len(flights), dtype=int)
    for j, T in enumerate(flights):
        rows = np.flatnonzero(F == T)
        if len(rows):
            a, b = rows[np.argmin(flown[rows])], rows[np.argmin(rolled[rows])]
            gain[j], pick[j] = rolled[b] - flown[a], a
    j = int(np.argmax(gain))
    a = pick[j]
    dof = 2 * int(np.count_nonzero(inside[a])) - 6
    shift = float(np.max(np.linalg.norm(back[a] - zs, axis=1)[inside[a]] / sigma[inside[a]]))
    # the path so moved must fit as well as the noise lets it (a path that fits nothing, a ball struck
    # into another it was not seen to meet, says nothing of a flight)
    fits = flown[a] <= 2.0 * dof + 10.0
    log.debug("flight of %s from %.3f s: %.3f s long, gain %.2f, moved %.1f noise, fit %s", m.id, t0, float(F[a]),
              float(gain[j]), shift, fits, extra={"flight": (m.id, t0, float(F[a]), float(gain[j]), shift, bool(fits))})
    if gain[j] < cfg.flight_ask_gain or shift < cfg.flight_shift_sigmas or not fits:
        return []
    # (a flight that explains the path better, but by less than ``flight_gain``: said with a confidence
    # under the rules engines' threshold, so that the operator is asked whether the cue ball jumped)
    conf = 0.9 if gain[j] >= 2 * cfg.flight_gain else 0.75 if gain[j] >= cfg.flight_gain else 0.55
    return [Jump(t_s=max(float(S[a]), t0), ball=m.id, xy_mm=(float(m.r0[0]), float(m.r0[1])),
                 airborne_s=round(float(F[a]), 4), confidence=conf)]
