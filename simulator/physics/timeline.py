"""The motion of a shot or a hand action, recorded piece by piece: where every ball and pin is at any
time (:class:`Timeline`), and the results that carry one (:class:`ShotResult`, :class:`HandResult`)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Sequence

from simulator.physics.world import PhysicsError, World
from simulator.scene import BallPose, BallStatus, PinPose, Scene
from tracking.events import CameraEvent


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

def still_timeline(world: World, t0: float, t1: float, moving: dict[str, list[_Seg]] | None = None) -> Timeline:
    """A timeline in which nothing moves from ``t0`` to ``t1`` (except the ``moving`` pieces given)."""
    moving = moving or {}
    segs = {}
    for b in world.balls:
        segs[b.id] = moving.get(b.id) or [_Seg(t0, b.status, b.xy_mm)]
    pins = {p.id: [_PinSeg(t0, p.xy_mm, p.state, p.lean_dir_rad)] for p in world.pins}
    return Timeline(t0, t1, segs, pins, world.scoreboard_down)

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
