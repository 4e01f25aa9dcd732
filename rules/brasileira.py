"""Sinuca Brasileira (Brazilian snooker: one red, six colours, nominated shots): the referee.

Rule numbers
------------
"Sinuca Brasileira (Brazilian Snooker)" numbers its rules 1 to 13 and leaves the paragraphs after rule 13 unnumbered. The engine
numbers those in reading order, and every message quotes them the same way:

* ``13.1`` a free shot at the lowest ball ("IF THE RED IS CHOSEN", "IF THE YELLOW IS CHOSEN" and
  "the same rules ... green, brown and blue"): a miss is no foul; a pot earns another free shot at
  any nominated colour (the *bonus*); a colour potted on the bonus is re-spotted;
* ``13.2`` a penalty shot at any other ball ("IF ONE OF THE SIX COLORS IS CHOSEN"): potted, it
  scores, is re-spotted and the ball on must be played next; missed, it is a foul;
* ``13.3`` the pink/black ending ("If the black is chosen and potted it is replaced on its spot,
  and the pink must be played next");
* ``13.4`` "play again": the non-offender, snookered after a foul, asks the offender to play again;
* ``V0`` the "PENALTY SHOTS" variation (option ``penalty_repeat``), ``V1`` and ``V2`` the two
  "FOUL STROKES" variations (option ``foul_value``).

From camera events (with the operator's nomination)
    1 (standard snooker): in-off, a ball forced off the table, striking a ball other than the cue
    ball, playing from outside the D with the ball in hand, a second cue contact (push, double
    hit), a jump before the first contact, a ball moved by no contact; the colours potted on a foul
    are re-spotted and the red stays down; with only the black left (the black the ball on), the
    first score or foul ends the frame; a tie re-spots the black.
    2 the table set for the opening (the profile's spots); 3 the values (the profile's ``value``);
    4 the nominated ball must be hit first and potted in the nominated pocket, any other ball potted
    is a foul; 5 and V1/V2 the foul value; 6-11, 13, 13.1-13.3 free, bonus and penalty shots;
    12 the opening shot: the red must be hit; potting it, going in-off or leaving the opponent
    snookered on the red (computed from the positions at rest; a log that gives none shows no
    snooker, positions without the cue ball or the red are asked about) resets the table.
    A ball moved with no contact while the striker aims (after the last hand on the table) is the
    striker's foul, judged with the shot. A shot never seen at rest is asked about (``unfinished``).
    Re-spotting (rule 1, standard snooker): the ball's own spot if free, else the highest-valued
    free colour spot, else as near as possible to its own spot between it and the top (foot)
    cushion, computed from the positions at rest.

From operator inputs
    4 the nomination (``nomination``: ball and pocket, before every shot but the opening one; a shot
    without one, or naming a ball no longer on the table, is judged once the operator answers which
    ball and pocket were nominated); 13.4 ``play_again``; a concession; fouls no camera sees
    (``operator_foul``, on the shot just played); answers to the engine's questions; ``override`` of
    the last shot's facts (fields ``fouls``, ``first_contact``, ``pots``, ``nomination``). An override
    or an operator foul judges the last shot again with the fact replaced (:class:`rules.base.Referee`).
    Nominating another ball than the one the rules allow is no refusal: the shot is judged, and the
    nomination is a foul where the rules make it one (13.2: after a potted penalty ball the ball on
    must be played; rule 12: the opening shot is played at the red whatever is nominated).

A frame joined mid-way (option ``start=mid_frame``: the camera switched on during a frame)
    ``start_player`` (default the first player) is at the table with a free choice (rule 9: the ball
    on or a penalty shot), ``start_scores`` (``"A=12,B=7"``) the frame's scores so far, and
    ``start_balls`` the object balls on the table (default: read off the first ``shot_start``'s
    positions). The balls on the table are always the highest-valued ones (each ball on stays down
    once potted, rule 13.1), so the table runs from the lowest ball seen up to the black: a ball the
    camera misses above it is still on the table. The breaker of later frames alternates from the
    first player.

Cannot see
    Which ball and pocket a player declared (rule 4): the operator must enter it. Push strokes and
    touches with clothing show up only as the ``cue_contact`` / ``ball_touched`` events the tracker
    infers. A jump *over* a ball is approximated by any jump of the cue ball before its first
    contact. Deliberate misses are not judged (this game has no "miss" rule).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from pydantic import Field

from calibration.table import TableProfile
from rules.base import (Decision, Engine, Frames, Question, RuleTable, RulesError, RulesOptions, Shot, frozen_map, joined_player,
                        options_dict, other, parse_options, parse_points)
from rules.geometry import can_hit, respot_spot
from tracking.events import (
    BallBall,
    BallPlaced,
    BallRemoved,
    BallTouched,
    Concession,
    CueContact,
    Jump,
    Nomination,
    OffTable,
    OperatorFoul,
    OperatorInput,
    Override,
    PlayAgain,
    Pot,
    Unobserved,
)

__all__ = [
    "FoulValue",
    "Options",
    "FrameStart",
    "RULES",
    "Foul",
    "PRECEDENCE",
    "Mode",
    "ShotKind",
    "ShotFacts",
    "State",
    "BrasileiraDecision",
    "BrasileiraRules",
]

log = logging.getLogger(__name__)

GAME = "brasileira"
XY = tuple[float, float]


class FoulValue(StrEnum):
    """What a foul costs (rule 5 and the two FOUL STROKES variations)."""

    SEVEN = "seven"  # rule 5: every foul is worth 7
    LOWEST_ON_TABLE = "lowest_on_table"  # V1: the value of the lowest ball on the table at the strike
    HIGHEST_INVOLVED = "highest_involved"  # V2: the highest value among the balls involved in the stroke


class FrameStart(StrEnum):
    """How the first frame starts (option ``start``)."""

    RACK = "rack"  # the table set for the opening shot (rules 2, 12)
    MID_FRAME = "mid_frame"  # joined mid-way (module docstring)


class Options(RulesOptions):
    """The house-rule options of the rules decisions (with their defaults)."""

    foul_value: FoulValue = FoulValue.SEVEN  # rule 5 / V1 / V2
    penalty_repeat: bool = False  # V0: a penalty shot may follow a potted penalty ball
    frames: Frames = 1  # best of N frames (odd); the break alternates
    min_confidence: float = Field(0.6, ge=0.0, le=1.0)  # camera events below it make the call pending with a question
    start: FrameStart = FrameStart.RACK  # the first frame from the opening shot, or joined mid-way
    start_player: str = ""  # start=mid_frame: at the table ("" = the first player)
    start_scores: str = ""  # start=mid_frame: the frame's scores so far, "player=points,..." ("" = none)
    start_balls: str = ""  # start=mid_frame: the object balls on the table ("" = the first shot_start's positions)


class Foul(StrEnum):
    """Fouls of Sinuca Brasileira, with the rule that makes each one a foul."""

    IN_OFF = "in_off"  # 1 (snooker), 12: the cue ball potted
    OFF_TABLE = "off_table"  # 1 (snooker): a ball forced off the table
    WRONG_BALL_STRUCK = "wrong_ball_struck"  # 1 (snooker): the cue struck a ball other than the cue ball
    NOT_FROM_D = "not_from_d"  # 1 (snooker): with the ball in hand, the cue ball not played from the D
    DOUBLE_HIT = "double_hit"  # 1 (snooker): the cue touched a ball again during the shot (push, double hit)
    JUMP_SHOT = "jump_shot"  # 1 (snooker): the cue ball jumped before its first contact
    BALL_TOUCHED = "ball_touched"  # 1 (snooker): a ball moved with no strike or contact to explain it
    NO_BALL_HIT = "no_ball_hit"  # 1 (snooker), 12: the cue ball touched no ball
    WRONG_BALL_FIRST = "wrong_ball_first"  # 4, 12: the first ball hit was not the nominated ball (opening: the red)
    BALL_ON_NOT_PLAYED = "ball_on_not_played"  # 13.2: after a potted penalty ball another ball than the ball on nominated
    WRONG_POCKET = "wrong_pocket"  # 4: the nominated ball potted in a pocket other than the nominated one
    OTHER_BALL_POTTED = "other_ball_potted"  # 4: a ball that was not nominated was potted
    PENALTY_MISSED = "penalty_missed"  # 8, 11, 13.2: a penalty ball not potted in the nominated pocket
    OPERATOR = "operator"  # 1: a foul no camera sees, called by the operator


# The rule numbers every call quotes, in one place: the rule of each foul and the order a decision
# lists fouls in.
RULES = RuleTable(
    game=GAME,
    title="Sinuca Brasileira (Brazilian Snooker)",
    fouls=MappingProxyType({
        Foul.IN_OFF: "1", Foul.OFF_TABLE: "1", Foul.WRONG_BALL_STRUCK: "1", Foul.NOT_FROM_D: "1", Foul.DOUBLE_HIT: "1",
        Foul.JUMP_SHOT: "1", Foul.BALL_TOUCHED: "1", Foul.NO_BALL_HIT: "1", Foul.WRONG_BALL_FIRST: "4",
        Foul.BALL_ON_NOT_PLAYED: "13.2", Foul.WRONG_POCKET: "4", Foul.OTHER_BALL_POTTED: "4", Foul.PENALTY_MISSED: "8",
        Foul.OPERATOR: "1",
    }),
    precedence=(
        Foul.IN_OFF, Foul.OFF_TABLE, Foul.WRONG_BALL_STRUCK, Foul.NOT_FROM_D, Foul.DOUBLE_HIT, Foul.JUMP_SHOT,
        Foul.BALL_TOUCHED, Foul.NO_BALL_HIT, Foul.WRONG_BALL_FIRST, Foul.BALL_ON_NOT_PLAYED, Foul.WRONG_POCKET,
        Foul.OTHER_BALL_POTTED, Foul.PENALTY_MISSED, Foul.OPERATOR,
    ),
)
PRECEDENCE = RULES.precedence

VALUE_RULE: Mapping[FoulValue, str] = MappingProxyType({
    FoulValue.SEVEN: "5",
    FoulValue.LOWEST_ON_TABLE: "V1",
    FoulValue.HIGHEST_INVOLVED: "V2",
})


class Mode(StrEnum):
    """What the next shot may be."""

    OPENING = "opening"  # rule 12: the opening shot, at the red, no nomination needed
    CHOICE = "choice"  # rules 9-11, 13: the ball on as a free shot, or any other ball as a penalty shot
    BONUS = "bonus"  # 13.1: after the ball on was potted, a free shot at any nominated colour
    MUST_ON = "must_on"  # 13.2: after a potted penalty ball, the ball on must be played


class ShotKind(StrEnum):
    """How a shot was played, from the mode and the nomination."""

    OPENING = "opening"  # rule 12
    FREE = "free"  # rules 7, 10: at the ball on
    BONUS = "bonus"  # 13.1: the free shot after potting the ball on
    PENALTY = "penalty"  # rules 8, 11: at any ball but the ball on


@dataclass(frozen=True, slots=True)
class Doubt:
    """A fact the camera is unsure of, and the question that settles it.

    ``kind``: ``unobserved`` (confirm the events), ``first_contact`` (answer: a ball or ``none``),
    ``pot`` / ``off_table`` / ``foul`` (answer ``yes`` or ``no``); ``subject`` names the ball (and,
    for a foul, ``foul:ball``)."""

    question: Question
    kind: str
    subject: str = ""


@dataclass(frozen=True, slots=True)
class ShotFacts:
    """What happened in one shot, as the engine judges it: the camera's events reduced to the facts
    the rules need, the operator's nomination, and what is still in doubt.

    ``pots`` are ``(ball, pocket)`` in drop order (the cue ball included); ``camera_fouls`` are
    ``(foul, ball)`` pairs seen by the camera (double hit, jump, touched ball); ``forced_fouls``
    replaces the foul list when an operator overrides it."""

    shot: int
    t_s: float
    struck: str
    nomination: tuple[str, str] | None
    first_contact: str | None
    pots: tuple[tuple[str, str], ...]
    off_table: tuple[str, ...]
    camera_fouls: tuple[tuple[Foul, str], ...]
    start_positions: Mapping[str, XY]
    end_positions: Mapping[str, XY] | None
    cue_start: XY | None = None  # where the cue ball stood at the strike (None: not seen)
    doubts: tuple[Doubt, ...] = ()
    operator_fouls: tuple[str, ...] = ()
    forced_fouls: tuple[Foul, ...] | None = None


@dataclass(frozen=True, slots=True)
class State:
    """The match record between two calls: the table, the turn, the scores and the options.

    ``on_table``: object balls on the table; ``mode``: what the next shot may be; ``to_play``: the
    player at the table; ``offender``: the player who just fouled (13.4: may be asked to play
    again); ``snookered``: whether ``to_play`` was left snookered on the ball on (None: unknown);
    ``start_unseen``: a frame joined mid-way whose balls are read off the first strike."""

    players: tuple[str, str]
    options: Options
    on_table: frozenset[str]
    scores: Mapping[str, int]
    to_play: str
    breaker: str
    mode: Mode = Mode.OPENING
    cue_in_hand: bool = True
    frame: int = 1
    frames_won: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    offender: str | None = None
    snookered: bool | None = None
    match_over: bool = False
    match_winner: str | None = None
    shots: int = 0
    start_unseen: bool = False

    @property
    def options_record(self) -> dict[str, Any]:
        """The options in force, as plain values (for the match record)."""
        return options_dict(self.options)

    def opponent(self, player: str) -> str:
        return self.players[1] if player == self.players[0] else self.players[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class BrasileiraDecision(Decision):
    """The call on one shot or input, with everything the next state needs.

    ``points_potted`` go to ``player``, ``foul_points`` to the opponent; ``scores`` are the frame
    scores after the call. ``respots`` lists ``(ball, xy_mm)`` for every ball put back (a re-rack
    lists every object ball on its spot); ``on_table`` the object balls on the table after it.
    ``reset``: rule 12 reset the table. ``offender``: the player whose foul may be answered by
    ``play_again`` (13.4)."""

    nomination: tuple[str, str] | None = None
    shot_kind: ShotKind | None = None
    ball_on: str | None = None
    potted: tuple[str, ...] = ()
    points_potted: int = 0
    foul_points: int = 0
    scores: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    respots: tuple[tuple[str, XY], ...] = ()
    on_table: tuple[str, ...] = ()
    next_mode: Mode | None = None
    cue_in_hand: bool = False
    reset: bool = False
    snookered: bool | None = None
    offender: str | None = None
    frames_won: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    facts: ShotFacts | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the call (the shot's facts, an internal record, left out)."""
        out = Decision.to_dict(self)
        out.pop("facts", None)
        return out


