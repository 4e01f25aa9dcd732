"""What each shot was, read from its events and its call: the facts the statistics count.

Every definition here uses only the event log (``docs/event-log.md``), the call that stands on the
shot (``Decision.to_dict()``) and the table profile; ``docs/store.md`` states them for readers.
``r`` is the ball radius; a ball's *position at the strike* is its entry in the ``shot_start``'s
``positions``.

* **struck ball**: the ball the cue strikes (``shot_start.ball``): the cue ball, or in bar billiards
  the white or red played.
* **object ball**: the other ball of the struck ball's first ``ball_ball`` contact (none: a miss).
* **direct hit**: the struck ball reaches the object ball with nothing on the way: no cushion contact
  and no pin knocked down or moved before the contact (bar billiards).
* **cut angle**: for a direct hit, the angle
  between the struck ball's path (from its position at the strike to its centre at the contact) and
  the line of centres at the contact (from the contact point to the object ball's position at the
  strike), 0 deg for a full-ball hit up to 90 deg. The struck ball's centre at the contact is the
  mirror of the object ball's centre in the contact point.
* **the object ball's first leg**: from its position at the strike to its centre at its next event
  (a cushion contact's point moved ``r`` onto the cloth along the cushion's normal; a contact with a
  ball that had not moved yet mirrored through the contact point, as above; a pot, jump or departure
  at its position; its place at rest if nothing happens to it). When a pin falls or moves before
  that event, the pin may have bent the path, and the leg's direction is the line of centres at the
  first contact instead.
* **heading into a pocket (hole)**: the straight line of the first leg, from where the object ball lay,
  crosses the edge of the playing surface (the cushion noses) closer to the pocket's centre than the
  pocket's jaws are; for a bar-billiards hole, it passes within the hole's radius of the hole's
  centre before reaching the cushions.
* **pot attempted**: the object ball was heading into a pocket or hole, or it was potted in the shot
  (a bank or a plant counts once it drops). **pot made**: the object ball was potted in the shot.
  The attempt's **target** is the pocket it dropped into, else the one it was heading into; its
  **distance** is from the object ball's position at the strike to that pocket's (hole's) centre.
* **safety**: a shot with an object ball, no pot attempted and no foul in the shot.
* **fouls**: the fouls of the call on the shot and of the calls on what happened just before it (a
  ball touched while aiming, ficha 5.6), all the shooter's.
* **cue-ball speed**: the struck ball's mean speed over its first leg: the distance from its position
  at the strike to its centre at its first event (contact, cushion, pot, jump or departure), over the
  time between the two; not measured when a pin falls or moves first (the log does not say where the
  ball touched it).
* **cue-ball position**: where the struck ball lies at the end of the shot (``at_rest.positions``).
* **points**: what the call gives the shooter: in Sinuca de Ficha the balls of their own group potted
  on a shot without a foul (the group of the legal first contact, rules 2.4 and 5.2), in Sinuca
  Brasileira the call's ``points_potted`` on a shot without a foul, in bar billiards the call's
  ``points`` on a shot without a foul.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from calibration.table import TableProfile
from tracking.events import AtRest, BallBall, BallCushion, Event, Jump, OffTable, PinDown, PinMoved, Pot, ShotStart, balls_involved

__all__ = ["ShotFacts", "shot_facts", "heading_into", "shot_points", "centre_at"]

XY = tuple[float, float]


@dataclass(frozen=True, slots=True)
class ShotFacts:
    """The facts of one shot (module docstring: the definitions)."""

    match_id: int
    game: str
    shot: int
    frame: int
    player: str | None
    t_s: float
    struck: str
    object_ball: str | None
    direct: bool  # the struck ball reached the object ball with no cushion first
    cut_deg: float | None
    attempted: bool
    made: bool
    target: str | None  # pocket or hole of the attempt
    pot_distance_mm: float | None
    cue_speed_mm_s: float | None
    cue_rest_xy_mm: XY | None
    pots: tuple[tuple[str, str], ...]  # (ball, pocket) in drop order
    fouls: tuple[str, ...]  # the call's, then those of the calls on what happened before the shot (a ball touched while aiming)
    points: int
    pending: bool  # the call waits for an answer (nothing counted from it)
    safety: bool


def _unit(v: XY) -> XY | None:
    n = math.hypot(*v)
    return (v[0] / n, v[1] / n) if n > 1e-9 else None


def _sub(a: XY, b: XY) -> XY:
    return (a[0] - b[0], a[1] - b[1])


def heading_into(profile: TableProfile, start: XY, direction: XY) -> str | None:
    """The pocket or hole a ball's centre heads into, moving in a straight line from ``start`` along
    ``direction`` (module docstring), or None."""
    d = _unit(direction)
    if d is None:
        return None
    (x, y), (dx, dy) = start, d
    exits = []  # where the line leaves [0, L] x [0, W]
    for lo, hi, p, v in ((0.0, profile.length_mm, x, dx), (0.0, profile.width_mm, y, dy)):
        if v < 0:
            exits.append((lo - p) / v)
        elif v > 0:
            exits.append((hi - p) / v)
    t_exit = max(0.0, min(exits))
    for hole in profile.holes:
        hx, hy = _sub(hole.xy_mm, start)
        along = hx * dx + hy * dy
        if 0.0 <= along <= t_exit and abs(hx * dy - hy * dx) <= hole.radius_mm:
            return hole.id
    cross = (x + dx * t_exit, y + dy * t_exit)
    best = None
    for pocket in profile.pockets:
        reach = min(math.dist(pocket.xy_mm, jaw) for jaw in pocket.jaws_mm)
        gap = math.dist(pocket.xy_mm, cross)
        if gap <= reach and (best is None or gap < best[0]):
            best = (gap, pocket.id)
    return best[1] if best else None


def _place(profile: TableProfile, target: str) -> XY:
    return profile.pocket(target).xy_mm if profile.pockets else profile.hole(target).xy_mm


def centre_at(e: Event, ball: str, r: float, normals: Mapping[str, XY], at_strike: Mapping[str, XY], moved: set[str]) -> XY | None:
    """``ball``'s centre at event ``e`` (module docstring: the first leg)."""
    xy = getattr(e, "xy_mm", None)
    if xy is None:
        return None
    if isinstance(e, BallBall):
        other = e.b if e.a == ball else e.a
        if other in at_strike and other not in moved:
            q = at_strike[other]
            return (2 * xy[0] - q[0], 2 * xy[1] - q[1])
        return xy
    if isinstance(e, BallCushion):
        n = normals.get(e.cushion)
        return (xy[0] + r * n[0], xy[1] + r * n[1]) if n else xy
    return xy


