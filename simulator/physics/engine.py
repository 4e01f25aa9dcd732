"""The event loop of one shot: every ball moves on a quadratic in time between changes of state
(sliding, rolling, airborne, at rest; the motion model is in :mod:`simulator.physics`), the next
event is the earliest contact root over all pairs (:mod:`simulator.physics.roots`) or the end of a
piece of motion, and the simulation jumps to it and resolves it
(:mod:`simulator.physics.collisions`). :func:`simulate` plays a cue strike."""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np

from simulator.physics.collisions import BallBallContacts, CushionContacts, PinContacts, PocketContacts, _cross
from simulator.physics.roots import _first_entry, _point_quartic
from simulator.physics.timeline import ShotResult, Timeline, _PinSeg, _Seg
from simulator.physics.world import (
    _EPS_V,
    DEFAULT_PARAMS,
    G_MM_S2,
    BallState,
    PhysicsError,
    PhysicsParams,
    Shot,
    World,
    check_free,
    open_holes,
)
from simulator.scene import BallStatus
from tracking.events import AtRest, BallBall, BallCushion, BallPlaced, CameraEvent, CueContact, Jump, OffTable, Returned, ShotStart


_CHATTER_S = 0.005  # repeated contacts of one pair closer than this are one touch


class _B:
    """A ball during simulation: one piece of quadratic motion from ``t0``."""

    __slots__ = ("id", "status", "mode", "t0", "r", "v", "a", "w", "alpha", "wz_rate", "h", "vz", "t_end",
                 "segs", "leaving", "skimming")

    def __init__(self, s: BallState):
        self.id = s.id
        self.status = s.status
        self.segs: list[_Seg] = []
        self.leaving = False
        self.skimming: set[str] = set()


