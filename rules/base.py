"""The common interface of the rules engines, and the replay of an event log through one.

An engine is a pure function pair over immutable states::

    engine = get_engine("ficha", profile)            # rules/__init__.py
    state = engine.initial_state(players=("A", "B"), options={"next_break": "winner"})
    decision = engine.judge(state, shot)             # never mutates state or shot
    state = engine.advance(state, decision)

Operator inputs that act at once (a concession, an answer to a pending question, an override) go
through ``engine.on_input(state, event)``, which returns a :class:`Decision` or ``None`` when the
input only waits for the next shot (a nomination, say).

:func:`split_log` groups a flat event log into :class:`Shot` records: each holds the
:class:`~tracking.events.ShotStart`, every camera event up to and including the
:class:`~tracking.events.AtRest` that ends it, and the hand events and operator inputs that came
between the previous shot and this one (``before``). :func:`replay` runs a whole log.

This package imports the event types and NumPy only: never OpenCV (a test checks it).
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence, TypeVar, runtime_checkable

from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    CameraEvent,
    Event,
    OperatorInput,
    Pot,
    ShotStart,
)

__all__ = [
    "RulesError",
    "Shot",
    "Question",
    "Decision",
    "GameRules",
    "split_log",
    "replay",
    "refuse_unjudgeable",
    "parse_options",
    "first_contact",
    "pots_in_order",
    "cushions_before",
]


class RulesError(ValueError):
    """An impossible situation for the rules (a shot with an unknown ball, a ball potted twice, a shot
    judged after the match ended, a missing nomination). The message says what and what to do."""


@dataclass(frozen=True, slots=True)
class Shot:
    """One shot: the strike, what followed until everything stopped, and what came before it.

    ``events`` runs from the :class:`ShotStart` (first) to the :class:`AtRest` (last, if the log has
    it) in time order. ``before`` holds the hand events (ball placed / removed / touched) and the
    operator inputs since the previous shot ended, in time order.
    """

    index: int
    events: tuple[CameraEvent, ...]
    before: tuple[Event, ...] = ()

    def __post_init__(self) -> None:
        if not self.events or not isinstance(self.events[0], ShotStart):
            raise RulesError(f"shot {self.index}: a shot must begin with a shot_start event")

    @property
    def start(self) -> ShotStart:
        return self.events[0]  # type: ignore[return-value]

    @property
    def end(self) -> AtRest | None:
        last = self.events[-1]
        return last if isinstance(last, AtRest) else None

    @property
    def t_s(self) -> float:
        return self.start.t_s

    @property
    def struck(self) -> str:
        """The ball the cue struck."""
        return self.start.ball

    @property
    def start_positions(self) -> Mapping[str, tuple[float, float]]:
        return self.start.positions

    @property
    def end_positions(self) -> Mapping[str, tuple[float, float]]:
        return self.end.positions if self.end is not None else MappingProxyType({})

    def inputs(self, *kinds: type[OperatorInput]) -> tuple[OperatorInput, ...]:
        """Operator inputs given before this shot (and during it), optionally of some kinds only."""
        pool = [e for e in self.before + self.events if isinstance(e, OperatorInput)]
        return tuple(e for e in pool if not kinds or isinstance(e, kinds))


@dataclass(frozen=True, slots=True)
class Question:
    """What the engine asks the operator when it cannot decide (low confidence, unseen moment).

    ``id`` is what an :class:`~tracking.events.Answer` quotes; ``options`` the accepted answers."""

    id: str
    text: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The referee's call on one shot (or on one operator input).

    ``fouls`` lists every foul found, as values of the game's ``Foul`` enum in the game's documented
    precedence order; ``explanation`` is one line that quotes the rule numbers (also in ``rules``).
    A ``pending`` decision changes nothing until the operator answers its question.
    Engines extend this with their own fields (scores, breaks).
    """

    t_s: float
    shot: int | None
    player: str | None
    fouls: tuple[str, ...] = ()
    penalty: str | None = None
    next_player: str | None = None
    frame_over: bool = False
    winner: str | None = None
    match_over: bool = False
    match_winner: str | None = None
    explanation: str = ""
    rules: tuple[str, ...] = ()
    pending: Question | None = None

    def summary(self) -> str:
        """One line for a terminal: time, shot, the call and its rules."""
        head = f"{self.t_s:8.2f}s" + (f" shot {self.shot:>3}" if self.shot is not None else "  input  ")
        who = f" {self.player}:" if self.player else ""
        if self.pending is not None:
            return f"{head}{who} PENDING - {self.pending.text} [{'/'.join(self.pending.options)}]"
        return f"{head}{who} {self.explanation}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (enums as their values)."""

        def conv(v: Any) -> Any:
            if isinstance(v, enum.Enum):
                return v.value
            if dataclasses.is_dataclass(v) and not isinstance(v, type):
                return {f.name: conv(getattr(v, f.name)) for f in dataclasses.fields(v)}
            if isinstance(v, Mapping):
                return {str(k): conv(x) for k, x in v.items()}
            if isinstance(v, (tuple, list, frozenset, set)):
                return [conv(x) for x in v]
            return v

        return {f.name: conv(getattr(self, f.name)) for f in dataclasses.fields(self)}