def _rules(*numbers: str) -> tuple[str, ...]:
    """The rule numbers, each once, in the order given, as quoted in ``rules``."""
    return tuple(f"{GAME} {n}" for n in dict.fromkeys(numbers))


def _points(n: int) -> str:
    return f"{n} point{'' if n == 1 else 's'}"


def _explain(rules: tuple[str, ...], text: str) -> str:
    nums = ", ".join(r.split(" ", 1)[1] for r in rules)
    return f"{GAME} {nums}: {text}"


class BrasileiraRules(Engine):
    """The Sinuca Brasileira engine for one table profile (``brasileira`` or ``brasileira-semi``)."""

    name = GAME
    rules = RULES

    def __init__(self, profile: TableProfile):
        self.profile = profile
        cue = profile.cue_ball
        if cue is None:
            raise RulesError(f"{GAME}: table profile {profile.name!r} has no cue ball")
        self.cue = cue
        self.values: Mapping[str, int] = MappingProxyType({b.id: b.value for b in profile.balls if b.id != cue})
        if not self.values:
            raise RulesError(f"{GAME}: table profile {profile.name!r} has no object balls")
        missing = [b for b in self.values if b not in profile.spots]
        if missing:
            raise RulesError(f"{GAME}: table profile {profile.name!r} has no spot for {', '.join(missing)} (rule 2)")
        self.object_balls: tuple[str, ...] = tuple(sorted(self.values, key=lambda b: self.values[b]))
        self.first_ball = self.object_balls[0]  # the red: rule 12's ball
        self.last_ball = self.object_balls[-1]  # the black
        self.pockets = tuple(p.id for p in profile.pockets)
        self.radius_mm = profile.ball_radius_mm

    # ---- state ------------------------------------------------------------------------------------

    def initial_state(self, players: Sequence[str], options: Mapping[str, Any] | None = None) -> State:
        """A new match: the first player breaks frame 1 (rule 12), or plays on in a frame joined mid-way."""
        players = tuple(players)
        if len(players) != 2 or players[0] == players[1]:
            raise RulesError(f"{GAME}: a match needs two different players, got {list(players)}")
        opts = parse_options(Options, options, GAME)
        state = State(
            players=players,  # type: ignore[arg-type]
            options=opts,
            on_table=frozenset(self.object_balls),
            scores=frozen_map({p: 0 for p in players}),
            to_play=players[0],
            breaker=players[0],
            frames_won=frozen_map({p: 0 for p in players}),
        )
        player = joined_player(GAME, opts, players, "start_player")
        if player is None:
            return state
        # a frame joined mid-way (module docstring), before its first strike is seen
        scores = parse_points(GAME, "start_scores", opts.start_scores, players, "player")
        state = replace(state, to_play=player, scores=frozen_map(scores), mode=Mode.CHOICE, cue_in_hand=False, start_unseen=True)
        names = [b.strip() for b in opts.start_balls.split(",") if b.strip()]
        return self._table_from(state, names, "option start_balls") if names else state

    def _table_from(self, state: State, seen: Sequence[str], source: str) -> State:
        """The table of a joined frame: every object ball from the lowest ``seen`` up to the black
        (rule 13.1: the ball on stays down once potted, so the table holds the highest-valued balls)."""
        unknown = sorted(set(seen) - set(self.object_balls) - {self.cue})
        if unknown:
            raise RulesError(f"{GAME}: {source} names {', '.join(unknown)}, not object balls of table {self.profile.name!r} "
                             f"({', '.join(self.object_balls)})")
        present = [b for b in self.object_balls if b in seen]
        if not present:
            raise RulesError(f"{GAME}: a frame joined mid-way needs an object ball on the table (the black at least); "
                             f"{source} has none, so the frame is over")
        on = frozenset(self.object_balls[self.object_balls.index(present[0]):])
        return replace(state, on_table=on, start_unseen=False)

    def over(self, state: State) -> tuple[str, str | None] | None:
        return ("match", state.match_winner) if state.match_over else None

    def ball_on(self, on_table: frozenset[str] | Sequence[str]) -> str | None:
        """The lowest-valued ball on the table (rule 9), or None on an empty table."""
        balls = [b for b in self.object_balls if b in on_table]
        return balls[0] if balls else None

    def _advance(self, state: State, decision: Decision) -> State:
        if not isinstance(decision, BrasileiraDecision):
            raise RulesError(f"{GAME}: advance needs a decision made by this engine, got {type(decision).__name__}")
        new = replace(
            state,
            on_table=frozenset(decision.on_table),
            scores=frozen_map(decision.scores),
            to_play=decision.next_player or state.to_play,
            mode=decision.next_mode or state.mode,
            cue_in_hand=decision.cue_in_hand,
            frames_won=frozen_map(decision.frames_won or state.frames_won),
            offender=decision.offender,
            snookered=decision.snookered,
            match_over=decision.match_over,
            match_winner=decision.match_winner,
            shots=state.shots + (1 if decision.shot is not None else 0),
            start_unseen=state.start_unseen and decision.shot is None,
        )
        if decision.frame_over and not decision.match_over:
            new = replace(
                new,
                on_table=frozenset(self.object_balls),
                scores=frozen_map({p: 0 for p in state.players}),
                breaker=state.opponent(state.breaker),
                to_play=state.opponent(state.breaker),
                mode=Mode.OPENING,
                cue_in_hand=True,
                frame=state.frame + 1,
                offender=None,
                snookered=None,
                start_unseen=False,
            )
        return new

    # ---- judging a shot -------------------------------------------------------------------------

    def _judge(self, state: State, shot: Shot) -> BrasileiraDecision:
        """The call on one shot (pure): the camera's facts, settled by the operator's answers and
        replaced by the corrections, judged on the table as it stood."""
        if state.start_unseen:  # a frame joined mid-way: the first strike shows the table
            if not shot.start_positions:
                raise RulesError(f"{GAME}: a frame joined mid-way reads its balls off the first strike, but shot {shot.index}'s "
                                 "shot_start has no positions: give them, or the option start_balls (the object balls on the table)")
            state = self._table_from(state, list(shot.start_positions), f"shot {shot.index}'s shot_start positions")
        facts = self._facts(state, shot)
        for doubt in facts.doubts:
            if doubt.question.id not in shot.answers:
                return BrasileiraDecision(t_s=shot.t_s, shot=shot.index, player=state.to_play, pending=doubt.question, facts=facts)
            facts = _settled(facts, doubt, shot.answers[doubt.question.id])
        facts = replace(facts, doubts=())
        for e in shot.corrections:
            facts = self._corrected(state, facts, e)
        return self._decide(state, facts, shot.answers)

    def corrects(self, state: State, last: Decision, event: OperatorInput) -> bool:
        """An override, or an operator's foul on the shot just played (rule 1)."""
        return isinstance(event, (Override, OperatorFoul))

    def _corrected(self, state: State, facts: ShotFacts, event: OperatorInput) -> ShotFacts:
        """The facts with one correction applied: an operator's foul, or an override of ``fouls``
        (``none`` or comma-separated foul values), ``first_contact`` (a ball or ``none``), ``pots``
        (``none`` or ``ball@pocket,...`` in drop order) or ``nomination`` (``ball@pocket``)."""
        at = f"{event.kind} at {event.t_s:.2f}s"
        if isinstance(event, OperatorFoul):
            if event.player != state.to_play:
                raise RulesError(f"{GAME}: {at}: the last shot was played by {state.to_play}, not {event.player!r}")
            return replace(facts, operator_fouls=facts.operator_fouls + (f"{event.rule}{': ' + event.note if event.note else ''}",))
        assert isinstance(event, Override)
        value = event.value.strip()
        if event.field == "fouls":
            names = [] if value.lower() in ("", "none") else [v.strip() for v in value.split(",")]
            try:
                return replace(facts, forced_fouls=tuple(Foul(v) for v in names))
            except ValueError:
                raise RulesError(f"{GAME}: {at}: fouls={value!r}: use 'none' or comma-separated values of {', '.join(f.value for f in Foul)}") from None
        if event.field == "first_contact":
            if value != "none" and value not in self.values:
                raise RulesError(f"{GAME}: {at}: first_contact={value!r}: use an object ball ({', '.join(self.object_balls)}) or 'none'")
            return replace(facts, first_contact=None if value == "none" else value)
        if event.field == "pots":
            pots = [] if value.lower() in ("", "none") else [self._ball_at(v.strip(), at, set(state.on_table) | {self.cue}) for v in value.split(",")]
            if len({b for b, _ in pots}) != len(pots):
                raise RulesError(f"{GAME}: {at}: pots={value!r} names a ball twice")
            return replace(facts, pots=tuple(pots))
        if event.field == "nomination":
            return replace(facts, nomination=self._ball_at(value, at, set(self.values)))
        raise RulesError(f"{GAME}: {at}: cannot override {event.field!r}; the fields are fouls, first_contact, pots, nomination")

    def _facts(self, state: State, shot: Shot) -> ShotFacts:
        """Reduce a shot's events to the facts the rules need, checking every id (impossible logs
        raise :class:`RulesError`)."""
        n = shot.index
        known = set(self.profile.ball_ids)
        on = set(state.on_table) | {self.cue}
        for e in shot.events:
            for b in (v for k in ("ball", "a", "b") if isinstance(v := getattr(e, k, None), str)):
                if b not in known:
                    raise RulesError(f"{GAME}: shot {n}: unknown ball {b!r} in a {e.kind} event at {e.t_s:.2f}s (balls: {', '.join(self.profile.ball_ids)})")
                if b not in on:
                    raise RulesError(f"{GAME}: shot {n}: a {e.kind} event at {e.t_s:.2f}s names the {b}, which is not on the table")
        threshold = state.options.min_confidence
        doubts: list[Doubt] = []
        for e in shot.before + shot.events:
            if isinstance(e, Unobserved) and e.until_s > shot.t_s:
                doubts.append(Doubt(Question.about(
                    n, "unobserved", f"shot {n} overlaps an unobserved moment ({e.reason or 'no reason given'}): confirm the camera's events?",
                    ("confirm",), default="confirm"), "unobserved"))
                break
        if shot.end is None:  # the protocol: a shot never seen at rest is judged as seen only once confirmed
            doubts.append(Doubt(Question.about(
                n, "unfinished", f"shot {n} was never seen at rest (the log ends first): confirm the camera's events?",
                ("confirm",), default="confirm"), "unobserved"))
        contacts = [e for e in shot.events if isinstance(e, BallBall) and self.cue in (e.a, e.b)]
        first = other(contacts[0], self.cue) if contacts else None
        if contacts and contacts[0].confidence < threshold:
            sure = next((i for i, c in enumerate(contacts) if c.confidence >= threshold), None)
            candidates = tuple(dict.fromkeys(other(c, self.cue) for c in contacts[: None if sure is None else sure + 1]))
            # the camera's candidates first; the referee may have seen the cue ball hit any ball on the table (rule 4)
            options = tuple(dict.fromkeys(candidates + tuple(b for b in self.object_balls if b in on))) + (() if sure is not None else ("none",))
            seen_text = " or ".join(candidates + (() if sure is not None else ("none",)))
            doubts.append(Doubt(Question.about(n, "first_contact", f"shot {n}: first contact {seen_text} (or another ball on the table)?",
                                               options, default=options[0]), "first_contact"))
        pots: list[tuple[str, str]] = []
        for p in sorted((e for e in shot.events if isinstance(e, Pot)), key=lambda p: p.t_s):
            if p.pocket not in self.pockets:
                raise RulesError(f"{GAME}: shot {n}: unknown pocket {p.pocket!r} for the {p.ball} at {p.t_s:.2f}s (pockets: {', '.join(self.pockets)})")
            if any(b == p.ball for b, _ in pots):
                raise RulesError(f"{GAME}: shot {n}: the {p.ball} is potted twice (at {p.t_s:.2f}s again)")
            pots.append((p.ball, p.pocket))
            if p.confidence < threshold:
                doubts.append(Doubt(Question.about(n, "pot", f"shot {n}: did the {p.ball} drop in {p.pocket}?", ("yes", "no"), p.ball,
                                                     default=Question.seen(p.confidence)), "pot", p.ball))
        off: dict[str, float] = {}
        for e in shot.events:
            if isinstance(e, OffTable):
                off[e.ball] = max(off.get(e.ball, 0.0), e.confidence)
        for b, conf in off.items():
            if conf < threshold:
                doubts.append(Doubt(Question.about(n, "off_table", f"shot {n}: did the {b} leave the table?", ("yes", "no"), b,
                                                     default=Question.seen(conf)), "off_table", b))
        first_t = contacts[0].t_s if contacts else math.inf
        seen: dict[tuple[Foul, str], float] = {}
        for e in self._touched_while_aiming(state, shot) + shot.events:
            key: tuple[Foul, str] | None = None
            if isinstance(e, CueContact):
                key = (Foul.DOUBLE_HIT, e.ball)
            elif isinstance(e, Jump) and e.ball == self.cue and e.t_s < first_t:
                key = (Foul.JUMP_SHOT, e.ball)
            elif isinstance(e, BallTouched):
                key = (Foul.BALL_TOUCHED, e.ball)
            if key is not None:
                seen[key] = max(seen.get(key, 0.0), e.confidence)
        for (foul, ball), conf in seen.items():
            if conf < threshold:
                text = {Foul.DOUBLE_HIT: f"did the cue touch the {ball} again", Foul.JUMP_SHOT: "did the cue ball jump before its first contact",
                        Foul.BALL_TOUCHED: f"was the {ball} moved without a contact"}[foul]
                doubts.append(Doubt(Question.about(n, foul.value, f"shot {n}: {text}?", ("yes", "no"), ball,
                                                     default=Question.seen(conf)), "foul", f"{foul.value}:{ball}"))
        noms = [e for e in shot.inputs(Nomination) if e.t_s <= shot.t_s]
        nomination = (noms[-1].ball, noms[-1].pocket) if noms else None  # type: ignore[attr-defined]
        if shot.struck not in known:
            raise RulesError(f"{GAME}: shot {n}: the cue struck an unknown ball {shot.struck!r}")
        # where the cue ball was struck from (rule 1, the D): the positions at the strike, else the strike's
        # own point, else where a hand last placed it
        cue_start = shot.start_positions.get(self.cue) or (shot.start.xy_mm if shot.struck == self.cue else None)
        placed = [e.xy_mm for e in shot.before if isinstance(e, BallPlaced) and e.ball == self.cue and e.xy_mm is not None]
        return ShotFacts(
            shot=n, t_s=shot.t_s, struck=shot.struck, nomination=nomination, first_contact=first, pots=tuple(pots),
            off_table=tuple(off), camera_fouls=tuple(seen), start_positions=shot.start_positions,
            cue_start=cue_start or (placed[-1] if placed else None),
            end_positions=shot.end.positions if shot.end is not None else None, doubts=tuple(doubts),
        )

    def _touched_while_aiming(self, state: State, shot: Shot) -> tuple[BallTouched, ...]:
        """Balls moved with no contact between the last hand on the table (a re-spot, the ball in hand
        placed) and the strike: the striker's foul (rule 1, snooker: touching a ball in play). Not
        before an opening shot (the table was just set by hand), nor the cue ball in hand."""
        if state.mode is Mode.OPENING:
            return ()
        hands = [i for i, e in enumerate(shot.before) if isinstance(e, (BallPlaced, BallRemoved))]
        after = shot.before[hands[-1] + 1:] if hands else shot.before
        return tuple(e for e in after if isinstance(e, BallTouched) and not (e.ball == self.cue and state.cue_in_hand))

    def _check_nomination(self, state: State, ball: str, pocket: str, where: str) -> None:
        """Refuse a nomination no shot can follow (rule 4): an unknown ball or pocket, the cue ball, a
        ball not on the table. A ball the rules do not allow for this shot is no refusal: the shot is
        judged (12, 13.2)."""
        if ball == self.cue:
            raise RulesError(f"{GAME}: {where}: the cue ball cannot be nominated; nominate one of {', '.join(self.object_balls)} (rule 4)")
        if ball not in self.values:
            raise RulesError(f"{GAME}: {where}: unknown ball {ball!r}; nominate one of {', '.join(self.object_balls)} (rule 4)")
        if pocket not in self.pockets:
            raise RulesError(f"{GAME}: {where}: unknown pocket {pocket!r}; nominate one of {', '.join(self.pockets)} (rule 4)")
        if ball not in state.on_table and not state.start_unseen:
            on_table = [b for b in self.object_balls if b in state.on_table]
            raise RulesError(f"{GAME}: {where}: the {ball} is not on the table (on the table: {', '.join(on_table)}); nominate a ball on the table (rule 4)")

    def _nomination(self, state: State, facts: ShotFacts, answers: Mapping[str, str]) -> tuple[str, str] | Question:
        """The shot's nomination (rule 4); without one, or naming a ball no longer on the table, the
        operator says which ball and pocket were nominated."""
        nomination = facts.nomination
        if nomination is not None and nomination[0] in state.on_table:
            return nomination
        key = Question.key(facts.shot, "nomination")
        if key in answers:
            return self._ball_at(answers[key], f"answer to {key}", set(state.on_table))
        why = "has no nomination" if nomination is None else f"nominates the {nomination[0]}, which is not on the table"
        options = [f"{b}@{p}" for b in self.object_balls if b in state.on_table for p in self.pockets]
        # what the camera saw suggests one: the first object ball potted, in its pocket (else the first ball hit)
        seen = [f"{b}@{p}" for b, p in facts.pots if f"{b}@{p}" in options]
        if not seen and facts.first_contact is not None:
            seen = [o for o in options if o.startswith(f"{facts.first_contact}@")]
        return Question(key, f"{GAME} rule 4: shot {facts.shot} {why}: which ball and pocket did {state.to_play} nominate?",
                        tuple(options), seen[0] if seen else None)

    def _decide(self, state: State, facts: ShotFacts, answers: Mapping[str, str]) -> BrasileiraDecision:
        """The call on a shot from its settled facts."""
        player = state.to_play
        opp = state.opponent(player)
        n = facts.shot
        common: dict[str, Any] = dict(t_s=facts.t_s, shot=n, player=player, facts=facts)
        cue = self.cue
        on = self.ball_on(state.on_table)
        if on is None:
            raise RulesError(f"{GAME}: shot {n}: no object ball is on the table")
        nomination = facts.nomination
        if state.mode is Mode.OPENING:
            target, kind = self.first_ball, ShotKind.OPENING  # rule 12: played at the red, whatever is nominated
            if nomination is not None and nomination[0] != self.first_ball:
                nomination = None
        else:
            nominated = self._nomination(state, facts, answers)
            if isinstance(nominated, Question):
                return BrasileiraDecision(pending=nominated, **common)
            nomination = nominated
            facts = replace(facts, nomination=nomination)
            target = nomination[0]
            if state.mode is Mode.BONUS:
                kind = ShotKind.BONUS
            elif target == on:
                kind = ShotKind.FREE
            else:
                kind = ShotKind.PENALTY
        common.update(nomination=nomination, shot_kind=kind, ball_on=on, facts=facts)

        obj_pots = [(b, p) for b, p in facts.pots if b != cue]
        cue_potted = any(b == cue for b, _ in facts.pots)
        cue_gone = cue_potted or cue in facts.off_table
        potted_target = any(b == target and (nomination is None or p == nomination[1]) for b, p in obj_pots)
        fouls = self._fouls(state, facts, target, kind, obj_pots, cue_potted) if facts.forced_fouls is None else set(facts.forced_fouls)
        ordered = tuple(f for f in PRECEDENCE if f in fouls)
        gone = [b for b, _ in obj_pots] + [b for b in facts.off_table if b != cue]
        positions = dict(facts.end_positions or {})
        if facts.end_positions is None:
            log.warning("%s shot %d: no at_rest positions; re-spotting assumes free spots", GAME, n)
        if cue_gone:
            positions.pop(cue, None)

        unseen = ""  # what the call could not see, said in its explanation
        if kind is ShotKind.OPENING:
            reasons = []
            if any(b == self.first_ball for b, _ in obj_pots):
                reasons.append(f"the {self.first_ball} was potted")
            if cue_potted:
                reasons.append("the cue ball went in-off")
            respots = self._respot([b for b in gone if b != self.first_ball], positions)
            remaining = state.on_table - {b for b in gone if b == self.first_ball}
            snookered = None
            if not reasons:
                key = Question.key(n, "snooker")
                if key in answers:
                    snookered = answers[key] == "yes"
                elif not facts.end_positions:  # the log gives no positions at rest (it may: they are optional)
                    snookered, unseen = False, " (no positions at rest: no snooker seen, rule 12)"
                else:
                    snookered = self._snookered(facts.end_positions, respots, remaining, cue_gone)
                if snookered is None:
                    q = Question(key, f"{GAME} 12: shot {n}: is {opp} snookered on the {self.ball_on(remaining)} (no straight path from the cue ball)?", ("yes", "no"),
                                 "no")  # unproven: no free ball
                    return BrasileiraDecision(pending=q, **common)
                if snookered:
                    reasons.append(f"{opp} is snookered on the {self.ball_on(remaining)}")
            if reasons:
                rules = _rules("12")
                rack = tuple((b, self.profile.spots[b]) for b in self.object_balls)
                return BrasileiraDecision(
                    fouls=ordered, penalty="table reset, no points (rule 12)", next_player=player,
                    scores=state.scores, respots=rack, on_table=self.object_balls, next_mode=Mode.OPENING,
                    cue_in_hand=True, reset=True, frames_won=state.frames_won, rules=rules,
                    explanation=_explain(rules, f"opening shot: {' and '.join(reasons)} — the table is reset and {player} plays the opening shot again"),
                    **common,
                )

        only_last = state.on_table == frozenset({self.last_ball}) and kind is ShotKind.FREE
        scores = dict(state.scores)
        if ordered:
            points = self._foul_points(state, facts, target, obj_pots)
            scores[opp] += points
            removed = {self.first_ball} & set(gone)  # 1 (snooker): a red potted or off the table on a foul stays off
            respots = self._respot([b for b in gone if b != self.first_ball], positions)
            on_after = frozenset(state.on_table - removed)
            rules = _rules(*(("12",) if kind is ShotKind.OPENING else ()), *(RULES.rule_of(f) for f in ordered), *(("8", "11") if Foul.PENALTY_MISSED in fouls else ()),
                           VALUE_RULE[state.options.foul_value])
            detail = self._foul_detail(ordered, facts, target, nomination, obj_pots)
            penalty = f"{_points(points)} to {opp}"
            if only_last:  # 1 (snooker): with only the black left, the first foul ends the frame
                return self._frame_end(state, facts, common, scores, 0, points, ordered, penalty, rules, f"{detail}; {penalty}", positions)
            snookered = self._snookered(facts.end_positions, respots, on_after, cue_gone)
            rules = rules + _rules("13.4")
            text = f"{detail}; {penalty}; {opp} to play{' (snookered: may ask ' + player + ' to play again)' if snookered else ''}"
            return BrasileiraDecision(
                fouls=ordered, penalty=penalty, next_player=opp, foul_points=points, scores=scores,
                potted=tuple(b for b, _ in obj_pots), respots=respots, on_table=tuple(b for b in self.object_balls if b in on_after),
                next_mode=Mode.CHOICE, cue_in_hand=cue_gone, snookered=snookered, offender=player,
                frames_won=state.frames_won, rules=rules, explanation=_explain(rules, text), **common,
            )

        # no foul (or an override said so): only the nominated ball can score; anything else that
        # dropped goes back (a red stays down, rule 1 snooker)
        scored = target if potted_target else None
        stay_down = {self.first_ball} & (set(gone) - {scored})
        if scored is not None and kind is ShotKind.FREE and not only_last:
            stay_down.add(scored)  # 13.1: the ball on potted on its free shot stays down
        on_after = frozenset(state.on_table - stay_down)
        on_tuple = tuple(b for b in self.object_balls if b in on_after)
        if scored is None:
            respots = self._respot([b for b in dict.fromkeys(gone) if b not in stay_down], positions)
            rules = {ShotKind.OPENING: _rules("12", "13"), ShotKind.FREE: _rules("7", "10", "13.1"),
                     ShotKind.BONUS: _rules("7", "13.1"), ShotKind.PENALTY: _rules("11")}[kind]
            what = f"opening shot hit the {target}{unseen}" if kind is ShotKind.OPENING else f"{kind.value} shot: the {target} not potted, no foul"
            snookered = self._snookered(facts.end_positions, respots, on_after, cue_gone)
            return BrasileiraDecision(
                next_player=opp, scores=scores, respots=respots, on_table=on_tuple, next_mode=Mode.CHOICE,
                cue_in_hand=cue_gone, snookered=snookered, frames_won=state.frames_won,
                rules=rules, explanation=_explain(rules, f"{what}; {opp} to play"), **common,
            )

        value = self.values[target]
        scores[player] += value
        where = f"the {target} in {nomination[1]}" if nomination else f"the {target}"
        if only_last:  # 1 (snooker): the black potted as the ball on ends the frame
            rules = _rules("13.1", "1")
            return self._frame_end(state, facts, common, scores, value, 0, (), None, rules, f"{where}, {_points(value)}", positions)
        respots = self._respot([b for b in dict.fromkeys(gone) if b not in stay_down], positions)
        if kind is ShotKind.FREE:
            rules = _rules("13.1")
            text = f"free shot: {where}, {_points(value)}; {player} has the bonus: a free shot at any nominated colour"
            next_mode = Mode.BONUS
        elif kind is ShotKind.BONUS:
            next_mode, rules = Mode.CHOICE, _rules("13.1")
            text = f"bonus shot: {where}, {_points(value)}, re-spotted; the {on} is on"
        elif state.options.penalty_repeat:
            next_mode, rules = Mode.CHOICE, _rules("13.2", "V0")
            text = f"penalty shot: {where}, {_points(value)}, re-spotted; {player} may nominate any ball again"
        else:
            next_mode = Mode.MUST_ON
            pink_black = target == self.last_ball and on == self.object_balls[-2]
            rules = _rules("13.2", "13.3") if pink_black else _rules("13.2")
            text = f"penalty shot: {where}, {_points(value)}, re-spotted; {player} must play the {on} next"
        return BrasileiraDecision(
            next_player=player, points_potted=value, scores=scores, potted=(target,), respots=respots,
            on_table=on_tuple, next_mode=next_mode, cue_in_hand=cue_gone,
            frames_won=state.frames_won, rules=rules, explanation=_explain(rules, text), **common,
        )

    def _fouls(self, state: State, facts: ShotFacts, target: str, kind: ShotKind,
               obj_pots: list[tuple[str, str]], cue_potted: bool) -> set[Foul]:
        """Every foul the facts show (rules 1, 4, 8, 11, 12)."""
        fouls: set[Foul] = {f for f, _ in facts.camera_fouls}
        if cue_potted:
            fouls.add(Foul.IN_OFF)
        if facts.off_table:
            fouls.add(Foul.OFF_TABLE)
        if facts.struck != self.cue:
            fouls.add(Foul.WRONG_BALL_STRUCK)
        if state.cue_in_hand and facts.cue_start is not None and not self.profile.in_d(facts.cue_start, tolerance_mm=1.0):
            fouls.add(Foul.NOT_FROM_D)
        if facts.first_contact is None:
            fouls.add(Foul.NO_BALL_HIT)
        elif facts.first_contact != target:
            fouls.add(Foul.WRONG_BALL_FIRST)
        for b, p in obj_pots:
            if b != target:
                fouls.add(Foul.OTHER_BALL_POTTED)
            elif facts.nomination is not None and p != facts.nomination[1]:
                fouls.add(Foul.WRONG_POCKET)
        if kind is ShotKind.PENALTY and (target, facts.nomination[1]) not in obj_pots:  # type: ignore[index]
            fouls.add(Foul.PENALTY_MISSED)
        if state.mode is Mode.MUST_ON and target != self.ball_on(state.on_table):
            fouls.add(Foul.BALL_ON_NOT_PLAYED)
        if facts.operator_fouls:
            fouls.add(Foul.OPERATOR)
        return fouls

    def _foul_points(self, state: State, facts: ShotFacts, target: str, obj_pots: list[tuple[str, str]]) -> int:
        """What a foul is worth (rule 5, V1, V2)."""
        how = state.options.foul_value
        if how is FoulValue.SEVEN:
            return 7
        if how is FoulValue.LOWEST_ON_TABLE:
            return min(self.values[b] for b in state.on_table)
        involved = {target} | {b for b, _ in obj_pots} | set(facts.off_table)
        if facts.first_contact is not None:
            involved.add(facts.first_contact)
        return max(self.values[b] for b in involved if b in self.values)

    def _foul_detail(self, fouls: tuple[Foul, ...], facts: ShotFacts, target: str,
                     nomination: tuple[str, str] | None, obj_pots: list[tuple[str, str]]) -> str:
        parts = []
        for f in fouls:
            if f is Foul.WRONG_BALL_FIRST:
                parts.append(f"{f.value} — the cue ball hit the {facts.first_contact} first, not the {target}")
            elif f is Foul.WRONG_POCKET:
                pocket = next((p for b, p in obj_pots if b == target), None)
                went = f"went in {pocket}" if pocket else "was not potted"
                parts.append(f"{f.value} — the {target} {went}, nominated {nomination[1] if nomination else '?'}")
            elif f is Foul.BALL_ON_NOT_PLAYED:
                parts.append(f"{f.value} — after a potted penalty ball the ball on must be played next, not the {target}")
            elif f is Foul.OTHER_BALL_POTTED:
                parts.append(f"{f.value} — {', '.join(b for b, _ in obj_pots if b != target)} potted")
            elif f is Foul.PENALTY_MISSED:
                parts.append(f"{f.value} — the {target} not potted in {nomination[1] if nomination else '?'}")
            elif f is Foul.OPERATOR:
                parts.append(f"{f.value} — called by the operator ({'; '.join(facts.operator_fouls)})")
            else:
                parts.append(f.value)
        return "; ".join(parts)

    def _frame_end(self, state: State, facts: ShotFacts, common: dict[str, Any], scores: dict[str, int],
                   potted_points: int, foul_points: int, fouls: tuple[Foul, ...],
                   penalty: str | None, rules: tuple[str, ...], what: str, positions: Mapping[str, XY]) -> BrasileiraDecision:
        """The black was the ball on and the frame's first score or foul happened (rule 1, snooker).
        Level scores re-spot the black: the player who did not play the last shot plays first, from
        hand (documented choice)."""
        player = state.to_play
        opp = state.opponent(player)
        potted = tuple(b for b, _ in facts.pots if b != self.cue)
        if scores[player] == scores[opp]:
            positions = {b: xy for b, xy in positions.items() if b != self.cue}
            respots = self._respot([self.last_ball], positions)
            rules = rules + _rules("1")
            text = f"{what}; scores level at {scores[player]} — the black is re-spotted and {opp} plays first, from hand"
            return BrasileiraDecision(
                fouls=fouls, penalty=penalty, next_player=opp, points_potted=potted_points, foul_points=foul_points,
                scores=scores, potted=potted, respots=respots, on_table=(self.last_ball,), next_mode=Mode.CHOICE,
                cue_in_hand=True, offender=None, frames_won=state.frames_won, rules=rules, explanation=_explain(rules, text), **common,
            )
        winner = max(scores, key=lambda p: scores[p])
        end = self._frame_won(state, winner)
        won, loser = end["frames_won"], state.opponent(winner)
        result = f"{winner} wins the frame {scores[winner]}-{scores[loser]}" + (
            f" and the match {won[winner]}-{won[loser]}" if end["match_over"] else f"; {end['next_player']} breaks frame {state.frame + 1}")
        rack = () if end["match_over"] else tuple((b, self.profile.spots[b]) for b in self.object_balls)
        return BrasileiraDecision(
            fouls=fouls, penalty=penalty, points_potted=potted_points, foul_points=foul_points, scores=scores, potted=potted,
            respots=rack, rules=rules, explanation=_explain(rules, f"{what}; {result}"), **end, **common,
        )

    def _frame_won(self, state: State, winner: str) -> dict[str, Any]:
        """The fields of a call that gives ``winner`` the frame, and the match once they have won more
        than half the frames; otherwise the next frame is set for the other breaker."""
        won = dict(state.frames_won)
        won[winner] += 1
        over = won[winner] > state.options.frames // 2
        return dict(frame_over=True, winner=winner, match_over=over, match_winner=winner if over else None,
                    next_player=None if over else state.opponent(state.breaker), on_table=() if over else self.object_balls,
                    next_mode=None if over else Mode.OPENING, cue_in_hand=True, frames_won=won)

    # ---- geometry --------------------------------------------------------------------------------

    def _snookered(self, positions: Mapping[str, XY] | None, respots: Sequence[tuple[str, XY]],
                   on_table: frozenset[str], cue_gone: bool) -> bool | None:
        """Whether the next player's cue ball has no straight path to any part of the ball on
        (rule 12, 13.4), from the positions at rest plus the re-spotted balls; None when unknown."""
        if positions is None or cue_gone:
            return None
        pos = {b: xy for b, xy in positions.items() if b in on_table or b == self.cue}
        pos.update(respots)
        on = self.ball_on(on_table)
        if on is None or self.cue not in pos or on not in pos:
            return None
        others = [xy for b, xy in pos.items() if b not in (self.cue, on)]
        return not can_hit(pos[self.cue], pos[on], others, self.radius_mm)

    def _respot(self, balls: Sequence[str], positions: Mapping[str, XY]) -> tuple[tuple[str, XY], ...]:
        """Where each ball goes back (rule 1, standard snooker), highest value first: its own spot if
        free, else the highest-valued free colour spot, else as near as possible to its own spot
        between it and the top (foot, x = length) cushion, else towards the head cushion."""
        pos = {b: xy for b, xy in positions.items() if b not in balls}
        out: list[tuple[str, XY]] = []
        for ball in sorted(set(balls), key=lambda b: -self.values[b]):
            xy = self._respot_one(ball, pos)
            pos[ball] = xy
            out.append((ball, xy))
        return tuple(out)

    def _respot_one(self, ball: str, positions: Mapping[str, XY]) -> XY:
        # the red's spot only sets the opening table (rule 2): the colours' spots, highest value first
        spots = [self.profile.spots[c] for c in reversed(self.object_balls) if c != self.first_ball]
        xy = respot_spot(self.profile.spots[ball], spots, positions, self.radius_mm, self.profile.length_mm)
        if xy is None:
            raise RulesError(f"{GAME}: no room to re-spot the {ball} on its line y={self.profile.spots[ball][1]:g} mm")
        return xy

    # ---- operator inputs -------------------------------------------------------------------------

    def _on_input(self, state: State, event: OperatorInput) -> BrasileiraDecision | None:
        """Operator inputs that do not correct a shot.

        * ``nomination`` (rule 4): an unknown ball or pocket, the cue ball or a ball not on the table
          is refused; it acts on the next shot, so returns None.
        * ``play_again`` (13.4): after a foul, the offender plays again.
        * ``concession``: the player concedes the frame.
        Inputs of other games raise :class:`RulesError`.
        """
        at = f"{event.kind} at {event.t_s:.2f}s"
        if state.match_over:
            raise RulesError(f"{GAME}: {at}: the match is over ({state.match_winner} won)")
        if isinstance(event, Nomination):
            self._check_nomination(state, event.ball, event.pocket, where=at)
            return None
        if isinstance(event, OperatorFoul):
            raise RulesError(f"{GAME}: {at}: there is no shot call to change (an operator's foul applies to the last shot judged)")
        if isinstance(event, PlayAgain):
            if state.offender is None:
                raise RulesError(f"{GAME}: {at}: play_again is only possible right after a foul, before the next shot (rule 13.4)")
            asker, offender = state.to_play, state.offender
            note = {True: "", False: " (the positions at rest show a direct path to the ball on)", None: ""}[state.snookered]
            rules = _rules("13.4")
            return BrasileiraDecision(
                t_s=event.t_s, shot=None, player=asker, next_player=offender, scores=state.scores,
                on_table=tuple(b for b in self.object_balls if b in state.on_table), next_mode=Mode.CHOICE,
                cue_in_hand=state.cue_in_hand, snookered=state.snookered, frames_won=state.frames_won, rules=rules,
                explanation=_explain(rules, f"{asker} asks {offender} to play again{note}; {offender} to play"),
            )
        if isinstance(event, Concession):
            if event.player not in state.players:
                raise RulesError(f"{GAME}: {at}: {event.player!r} is not a player of this match ({', '.join(state.players)})")
            end = self._frame_won(state, state.opponent(event.player))
            rules = _rules("1")
            text = f"{event.player} concedes; {end['winner']} wins the frame" + (" and the match" if end["match_over"] else "")
            return BrasileiraDecision(t_s=event.t_s, shot=None, player=event.player, scores=state.scores, rules=rules,
                                      explanation=_explain(rules, text), **end)
        raise RulesError(f"{GAME}: {at}: a {event.kind} input is not part of Sinuca Brasileira")

    def _ball_at(self, text: str, at: str, allowed: set[str]) -> tuple[str, str]:
        ball, sep, pocket = text.partition("@")
        if not sep or ball not in allowed or pocket not in self.pockets:
            raise RulesError(f"{GAME}: {at}: {text!r} is not ball@pocket with a ball on the table and a pocket of {', '.join(self.pockets)}")
        return (ball, pocket)


def _settled(facts: ShotFacts, doubt: Doubt, answer: str) -> ShotFacts:
    """The facts once the operator has answered one doubt."""
    if doubt.kind == "first_contact":
        return replace(facts, first_contact=None if answer == "none" else answer)
    if answer != "no":
        return facts
    if doubt.kind == "pot":
        return replace(facts, pots=tuple(p for p in facts.pots if p[0] != doubt.subject))
    if doubt.kind == "off_table":
        return replace(facts, off_table=tuple(b for b in facts.off_table if b != doubt.subject))
    if doubt.kind == "foul":
        return replace(facts, camera_fouls=tuple(f for f in facts.camera_fouls if f"{f[0].value}:{f[1]}" != doubt.subject))
    return facts
