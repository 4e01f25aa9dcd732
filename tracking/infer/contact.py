"""Ball-ball contacts: from the closest approach of two balls' paths and the change of their velocities.

Two cases:

* a ball at rest starts to move: some moving ball's path reached one ball width (2R) of its rest
  place when it started. The contact time combines both estimates, each weighted by how sharply it
  fixes the time: the striker's path reaching 2R (sharp when it comes head-on) and the struck ball's
  first piece run back to its rest place (sharp when it leaves fast). A ball frozen against a ball
  that was hit starts with it (a chain, a cluster), from the ball that touched it.
* two moving balls both change velocity at the same moment one ball width apart: their pieces before
  the change are solved for the time the centres were 2R apart.

``a`` is the striking ball: the one closing in faster along the line of centres. A contact hidden
under a cue, hand or arm, or resting on a weak fit, gets a low confidence so that the rules engine
asks the operator instead of guessing.
"""

from __future__ import annotations

import numpy as np

from tracking.events import BallBall
from tracking.geometry import outline_width, polygon_distance
from tracking.infer.shot import BallMotion, ShotContext
from tracking.tracks import TrackState

__all__ = ["Contact", "infer_contacts", "contact_events", "velocity_before"]


class Contact:
    """A contact found (mutable while the shot is analysed)."""

    __slots__ = ("a", "b", "t", "xy", "confidence", "approach")

    def __init__(self, a: int, b: int, t: float, xy: np.ndarray, confidence: float, approach: float):
        self.a, self.b, self.t, self.xy, self.confidence, self.approach = a, b, t, xy, confidence, approach

    def pair(self) -> frozenset[int]:
        return frozenset((self.a, self.b))


def _first_reach(m: BallMotion, target: np.ndarray, dist: float, t0: float, t1: float, n: int = 241) -> tuple[float, float]:
    """The first time in [t0, t1] ball ``m`` comes within ``dist`` of ``target`` (or, if it never
    does, the time of its closest approach) and that closest gap (mm, negative: overlap)."""
    ts = np.linspace(t0, t1, n)
    pos = m.path(ts)
    d = np.linalg.norm(pos - target, axis=1) - dist
    inside = np.flatnonzero(d <= 0)
    k = int(inside[0]) if len(inside) else int(np.argmin(d))
    if len(inside) and k > 0:
        # interpolate the crossing between two samples
        d0, d1 = d[k - 1], d[k]
        f = d0 / (d0 - d1) if d0 != d1 else 0.0
        return float(ts[k - 1] + f * (ts[k] - ts[k - 1])), float(d.min())
    return float(ts[k]), float(d.min())


def _hidden(ctx: ShotContext, xy: np.ndarray, t: float, balls: tuple[int, int]) -> bool:
    """Whether an occluder that can hide a ball (a hand, an arm: not a cue, nor a blob smaller than a
    ball, such as a fast ball's own blurred streak) covered ``xy`` in the frames either side of ``t``
    and took the sight of one of ``balls`` there: a hand or an arm stays a while and hides what is under
    it; what vision leaves over for a frame or beside balls it still sees (cloth uncovered that the
    background has yet to learn again) hides nothing."""
    ts = ctx.frames.t
    after = int(np.searchsorted(ts, t))
    ks = [k for k in (after - 1, after) if 0 <= k < len(ts)]
    covered = all(any(polygon_distance(poly, xy[None])[0] < ctx.R and outline_width(poly) >= 2 * ctx.R
                      for poly in ctx.frames.occluders[k]) for k in ks)
    return covered and not all(np.isfinite(ctx.frames.z[k, i, 0]) for k in ks for i in balls)


def _add(contacts: list[Contact], c: Contact, window_s: float) -> Contact:
    for old in contacts:
        if old.pair() == c.pair() and abs(old.t - c.t) < window_s:
            if c.confidence > old.confidence:
                old.a, old.b, old.t, old.xy, old.confidence, old.approach = c.a, c.b, c.t, c.xy, c.confidence, c.approach
            return old
    contacts.append(c)
    return c