class _Sim(BallBallContacts, CushionContacts, PocketContacts, PinContacts):
    """One shot (or a hand's touch) played out: the balls' pieces of motion, the next event found as
    the earliest root over every pair (:meth:`_next`), and each event resolved by its ``_on_<kind>``
    handler (:mod:`simulator.physics.collisions`)."""

    def __init__(self, world: World, t0: float, params: PhysicsParams, rng: np.random.Generator):
        self.world = world
        self.p = params
        self.prof = world.profile
        self.R = world.profile.ball_radius_mm
        self.rng = rng
        self.t = t0
        self.t0 = t0
        self.events: list[CameraEvent] = []
        self.last_contact: dict[tuple, float] = {}
        self.balls = [_B(s) for s in world.balls]
        self.index = {b.id: i for i, b in enumerate(self.balls)}
        for b, s in zip(self.balls, world.balls):
            self._set(b, t0, s.xy_mm, s.velocity_mm_s, s.spin_rad_s, s.h_mm, s.vz_mm_s, s.status)
        self.pins = {p.id: p for p in world.pins}
        self.pin_segs: dict[str, list[_PinSeg]] = {
            p.id: [_PinSeg(t0, p.xy_mm, p.state, p.lean_dir_rad)] for p in world.pins
        }
        self.pin_radius = {q.id: q.radius_mm for q in self.prof.pins}
        self.scheduled: list[tuple[float, str, tuple]] = []  # (t, kind, handler arguments)
        # the static geometry
        L, W = self.prof.length_mm, self.prof.width_mm
        cushions = [(c.id, c.a_mm, c.b_mm, c.normal) for c in self.prof.cushions]
        if world.scoreboard_down and self.prof.scoreboard_x_mm is not None:
            x = self.prof.scoreboard_x_mm
            cushions = [c for c in cushions if c[0] != "R"]
            cushions = [
                (cid, a, (min(bb[0], x), bb[1]), n) if cid in ("T", "B") else (cid, a, bb, n) for cid, a, bb, n in cushions
            ]
            cushions.append(("scoreboard", (x, 0.0), (x, W), (-1.0, 0.0)))
        self.cushions = cushions
        self.jaws: list[tuple[str, tuple[float, float]]] = []
        for pk in self.prof.pockets:
            for jaw in pk.jaws_mm:
                owner = min(cushions, key=lambda c: min(math.dist(c[1], jaw), math.dist(c[2], jaw)))
                self.jaws.append((owner[0], jaw))
        self.holes = open_holes(world)
        self.bounds = (-self.R, L + self.R, -self.R, W + self.R)
        # bar billiards: the board standing behind the far end (under the scoreboard) throws back a
        # ball that flies over the foot cushion; it may land on the table again (Returned, 2d a)
        self.backboard_x = L + self.prof.rail_width_mm - self.R if self.prof.kind == "bar_billiards" else None

    def _set(self, b: _B, t: float, r, v, w, h: float, vz: float, status: BallStatus) -> None:
        """Start a new piece of motion for ``b`` at ``t`` from the given state."""
        p, R = self.p, self.R
        b.t0 = t
        b.r = (float(r[0]), float(r[1]))
        b.status = status
        b.h, b.vz = float(h), float(vz)
        b.a = (0.0, 0.0)
        b.alpha = (0.0, 0.0)
        b.wz_rate = 0.0
        b.t_end = math.inf
        vx, vy = float(v[0]), float(v[1])
        wx, wy, wz = (float(w[0]), float(w[1]), float(w[2]))
        gz = 0.0
        if status not in (BallStatus.ON_TABLE, BallStatus.AIRBORNE):
            b.mode = "gone"
            b.v = (0.0, 0.0)
            b.w = (0.0, 0.0, 0.0)
            b.h, b.vz = 0.0, 0.0
        elif b.h > 1e-9 or b.vz > 1e-9:
            b.mode = "air"
            b.status = BallStatus.AIRBORNE
            b.v, b.w = (vx, vy), (wx, wy, wz)
            gz = G_MM_S2
            b.t_end = t + (b.vz + math.sqrt(b.vz * b.vz + 2 * G_MM_S2 * max(b.h, 0.0))) / G_MM_S2
        else:
            b.h, b.vz = 0.0, 0.0
            b.status = BallStatus.ON_TABLE
            ux, uy = vx - R * wy, vy + R * wx
            u = math.hypot(ux, uy)
            speed = math.hypot(vx, vy)
            if wz != 0.0:
                b.wz_rate = -math.copysign(p.spin_decay_rad_s2, wz)
            if u > 1e-6 * max(1.0, speed) and u > 1e-4:
                b.mode = "slide"
                f = p.mu_slide * G_MM_S2
                b.a = (-f * ux / u, -f * uy / u)
                k = 5.0 * f / (2.0 * R)
                b.alpha = (-k * uy / u, k * ux / u)
                b.v, b.w = (vx, vy), (wx, wy, wz)
                b.t_end = t + 2.0 * u / (7.0 * f)
            elif speed > _EPS_V:
                b.mode = "roll"
                f = p.mu_roll * G_MM_S2
                b.a = (-f * vx / speed, -f * vy / speed)
                b.v, b.w = (vx, vy), (-vy / R, vx / R, wz)
                b.t_end = t + speed / f
            else:
                b.mode = "rest"
                b.v, b.w = (0.0, 0.0), (0.0, 0.0, 0.0)
                b.wz_rate = 0.0
        b.segs.append(_Seg(t, b.status, b.r, b.v, b.a, b.h, b.vz, gz))

    def _state(self, b: _B, t: float):
        """Position, velocity, spin, height and vertical speed of ``b`` at ``t``."""
        tau = t - b.t0
        r = (b.r[0] + b.v[0] * tau + 0.5 * b.a[0] * tau * tau, b.r[1] + b.v[1] * tau + 0.5 * b.a[1] * tau * tau)
        v = (b.v[0] + b.a[0] * tau, b.v[1] + b.a[1] * tau)
        wz = b.w[2]
        if b.wz_rate:
            wz = wz + b.wz_rate * tau
            if wz * b.w[2] < 0:
                wz = 0.0
        if b.mode == "slide":
            w = (b.w[0] + b.alpha[0] * tau, b.w[1] + b.alpha[1] * tau, wz)
        elif b.mode == "roll":
            w = (-v[1] / self.R, v[0] / self.R, wz)
        else:
            w = (b.w[0], b.w[1], wz)
        if b.mode == "air":
            h = b.h + b.vz * tau - 0.5 * G_MM_S2 * tau * tau
            vz = b.vz - G_MM_S2 * tau
        else:
            h, vz = 0.0, 0.0
        return r, v, w, h, vz

    def _restart(self, b: _B, t: float, r=None, v=None, w=None, h=None, vz=None, status=None) -> None:
        r0, v0, w0, h0, vz0 = self._state(b, t)
        self._set(b, t, r if r is not None else r0, v if v is not None else v0, w if w is not None else w0,
                  h if h is not None else h0, vz if vz is not None else vz0, status if status is not None else b.status)

    def _local(self, b: _B, t: float):
        """Coefficients of b's motion in tau = time since t: (r, v, a, h, vz, gz)."""
        r, v, _, h, vz = self._state(b, t)
        gz = G_MM_S2 if b.mode == "air" else 0.0
        return r, v, b.a, h, vz, gz

    def _next(self):
        """The earliest next event: (time, kind, data)."""
        t = self.t
        best: tuple[float, str, tuple] | None = None
        contacts: list[tuple[float, tuple]] = []

        def consider(tt: float, kind: str, data: tuple) -> None:
            nonlocal best
            if kind == "ball":
                contacts.append((tt, data))
            if best is None or tt < best[0]:
                best = (tt, kind, data)

        moving = [b for b in self.balls if b.mode in ("slide", "roll", "air")]
        present = [b for b in self.balls if b.mode in ("slide", "roll", "air", "rest")]
        loc = {b.id: self._local(b, t) for b in present}
        for tt, kind, args in self.scheduled:
            consider(tt, kind, args)
        R = self.R
        for b in moving:
            consider(b.t_end, "transition", (b.id,))
            horizon = b.t_end - t
            r, v, a, h, vz, gz = loc[b.id]
            reach = math.hypot(*v) * horizon + 0.5 * math.hypot(*a) * horizon * horizon
            # other balls
            for o in present:
                if o is b or (o.mode in ("slide", "roll", "air") and self.index[o.id] < self.index[b.id]):
                    continue
                ro, vo, ao, ho, vzo, gzo = loc[o.id]
                hz = min(horizon, o.t_end - t)
                px, py = r[0] - ro[0], r[1] - ro[1]
                reach_o = 0.0 if o.mode == "rest" else math.hypot(*vo) * hz + 0.5 * math.hypot(*ao) * hz * hz
                if math.hypot(px, py) - (reach + reach_o) > 2 * R + 1.0:
                    continue
                qx, qy = v[0] - vo[0], v[1] - vo[1]
                sx, sy = a[0] - ao[0], a[1] - ao[1]
                dh0, dvz, dg = h - ho, vz - vzo, -(gz - gzo)
                c = [
                    0.25 * (sx * sx + sy * sy) + 0.25 * dg * dg,
                    qx * sx + qy * sy + dvz * dg,
                    qx * qx + qy * qy + px * sx + py * sy + dvz * dvz + dh0 * dg,
                    2 * (px * qx + py * qy) + 2 * dh0 * dvz,
                    px * px + py * py + dh0 * dh0 - 4 * R * R,
                ]
                tt = _first_entry(c, hz)
                if tt is not None:
                    consider(t + tt, "ball", (b.id, o.id))
            if b.leaving:
                if self.backboard_x is not None and v[0] > 0:
                    tt = (self.backboard_x - r[0]) / v[0]
                    if 0 <= tt <= horizon:
                        consider(t + tt, "backboard", (b.id,))
                continue
            # cushions (a line at distance R from the nose)
            for cid, pa, pb, n in self.cushions:
                d0 = n[0] * (r[0] - pa[0]) + n[1] * (r[1] - pa[1]) - R
                if d0 - reach > 0:
                    continue
                dv = n[0] * v[0] + n[1] * v[1]
                da = n[0] * a[0] + n[1] * a[1]
                tt = _first_entry([0.5 * da, dv, d0], horizon)
                if tt is None:
                    continue
                x = r[0] + v[0] * tt + 0.5 * a[0] * tt * tt
                y = r[1] + v[1] * tt + 0.5 * a[1] * tt * tt
                ex, ey = pb[0] - pa[0], pb[1] - pa[1]
                ln = math.hypot(ex, ey)
                s = ((x - pa[0]) * ex + (y - pa[1]) * ey) / ln
                if 0.0 <= s <= ln:
                    consider(t + tt, "cushion", (b.id, cid))
            # jaw points
            for cid, jaw in self.jaws:
                px, py = r[0] - jaw[0], r[1] - jaw[1]
                if math.hypot(px, py) - reach > R:
                    continue
                tt = _first_entry(_point_quartic(px, py, v, a, R), horizon)
                if tt is not None:
                    consider(t + tt, "jaw", (b.id, cid, jaw))
            if b.mode == "air":
                continue
            for pk in self.prof.pockets:
                px, py = r[0] - pk.xy_mm[0], r[1] - pk.xy_mm[1]
                if math.hypot(px, py) - reach > pk.radius_mm:
                    continue
                tt = _first_entry(_point_quartic(px, py, v, a, pk.radius_mm), horizon)
                if tt is not None:
                    consider(t + tt, "capture", (b.id, pk.id))
            if self.prof.pockets:
                x0, x1, y0, y1 = self.bounds
                for k, (pos, vel, acc, lim, sign) in enumerate(
                    ((r[0], v[0], a[0], x0, -1), (r[0], v[0], a[0], x1, 1), (r[1], v[1], a[1], y0, -1), (r[1], v[1], a[1], y1, 1))
                ):
                    tt = _first_entry([-0.5 * sign * acc, -sign * vel, -sign * (pos - lim)], horizon)
                    if tt is not None:
                        consider(t + tt, "bounds", (b.id,))
            for hole in self.holes:
                px, py = r[0] - hole.xy_mm[0], r[1] - hole.xy_mm[1]
                if hole.id in b.skimming:
                    if math.hypot(px, py) <= hole.radius_mm + 1e-6:
                        continue  # crossing it now: the exit is not an event
                    b.skimming.discard(hole.id)
                if math.hypot(px, py) - reach > hole.radius_mm:
                    continue
                tt = _first_entry(_point_quartic(px, py, v, a, hole.radius_mm), horizon)
                if tt is not None:
                    consider(t + tt, "hole", (b.id, hole.id))
            for pid, pin in self.pins.items():
                if not pin.up:
                    continue
                px, py = r[0] - pin.xy_mm[0], r[1] - pin.xy_mm[1]
                rr = R + self.pin_radius.get(pid, 11.0)
                if math.hypot(px, py) - reach > rr:
                    continue
                tt = _first_entry(_point_quartic(px, py, v, a, rr), horizon)
                if tt is not None:
                    consider(t + tt, "pin", (b.id, pid))
        if best is not None and best[1] == "ball":
            # every ball-ball contact at the same instant is resolved together (a split, a cluster)
            same = tuple(d for tt, d in contacts if tt <= best[0] + 1e-9)
            return (best[0], "balls", (same,))
        return best

    def run(self) -> None:
        for _ in range(self.p.max_events):
            nxt = self._next()
            if nxt is None:
                return
            t, kind, data = nxt
            self.t = max(self.t, t)
            getattr(self, "_on_" + kind)(*data)
        raise PhysicsError(f"simulation did not settle after {self.p.max_events} events (t = {self.t:.3f} s)")

    def _emit(self, e: CameraEvent) -> None:
        """Record an event; a contact repeating the same pair within ``_CHATTER_S`` (a ball frozen to a
        cushion or a ball, pressed twice in one instant) is one touch, so it is recorded once."""
        key = None
        if isinstance(e, BallBall):
            key = ("bb", frozenset((e.a, e.b)))
        elif isinstance(e, BallCushion):
            key = ("bc", e.ball, e.cushion)
        if key is not None:
            last = self.last_contact.get(key)
            self.last_contact[key] = e.t_s
            if last is not None and e.t_s - last < _CHATTER_S:
                return
        self.events.append(e)

    def _on_transition(self, bid: str) -> None:
        b = self.balls[self.index[bid]]
        t = self.t
        r, v, w, h, vz = self._state(b, t)
        if b.mode == "air":
            if b.leaving:
                b.leaving = False
                if self.prof.contains(r, self.R):
                    self._emit(Returned(t_s=t, ball=bid, xy_mm=r))
                    self._set(b, t, r, v, w, 0.0, 0.0, BallStatus.ON_TABLE)
                else:
                    self._set(b, t, r, (0.0, 0.0), (0, 0, 0), 0.0, 0.0, BallStatus.OFF_TABLE)
                return
            if not self.prof.contains(r):
                pk = self._pocket_near(r)
                if pk is not None:
                    self._pot(b, pk, r)
                else:
                    self._emit(OffTable(t_s=t, ball=bid, xy_mm=r))
                    self._set(b, t, r, (0.0, 0.0), (0, 0, 0), 0.0, 0.0, BallStatus.OFF_TABLE)
                return
            self._set(b, t, r, v, w, 0.0, 0.0, BallStatus.ON_TABLE)
            return
        if b.mode == "slide":
            speed = math.hypot(*v)
            self._set(b, t, r, v, (-v[1] / self.R, v[0] / self.R, w[2]), 0.0, 0.0, BallStatus.ON_TABLE)
            if speed <= _EPS_V:
                self._set(b, t, r, (0, 0), (0, 0, 0), 0.0, 0.0, BallStatus.ON_TABLE)
        else:  # roll -> rest
            self._set(b, t, r, (0.0, 0.0), (0.0, 0.0, 0.0), 0.0, 0.0, BallStatus.ON_TABLE)
        if b.mode == "rest":
            self._check_rest_over_hole(b, r)

    def _on_cue(self, bid: str, ux: float, uy: float, push: float) -> None:
        self.scheduled = [s for s in self.scheduled if not (s[1] == "cue" and s[2][0] == bid)]
        b = self.balls[self.index[bid]]
        if b.mode == "gone":
            return
        r, v, w, h, vz = self._state(b, self.t)
        self._emit(CueContact(t_s=self.t, ball=bid, xy_mm=r))
        self._set(b, self.t, r, (v[0] + ux * push, v[1] + uy * push), w, h, vz, b.status)

    def finish(self, t_end: float) -> tuple[World, Timeline]:
        for pid, segs in self.pin_segs.items():
            if segs[-1].state == "falling" and t_end < segs[-1].t0 + 0.15:
                t_end = segs[-1].t0 + 0.15
        states = []
        for b in self.balls:
            r, *_ = self._state(b, t_end)
            states.append(BallState(b.id, r, b.status))
        pins = tuple(self.pins[p.id] for p in self.world.pins)
        for pid, segs in self.pin_segs.items():
            if segs[-1].state == "falling":
                segs.append(_PinSeg(segs[-1].t0 + 0.15, segs[-1].xy_mm, "fallen", segs[-1].lean_dir_rad))
        world = replace(self.world, balls=tuple(states), pins=pins, t_s=t_end)
        tl = Timeline(self.t0, t_end, {b.id: b.segs for b in self.balls}, self.pin_segs, self.world.scoreboard_down)
        return world, tl