_LEG_ENDS = (BallBall, BallCushion, Pot, OffTable, Jump)
_PINS = (PinDown, PinMoved)


def shot_points(game: str, profile: TableProfile, call: Mapping[str, Any] | None) -> int:
    """What the call gives the shooter (module docstring: points)."""
    if not call or call.get("pending") or call.get("fouls"):
        return 0
    if game == "ficha":
        first = call.get("first_contact")
        if not first or first not in profile.ball_ids:
            return 0
        group = profile.ball(first).group
        return sum(1 for b in call.get("potted") or () if b in profile.ball_ids and profile.ball(b).group == group)
    if game == "brasileira":
        return int(call.get("points_potted") or 0)
    return int(call.get("points") or 0)


def shot_facts(profile: TableProfile, game: str, events: Sequence[Event], call: Mapping[str, Any] | None, *,
               match_id: int = 0, shot: int = 0, frame: int = 1) -> ShotFacts:
    """The facts of one shot from its events (``shot_start`` first, ``at_rest`` last when it has one)
    and the call that stands on it."""
    start = events[0]
    assert isinstance(start, ShotStart), "a shot's events begin with its shot_start"
    r = profile.ball_radius_mm
    normals = {c.id: c.normal for c in profile.cushions}
    at_strike = dict(start.positions)
    struck = start.ball
    p0 = at_strike.get(struck, start.xy_mm)
    rest = events[-1] if isinstance(events[-1], AtRest) else None
    later = list(events[1:])

    def moved_before(i: int) -> set[str]:
        return {struck} | {b for e in later[:i] for b in balls_involved(e)}

    def leg_end(ball: str, after: int) -> tuple[Event, XY | None, bool] | None:
        """``ball``'s first leg-ending event after index ``after``, its centre there, and whether a
        pin fell or moved before it."""
        for i in range(after, len(later)):
            e = later[i]
            if isinstance(e, _LEG_ENDS) and ball in balls_involved(e):
                pins = any(isinstance(x, _PINS) for x in later[after:i])
                return e, centre_at(e, ball, r, normals, at_strike, moved_before(i) - {ball}), pins
        return None

    first_i = next((i for i, e in enumerate(later) if isinstance(e, BallBall) and struck in (e.a, e.b)), None)
    first = later[first_i] if first_i is not None else None
    in_the_way = any((isinstance(e, BallCushion) and e.ball == struck) or isinstance(e, _PINS) for e in later[:first_i])
    cue_leg_end = leg_end(struck, 0)

    speed = None
    if cue_leg_end is not None and cue_leg_end[1] is not None and not cue_leg_end[2] and p0 is not None and cue_leg_end[0].t_s > start.t_s:
        speed = math.dist(p0, cue_leg_end[1]) / (cue_leg_end[0].t_s - start.t_s)

    obj = None if first is None else (first.b if first.a == struck else first.a)
    o0 = at_strike.get(obj) if obj else None
    cut = None
    n = _unit(_sub(o0, first.xy_mm)) if first is not None and o0 is not None and first.xy_mm is not None else None
    if n is not None and not in_the_way and p0 is not None:
        hit = (2 * first.xy_mm[0] - o0[0], 2 * first.xy_mm[1] - o0[1])
        d = _unit(_sub(hit, p0))
        if d is not None:
            cut = math.degrees(math.acos(max(-1.0, min(1.0, n[0] * d[0] + n[1] * d[1]))))

    pots = tuple((e.ball, e.pocket) for e in sorted((e for e in later if isinstance(e, Pot)), key=lambda p: p.t_s))
    heading = None
    if obj is not None and o0 is not None:
        end_event = leg_end(obj, first_i + 1)
        end = end_event[1] if end_event is not None else (rest.positions.get(obj) if rest is not None else None)
        bent = end_event[2] if end_event is not None else any(isinstance(e, _PINS) for e in later[first_i + 1:])
        if bent and n is not None:
            heading = heading_into(profile, o0, n)
        elif end is not None:
            heading = heading_into(profile, o0, _sub(end, o0))
    dropped = next((pk for b, pk in pots if b == obj), None)
    target = dropped or heading
    call = call or {}
    own = tuple(call.get("fouls") or ())
    fouls = own + tuple(f for prior in call.get("prior") or () for f in prior.get("fouls") or ())
    pending = bool(call.get("pending"))
    attempted = target is not None
    return ShotFacts(
        match_id=match_id, game=game, shot=shot, frame=frame, player=call.get("player"), t_s=start.t_s, struck=struck,
        object_ball=obj, direct=first is not None and not in_the_way, cut_deg=cut, attempted=attempted, made=dropped is not None,
        target=target, pot_distance_mm=math.dist(o0, _place(profile, target)) if attempted and o0 is not None else None,
        cue_speed_mm_s=speed, cue_rest_xy_mm=rest.positions.get(struck) if rest is not None else None, pots=pots, fouls=fouls,
        points=shot_points(game, profile, call), pending=pending,
        safety=obj is not None and not attempted and not own and not pending,
    )
