"""Match scripts: whole frames as a list of shots, hand actions and operator inputs, with the referee
decisions they are expected to produce.

A script is YAML or JSON (``docs/simulator-physics.md`` has a full example)::

    game: ficha                      # ficha | brasileira | bar-billiards
    profile: ficha                   # optional: a built-in name, a file or a spec (default: the game's)
    players: [A, B]
    options: {}                      # rules options (recorded, passed to the engine by the caller)
    start_t_s: 1.0                   # when the first step happens (default 1 s)
    start:                           # optional: the first frame joined mid-way (the camera switched on late)
      positions: {cue: [710, 405], r1: [300, 200], y1: [1100, 600]}   # the balls on the table
      player: B                      # who plays the first shot (default: the first player)
      banked: {A: 2400, B: 2300}     # bar billiards: the scores banked so far
      trough: [w3]                   # bar billiards: balls in play waiting in the trough
    frames:
      - setup: rack                  # rack (default) | {positions: {cue: [x, y], r1: [x, y]}, pins: ...}
        steps:
          - shot: {ball: cue, direction_deg: 12, speed_mm_s: 3000, side: 0, top: 0.2}
          - shot: {ball: cue, at: y2, offset_deg: 5, speed_mm_s: 1500}   # aimed at a ball where it lies
            expect: {fouls: [], next_player: A, frame_over: false, note: "own ball potted, 4.2.1"}
          - aim: {ball: r1, pocket: TR, speed_mm_s: 2500}    # a shot found by the aiming helper
          - place: {ball: cue, xy_mm: [710, 405]}
          - remove: {ball: y2}
          - touch: {ball: r3, velocity_mm_s: [120, 0]}
          - input: {kind: nomination, ball: red, pocket: TR}
          - wait: 2.0
          - set: {scoreboard_down: true}   # bar billiards: the endgame; trough_open: false (the bar dropped);
                                           # reset_pins: true (pins set back up); collect: true (balls off
                                           # the table picked up, back to the trough); out_of_play: [ids]
                                           # (balls in the trough taken out of play once the bar dropped)

A ``start`` block replaces the first frame's ``setup`` (for a game whose engine can join a frame
mid-way: every game). The rules engine
learns the position the way a camera switched on mid-frame would: the first ``shot_start``'s
``positions`` show the balls on the table, and the run's ``options`` (the log header's) say the frame
was joined mid-way and who plays (ficha ``start=mid_frame, start_shooter``; Sinuca Brasileira
``start_player`` and ``start_balls``, the balls on the table; bar billiards also
``start_banked`` and ``start_balls``, the balls still in play: on the table or in the trough). Ficha
balls not on the table count as potted; bar-billiards balls neither on the table nor in ``trough`` are
out of play (the bar has dropped: the trough is closed), and with one ball left the scoreboard is
down (the endgame, 2i). No event is written for the starting position.

Every step may carry ``pause_s`` (the time after it before the next step; default 1.2 s after a shot,
0.4 s after anything else); shots, inputs and touches an ``expect`` (the decision a referee must give
for that shot, input or ball touched by hand - the last is called with the next shot, before it: in
ficha the shot decision's ``prior`` call; ``Expected.before_shot`` marks it;
``fouls`` as the rules engine's snake_case names, ``next_player``, ``frame_over``, ``winner``, and a
free-text ``note``; fields left out are not checked). The fields are declared as pydantic models
(types, ranges, finite numbers, unknown fields refused); what depends on the game comes from the
game registry (``rules.GAMES``: the engine's foul names, whether it can join a frame mid-way). Errors
name the frame, the step and the field, on one line.
"""

from __future__ import annotations

import functools
import importlib
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Iterator, Literal, Mapping

import numpy as np
import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, Strict, StrictBool, ValidationError, model_validator

from calibration.table import TableProfile, resolve_profile
from calibration.validation import STRICT, JsonData, Number, PointMm, Text, named_problem, one_line, pair, problem
from rules import GAMES, get_engine
from rules.base import RulesError
from simulator.physics import (
    BallState,
    PhysicsError,
    PhysicsParams,
    PinState,
    Shot,
    Timeline,
    World,
    join_timelines,
    place_ball,
    rack,
    remove_ball,
    simulate,
    still_timeline,
    touch_ball,
)
from simulator.scene import BallStatus
from tracking.events import EVENT_KINDS, BallPlaced, Event, OperatorInput, event_from_dict

