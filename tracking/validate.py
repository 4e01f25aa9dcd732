"""Checks of an event log against a table profile: every id is one the table has (the balls an event
names, the keys of ``positions`` and ``pins``, pockets, cushions, pins), and the log is physically
possible (a ball is not potted twice without being put back, a ball off the table takes no part in a
shot, a ball does not touch itself, shots begin and end in turn). Each problem raises
:class:`~tracking.events.EventLogError` naming the event's position in the log and its time.

``cueref events check`` and ``cueref judge`` both run :func:`check_against_profile`, so a log the
referee would refuse is refused by the check too, with the same message."""

from __future__ import annotations

from typing import Sequence

from calibration.table import TableProfile
from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    CameraEvent,
    Event,
    EventLogError,
    Nomination,
    OffTable,
    PinDown,
    PinMoved,
    Pot,
    RemovalChoice,
    Returned,
    ShotStart,
    balls_involved,
)


PUT_BACK = ("; a ball put back by hand (re-spotted, in hand) needs a ball_placed event, or the shot_start's "
            "positions showing it")


def check_against_profile(events: Sequence[Event], profile: TableProfile, source: str | None = None) -> None:
    """Raise :class:`EventLogError` at the first event the table or physics rules out."""
    balls = set(profile.ball_ids)
    pockets = {p.id for p in profile.pockets} | {h.id for h in profile.holes}
    cushions = {c.id for c in profile.cushions} | ({"scoreboard"} if profile.scoreboard_x_mm is not None else set())
    pins = {p.id for p in profile.pins}
    gone: set[str] = set()  # potted, off the table or lifted, and not yet put back
    in_shot = False

    def fail(n: int, e: Event, msg: str) -> None:
        raise EventLogError(f"event {n + 1} ({e.kind} at t_s={e.t_s:g}): {msg}", None, source)

    for n, e in enumerate(events):
        for b in balls_involved(e):
            if b not in balls:
                fail(n, e, f"ball {b!r} is not in table profile {profile.name!r} (balls: {', '.join(sorted(balls))})")
        if isinstance(e, (Pot, Nomination)) and e.pocket not in pockets:
            fail(n, e, f"pocket {e.pocket!r} is not on table {profile.name!r} (pockets/holes: {', '.join(sorted(pockets))})")
        if isinstance(e, BallCushion) and e.cushion not in cushions:
            fail(n, e, f"cushion {e.cushion!r} is not on table {profile.name!r} (cushions: {', '.join(sorted(cushions))})")
        if isinstance(e, (PinDown, PinMoved)) and e.pin not in pins:
            fail(n, e, f"pin {e.pin!r} is not on table {profile.name!r}")
        for b in getattr(e, "positions", {}):
            if b not in balls:
                fail(n, e, f"positions names ball {b!r}, which is not in table profile {profile.name!r} (balls: {', '.join(sorted(balls))})")
        for q in getattr(e, "pins", {}):
            if q not in pins:
                fail(n, e, f"pins names pin {q!r}, which is not on table {profile.name!r}")
        if isinstance(e, BallBall) and e.a == e.b:
            fail(n, e, f"ball {e.a!r} cannot touch itself")
        if isinstance(e, (ShotStart, AtRest)):
            gone.difference_update(e.positions)  # the camera sees these balls on the table: put back
        if isinstance(e, ShotStart):
            if in_shot:
                fail(n, e, "a new shot starts before the previous one came to rest (no at_rest between them)")
            in_shot = True
            # the balls the strike shows on the table (and the struck one, seen where it is struck) were put back
            # by hand: a re-spot with no ball_placed logged. A bar billiards table returns every potted ball
            # to the trough, from which the referee puts balls back between shots (the D, the spot, a ball
            # replaced): there, only a shot's own events are checked against each other
            gone.difference_update([*e.positions, *([e.ball] if e.xy_mm is not None else [])])
            if profile.kind == "bar_billiards":
                gone.clear()
            if e.ball in gone:
                fail(n, e, f"the struck ball {e.ball!r} is not on the table (it was potted, lifted or left the table){PUT_BACK}")
        elif isinstance(e, AtRest):
            in_shot = False
        if isinstance(e, (Pot, OffTable, BallRemoved)):
            if e.ball in gone:
                fail(n, e, f"ball {e.ball!r} is already off the table; it must be placed back before it can leave again")
            gone.add(e.ball)
        elif isinstance(e, (BallPlaced, Returned)):
            gone.discard(e.ball)
        elif isinstance(e, CameraEvent) and in_shot and gone.intersection(balls_involved(e)):
            fail(n, e, f"it names {', '.join(repr(b) for b in balls_involved(e) if b in gone)}, which is not on the table{PUT_BACK}")
        elif isinstance(e, RemovalChoice) and e.ball in gone:
            fail(n, e, f"the removal choice names {e.ball!r}, which is not on the table")
