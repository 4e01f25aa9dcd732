"""The event log: what the tracker saw, and what the operator said, in time order.

This is cueref's central contract. Tracking (or the simulator's ground truth, or a person with a
text editor) writes events; the rules engines read them and nothing else. Every event is a frozen
dataclass with a time ``t_s`` (seconds from the start of the video, taken from the container's
timestamps) and a ``confidence`` in [0, 1]; positions are table millimetres (frame documented in
:mod:`calibration.table`). The JSON Lines form is one object per line with a ``kind`` field and the
event's fields by name; ``docs/event-log.md`` documents every kind with an example log.

Camera events
    ``shot_start``      the cue strikes a ball: the shot begins          ``ball``, ``xy_mm``, ``positions``
    ``cue_contact``     the cue touches a ball again during a shot       ``ball``, ``xy_mm``
    ``ball_ball``       two balls touch                                  ``a``, ``b``, ``xy_mm``
    ``ball_cushion``    a ball touches a cushion (or the scoreboard)     ``ball``, ``cushion``, ``xy_mm``
    ``pot``             a ball drops into a pocket or a bed hole         ``ball``, ``pocket``, ``xy_mm``, ``edge_wait_s``
    ``off_table``       a ball leaves the playing surface                ``ball``, ``xy_mm``
    ``returned``        a ball that left comes back by its own means     ``ball``, ``xy_mm``
    ``jump``            a ball is airborne                               ``ball``, ``xy_mm``, ``airborne_s``
    ``pin_down``        a pin is knocked over                            ``pin``, ``xy_mm``
    ``pin_moved``       a pin moved but stands                           ``pin``, ``xy_mm``
    ``ball_placed``     a hand puts a ball on the table                  ``ball``, ``xy_mm``
    ``ball_removed``    a hand lifts a ball off the table                ``ball``, ``xy_mm``
    ``ball_touched``    a ball moved with no strike, contact or cushion  ``ball``, ``xy_mm``
    ``at_rest``         every ball has stopped: the shot is over         ``positions``, ``pins``
    ``unobserved``      no event could be inferred until ``until_s``     ``until_s``, ``reason``

Operator inputs (the live console, a keyboard shortcut, or a calls file; confidence 1)
    ``nomination``      ball and pocket the next shot is played at       ``ball``, ``pocket``
    ``concession``      a player concedes the frame                      ``player``
    ``warning``         a misconduct warning (ficha 5.8)                 ``player``, ``rule``
    ``removal_choice``  which ball the penalty removes / re-spots        ``ball``
    ``operator_foul``   a foul no camera can see                         ``player``, ``rule``, ``note``
    ``play_again``      the non-offender asks the offender to play again (brasileira)
    ``rebreak_choice``  after a foul break: ``rebreak`` or ``play_on`` (bar billiards 2b b)
    ``interference``    balls moved by someone else: no penalty (bar billiards 2e)
    ``bar_dropped``     the game clock ran out (bar billiards 2g, 2i)
    ``endgame``         the leader invokes the endgame (bar billiards 2i)    ``player``
    ``answer``          the answer to a pending question                 ``question``, ``answer``
    ``override``        replace an automatic call                        ``field``, ``value``, ``note``

Every kind is declared once as a pydantic dataclass (types, finiteness, ranges, unknown fields
refused) and the JSON form is a union of them told apart by ``kind``; a bad line is refused with its
number and the field (``calibration.validation`` words the message).

Rules engines must not import anything heavier than this module; it imports neither OpenCV nor
NumPy.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Iterable, Mapping, TextIO, Union

import pydantic.dataclasses
from pydantic import AfterValidator, Discriminator, Strict, Tag, TypeAdapter, ValidationError, ValidationInfo
from pydantic import model_validator

from calibration.validation import STRICT, JsonData, PointMm, Text, named_problem, one_line, shorten

__all__ = [
    "XY",
    "Event",
    "CameraEvent",
    "OperatorInput",
    "ShotStart",
    "CueContact",
    "BallBall",
    "BallCushion",
    "Pot",
    "OffTable",
    "Returned",
    "Jump",
    "PinDown",
    "PinMoved",
    "BallPlaced",
    "BallRemoved",
    "BallTouched",
    "AtRest",
    "Unobserved",
    "Nomination",
    "Concession",
    "Warning",
    "RemovalChoice",
    "OperatorFoul",
    "PlayAgain",
    "RebreakChoice",
    "Interference",
    "BarDropped",
    "InvokeEndgame",
    "Answer",
    "Override",
    "UndoCall",
    "LogHeader",
    "EventLogError",
    "EVENT_KINDS",
    "event_to_dict",
    "event_from_dict",
    "dumps_events",
    "write_events",
    "read_events",
    "parse_events",
    "balls_involved",
]

XY = tuple[float, float]

LOG_VERSION = 1


class EventLogError(ValueError):
    """An event log that cannot be read: the message gives the line number and the reason."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        where = f"{source or 'event log'}" + (f", line {line}" if line is not None else "")
        super().__init__(f"{where}: {message}")
        self.line = line
        self.source = source
        self.reason = message