__all__ = [
    "ScriptError",
    "Script",
    "Expected",
    "ScriptRun",
    "default_profile",
    "joins_mid_frame",
    "load_script",
    "parse_script",
    "run_script",
    "known_fouls",
    "dumps_script",
    "Runner",
    "make_expected",
]

SHOT_PAUSE_S = 1.2
OTHER_PAUSE_S = 0.4
_STEP_KINDS = ("shot", "aim", "place", "remove", "touch", "input", "wait", "set")


class ScriptError(ValueError):
    """A script that cannot be run: the message names where (frame, step, field) and what is wrong."""


def default_profile(game: str) -> str:
    """The table profile a game is played on unless a script names another (the registry's)."""
    return GAMES[game][2]


@functools.cache
def known_fouls(game: str) -> frozenset[str]:
    """The foul names of ``game``'s rules engine (its ``Foul`` enum)."""
    return frozenset(f.value for f in importlib.import_module(GAMES[game][0]).Foul)


@functools.cache
def joins_mid_frame(game: str) -> bool:
    """Whether ``game``'s rules engine can join a frame mid-way (it takes the option ``start=mid_frame``),
    so that a script's ``start`` block can be refereed."""
    try:
        get_engine(game).initial_state(("A", "B"), {"start": "mid_frame"})
    except RulesError:
        return False
    return True


@dataclass(frozen=True, slots=True, eq=False)
class Script:
    """A validated script. ``frames`` holds per frame ``setup`` (``"rack"`` or positions) and
    ``steps``: dicts with ``kind`` and the step's values (a :class:`~simulator.physics.Shot` for a
    shot), ``expect`` and ``pause_s`` when given."""

    game: str
    profile: str
    players: tuple[str, ...]
    frames: tuple[Mapping[str, Any], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    start_t_s: float = 1.0
    title: str = ""
    seed: int | None = None
    start: Mapping[str, Any] | None = None  # the first frame joined mid-way (module docstring)

    @property
    def engine_options(self) -> dict[str, Any]:
        """The rules options a referee of this script's log needs: ``options`` and, for a ``start``,
        the mid-frame options of the game's engine (what the log header records)."""
        out = dict(self.options)
        if self.start is None:
            return out
        player = self.start.get("player", self.players[0])
        if self.game == "ficha":
            out.update(start="mid_frame", start_shooter=player)
        elif self.game == "brasileira":
            out.update(start="mid_frame", start_player=player, start_balls=",".join(self.start["positions"]))
        else:
            balls = list(self.start["positions"]) + list(self.start.get("trough", ()))
            banked = self.start.get("banked", {})
            out.update(start="mid_frame", start_player=player, start_balls=",".join(balls),
                       start_banked=",".join(f"{k}={v}" for k, v in banked.items()))
        return out


@dataclass(frozen=True, slots=True)
class Expected:
    """The decision a script expects for one shot (``shot`` = its index in the log, as
    :func:`rules.base.split_log` counts) or one operator input (``shot`` None). Only the fields named
    in ``checks`` were given."""

    t_s: float
    shot: int | None
    frame: int
    step: int
    fouls: tuple[str, ...] = ()
    next_player: str | None = None
    frame_over: bool = False
    winner: str | None = None
    note: str = ""
    checks: tuple[str, ...] = ()
    before_shot: bool = False  # the call on a hand action (a touch), made with shot ``shot`` before it

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"t_s": round(self.t_s, 6), "shot": self.shot, "frame": self.frame, "step": self.step}
        for k in self.checks:
            v = getattr(self, k)
            d[k] = list(v) if isinstance(v, tuple) else v
        if self.note:
            d["note"] = self.note
        if self.before_shot:
            d["before_shot"] = True
        return d

    def mismatches(self, decision: Any) -> list[str]:
        """What a referee decision (fields ``fouls``, ``next_player``, ``frame_over``, ``winner``) got
        differently from this expectation; empty when it agrees."""
        out = []
        for k in self.checks:
            if k == "note":
                continue
            got = getattr(decision, k)
            if k == "fouls":
                got = tuple(str(getattr(f, "value", f)) for f in got)
                if sorted(got) != sorted(self.fouls):
                    out.append(f"fouls: expected {list(self.fouls)}, got {list(got)}")
            elif got != getattr(self, k):
                out.append(f"{k}: expected {getattr(self, k)!r}, got {got!r}")
        return out


