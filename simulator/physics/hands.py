"""Hand actions between shots: a ball placed on the cloth, lifted off it, or nudged (by a hand, a
sleeve, the cue's butt). Each returns the new world, its events and the hand's short timeline."""

from __future__ import annotations

import numpy as np

from simulator.physics.engine import _Sim
from simulator.physics.timeline import HandResult, _Seg, still_timeline
from simulator.physics.world import DEFAULT_PARAMS, BallState, PhysicsError, PhysicsParams, World, check_free
from simulator.scene import BallStatus
from tracking.events import BallPlaced, BallRemoved, BallTouched


_HAND_S = 0.6  # how long a hand takes to lower or lift a ball
_HAND_H_MM = 120.0  # the height a hand carries a ball at


def place_ball(world: World, ball: str, xy_mm, t_s: float) -> HandResult:
    """A hand lowers ``ball`` onto the cloth at ``xy_mm``: in hand 120 mm up from ``t_s``, on the
    cloth (and the BallPlaced event) 0.6 s later. A ball already on the table (moved by hand: a
    re-spot, the bar-billiards ball nearest baulk taken to the D) is first lifted where it lies
    (0.3 s) and carried across (0.4 s), so the placement ends 1.3 s after ``t_s``."""
    xy = (float(xy_mm[0]), float(xy_mm[1]))
    old = world.ball(ball)
    check_free(world, ball, xy)
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