def _oriented(ctx: ShotContext, i: int, j: int, t: float) -> tuple[int, int, float]:
    """(striker, struck, approach speed): the ball closing in faster along the line of centres first."""
    mi, mj = ctx.motions[i], ctx.motions[j]
    pi, pj = mi.at(t - ctx.dt * 0.25), mj.at(t - ctx.dt * 0.25)
    if pi is None or pj is None:
        return i, j, 0.0
    n = pj - pi
    n = n / max(np.linalg.norm(n), 1e-9)
    vi = velocity_before(mi, t, ctx.dt)
    vj = velocity_before(mj, t, ctx.dt)
    ui, uj = float(vi @ n), float(-(vj @ n))
    return (i, j, ui - (-uj)) if ui >= uj else (j, i, uj + ui)


def velocity_before(m: BallMotion, t: float, dt: float) -> np.ndarray:
    """Ball ``m``'s velocity (2,) a quarter of a frame before ``t`` (none before it started moving)."""
    if not m.moved or m.t_start is None or t <= m.t_start + 1e-6:
        return np.zeros(2)
    p = m.piece_at(t - 0.25 * dt)
    return p.velocity(t - 0.25 * dt) if p is not None else np.zeros(2)


def infer_contacts(ctx: ShotContext, known: list[Contact] | None = None) -> list[Contact]:
    """Every ball-ball contact of the shot (striker and struck ball, time, place, confidence), with
    the ``known`` ones (frozen balls pushed at the strike) among them.

    Sets ``cause = "ball"`` on the balls a contact set moving and marks the kinks it explains."""
    cfg = ctx.config
    R2 = 2 * ctx.R
    dt = ctx.dt
    contacts: list[Contact] = list(known or [])
    moving = sorted((m for m in ctx.moving() if m.t_start is not None), key=lambda m: m.t_start)
    # 1. balls set moving from rest
    for b in moving:
        if b.i == ctx.striker or b.r0 is None or b.cause is not None:
            continue
        best: tuple[float, Contact] | None = None
        p_b = b.pieces[0]
        leaving = max(float(np.linalg.norm(p_b.velocity(p_b.t_first))), 1.0)
        # a slow ball's start is seen late: it must go move_mm before three frames say it moved (a rack
        # ball pressed into a cushion comes back at a few centimetres a second)
        late = min(cfg.move_mm / leaving, cfg.slow_start_s)
        for a in ctx.motions:
            # (a ball struck a moment before it struck b, within the same frame interval, may have its
            # start estimated a little after b's: each is run back from the frames after)
            if a is b or not a.moved or a.t_start is None or a.t_start > b.t_start + 0.5 * dt:
                continue
            t_geo, gap = _first_reach(a, b.r0, R2, b.t_start - 2.5 * dt - late, b.t_start + 1.0 * dt)
            if gap > cfg.contact_tol_mm:
                continue
            # weights: how sharply each estimate fixes the time
            va = velocity_before(a, t_geo, dt)
            if late > dt:
                # b left too slowly for its start to time the contact, and a's path may never quite
                # reach b's place (the closest approach has no speed of closing): a's own change of
                # velocity there times it
                turn = [k for k in a.kinks if not k.explained and abs(k.t - t_geo) <= 1.5 * dt]
                if turn:
                    k = min(turn, key=lambda k: abs(k.t - t_geo))
                    t_geo, va = k.t, k.v_in
            pa = a.at(t_geo)
            n = (b.r0 - pa) / max(np.linalg.norm(b.r0 - pa), 1e-9)
            if a.t_start > b.t_start and a.r0 is not None and len(a.zs) and float((a.zs[0] - a.r0) @ (b.r0 - a.r0)) <= 0.0:
                continue  # started after b, its first step not towards it: b struck it (or a third ball struck both)
            closing = max(float(va @ n), 1.0)
            w_geo, w_back = closing ** 2, leaving ** 2
            t_c = (w_geo * t_geo + w_back * b.t_start) / (w_geo + w_back)
            if abs(t_geo - b.t_start) > cfg.contact_time_tol_s + 2.0 * dt * (1.0 - min(1.0, leaving / 300.0)) + late:
                continue
            score = abs(gap) / cfg.contact_tol_mm + abs(t_geo - b.t_start) / max(dt, 1e-3)
            conf = 0.97 - 0.25 * min(1.0, abs(gap) / cfg.contact_tol_mm)
            xy = b.r0 - n * ctx.R
            if _hidden(ctx, xy, t_c, (a.i, b.i)):
                conf = min(conf, cfg.hidden_confidence)
            c = Contact(a.i, b.i, t_c, xy, conf, closing)
            if best is None or score < best[0]:
                best = (score, c)
        # a ball struck so soon after it left its place that no piece of its motion before the
        # contact could be fitted: b lies in its line of fire, within the way it could have gone
        if best is None:
            best = _line_of_fire(ctx, b)
        # a chain: a ball at rest touching b that was itself hit at that moment
        for c_old in list(contacts):
            if best is not None:
                break
            for k in (c_old.a, c_old.b):
                mk = ctx.motions[k]
                if k == b.i or mk.r0 is None:
                    continue
                if np.linalg.norm(mk.r0 - b.r0) - R2 < cfg.chain_gap_mm and abs(c_old.t - b.t_start) < 2.5 * dt:
                    n = (b.r0 - mk.r0) / max(np.linalg.norm(b.r0 - mk.r0), 1e-9)
                    best = (0.0, Contact(k, b.i, c_old.t + 1e-4, b.r0 - n * ctx.R, min(c_old.confidence, 0.9), 0.0))
                    break
        if best is None:
            # nothing fits closely, but a moving ball was right there as b left: a contact seen badly
            # (a cluster, a blurred pass) is far likelier than a hand; said with a low confidence
            best = _loose(ctx, b)
        if best is not None:
            hit = best[1]
            blocker = _blocker(ctx, hit)
            if blocker is not None:
                # the striker reached a ball at rest touching b first (a cluster passes the hit on,
                # the ball in the middle hardly moving)
                c_mid, t_mid = blocker
                mid = ctx.motions[c_mid]
                n = (mid.r0 - ctx.motions[hit.a].at(t_mid)) / max(float(np.linalg.norm(mid.r0 - ctx.motions[hit.a].at(t_mid))), 1e-9)
                _add(contacts, Contact(hit.a, c_mid, t_mid, mid.r0 - n * ctx.R, min(hit.confidence, 0.9), hit.approach), 3 * dt)
                mid.cause = mid.cause or "ball"
                nb = (b.r0 - mid.r0) / max(float(np.linalg.norm(b.r0 - mid.r0)), 1e-9)
                hit = Contact(c_mid, b.i, t_mid + 1e-4, b.r0 - nb * ctx.R, min(hit.confidence, 0.9), 0.0)
            c = _add(contacts, hit, 3 * dt)
            b.cause = "ball"
            _explain_kinks(ctx.motions[c.a], c.t, dt)
    # 1b. balls nudged (moved a little, or struck into a pocket, no frame showing them moving): the
    # ball whose path reached them
    for b in ctx.motions:
        if not b.nudged or b.cause is not None or b.r0 is None:
            continue
        best_n: tuple[float, Contact] | None = None
        for a in moving:
            if a.ts.size == 0:
                continue
            t_geo, gap = _first_reach(a, b.r0, R2, float(a.t_start), float(a.ts[-1]), n=max(241, int((a.ts[-1] - a.t_start) / dt * 20)))
            if gap > cfg.contact_tol_mm:
                continue
            t_geo = _reach_before_turn(a, b.r0, R2, t_geo, dt)
            k = b.k_last + 1
            if 0 < k < ctx.frames.n_frames and t_geo > ctx.frames.t[k] and ctx.frames.state[k, b.i] != TrackState.OCCLUDED:
                # b, seen in its place until a frame and gone from the next with nothing over it (struck
                # into a pocket), was struck between the two: a path reaching its place well after that
                # is not what struck it; one a little after (its way out bent by spin, run back) is
                if t_geo > ctx.frames.t[k] + 1.5 * dt:
                    continue
                t_geo = 0.5 * float(ctx.frames.t[k - 1] + ctx.frames.t[k])
            if best_n is None or t_geo < best_n[0]:
                pa = a.at(t_geo)
                n = (b.r0 - pa) / max(float(np.linalg.norm(b.r0 - pa)), 1e-9)
                xy = b.r0 - n * ctx.R
                conf = cfg.hidden_confidence if _hidden(ctx, xy, t_geo, (a.i, b.i)) else 0.7
                best_n = (t_geo, Contact(a.i, b.i, t_geo, xy, min(conf, 0.7), 0.0))
        if best_n is not None:
            c = _add(contacts, best_n[1], 3 * dt)
            b.cause = "ball"
            _explain_kinks(ctx.motions[c.a], c.t, dt)
    # 2. two moving balls changing velocity together
    for i_m in moving:
        for kink in i_m.kinks:
            if kink.explained:
                continue
            for j_m in moving:
                if j_m is i_m or j_m.t_start is None or j_m.t_start > kink.t + dt:
                    continue
                pj = j_m.at(kink.t)
                if pj is None:
                    continue
                gap = float(np.linalg.norm(kink.xy - pj)) - R2
                if abs(gap) > cfg.contact_tol_mm:
                    continue
                other = [k for k in j_m.kinks if abs(k.t - kink.t) < 2.0 * dt]
                if not other:
                    continue
                t_c = _moving_contact_time(i_m, j_m, kink.t, dt)
                a, b, approach = _oriented(ctx, i_m.i, j_m.i, t_c)
                pa, pb = ctx.motions[a].at(t_c), ctx.motions[b].at(t_c)
                xy = 0.5 * (pa + pb) if pa is not None and pb is not None else kink.xy
                conf = 0.95 - 0.25 * min(1.0, abs(gap) / cfg.contact_tol_mm)
                if _hidden(ctx, xy, t_c, (a, b)):
                    conf = min(conf, cfg.hidden_confidence)
                # both balls moving two frames before it: another touch than the one that may have
                # set either moving (a ball struck from close by, back off a cushion into its striker)
                again = max(i_m.t_start, j_m.t_start) <= t_c - 2.0 * dt
                _add(contacts, Contact(a, b, t_c, xy, conf, approach), (1.5 if again else 3.0) * dt)
                kink.explained = True
                for k in other:
                    k.explained = True
                break
    _causal(contacts)
    contacts.sort(key=lambda c: c.t)
    return contacts


