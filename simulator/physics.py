"""Event-based physics of one shot: balls on cloth, cushions, pockets, bed holes, pins and jumps.

Units are millimetres, seconds and radians in the table frame of :mod:`calibration.table`; heights
are measured up from the cloth. Everything is deterministic given the world, the shot and a seed.

Motion model (the standard one of Leckie & Greenspan and pooltool, written here in closed form):

* **sliding** (the contact point with the cloth slips): constant deceleration ``mu_slide * g``
  against the slip direction; the slip shrinks linearly and vanishes after
  ``2 |u0| / (7 mu_slide g)``, when the ball starts to roll (a stun shot rolls on at 5/7 of its speed);
* **rolling**: constant deceleration ``mu_roll * g`` against the velocity until the ball stops
  (stopping distance ``v^2 / (2 mu_roll g)``); side spin decays at ``spin_decay_rad_s2``;
* **airborne** (a jumped ball): ballistic flight, no friction; it lands once (no second hop).

Between changes of state every ball moves on a quadratic in time, so every contact time is the root
of a polynomial: a quadratic for a cushion line, a quartic for a ball, a jaw point, a pocket's
capture circle, a bed hole or a pin. The simulator always jumps to the earliest root over all pairs
(real roots isolated between the critical points and refined to the last bit, in plain floating
point), so contact times are exact up to rounding (``docs/simulator-physics.md`` gives the measured
accuracy). Collisions are instantaneous impulses:
ball-ball with restitution and contact friction (the throw of a cut), cushions with restitution,
the nose height above the ball's centre and friction at the nose. The frame is the right-handed
``(x, y, z = x cross y)``; physics is mirror-symmetric, so only the sign of the stored side spin differs
from a picture seen from above.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from calibration.table import TableProfile
from simulator.scene import BallPose, BallStatus, PinPose, Scene
from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    BallTouched,
    CameraEvent,
    CueContact,
    Jump,
    OffTable,
    PinDown,
    PinMoved,
    Pot,
    Returned,
    ShotStart,
)

__all__ = [
    "G_MM_S2",
    "PhysicsParams",
    "PhysicsError",
    "BallState",
    "PinState",
    "World",
    "Shot",
    "Timeline",
    "ShotResult",
    "HandResult",
    "simulate",
    "strike_state",
    "jump_shot",
    "place_ball",
    "remove_ball",
    "touch_ball",
    "join_timelines",
    "still_timeline",
    "open_holes",
    "rack_ficha",
    "rack_brasileira",
    "rack_bar_billiards",
    "rack",
    "trough_xy",
]

G_MM_S2 = 9810.0
_EPS_V = 1e-3  # mm/s: below this a ball is still
_HAND_S = 0.6  # how long a hand takes to lower or lift a ball
_HAND_H_MM = 120.0  # the height a hand carries a ball at
_CHATTER_S = 0.005  # repeated contacts of one pair closer than this are one touch


class PhysicsError(ValueError):
    """An impossible world or shot (unknown ball, a ball not on the table struck, bad parameters)."""


@dataclass(frozen=True, slots=True)
class PhysicsParams:
    """Coefficients of the model; change them to match a real table's cloth, cushions and pockets."""

    mu_slide: float = 0.2  # ball-cloth sliding friction: a slower cloth grips more
    mu_roll: float = 0.01  # rolling resistance: sets how far a rolling ball runs (v^2 / 2 mu g)
    spin_decay_rad_s2: float = 40.0  # how fast side spin dies on the cloth
    e_ball: float = 0.93  # ball-ball restitution
    mu_ball: float = 0.06  # ball-ball friction: the throw of a cut shot (0 = no throw)
    e_cushion: float = 0.8  # cushion restitution (normal speed kept)
    mu_cushion: float = 0.2  # friction at the cushion nose (side spin bends the rebound)
    e_jaw: float = 0.6  # restitution of a pocket jaw
    capture_speed_corner_mm_s: float = 3500.0  # faster than this a ball rattles out of a corner pocket
    capture_speed_middle_mm_s: float = 2600.0  # ... and out of a middle pocket
    rattle_jitter_deg: float = 12.0  # random turn of a rattled ball
    hole_drop_speed_mm_s: float = 900.0  # bar billiards: slower than this over a hole, the ball drops
    hole_edge_band_mm: float = 1.5  # a ball stopping this close outside a hole's rim teeters and drops later
    pin_fall_speed_mm_s: float = 250.0  # normal speed that knocks a pin over
    pin_push_s: float = 0.012  # a soft hit slides the pin by this times the normal speed (capped)
    pin_push_max_mm: float = 15.0
    e_pin: float = 0.4  # a ball's rebound off a pin it does not knock down
    jump_launch: float = 0.5  # vertical launch speed as a fraction of speed * sin(elevation) (the slate's bounce)
    double_hit_delay_s: float = 0.006  # when the cue touches the ball again in a double hit
    double_hit_push: float = 0.12  # the second touch adds this fraction of the shot speed
    max_events: int = 20000  # guard against a pathological cluster


DEFAULT_PARAMS = PhysicsParams()


# ---- the world ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BallState:
    """One ball: where, how it moves and spins, how high (bottom above the cloth) and its status."""

    id: str
    xy_mm: tuple[float, float]
    status: BallStatus = BallStatus.ON_TABLE
    velocity_mm_s: tuple[float, float] = (0.0, 0.0)
    spin_rad_s: tuple[float, float, float] = (0.0, 0.0, 0.0)
    h_mm: float = 0.0
    vz_mm_s: float = 0.0

    @property
    def on_table(self) -> bool:
        return self.status in (BallStatus.ON_TABLE, BallStatus.AIRBORNE)

    @property
    def moving(self) -> bool:
        return (
            math.hypot(*self.velocity_mm_s) > _EPS_V
            or math.hypot(self.spin_rad_s[0], self.spin_rad_s[1]) > 1e-6
            or self.h_mm > 0
            or self.vz_mm_s != 0
        )


