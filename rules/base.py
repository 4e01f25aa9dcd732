"""The referee protocol every game shares, and the replay of an event log through an engine.

An engine states a game's rules; :class:`Referee` owns the flow that is the same in every game::

    engine = get_engine("ficha", profile)            # rules/__init__.py
    referee = Referee(engine, ("A", "B"), {"next_break": "winner"})
    for event in log:
        for step in referee.feed(event):             # a shot's call when its at_rest arrives,
            print(step.decision.summary())           # an operator input's call at once
    referee.undo("the camera saw a practice stroke") # take the last call back

**The engine** (a subclass of :class:`Engine`) is a set of pure functions over immutable states:
``initial_state(players, options)``, ``judge(state, shot) -> Decision`` (never mutates its inputs),
``advance(state, decision) -> state`` and ``on_input(state, event) -> Decision | None`` for the
operator inputs that act on their own (a concession, a warning, a "play again").

**The operator's word on a shot** travels with the shot: :attr:`Shot.answers` (question id ->
answer) and :attr:`Shot.corrections` (the overrides and other inputs that correct the shot's call).
An engine reads them while judging, so answering a question, overriding a call and undoing one are
all the same thing: judge the shot again, from the state before it, with the operator's word applied.
:class:`Referee` keeps that history; no engine keeps an undo record of its own.

**Questions** have one id scheme, ``s<shot>:<topic>[:<detail>...]`` (:meth:`Question.about`), and
are compared with ``==``. While a question is pending only its answer (or an input that waits for the
next shot, or :meth:`Referee.undo`) is taken; the next shot is refused until it is answered.

:func:`split_log` groups a flat event log into :class:`Shot` records; :func:`replay` runs a whole log.
This package imports the event types, the table profile, NumPy and pydantic only: never OpenCV (a test
checks it).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Iterable, Iterator, Mapping, Sequence, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from tracking.events import (
    Answer,
    AtRest,
    BallBall,
    BallCushion,
    CameraEvent,
    Concession,
    Event,
    Nomination,
    OperatorInput,
    Override,
    Pot,
    ShotStart,
    UndoCall,
)

__all__ = [
    "RulesError",
    "Shot",
    "Question",
    "Decision",
    "Undo",
    "RuleTable",
    "RulesOptions",
    "Engine",
    "Step",
    "Referee",
    "ShotSplitter",
    "split_log",
    "replay",
    "refuse_unjudgeable",
    "parse_options",
    "options_dict",
    "Frames",
    "joined_player",
    "parse_balls",
    "parse_points",
    "first_contact",
    "other",
    "pots_in_order",
    "cushions_before",
    "frozen_map",
]


class RulesError(ValueError):
    """An impossible log or input (a ball potted twice, an unknown ball id, a shot after the match
    ended, an answer to no question). The message says what and what to do. A shot that happened is
    never refused because it breaks a rule: it gets a call (a foul, a legal shot, or a question)."""


# ---- questions ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    """What the engine asks the operator when it cannot decide (low confidence, unseen moment, a
    missing input). ``id`` is what an :class:`~tracking.events.Answer` quotes (:meth:`about` builds
    it); ``options`` the accepted answers.

    ``default`` is the camera's own reading (an event reported with confidence of at least one half is
    read as having happened, the likelier of two balls first...), or None where only a person can say
    (a nomination). A recorded run with no operator takes it, as an ``answer`` marked ``assumed`` in
    the log, so that the match goes on; the review corrects it if it was wrong."""

    id: str
    text: str
    options: tuple[str, ...]
    default: str | None = None

    def __post_init__(self) -> None:
        if self.default is not None and self.default not in self.options:
            raise ValueError(f"question {self.id!r}: default {self.default!r} is not one of its options {self.options}")

    @staticmethod
    def key(shot: int, topic: str, *detail: str | int) -> str:
        """The id of a question about ``shot``: ``s<shot>:<topic>[:<detail>...]``."""
        return ":".join([f"s{shot}", topic, *(str(d) for d in detail)])

    @classmethod
    def about(cls, shot: int, topic: str, text: str, options: Sequence[str], *detail: str | int,
              default: str | None = None) -> "Question":
        return cls(cls.key(shot, topic, *detail), text, tuple(options), default)

    @staticmethod
    def seen(confidence: float) -> str:
        """The camera's reading of a yes/no question about an event it reported with ``confidence``."""
        return "yes" if confidence >= 0.5 else "no"

    @property
    def topic(self) -> str:
        """The topic part of the id (``removal`` in ``s5:removal:2``)."""
        parts = self.id.split(":")
        return parts[1] if len(parts) > 1 else ""


