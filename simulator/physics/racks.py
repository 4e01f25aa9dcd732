"""The layouts: the balls (and pins) at the start of a frame of each game, from its rulebook and the
table's profile."""

from __future__ import annotations

import numpy as np

from calibration.table import TableProfile
from simulator.physics.world import BallState, PhysicsError, PinState, World
from simulator.scene import BallStatus


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
