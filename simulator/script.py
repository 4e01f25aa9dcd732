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

A ``start`` block replaces the first frame's ``setup`` (ficha and bar billiards). The rules engine
learns the position the way a camera switched on mid-frame would: the first ``shot_start``'s
``positions`` show the balls on the table, and the run's ``options`` (the log header's) say the frame
was joined mid-way and who plays (ficha ``start=mid_frame, start_shooter``; bar billiards also
``start_banked`` and ``start_balls``, the balls still in play: on the table or in the trough). Ficha
balls not on the table count as potted; bar-billiards balls neither on the table nor in ``trough`` are
out of play (the bar has dropped: the trough is closed), and with one ball left the scoreboard is
down (the endgame, 2i). No event is written for the starting position.

Every step may carry ``pause_s`` (the time after it before the next step; default 1.2 s after a shot,
0.4 s after anything else); shots, inputs and touches an ``expect`` (the decision a referee must give
for that shot, input or ball touched by hand - the last is called with the next shot, before it: in
ficha the shot decision's ``prior`` call; ``Expected.before_shot`` marks it;
``fouls`` as the rules engine's snake_case names, ``next_player``, ``frame_over``, ``winner``, and a
free-text ``note``; fields left out are not checked). Errors name the frame, the step and the field.
"""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

import numpy as np
import yaml

from calibration.table import TableProfile, resolve_profile
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
    "GAMES",
    "load_script",
    "parse_script",
    "run_script",
    "known_fouls",
    "dumps_script",
    "Runner",
    "make_expected",
]

GAMES = {"ficha": "ficha", "brasileira": "brasileira", "bar-billiards": "bar-billiards"}  # game -> default profile
_RULES_MODULE = {"ficha": "rules.ficha", "brasileira": "rules.brasileira", "bar-billiards": "rules.bar_billiards"}
SHOT_PAUSE_S = 1.2
OTHER_PAUSE_S = 0.4
_SHOT_FIELDS = {"ball", "direction_deg", "speed_mm_s", "side", "top", "elevation_deg", "double_hit", "place_xy_mm",
                "at", "offset_deg"}
_AIM_FIELDS = {"ball", "pocket", "speed_mm_s", "cue", "top", "side"}
_EXPECT_FIELDS = {"fouls", "next_player", "frame_over", "winner", "note"}
_STEP_KINDS = ("shot", "aim", "place", "remove", "touch", "input", "wait", "set")
_START_FIELDS = {"positions", "pins", "player", "banked", "trough"}
_START_GAMES = ("ficha", "bar-billiards")


class ScriptError(ValueError):
    """A script that cannot be run: the message names where (frame, step, field) and what is wrong."""


def known_fouls(game: str) -> frozenset[str] | None:
    """The foul names of ``game``'s rules engine (its ``Foul`` enum), or None if it is not installed."""
    try:
        module = importlib.import_module(_RULES_MODULE[game])
    except ModuleNotFoundError:
        return None
    foul = getattr(module, "Foul", None)
    return frozenset(f.value for f in foul) if foul is not None else None


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
    return parse_script(data, str(path))