# ---- the declared field types (pydantic validates every event as it is made) ---------------------


def _not_negative(value: float, info: ValidationInfo) -> float:
    if value < 0:
        raise named_problem(f"{info.field_name} must not be negative, got {value!r}")
    return value


def _unit_interval(value: float, info: ValidationInfo) -> float:
    if not 0.0 <= value <= 1.0:
        raise named_problem(f"{info.field_name} must be between 0 and 1, got {value!r}")
    return value


# Seconds from the start of the video (or a duration): a finite number, 0 or more.
Seconds = Annotated[float, Strict(), AfterValidator(_not_negative)]
Confidence = Annotated[float, Strict(), AfterValidator(_unit_interval)]
FreeText = Annotated[str, Strict()]  # a note or a reason: any text, empty by default
# Ball (or pin) id -> where it is; read-only once made.
Positions = Annotated[Mapping[Text, PointMm], AfterValidator(lambda m: MappingProxyType(dict(m)))]


def _rebreak_or_play_on(value: str) -> str:
    if value not in ("rebreak", "play_on"):
        raise named_problem(f"choice must be 'rebreak' or 'play_on', got {value!r}")
    return value


def _drop_kind() -> Any:
    """A validator for a class with a ``kind``: the JSON form carries ``kind`` (the union's tag),
    which the class already says; it is dropped before the fields are read."""

    def drop(cls: type, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") == cls.kind:
            return {k: v for k, v in data.items() if k != "kind"}
        return data

    return model_validator(mode="before")(classmethod(drop))


_event = pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=STRICT)


@_event
class Event:
    """Base of every event: when (seconds from the video's start) and how sure (0..1).

    Every event is a frozen dataclass validated by pydantic as it is made: unknown fields, wrong
    types, numbers that are not finite, negative times and confidences outside [0, 1] raise a
    :class:`ValueError` naming the field."""

    kind: ClassVar[str] = ""
    t_s: Seconds
    confidence: Confidence = 1.0

    _without_kind = _drop_kind()


class CameraEvent(Event):
    """Marker base: an event inferred from the video (or the simulator's ground truth)."""

    __slots__ = ()


class OperatorInput(Event):
    """Marker base: something a person said, not something the camera saw."""

    __slots__ = ()


# ---- camera events -------------------------------------------------------------------------------


@_event
class ShotStart(CameraEvent):
    """The cue strikes ``ball`` at ``xy_mm``: a shot begins. ``positions`` holds every ball on the
    table at that moment (ball id -> xy_mm), so that snookers and frozen balls can be judged."""

    kind: ClassVar[str] = "shot_start"
    ball: Text
    xy_mm: PointMm | None = None
    positions: Positions = field(default_factory=dict)


@_event
class CueContact(CameraEvent):
    """The cue touches ``ball`` again after the shot began (double hit, push, touching another ball)."""

    kind: ClassVar[str] = "cue_contact"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class BallBall(CameraEvent):
    """Balls ``a`` and ``b`` touch at ``xy_mm`` (the contact point). ``a`` is the striking ball when known."""

    kind: ClassVar[str] = "ball_ball"
    a: Text
    b: Text
    xy_mm: PointMm | None = None


@_event
class BallCushion(CameraEvent):
    """``ball`` touches cushion ``cushion`` (profile id: L, R, T1, T2, B1, B2; bar billiards L, R, T, B,
    scoreboard)."""

    kind: ClassVar[str] = "ball_cushion"
    ball: Text
    cushion: Text
    xy_mm: PointMm | None = None


@_event
class Pot(CameraEvent):
    """``ball`` drops into pocket or hole ``pocket`` at ``t_s``.

    ``edge_wait_s`` is how long the ball stood still on the hole's edge before it dropped (0 for a
    ball that dropped while moving; bar billiards 2f b counts a drop within 5 s)."""

    kind: ClassVar[str] = "pot"
    ball: Text
    pocket: Text
    xy_mm: PointMm | None = None
    edge_wait_s: Seconds = 0.0


