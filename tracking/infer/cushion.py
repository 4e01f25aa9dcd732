"""Ball-cushion contacts: which cushion (the profile's ids), when and where on its nose.

* A kink of a moving ball whose centre is then one radius from a cushion nose (alongside the
  cushion, not in a pocket mouth), with the velocity across the cushion turning from in to out:
  the time is when the piece before it reaches the cushion line. Near a pocket the jaw points count
  as the cushion they end.
* A bounce seen in the distance from the cushion line alone (:func:`_bounces`): the distance falls
  along one straight segment and rises along another, and the two segments meet at the line (a
  slow roll into a cushion that hardly comes back; a fast ball whose bounce the pieces of free
  motion round off into one short curve). The contact time is where the two segments meet, between
  frames.
* A ball resting against a cushion and struck into it by another ball (a rack ball, ficha 3.2)
  bounces off it at once: no kink of its own is seen, only that it leaves along the cushion's
  mirror image of the line of centres.
* A potted ball whose way on from its last sighting reaches a cushion's line alongside the cushion
  (or a jaw point) before the drop circle, coming at it across the line, touched that cushion's end
  at the pocket's mouth on its way in (rattling in off the knuckle within a frame: no kink is seen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tracking.events import BallCushion, Event, OffTable, Pot
from tracking.infer.contact import Contact
from tracking.infer.pot import vanished, way_on
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


@dataclass(frozen=True, slots=True)
class Bounce:
    """A V in a ball's distance from a cushion line, contact at ``t``: ``d = d0 + s_in (time - t)``
    before it and ``d0 + s_out (time - t)`` after it (mm, mm/s), fitted with ``chi2`` over ``dof``
    degrees of freedom."""

    t: float
    d0: float
    s_in: float
    s_out: float
    se_in: float  # standard errors of the slopes
    se_out: float
    chi2: float
    dof: int


def _straight(t: np.ndarray, d: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weighted residual (chi-square) of the best straight line through the first 1, 2, ... n samples
    (0 for the first two)."""
    u = t - t[0]
    # the weighted moments of every prefix, then each prefix's line from its 2x2 normal equations
    s0, s1, s2 = np.cumsum(w), np.cumsum(w * u), np.cumsum(w * u * u)
    sd, sud, sdd = np.cumsum(w * d), np.cumsum(w * u * d), np.cumsum(w * d * d)
    det = s0 * s2 - s1 * s1
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(det > 0, (s0 * sud - s1 * sd) / det, 0.0)
    a = (sd - b * s1) / s0
    chi2 = sdd - a * sd - b * sud
    chi2[:2] = 0.0
    return np.maximum(chi2, 0.0)


def _run(t: np.ndarray, d: np.ndarray, w: np.ndarray, idx: np.ndarray, chi2_max: float) -> np.ndarray:
    """The longest run of ``idx`` (in order away from a bounce, at least two) that one straight line
    fits within the noise: the ball's way into or out of the cushion before anything else changed it."""
    if len(idx) <= 2:
        return idx
    chi2 = _straight(t[idx], d[idx], w[idx])
    n = np.arange(1, len(idx) + 1)
    bad = np.flatnonzero((n >= 3) & (chi2 > chi2_max * (n - 2)))
    return idx[: bad[0]] if len(bad) else idx