def _num(v: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ScriptError(f"{where} must be a number, got {v!r}")
    if not lo <= v <= hi:
        raise ScriptError(f"{where} must be between {lo:g} and {hi:g}, got {v!r}")
    return float(v)


def _xy(v: Any, where: str) -> tuple[float, float]:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise ScriptError(f"{where} must be [x_mm, y_mm], got {v!r}")
    return (_num(v[0], where + "[0]"), _num(v[1], where + "[1]"))


def _mapping(v: Any, where: str, allowed: set[str] | None = None) -> dict[str, Any]:
    if not isinstance(v, Mapping):
        raise ScriptError(f"{where} must be a mapping, got {type(v).__name__}")
    if allowed is not None:
        unknown = sorted(set(v) - allowed)
        if unknown:
            raise ScriptError(f"{where}: unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
    return dict(v)


def _parse_expect(v: Any, where: str, game: str, players: tuple[str, ...], fouls: frozenset[str] | None) -> dict[str, Any]:
    e = _mapping(v, where, _EXPECT_FIELDS)
    if "fouls" in e:
        if not isinstance(e["fouls"], list) or not all(isinstance(f, str) for f in e["fouls"]):
            raise ScriptError(f"{where}.fouls must be a list of foul names, got {e['fouls']!r}")
        if fouls is not None:
            bad = [f for f in e["fouls"] if f not in fouls]
            if bad:
                raise ScriptError(f"{where}.fouls: {', '.join(bad)} not a foul of {game} (known: {', '.join(sorted(fouls))})")
    for k in ("next_player", "winner"):
        if k in e and e[k] is not None and e[k] not in players and "+" not in str(e[k]):
            raise ScriptError(f"{where}.{k}: {e[k]!r} is not a player ({', '.join(players)})")
    if "frame_over" in e and not isinstance(e["frame_over"], bool):
        raise ScriptError(f"{where}.frame_over must be true or false, got {e['frame_over']!r}")
    if "note" in e and not isinstance(e["note"], str):
        raise ScriptError(f"{where}.note must be text")
    return e


def parse_script(data: Any, source: str = "script") -> Script:
    """Validate a script mapping (see the module docstring). Every error is a :class:`ScriptError`
    naming the place."""
    top = _mapping(data, source, {"game", "profile", "players", "options", "start_t_s", "frames", "seed", "title", "start"})
    game = top.get("game")
    if game not in GAMES:
        raise ScriptError(f"{source}: 'game' must be one of {', '.join(GAMES)}, got {game!r}")
    players = top.get("players", ["A", "B"])
    if not isinstance(players, list) or len(players) not in (2, 4) or not all(isinstance(p, str) and p for p in players):
        raise ScriptError(f"{source}: 'players' must be a list of two (or four) names, got {players!r}")
    if len(set(players)) != len(players):
        raise ScriptError(f"{source}: player names must differ, got {players!r}")
    out: dict[str, Any] = {
        "game": game,
        "profile": top.get("profile", GAMES[game]),
        "players": list(players),
        "options": _mapping(top.get("options", {}) or {}, f"{source}.options"),
        "start_t_s": _num(top.get("start_t_s", 1.0), f"{source}.start_t_s", 0.0),
        "title": str(top.get("title", "")),
        "frames": [],
    }
    if not isinstance(out["profile"], str):
        raise ScriptError(f"{source}: 'profile' must be a profile name, file or spec string")
    if "seed" in top and (isinstance(top["seed"], bool) or not isinstance(top["seed"], int)):
        raise ScriptError(f"{source}: 'seed' must be a whole number")
    frames = top.get("frames")
    if not isinstance(frames, list) or not frames:
        raise ScriptError(f"{source}: 'frames' must be a non-empty list of frames")
    fouls = known_fouls(game)
    pl = tuple(players)
    start = _parse_start(top["start"], f"{source}.start", game, pl, out["options"]) if "start" in top else None
    if start is not None and isinstance(frames[0], Mapping) and frames[0].get("setup", "rack") != "rack":
        raise ScriptError(f"{source}: 'start' sets up the first frame; frames[0] may not have a 'setup' too")
    for fi, fr in enumerate(frames):
        fw = f"{source}: frames[{fi}]"
        f = _mapping(fr, fw, {"setup", "steps", "note"})
        setup = f.get("setup", "rack")
        if setup != "rack":
            s = _mapping(setup, f"{fw}.setup", {"positions", "pins", "rng"})
            pos = _mapping(s.get("positions", {}), f"{fw}.setup.positions")
            s["positions"] = {str(k): _xy(v, f"{fw}.setup.positions.{k}") for k, v in pos.items()}
            if "pins" in s:
                pins = _mapping(s["pins"], f"{fw}.setup.pins")
                s["pins"] = {str(k): (None if v == "fallen" else _xy(v, f"{fw}.setup.pins.{k}")) for k, v in pins.items()}
            setup = s
        steps = f.get("steps")
        if not isinstance(steps, list):
            raise ScriptError(f"{fw}.steps must be a list of steps")
        norm = []
        for si, st in enumerate(steps):
            sw = f"{fw}.steps[{si}]"
            st = _mapping(st, sw)
            kinds = [k for k in _STEP_KINDS if k in st]
            if len(kinds) != 1:
                raise ScriptError(f"{sw}: a step must have exactly one of {', '.join(_STEP_KINDS)}; it has {kinds or list(st)}")
            kind = kinds[0]
            unknown = sorted(set(st) - {kind, "expect", "pause_s"})
            if unknown:
                raise ScriptError(f"{sw}: unknown field(s) {', '.join(unknown)} (a step has {kind}, expect, pause_s)")
            step: dict[str, Any] = {"kind": kind}
            body = st[kind]
            if kind == "shot":
                b = _mapping(body, f"{sw}.shot", _SHOT_FIELDS)
                for req in ("ball", "speed_mm_s"):
                    if req not in b:
                        raise ScriptError(f"{sw}.shot: missing field '{req}'")
                if ("direction_deg" in b) == ("at" in b):
                    raise ScriptError(f"{sw}.shot: give either 'direction_deg' or 'at' (a ball to aim at, full ball)")
                if "at" in b:
                    step["at"] = str(b["at"])
                    step["offset_deg"] = _num(b.get("offset_deg", 0.0), f"{sw}.shot.offset_deg", -90.0, 90.0)
                elif "offset_deg" in b:
                    raise ScriptError(f"{sw}.shot: 'offset_deg' goes with 'at'")
                kw = {"ball": str(b["ball"]), "direction_deg": _num(b.get("direction_deg", 0.0), f"{sw}.shot.direction_deg"),
                      "speed_mm_s": _num(b["speed_mm_s"], f"{sw}.shot.speed_mm_s", 1.0, 15000.0)}
                for k in ("side", "top"):
                    if k in b:
                        kw[k] = _num(b[k], f"{sw}.shot.{k}", -0.6, 0.6)
                if "elevation_deg" in b:
                    kw["elevation_deg"] = _num(b["elevation_deg"], f"{sw}.shot.elevation_deg", 0.0, 80.0)
                if "double_hit" in b:
                    if not isinstance(b["double_hit"], bool):
                        raise ScriptError(f"{sw}.shot.double_hit must be true or false")
                    kw["double_hit"] = b["double_hit"]
                if "place_xy_mm" in b:
                    kw["place_xy_mm"] = _xy(b["place_xy_mm"], f"{sw}.shot.place_xy_mm")
                try:
                    step["shot"] = Shot(**kw)
                except PhysicsError as e:
                    raise ScriptError(f"{sw}.shot: {e}") from None
            elif kind == "aim":
                b = _mapping(body, f"{sw}.aim", _AIM_FIELDS)
                if "ball" not in b or "pocket" not in b:
                    raise ScriptError(f"{sw}.aim needs 'ball' and 'pocket'")
                step["aim"] = {"ball": str(b["ball"]), "pocket": str(b["pocket"]), "cue": b.get("cue"),
                               "speed_mm_s": None if "speed_mm_s" not in b else _num(b["speed_mm_s"], f"{sw}.aim.speed_mm_s", 100.0, 15000.0),
                               "top": _num(b.get("top", 0.2), f"{sw}.aim.top", -0.5, 0.5),
                               "side": _num(b.get("side", 0.0), f"{sw}.aim.side", -0.5, 0.5)}
            elif kind == "place":
                b = _mapping(body, f"{sw}.place", {"ball", "xy_mm"})
                if "ball" not in b or "xy_mm" not in b:
                    raise ScriptError(f"{sw}.place needs 'ball' and 'xy_mm'")
                step["ball"], step["xy_mm"] = str(b["ball"]), _xy(b["xy_mm"], f"{sw}.place.xy_mm")
            elif kind == "remove":
                b = _mapping(body, f"{sw}.remove", {"ball", "to"})
                if "ball" not in b:
                    raise ScriptError(f"{sw}.remove needs 'ball'")
                to = b.get("to", "pocketed")
                if to not in ("pocketed", "in_trough", "off_table"):
                    raise ScriptError(f"{sw}.remove.to must be pocketed, in_trough or off_table, got {to!r}")
                step["ball"], step["to"] = str(b["ball"]), to
            elif kind == "touch":
                b = _mapping(body, f"{sw}.touch", {"ball", "velocity_mm_s"})
                if "ball" not in b or "velocity_mm_s" not in b:
                    raise ScriptError(f"{sw}.touch needs 'ball' and 'velocity_mm_s'")
                step["ball"], step["velocity_mm_s"] = str(b["ball"]), _xy(b["velocity_mm_s"], f"{sw}.touch.velocity_mm_s")
            elif kind == "input":
                b = _mapping(body, f"{sw}.input")
                k = b.get("kind")
                cls = EVENT_KINDS.get(k) if isinstance(k, str) else None
                if cls is None or not issubclass(cls, OperatorInput):
                    inputs = sorted(n for n, c in EVENT_KINDS.items() if issubclass(c, OperatorInput))
                    raise ScriptError(f"{sw}.input.kind must be an operator input ({', '.join(inputs)}), got {k!r}")
                try:
                    event_from_dict({**b, "t_s": 0.0})
                except ValueError as e:
                    raise ScriptError(f"{sw}.input: {e}") from None
                step["input"] = b
            elif kind == "wait":
                step["seconds"] = _num(body, f"{sw}.wait", 0.0, 600.0)
            elif kind == "set":
                b = _mapping(body, f"{sw}.set", {"scoreboard_down", "trough_open", "reset_pins", "collect", "out_of_play"})
                for k, v in b.items():
                    if k == "out_of_play":
                        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                            raise ScriptError(f"{sw}.set.out_of_play must be a list of ball ids")
                    elif not isinstance(v, bool):
                        raise ScriptError(f"{sw}.set.{k} must be true or false")
                step["set"] = b
            if "pause_s" in st:
                step["pause_s"] = _num(st["pause_s"], f"{sw}.pause_s", 0.0, 600.0)
            if "expect" in st:
                if kind not in ("shot", "aim", "input", "touch"):
                    raise ScriptError(f"{sw}: only shots, operator inputs and touches carry an 'expect'")
                step["expect"] = _parse_expect(st["expect"], f"{sw}.expect", game, pl, fouls)
            norm.append(step)
        out["frames"].append({"setup": setup, "steps": norm, "note": str(f.get("note", ""))})
    return Script(game=game, profile=out["profile"], players=pl, frames=tuple(out["frames"]), options=out["options"],
                  start_t_s=out["start_t_s"], title=out["title"], seed=top.get("seed"), start=start)


def _parse_start(v: Any, where: str, game: str, players: tuple[str, ...], options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``start`` block: a first frame joined mid-way (see the module docstring)."""
    if game not in _START_GAMES:
        raise ScriptError(f"{where}: a frame joined mid-way is supported for {', '.join(_START_GAMES)}, not {game}")
    s = _mapping(v, where, _START_FIELDS)
    taken = sorted(k for k in options if k.startswith("start"))
    if taken:
        raise ScriptError(f"{where}: the options {', '.join(taken)} come from the 'start' block; leave them out of 'options'")
    pos = _mapping(s.get("positions"), f"{where}.positions")
    if not pos:
        raise ScriptError(f"{where}.positions must list the balls on the table")
    out: dict[str, Any] = {"positions": {str(k): _xy(x, f"{where}.positions.{k}") for k, x in pos.items()}}
    if "pins" in s:
        if game != "bar-billiards":
            raise ScriptError(f"{where}.pins: only a bar-billiards table has pins")
        pins = _mapping(s["pins"], f"{where}.pins")
        out["pins"] = {str(k): (None if x in ("fallen", None) else _xy(x, f"{where}.pins.{k}")) for k, x in pins.items()}
    if "player" in s:
        if s["player"] not in players:
            raise ScriptError(f"{where}.player: {s['player']!r} is not a player ({', '.join(players)})")
        out["player"] = s["player"]
    for k in ("banked", "trough"):
        if k in s and game != "bar-billiards":
            raise ScriptError(f"{where}.{k}: only bar billiards has {'banked scores' if k == 'banked' else 'a trough'}")
    if "banked" in s:
        banked = _mapping(s["banked"], f"{where}.banked")
        if len(players) != 2 or set(banked) - set(players):
            raise ScriptError(f"{where}.banked: give the banked score of each of the two players ({', '.join(players)}), got {list(banked)}")
        for k, x in banked.items():
            if isinstance(x, bool) or not isinstance(x, int) or x < 0:
                raise ScriptError(f"{where}.banked.{k} must be a whole number of points, 0 or more, got {x!r}")
        out["banked"] = {k: banked[k] for k in players if k in banked}
    if "trough" in s:
        trough = s["trough"]
        if not isinstance(trough, list) or not all(isinstance(b, str) for b in trough):
            raise ScriptError(f"{where}.trough must be a list of ball ids")
        both = sorted(set(trough) & set(out["positions"]))
        if both or len(set(trough)) != len(trough):
            raise ScriptError(f"{where}.trough: a ball is listed twice or also on the table ({', '.join(both) or 'duplicate'})")
        out["trough"] = list(trough)
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