@_event
class OffTable(CameraEvent):
    """``ball`` leaves the playing surface (over a cushion) at ``xy_mm``."""

    kind: ClassVar[str] = "off_table"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class Returned(CameraEvent):
    """``ball``, which had left the playing surface, comes back by its own means (bar billiards 2d a)."""

    kind: ClassVar[str] = "returned"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class Jump(CameraEvent):
    """``ball`` leaves the cloth at ``xy_mm`` and is airborne for ``airborne_s`` seconds."""

    kind: ClassVar[str] = "jump"
    ball: Text
    xy_mm: PointMm | None = None
    airborne_s: Seconds = 0.0


@_event
class PinDown(CameraEvent):
    """Pin ``pin`` is knocked over."""

    kind: ClassVar[str] = "pin_down"
    pin: Text
    xy_mm: PointMm | None = None


@_event
class PinMoved(CameraEvent):
    """Pin ``pin`` moved to ``xy_mm`` but still stands (bar billiards 2h)."""

    kind: ClassVar[str] = "pin_moved"
    pin: Text
    xy_mm: PointMm | None = None


@_event
class BallPlaced(CameraEvent):
    """A hand puts ``ball`` on the table at ``xy_mm`` (re-spotting, trough, a D placement, a re-rack)."""

    kind: ClassVar[str] = "ball_placed"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class BallRemoved(CameraEvent):
    """A hand lifts ``ball`` off the table from ``xy_mm`` (a penalty removal, a re-rack)."""

    kind: ClassVar[str] = "ball_removed"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class BallTouched(CameraEvent):
    """``ball`` started to move with no cue strike, ball contact or cushion to explain it."""

    kind: ClassVar[str] = "ball_touched"
    ball: Text
    xy_mm: PointMm | None = None


@_event
class AtRest(CameraEvent):
    """Everything has stopped (ficha 4.1): the shot is over. ``positions``: every ball on the table;
    ``pins``: every standing pin (bar billiards)."""

    kind: ClassVar[str] = "at_rest"
    positions: Positions = field(default_factory=dict)
    pins: Positions = field(default_factory=dict)


@_event
class Unobserved(CameraEvent):
    """From ``t_s`` to ``until_s`` nothing could be inferred (camera moved, table hidden); a shot that
    overlaps this interval is judged only with the operator's confirmation."""

    kind: ClassVar[str] = "unobserved"
    until_s: Seconds
    reason: FreeText = ""


# ---- operator inputs -----------------------------------------------------------------------------


@_event
class Nomination(OperatorInput):
    """The shooter nominates ``ball`` into ``pocket`` for the next shot (brasileira rule 4)."""

    kind: ClassVar[str] = "nomination"
    ball: Text
    pocket: Text


@_event
class Concession(OperatorInput):
    """``player`` concedes the frame (ficha 6.3)."""

    kind: ClassVar[str] = "concession"
    player: Text


@_event
class Warning(OperatorInput):
    """A misconduct warning to ``player`` under ``rule`` (ficha 5.8)."""

    kind: ClassVar[str] = "warning"
    player: Text
    rule: FreeText = ""


@_event
class RemovalChoice(OperatorInput):
    """The ball a penalty removes (ficha 5.2-5.7: the non-offender's choice) or re-spots."""

    kind: ClassVar[str] = "removal_choice"
    ball: Text


@_event
class OperatorFoul(OperatorInput):
    """A foul the camera cannot see (a push, a touch with the body, a deliberate foul), called under ``rule``."""

    kind: ClassVar[str] = "operator_foul"
    player: Text
    rule: Text
    note: FreeText = ""


@_event
class PlayAgain(OperatorInput):
    """The non-offender, snookered after a foul, asks the offender to play again (brasileira)."""

    kind: ClassVar[str] = "play_again"


@_event
class RebreakChoice(OperatorInput):
    """After a foul break, the opponent's choice (bar billiards 2b b): ``rebreak`` or ``play_on``."""

    kind: ClassVar[str] = "rebreak_choice"
    choice: Annotated[str, Strict(), AfterValidator(_rebreak_or_play_on)]


@_event
class Interference(OperatorInput):
    """Balls or pins were moved by someone or something outside the player's control (bar billiards 2e)."""

    kind: ClassVar[str] = "interference"
    note: FreeText = ""