@dataclass(frozen=True, slots=True)
class PinState:
    """A bar-billiards pin: ``state`` is ``standing`` (on its spot), ``moved`` (standing elsewhere) or
    ``fallen`` (lying from ``xy_mm`` towards ``lean_dir_rad``)."""

    id: str
    xy_mm: tuple[float, float]
    state: str = "standing"
    lean_dir_rad: float = 0.0

    @property
    def up(self) -> bool:
        return self.state != "fallen"


@dataclass(frozen=True, slots=True, eq=False)
class World:
    """Every ball and pin at time ``t_s``, on one table. Immutable: every change makes a new World.

    ``trough_open`` (bar billiards 2g): potted balls return to the trough until the bar drops;
    ``scoreboard_down`` (2i): the endgame scoreboard is a cushion, and every hole but the two highest
    valued (the 100 and the 200, 2i a) is covered: balls roll over them (:func:`open_holes`)."""

    profile: TableProfile
    balls: tuple[BallState, ...]
    pins: tuple[PinState, ...] = ()
    t_s: float = 0.0
    trough_open: bool = True
    scoreboard_down: bool = False

    def __post_init__(self) -> None:
        ids = [b.id for b in self.balls]
        if len(set(ids)) != len(ids):
            raise PhysicsError(f"world has duplicate ball ids: {ids}")

    def ball(self, ball_id: str) -> BallState:
        for b in self.balls:
            if b.id == ball_id:
                return b
        raise PhysicsError(f"no ball {ball_id!r} in the world (balls: {', '.join(b.id for b in self.balls)})")

    def pin(self, pin_id: str) -> PinState:
        for p in self.pins:
            if p.id == pin_id:
                return p
        raise PhysicsError(f"no pin {pin_id!r} in the world")

    def positions(self) -> dict[str, tuple[float, float]]:
        """Ball id -> xy_mm of every ball on the table."""
        return {b.id: b.xy_mm for b in self.balls if b.on_table}

    def standing_pins(self) -> dict[str, tuple[float, float]]:
        return {p.id: p.xy_mm for p in self.pins if p.up}

    def with_ball(self, ball: BallState) -> "World":
        return replace(self, balls=tuple(ball if b.id == ball.id else b for b in self.balls))

    def at_time(self, t_s: float) -> "World":
        return replace(self, t_s=float(t_s))

    def scene(self, t_s: float | None = None) -> Scene:
        """The still picture of this world."""
        return Scene(
            t_s=self.t_s if t_s is None else t_s,
            balls=tuple(BallPose(b.id, b.xy_mm, b.status, b.h_mm, b.velocity_mm_s) for b in self.balls),
            pins=tuple(PinPose(p.id, p.xy_mm, p.up, 0.0, p.lean_dir_rad) for p in self.pins),
            scoreboard_down=self.scoreboard_down,
        )


@dataclass(frozen=True, slots=True)
class Shot:
    """A cue strike.

    ``direction_deg`` is in the table frame (0 = +x, 90 = +y); ``speed_mm_s`` is the struck ball's
    speed just after the strike; ``side`` and ``top`` are the tip's offsets from the ball's centre as
    fractions of its radius (``side`` > 0: right of centre as the player sees it; ``top`` > 0: above,
    follow; < 0: below, draw). ``elevation_deg`` > 0 plays a jump shot, ``double_hit`` makes the cue
    touch the ball again a few milliseconds later, ``place_xy_mm`` puts the ball there first (bar
    billiards: a ball from the trough placed in the D, 2c)."""

    ball: str
    direction_deg: float
    speed_mm_s: float
    side: float = 0.0
    top: float = 0.0
    elevation_deg: float = 0.0
    double_hit: bool = False
    place_xy_mm: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.speed_mm_s) and 0 < self.speed_mm_s <= 15000):
            raise PhysicsError(f"shot speed must be between 0 and 15000 mm/s, got {self.speed_mm_s!r}")
        if not math.isfinite(self.direction_deg):
            raise PhysicsError(f"shot direction must be a finite angle in degrees, got {self.direction_deg!r}")
        if math.hypot(self.side, self.top) > 0.6:
            raise PhysicsError(
                f"tip offset side={self.side:g}, top={self.top:g} is more than 0.6 of the radius from the centre: a miscue"
            )
        if not 0.0 <= self.elevation_deg <= 80.0:
            raise PhysicsError(f"elevation must be between 0 and 80 degrees, got {self.elevation_deg!r}")

    @property
    def unit(self) -> tuple[float, float]:
        a = math.radians(self.direction_deg)
        return (math.cos(a), math.sin(a))


# ---- timelines -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Seg:
    """A piece of one ball's motion from ``t0``: position r0 + v0 tau + a tau^2 / 2, height
    h0 + vz tau - gz tau^2 / 2 (clamped at 0)."""

    t0: float
    status: BallStatus
    r0: tuple[float, float]
    v0: tuple[float, float] = (0.0, 0.0)
    a: tuple[float, float] = (0.0, 0.0)
    h0: float = 0.0
    vz: float = 0.0
    gz: float = 0.0


@dataclass(frozen=True, slots=True)
class _PinSeg:
    t0: float
    xy_mm: tuple[float, float]
    state: str
    lean_dir_rad: float
    wobble_rad: float = 0.0  # amplitude of a wobble starting at t0 (a soft hit)