def _causal(contacts: list[Contact]) -> None:
    """A ball set moving by a contact strikes nothing before it: a contact of the struck ball as the
    striker comes after the contact that struck it (times estimated apart can cross within a frame); but
    not one of the same two balls (a ball struck from close by, back off a cushion into its striker)."""
    for _ in range(len(contacts)):
        changed = False
        for c in contacts:
            causes = [c0.t for c0 in contacts
                      if c0 is not c and c0.b == c.a and c0.a != c.b and c0.t < c.t + 0.1 and c0.t >= c.t]
            if causes and c.t <= max(causes):
                c.t = max(causes) + 1e-4
                changed = True
        if not changed:
            break


def _loose(ctx: ShotContext, b: BallMotion) -> tuple[float, Contact] | None:
    """The moving ball closest to b's rest place when b left, if within ``loose_contact_mm`` of touching."""
    cfg = ctx.config
    best = None
    for a in ctx.motions:
        if a is b or not a.moved or a.t_start is None or a.t_start > b.t_start:
            continue
        for t in (b.t_start - ctx.dt, b.t_start, b.t_start + ctx.dt):
            pa = a.at(t)
            if pa is None:
                continue
            gap = float(np.linalg.norm(pa - b.r0)) - 2 * ctx.R
            if gap <= cfg.loose_contact_mm and (best is None or gap < best[0]):
                n = (b.r0 - pa) / max(float(np.linalg.norm(b.r0 - pa)), 1e-9)
                best = (gap, Contact(a.i, b.i, b.t_start, b.r0 - n * ctx.R, cfg.loose_confidence, 0.0))
    return best


