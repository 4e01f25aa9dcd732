"""Builders for the Sinuca de Ficha tests: a running match, shots from short step lists, mid-frame states.

Steps are tuples, each one event 0.1 s after the previous: ``("hit", a, b)``, ``("pot", ball, pocket)``,
``("cushion", ball, cushion)``, ``("off", ball)``, ``("jump", ball)``, ``("cue", ball)`` (the cue
touches a ball again), ``("touch", ball)``, ``("unseen", seconds)``; a trailing dict in a step gives
extra fields (``{"confidence": 0.3}``); an :class:`~tracking.events.Event` is inserted as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from calibration.table import resolve_profile
from rules.base import Referee
from tests.rules._driven import Driven
from rules.ficha import Balls, FichaDecision, FichaRules, State
from tracking.events import (
    Answer,
    AtRest,
    BallBall,
    BallCushion,
    BallTouched,
    CueContact,
    Event,
    Jump,
    OffTable,
    OperatorInput,
    Pot,
    ShotStart,
    Unobserved,
)

PROFILE = resolve_profile("ficha")
ENGINE = FichaRules(PROFILE)
R = PROFILE.ball_radius_mm
REDS = ("r1", "r2", "r3", "r4")
YELLOWS = ("y1", "y2", "y3", "y4")
STEP_S = 0.1


def shot_events(t0: float, *steps: Any, strike: str = "cue", positions: Mapping[str, Any] | None = None,
                end: Mapping[str, Any] | None = None, rest: bool = True) -> list[Event]:
    """A shot's camera events from steps, starting at ``t0``."""
    out: list[Event] = [ShotStart(t_s=t0, ball=strike, positions=dict(positions or {}))]
    t = t0
    for step in steps:
        t = round(t + STEP_S, 6)
        if isinstance(step, Event):
            out.append(step)
            continue
        extra: dict[str, Any] = {}
        if isinstance(step[-1], dict):
            extra = dict(step[-1])
            step = step[:-1]
        kind, *args = step
        if kind == "hit":
            out.append(BallBall(t_s=t, a=args[0], b=args[1], **extra))
        elif kind == "pot":
            out.append(Pot(t_s=t, ball=args[0], pocket=args[1], **extra))
        elif kind == "cushion":
            out.append(BallCushion(t_s=t, ball=args[0], cushion=args[1], **extra))
        elif kind == "off":
            out.append(OffTable(t_s=t, ball=args[0], **extra))
        elif kind == "jump":
            out.append(Jump(t_s=t, ball=args[0], airborne_s=0.1, **extra))
        elif kind == "cue":
            out.append(CueContact(t_s=t, ball=args[0], **extra))
        elif kind == "touch":
            out.append(BallTouched(t_s=t, ball=args[0], **extra))
        elif kind == "unseen":
            out.append(Unobserved(t_s=t, until_s=t + args[0], reason="occluded"))
        else:
            raise ValueError(f"unknown step {step!r}")
    if rest:
        out.append(AtRest(t_s=round(t + 0.5, 6), positions=dict(end or {})))
    return out


def mid_frame(state: State, red_left: Sequence[str] = REDS, yellow_left: Sequence[str] = YELLOWS,
              shooter: str | None = None, removed: Sequence[str] = ()) -> State:
    """A state in the middle of its frame: the balls not left are potted (or ``removed``)."""
    on = {"cue", *red_left, *yellow_left}
    rest = set(PROFILE.ball_ids) - on
    balls = Balls(on_table=frozenset(on), potted=frozenset(rest - set(removed)), removed=frozenset(removed))
    return replace(state, balls=balls, shots_in_frame=5, shooter=shooter or state.shooter)


class Match(Driven):
    """A match being played in a test: events and inputs go through a :class:`rules.base.Referee`."""

    def __init__(self, players: Sequence[str] = ("A", "B"), options: Mapping[str, Any] | None = None,
                 state: State | None = None, engine: FichaRules = ENGINE):
        self.engine = engine
        self.referee = Referee(engine, players, options, state=state)
        self.t = 1.0
        self.decisions: list[FichaDecision] = []

    def mid(self, **kw: Any) -> "Match":
        self.state = mid_frame(self.state, **kw)
        return self

    def hand(self, event_cls: type[Event], **kw: Any) -> None:
        """A hand event (or an operator input that waits for the next shot) before the next shot."""
        self.t = round(self.t + 0.2, 6)
        steps = self.referee.feed(event_cls(t_s=self.t, **kw))
        assert not steps, f"{event_cls.kind} acted at once: {steps[0].decision.explanation}"

    def events(self, events: Sequence[Event]) -> FichaDecision:
        """Feed a shot's events; the call on it."""
        steps = [st for e in events for st in self.referee.feed(e)]
        self.t = max(self.t, events[-1].t_s)
        assert steps, "the events completed no shot"
        return self._take(steps)

    def shot(self, *steps: Any, **kw: Any) -> FichaDecision:
        self.t = round(self.t + 1.0, 6)
        events = shot_events(self.t, *steps, **kw)
        if not kw.get("rest", True):  # a shot never seen at rest: the log ends there
            for e in events:
                self.referee.feed(e)
            return self._take(self.referee.finish())
        return self.events(events)

    def say(self, event_cls: type[OperatorInput], **kw: Any) -> FichaDecision | None:
        """An operator input that may act at once."""
        self.t = round(self.t + 0.2, 6)
        steps = self.referee.feed(event_cls(t_s=self.t, **kw))
        return self._take(steps) if steps else None

    def answer(self, value: str) -> FichaDecision:
        assert self.pending is not None, "no question pending"
        d = self.say(Answer, question=self.pending.id, answer=value)
        assert d is not None
        return d

    def _take(self, steps) -> FichaDecision:
        self.decisions += [st.decision for st in steps]
        return steps[-1].decision


def rack_positions(**moves: tuple[float, float]) -> dict[str, tuple[float, float]]:
    """Ball positions spread over the table (cue ball at the centre spot, clear paths), with ``moves``
    replacing some. A ball given as None is left out."""
    pos: dict[str, Any] = {
        "cue": (710.0, 405.0),
        "r1": (300.0, 200.0), "r2": (300.0, 600.0), "r3": (500.0, 120.0), "r4": (500.0, 690.0),
        "y1": (1100.0, 200.0), "y2": (1100.0, 600.0), "y3": (920.0, 120.0), "y4": (920.0, 690.0),
    }
    pos.update(moves)
    return {k: v for k, v in pos.items() if v is not None}