class Timeline:
    """Where every ball and pin is at any time between ``t_start_s`` and ``t_end_s``.

    ``at(t_s)`` returns a :class:`~simulator.scene.Scene` (balls and pins only); before the start it
    shows the start, after the end the end."""

    __slots__ = ("t_start_s", "t_end_s", "_balls", "_pins", "_scoreboard_down", "_order")

    def __init__(self, t_start_s: float, t_end_s: float, balls: dict[str, list[_Seg]], pins: dict[str, list[_PinSeg]],
                 scoreboard_down: bool = False):
        self.t_start_s = float(t_start_s)
        self.t_end_s = float(t_end_s)
        self._balls = {k: (tuple(s.t0 for s in v), tuple(v)) for k, v in balls.items()}
        self._pins = {k: (tuple(s.t0 for s in v), tuple(v)) for k, v in pins.items()}
        self._order = tuple(balls)
        self._scoreboard_down = scoreboard_down

    def ball_ids(self) -> tuple[str, ...]:
        return self._order

    def ball_pose(self, ball_id: str, t_s: float) -> BallPose:
        t = min(max(t_s, self.t_start_s), self.t_end_s)
        starts, segs = self._balls[ball_id]
        i = max(0, bisect.bisect_right(starts, t) - 1)
        s = segs[i]
        tau = t - s.t0
        if i + 1 < len(segs):
            tau = min(tau, segs[i + 1].t0 - s.t0)
        tau = max(tau, 0.0)
        x = s.r0[0] + s.v0[0] * tau + 0.5 * s.a[0] * tau * tau
        y = s.r0[1] + s.v0[1] * tau + 0.5 * s.a[1] * tau * tau
        vx, vy = s.v0[0] + s.a[0] * tau, s.v0[1] + s.a[1] * tau
        h = max(0.0, s.h0 + s.vz * tau - 0.5 * s.gz * tau * tau)
        return BallPose(ball_id, (x, y), s.status, h, (vx, vy))

    def pin_pose(self, pin_id: str, t_s: float) -> PinPose:
        t = min(max(t_s, self.t_start_s), self.t_end_s)
        starts, segs = self._pins[pin_id]
        i = max(0, bisect.bisect_right(starts, t) - 1)
        s = segs[i]
        tilt = 0.0
        if s.state == "falling":
            tilt = min(1.0, (t - s.t0) / 0.15) * math.pi / 2
            return PinPose(pin_id, s.xy_mm, tilt < math.pi / 2, tilt, s.lean_dir_rad)
        if s.wobble_rad > 0:
            tau = t - s.t0
            tilt = abs(s.wobble_rad * math.exp(-tau / 0.35) * math.sin(2 * math.pi * 3.0 * tau))
        return PinPose(pin_id, s.xy_mm, s.state != "fallen", tilt, s.lean_dir_rad)

    def at(self, t_s: float) -> Scene:
        return Scene(
            t_s=t_s,
            balls=tuple(self.ball_pose(b, t_s) for b in self._order),
            pins=tuple(self.pin_pose(p, t_s) for p in self._pins),
            scoreboard_down=self._scoreboard_down,
        )


class _Joined:
    """Several timelines one after another; between two of them the earlier one's end holds."""

    __slots__ = ("t_start_s", "t_end_s", "_parts", "_starts")

    def __init__(self, parts: Sequence[Timeline]):
        self._parts = tuple(sorted(parts, key=lambda p: p.t_start_s))
        self._starts = tuple(p.t_start_s for p in self._parts)
        self.t_start_s = self._parts[0].t_start_s
        self.t_end_s = max(p.t_end_s for p in self._parts)

    def _part(self, t_s: float) -> Timeline:
        return self._parts[max(0, bisect.bisect_right(self._starts, t_s) - 1)]

    def at(self, t_s: float) -> Scene:
        return self._part(t_s).at(t_s)

    def ball_pose(self, ball_id: str, t_s: float) -> BallPose:
        return self._part(t_s).ball_pose(ball_id, t_s)

    def pin_pose(self, pin_id: str, t_s: float) -> PinPose:
        return self._part(t_s).pin_pose(pin_id, t_s)


def join_timelines(parts: Sequence[Timeline]) -> Timeline:
    """One timeline over consecutive pieces (shots and hand actions), for rendering a whole clip."""
    if not parts:
        raise PhysicsError("join_timelines needs at least one timeline")
    return _Joined(parts)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True, eq=False)
class ShotResult:
    """What a shot did: its events (exact times), the world when everything stopped, and the motion."""

    events: tuple[CameraEvent, ...]
    world_after: World
    timeline: Timeline


@dataclass(frozen=True, slots=True, eq=False)
class HandResult:
    """A hand action between shots: the new world, its events and the hand's short timeline
    (unpacks as ``world, events, timeline``)."""

    world: World
    events: tuple[CameraEvent, ...]
    timeline: Timeline

    def __iter__(self):
        return iter((self.world, self.events, self.timeline))


# ---- polynomial roots ------------------------------------------------------------------------------


def _polyval(c: Sequence[float], t: float) -> float:
    r = 0.0
    for x in c:
        r = r * t + x
    return r


def _deriv(c: Sequence[float]) -> list[float]:
    n = len(c) - 1
    return [x * (n - i) for i, x in enumerate(c[:-1])]


def _monotone_root(c: Sequence[float], d: Sequence[float], a: float, b: float, fa: float, fb: float) -> float:
    """The root of ``c`` in [a, b], where ``c`` is monotone and changes sign: bisection, accelerated by
    Newton steps that stay inside the bracket, to the last bit."""
    for _ in range(200):
        x = a if abs(fa) < abs(fb) else b
        m = 0.5 * (a + b)
        dx = _polyval(d, x)
        if dx != 0.0:
            xn = x - _polyval(c, x) / dx
            if a < xn < b:
                m = xn
        if m <= a or m >= b:
            break
        fm = _polyval(c, m)
        if fm == 0.0:
            return m
        if (fm > 0.0) == (fa > 0.0):
            a, fa = m, fm
        else:
            b, fb = m, fm
        if b - a <= 4e-16 * max(1.0, abs(a)):
            break
    return a if abs(fa) <= abs(fb) else b


