"""What the console and the scoreboard show, as plain JSON values: the table to scale (:func:`table_setup`),
the score in each game's own terms (:func:`score_of`), and :class:`Board`, the consumer of the pipeline's
results that keeps the live picture (balls, the last calls, the pending question, the source's health).

The rules engines' states differ by game, so the score is read once per game here, from the state the
referee holds after its last call; everything else comes from the decisions (``Decision.to_dict()``).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Mapping, Sequence

from calibration.table import TableProfile
from rules.base import Decision, Referee, Undo
from tracking.events import (
    Answer,
    BarDropped,
    Concession,
    Event,
    Interference,
    InvokeEndgame,
    Nomination,
    OperatorFoul,
    OperatorInput,
    PlayAgain,
    RebreakChoice,
    RemovalChoice,
    Unobserved,
)
from tracking.events import Warning as MisconductWarning

__all__ = ["INPUTS", "table_setup", "score_of", "spoken", "Board"]

#: the operator inputs the console offers for each game (an answer is offered while a question waits)
INPUTS: Mapping[str, tuple[type[OperatorInput], ...]] = {
    "ficha": (Answer, Concession, MisconductWarning, RemovalChoice, OperatorFoul),
    "brasileira": (Answer, Nomination, Concession, PlayAgain, OperatorFoul),
    "bar-billiards": (Answer, Concession, Interference, BarDropped, InvokeEndgame, RebreakChoice, OperatorFoul),
}

RECENT_CALLS = 8  # calls the console lists
RECENT_PROBLEMS = 5


def _hex(rgb: Sequence[int]) -> str:
    r, g, b = rgb
    return f"#{r:02x}{g:02x}{b:02x}"


def table_setup(game: str, rulebook: str, profile: TableProfile, players: Sequence[str]) -> dict[str, Any]:
    """The match's fixed picture: the table to scale (playing surface, rails, pockets or holes, pins, the
    baulk line and the D), the balls' colours, the players, the rulebook (by its title) and the inputs
    the console offers."""
    r = profile.ball_radius_mm
    return {
        "game": game,
        "rulebook": rulebook,
        "players": list(players),
        "inputs": [cls.kind for cls in INPUTS.get(game, ())],
        "table": {
            "name": profile.name, "length_mm": profile.length_mm, "width_mm": profile.width_mm,
            "rail_mm": profile.rail_width_mm, "cloth": _hex(profile.cloth_rgb), "ball_radius_mm": r,
            "pockets": [{"id": p.id, "x": p.xy_mm[0], "y": p.xy_mm[1], "r": p.radius_mm} for p in profile.pockets],
            "holes": [{"id": h.id, "x": h.xy_mm[0], "y": h.xy_mm[1], "r": h.radius_mm, "value": h.value} for h in profile.holes],
            "pins": [{"id": p.id, "x": p.xy_mm[0], "y": p.xy_mm[1], "r": p.radius_mm, "colour": p.colour} for p in profile.pins],
            "baulk_x_mm": profile.baulk_x_mm,
            "d": ({"x": profile.d_centre_mm[0], "y": profile.d_centre_mm[1], "r": profile.d_radius_mm, "dir": profile.d_direction}
                  if profile.d_centre_mm is not None and profile.d_radius_mm else None),
        },
        "balls": {b.id: {"colour": _hex(b.rgb), "class": b.colour, "group": b.group, "value": b.value} for b in profile.balls},
        "object_balls": [b.id for b in profile.balls if b.group != "cue"],
        "classes": {b.colour: _hex(b.rgb) for b in profile.balls},
    }


def score_of(game: str, state: Any) -> dict[str, Any]:
    """The score after the last call, in the game's terms: ``sides`` (names), ``frame`` (points or
    balls of the frame in play, per side), ``match`` (frames won per side), ``to_play``, the balls
    ``on_table``, and for bar billiards the current ``break`` and the game ``clock``."""
    if game == "ficha":
        return {
            "sides": list(state.sides), "to_play": state.shooter, "frame_no": state.frame, "best_of": state.options.frames,
            "match": dict(zip(state.sides, state.score)),
            "frame": {side: len(state.left(i)) for i, side in enumerate(state.sides)}, "frame_unit": "balls left",
            "on_table": sorted(state.balls.on_table), "over": state.match_over, "winner": state.match_winner,
        }
    if game == "brasileira":
        return {
            "sides": list(state.players), "to_play": state.to_play, "frame_no": state.frame, "best_of": state.options.frames,
            "match": {p: state.frames_won.get(p, 0) for p in state.players},
            "frame": {p: state.scores.get(p, 0) for p in state.players}, "frame_unit": "points",
            "on_table": sorted(state.on_table), "over": state.match_over, "winner": state.match_winner,
        }
    if game == "bar-billiards":
        return {
            "sides": list(state.sides), "to_play": state.player, "frame_no": 1, "best_of": 1,
            "match": {side: int(state.winner == side) for side in state.sides},
            "frame": {side: state.banked.get(side, 0) for side in state.sides}, "frame_unit": "banked",
            "on_table": sorted(state.table), "break": {"player": state.player, "points": state.break_score},
            "clock": {"started_s": state.clock_start_t_s, "length_s": state.options.clock_minutes * 60.0,
                      "bar_down": state.bar_down, "endgame": state.endgame},
            "over": state.frame_over, "winner": state.winner,
        }
    raise ValueError(f"no scoreboard for the game {game!r}")


def spoken(decision: Decision) -> str:
    """The call as a referee would say it: the explanation without its rule numbers, or the question."""
    if decision.pending is not None:
        return f"Referee's question: {decision.pending.text}"
    head, sep, rest = decision.explanation.partition(": ")
    return (rest if sep else head).replace(";", ",")


def _call(decision: Decision) -> dict[str, Any]:
    d = decision.to_dict()
    keep = ("t_s", "shot", "player", "fouls", "penalty", "next_player", "frame_over", "winner", "match_over",
            "match_winner", "explanation", "rules", "pending")
    out = {k: d.get(k) for k in keep}
    out["summary"], out["spoken"] = decision.summary(), spoken(decision)
    return out


def _input_text(e: OperatorInput) -> str:
    fields = {k: v for k, v in ((f, getattr(e, f)) for f in ("player", "ball", "pocket", "question", "answer", "rule",
                                                              "choice", "note", "field", "value")
                                if hasattr(e, f)) if v not in ("", None)}
    return e.kind + (" " + " ".join(f"{k}={v}" for k, v in fields.items()) if fields else "")


class Board:
    """The live picture, kept from the pipeline's results (a consumer: :meth:`add` each result) and read
    as JSON by the server (:meth:`snapshot`, thread-safe). ``referee`` is the run's
    :class:`~rules.base.Referee`, whose state gives the score."""

    def __init__(self, game: str, profile: TableProfile, players: Sequence[str], referee: Referee):
        self.game, self.referee = game, referee
        self.setup = table_setup(game, referee.engine.rules.title, profile, players)
        self.colours = self.setup["classes"]
        self._lock = threading.Lock()
        self._version = 0
        self.t_s = 0.0
        self.balls: list[dict[str, Any]] = []
        self.calls: deque[dict[str, Any]] = deque(maxlen=RECENT_CALLS)
        self.pending: dict[str, Any] | None = None
        self.nomination: dict[str, str] | None = None  # entered for the next shot, not yet judged
        self.inputs: deque[dict[str, Any]] = deque(maxlen=RECENT_CALLS)
        self.problems: deque[str] = deque(maxlen=RECENT_PROBLEMS)
        self.source = {"calibration": "fixed", "valid": True, "gaps": 0, "last_gap": None}
        self.score = score_of(game, referee.state)
        self.finished = False

    @property
    def version(self) -> int:
        """Grows with every change a viewer must see (a call, an input, a problem), not with the balls."""
        return self._version

    def add(self, result: Any) -> None:
        with self._lock:
            self.t_s = result.t_s
            if not result.end_only:
                self.balls = [{"id": b, "x": round(x, 1), "y": round(y, 1), "colour": self._colour(b, cls), "state": state}
                              for b, cls, x, y, state, _ in result.tracks.rows()]
                self.source["calibration"], self.source["valid"] = result.calibration, result.valid
            changed = False
            for e in result.events:
                changed |= self._event(e)
            for step in result.steps:
                self.calls.appendleft(_call(step.decision))
                if step.decision.shot is not None and not isinstance(step.decision, Undo):
                    self.nomination = None
                self.score = score_of(self.game, step.state)
                changed = True
            if result.steps:
                q = self.referee.pending
                self.pending = None if q is None else {"id": q.id, "text": q.text, "options": list(q.options)}
            for p in result.problems:
                self.problems.appendleft(p)
                changed = True
            if result.last:
                self.finished = changed = True
            if changed:
                self._version += 1

    def _colour(self, ball: str, cls: str) -> str:
        known = self.setup["balls"].get(ball)
        return known["colour"] if known else self.colours.get(cls, "#cccccc")

    def _event(self, e: Event) -> bool:
        if isinstance(e, OperatorInput):
            self.inputs.appendleft({"t_s": e.t_s, "text": _input_text(e)})
            if isinstance(e, Nomination):
                self.nomination = {"ball": e.ball, "pocket": e.pocket}
            return True
        if isinstance(e, Unobserved):
            self.source["gaps"] += 1
            self.source["last_gap"] = {"t_s": e.t_s, "until_s": e.until_s, "reason": e.reason}
            return True
        return False

    def snapshot(self) -> dict[str, Any]:
        """Everything a viewer shows now, as JSON values."""
        with self._lock:
            return {
                "type": "state", "version": self._version, "t_s": round(self.t_s, 3), "balls": list(self.balls),
                "score": self.score, "pending": self.pending, "calls": list(self.calls), "nomination": self.nomination,
                "on_table": [b for b in self.setup["object_balls"] if b in self.score["on_table"]],
                "inputs": list(self.inputs), "problems": list(self.problems),
                "source": dict(self.source), "finished": self.finished,
            }
