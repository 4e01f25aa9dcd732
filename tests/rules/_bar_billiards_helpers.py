"""Builders for the bar billiards tests: states in the middle of a frame and shots from short step lists.

Steps are tuples, each one event 0.1 s after the previous: ``("hit", a, b)``, ``("pot", ball, hole)``
(optionally the edge wait in seconds), ``("cushion", ball, cushion)``, ``("down", pin)``,
``("moved", pin)``, ``("off", ball)``, ``("back", ball)``, ``("cue", ball)``, ``("touch", ball)``;
an :class:`~tracking.events.Event` is inserted as it is.
"""

from __future__ import annotations

import math
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from calibration.table import resolve_profile
from rules.bar_billiards import BREAK_OFF, ENDGAME, BarBilliardsDecision, BarBilliardsRules, State
from rules.base import Referee, Shot
from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallTouched,
    CueContact,
    Event,
    OffTable,
    PinDown,
    PinMoved,
    Pot,
    Returned,
    ShotStart,
)

PROFILE = resolve_profile("bar-billiards")
ENGINE = BarBilliardsRules(PROFILE)
BALLS = PROFILE.ball_ids
WHITES = tuple(b for b in BALLS if b != "red")
D_CENTRE = PROFILE.d_centre_mm  # (450, 450)
SPOT = PROFILE.spots["break"]  # (800, 450)
IN_D = (500.0, 430.0)  # inside the D, off its centre
# rest places clear of baulk, holes and pins
NEUTRAL = ((700.0, 200.0), (700.0, 700.0), (900.0, 300.0), (900.0, 620.0), (1200.0, 150.0), (1200.0, 760.0),
           (1600.0, 380.0), (1600.0, 560.0), (650.0, 450.0), (1000.0, 800.0))


def make_state(players: Iterable[str] = ("A", "B"), options: Mapping[str, Any] | None = None, *, table: Mapping[str, Any] | None = None,
               trough: Iterable[str] | None = None, out: Iterable[str] = (), player: str | None = None,
               banked: Mapping[str, int] | None = None, break_score: int = 0, bar_down: bool = False, endgame: bool = False,
               clock_start: float | None = 0.0, **kw: Any) -> State:
    """A state in the middle of a frame; balls not on the table nor out are in the trough."""
    st = ENGINE.initial_state(tuple(players), options)
    table = {b: (float(x), float(y)) for b, (x, y) in (table or {}).items()}
    out = tuple(out)
    if trough is None:
        trough = [b for b in BALLS if b not in table and b not in out]
    scores = dict(st.banked)
    scores.update(banked or {})
    return replace(
        st, table=MappingProxyType(table), trough=tuple(b for b in BALLS if b in set(trough)), out=tuple(b for b in BALLS if b in set(out)),
        player=player or st.player, banked=MappingProxyType(scores), break_score=break_score, bar_down=bar_down, endgame=endgame,
        clock_start_t_s=clock_start, **kw,
    )


def _event(step: Any, t: float) -> Event:
    if isinstance(step, Event):
        return step
    kind, *args = step
    if kind == "hit":
        return BallBall(t_s=t, a=args[0], b=args[1], xy_mm=args[2] if len(args) > 2 else None)
    if kind == "pot":
        xy = next((h.xy_mm for h in PROFILE.holes if h.id == args[1]), None)
        return Pot(t_s=t, ball=args[0], pocket=args[1], xy_mm=xy, edge_wait_s=args[2] if len(args) > 2 else 0.0)
    if kind == "cushion":
        return BallCushion(t_s=t, ball=args[0], cushion=args[1], xy_mm=args[2] if len(args) > 2 else None)
    if kind == "down":
        return PinDown(t_s=t, pin=args[0])
    if kind == "moved":
        return PinMoved(t_s=t, pin=args[0], xy_mm=args[1] if len(args) > 1 else None)
    if kind == "off":
        return OffTable(t_s=t, ball=args[0])
    if kind == "back":
        return Returned(t_s=t, ball=args[0])
    if kind == "cue":
        return CueContact(t_s=t, ball=args[0])
    if kind == "touch":
        return BallTouched(t_s=t, ball=args[0])
    raise ValueError(f"unknown step {step!r}")


def make_shot(st: State, ball: str, *steps: Any, at: tuple[float, float] | None = None, positions: Mapping[str, Any] | None = None,
              rest: Mapping[str, Any] | None = None, before: Iterable[Event] = (), t0: float | None = None,
              end: bool = True) -> Shot:
    """A shot striking ``ball`` placed at ``at`` (default: the D's centre for a break-off or the endgame,
    else inside the D).

    Rest positions: the table as it was, minus balls potted or gone off the table, with the struck
    ball (if it stayed up) on the first free neutral place; ``rest`` overrides any of them."""
    t0 = 10.0 + 10.0 * st.shots if t0 is None else t0
    start = dict(st.table)
    start.update({b: (float(x), float(y)) for b, (x, y) in (positions or {}).items()})
    start[ball] = at or (D_CENTRE if st.next_kind in (BREAK_OFF, ENDGAME) else IN_D)  # the struck ball is always placed in the D
    events: list[Event] = [ShotStart(t_s=t0, ball=ball, xy_mm=start[ball], positions=start)]
    t = t0
    for step in steps:
        t += 0.1
        events.append(_event(step, t))
    gone = {e.ball for e in events if isinstance(e, Pot)}
    back = {e.ball for e in events if isinstance(e, Returned)}
    gone |= {e.ball for e in events if isinstance(e, OffTable) and e.ball not in back}
    resting = {b: xy for b, xy in start.items() if b not in gone and b != ball}
    if ball not in gone:
        resting[ball] = next(xy for xy in NEUTRAL if all(math.dist(xy, o) > 60 for o in resting.values()))
    resting.update({b: (float(x), float(y)) for b, (x, y) in (rest or {}).items()})
    if end:
        events.append(AtRest(t_s=t + 0.5, positions=resting))
    return Shot(st.shots, tuple(events), tuple(before))


def break_shot(st: State, *steps: Any, white: str = "w1", at: tuple[float, float] = D_CENTRE, red_at: tuple[float, float] = SPOT,
               **kw: Any) -> Shot:
    """A break-off: the red on the spot, ``white`` struck from ``at``."""
    return make_shot(st, white, *steps, at=at, positions={"red": red_at, **kw.pop("positions", {})}, **kw)


def play(st: State, shot: Shot) -> tuple[BarBilliardsDecision, State]:
    """Judge and advance."""
    d = ENGINE.judge(st, shot)
    return d, ENGINE.advance(st, d)


def referee_at(st: State) -> Referee:
    """A referee taking the frame on from ``st``."""
    return Referee(ENGINE, state=st)


def feed(referee: Referee, *items: Shot | Event) -> BarBilliardsDecision | None:
    """Feed shots (their inputs and events) and events to ``referee``; the last call they complete."""
    steps = []
    for item in items:
        for e in (item.before + item.events if isinstance(item, Shot) else (item,)):
            steps += referee.feed(e)
    return steps[-1].decision if steps else None