def _real_roots(c: Sequence[float], lo: float, hi: float) -> list[float]:
    """The real roots of the polynomial ``c`` (highest power first) in [lo, hi], in order: the
    critical points (roots of the derivative, recursively) split [lo, hi] into monotone pieces, and
    each piece whose ends differ in sign holds one root. Pure floating point, so the same on every
    machine. A root of even multiplicity (a tangency: no crossing) may be missed."""
    i = 0
    while i < len(c) - 1 and c[i] == 0.0:
        i += 1
    c = c[i:]
    n = len(c) - 1
    if n < 1:
        return []
    if n == 1:
        t = -c[1] / c[0]
        return [t] if lo <= t <= hi else []
    d = _deriv(c)
    pts = [lo] + [x for x in _real_roots(d, lo, hi) if lo < x < hi] + [hi]
    out: list[float] = []
    for a, b in zip(pts, pts[1:]):
        fa, fb = _polyval(c, a), _polyval(c, b)
        if fa == 0.0:
            if not out or out[-1] != a:
                out.append(a)
        elif fb == 0.0:
            out.append(b)
        elif (fa > 0.0) != (fb > 0.0):
            out.append(_monotone_root(c, d, a, b, fa, fb))
    return out


def _first_entry(c: Sequence[float], horizon: float) -> float | None:
    """The first time in [0, horizon] where the polynomial ``c`` (highest power first; ``c(t) < 0``
    means contact) crosses from positive to negative, or 0 when it already is in contact and decreasing."""
    c = list(c)
    while c and abs(c[0]) < 1e-18:
        c.pop(0)
    if len(c) < 2:
        return None
    d = _deriv(c)
    f0, d0 = c[-1], d[-1]
    if f0 <= 1e-9 * max(1.0, abs(f0)) and d0 < 0:
        return 0.0
    for t in _real_roots(c, 0.0, horizon):
        if _polyval(d, t) < 0.0:
            return t
    return None


# ---- the simulation --------------------------------------------------------------------------------


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