@dataclass(frozen=True, slots=True, eq=False)
class ScriptRun:
    """What a script produced: the whole event log (time order), the timeline pieces (shots and hand
    actions, in order), the expected decisions, and the world at the end. Unpacks as
    ``events, segments, expected = run``."""

    events: tuple[Event, ...]
    segments: tuple[Timeline, ...]
    expected: tuple[Expected, ...]
    world: World
    game: str
    players: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    frame_starts_s: tuple[float, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.events, self.segments, self.expected))

    @property
    def timeline(self) -> Timeline:
        return join_timelines(self.segments)

    @property
    def t_end_s(self) -> float:
        return max(s.t_end_s for s in self.segments)


# ---- parsing --------------------------------------------------------------------------------------


def load_script(path: str | Path) -> Script:
    """Read a script file (YAML or JSON) and validate it."""
    path = Path(path)
    if not path.exists():
        raise ScriptError(f"script file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ScriptError(f"{path}: not readable YAML/JSON: {e}") from None
    except RecursionError:
        raise ScriptError(f"{path}: not readable YAML/JSON: a value is nested too deeply") from None
    return parse_script(data, str(path))


# ---- the declared form of a script (pydantic) -------------------------------------------------------


class _Body(BaseModel):
    model_config = STRICT


def _within(lo: float, hi: float) -> Any:
    return Annotated[Number, Field(ge=lo, le=hi)]


Seconds = _within(0.0, 600.0)


class _ShotBody(_Body):
    ball: Text
    direction_deg: Number | None = None
    at: Text | None = None  # a ball to aim at (full ball where it lies), turned by offset_deg
    offset_deg: _within(-90.0, 90.0) | None = None
    speed_mm_s: _within(1.0, 15000.0)
    side: _within(-0.6, 0.6) = 0.0
    top: _within(-0.6, 0.6) = 0.0
    elevation_deg: _within(0.0, 80.0) = 0.0
    double_hit: StrictBool = False
    place_xy_mm: PointMm | None = None

    @model_validator(mode="after")
    def _a_strike(self) -> "_ShotBody":
        if (self.direction_deg is None) == (self.at is None):
            raise ValueError("give either 'direction_deg' or 'at' (a ball to aim at, full ball)")
        if self.offset_deg is not None and self.at is None:
            raise ValueError("'offset_deg' goes with 'at'")
        self.shot()  # a miscue, a shot too fast: PhysicsError (a ValueError) names it here
        return self

    def shot(self) -> Shot:
        return Shot(self.ball, self.direction_deg or 0.0, self.speed_mm_s, self.side, self.top, self.elevation_deg,
                    self.double_hit, self.place_xy_mm)


class _AimBody(_Body):
    ball: Text
    pocket: Text
    cue: Text | None = None
    speed_mm_s: _within(100.0, 15000.0) | None = None
    top: _within(-0.5, 0.5) = 0.2
    side: _within(-0.5, 0.5) = 0.0


class _PlaceBody(_Body):
    ball: Text
    xy_mm: PointMm


class _RemoveBody(_Body):
    ball: Text
    to: Literal["pocketed", "in_trough", "off_table"] = "pocketed"


class _TouchBody(_Body):
    ball: Text
    velocity_mm_s: pair("[vx_mm_s, vy_mm_s]")


class _SetBody(_Body):
    scoreboard_down: StrictBool | None = None
    trough_open: StrictBool | None = None
    reset_pins: StrictBool | None = None
    collect: StrictBool | None = None
    out_of_play: list[Text] | None = None


class _Expect(_Body):
    fouls: list[Text] | None = None
    next_player: Text | None = None
    frame_over: StrictBool | None = None
    winner: Text | None = None
    note: Annotated[str, Strict()] | None = None


def _operator_input(body: dict[str, Any]) -> dict[str, Any]:
    kind = body.get("kind")
    cls = EVENT_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None or not issubclass(cls, OperatorInput):
        inputs = sorted(n for n, c in EVENT_KINDS.items() if issubclass(c, OperatorInput))
        raise ValueError(f"kind must be an operator input ({', '.join(inputs)}), got {kind!r}")
    event_from_dict({**body, "t_s": 0.0})  # its fields, checked as the log will check them
    return body


class _Step(_Body):
    shot: _ShotBody | None = None
    aim: _AimBody | None = None
    place: _PlaceBody | None = None
    remove: _RemoveBody | None = None
    touch: _TouchBody | None = None
    input: Annotated[dict[str, JsonData], AfterValidator(_operator_input)] | None = None
    wait: Seconds | None = None
    set: _SetBody | None = None
    expect: _Expect | None = None
    pause_s: Seconds | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_kind(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            kinds = [k for k in _STEP_KINDS if k in data]
            if len(kinds) != 1:
                raise ValueError(f"a step must have exactly one of {', '.join(_STEP_KINDS)}; it has {kinds or list(data)}")
        return data

    @model_validator(mode="after")
    def _expect_on_a_call(self) -> "_Step":
        if self.expect is not None and self.kind not in ("shot", "aim", "input", "touch"):
            raise ValueError("only shots, operator inputs and touches carry an 'expect'")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in _STEP_KINDS if getattr(self, k) is not None)

    def normalised(self) -> dict[str, Any]:
        """The step as :class:`Runner` plays it (``kind`` and the step's values)."""
        kind = self.kind
        step: dict[str, Any] = {"kind": kind}
        if kind == "shot":
            step["shot"] = self.shot.shot()  # type: ignore[union-attr]
            if self.shot.at is not None:  # type: ignore[union-attr]
                step["at"], step["offset_deg"] = self.shot.at, self.shot.offset_deg or 0.0  # type: ignore[union-attr]
        elif kind in ("aim", "set"):
            step[kind] = getattr(self, kind).model_dump(exclude_unset=kind == "set")
        elif kind == "input":
            step["input"] = self.input
        elif kind == "wait":
            step["seconds"] = self.wait
        else:
            step.update(getattr(self, kind).model_dump())
        if self.pause_s is not None:
            step["pause_s"] = self.pause_s
        if self.expect is not None:
            step["expect"] = self.expect.model_dump(exclude_unset=True)
        return step


def _fallen_or_xy(value: Any) -> Any:
    return None if value == "fallen" else value


Pins = dict[Text, Annotated[PointMm | None, BeforeValidator(_fallen_or_xy)]]  # pin id -> where it stands, or fallen


def _rack_or_setup(value: Any) -> Any:
    if value == "rack":
        return None
    if isinstance(value, str):
        raise problem(f"must be 'rack' or a mapping of positions (and pins), got {value!r}")
    return value


class _Setup(_Body):
    positions: dict[Text, PointMm] = {}
    pins: Pins | None = None


class _Frame(_Body):
    setup: Annotated[_Setup | None, BeforeValidator(_rack_or_setup)] = None
    steps: list[_Step]
    note: Annotated[str, Strict()] = ""


class _Start(_Body):
    positions: dict[Text, PointMm] | None = None
    pins: Pins | None = None
    player: Text | None = None
    banked: dict[Text, Annotated[int, Strict(), Field(ge=0)]] | None = None
    trough: list[Text] | None = None


def _a_game(game: str) -> str:
    if game not in GAMES:
        raise named_problem(f"'game' must be one of {', '.join(GAMES)}, got {game!r}")
    return game


def _two_or_four(players: list[str]) -> list[str]:
    if len(players) not in (2, 4) or len(set(players)) != len(players):
        raise named_problem(f"'players' must be a list of two (or four) different names, got {players!r}")
    return players


class _ScriptFile(_Body):
    game: Annotated[Text, AfterValidator(_a_game)]
    profile: Text | None = None
    players: Annotated[list[Text], AfterValidator(_two_or_four)] = ["A", "B"]
    options: dict[str, JsonData] = {}
    start_t_s: Annotated[Number, Field(ge=0)] = 1.0
    title: Annotated[str, Strict()] = ""
    seed: Annotated[int, Strict()] | None = None
    start: _Start | None = None
    frames: Annotated[list[_Frame], Field(min_length=1)]


def parse_script(data: Any, source: str = "script") -> Script:
    """Validate a script mapping (see the module docstring). Every error is a :class:`ScriptError`
    naming the place: the types and ranges of every field are declared above (pydantic); what depends
    on the game and the players (fouls the engine knows, who may be named, what a start block may
    hold) is checked after."""
    try:
        top = _ScriptFile.model_validate(data)
    except ValidationError as e:
        raise ScriptError(f"{source}: " + one_line(
            e, field="{path} {what}", missing="{path} is missing", unknown="{at}unknown field(s) {names}",
        )) from None
    game, players = top.game, tuple(top.players)
    start = _check_start(top.start, f"{source}: start", game, players, top.options) if top.start is not None else None
    if start is not None and top.frames[0].setup is not None:
        raise ScriptError(f"{source}: 'start' sets up the first frame; frames[0] may not have a 'setup' too")
    fouls = known_fouls(game)
    frames = []
    for fi, fr in enumerate(top.frames):
        steps = []
        for si, st in enumerate(fr.steps):
            if st.expect is not None:
                _check_expect(st.expect, f"{source}: frames[{fi}].steps[{si}].expect", game, players, fouls)
            steps.append(st.normalised())
        setup: Any = "rack"
        if fr.setup is not None:
            setup = {"positions": dict(fr.setup.positions)}
            if fr.setup.pins is not None:
                setup["pins"] = dict(fr.setup.pins)
        frames.append({"setup": setup, "steps": steps, "note": fr.note})
    return Script(game=game, profile=top.profile or default_profile(game), players=players, frames=tuple(frames),
                  options=dict(top.options), start_t_s=top.start_t_s, title=top.title, seed=top.seed, start=start)


def _check_expect(e: _Expect, where: str, game: str, players: tuple[str, ...], fouls: frozenset[str]) -> None:
    bad = [f for f in e.fouls or () if f not in fouls]
    if bad:
        raise ScriptError(f"{where}.fouls: {', '.join(bad)} not a foul of {game} (known: {', '.join(sorted(fouls))})")
    for k in ("next_player", "winner"):
        v = getattr(e, k)
        if v is not None and v not in players and "+" not in v:
            raise ScriptError(f"{where}.{k}: {v!r} is not a player ({', '.join(players)})")


def _check_start(s: _Start, where: str, game: str, players: tuple[str, ...], options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``start`` block: a first frame joined mid-way (see the module docstring)."""
    if not joins_mid_frame(game):
        supported = [g for g in GAMES if joins_mid_frame(g)]
        raise ScriptError(f"{where}: a frame joined mid-way is supported for {', '.join(supported)}, not {game}")
    taken = sorted(k for k in options if k.startswith("start"))
    if taken:
        raise ScriptError(f"{where}: the options {', '.join(taken)} come from the 'start' block; leave them out of 'options'")
    if not s.positions:
        raise ScriptError(f"{where}.positions must list the balls on the table")
    out: dict[str, Any] = {"positions": dict(s.positions)}
    if s.pins is not None:
        if game != "bar-billiards":
            raise ScriptError(f"{where}.pins: only a bar-billiards table has pins")
        out["pins"] = dict(s.pins)
    if s.player is not None:
        if s.player not in players:
            raise ScriptError(f"{where}.player: {s.player!r} is not a player ({', '.join(players)})")
        out["player"] = s.player
    for k in ("banked", "trough"):
        if getattr(s, k) is not None and game != "bar-billiards":
            raise ScriptError(f"{where}.{k}: only bar billiards has {'banked scores' if k == 'banked' else 'a trough'}")
    if s.banked is not None:
        if len(players) != 2 or set(s.banked) - set(players):
            raise ScriptError(f"{where}.banked: give the banked score of each of the two players ({', '.join(players)}), got {list(s.banked)}")
        out["banked"] = {k: s.banked[k] for k in players if k in s.banked}
    if s.trough is not None:
        both = sorted(set(s.trough) & set(out["positions"]))
        if both or len(set(s.trough)) != len(s.trough):
            raise ScriptError(f"{where}.trough: a ball is listed twice or also on the table ({', '.join(both) or 'duplicate'})")
        out["trough"] = list(s.trough)
    return out


# ---- running --------------------------------------------------------------------------------------


def _setup_world(game: str, profile: TableProfile, setup: Any, rng: np.random.Generator, where: str) -> World:
    base = rack(game, profile, rng)
    if setup == "rack":
        return base
    gone = BallStatus.IN_TROUGH if profile.kind == "bar_billiards" else BallStatus.POCKETED
    positions = setup.get("positions", {})
    for bid in positions:
        if bid not in profile.ball_ids:
            raise ScriptError(f"{where}.setup.positions: {bid!r} is not a ball of {profile.name} ({', '.join(profile.ball_ids)})")
    balls = []
    for b in base.balls:
        if b.id in positions:
            balls.append(BallState(b.id, positions[b.id]))
        else:
            balls.append(BallState(b.id, b.xy_mm, gone))
    pins = list(base.pins)
    for pid, xy in setup.get("pins", {}).items():
        if pid not in [p.id for p in pins]:
            raise ScriptError(f"{where}.setup.pins: {pid!r} is not a pin of {profile.name}")
        pins = [PinState(p.id, p.xy_mm if xy is None else xy, "fallen" if xy is None else "standing") if p.id == pid else p for p in pins]
    w = World(profile, tuple(balls), tuple(pins))
    R = profile.ball_radius_mm
    on = [b for b in w.balls if b.on_table]
    for i, a in enumerate(on):
        if not profile.contains(a.xy_mm, R - 0.02):
            raise ScriptError(f"{where}.setup.positions.{a.id}: {a.xy_mm} is not on the playing surface")
        for b in on[i + 1:]:
            if math.dist(a.xy_mm, b.xy_mm) < 2 * R - 0.02:
                raise ScriptError(f"{where}.setup.positions: {a.id} and {b.id} overlap")
    return w


def _start_world(game: str, profile: TableProfile, start: Mapping[str, Any], rng: np.random.Generator, where: str) -> World:
    """The world of a frame joined mid-way: the ``start`` positions; for bar billiards the ``trough``
    balls in the trough, every other ball out of play (the trough closed: the bar has dropped) and,
    with one ball left, the scoreboard down (the endgame, 2i)."""
    w = _setup_world(game, profile, {"positions": start["positions"], "pins": start.get("pins", {})}, rng, "start")
    if game != "bar-billiards":
        return w
    trough = set(start.get("trough", ()))
    unknown = sorted(trough - set(profile.ball_ids))
    if unknown:
        raise ScriptError(f"{where}: start.trough: {', '.join(unknown)} not a ball of {profile.name}")
    balls = tuple(b if b.on_table else replace(b, status=BallStatus.IN_TROUGH if b.id in trough else BallStatus.POCKETED)
                  for b in w.balls)
    in_play = len(start["positions"]) + len(trough)
    dropped = in_play < len(profile.ball_ids)
    return replace(w, balls=balls, trough_open=w.trough_open and not dropped, scoreboard_down=w.scoreboard_down or (dropped and in_play == 1))


class Runner:
    """Plays steps one at a time on a world, keeping the clock, the log, the timeline pieces and the
    expectations. :func:`run_script` drives it from a script; the automatic player
    (:mod:`simulator.player`) drives it step by step, deciding each step from the last result."""

    def __init__(self, game: str, profile: TableProfile, seed: int, start_t_s: float = 1.0,
                 params: PhysicsParams = PhysicsParams()):
        self.game, self.profile, self.params = game, profile, params
        self.rng = np.random.default_rng(seed)
        self.t = float(start_t_s)
        self.events: list[Event] = []
        self.segments: list[Timeline] = []
        self.expected: list[Expected] = []
        self.frame_starts: list[float] = []
        self.shot_index = 0
        self.world: World | None = None
        self.frame = -1
        self.last_events: tuple[Event, ...] = ()  # what the last step produced

    def start_frame(self, setup: Any = "rack", where: str = "frame", start: Mapping[str, Any] | None = None) -> World:
        """Set up a frame (a re-rack after the first: BallPlaced for every ball on the table), or the
        first frame joined mid-way from a script's ``start`` block."""
        if start is not None:
            new = _start_world(self.game, self.profile, start, self.rng, where).at_time(self.t)
        else:
            new = _setup_world(self.game, self.profile, setup, self.rng, where).at_time(self.t)
        placed: list[Event] = []
        if self.world is not None:
            placed = [BallPlaced(t_s=self.t, ball=b.id, xy_mm=b.xy_mm) for b in new.balls if b.on_table]
        self.events.extend(placed)
        self.last_events = tuple(placed)
        self.world = new
        self.frame += 1
        self.frame_starts.append(self.t)
        self.segments.append(still_timeline(new, self.t, self.t + 0.5))
        return new

    def _hand(self, hand: Any, pause: float) -> None:
        self.events.extend(hand.events)
        self.segments.append(hand.timeline)
        self.last_events = tuple(hand.events)
        self.world, self.t = hand.world, hand.timeline.t_end_s + pause

    def step(self, step: Mapping[str, Any], where: str = "step", index: int = 0) -> tuple[Event, ...]:
        """Play one parsed step; returns the events it produced."""
        assert self.world is not None, "start_frame first"
        kind = step["kind"]
        pause = step.get("pause_s", SHOT_PAUSE_S if kind in ("shot", "aim") else OTHER_PAUSE_S)
        world, t = self.world, self.t
        produced: list[Event] = []
        try:
            if kind in ("shot", "aim"):
                if kind == "aim":
                    from simulator.aim import aim_pot

                    a = step["aim"]
                    shot = aim_pot(world, a["ball"], a["pocket"], cue=a["cue"], speed_mm_s=a["speed_mm_s"],
                                   top=a["top"], side=a["side"], params=self.params)
                    if shot is None:
                        raise ScriptError(f"{where}.aim: no clear shot pots {a['ball']} in {a['pocket']} from here")
                else:
                    shot = step["shot"]
                if "at" in step:  # aimed at a ball's centre where it lies now, turned by offset_deg
                    start = shot.place_xy_mm or world.ball(shot.ball).xy_mm
                    aim = world.ball(step["at"])
                    if not aim.on_table:
                        raise ScriptError(f"{where}.shot.at: ball {step['at']!r} is {aim.status.value}, not on the table")
                    ang = math.degrees(math.atan2(aim.xy_mm[1] - start[1], aim.xy_mm[0] - start[0]))
                    shot = replace(shot, direction_deg=ang + step["offset_deg"])
                target = world.ball(shot.ball)
                if shot.place_xy_mm is not None and (not target.on_table or math.dist(target.xy_mm, shot.place_xy_mm) > 1e-6):
                    hand = place_ball(world, shot.ball, shot.place_xy_mm, t)
                    self._hand(hand, 0.3)
                    produced.extend(hand.events)
                    world, t = self.world, self.t
                res = simulate(world.at_time(t), shot, params=self.params, rng=self.rng)
                self.events.extend(res.events)
                self.segments.append(res.timeline)
                produced.extend(res.events)
                if "expect" in step:
                    self.expected.append(make_expected(step["expect"], res.timeline.t_end_s, self.shot_index, self.frame, index))
                self.shot_index += 1
                self.world, self.t = res.world_after, res.timeline.t_end_s + pause
            elif kind == "place":
                self._hand(place_ball(world, step["ball"], step["xy_mm"], t), pause)
                produced.extend(self.last_events)
            elif kind == "remove":
                self._hand(remove_ball(world, step["ball"], t, BallStatus(step["to"])), pause)
                produced.extend(self.last_events)
            elif kind == "touch":
                self._hand(touch_ball(world, step["ball"], step["velocity_mm_s"], t, params=self.params, rng=self.rng), pause)
                produced.extend(self.last_events)
                if "expect" in step:  # called with the next shot (its index now), before it
                    self.expected.append(make_expected(step["expect"], t, self.shot_index, self.frame, index, before_shot=True))
            elif kind == "input":
                ev = event_from_dict({**step["input"], "t_s": t})
                self.events.append(ev)
                produced.append(ev)
                if "expect" in step:
                    self.expected.append(make_expected(step["expect"], t, None, self.frame, index))
                self.t += pause
            elif kind == "wait":
                self.t += step["seconds"]
            elif kind == "set":
                s = step["set"]
                new = replace(world, scoreboard_down=s.get("scoreboard_down", world.scoreboard_down),
                              trough_open=s.get("trough_open", world.trough_open))
                if s.get("reset_pins"):
                    new = replace(new, pins=tuple(PinState(p.id, p.xy_mm) for p in self.profile.pins))
                if s.get("collect"):
                    back = BallStatus.IN_TROUGH if new.trough_open else BallStatus.POCKETED
                    new = replace(new, balls=tuple(replace(b, status=back) if b.status is BallStatus.OFF_TABLE else b
                                                   for b in new.balls))
                out = set(s.get("out_of_play", ()))
                if out:
                    new = replace(new, balls=tuple(replace(b, status=BallStatus.POCKETED) if b.id in out and not b.on_table else b
                                                   for b in new.balls))
                self.world = new
                self.segments.append(still_timeline(self.world, t, t + pause))
                self.t += pause
        except PhysicsError as e:
            raise ScriptError(f"{where} ({kind}): {e}") from None
        self.last_events = tuple(produced)
        return self.last_events

    def finish(self, players: tuple[str, ...], options: Mapping[str, Any]) -> ScriptRun:
        assert self.world is not None
        self.segments.append(still_timeline(self.world.at_time(self.t), self.t, self.t + 0.5))
        events = sorted(self.events, key=lambda e: e.t_s)
        return ScriptRun(tuple(events), tuple(self.segments), tuple(self.expected), self.world.at_time(self.t), self.game,
                         players, MappingProxyType(dict(options)), tuple(self.frame_starts))


def run_script(script: Script | Mapping[str, Any] | str | Path, profile: TableProfile | str | None = None,
               seed: int | None = None, params: PhysicsParams = PhysicsParams()) -> ScriptRun:
    """Play a script: every shot simulated, every hand action and input timed.

    ``script`` is a :class:`Script`, a raw mapping (validated with :func:`parse_script`) or a file.
    ``profile`` overrides the script's; ``seed`` (else the script's ``seed``, else 0) drives the
    rack's random gaps and the physics' random draws, so a run is reproducible."""
    if isinstance(script, (str, Path)):
        script = load_script(script)
    elif not isinstance(script, Script):
        script = parse_script(script)
    if profile is None:
        profile = script.profile
    if isinstance(profile, str):
        profile = resolve_profile(profile)
    if seed is None:
        seed = script.seed if script.seed is not None else 0
    runner = Runner(script.game, profile, seed, script.start_t_s, params)
    for fi, fr in enumerate(script.frames):
        runner.start_frame(fr["setup"], f"frames[{fi}]", script.start if fi == 0 else None)
        for si, step in enumerate(fr["steps"]):
            runner.step(step, f"frames[{fi}].steps[{si}]", si)
    return runner.finish(script.players, script.engine_options)


def make_expected(e: Mapping[str, Any], t_s: float, shot: int | None, frame: int, step: int, before_shot: bool = False) -> Expected:
    checks = tuple(k for k in ("fouls", "next_player", "frame_over", "winner") if k in e)
    return Expected(
        t_s=t_s, shot=shot, frame=frame, step=step,
        fouls=tuple(e.get("fouls", ())), next_player=e.get("next_player"), frame_over=bool(e.get("frame_over", False)),
        winner=e.get("winner"), note=e.get("note", ""), checks=checks, before_shot=before_shot,
    )


def dumps_script(script: Script) -> str:
    """A script back as JSON text that :func:`parse_script` reads (e.g. to save a generated frame)."""

    def conv(v: Any) -> Any:
        if isinstance(v, Shot):
            return _shot_dict(v)
        if isinstance(v, Mapping):
            return {str(k): conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        return v

    out = {"game": script.game, "profile": script.profile, "players": list(script.players),
           "options": conv(script.options), "start_t_s": script.start_t_s, "frames": conv(list(script.frames))}
    if script.start is not None:
        out["start"] = conv(script.start)
    if script.title:
        out["title"] = script.title
    if script.seed is not None:
        out["seed"] = script.seed
    for fr in out["frames"]:
        fr["steps"] = [_unnormalise(s) for s in fr["steps"]]
    return json.dumps(out, indent=1)


def _shot_dict(v: Shot) -> dict[str, Any]:
    d: dict[str, Any] = {"ball": v.ball, "direction_deg": v.direction_deg, "speed_mm_s": v.speed_mm_s}  # exact: play is chaotic
    for k in ("side", "top", "elevation_deg"):
        if getattr(v, k):
            d[k] = getattr(v, k)
    if v.double_hit:
        d["double_hit"] = True
    if v.place_xy_mm is not None:
        d["place_xy_mm"] = list(v.place_xy_mm)
    return d


def _unnormalise(step: Mapping[str, Any]) -> dict[str, Any]:
    kind = step["kind"]
    d: dict[str, Any]
    if kind == "shot":
        d = {"shot": step["shot"]}
        if "at" in step:
            shot = step["shot"]
            d = {"shot": {**(_shot_dict(shot) if isinstance(shot, Shot) else dict(shot)), "at": step["at"], "offset_deg": step["offset_deg"]}}
            d["shot"].pop("direction_deg")
    elif kind == "aim":
        d = {"aim": {k: v for k, v in step["aim"].items() if v is not None}}
    elif kind == "place":
        d = {"place": {"ball": step["ball"], "xy_mm": list(step["xy_mm"])}}
    elif kind == "remove":
        d = {"remove": {"ball": step["ball"], "to": step["to"]}}
    elif kind == "touch":
        d = {"touch": {"ball": step["ball"], "velocity_mm_s": list(step["velocity_mm_s"])}}
    elif kind == "input":
        d = {"input": step["input"]}
    elif kind == "wait":
        d = {"wait": step["seconds"]}
    else:
        d = {"set": step["set"]}
    for k in ("expect", "pause_s"):
        if k in step:
            d[k] = step[k]
    return d