@runtime_checkable
class GameRules(Protocol):
    """What every engine offers (see rules/ficha.py, rules/brasileira.py, rules/bar_billiards.py)."""

    name: str

    def initial_state(self, players: Sequence[str], options: Mapping[str, Any] | None = None) -> Any: ...

    def judge(self, state: Any, shot: Shot) -> Decision: ...

    def advance(self, state: Any, decision: Decision) -> Any: ...

    def on_input(self, state: Any, event: OperatorInput) -> Decision | None: ...


# ---- options ------------------------------------------------------------------------------------

O = TypeVar("O")


def parse_options(cls: type[O], given: Mapping[str, Any] | None, game: str) -> O:
    """Build a frozen options dataclass from a mapping, with clear errors for unknown names or bad
    values. Enum fields accept their value strings; bools accept true/false strings."""
    given = dict(given or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise RulesError(f"{game}: unknown option(s) {', '.join(unknown)}; the options are {', '.join(fields)}")
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for name, value in given.items():
        hint = hints[name]
        try:
            if isinstance(hint, type) and issubclass(hint, enum.Enum):
                value = hint(value)
            elif hint is bool:
                if isinstance(value, str):
                    if value.lower() not in ("true", "false", "yes", "no", "1", "0"):
                        raise ValueError(value)
                    value = value.lower() in ("true", "yes", "1")
                elif not isinstance(value, bool):
                    raise ValueError(value)
            elif hint is int:
                if isinstance(value, bool):
                    raise ValueError(value)
                value = int(value)
            elif hint is float:
                value = float(value)
        except (ValueError, TypeError):
            choices = ""
            if isinstance(hint, type) and issubclass(hint, enum.Enum):
                choices = f" (one of {', '.join(str(m.value) for m in hint)})"
            raise RulesError(f"{game}: option {name}={value!r} is not a valid {getattr(hint, '__name__', hint)}{choices}") from None
        kwargs[name] = value
    return cls(**kwargs)


def options_dict(options: Any) -> dict[str, Any]:
    """The options as plain JSON values (for the match record)."""
    out = {}
    for f in dataclasses.fields(options):
        v = getattr(options, f.name)
        out[f.name] = v.value if isinstance(v, enum.Enum) else v
    return out


# ---- splitting a log into shots --------------------------------------------------------------------


class ShotSplitter:
    """The push form of :func:`split_log`: give it events one at a time as they arrive (live), and it
    returns what is ready to judge: each :class:`Shot` when its ``AtRest`` arrives and each operator
    input at once.

    Operator inputs are returned the moment they arrive *and* kept in the next shot's ``before``, so
    an engine sees a nomination both as an input (it may refuse or record it) and in the shot it
    belongs to. A new ``shot_start`` with no ``at_rest`` before it closes the open shot unfinished
    (``end`` is None); so does :meth:`close` at the end of a log.
    """

    def __init__(self) -> None:
        self._before: list[Event] = []
        self._current: list[CameraEvent] | None = None
        self._index = 0

    @property
    def in_shot(self) -> bool:
        """True between a ``shot_start`` and its ``at_rest``."""
        return self._current is not None

    def _close(self) -> Shot:
        shot = Shot(self._index, tuple(self._current or ()), tuple(self._before))
        self._index += 1
        self._current, self._before = None, []
        return shot

    def push(self, e: Event) -> list[Shot | OperatorInput]:
        out: list[Shot | OperatorInput] = []
        if isinstance(e, ShotStart):
            if self._current is not None:  # a new strike with no at_rest: close the old shot unfinished
                out.append(self._close())
            self._current = [e]
            return out
        if isinstance(e, OperatorInput):
            out.append(e)
            self._before.append(e)  # before the shot, or said during it: it belongs to the shot's context
            return out
        if self._current is None:
            self._before.append(e)
            return out
        self._current.append(e)  # type: ignore[arg-type]
        if isinstance(e, AtRest):
            out.append(self._close())
        return out

    def close(self) -> list[Shot]:
        """The end of the log: an open shot is returned unfinished."""
        return [self._close()] if self._current is not None else []


def split_log(events: Iterable[Event]) -> Iterator[Shot | OperatorInput]:
    """Group a log into shots, yielding each :class:`Shot` when its ``AtRest`` arrives and each operator
    input that may act at once (see :class:`ShotSplitter`, of which this is the pull form). A log that
    ends inside a shot yields that unfinished shot (``end`` is None).
    """
    splitter = ShotSplitter()
    for e in events:
        yield from splitter.push(e)
    yield from splitter.close()


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a replay: the decision and the state after it."""

    decision: Decision
    state: Any


class Referee:
    """An engine refereeing a stream of events as they arrive: the live form of :func:`replay`.

    ``feed`` takes one event (camera event or operator input) and returns the steps it completed (a
    shot's decision when its ``at_rest`` arrives, an operator input's decision at once); ``finish``
    closes a log that ends inside a shot. ``state`` is the state after the last step.
    """

    def __init__(self, engine: GameRules, players: Sequence[str], options: Mapping[str, Any] | None = None):
        self.engine = engine
        self.state = engine.initial_state(players, options)
        self._splitter = ShotSplitter()

    def _judge(self, items: Iterable[Shot | OperatorInput]) -> list[Step]:
        steps = []
        for item in items:
            if isinstance(item, Shot):
                decision = self.engine.judge(self.state, item)
            else:
                decision = self.engine.on_input(self.state, item)
                if decision is None:
                    continue
            self.state = self.engine.advance(self.state, decision)
            steps.append(Step(decision, self.state))
        return steps

    @property
    def in_shot(self) -> bool:
        return self._splitter.in_shot

    def feed(self, event: Event) -> list[Step]:
        return self._judge(self._splitter.push(event))

    def finish(self) -> list[Step]:
        return self._judge(self._splitter.close())


def replay(engine: GameRules, events: Iterable[Event], players: Sequence[str], options: Mapping[str, Any] | None = None) -> Iterator[Step]:
    """Run a whole event log through an engine, yielding every decision with the state after it.

    Shots judged after the match is over raise :class:`RulesError` (an impossible log)."""
    referee = Referee(engine, players, options)
    for e in events:
        yield from referee.feed(e)
    yield from referee.finish()


def refuse_unjudgeable(game: str, shot: Shot, *, over: str | None = None, winner: str | None = None,
                       pending: Question | None = None) -> None:
    """Raise :class:`RulesError` for a shot no state can take: one after the end of the ``over``
    (``"match"`` or ``"frame"``), or one while a question still waits for its answer. Every engine
    calls this first in ``judge``, so an impossible log reads the same in every game."""
    at = f"{game}: shot {shot.index} at {shot.t_s:.2f}s"
    if over is not None:
        who = f" ({winner} won)" if winner else ""
        raise RulesError(
            f"{at} comes after the {over} ended: the {over} is over{who}, and no shot is judged after the end of "
            f"the {over} (the log is impossible)"
        )
    if pending is not None:
        raise RulesError(
            f"{at}: question {pending.id!r} ({pending.text}) is still pending, unanswered: answer it before the next shot"
        )


# ---- queries every engine needs -----------------------------------------------------------------------


def first_contact(shot: Shot, ball: str | None = None) -> BallBall | None:
    """The first ball-ball contact of the struck ball (or of ``ball``), or None for a miss."""
    who = ball or shot.struck
    for e in shot.events:
        if isinstance(e, BallBall) and who in (e.a, e.b):
            return e
    return None


def other(contact: BallBall, ball: str) -> str:
    """The ball a contact names besides ``ball``."""
    return contact.b if contact.a == ball else contact.a


def pots_in_order(shot: Shot) -> tuple[Pot, ...]:
    """The shot's pots ordered by the time each ball dropped (ficha 4.2: only the last counts)."""
    return tuple(sorted((e for e in shot.events if isinstance(e, Pot)), key=lambda p: p.t_s))


def cushions_before(shot: Shot, t_s: float, ball: str | None = None) -> tuple[BallCushion, ...]:
    """Cushion contacts of the struck ball (or ``ball``) strictly before ``t_s``."""
    who = ball or shot.struck
    return tuple(e for e in shot.events if isinstance(e, BallCushion) and e.ball == who and e.t_s < t_s)


def frozen_map(d: Mapping[str, Any] | None = None, **kw: Any) -> Mapping[str, Any]:
    """An immutable mapping, for state fields."""
    out = dict(d or {})
    out.update(kw)
    return MappingProxyType(out)


__all__ += ["Step", "Referee", "ShotSplitter", "other", "options_dict", "frozen_map"]