class _Sim:
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

    # -- state of one ball ------------------------------------------------------------------------
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

    # -- candidate events ----------------------------------------------------------------------
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

    # -- resolution ------------------------------------------------------------------------------
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

    def _check_rest_over_hole(self, b: _B, r) -> None:
        for hole in self.holes:
            d = math.dist(r, hole.xy_mm)
            if d < hole.radius_mm:
                self._pot(b, hole.id, r)
                return
            if d <= hole.radius_mm + self.p.hole_edge_band_mm:
                wait = float(self.rng.uniform(0.5, 7.0))
                self.scheduled.append((self.t + wait, "edge_drop", (b.id, hole.id, b.t0)))
                return

    def _on_edge_drop(self, bid: str, hole_id: str, since: float) -> None:
        self.scheduled = [s for s in self.scheduled if not (s[1] == "edge_drop" and s[2][0] == bid)]
        b = self.balls[self.index[bid]]
        if b.mode != "rest" or b.t0 != since:
            return  # hit again before it dropped
        r, *_ = self._state(b, self.t)
        wait = self.t - b.t0
        self._pot(b, hole_id, r, edge_wait_s=wait)

    def _on_cue(self, bid: str, ux: float, uy: float, push: float) -> None:
        self.scheduled = [s for s in self.scheduled if not (s[1] == "cue" and s[2][0] == bid)]
        b = self.balls[self.index[bid]]
        if b.mode == "gone":
            return
        r, v, w, h, vz = self._state(b, self.t)
        self._emit(CueContact(t_s=self.t, ball=bid, xy_mm=r))
        self._set(b, self.t, r, (v[0] + ux * push, v[1] + uy * push), w, h, vz, b.status)

    def _pocket_near(self, r) -> str | None:
        best = None
        for pk in self.prof.pockets:
            d = math.dist(r, pk.xy_mm)
            if d <= 2.0 * pk.radius_mm and (best is None or d < best[0]):
                best = (d, pk.id)
        return best[1] if best else None

    def _pot(self, b: _B, where: str, r, edge_wait_s: float = 0.0) -> None:
        self._emit(Pot(t_s=self.t, ball=b.id, pocket=where, xy_mm=r, edge_wait_s=edge_wait_s))
        status = BallStatus.POCKETED
        if self.prof.kind == "bar_billiards" and self.world.trough_open:
            status = BallStatus.IN_TROUGH  # bar billiards 2g: it runs back to the trough
        self._set(b, self.t, r, (0, 0), (0, 0, 0), 0.0, 0.0, status)

    def _on_balls(self, pairs: tuple[tuple[str, str], ...]) -> None:
        """Resolve simultaneous ball-ball contacts: normal impulses J solve
        ``sum_j J_j (n_j . n_k) (s(b_k, j) - s(a_k, j)) = (1 + e) u_k`` (each contact separates at -e
        times its approach speed), contacts that would pull are dropped; then friction at each contact
        (the throw), bounded by ``mu_ball * J``. Equal masses; per unit mass."""
        t, R, p = self.t, self.R, self.p
        ids = sorted({i for pr in pairs for i in pr}, key=lambda i: self.index[i])
        st = {i: self._state(self.balls[self.index[i]], t) for i in ids}
        vel = {i: [st[i][1][0], st[i][1][1]] for i in ids}
        spin = {i: list(st[i][2]) for i in ids}
        cs = []
        strikers: dict[tuple[str, str], tuple[str, str]] = {}
        for a, b in pairs:
            ra, rb = st[a][0], st[b][0]
            nx, ny = rb[0] - ra[0], rb[1] - ra[1]
            dn = math.hypot(nx, ny) or 1.0
            nx, ny = nx / dn, ny / dn
            u = (vel[a][0] - vel[b][0]) * nx + (vel[a][1] - vel[b][1]) * ny
            cs.append((a, b, nx, ny, u))
            # the striker (named first in the event) is the ball running harder into the contact
            strikers[(a, b)] = (a, b) if vel[a][0] * nx + vel[a][1] * ny >= -(vel[b][0] * nx + vel[b][1] * ny) else (b, a)
        active = [k for k, c in enumerate(cs) if c[4] > 0]
        jn = {k: 0.0 for k in range(len(cs))}
        while active:
            m: list[list[float]] = []
            rhs: list[float] = []
            for k in active:
                ak, bk, nxk, nyk, uk = cs[k]
                rhs.append((1.0 + p.e_ball) * uk)
                row = []
                for j in active:
                    aj, bj, nxj, nyj, _ = cs[j]
                    s_b = -1.0 if bk == aj else (1.0 if bk == bj else 0.0)
                    s_a = -1.0 if ak == aj else (1.0 if ak == bj else 0.0)
                    row.append((s_b - s_a) * (nxj * nxk + nyj * nyk))
                m.append(row)
            sol = _solve(m, rhs)
            if all(x >= -1e-12 for x in sol):
                for r_, k in enumerate(active):
                    jn[k] = max(0.0, sol[r_])
                break
            active = [k for r_, k in enumerate(active) if sol[r_] > 0]
        for k, (a, b, nx, ny, u) in enumerate(cs):
            j = jn[k]
            vel[a][0] -= j * nx
            vel[a][1] -= j * ny
            vel[b][0] += j * nx
            vel[b][1] += j * ny
        for k, (a, b, nx, ny, u) in enumerate(cs):
            j = jn[k]
            if p.mu_ball > 0 and j > 0:
                ca, cb = (R * nx, R * ny, 0.0), (-R * nx, -R * ny, 0.0)
                sa = _add((vel[a][0], vel[a][1], 0.0), _cross(spin[a], ca))
                sb = _add((vel[b][0], vel[b][1], 0.0), _cross(spin[b], cb))
                sl = (sa[0] - sb[0], sa[1] - sb[1], sa[2] - sb[2])
                sn = sl[0] * nx + sl[1] * ny
                tan = (sl[0] - sn * nx, sl[1] - sn * ny, sl[2])
                smag = math.sqrt(tan[0] ** 2 + tan[1] ** 2 + tan[2] ** 2)
                if smag > 1e-9:
                    f = min(smag / 7.0, p.mu_ball * j)
                    fd = (-f * tan[0] / smag, -f * tan[1] / smag, -f * tan[2] / smag)  # on a; -fd on b
                    vel[a][0] += fd[0]
                    vel[a][1] += fd[1]
                    vel[b][0] -= fd[0]
                    vel[b][1] -= fd[1]
                    kk = 5.0 / (2.0 * R * R)
                    ta = _cross(ca, fd)
                    tb = _cross(cb, (-fd[0], -fd[1], -fd[2]))
                    spin[a] = [spin[a][i] + kk * ta[i] for i in range(3)]
                    spin[b] = [spin[b][i] + kk * tb[i] for i in range(3)]
            ra = st[a][0]
            first, second = strikers[(a, b)]
            self._emit(BallBall(t_s=t, a=first, b=second, xy_mm=(ra[0] + R * nx, ra[1] + R * ny)))
        for i in ids:
            b = self.balls[self.index[i]]
            self._set(b, t, st[i][0], vel[i], spin[i], st[i][3], st[i][4], b.status)

    def _cushion_impulse(self, b: _B, nx: float, ny: float, e: float, mu: float, sin_t: float):
        """Velocity and spin after hitting a nose with inward normal (nx, ny) whose contact lies
        ``asin(sin_t)`` above the ball's centre. Per unit mass; the cloth takes the vertical part."""
        R = self.R
        r, v, w, h, vz = self._state(b, self.t)
        vn = v[0] * nx + v[1] * ny
        if vn >= 0:
            return r, v, w, h, vz
        cos_t = math.sqrt(max(0.0, 1.0 - sin_t * sin_t))
        jn = (1.0 + e) * (-vn)
        v2 = [v[0] + jn * nx, v[1] + jn * ny]
        w2 = list(w)
        if mu > 0:
            c = (-R * cos_t * nx, -R * cos_t * ny, R * sin_t)
            sc = _add((v[0], v[1], 0.0), _cross(w, c))
            # remove the component along the impulse line (from the contact to the centre)
            ln = (cos_t * nx, cos_t * ny, -sin_t)
            sl = sc[0] * ln[0] + sc[1] * ln[1] + sc[2] * ln[2]
            st = (sc[0] - sl * ln[0], sc[1] - sl * ln[1], sc[2] - sl * ln[2])
            smag = math.sqrt(st[0] ** 2 + st[1] ** 2 + st[2] ** 2)
            if smag > 1e-9:
                f = min(2.0 * smag / 7.0, mu * jn / max(cos_t, 1e-6))
                fd = (-f * st[0] / smag, -f * st[1] / smag, -f * st[2] / smag)
                v2[0] += fd[0]
                v2[1] += fd[1]
                tq = _cross(c, fd)
                k = 5.0 / (2.0 * R * R)
                w2 = [w[i] + k * tq[i] for i in range(3)]
        return r, v2, w2, h, vz

    def _nose_sin(self) -> float:
        R = self.R
        return min(0.9, max(0.0, (self.prof.cushion_nose_height_mm - R) / R))

    def _on_backboard(self, bid: str) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        self._restart(b, self.t, v=(-0.5 * v[0], 0.8 * v[1]))
        b.leaving = True

    def _on_cushion(self, bid: str, cid: str) -> None:
        b = self.balls[self.index[bid]]
        c = next(c for c in self.cushions if c[0] == cid)
        n = c[3]
        r, v, w, h, vz = self._state(b, self.t)
        if b.mode == "air" and h >= self.prof.cushion_nose_height_mm:
            # over the nose: the ball leaves the table and lands beyond the rail
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._restart(b, self.t)
            b.leaving = True
            return
        self._emit(BallCushion(t_s=self.t, ball=bid, cushion=cid, xy_mm=(r[0] - self.R * n[0], r[1] - self.R * n[1])))
        r, v2, w2, h, vz = self._cushion_impulse(b, n[0], n[1], self.p.e_cushion, self.p.mu_cushion, self._nose_sin())
        self._set(b, self.t, r, v2, w2, h, vz, b.status)

    def _on_jaw(self, bid: str, cid: str, jaw) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        nx, ny = r[0] - jaw[0], r[1] - jaw[1]
        d = math.hypot(nx, ny) or 1.0
        if b.mode == "air" and h >= self.prof.cushion_nose_height_mm:
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._restart(b, self.t)
            b.leaving = True
            return
        self._emit(BallCushion(t_s=self.t, ball=bid, cushion=cid, xy_mm=(float(jaw[0]), float(jaw[1]))))
        r, v2, w2, h, vz = self._cushion_impulse(b, nx / d, ny / d, self.p.e_jaw, self.p.mu_cushion, self._nose_sin())
        self._set(b, self.t, r, v2, w2, h, vz, b.status)

    def _on_capture(self, bid: str, pocket_id: str) -> None:
        b = self.balls[self.index[bid]]
        pk = self.prof.pocket(pocket_id)
        r, v, w, h, vz = self._state(b, self.t)
        speed = math.hypot(*v)
        limit = self.p.capture_speed_corner_mm_s if pk.kind == "corner" else self.p.capture_speed_middle_mm_s
        if speed <= limit:
            self._pot(b, pocket_id, r)
            return
        # rattles: bounces off the back of the pocket, turned a little at random
        nx, ny = r[0] - pk.xy_mm[0], r[1] - pk.xy_mm[1]
        d = math.hypot(nx, ny) or 1.0
        nx, ny = nx / d, ny / d
        vn = v[0] * nx + v[1] * ny
        vx, vy = v[0] - (1.0 + 0.5) * vn * nx, v[1] - (1.0 + 0.5) * vn * ny
        ang = math.radians(float(self.rng.uniform(-1.0, 1.0)) * self.p.rattle_jitter_deg)
        ca, sa = math.cos(ang), math.sin(ang)
        vx, vy = vx * ca - vy * sa, vx * sa + vy * ca
        self._set(b, self.t, r, (vx * 0.6, vy * 0.6), (0.0, 0.0, 0.0), 0.0, 0.0, BallStatus.ON_TABLE)

    def _on_bounds(self, bid: str) -> None:
        b = self.balls[self.index[bid]]
        r, *_ = self._state(b, self.t)
        pk = self._pocket_near(r)
        if pk is not None:
            self._pot(b, pk, r)
        else:
            self._emit(OffTable(t_s=self.t, ball=bid, xy_mm=r))
            self._set(b, self.t, r, (0, 0), (0, 0, 0), 0.0, 0.0, BallStatus.OFF_TABLE)

    def _on_hole(self, bid: str, hole_id: str) -> None:
        b = self.balls[self.index[bid]]
        r, v, w, h, vz = self._state(b, self.t)
        if math.hypot(*v) <= self.p.hole_drop_speed_mm_s:
            self._pot(b, hole_id, r)
        else:  # skims across, a little slowed
            self._set(b, self.t, r, (v[0] * 0.97, v[1] * 0.97), w, h, vz, b.status)
            b.skimming.add(hole_id)

    def _on_pin(self, bid: str, pid: str) -> None:
        b = self.balls[self.index[bid]]
        pin = self.pins[pid]
        r, v, w, h, vz = self._state(b, self.t)
        nx, ny = pin.xy_mm[0] - r[0], pin.xy_mm[1] - r[1]
        d = math.hypot(nx, ny) or 1.0
        nx, ny = nx / d, ny / d
        vn = v[0] * nx + v[1] * ny
        if vn <= 0:
            return
        lean = math.atan2(ny, nx)
        if vn >= self.p.pin_fall_speed_mm_s:
            self.pins[pid] = PinState(pid, pin.xy_mm, "fallen", lean)
            self.pin_segs[pid].append(_PinSeg(self.t, pin.xy_mm, "falling", lean))
            self._emit(PinDown(t_s=self.t, pin=pid, xy_mm=pin.xy_mm))
            keep = 0.6  # the pin is light: the ball runs on, slowed
            v2 = (v[0] - (1 - keep) * vn * nx, v[1] - (1 - keep) * vn * ny)
        else:
            push = min(self.p.pin_push_max_mm, self.p.pin_push_s * vn)
            xy = (pin.xy_mm[0] + push * nx, pin.xy_mm[1] + push * ny)
            self.pins[pid] = PinState(pid, xy, "moved", lean)
            self.pin_segs[pid].append(_PinSeg(self.t, xy, "moved", lean, wobble_rad=min(0.3, vn / 800.0)))
            self._emit(PinMoved(t_s=self.t, pin=pid, xy_mm=xy))
            v2 = (v[0] - (1 + self.p.e_pin) * vn * nx, v[1] - (1 + self.p.e_pin) * vn * ny)
        self._set(b, self.t, r, v2, w, h, vz, b.status)

    # -- output -----------------------------------------------------------------------------------
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