@_event
class BarDropped(OperatorInput):
    """The table's clock ran out: balls no longer return to the trough (bar billiards 2g, 2i)."""

    kind: ClassVar[str] = "bar_dropped"


@_event
class InvokeEndgame(OperatorInput):
    """The leading ``player`` invokes the endgame although the gap is over the threshold (bar billiards 2i)."""

    kind: ClassVar[str] = "endgame"
    player: Text


@_event
class Answer(OperatorInput):
    """The operator's answer to a pending question (its id as the engine gave it). ``assumed``: no
    operator answered before the next shot (or the end of a recorded video), so the run took the
    question's default, the camera's own reading, to go on; a review may correct it."""

    kind: ClassVar[str] = "answer"
    question: Text
    answer: Text
    assumed: bool = False


@_event
class Override(OperatorInput):
    """Replace the automatic call for the shot just judged: ``field`` (``fouls``, ``next_player``,
    ``winner``, ``pots``...) takes ``value``; each engine documents the fields it accepts."""

    kind: ClassVar[str] = "override"
    field: Text
    value: FreeText
    note: FreeText = ""


@_event
class UndoCall(OperatorInput):
    """The operator takes the referee's last call back, for ``reason`` (a practice stroke the camera took
    for a shot, an input given by mistake): the match returns to before that call, which is kept with
    the reason (:meth:`rules.base.Referee.undo`)."""

    kind: ClassVar[str] = "undo"
    reason: FreeText


_KINDS = (
    ShotStart, CueContact, BallBall, BallCushion, Pot, OffTable, Returned, Jump, PinDown, PinMoved,
    BallPlaced, BallRemoved, BallTouched, AtRest, Unobserved,
    Nomination, Concession, Warning, RemovalChoice, OperatorFoul, PlayAgain, RebreakChoice, Interference, UndoCall,
    BarDropped, InvokeEndgame, Answer, Override,
)
EVENT_KINDS: Mapping[str, type[Event]] = MappingProxyType({cls.kind: cls for cls in _KINDS})


def _kind_of(value: Any) -> str | None:
    return value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)


# The JSON form of an event: a union of every kind, told apart by ``kind``.
EventUnion = Annotated[Union[tuple(Annotated[cls, Tag(cls.kind)] for cls in _KINDS)], Discriminator(_kind_of)]
_EVENT = TypeAdapter(EventUnion)


def balls_involved(event: Event) -> tuple[str, ...]:
    """Ball ids an event names (``a`` and ``b`` of a contact, ``ball`` of the others)."""
    if isinstance(event, BallBall):
        return (event.a, event.b)
    ball = getattr(event, "ball", None)
    return (ball,) if ball is not None else ()


# ---- the log header --------------------------------------------------------------------------------


def _supported_version(value: int) -> int:
    if value != LOG_VERSION:
        raise named_problem(f"log format version {value!r} is not supported (this cueref reads version {LOG_VERSION})")
    return value