def _fit_bounce(t: np.ndarray, d: np.ndarray, w: np.ndarray, into: np.ndarray, out: np.ndarray) -> Bounce | None:
    """The V through samples ``into`` (before the contact) and ``out`` (after it) whose two arms meet
    at one distance: the contact time scanned between the last sample in and the first out."""
    if len(into) + len(out) < 4 or len(into) < 2 or len(out) < 1:
        return None
    ti, di, wi = t[into], d[into], w[into]
    to, do, wo = t[out], d[out], w[out]
    # every contact time at once: a V's three parameters from its normal equations (a contact time on the
    # only sample out leaves that arm no slope to fit: its parameter is then 0, as a least-squares solver's)
    tcs = np.linspace(ti.max(), to.min(), 41)
    A = np.zeros((len(tcs), len(ti) + len(to), 3))
    A[:, :, 0] = 1.0
    A[:, : len(ti), 1] = ti[None] - tcs[:, None]
    A[:, len(ti):, 2] = to[None] - tcs[:, None]
    sw = np.sqrt(np.concatenate([wi, wo]))
    Aw, bw = A * sw[None, :, None], np.concatenate([di, do]) * sw
    N = np.einsum("kni,knj->kij", Aw, Aw)
    r = np.einsum("kni,n->ki", Aw, bw)
    free = np.all(np.abs(Aw).max(axis=1) > 0, axis=1)
    N[~free, 2, 2], r[~free, 2] = 1.0, 0.0  # (only the last arm can lose its slope: ti holds two samples or more)
    c = np.linalg.solve(N, r[..., None])[..., 0]
    chi2s = np.sum((np.einsum("kni,ki->kn", Aw, c) - bw) ** 2, axis=1)
    k = int(np.argmin(chi2s))
    chi2, tc, c, Aw = float(chi2s[k]), float(tcs[k]), c[k], Aw[k]
    cov = np.linalg.pinv(Aw.T @ Aw)
    return Bounce(tc, float(c[0]), float(c[1]), float(c[2]), float(np.sqrt(max(cov[1, 1], 0.0))),
                  float(np.sqrt(max(cov[2, 2], 0.0))), chi2, len(ti) + len(to) - 3)


def _bounces(ctx: ShotContext, m: BallMotion, line) -> list[tuple[Bounce, np.ndarray]]:
    """Bounces of ball ``m`` off cushion ``line`` seen in its distance from the line alone (the
    module docstring), with the centre at the contact."""
    cfg = ctx.config
    f = ctx.frames
    i = m.i
    if m.t_start is None:
        return []  # nudged: its measurements never left the noise of its place (a frozen ball: below)
    k = np.flatnonzero(np.isfinite(f.z[:, i, 0]) & (f.t >= m.t_start - 1e-9))
    if len(k) < 4:
        return []
    t, z = f.t[k], f.z[k, i]
    speed = np.linalg.norm(np.nan_to_num(f.v[k, i]), axis=1)
    w = 1.0 / (m.noise_scale * np.hypot(m.sigma0, cfg.blur_s * speed)) ** 2
    if m.r0 is not None and 1e-6 < f.t[k[0]] - m.t_start < 1.5 * ctx.dt:
        # its rest place at its start is one more sample of its way in (a ball struck at rest a frame's way
        # from a cushion is seen once, or not at all, before it bounces): known as well as the start time
        # is, at the speed it was first seen at
        t = np.concatenate([[m.t_start], t])
        z = np.concatenate([m.r0[None], z])
        w = np.concatenate([[1.0 / np.hypot(m.sigma0, cfg.start_time_s * speed[0]) ** 2], w])
    d = line.distance(z)
    span = max(3, int(round(cfg.bounce_window_s / ctx.dt)))
    clear = max(3.0 * m.noise_scale * m.sigma0, cfg.cushion_tol_mm / 2)
    found: list[tuple[Bounce, np.ndarray]] = []
    for j in range(1, len(t) - 1):
        # the sample nearest the line within apex_window_s (a dip of the noise a sample or two from the
        # apex is none)
        near = np.abs(t - t[j]) <= cfg.apex_window_s + 1e-9
        if d[j] > d[near].min() or d[j] > min(d[j - 1], d[j + 1]):
            continue
        if d[j] > cfg.cushion_tol_mm + max(d[j - 1] - d[j], d[j + 1] - d[j]):
            continue  # it stayed clear of the line by more than a frame's way across
        best = None
        for s in (j - 1, j):  # the sample nearest the line may lie on either arm of the V
            into = _run(t, d, w, np.arange(s, max(s - span, -1), -1), cfg.bounce_chi2)
            away = _run(t, d, w, np.arange(s + 1, min(s + 1 + span, len(t))), cfg.bounce_chi2)
            b = _fit_bounce(t, d, w, into, away)
            if b is None or b.chi2 > cfg.bounce_chi2 * max(b.dof, 1) or abs(b.d0) > cfg.cushion_tol_mm:
                continue  # no V, or one whose arms meet off the line
            if not (b.s_in < -3.0 * b.se_in and b.s_out > 3.0 * b.se_out and b.s_out - b.s_in >= cfg.min_dv_mm_s / 2):
                continue  # no bounce the noise could not make: in towards the line, then out
            if min(d[into[-1]], d[away[-1]]) - b.d0 < clear:
                continue  # it came from, and went back to, no clear distance: a ball rolling along the cushion
            if best is None or b.chi2 / max(b.dof, 1) < best.chi2 / max(best.dof, 1):
                best = b
        if best is None:
            continue
        a = int(np.searchsorted(t, best.t))
        a = min(max(a, 1), len(t) - 1)
        u = (best.t - t[a - 1]) / max(t[a] - t[a - 1], 1e-9)
        xy = z[a - 1] + (z[a] - z[a - 1]) * u
        if not line.spans(xy, ctx.R):
            continue
        found.append((best, xy))
    # one bounce per approach: a V through noise beside the strongest one is the same bounce
    out: list[tuple[Bounce, np.ndarray]] = []
    for b, xy in sorted(found, key=lambda c: -(c[0].s_out - c[0].s_in) / max(np.hypot(c[0].se_in, c[0].se_out), 1e-9)):
        if all(abs(b.t - o.t) >= cfg.bounce_gap_s for o, _ in out):
            out.append((b, xy))
    return sorted(out, key=lambda c: c[0].t)