def open_holes(world: World) -> list:
    """The bed holes a ball can drop into: all of them, or in the endgame (``scoreboard_down``) the
    two highest-valued (2i a)."""
    holes = list(world.profile.holes)
    if world.scoreboard_down:
        top = sorted(holes, key=lambda h: -h.value)[:2]
        holes = [h for h in holes if h in top]
    return holes


def _solve(m: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve the small system ``m x = rhs`` by Gaussian elimination with partial pivoting (plain
    floating point, the same on every machine); a vanishing pivot (a symmetric cluster whose
    contacts are not independent) is regularised by 1e-9."""
    n = len(rhs)
    a = [row[:] + [rhs[i]] for i, row in enumerate(m)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        if abs(a[col][col]) < 1e-12:
            a[col][col] += 1e-9
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            if f:
                for c in range(col, n + 1):
                    a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def _point_quartic(px: float, py: float, v, a, rad: float) -> list[float]:
    """|p + v t + a t^2/2|^2 - rad^2 as a quartic (highest power first)."""
    qx, qy = v
    sx, sy = a
    return [
        0.25 * (sx * sx + sy * sy),
        qx * sx + qy * sy,
        qx * qx + qy * qy + px * sx + py * sy,
        2 * (px * qx + py * qy),
        px * px + py * py - rad * rad,
    ]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


# ---- public entry points ------------------------------------------------------------------------------


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
            _check_free(world, shot.ball, xy)
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
    if shot.double_hit:
        dx, dy = shot.unit
        sim.scheduled.append((t0 + params.double_hit_delay_s, "cue", (shot.ball, dx, dy, params.double_hit_push * shot.speed_mm_s)))
    sim.run()
    t_end = max([sim.t] + [e.t_s for e in sim.events])
    world_after, tl = sim.finish(t_end)
    sim.events.append(AtRest(t_s=tl.t_end_s, positions=world_after.positions(), pins=world_after.standing_pins()))
    return ShotResult(tuple(sorted(sim.events, key=lambda e: e.t_s)), world_after, tl)


def _check_free(world: World, ball_id: str, xy) -> None:
    prof = world.profile
    R = prof.ball_radius_mm
    if not prof.contains(xy, R - 1e-6):
        raise PhysicsError(f"cannot place {ball_id!r} at {xy}: a ball there would overlap a cushion")
    for o in world.balls:
        if o.id != ball_id and o.on_table and math.dist(o.xy_mm, xy) < 2 * R - 1e-6:
            raise PhysicsError(f"cannot place {ball_id!r} at {xy}: it would overlap ball {o.id!r} at {o.xy_mm}")


def still_timeline(world: World, t0: float, t1: float, moving: dict[str, list[_Seg]] | None = None) -> Timeline:
    """A timeline in which nothing moves from ``t0`` to ``t1`` (except the ``moving`` pieces given)."""
    moving = moving or {}
    segs = {}
    for b in world.balls:
        segs[b.id] = moving.get(b.id) or [_Seg(t0, b.status, b.xy_mm)]
    pins = {p.id: [_PinSeg(t0, p.xy_mm, p.state, p.lean_dir_rad)] for p in world.pins}
    return Timeline(t0, t1, segs, pins, world.scoreboard_down)


def place_ball(world: World, ball: str, xy_mm, t_s: float) -> HandResult:
    """A hand lowers ``ball`` onto the cloth at ``xy_mm``: in hand 120 mm up from ``t_s``, on the
    cloth (and the BallPlaced event) 0.6 s later. A ball already on the table (moved by hand: a
    re-spot, the bar-billiards ball nearest baulk taken to the D) is first lifted where it lies
    (0.3 s) and carried across (0.4 s), so the placement ends 1.3 s after ``t_s``."""
    xy = (float(xy_mm[0]), float(xy_mm[1]))
    old = world.ball(ball)
    _check_free(world, ball, xy)
    segs: list[_Seg] = []
    t = t_s
    if old.on_table:
        lift, carry = 0.3, 0.4
        segs.append(_Seg(t, BallStatus.IN_HAND, old.xy_mm, vz=_HAND_H_MM / lift))
        t += lift
        v = ((xy[0] - old.xy_mm[0]) / carry, (xy[1] - old.xy_mm[1]) / carry)
        segs.append(_Seg(t, BallStatus.IN_HAND, old.xy_mm, v0=v, h0=_HAND_H_MM))
        t += carry
    segs.append(_Seg(t, BallStatus.IN_HAND, xy, h0=_HAND_H_MM, vz=-_HAND_H_MM / _HAND_S))
    t1 = t + _HAND_S
    segs.append(_Seg(t1, BallStatus.ON_TABLE, xy))
    new = world.with_ball(BallState(ball, xy)).at_time(t1)
    return HandResult(new, (BallPlaced(t_s=t1, ball=ball, xy_mm=xy),), still_timeline(world, t_s, t1, {ball: segs}))


def remove_ball(world: World, ball: str, t_s: float, status: BallStatus = BallStatus.POCKETED) -> HandResult:
    """A hand lifts ``ball`` off the cloth at ``t_s`` (BallRemoved then) and carries it away over 0.6 s;
    afterwards the ball has ``status`` (pocketed: out of play; in_trough for bar billiards)."""
    old = world.ball(ball)
    if not old.on_table:
        raise PhysicsError(f"cannot remove {ball!r}: it is {old.status.value}, not on the table")
    t1 = t_s + _HAND_S
    segs = [_Seg(t_s, BallStatus.IN_HAND, old.xy_mm, vz=_HAND_H_MM / _HAND_S), _Seg(t1, status, old.xy_mm)]
    new = world.with_ball(BallState(ball, old.xy_mm, status)).at_time(t1)
    return HandResult(new, (BallRemoved(t_s=t_s, ball=ball, xy_mm=old.xy_mm),), still_timeline(world, t_s, t1, {ball: segs}))


def touch_ball(world: World, ball: str, velocity_mm_s, t_s: float, params: PhysicsParams = DEFAULT_PARAMS,
               rng: np.random.Generator | int | None = None) -> HandResult:
    """A hand (or sleeve, or cue butt) nudges ``ball`` at ``t_s``: it slides off with ``velocity_mm_s``
    and everything runs until it stops (BallTouched, then any contacts; no ShotStart, no AtRest)."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    old = world.ball(ball)
    if old.status is not BallStatus.ON_TABLE:
        raise PhysicsError(f"cannot touch {ball!r}: it is {old.status.value}")
    sim = _Sim(world, t_s, params, rng)
    sim.events.append(BallTouched(t_s=t_s, ball=ball, xy_mm=old.xy_mm))
    b = sim.balls[sim.index[ball]]
    sim._set(b, t_s, old.xy_mm, velocity_mm_s, (0.0, 0.0, 0.0), 0.0, 0.0, BallStatus.ON_TABLE)
    sim.run()
    t_end = max([sim.t] + [e.t_s for e in sim.events])
    new, tl = sim.finish(t_end)
    return HandResult(new, tuple(sorted(sim.events, key=lambda e: e.t_s)), tl)


# ---- racks: the start of a frame of each game ----------------------------------------------------------

_TOUCH_MM = 0.01  # a ball "touching the cushion" sits this far off it, so it is not already in contact


def rack_ficha(profile: TableProfile, rng: np.random.Generator | None = None) -> World:
    """Sinuca de Ficha 3.1-3.2: the cue ball at the centre; each group racked at its own end.

    The first group (``profile.groups[0]``, red by default) is racked at the head cushion (x = 0),
    the second at the foot. Per group: two balls against the end cushion, equidistant from the
    centre line, the gap between them drawn in [10 mm, one ball] (3.2.1); two against the side
    cushions 20 cm (3.2.2's ideal, +-1 cm drawn once per group) from the middle pockets' centres,
    towards that group's end. ``rng`` varies the gaps; without it they are 2 cm and 20 cm."""
    if len(profile.groups) != 2:
        raise PhysicsError(f"ficha needs two groups of balls; profile {profile.name!r} has {profile.groups}")
    R = profile.ball_radius_mm
    L, W = profile.length_mm, profile.width_mm
    centre = profile.spots.get("centre", (L / 2, W / 2))
    balls = [BallState(profile.cue_ball, (float(centre[0]), float(centre[1])))]  # type: ignore[arg-type]
    for k, group in enumerate(profile.groups):
        ids = profile.group(group)
        if len(ids) != 4:
            raise PhysicsError(f"ficha racks four balls per group; group {group!r} has {len(ids)}")
        gap = 20.0 if rng is None else float(rng.uniform(10.0, 2 * R))
        side = 200.0 if rng is None else float(rng.uniform(190.0, 210.0))
        end_x = R + _TOUCH_MM if k == 0 else L - R - _TOUCH_MM
        towards = -1.0 if k == 0 else 1.0
        half = gap / 2 + R
        xy = [
            (end_x, W / 2 - half),
            (end_x, W / 2 + half),
            (L / 2 + towards * side, R + _TOUCH_MM),
            (L / 2 + towards * side, W - R - _TOUCH_MM),
        ]
        balls += [BallState(i, p) for i, p in zip(ids, xy)]
    return World(profile, tuple(balls))


def rack_brasileira(profile: TableProfile) -> World:
    """Sinuca Brasileira rule 2: the colours on their spots, the red halfway between the pink and the
    right-hand side cushion, the cue ball on the profile's ``cue`` spot in the D."""
    balls = []
    for spec in profile.balls:
        spot = profile.spots.get(spec.id)
        if spot is None:
            raise PhysicsError(f"profile {profile.name!r} has no spot for ball {spec.id!r} (spots: {', '.join(profile.spots)})")
        balls.append(BallState(spec.id, (float(spot[0]), float(spot[1]))))
    return World(profile, tuple(balls))


def trough_xy(profile: TableProfile) -> tuple[float, float]:
    """Where balls in the bar-billiards trough are kept (off the playing surface, by the player's end)."""
    return (-profile.rail_width_mm / 2, profile.width_mm / 2)


def rack_bar_billiards(profile: TableProfile) -> World:
    """Bar billiards at the start of a visit: every ball in the trough, every pin on its spot."""
    if profile.kind != "bar_billiards":
        raise PhysicsError(f"profile {profile.name!r} is not a bar-billiards table")
    xy = trough_xy(profile)
    balls = tuple(BallState(b.id, xy, BallStatus.IN_TROUGH) for b in profile.balls)
    pins = tuple(PinState(p.id, p.xy_mm) for p in profile.pins)
    return World(profile, balls, pins)


def rack(game: str, profile: TableProfile, rng: np.random.Generator | None = None) -> World:
    """The start of a frame of ``game`` (``ficha``, ``brasileira``, ``bar-billiards``)."""
    if game == "ficha":
        return rack_ficha(profile, rng)
    if game == "brasileira":
        return rack_brasileira(profile)
    if game == "bar-billiards":
        return rack_bar_billiards(profile)
    raise PhysicsError(f"unknown game {game!r}: ficha, brasileira or bar-billiards")