def strike_state(shot: Shot, radius_mm: float, params: PhysicsParams = DEFAULT_PARAMS):
    """Velocity (mm/s), spin (rad/s) and launch (vz mm/s) a cue strike gives a ball.

    The tip's impulse acts at the offset point on the ball's surface: side ``a`` and height ``b``
    (fractions of R) give ``omega = (5 v / 2R) (a * (s x d) + b * (z x d))`` with d the direction and
    s the player's right; a strike at ``top = 0.4`` gives natural roll at once."""
    dx, dy = shot.unit
    el = math.radians(shot.elevation_deg)
    v = shot.speed_mm_s
    vh = v * math.cos(el)
    vz = v * math.sin(el) * params.jump_launch if shot.elevation_deg > 0 else 0.0
    k = 5.0 * vh / (2.0 * radius_mm)
    d = (dx, dy, 0.0)
    right = (-dy, dx, 0.0)
    z_cross_d = (-dy, dx, 0.0)
    s_cross_d = _cross(right, d)
    w = tuple(k * (shot.side * s_cross_d[i] + shot.top * z_cross_d[i]) for i in range(3))
    return (vh * dx, vh * dy), w, vz

def _second_touch(world: World, shot: Shot, t0: float, params: PhysicsParams,
                  rng: np.random.Generator) -> tuple[float, float] | None:
    """When the cue, following through along the shot's line, catches the struck ball again, and the
    speed that second touch adds along the line (None: it never does).

    The tip goes on at the ball's speed over ``cue_speed_gain`` for ``cue_follow_mm`` from the ball's
    place; a free ball runs away from it, so only a ball slowed within that reach (by a ball close in
    front) is caught. The touch is an impact of the tip on the ball: the ball gains ``cue_speed_gain``
    times the tip's speed over its own along the line. The shot is played once without the second
    touch (on a copy of the random state) to find it."""
    trial = simulate(world, replace(shot, double_hit=False, place_xy_mm=None), t0, params, copy.deepcopy(rng))
    ux, uy = shot.unit
    v_tip = shot.speed_mm_s / params.cue_speed_gain
    x0, y0 = world.ball(shot.ball).xy_mm

    def gap(t: float) -> tuple[float, float]:
        """How far the ball's back is ahead of the tip at ``t``, and the ball's speed along the line."""
        pose = trial.timeline.ball_pose(shot.ball, t)
        ahead = (pose.xy_mm[0] - x0) * ux + (pose.xy_mm[1] - y0) * uy
        vx, vy = pose.velocity_mm_s
        return ahead - v_tip * (t - t0), vx * ux + vy * uy

    t_end = min(t0 + params.cue_follow_mm / v_tip, trial.timeline.t_end_s)
    step = 2e-4
    lo = None
    t = t0 + step
    while t <= t_end:
        if gap(t)[0] <= 0.0:
            lo, hi = t - step, t
            break
        t += step
    if lo is None or gap(lo)[0] <= 0.0:
        return None  # never caught (or never away from the tip at all: a ball frozen to another)
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if gap(mid)[0] > 0.0:
            lo = mid
        else:
            hi = mid
    v_ball = gap(lo)[1]
    if v_ball >= v_tip:
        return None
    return hi, params.cue_speed_gain * (v_tip - v_ball)