def infer_cushions(ctx: ShotContext, contacts: list[Contact], left: Sequence[Event] = ()) -> list[BallCushion]:
    """The shot's cushion contacts; ``left`` holds the shot's ``off_table`` events (a ball that flew
    off the table over a cushion did not bounce off it) and its pots (a ball may touch a jaw going in)."""
    out = _cushions(ctx, contacts)
    out += _jaws_going_in(ctx, [e for e in left if isinstance(e, Pot)], out)
    gone = [e for e in left if isinstance(e, OffTable)]
    return [c for c in out if not any(e.ball == c.ball and abs(e.t_s - c.t_s) < 2 * ctx.dt for e in gone)]


def _jaws_going_in(ctx: ShotContext, pots: Sequence[Pot], seen: Sequence[BallCushion]) -> list[BallCushion]:
    """Cushion ends touched by potted balls on their way in, between their last sighting and the drop:
    the ball's last piece, then straight on at its last velocity, reaches a cushion's line alongside
    the cushion (its centre one radius from the nose) or a jaw point (one radius from it) before its
    pocket's drop circle, coming across the line at a fifth of its speed or more (a ball rolling along
    the cushion into the corner touches nothing new). Confidence 0.7: no frame saw it."""
    g = ctx.geometry
    dt = ctx.dt
    out: list[BallCushion] = []
    by_id = {m.id: m for m in ctx.motions}
    for pot in pots:
        m = by_id.get(pot.ball)
        if m is None or not m.moved or not m.pieces or m.k_last < 0 or pot.pocket not in g.pocket_ids:
            continue
        k = g.pocket_ids.index(pot.pocket)
        if g.is_hole[k]:
            continue
        last = vanished(ctx, m)
        p = m.pieces[-1]
        if last is None or not p.t_first <= last[0] <= p.t_last + dt:
            continue
        t_last, xy, v = last
        speed = float(np.linalg.norm(v))
        if speed < ctx.config.min_dv_mm_s:
            continue
        ts, pos = way_on(ctx, m, t_last, xy, v, 120, from_last=True)  # its way on from its last sighting, as a pot reads it
        inside = np.flatnonzero(np.linalg.norm(pos - g.pocket_xy[k], axis=1) <= g.pocket_r[k])
        end = int(inside[0]) if len(inside) else len(ts)
        best = None  # (time, cushion id, contact point)
        for line in g.main_lines:
            d = line.distance(pos[:end])
            hit = np.flatnonzero((d <= 0.0) & line.spans(pos[:end]))
            if len(hit) and hit[0] > 0 and -line.inward * float(v[line.axis]) >= 0.2 * speed:
                j = int(hit[0])
                t = float(ts[j - 1] + (ts[j] - ts[j - 1]) * d[j - 1] / (d[j - 1] - d[j]))
                if best is None or t < best[0]:
                    best = (t, line.id, line.contact_point(pos[j]))
        if len(g.jaw_xy):
            dj = np.linalg.norm(pos[:end, None] - g.jaw_xy[None], axis=2) - ctx.R  # (way, jaws)
            hit = np.argwhere(dj <= 0.0)
            if len(hit) and hit[0][0] > 0:
                j, q = int(hit[0][0]), int(hit[0][1])
                if best is None or float(ts[j]) < best[0]:
                    best = (float(ts[j]), g.jaw_ids[q], (float(g.jaw_xy[q, 0]), float(g.jaw_xy[q, 1])))
        if best is None or best[0] > float(pot.t_s) + 1e-9:
            continue
        t, cid, xy = best
        if any(e.ball == m.id and e.cushion == cid and abs(e.t_s - t) < ctx.config.bounce_gap_s for e in seen):
            continue
        out.append(BallCushion(t_s=t, ball=m.id, cushion=cid, xy_mm=xy, confidence=0.7))
    return out