# ---- a shot and what the operator said about it ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shot:
    """One shot: the strike, what followed until everything stopped, what came before it, and the
    operator's word on it.

    ``events`` runs from the :class:`ShotStart` (first) to the :class:`AtRest` (last, if the log has
    it) in time order. ``before`` holds the hand events (ball placed / removed / touched) and the
    operator inputs since the previous shot ended, in time order. ``answers`` maps the ids of the
    questions the engine asked about this shot to the operator's answers; ``corrections`` lists the
    inputs given after the call that correct it (overrides, and whatever else the engine's
    :meth:`Engine.corrects` accepts), in the order given.
    """

    index: int
    events: tuple[CameraEvent, ...]
    before: tuple[Event, ...] = ()
    answers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    corrections: tuple[OperatorInput, ...] = ()

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

    @property
    def overrides(self) -> tuple[Override, ...]:
        return tuple(e for e in self.corrections if isinstance(e, Override))

    def answered(self, question_id: str, answer: str) -> "Shot":
        return dataclasses.replace(self, answers=MappingProxyType({**self.answers, question_id: answer}))

    def corrected(self, event: OperatorInput) -> "Shot":
        return dataclasses.replace(self, corrections=self.corrections + (event,))


# ---- decisions -------------------------------------------------------------------------------------------