def _blocker(ctx: ShotContext, hit: Contact) -> tuple[int, float] | None:
    """A ball at rest, touching the struck ball, that the striker's path reached before the contact:
    the one the striker really hit (its index and the time its path reached it)."""
    cfg = ctx.config
    a, b = ctx.motions[hit.a], ctx.motions[hit.b]
    best = None
    for c in ctx.motions:
        if c is a or c is b or c.r0 is None or not c.present0:
            continue
        if c.moved and c.t_start is not None and c.t_start < hit.t - 2 * ctx.dt:
            continue  # already moving: not a ball at rest in the way
        if float(np.linalg.norm(c.r0 - b.r0)) - 2 * ctx.R > cfg.chain_gap_mm:
            continue
        t_c, gap = _first_reach(a, c.r0, 2 * ctx.R, max(a.t_start or hit.t, hit.t - 3 * ctx.dt), hit.t + 0.5 * ctx.dt)
        if gap <= 0.0 and t_c <= hit.t + 1e-6 and (best is None or t_c < best[1]):
            best = (c.i, t_c)
    return best


def _line_of_fire(ctx: ShotContext, b: BallMotion) -> tuple[float, Contact] | None:
    """A moving ball ``a`` whose first measured step from its rest place points at ``b`` (b within a
    ball width of that ray, ahead of it, reachable at the speed of that step by the time b left)."""
    cfg = ctx.config
    best = None
    for a in ctx.motions:
        if a is b or not a.moved or a.t_start is None or a.r0 is None or len(a.zs) == 0 or a.t_start > b.t_start:
            continue
        step = a.zs[0] - a.r0
        travel = float(np.linalg.norm(step))
        if travel < 1e-6:
            continue
        u = step / travel
        rel = b.r0 - a.r0
        ahead = float(rel @ u)
        off = abs(float(rel @ np.array([-u[1], u[0]])))
        speed = travel / max(float(a.ts[0]) - a.t_start, 1e-3)
        if ahead <= 0 or off > 2 * ctx.R + cfg.contact_tol_mm:
            continue
        # the centre distance 2R is reached ``reach`` along the ray
        reach = ahead - np.sqrt(max((2 * ctx.R) ** 2 - off ** 2, 0.0))
        if reach > speed * (b.t_start - a.t_start) + 3 * cfg.contact_tol_mm + 2.0 * ctx.dt * speed:
            continue
        pa = a.r0 + u * reach
        n = (b.r0 - pa) / max(float(np.linalg.norm(b.r0 - pa)), 1e-9)
        xy = b.r0 - n * ctx.R
        conf = cfg.hidden_confidence if _hidden(ctx, xy, b.t_start, (a.i, b.i)) else 0.75
        c = Contact(a.i, b.i, b.t_start, xy, conf, speed)
        if best is None or reach < best[0]:
            best = (reach, c)
    return best