def _cushions(ctx: ShotContext, contacts: list[Contact]) -> list[BallCushion]:
    cfg = ctx.config
    g = ctx.geometry
    dt = ctx.dt
    out: list[BallCushion] = []
    for m in ctx.moving():
        # (the scoreboard too: a ball runs on over its line unless it is down, 2i, and only a bounce there
        # makes the V in its distance)
        for line in g.lines:
            for b, xy in _bounces(ctx, m, line):
                out.append(BallCushion(t_s=b.t, ball=m.id, cushion=line.id, xy_mm=line.contact_point(xy),
                                       confidence=0.95 if abs(b.d0) < cfg.cushion_tol_mm / 2 else 0.8))
                for kink in m.kinks:
                    if abs(kink.t - b.t) < 1.5 * dt:
                        kink.explained = True
    bounced = list(out)
    for m in ctx.moving():
        for kink in m.kinks:
            if kink.dv < cfg.min_dv_mm_s:
                continue  # (a kink a ball contact explains may still be a cushion too: both in one frame)
            if any(e.ball == m.id and abs(e.t_s - kink.t) < 2 * dt for e in bounced):
                continue  # its bounce was seen already
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
                if any(e.ball == m.id and e.cushion == line.id and abs(e.t_s - kink.t) < cfg.bounce_gap_s for e in bounced):
                    continue  # the same bounce, seen in the distance from the line
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
    # balls sent into a cushion by a contact and back out before a frame saw them again: the piece they
    # are first seen on after it, drawn back to the contact, lies beyond a cushion's line
    for c in contacts:
        for i in (c.a, c.b):
            m = ctx.motions[i]
            after = [p for p in m.pieces if c.t < p.t_first <= c.t + 2.5 * dt]
            before = [q for q in m.pieces if q.t_first < c.t]
            if not after or not before or m.t_start is None or m.t_start > c.t - dt:
                continue  # (a ball the contact set moving from rest: below)
            p = after[0]
            if any(o is not c and i in (o.a, o.b) and c.t < o.t < p.t_first for o in contacts):
                continue  # another ball turned it in between
            for line in g.main_lines:
                back = float(line.distance(p.at(c.t)))
                here = float(line.distance(before[-1].at(c.t)))
                v_away = line.inward * float(p.velocity(p.t_first)[line.axis])
                if back > -cfg.cushion_tol_mm or here < -cfg.cushion_tol_mm or v_away < cfg.min_dv_mm_s / 2:
                    continue  # its way out of the contact does not cross the line, or it did not come from the table
                ts = np.linspace(c.t, p.t_first, 201)
                d = line.distance(p.at(ts))
                k = int(np.argmax(d >= 0.0))
                xy = p.at(float(ts[k]))
                if d[k] < 0.0 or not line.spans(xy, ctx.R):
                    continue
                if any(isinstance(e, BallCushion) and e.ball == m.id and e.cushion == line.id and abs(e.t_s - float(ts[k])) < cfg.bounce_gap_s for e in out):
                    continue  # its bounce was seen
                out.append(BallCushion(t_s=float(ts[k]), ball=m.id, cushion=line.id, xy_mm=line.contact_point(xy), confidence=0.8))
    # balls struck while at rest against a cushion or near it
    for c in contacts:
        b = ctx.motions[c.b]
        a = ctx.motions[c.a]
        if b.r0 is None or not (b.nudged and not b.pieces) and (not b.pieces or b.t_start is None or b.t_start < c.t - 1.5 * dt):
            continue  # (only a ball the contact set moving, if only a little: one already on its way is elsewhere by now)
        pa = a.at(c.t - 1e-4) if a.moved else a.r0
        if pa is None:
            continue
        n = b.r0 - pa
        n = n / max(float(np.linalg.norm(n)), 1e-9)
        v_out = b.pieces[0].velocity(b.pieces[0].t_first) if b.pieces else None
        # how well the rest place is known: the median of its measurements
        frozen = max(cfg.frozen_cushion_mm, 3.0 * 1.2533 * b.sigma0 / np.sqrt(cfg.rest_samples))
        for line in g.main_lines:
            d = float(line.distance(b.r0))
            n_in = -line.inward * float(n[line.axis])  # the part of the blow into the cushion
            d_a = float(line.distance(pa))
            if d_a < 0.0 and line.spans(pa, ctx.R):
                # the striker's path beyond the line: it bounced off this cushion just before the blow
                # and the piece that reached it was drawn on past its bounce; mirrored, it is on the table
                na = b.r0 - pa
                na[line.axis] += 2.0 * line.inward * d_a
                n_in = -line.inward * float(na[line.axis]) / max(float(np.linalg.norm(na)), 1e-9)
            if not line.spans(b.r0) or d > cfg.bounce_reach_mm:
                continue
            if any(e.ball == b.id and e.cushion == line.id and abs(e.t_s - c.t) < 2 * dt for e in out):
                continue  # its bounce was seen
            # the striker's centre can lie no nearer the cushion's line than the frozen ball's: its blow
            # has a part into the cushion, however small (struck along it, the line of centres' angle is
            # lost in the noise of the striker's place), unless the striker lies on the line too (a ball
            # that rested frozen to the same cushion and was sent along it)
            along = a.r0 is not None and abs(float(line.distance(a.r0))) <= frozen and abs(float(line.distance(pa))) <= 3.0 * frozen
            if d <= frozen and (n_in > -cfg.frozen_along_cos if not along else n_in > cfg.frozen_along_cos):
                # a ball against the cushion pushed with any part of the blow into it bounces off it at once
                out.append(BallCushion(t_s=c.t + 1e-4, ball=b.id, cushion=line.id, xy_mm=line.contact_point(b.r0),
                                       confidence=0.85))
            elif v_out is not None and n_in >= cfg.bounce_min_cos and line.inward * float(v_out[line.axis]) > cfg.min_dv_mm_s / 2:
                # sent into the cushion and first seen coming away from it: it bounced before any
                # frame could see it on its way in (the time: its way in at the speed the blow gave
                # it, the striker's speed along the line of centres, or at least its speed out)
                before = [p for p in a.pieces if p.t_first < c.t - dt / 2] if a.moved else []
                blow = abs(float(before[-1].velocity(c.t) @ n)) if before else 0.0
                speed_in = max(blow, float(np.linalg.norm(v_out)), 1e-3) * n_in
                out.append(BallCushion(t_s=c.t + max(d, 0.0) / speed_in, ball=b.id, cushion=line.id,
                                       xy_mm=line.contact_point(b.r0 + n * max(d, 0.0) / n_in), confidence=0.8))
    return out