def jump_shot(ball: str, direction_deg: float, airborne_s: float, horizontal_speed_mm_s: float,
              params: PhysicsParams = DEFAULT_PARAMS, **kw) -> Shot:
    """A jump shot that keeps ``ball`` in the air for ``airborne_s`` while it travels at
    ``horizontal_speed_mm_s`` (so it covers ``airborne_s * horizontal_speed_mm_s`` before landing):
    the launch ``vz = g T / 2`` comes from ``jump_launch * v sin(elevation)``."""
    if airborne_s <= 0 or horizontal_speed_mm_s <= 0:
        raise PhysicsError("a jump needs a positive airborne time and horizontal speed")
    vz = G_MM_S2 * airborne_s / 2.0
    v_up = vz / params.jump_launch
    elevation = math.degrees(math.atan2(v_up, horizontal_speed_mm_s))
    speed = horizontal_speed_mm_s / math.cos(math.radians(elevation))
    return Shot(ball, direction_deg, speed, elevation_deg=elevation, **kw)

def simulate(world: World, shot: Shot, t0_s: float | None = None, params: PhysicsParams = DEFAULT_PARAMS,
             rng: np.random.Generator | int | None = None) -> ShotResult:
    """Play ``shot`` on ``world`` from ``t0_s`` (default ``world.t_s``) until everything stops.

    Events come in time order: ShotStart (with every ball's position), then contacts, pots, jumps,
    pins, and AtRest last (with positions and standing pins)."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    t0 = world.t_s if t0_s is None else float(t0_s)
    ball = world.ball(shot.ball)
    pre: list[CameraEvent] = []
    if shot.place_xy_mm is not None:
        xy = (float(shot.place_xy_mm[0]), float(shot.place_xy_mm[1]))
        if not ball.on_table or math.dist(ball.xy_mm, xy) > 1e-6:
            check_free(world, shot.ball, xy)
            ball = BallState(shot.ball, xy)
            world = world.with_ball(ball)
            pre.append(BallPlaced(t_s=t0, ball=shot.ball, xy_mm=xy))
    if ball.status is not BallStatus.ON_TABLE:
        raise PhysicsError(f"ball {shot.ball!r} is {ball.status.value}, not on the table: it cannot be struck")
    R = world.profile.ball_radius_mm
    v, w, vz = strike_state(shot, R, params)
    sim = _Sim(world, t0, params, rng)
    sim.events.extend(pre)
    sim.events.append(ShotStart(t_s=t0, ball=shot.ball, xy_mm=ball.xy_mm, positions=world.positions()))
    b = sim.balls[sim.index[shot.ball]]
    sim._set(b, t0, ball.xy_mm, v, w, 0.0, vz, BallStatus.AIRBORNE if vz > 0 else BallStatus.ON_TABLE)
    if vz > 0:
        sim.events.append(Jump(t_s=t0, ball=shot.ball, xy_mm=ball.xy_mm, airborne_s=2.0 * vz / G_MM_S2))
    if shot.double_hit and vz == 0:
        touch = _second_touch(world, shot, t0, params, rng)
        if touch is not None:
            dx, dy = shot.unit
            sim.scheduled.append((touch[0], "cue", (shot.ball, dx, dy, touch[1])))
    sim.run()
    t_end = max([sim.t] + [e.t_s for e in sim.events])
    world_after, tl = sim.finish(t_end)
    sim.events.append(AtRest(t_s=tl.t_end_s, positions=world_after.positions(), pins=world_after.standing_pins()))
    return ShotResult(tuple(sorted(sim.events, key=lambda e: e.t_s)), world_after, tl)