def _reach_before_turn(m: BallMotion, target: np.ndarray, dist: float, t: float, dt: float) -> float:
    """When ``m``, which turned within a frame and a half of ``t``, came within ``dist`` of ``target``
    on its way in: its piece before the turn run on to the next piece's first sample. (Between two
    pieces the path follows the later one back, so a ball glancing off another between two frames
    makes its closest approach on its way out, a frame or more after the blow.) ``t`` if it does not."""
    turns = [k for k in m.kinks if abs(k.t - t) <= 1.5 * dt]
    if not turns:
        return t
    k = min(turns, key=lambda k: abs(k.t - t))
    p = m.pieces[k.piece]
    t_end = m.pieces[k.piece + 1].t_first if k.piece + 1 < len(m.pieces) else p.t_last + dt
    ts = np.linspace(p.t_first, t_end, 121)
    d = np.linalg.norm(p.at(ts) - target, axis=1) - dist
    inside = np.flatnonzero(d <= 0)
    if not len(inside) or inside[0] == 0:
        return t
    j = int(inside[0])
    f = d[j - 1] / (d[j - 1] - d[j]) if d[j - 1] != d[j] else 0.0
    return min(t, float(ts[j - 1] + f * (ts[j] - ts[j - 1])))


def _explain_kinks(m: BallMotion, t: float, dt: float) -> None:
    for k in m.kinks:
        if abs(k.t - t) < 2.0 * dt:
            k.explained = True


def _moving_contact_time(i_m: BallMotion, j_m: BallMotion, t_k: float, dt: float) -> float:
    """When the two balls' centres were 2R apart just before their velocities changed, from the
    pieces before the change (searched a frame either side of the kink)."""
    ts = np.linspace(t_k - 1.5 * dt, t_k + 0.5 * dt, 301)
    pi = i_m.piece_at(t_k - 0.5 * dt)
    pj = j_m.piece_at(t_k - 0.5 * dt)
    if pi is None or pj is None:
        return t_k
    d = np.linalg.norm(pi.at(ts) - pj.at(ts), axis=1)
    R2 = float(np.linalg.norm(i_m.at(t_k) - j_m.at(t_k)))  # about 2R
    inside = np.flatnonzero(d <= max(R2, 1.0))
    if len(inside):
        return float(ts[inside[0]])
    return float(ts[int(np.argmin(d))])


def contact_events(ctx: ShotContext, contacts: list[Contact]) -> list[BallBall]:
    return [BallBall(t_s=max(c.t, ctx.t_strike), a=ctx.ids[c.a], b=ctx.ids[c.b], xy_mm=(float(c.xy[0]), float(c.xy[1])),
                     confidence=round(float(c.confidence), 3)) for c in contacts]
