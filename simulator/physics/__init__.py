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

The package, along its seams:

* :mod:`~simulator.physics.world`: the values (parameters, balls, pins, the world, a cue strike);
* :mod:`~simulator.physics.engine`: the event loop of a shot and :func:`simulate`;
* :mod:`~simulator.physics.roots`: contact times as polynomial roots;
* :mod:`~simulator.physics.collisions`: what each contact does (balls, cushions, pockets and holes, pins);
* :mod:`~simulator.physics.timeline`: the recorded motion (:class:`Timeline`) and the results;
* :mod:`~simulator.physics.hands`: hand actions between shots (place, remove, touch);
* :mod:`~simulator.physics.racks`: the start of a frame of each game.

The names below are the package's public face; import them from ``simulator.physics``.
"""

from simulator.physics.engine import jump_shot, simulate, strike_state
from simulator.physics.hands import place_ball, remove_ball, touch_ball
from simulator.physics.racks import rack, rack_bar_billiards, rack_brasileira, rack_ficha, trough_xy
from simulator.physics.timeline import HandResult, ShotResult, Timeline, join_timelines, still_timeline
from simulator.physics.world import DEFAULT_PARAMS, G_MM_S2, BallState, PhysicsError, PhysicsParams, PinState, Shot, World, open_holes

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
    "DEFAULT_PARAMS",
]