def _json_value(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.value
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _json_value(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (tuple, list, frozenset, set)):
        return [_json_value(x) for x in v]
    return v


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The referee's call on one shot (or on one operator input).

    ``fouls`` lists every foul found, as values of the game's ``Foul`` enum in the game's documented
    precedence order; ``explanation`` is one line that quotes the rule numbers (also in ``rules``).
    A ``pending`` decision changes nothing until the operator answers its question. ``amends``: the
    call replaces the previous call on the same shot (an override or a correction).
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
    amends: bool = False

    def summary(self) -> str:
        """One line for a terminal: time, shot, the call and its rules."""
        head = f"{self.t_s:8.2f}s" + (f" shot {self.shot:>3}" if self.shot is not None else "  input  ")
        who = f" {self.player}:" if self.player else ""
        if self.pending is not None:
            return f"{head}{who} PENDING - {self.pending.text} [{'/'.join(self.pending.options)}]"
        return f"{head}{who} {self.explanation}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (enums as their values)."""
        return {f.name: _json_value(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Undo(Decision):
    """The operator took the last call back (:meth:`Referee.undo`): the match is where it was before
    it. ``withdrawn`` is the call taken back."""

    withdrawn: Decision

    def to_dict(self) -> dict[str, Any]:
        d = Decision.to_dict(self)
        d["withdrawn"] = self.withdrawn.to_dict()
        return d


# ---- the rule numbers of a game ------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleTable:
    """One game's rule numbers in one place: the rulebook's title, the rule each foul quotes, the
    order fouls are listed in, and the rule numbers (or foul names) an ``operator_foul`` may give."""

    game: str  # the engine's name, which starts every explanation ("ficha 4.2.1: ...")
    title: str  # the rulebook, cited by its title
    fouls: Mapping[Any, str]  # foul -> the rule it quotes
    precedence: tuple[Any, ...]  # fouls in the order a decision lists them
    operator: Mapping[str, Any] = field(default_factory=dict)  # operator_foul rule -> foul

    def __post_init__(self) -> None:
        missing = set(self.fouls) ^ set(self.precedence)
        if missing or len(set(self.precedence)) != len(self.precedence):
            raise ValueError(f"{self.game}: the precedence must list every foul once ({', '.join(map(str, missing))})")

    def ordered(self, fouls: Iterable[Any]) -> tuple[Any, ...]:
        """``fouls`` in precedence order, each once."""
        given = set(fouls)
        return tuple(f for f in self.precedence if f in given)

    def rule_of(self, foul: Any) -> str:
        return self.fouls[foul]

    def foul_named(self, text: str) -> Any:
        """The foul an ``operator_foul`` names: a rule number of :attr:`operator` (the game's name and
        brackets may be included) or a foul's value."""
        key = " ".join(text.lower().replace(self.game.replace("-", " "), " ").replace("(", " ").replace(")", " ").split())
        if key in self.operator:
            return self.operator[key]
        for foul in self.precedence:
            if key.replace(" ", "_") == str(foul):
                return foul
        raise RulesError(
            f"{self.game}: operator_foul rule {text!r} is an unknown foul; give a rule ({', '.join(self.operator)}) "
            f"or a foul ({', '.join(str(f) for f in self.precedence)})"
        )


# ---- options -------------------------------------------------------------------------------------------


class RulesOptions(BaseModel):
    """The base of every engine's options: a frozen pydantic model that refuses unknown names, with
    each field's range declared on the field (:func:`parse_options` turns pydantic's errors into the
    project's messages)."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


O = TypeVar("O", bound=RulesOptions)


def _odd(frames: int) -> int:
    if frames < 1 or frames % 2 == 0:
        raise ValueError("must be an odd number of frames, 1 or more (best of N)")
    return frames


Frames = Annotated[int, AfterValidator(_odd)]  # a match is best of N frames, N odd


def joined_player(game: str, options: RulesOptions, players: Sequence[str], player_option: str) -> str | None:
    """For a frame joined mid-way (option ``start=mid_frame``): the player at the table, from option
    ``player_option`` (default the first player). None for a frame from the start, where the other
    ``start_*`` options are refused."""
    given = [name for name in type(options).model_fields if name.startswith("start_") and getattr(options, name)]
    if getattr(options, "start") != "mid_frame":
        if given:
            raise RulesError(f"{game}: options {', '.join(given)} need start=mid_frame (a frame joined mid-way)")
        return None
    player = getattr(options, player_option) or players[0]
    if player not in players:
        raise RulesError(f"{game}: option {player_option}={player!r} is not a player of this match ({', '.join(players)})")
    return player


def parse_balls(game: str, option: str, text: str, known: Sequence[str], table: str) -> list[str]:
    """Ball ids given as ``a,b,c`` (option ``option``): each a ball of the table, each once."""
    names = [b.strip() for b in text.split(",") if b.strip()]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise RulesError(f"{game}: option {option} names {', '.join(unknown)}, not balls of table {table!r} ({', '.join(known)})")
    if len(set(names)) != len(names):
        raise RulesError(f"{game}: option {option} names a ball twice ({text!r})")
    return names


def parse_points(game: str, option: str, text: str, names: Sequence[str], who: str) -> dict[str, int]:
    """Scores given as ``name=points,...`` (option ``option``) for ``names`` (players or sides, ``who``);
    the names not given have 0."""
    points = {n: 0 for n in names}
    for part in (x for x in text.split(",") if x.strip()):
        name, _, value = (t.strip() for t in part.partition("="))
        if name not in points or not value.isdigit():
            raise RulesError(f"{game}: option {option}={text!r}: write {who}=points (points 0 or more) for {who}s {', '.join(names)}")
        points[name] = int(value)
    return points


def _range_text(cls: type[RulesOptions], name: str) -> str:
    bounds: dict[str, Any] = {}
    for m in cls.model_fields[name].metadata:
        for k in ("ge", "gt", "le", "lt"):
            if getattr(m, k, None) is not None:
                bounds[k] = getattr(m, k)
    low = ("ge", bounds["ge"]) if "ge" in bounds else ("gt", bounds["gt"]) if "gt" in bounds else None
    high = ("le", bounds["le"]) if "le" in bounds else ("lt", bounds["lt"]) if "lt" in bounds else None
    if low and high:
        return f"must lie between {low[1]:g} and {high[1]:g}"
    if low == ("gt", 0):
        return "must be positive"
    if low == ("ge", 0):
        return "must not be negative"
    if low:
        return f"must be {'more than' if low[0] == 'gt' else 'at least'} {low[1]:g}"
    if high:
        return f"must be {'less than' if high[0] == 'lt' else 'at most'} {high[1]:g}"
    return "is out of range"


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return f"{annotation.__name__} (one of {', '.join(str(m.value) for m in annotation)})"
    return getattr(annotation, "__name__", str(annotation))


def parse_options(cls: type[O], given: Mapping[str, Any] | None, game: str) -> O:
    """The options of ``game`` from a mapping (strings as given on a command line are converted: enum
    values, true/false, numbers), validated by the model; a :class:`RulesError` names the game, the
    option and what it accepts."""
    given = dict(given or {})
    try:
        return cls.model_validate(given)
    except ValidationError as err:
        errors = err.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        raise RulesError(f"{game}: unknown option(s) {', '.join(unknown)}; the options are {', '.join(cls.model_fields)}")
    e = errors[0]
    name = str(e["loc"][0]) if e["loc"] else ""
    value = given.get(name, e.get("input"))
    kind = e["type"]
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        why = _range_text(cls, name)
    elif kind == "finite_number":
        why = "must be a finite number"
    elif kind == "value_error":
        why = str(e["msg"]).removeprefix("Value error, ")
    else:
        why = f"is not a valid {_type_name(cls.model_fields[name].annotation)}" if name in cls.model_fields else str(e["msg"])
    raise RulesError(f"{game}: option {name}={value!r} {why}")


def options_dict(options: RulesOptions) -> dict[str, Any]:
    """The options as plain JSON values (for the match record)."""
    return options.model_dump(mode="json")


# ---- the engine ----------------------------------------------------------------------------------------


class Engine:
    """What every engine offers, and the flow that is the same in every game.

    A game implements :meth:`initial_state`, :meth:`_judge`, :meth:`_advance`, :meth:`over` and, where
    the game has inputs that act on their own, :meth:`_on_input`; it may widen :meth:`corrects` and
    :meth:`answer_of`. ``rules`` is the game's :class:`RuleTable`.
    """

    name: ClassVar[str]
    rules: ClassVar[RuleTable]
    # an input that acts on its own (a concession, a warning) said while a shot rolls waits for that
    # shot's call (see Referee); False: it acts at once (bar billiards: the bar drops mid-shot)
    inputs_wait_for_the_shot: ClassVar[bool] = False

    def initial_state(self, players: Sequence[str], options: Mapping[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def over(self, state: Any) -> tuple[str, str | None] | None:
        """``("match", winner)`` or ``("frame", winner)`` once no shot can follow; None while play goes on."""
        raise NotImplementedError

    def judge(self, state: Any, shot: Shot) -> Decision:
        """The call on one shot (pure), with the operator's answers and corrections the shot carries."""
        ended = self.over(state)
        if ended is not None:
            refuse_unjudgeable(self.name, shot, over=ended[0], winner=ended[1])
        return self._judge(state, shot)

    def advance(self, state: Any, decision: Decision) -> Any:
        """The state after a decision (pure). A pending decision changes nothing."""
        if decision.pending is not None:
            return state
        return self._advance(state, decision)

    def on_input(self, state: Any, event: OperatorInput) -> Decision | None:
        """The call on an operator input that acts at once, or None for one that waits for the next
        shot (a nomination) or does nothing in this game. Answers and corrections of a call are the
        :class:`Referee`'s: they judge a shot again."""
        if isinstance(event, (Answer, Override)):
            raise RulesError(f"{self.name}: {event.kind} at {event.t_s:.2f}s re-judges a shot: give it to rules.base.Referee")
        return self._on_input(state, event)

    def corrects(self, state: Any, last: Decision, event: OperatorInput) -> bool:
        """Whether ``event`` corrects ``last`` (the last call, a shot's) rather than acting on its own.
        Every game takes an ``override``; some take more (an operator's foul on the shot just played)."""
        return isinstance(event, Override)

    def answer_of(self, question: Question, event: OperatorInput) -> str | None:
        """The answer ``event`` gives to the pending ``question``, or None if it is no answer to it."""
        if isinstance(event, Answer):
            if event.question != question.id:
                raise RulesError(
                    f"{self.name}: answer at {event.t_s:.2f}s is to {event.question!r}, but the pending question is {question.id!r}"
                )
            return event.answer
        return None

    # ---- what each game writes ----
    def _judge(self, state: Any, shot: Shot) -> Decision:
        raise NotImplementedError

    def _advance(self, state: Any, decision: Decision) -> Any:
        raise NotImplementedError

    def _on_input(self, state: Any, event: OperatorInput) -> Decision | None:
        return None


def refuse_unjudgeable(game: str, shot: Shot, *, over: str | None = None, winner: str | None = None,
                       pending: Question | None = None) -> None:
    """Raise :class:`RulesError` for a shot no state can take: one after the end of the ``over``
    (``"match"`` or ``"frame"``), or one while a question still waits for its answer. It reads the
    same in every game."""
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


# ---- splitting a log into shots --------------------------------------------------------------------


class ShotSplitter:
    """The push form of :func:`split_log`: give it events one at a time as they arrive (live), and it
    returns what is ready to judge: each :class:`Shot` when its ``AtRest`` arrives and each operator
    input at once.

    Operator inputs are returned the moment they arrive *and* kept in the next shot's ``before``, so
    an engine sees a nomination both as an input (it may refuse or record it) and in the shot it
    belongs to. An input said during a shot belongs to that shot's context, but a nomination, being
    always for the next shot, goes to the shot after it. A new ``shot_start`` with no ``at_rest``
    before it closes the open shot unfinished (``end`` is None); so does :meth:`close` at the end of
    a log.
    """

    def __init__(self) -> None:
        self._before: list[Event] = []
        self._next: list[Event] = []  # nominations said while a shot runs: they are for the shot after it
        self._current: list[CameraEvent] | None = None
        self._index = 0

    @property
    def in_shot(self) -> bool:
        """True between a ``shot_start`` and its ``at_rest``."""
        return self._current is not None

    def _close(self) -> Shot:
        shot = Shot(self._index, tuple(self._current or ()), tuple(self._before))
        self._index += 1
        self._current, self._before, self._next = None, self._next, []
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
            if isinstance(e, Nomination) and self._current is not None and e.t_s > self._current[0].t_s:
                self._next.append(e)  # "the ball and pocket of the next shot" (docs/event-log.md), keyed while balls roll
            else:
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

    def withdraw(self, event: OperatorInput) -> None:
        """Take an input out of the next shot's context (it was consumed, or undone)."""
        self._before = [e for e in self._before if e is not event]
        self._next = [e for e in self._next if e is not event]

    def restore(self, shot: Shot) -> None:
        """An undone shot: its camera events are dropped, what came before it stays for the next shot."""
        self._before = list(shot.before) + self._before


def split_log(events: Iterable[Event]) -> Iterator[Shot | OperatorInput]:
    """Group a log into shots, yielding each :class:`Shot` when its ``AtRest`` arrives and each operator
    input that may act at once (see :class:`ShotSplitter`, of which this is the pull form). A log that
    ends inside a shot yields that unfinished shot (``end`` is None).
    """
    splitter = ShotSplitter()
    for e in events:
        yield from splitter.push(e)
    yield from splitter.close()


# ---- the referee -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a replay: the decision and the state after it."""

    decision: Decision
    state: Any


@dataclass(frozen=True, slots=True)
class _Call:
    """One call in the history: the state it was made on, what it was made from, and the call."""

    before: Any
    item: Shot | OperatorInput
    decision: Decision


class Referee:
    """An engine refereeing a stream of events as they arrive: the live form of :func:`replay`.

    ``feed`` takes one event (camera event or operator input) and returns the steps it completed (a
    shot's decision when its ``at_rest`` arrives, an operator input's decision at once); ``finish``
    closes a log that ends inside a shot; ``undo`` takes the last call back. ``state`` is the state
    after the last call and ``pending`` the question waiting for an answer.

    An answer to the pending question, and an input that corrects the last shot's call (an
    ``override``; see :meth:`Engine.corrects`), judge that shot again from the state before it with
    the operator's word applied; the new call replaces the old one (``amends``).

    In an engine whose ``inputs_wait_for_the_shot`` is set (Sinuca de Ficha), an input that acts on its
    own (a concession, a misconduct warning) said while a shot is running acts once that shot has its
    call: the strike came first, so the shot is judged as the player at the table played it and in the
    frame it was played in (ficha 6.3, 5.8). A concession said during a shot that itself ends the frame
    has nothing left to concede.
    """

    def __init__(self, engine: Engine, players: Sequence[str] = (), options: Mapping[str, Any] | None = None,
                 *, state: Any = None):
        self.engine = engine
        self.state = state if state is not None else engine.initial_state(players, options)
        self.history: list[_Call] = []
        self.undone: list[tuple[_Call, str]] = []  # calls taken back, with the reason: never lost
        self._splitter = ShotSplitter()
        self._shots = 0  # shots handed to the engine so far
        self._held: list[tuple[int, OperatorInput]] = []  # (the running shot's index, an input said during it)

    @property
    def pending(self) -> Question | None:
        """The question the last call asks, until it is answered."""
        return self.history[-1].decision.pending if self.history else None

    @property
    def in_shot(self) -> bool:
        return self._splitter.in_shot

    def feed(self, event: Event) -> list[Step]:
        if isinstance(event, UndoCall):  # the log's own record of an undo: replayed in its place
            return [self.undo(event.reason, event.t_s)]
        return self._take(self._splitter.push(event))

    def finish(self) -> list[Step]:
        held, self._held = self._held, []  # said during a shot that never comes to rest: they act before its (pending) call
        return self._take((e for _, e in held), hold=False) + self._take(self._splitter.close())

    def undo(self, reason: str, t_s: float | None = None) -> Step:
        """Take the last call back (a shot the camera saw that was no shot, an input given by mistake):
        the state returns to before it. A shot's hand events stay for the next shot; the call and the
        reason are kept in ``undone``."""
        if not reason.strip():
            raise RulesError(f"{self.engine.name}: undo needs a reason (it is recorded with the match)")
        if not self.history:
            raise RulesError(f"{self.engine.name}: there is no call to undo")
        call = self.history.pop()
        self.undone.append((call, reason))
        if isinstance(call.item, Shot):
            self._splitter.restore(call.item)
        else:
            self._splitter.withdraw(call.item)
        self.state = call.before
        what = f"shot {call.decision.shot}" if call.decision.shot is not None else f"the {call.item.kind} input"
        d = Undo(t_s=t_s if t_s is not None else call.decision.t_s, shot=call.decision.shot, player=call.decision.player,
                 withdrawn=call.decision, explanation=f"undo: the call on {what} is withdrawn ({reason})")
        return Step(d, self.state)

    def _take(self, items: Iterable[Shot | OperatorInput], hold: bool = True) -> list[Step]:
        steps = []
        for item in items:
            if isinstance(item, Shot):
                self._shots += 1
                step = self._shot(item)
            else:
                try:
                    if (hold and self.engine.inputs_wait_for_the_shot and self._splitter.in_shot
                            and not isinstance(item, (Answer, Override))
                            and self.engine.on_input(self.state, item) is not None):
                        self._held.append((self._shots, item))  # it acts once the running shot has its call
                        continue
                    step = self._input(item)
                except RulesError:
                    self._splitter.withdraw(item)  # a refused input is no part of the next shot
                    raise
            if step is not None:
                steps.append(step)
            if self._held and self.pending is None and self._held[0][0] < self._shots:
                held, self._held = self._held, []
                if self.history and self.history[-1].decision.frame_over:  # the shot ended the frame first
                    held = [(n, e) for n, e in held if not isinstance(e, Concession)]
                steps += self._take((e for _, e in held), hold=False)
        return steps

    def _record(self, before: Any, item: Shot | OperatorInput, decision: Decision, replace_last: bool = False) -> Step:
        if replace_last:
            self.history.pop()
        self.history.append(_Call(before, item, decision))
        self.state = self.engine.advance(before, decision)
        return Step(decision, self.state)

    def _shot(self, shot: Shot) -> Step | None:
        refuse_unjudgeable(self.engine.name, shot, pending=self.pending)
        last = self.history[-1] if self.history else None
        if (self.engine.over(self.state) is not None and last is not None and not isinstance(last.item, Shot)
                and shot.t_s < last.decision.t_s):
            return None  # the balls were rolling when an input (a concession) ended the game: nothing is left to judge
        return self._record(self.state, shot, self.engine.judge(self.state, shot))

    def _input(self, event: OperatorInput) -> Step | None:
        name, at = self.engine.name, f"{event.kind} at {event.t_s:.2f}s"
        last = self.history[-1] if self.history else None
        if self.pending is not None:
            assert last is not None and isinstance(last.item, Shot)
            answer = self.engine.answer_of(self.pending, event)
            if answer is None:
                if isinstance(event, Override) or self.engine.on_input(self.state, event) is not None:
                    raise RulesError(f"{name}: {at}: question {self.pending.id!r} ({self.pending.text}) is pending: answer it first")
                return None
            if answer not in self.pending.options:
                raise RulesError(f"{name}: {at}: {answer!r} does not answer {self.pending.id!r} ({self.pending.text}); "
                                 f"answer one of {', '.join(self.pending.options)}")
            self._splitter.withdraw(event)
            question = self.pending
            shot = last.item.answered(question.id, answer)
            d = self.engine.judge(last.before, shot)
            if isinstance(event, Answer) and event.assumed:
                d = dataclasses.replace(d, explanation=f"no answer to {question.id} ({question.text}): the camera's reading "
                                                       f"{answer!r} assumed: {d.explanation}")
            return self._record(last.before, shot, d, replace_last=True)
        if isinstance(event, Answer):
            raise RulesError(f"{name}: {at} to {event.question!r}, but no question is pending")
        if last is not None and isinstance(last.item, Shot) and self.engine.corrects(self.state, last.decision, event):
            self._splitter.withdraw(event)
            shot = last.item.corrected(event)
            d = self.engine.judge(last.before, shot)
            if d.pending is not None:
                raise RulesError(f"{name}: {at} leaves the call pending ({d.pending.text}); correct it otherwise")
            d = dataclasses.replace(d, amends=True, explanation=f"{_correction_label(event)}: {d.explanation}")
            return self._record(last.before, shot, d, replace_last=True)
        if isinstance(event, Override):
            what = "no call yet" if last is None else f"the last call was on the {last.item.kind} input"
            raise RulesError(f"{name}: {at}: there is no shot call to change ({what}; an override corrects the last shot's call)")
        d = self.engine.on_input(self.state, event)
        return None if d is None else self._record(self.state, event, d)


def _correction_label(event: OperatorInput) -> str:
    if isinstance(event, Override):
        return f"override {event.field}={event.value}" + (f" ({event.note})" if event.note else "")
    details = [str(getattr(event, k)) for k in ("player", "rule", "ball", "note") if getattr(event, k, "")]
    return " ".join([event.kind, *details])


def replay(engine: Engine, events: Iterable[Event], players: Sequence[str], options: Mapping[str, Any] | None = None) -> Iterator[Step]:
    """Run a whole event log through an engine, yielding every decision with the state after it.

    Shots judged after the match is over raise :class:`RulesError` (an impossible log)."""
    referee = Referee(engine, players, options)
    for e in events:
        yield from referee.feed(e)
    yield from referee.finish()


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