@pydantic.dataclasses.dataclass(frozen=True, slots=True, config=STRICT)
class LogHeader:
    """Optional first line of a log (``{"kind": "header", ...}``): what was played and with what."""

    kind: ClassVar[str] = "header"
    version: Annotated[int, Strict(), AfterValidator(_supported_version)] = LOG_VERSION
    game: Text | None = None
    profile: Text | None = None
    players: tuple[Text, ...] = ()
    options: Mapping[str, JsonData] = field(default_factory=dict)
    source: Text | None = None  # the video the log was made from

    _without_kind = _drop_kind()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "header", "version": self.version}
        for k in ("game", "profile", "source"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.players:
            d["players"] = list(self.players)
        if self.options:
            d["options"] = dict(self.options)
        return d


_HEADER = TypeAdapter(LogHeader)


# ---- JSON Lines ------------------------------------------------------------------------------------


def _round(v: float) -> float:
    return round(float(v), 6)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON form of one event: ``kind`` first, then fields; defaults omitted except t_s."""
    d: dict[str, Any] = {"kind": event.kind, "t_s": _round(event.t_s)}
    for f in dataclasses.fields(event):
        if f.name == "t_s":
            continue
        v = getattr(event, f.name)
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING
        )
        if default is not dataclasses.MISSING and v == default:
            continue
        if f.name in ("positions", "pins"):
            v = {k: [_round(x), _round(y)] for k, (x, y) in v.items()}
        elif f.name == "xy_mm" and v is not None:
            v = [_round(v[0]), _round(v[1])]
        elif isinstance(v, float):
            v = _round(v)
        d[f.name] = v
    return d


def event_from_dict(d: Mapping[str, Any]) -> Event:
    """Build an event from its JSON form; raises ValueError with the reason (no line number)."""
    if not isinstance(d, Mapping):
        raise ValueError(f"an event must be a JSON object, got {type(d).__name__}")
    kind = d.get("kind")
    if kind is None:
        raise ValueError("missing field 'kind'")
    if not isinstance(kind, str):
        raise ValueError(f"field 'kind' must be the name of an event kind, got {shorten(kind)}")
    cls = EVENT_KINDS.get(kind)
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r} (known kinds: {', '.join(sorted(EVENT_KINDS))})")
    try:
        return _EVENT.validate_python(dict(d))
    except ValidationError as e:
        fields = ", ".join(f.name for f in dataclasses.fields(cls))
        raise ValueError(f"{kind}: " + one_line(
            e, skip=1, missing="missing field '{path}'", unknown=f"unknown field(s) {{names}} (fields of {kind}: {fields})",
        )) from None


def dumps_events(events: Iterable[Event], header: LogHeader | None = None) -> str:
    """The JSON Lines text of a log."""
    buf = io.StringIO()
    write_events(buf, events, header)
    return buf.getvalue()


def write_events(dest: str | Path | TextIO, events: Iterable[Event], header: LogHeader | None = None) -> None:
    """Write a log as JSON Lines (to a path: atomically, through a temporary file then a rename)."""
    if isinstance(dest, (str, Path)):
        path = Path(dest)
        tmp = path.with_name(path.name + ".part")
        with open(tmp, "w", encoding="utf-8") as fh:
            write_events(fh, events, header)
        tmp.replace(path)
        return
    if header is not None:
        dest.write(json.dumps(header.to_dict(), separators=(",", ":")) + "\n")
    for e in events:
        dest.write(json.dumps(event_to_dict(e), separators=(",", ":")) + "\n")


def _header_from_dict(d: Mapping[str, Any]) -> LogHeader:
    try:
        return _HEADER.validate_python(dict(d))
    except ValidationError as e:
        raise ValueError("header: " + one_line(e)) from None


def _record(text: str) -> Any:
    """One line's JSON value; ValueError says why it is not one."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at column {e.colno})") from None
    except ValueError as e:  # an integer of thousands of digits
        raise ValueError(f"not valid JSON ({e})") from None


def parse_events(lines: Iterable[str], source: str | None = None,
                 line_of: dict[int, int] | None = None) -> tuple[LogHeader | None, list[Event]]:
    """Parse JSON Lines; every problem raises :class:`EventLogError` with its line number.

    Blank lines and lines starting with ``#`` are skipped. Times must not go backwards. ``line_of``,
    when given, receives each event's line number keyed by ``id(event)``, so that later checks of the
    parsed events (:func:`tracking.validate.check_against_profile`) can name the line too.
    """
    header: LogHeader | None = None
    events: list[Event] = []
    last_t = -math.inf
    for n, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            d = _record(text)
            if isinstance(d, dict) and d.get("kind") == "header":
                if header is not None or events:
                    raise ValueError("a header may only be the first record of a log")
                header = _header_from_dict(d)
                continue
            event = event_from_dict(d)
        except RecursionError:
            raise EventLogError("a value is nested too deeply (an event is a flat object of fields)", n, source) from None
        except ValueError as e:
            raise EventLogError(str(e), n, source) from None
        if event.t_s < last_t:
            raise EventLogError(
                f"time goes backwards: t_s={event.t_s:g} s comes after t_s={last_t:g} s (events must be in time order)",
                n, source,
            )
        last_t = event.t_s
        events.append(event)
        if line_of is not None:
            line_of[id(event)] = n
    return header, events


def read_events(path: str | Path, line_of: dict[int, int] | None = None) -> tuple[LogHeader | None, list[Event]]:
    """Read a JSON Lines log file; errors name the file and the line (``line_of``: see :func:`parse_events`)."""
    path = Path(path)
    if not path.exists():
        raise EventLogError("the file does not exist", None, str(path))
    try:
        with open(path, encoding="utf-8") as fh:
            return parse_events(fh, str(path), line_of)
    except UnicodeDecodeError as e:
        raise EventLogError(f"not a UTF-8 text file ({e.reason})", None, str(path)) from None
