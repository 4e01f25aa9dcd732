"""The physics' values: its parameters and error, balls, pins, the world they make and a cue strike.

Every value is frozen; a change makes a new one (``World.with_ball``, ``dataclasses.replace``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from calibration.table import TableProfile
from simulator.scene import BallPose, BallStatus, PinPose, Scene


G_MM_S2 = 9810.0
_EPS_V = 1e-3  # mm/s: below this a ball is still


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
    # a double hit: the struck ball leaves the tip this many times faster than the tip goes ((1 + e) M / (M + m)
    # for a 540 g cue, a 170 g ball and a tip's restitution of 0.75), so the cue, following through, only
    # catches it again when something (a ball close in front) has slowed it within the follow-through
    cue_speed_gain: float = 1.33
    cue_follow_mm: float = 80.0  # how far the tip follows through past the ball's place (the clips' cue does too)
    max_events: int = 20000  # guard against a pathological cluster

DEFAULT_PARAMS = PhysicsParams()


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
    follow; < 0: below, draw). ``elevation_deg`` > 0 plays a jump shot, ``double_hit`` lets the cue
    follow through into the ball (it touches it again if something slows the ball within the
    follow-through: a ball close in front; otherwise the player checks the stroke), ``place_xy_mm`` puts
    the ball there first (bar billiards: a ball from the trough placed in the D, 2c)."""

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

def open_holes(world: World) -> list:
    """The bed holes a ball can drop into: all of them, or in the endgame (``scoreboard_down``) the
    two highest-valued (2i a)."""
    holes = list(world.profile.holes)
    if world.scoreboard_down:
        top = sorted(holes, key=lambda h: -h.value)[:2]
        holes = [h for h in holes if h in top]
    return holes

def check_free(world: World, ball_id: str, xy) -> None:
    prof = world.profile
    R = prof.ball_radius_mm
    if not prof.contains(xy, R - 1e-6):
        raise PhysicsError(f"cannot place {ball_id!r} at {xy}: a ball there would overlap a cushion")
    for o in world.balls:
        if o.id != ball_id and o.on_table and math.dist(o.xy_mm, xy) < 2 * R - 1e-6:
            raise PhysicsError(f"cannot place {ball_id!r} at {xy}: it would overlap ball {o.id!r} at {o.xy_mm}")
