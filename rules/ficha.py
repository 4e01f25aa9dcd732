"""Sinuca de Ficha (Brazilian bar snooker): the referee.

Rule numbers are those of "Sinuca de Ficha. Regra Oficiosa"; where it is unclear the engine follows
the project's rules decisions (``docs/rules-ficha.md``). Every call quotes its rule numbers.

From camera events (``tracking.events``)
    2.4      the break: the cue ball's first contact must be one of the breaker's balls
    4.1      a shot ends at ``at_rest`` (a shot without one is judged only once the operator accepts)
    4.2      only the last ball to drop counts (pots ordered by drop time)
    4.2.1    an own ball dropped last and no foul: the shooter continues
    4.2.2    suicide, the cue ball potted at any moment: loss of the frame (also 5.1, 6.2)
    4.2.3    an opponent ball dropped last: the turn ends (no removal)
    4.2.3.1  both last balls drop, the shooter's last: the shooter wins
    4.2.3.2  the opponent's last ball drops last (or drops at all): the opponent wins
    4.2.3.3  own fourth ball then an opponent ball: a win under 6.1 (option ``rule_4233_clear_opponent``)
    4.3      last ball covered in a pocket (proposed from the strike positions; the operator confirms)
    4.4.1    snookered with no straight path and no cushion reachable (from the strike positions;
             the operator confirms): the frame goes to the opponent
    4.4.2    snookered but a cushion reachable: a cushion before the first ball, else a foul (5.2)
    4.4.3    covered last ball potted after the cue ball touched a covering ball: loss of the frame
    4.5      a ball frozen to the cue ball (gap under 1 mm at the strike) moved: removal
    5.2      miss: no ball hit, or an opponent ball first (two first contacts in one video frame: asked)
    5.3      a ball off the table: removal, the turn passes; 5.3.1/5.3.2 re-spotting followed through
             ``ball_placed`` (and the cue ball dropping into a pocket while re-spotted, 5.3.2.1). A ball
             off the table has not dropped: the shooter's last ball leaving the table is re-spotted and
             can still be potted to win (5.3.1, 6.1)
    5.4      the cue ball jumped (``jump``)
    5.5      the cue ball touched (``ball_touched`` of the cue ball)
    5.6      an object ball touched (``ball_touched``, ``cue_contact`` on an object ball, a strike of one)
    5.7      double hit (``cue_contact`` on the cue ball during the shot)
    6.1      a frame won by legally potting one's fourth ball

A frame joined mid-way (option ``start=mid_frame``: the camera switched on during a frame)
    no break (2.4) and no rack: the balls on the table are those listed in ``start_balls``, or, when
    that is empty, exactly those the first ``shot_start``'s ``positions`` show (the camera's view is the
    truth); every other object ball counts as potted for its owner (4.2: potted balls stay down) and
    ``start_shooter`` (default the first player) plays the first shot. The breaker of the joined frame
    stays the first player (for ``next_break``); later frames are racked as usual.

From operator inputs
    5.5, 5.6, 2.4 (push shot), 4.4 (deliberately hitting an opponent ball) and the others the camera
    missed: ``operator_foul``; 5.8 misconduct: ``warning`` (1st a warning, 2nd a removal, 3rd and later
    the loss of the frame, counted per player over the whole match); 6.3 concession: ``concession``;
    the removed ball (5.2-5.7, non-offender's choice): ``removal_choice`` or the tracker's
    ``ball_removed``; answers to the engine's questions: ``answer``; corrections: ``override``.

Cannot see
    intent (4.4 "deliberately"), body contact the tracker did not report, unsporting conduct (5.8),
    the coin toss for the first break (2.4: the first player named breaks).

Players are given in play order: two players (singles) or four (doubles, teams ``p0+p2`` and
``p1+p3``, rotation p0, p1, p2, p3: A1, B1, A2, B2). The first team owns the profile's first group
unless the option ``first_group`` names the other one.

Pending questions: an event the call depends on below ``min_confidence``, a shot overlapping an
``unobserved`` interval or never coming to rest (4.1), two drops of both groups too close to order
(4.2), a missing removal, and the frame-ending calls 4.3 and 4.4.1 make the decision pending; the
``answer`` input (or a ``removal_choice`` for the removal) resumes. ``override`` fields (the shot is
judged again with them, :class:`rules.base.Referee`): ``fouls`` (comma-separated foul values, empty
for none), ``next_player``, ``winner`` (a player or team; the frame ends) and ``removal`` (the ball
the last call removed; a ``removal_choice`` of another ball after an automatic removal does the same).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from pydantic import Field

from calibration.table import TableProfile
from rules import geometry
from rules.base import (
    Decision,
    Engine,
    Frames,
    Question,
    RuleTable,
    RulesError,
    RulesOptions,
    Shot,
    joined_player,
    options_dict,
    parse_balls,
    parse_options,
    refuse_unjudgeable,
)
from tracking.events import (
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    BallTouched,
    Concession,
    CueContact,
    Event,
    Jump,
    OffTable,
    OperatorFoul,
    OperatorInput,
    Override,
    Pot,
    RemovalChoice,
    Unobserved,
)
from tracking.events import Warning as MisconductWarning

__all__ = [
    "FichaRules",
    "Options",
    "RemovalMode",
    "NextBreak",
    "Foul",
    "PRECEDENCE",
    "Balls",
    "State",
    "FichaDecision",
    "RULES",
    "FrameStart",
    "FrameResult",
    "FRAME_ENDS",
]

log = logging.getLogger(__name__)

GAME = "ficha"
FROZEN_CONTACT_S = 0.1  # 4.5: a contact with a frozen ball this soon after the strike is the push itself
COVER_NEAR_MM = 10.0  # 4.3: a ball whose edge is this close to a pocket's mouth lies "in the jaws"
COVER_TOUCH_MM = 2.0  # 4.3: an opponent ball this close (gap) touches the covered ball


class RemovalMode(StrEnum):
    """Who picks the ball a penalty removes (the rules decisions: option ``removal_choice``)."""

    NON_OFFENDER = "non_offender"  # the non-offender chooses (operator input / the tracker sees the lift)
    NEAREST_POCKET = "nearest_pocket"  # automatic: the non-offender's ball nearest a pocket


class FrameStart(StrEnum):
    """How the first frame starts (option ``start``)."""

    RACK = "rack"  # from the rack, with a break (3.1, 3.2, 2.4)
    MID_FRAME = "mid_frame"  # joined mid-way: from the balls on the table (module docstring)


class NextBreak(StrEnum):
    """Who breaks the next frame (option ``next_break``)."""

    ALTERNATE = "alternate"
    WINNER = "winner"
    LOSER = "loser"


class Options(RulesOptions):
    """The house-rule options of the rules decisions and the engine's thresholds (all recorded in the match)."""

    frames: Frames = 1  # 2.1: best of N frames, N odd
    next_break: NextBreak = NextBreak.ALTERNATE
    removal_choice: RemovalMode = RemovalMode.NON_OFFENDER
    removal_of_last_ball_wins: bool = True  # a removal that clears the non-offender's last ball wins them the frame
    rule_4233_clear_opponent: bool = False  # 4.2.3.3 read as "clear the opponent's balls to win"
    first_group: str = ""  # the first player's (team's) group; "" = the profile's first group
    min_confidence: float = Field(0.6, ge=0.0, le=1.0)  # events the call depends on below this make it pending
    frozen_gap_mm: float = Field(1.0, ge=0.0, allow_inf_nan=False)  # 4.5: a ball closer than this to the cue ball at the strike is frozen to it
    frozen_moved_mm: float = Field(2.0, ge=0.0, allow_inf_nan=False)  # 4.5: a frozen ball displaced by more than this (with no contact) moved
    pot_order_tolerance_s: float = Field(0.04, ge=0.0, allow_inf_nan=False)  # 4.2: two drops closer than this (about a video frame) are in no sure order
    # 5.2: the cue ball's contacts at most this long after its first are in no sure order. The tracker
    # times contacts between frames and gives an unsure one a low confidence, so by default only contacts
    # logged at the same instant are asked about; 0.04 (a frame) suits a log whose times are frame times
    contact_order_tolerance_s: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    start: FrameStart = FrameStart.RACK  # the first frame from the rack, or joined mid-way
    start_shooter: str = ""  # start=mid_frame: who plays the first shot ("" = the first player)
    start_balls: str = ""  # start=mid_frame: the balls on the table, comma-separated ("" = the first shot_start's positions)


class Foul(StrEnum):
    """Every foul the engine calls, with its rule number."""

    SUICIDE = "suicide"  # 4.2.2, 5.1: the cue ball potted: loss of the frame
    COVERED_BALL_STRUCK = "covered_ball_struck"  # 4.4.3: covered last ball potted off the covering ball: loss of the frame
    OFF_TABLE = "off_table"  # 5.3: a ball left the table
    MISS = "miss"  # 5.2: the cue ball hit no ball
    WRONG_BALL_FIRST = "wrong_ball_first"  # 5.2, 2.4: an opponent ball first
    NO_CUSHION_FIRST = "no_cushion_first"  # 4.4.2 (5.2): snookered, no cushion before the first ball
    FROZEN_BALL_MOVED = "frozen_ball_moved"  # 4.5: a ball frozen to the cue ball moved
    JUMP = "jump"  # 5.4: the cue ball jumped
    CUE_BALL_TOUCHED = "cue_ball_touched"  # 5.5: the cue ball touched other than with the tip
    BALL_TOUCHED = "ball_touched"  # 5.6: an object ball touched
    DOUBLE_HIT = "double_hit"  # 5.7: the cue ball hit twice
    PUSH_SHOT = "push_shot"  # 2.4 (standard fouls): push shot, operator only
    DELIBERATE_OPPONENT_BALL = "deliberate_opponent_ball"  # 4.4: deliberately hitting an opponent ball, operator only
    MISCONDUCT = "misconduct"  # 5.8: unsporting conduct (warning inputs)


# The rule numbers every call quotes, in one place: the rule of each foul, the order a decision lists
# fouls in (loss-of-frame fouls first, then by rule number), and the operator_foul rule numbers.
RULES = RuleTable(
    game=GAME,
    title="Sinuca de Ficha. Regra Oficiosa",
    fouls=MappingProxyType({
        Foul.SUICIDE: "5.1",
        Foul.COVERED_BALL_STRUCK: "4.4.3",
        Foul.MISCONDUCT: "5.8",
        Foul.PUSH_SHOT: "2.4",
        Foul.DELIBERATE_OPPONENT_BALL: "4.4",
        Foul.NO_CUSHION_FIRST: "4.4.2",
        Foul.FROZEN_BALL_MOVED: "4.5",
        Foul.MISS: "5.2",
        Foul.WRONG_BALL_FIRST: "5.2",
        Foul.OFF_TABLE: "5.3",
        Foul.JUMP: "5.4",
        Foul.CUE_BALL_TOUCHED: "5.5",
        Foul.BALL_TOUCHED: "5.6",
        Foul.DOUBLE_HIT: "5.7",
    }),
    precedence=(
        Foul.SUICIDE, Foul.COVERED_BALL_STRUCK, Foul.MISCONDUCT, Foul.PUSH_SHOT, Foul.DELIBERATE_OPPONENT_BALL,
        Foul.NO_CUSHION_FIRST, Foul.FROZEN_BALL_MOVED, Foul.MISS, Foul.WRONG_BALL_FIRST, Foul.OFF_TABLE, Foul.JUMP,
        Foul.CUE_BALL_TOUCHED, Foul.BALL_TOUCHED, Foul.DOUBLE_HIT,
    ),
    # operator_foul ``rule`` -> foul (5.8 goes through ``warning``, 6.3 through ``concession``)
    operator=MappingProxyType({
        "2.4": Foul.PUSH_SHOT, "4.4": Foul.DELIBERATE_OPPONENT_BALL, "4.4.2": Foul.NO_CUSHION_FIRST,
        "4.5": Foul.FROZEN_BALL_MOVED, "5.1": Foul.SUICIDE, "5.2": Foul.MISS, "5.3": Foul.OFF_TABLE, "5.4": Foul.JUMP,
        "5.5": Foul.CUE_BALL_TOUCHED, "5.6": Foul.BALL_TOUCHED, "5.7": Foul.DOUBLE_HIT,
    }),
)
PRECEDENCE = RULES.precedence

LOSS_OF_FRAME: frozenset[Foul] = frozenset({Foul.SUICIDE, Foul.COVERED_BALL_STRUCK})
# frame ends that are the loss of the frame for the player the call is about
LOST_BY_PLAYER = frozenset({"suicide", "covered", "snookered", "misconduct", "last_ball_on_foul", "last_balls", "opponent_last_ball"})

# Why a frame ended (``FichaDecision.frame_end``) and the rules behind it.
FRAME_ENDS: Mapping[str, str] = MappingProxyType({
    "cleared": "6.1",  # the winner legally potted their fourth ball
    "last_balls": "4.2.3.1",  # both last balls dropped: the one that dropped last wins (4.2.3.1 / 4.2.3.2)
    "opponent_last_ball": "4.2.3.2",  # the loser potted the winner's last ball
    "last_ball_on_foul": "6.1",  # the loser's own fourth ball dropped on a foul: no legal pot left to win with
    "suicide": "6.2",  # 4.2.2, 5.1
    "covered": "4.3",  # 4.3 / 4.4.3, operator-confirmed
    "snookered": "4.4.1",  # operator-confirmed
    "removal_of_last_ball": "5.2",  # a penalty removal took the winner's last ball (option removal_of_last_ball_wins)
    "misconduct": "5.8",
    "concession": "6.3",
    "override": "override",
})


# ---- state -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Balls:
    """Where every ball is: on the table, potted (stays down, ficha 4.2), removed as a penalty, or
    lifted (off the table, 5.3, or in a hand, awaiting its re-spotting). The four sets partition the
    ball set at every step."""

    on_table: frozenset[str]
    potted: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    lifted: frozenset[str] = frozenset()

    def move(self, ball: str, to: str) -> "Balls":
        sets = {k: getattr(self, k) - {ball} for k in ("on_table", "potted", "removed", "lifted")}
        sets[to] = sets[to] | {ball}
        return Balls(**sets)

    def where(self, ball: str) -> str:
        for k in ("on_table", "potted", "removed", "lifted"):
            if ball in getattr(self, k):
                return k
        raise KeyError(ball)

    def to_dict(self) -> dict[str, list[str]]:
        return {k: sorted(getattr(self, k)) for k in ("on_table", "potted", "removed", "lifted")}


@dataclass(frozen=True, slots=True)
class FrameResult:
    frame: int
    winner: str
    how: str  # a FRAME_ENDS key


@dataclass(frozen=True, slots=True)
class Forced:
    """What the operator's corrections (``override``, a ``removal_choice`` replacing an automatic
    removal) impose on a shot's call."""

    fouls: tuple[Foul, ...] | None = None
    next_player: str | None = None
    winner: str | None = None
    removal: str | None = None


@dataclass(frozen=True, slots=True)
class State:
    """A Sinuca de Ficha match between two sides (players or teams), at one moment.

    Side 0 is the first player (team), side 1 the second. ``removals_due`` lists sides whose ball a
    penalty removes, waiting for their choice; ``clearing`` is a side playing the opponent's balls under
    the 4.2.3.3 option."""

    options: Options
    players: tuple[str, ...]
    sides: tuple[str, str]
    side_players: tuple[tuple[str, ...], tuple[str, ...]]
    groups: tuple[str, str]
    group_balls: tuple[tuple[str, ...], tuple[str, ...]]
    cue: str
    frame: int
    score: tuple[int, int]
    breaker: str
    breaks: tuple[int, int]
    shooter: str
    shots_in_frame: int
    balls: Balls
    positions: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}))
    removals_due: tuple[int, ...] = ()
    clearing: int | None = None
    warnings: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    history: tuple[FrameResult, ...] = ()
    match_over: bool = False
    match_winner: str | None = None
    joined: bool = False  # this frame was joined mid-way (option start=mid_frame): no break, no rack
    start_unseen: bool = False  # joined, and the balls on the table are read from the first strike's positions

    @property
    def at_break(self) -> bool:
        """The next shot is the frame's break (2.4): nothing played yet and the frame not joined mid-way."""
        return self.shots_in_frame == 0 and not self.joined

    def side_of(self, player: str) -> int:
        for i, members in enumerate(self.side_players):
            if player in members:
                return i
        raise RulesError(f"ficha: {player!r} is not a player of this match ({', '.join(self.players)})")

    def owner(self, ball: str) -> int | None:
        """The side whose group ``ball`` belongs to (None for the cue ball)."""
        for i, group in enumerate(self.group_balls):
            if ball in group:
                return i
        return None

    def left(self, side: int, balls: Balls | None = None) -> tuple[str, ...]:
        """The side's balls in play: on the table, or off it waiting to be re-spotted (5.3.1: a ball
        that left the table has not dropped)."""
        b = balls or self.balls
        return tuple(x for x in self.group_balls[side] if x in b.on_table or x in b.lifted)

    def next_in_rotation(self, player: str) -> str:
        return self.players[(self.players.index(player) + 1) % len(self.players)]

    @property
    def record(self) -> dict[str, Any]:
        """The match record: players, groups, options in force, frames."""
        return {
            "game": GAME,
            "players": list(self.players),
            "sides": {s: g for s, g in zip(self.sides, self.groups)},
            "options": options_dict(self.options),
            "frames": [dataclasses.asdict(f) for f in self.history],
            "score": dict(zip(self.sides, self.score)),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FichaDecision(Decision):
    """A ficha call. Beyond the common fields: the frame, the score (frames per side, after this call),
    the first contact, the balls potted in drop order, the balls that left the table or were put back,
    the balls a penalty removed, the sides still owing a removal (their choice), why the turn or the
    frame ended, every ball's place after the call, and ``prior``: calls on what happened between the
    previous shot and this one (a ball touched while aiming, an operator's foul), applied first."""

    frame: int = 0
    score: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    first_contact: str | None = None
    potted: tuple[str, ...] = ()
    left_table: tuple[str, ...] = ()
    respotted: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    removals_due: tuple[str, ...] = ()
    turn_end: str | None = None  # "no_pot" | "opponent_ball_last" (4.2.3) | "foul"
    frame_end: str | None = None  # a FRAME_ENDS key
    balls: Balls | None = None
    clearing: str | None = None
    warnings: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    prior: tuple["FichaDecision", ...] = ()
    # what the call was made from (not part of the report)
    source_shot: Shot | None = field(default=None, repr=False, compare=False)
    positions: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    @property
    def replaces_last(self) -> bool:
        """The call replaces the last call (an override or a correction): :attr:`amends`."""
        return self.amends

    @property
    def answers(self) -> Mapping[str, str]:
        """The operator's answers the call was made with."""
        return self.source_shot.answers if self.source_shot is not None else _mp()

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON values: what the call was made from (the shot, positions) is left out."""
        d = Decision.to_dict(replace(self, source_shot=None, positions=_mp(), prior=()))
        for k in ("source_shot", "positions"):
            d.pop(k, None)
        d["replaces_last"] = self.amends
        d["balls"] = self.balls.to_dict() if self.balls is not None else None
        d["prior"] = [p.to_dict() for p in self.prior]
        return d


# ---- helpers ------------------------------------------------------------------------------------


def _rule_key(num: str) -> tuple[int, ...]:
    parts = num.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else (99,)


def _rules(*nums: str) -> tuple[str, ...]:
    """Rule numbers, each once, in rulebook order."""
    return tuple(sorted({n for n in nums if n}, key=_rule_key))


def _mp(d: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the camera (and the answers) say happened in a shot."""

    first: str | None
    first_t: float | None
    cushion_first: bool
    pots: tuple[Pot, ...]
    off: tuple[str, ...]
    jumped: bool
    double_hit: bool
    touched: tuple[str, ...]
    cue_contacts: tuple[str, ...]  # every ball the cue ball touched, with times below
    cue_contact_t: tuple[float, ...]


class FichaRules(Engine):
    """The Sinuca de Ficha referee (see the module docstring for the rules it covers)."""

    name = GAME
    rules = RULES
    inputs_wait_for_the_shot = True  # 6.3, 5.8 said while the balls roll: the shot is judged first

    def __init__(self, profile: TableProfile):
        self.profile = profile
        self.radius_mm = profile.ball_radius_mm
        if len(profile.groups) != 2 or profile.cue_ball is None:
            raise RulesError(
                f"ficha: table profile {profile.name!r} must have a cue ball and exactly two groups of balls "
                f"(it has groups {', '.join(profile.groups) or 'none'})"
            )
        self.ball_ids = frozenset(profile.ball_ids)
        self.pocket_ids = frozenset(p.id for p in profile.pockets)
        self.cushion_ids = frozenset(c.id for c in profile.cushions)

    # ---- match setup ---------------------------------------------------------------------------

    def initial_state(self, players: Sequence[str], options: Mapping[str, Any] | None = None) -> State:
        """A new match. ``players`` in play order: 2 (singles) or 4 (doubles, teams p0+p2 and p1+p3).
        The first player breaks the first frame (2.4: decided off the table)."""
        opts = parse_ficha_options(options)
        players = tuple(players)
        if len(players) not in (2, 4) or len(set(players)) != len(players) or not all(isinstance(p, str) and p for p in players):
            raise RulesError(f"ficha: a match needs 2 players (singles) or 4 (doubles), each named once; got {list(players)}")
        if any("+" in p for p in players):
            raise RulesError("ficha: player names may not contain '+' (it joins the names of a doubles team)")
        if len(players) == 2:
            side_players: tuple[tuple[str, ...], tuple[str, ...]] = ((players[0],), (players[1],))
        else:
            side_players = ((players[0], players[2]), (players[1], players[3]))
        sides = ("+".join(side_players[0]), "+".join(side_players[1]))
        groups = tuple(self.profile.groups)
        if opts.first_group:
            if opts.first_group not in groups:
                raise RulesError(f"ficha: option first_group={opts.first_group!r} is not a group of the table ({', '.join(groups)})")
            if opts.first_group != groups[0]:
                groups = (groups[1], groups[0])
        group_balls = (self.profile.group(groups[0]), self.profile.group(groups[1]))
        breaker = players[0]
        state = State(
            options=opts, players=players, sides=sides, side_players=side_players, groups=(groups[0], groups[1]),
            group_balls=group_balls, cue=self.profile.cue_ball, frame=1, score=(0, 0), breaker=breaker,
            breaks=(1, 0), shooter=breaker, shots_in_frame=0, balls=Balls(on_table=self.ball_ids),
        )
        shooter = joined_player(GAME, opts, players, "start_shooter")
        if shooter is None:
            return state
        state = replace(state, shooter=shooter, joined=True, start_unseen=not opts.start_balls)
        if opts.start_balls:
            names = parse_balls(GAME, "start_balls", opts.start_balls, sorted(self.ball_ids), self.profile.name)
            state = replace(state, balls=self._start_balls(state, names, "option start_balls"))
        return state

    def _start_balls(self, s: State, on_table: Sequence[str], source: str) -> Balls:
        """The balls of a frame joined mid-way: ``on_table`` are there, every other object ball is
        potted (4.2). The cue ball and at least one ball of each group must be on the table, else the
        frame could not be going on (6.1, 4.2.2)."""
        on = frozenset(on_table)
        if s.cue not in on:
            raise RulesError(f"ficha: a frame joined mid-way needs the cue ball {s.cue!r} on the table; {source} has {', '.join(sorted(on)) or 'no ball'}")
        for side in (0, 1):
            if not on & set(s.group_balls[side]):
                raise RulesError(f"ficha: a frame joined mid-way needs at least one of {s.sides[side]}'s balls "
                                 f"({', '.join(s.group_balls[side])}) on the table (else the frame is over, 6.1); {source} has none")
        return Balls(on_table=on, potted=self.ball_ids - on)

    # ---- the engine interface -----------------------------------------------------------------

    def over(self, state: State) -> tuple[str, str | None] | None:
        return ("match", state.match_winner) if state.match_over else None

    def _judge(self, state: State, shot: Shot) -> FichaDecision:
        """The call on one shot (pure), with the operator's answers and corrections. Raises RulesError
        for an impossible log."""
        return self._call(state, shot, shot.answers, self._forced(state, shot))

    def _advance(self, state: State, decision: FichaDecision) -> State:
        s = state
        for p in decision.prior:
            s = self._apply(s, p, count_shot=False)
        return self._apply(s, decision, count_shot=decision.source_shot is not None)

    def corrects(self, state: State, last: Decision, event: OperatorInput) -> bool:
        """An override; or a removal choice of another ball than the one the last call removed on its
        own (option removal_choice=nearest_pocket): the referee's choice replaces it."""
        if isinstance(event, RemovalChoice):
            return (not state.removals_due and bool(getattr(last, "removed", ())) and event.ball in self.ball_ids
                    and state.balls.where(event.ball) != "removed")
        return super().corrects(state, last, event)

    def answer_of(self, question: Question, event: OperatorInput) -> str | None:
        """A removal choice answers the question which ball the penalty removed (5.2)."""
        if isinstance(event, RemovalChoice) and question.topic == "removal":
            return event.ball
        return super().answer_of(question, event)

    def _on_input(self, state: State, event: OperatorInput) -> FichaDecision | None:
        """Inputs that act at once: concession (6.3), warning (5.8). A removal choice and an operator
        foul are checked here and applied with the next shot (None)."""
        acting = isinstance(event, (Concession, MisconductWarning))
        if state.match_over:
            if acting:
                raise RulesError(f"ficha: {event.kind} at {event.t_s:.2f}s comes after the end of the match")
            return None
        if isinstance(event, Concession):
            return self._concession(state, event)
        if isinstance(event, MisconductWarning):
            return self._warning(state, event)
        if isinstance(event, RemovalChoice):
            if event.ball in self.ball_ids and state.balls.where(event.ball) == "removed":
                return None  # already applied (the tracker saw the lift first)
            self._check_removal_choice(state, event.ball)
            return None
        if isinstance(event, OperatorFoul):
            state.side_of(event.player)
            RULES.foul_named(event.rule)
        return None

    def _forced(self, state: State, shot: Shot) -> Forced:
        """What the operator's corrections of the shot's call impose, in the order given."""
        f = Forced()
        for e in shot.corrections:
            if isinstance(e, RemovalChoice):
                f = replace(f, removal=e.ball)
                continue
            assert isinstance(e, Override)
            value = e.value.strip()
            if e.field == "fouls":
                try:
                    f = replace(f, fouls=tuple(Foul(v.strip()) for v in value.split(",") if v.strip() and v.strip() != "none"))
                except ValueError:
                    raise RulesError(f"ficha: override fouls={value!r}: the fouls are {', '.join(x.value for x in Foul)}") from None
            elif e.field == "next_player":
                state.side_of(value)
                f = replace(f, next_player=value)
            elif e.field == "winner":
                f = replace(f, winner=value if value in state.sides else state.sides[state.side_of(value)])
            elif e.field == "removal":
                if value not in self.ball_ids:
                    raise RulesError(f"ficha: override removal={value!r} is not a ball of the table")
                f = replace(f, removal=value)
            else:
                raise RulesError(f"ficha: override field {e.field!r} is not one the engine accepts (fouls, next_player, winner, removal)")
        return f

    # ---- judging a shot -------------------------------------------------------------------------

    def _call(self, state: State, shot: Shot, answers: Mapping[str, str], forced: Forced) -> FichaDecision:
        self._check_ids(shot)
        prep = self._before(state, shot, answers)
        if isinstance(prep, FichaDecision):
            return prep
        priors, s, respotted, removed_before = prep
        if s.match_over:  # a foul while aiming ended the match: the shot comes after it
            refuse_unjudgeable(GAME, shot, over="match", winner=s.match_winner)
        d = self._shot(s, shot, answers, forced, respotted, removed_before)
        d = replace(d, prior=tuple(priors), source_shot=shot)
        if priors and d.pending is None:
            first = " / ".join(p.explanation for p in priors)
            d = replace(d, explanation=f"before the shot: {first} || then {d.player}: {d.explanation}")
        if d.pending is None:
            q = self._unobserved_question(shot, answers, d)
            if q is not None:
                return self._pending(state, shot, q)
        return d

    def _pending(self, state: State, shot: Shot, q: Question) -> FichaDecision:
        return FichaDecision(
            t_s=shot.t_s, shot=shot.index, player=state.shooter, pending=q, frame=state.frame,
            score=_mp(dict(zip(state.sides, state.score))), source_shot=shot,
            explanation=f"ficha: pending - {q.text}", balls=state.balls, warnings=state.warnings,
        )

    def _check_ids(self, shot: Shot) -> None:
        for e in shot.events + shot.before:
            for attr in ("ball", "a", "b"):
                v = getattr(e, attr, None)
                if isinstance(e, OperatorInput) and not isinstance(e, RemovalChoice):
                    continue
                if v is not None and v not in self.ball_ids:
                    raise RulesError(f"ficha: shot {shot.index}: {e.kind} at {e.t_s:.2f}s names ball {v!r}, which table {self.profile.name!r} does not have ({', '.join(sorted(self.ball_ids))})")
            if isinstance(e, Pot) and e.pocket not in self.pocket_ids:
                raise RulesError(f"ficha: shot {shot.index}: pot at {e.t_s:.2f}s names pocket {e.pocket!r}; the pockets are {', '.join(sorted(self.pocket_ids))}")
            if isinstance(e, BallCushion) and e.cushion not in self.cushion_ids:
                raise RulesError(f"ficha: shot {shot.index}: ball_cushion at {e.t_s:.2f}s names cushion {e.cushion!r}; the cushions are {', '.join(sorted(self.cushion_ids))}")
            for key in getattr(e, "positions", {}) or {}:
                if key not in self.ball_ids:
                    raise RulesError(f"ficha: shot {shot.index}: {e.kind} at {e.t_s:.2f}s has a position for unknown ball {key!r}")

    def _before(self, state: State, shot: Shot, answers: Mapping[str, str]):
        """Apply what happened between the previous shot and this strike: re-spotting (5.3.1), the
        removal (5.2-5.7), fouls while aiming (5.5, 5.6, operator fouls). Returns (priors, state,
        respotted, removed) or a pending decision."""
        s = state
        priors: list[FichaDecision] = []
        removed: list[str] = []
        start_t = shot.t_s
        if s.start_unseen:  # a frame joined mid-way: the camera's first view says which balls are on the table
            if not shot.start_positions:
                raise RulesError(f"ficha: shot {shot.index} at {shot.t_s:.2f}s: a frame joined mid-way (start=mid_frame) reads the "
                                 "balls on the table from the first shot_start's positions, and it has none; give option start_balls")
            s = replace(s, balls=self._start_balls(s, list(shot.start_positions), f"shot {shot.index}'s shot_start positions"),
                        start_unseen=False)
            state = replace(state, start_unseen=False, balls=s.balls)
        racking = s.at_break  # hand events before a break are the rack (3.1, 3.2)
        open_foul: list[Any] = []  # [offender, fouls, texts, t_s]

        def flush() -> None:
            nonlocal s, racking
            if open_foul:
                offender, fouls, texts, t_s = open_foul
                d = self._foul_call(s, offender, set(fouls), "; ".join(texts), t_s, shot.index, s.positions)
                priors.append(d)
                s = self._apply(s, d, count_shot=False)
                open_foul.clear()
                if s.at_break:
                    racking = True

        def add_foul(offender: str, foul: Foul, text: str, t_s: float) -> None:
            if open_foul and open_foul[0] != offender:
                flush()
            if racking:
                return
            if not open_foul:
                open_foul.extend([offender, [], [], t_s])
            open_foul[1].append(foul)
            open_foul[2].append(text)

        items = sorted(shot.before, key=lambda e: e.t_s)
        for i, e in enumerate(items):
            if isinstance(e, OperatorFoul):
                if e.t_s >= start_t:
                    continue  # said during the shot: part of the shot's call
                if racking:
                    log.info("ficha: operator_foul at %.2fs before a break ignored (use override to correct a frame's last call)", e.t_s)
                    continue
                s.side_of(e.player)
                foul = RULES.foul_named(e.rule)
                add_foul(e.player, foul, f"{foul.value} called by the operator (ficha {e.rule})" + (f": {e.note}" if e.note else ""), e.t_s)
                continue
            if isinstance(e, BallTouched):
                if racking:
                    continue
                if e.confidence < s.options.min_confidence:
                    key = Question.key(shot.index, "touched_before", i, e.ball)
                    if key not in answers:
                        q = Question(key, f"ficha 5.6: was {e.ball} touched before shot {shot.index} (at {e.t_s:.2f}s)?", ("yes", "no"),
                                     Question.seen(e.confidence))
                        return self._pending(state, shot, q)
                    if answers[key] == "no":
                        continue
                foul = Foul.CUE_BALL_TOUCHED if e.ball == s.cue else Foul.BALL_TOUCHED
                add_foul(s.shooter, foul, f"{foul.value} - {e.ball} touched between shots", e.t_s)
                continue
            if not isinstance(e, (BallRemoved, RemovalChoice, BallPlaced, Pot)):
                continue
            flush()
            if racking:
                continue
            if isinstance(e, (BallRemoved, RemovalChoice)):
                where = s.balls.where(e.ball)
                owner = s.owner(e.ball)
                if owner is not None and owner in s.removals_due and where in ("on_table", "lifted"):
                    s, extra = self._remove(s, owner, e.ball, e.t_s)
                    if extra is None:
                        removed.append(e.ball)
                    else:  # it took the side's last ball: the frame is theirs, the next one is racked
                        priors.append(extra)
                        s = self._apply(s, extra, count_shot=False)
                        racking, removed = True, []
                elif isinstance(e, RemovalChoice):
                    log.debug("ficha: removal_choice of %s with no removal owed (already acted on by on_input)", e.ball)
                elif where == "on_table":
                    s = replace(s, balls=s.balls.move(e.ball, "lifted"))  # lifted by hand: it comes back
                else:
                    log.debug("ficha: ball_removed of %s, already %s", e.ball, where)
            elif isinstance(e, BallPlaced):
                where = s.balls.where(e.ball)
                if where in ("potted", "removed"):
                    # a potted (4.2) or removed (5.2) ball stays off: put back by hand, the referee says
                    # whether the record was wrong (it is back in play) or the ball must come off again
                    key = Question.key(shot.index, "placed_back", i, e.ball)
                    if key not in answers:
                        q = Question(key, f"ficha 4.2, 5.2: {e.ball} was {where} and is put back on the table at {e.t_s:.2f}s: "
                                          "is it back in play (the record was wrong)?", ("yes", "no"), "no")
                        return self._pending(state, shot, q)
                    if answers[key] == "no":
                        continue
                s = replace(s, balls=s.balls.move(e.ball, "on_table"))
            elif isinstance(e, Pot):
                where = s.balls.where(e.ball)
                if where in ("potted", "removed"):
                    raise RulesError(f"ficha: pot at {e.t_s:.2f}s between shots of {e.ball}, which is already {where}")
                # 5.3.2.1: a ball dropping while the referee re-spots is returned and the procedure repeated
                s = replace(s, balls=s.balls.move(e.ball, "lifted"))
        flush()
        if s.match_over:
            return priors, s, (), tuple(removed)
        # 5.3.1: balls off the table are back on it by the strike
        respotted = tuple(sorted(s.balls.lifted)) if not s.at_break else ()
        if s.at_break:
            s = replace(s, balls=Balls(on_table=self.ball_ids), removals_due=())
        else:
            b = s.balls
            for ball in respotted:
                b = b.move(ball, "on_table")
            s = replace(s, balls=b)
        # the removal still owed: the non-offender's choice, asked now
        k = 0
        while s.removals_due:
            side = s.removals_due[0]
            key = Question.key(shot.index, "removal", *([k + 1] if k else []))
            left = s.left(side)
            if key not in answers:
                pos = shot.start_positions
                missing = [b for b in left if pos and b not in pos]
                options = tuple(missing + [b for b in left if b not in missing])
                hint = (f" ({missing[0]} is not on the table at the strike)" if len(missing) == 1 else
                        "" if missing else f" (all are on the table at the strike: unless answered, {options[0]} is taken)")
                q = Question(key, f"ficha 5.2: which of {s.sides[side]}'s balls was removed as the penalty?{hint}", options,
                             options[0])
                return self._pending(state, shot, q)
            ball = answers[key]
            if ball not in left:
                raise RulesError(f"ficha: the removed ball must be one of {s.sides[side]}'s balls on the table ({', '.join(left)}), not {ball!r}")
            s, extra = self._remove(s, side, ball, shot.t_s)
            if extra is None:
                removed.append(ball)
            else:  # it took the side's last ball: the frame is theirs, the next one is racked
                priors.append(extra)
                s = self._apply(s, extra, count_shot=False)
                if s.match_over:
                    return priors, s, (), ()
                respotted, removed = (), []
            k += 1
        return priors, s, respotted, tuple(removed)

    def _shot(self, s: State, shot: Shot, answers: Mapping[str, str], forced: Forced,
              respotted: tuple[str, ...], removed_before: tuple[str, ...]) -> FichaDecision:
        """The call on the shot itself, from the table at the strike: the pre-shot questions (4.4.1,
        4.3), the facts (with the answers), every foul, then the frame-ending cases in order (a loss of
        the frame, both last balls, a group emptied) and otherwise the turn (4.2.1, 4.2.3, removal)."""
        opt = s.options
        side = s.side_of(s.shooter)
        opp = 1 - side
        cue = s.cue
        pos = shot.start_positions
        if shot.struck not in s.balls.on_table:
            raise RulesError(f"ficha: shot {shot.index} at {shot.t_s:.2f}s strikes {shot.struck}, which is not on the table ({s.balls.where(shot.struck)})")
        target_side = opp if s.clearing == side else side
        targets = s.left(target_side)
        own_start = s.left(side)
        opp_start = s.left(opp)
        rules_used: list[str] = []
        if s.at_break:
            rules_used.append("2.4")

        def pend(q: Question) -> FichaDecision:
            return self._pending(s, shot, q)

        # 4.4.1 / 4.4.2: snookered? from the positions at the strike
        cushion_required = False
        present = [b for b in targets if b in pos]
        if cue in pos and present and forced.fouls is None:
            others = {k: v for k, v in pos.items() if k != cue}
            direct = any(
                geometry.can_hit(pos[cue], pos[b], [v for k, v in others.items() if k != b], self.radius_mm, opt.frozen_gap_mm)
                for b in present
            )
            if not direct:
                if geometry.can_reach_cushion(pos[cue], others.values(), self.profile):
                    cushion_required = True
                else:
                    key = Question.key(shot.index, "4.4.1")
                    if key not in answers:
                        return pend(Question(key, f"ficha 4.4.1: the cue ball has no straight path to any of {s.sides[target_side]}'s balls "
                                                  f"and no cushion within reach: frame to {s.sides[opp]}?", ("yes", "no"), "yes"))
                    if answers[key] == "yes":
                        return self._frame_call(s, shot.t_s, shot.index, s.shooter, opp, "snookered",
                                                f"{s.sides[side]} snookered with no path to a ball or a cushion (confirmed)",
                                                ("4.4.1",), s.balls, pos)
        # 4.3 / 4.4.3: the last ball covered in a pocket
        covered: tuple[str, str, tuple[str, ...]] | None = None
        if len(own_start) == 1 and s.clearing != side and own_start[0] in pos and cue in pos:
            found = geometry.covered_in_pocket(own_start[0], [b for b in opp_start if b in pos], pos, cue, self.profile,
                                               s.options.frozen_gap_mm, COVER_NEAR_MM, COVER_TOUCH_MM)
            covered = (own_start[0], *found) if found is not None else None
            if covered is not None and forced.fouls is None:
                key = Question.key(shot.index, "4.3")
                if key not in answers:
                    return pend(Question(key, f"ficha 4.3: {s.sides[side]}'s last ball {covered[0]} is covered in pocket {covered[1]} "
                                              f"by {', '.join(covered[2])}: frame to {s.sides[opp]}?", ("yes", "no"), "yes"))
                if answers[key] == "yes":
                    return self._frame_call(s, shot.t_s, shot.index, s.shooter, opp, "covered",
                                            f"{s.sides[side]}'s last ball {covered[0]} covered in {covered[1]} by {', '.join(covered[2])} (confirmed)",
                                            ("4.3", "4.4.3"), s.balls, pos)
        facts = self._facts(s, shot, answers, cushion_required, s.group_balls[target_side])
        if isinstance(facts, Question):
            return pend(facts)

        # ---- fouls ----
        fouls: set[Foul] = set()
        texts: list[str] = []
        object_pots = [p for p in facts.pots if p.ball != cue]
        if any(p.ball == cue for p in facts.pots):
            fouls.add(Foul.SUICIDE)
            texts.append("suicide - the cue ball was potted")
        if covered is not None:
            own = covered[0]
            own_pot = next((p for p in object_pots if p.ball == own), None)
            if own_pot is not None and any(b in covered[2] and t < own_pot.t_s for b, t in zip(facts.cue_contacts, facts.cue_contact_t)):
                fouls.add(Foul.COVERED_BALL_STRUCK)
                texts.append(f"covered_ball_struck - {own} potted off the covering ball")
        if facts.first is None:
            fouls.add(Foul.MISS)
            texts.append("miss - the cue ball hit no ball")
        elif facts.first not in s.group_balls[target_side]:
            fouls.add(Foul.WRONG_BALL_FIRST)
            texts.append(f"wrong_ball_first - the cue ball hit {facts.first} first")
        elif cushion_required and not facts.cushion_first:
            fouls.add(Foul.NO_CUSHION_FIRST)
            texts.append(f"no_cushion_first - snookered, the cue ball hit {facts.first} before any cushion")
        if shot.struck != cue:
            fouls.add(Foul.BALL_TOUCHED)
            texts.append(f"ball_touched - the cue struck {shot.struck}")
        if facts.off:
            fouls.add(Foul.OFF_TABLE)
            texts.append(f"off_table - {', '.join(facts.off)} left the table")
        moved = self._frozen_moved(s, shot)
        if moved:
            fouls.add(Foul.FROZEN_BALL_MOVED)
            texts.append(f"frozen_ball_moved - {', '.join(moved)} (frozen to the cue ball) moved")
        if facts.jumped:
            fouls.add(Foul.JUMP)
            texts.append("jump - the cue ball jumped")
        if cue in facts.touched:
            fouls.add(Foul.CUE_BALL_TOUCHED)
            texts.append("cue_ball_touched - the cue ball was touched")
        obj_touched = [b for b in facts.touched if b != cue]
        if obj_touched:
            fouls.add(Foul.BALL_TOUCHED)
            texts.append(f"ball_touched - {', '.join(obj_touched)} touched")
        if facts.double_hit:
            fouls.add(Foul.DOUBLE_HIT)
            texts.append("double_hit - the cue hit the cue ball twice")
        end_t = shot.end.t_s if shot.end is not None else math.inf
        for e in shot.inputs(OperatorFoul):
            if shot.t_s <= e.t_s <= end_t:
                if s.side_of(e.player) != side:
                    raise RulesError(
                        f"ficha: operator_foul at {e.t_s:.2f}s names {e.player}, who is not at the table during shot {shot.index}; "
                        "call it after the shot"
                    )
                foul = RULES.foul_named(e.rule)
                fouls.add(foul)
                texts.append(f"{foul.value} called by the operator (ficha {e.rule})" + (f": {e.note}" if e.note else ""))
        if forced.fouls is not None:
            fouls = set(forced.fouls)
            texts = [f"{', '.join(f.value for f in RULES.ordered(fouls)) or 'no foul'} (override)"]
        ordered = RULES.ordered(fouls)
        rules_used += [RULES.rule_of(f) for f in ordered]
        if Foul.NO_CUSHION_FIRST in fouls:
            rules_used.append("5.2")
        if Foul.SUICIDE in fouls:
            rules_used.insert(0, "4.2.2")

        # 4.2: the last two drops too close to order, of different groups, on a shot without a foul: ask
        object_pots = list(object_pots)
        if not fouls and len(object_pots) >= 2:
            near = [p for p in object_pots if object_pots[-1].t_s - p.t_s < opt.pot_order_tolerance_s][::-1]  # the log's last first
            if len({s.owner(p.ball) for p in near}) > 1:
                key = Question.key(shot.index, "last_pot")
                if key not in answers:
                    names = [p.ball for p in near]
                    return pend(Question(key, f"ficha 4.2: which dropped last, {' or '.join(reversed(names))}?", tuple(names), names[0]))
                last_pot = next(p for p in near if p.ball == answers[key])
                object_pots = [p for p in object_pots if p is not last_pot] + [last_pot]

        # ---- the balls after the shot ----
        balls = s.balls
        for p in facts.pots:  # the cue ball potted with no suicide called (an override) comes back (5.3.1)
            balls = balls.move(p.ball, "lifted" if p.ball == cue and Foul.SUICIDE not in fouls else "potted")
        for b in facts.off:
            balls = balls.move(b, "lifted")
        positions = shot.end_positions if shot.end is not None and shot.end_positions else pos
        own_after = s.left(side, balls)
        opp_after = s.left(opp, balls)
        last = object_pots[-1].ball if object_pots else None
        potted = tuple(p.ball for p in (facts.pots if fouls else object_pots))  # drop order (as answered)
        pot_text = ""
        if object_pots:
            rules_used.insert(0, "4.2")
            pot_text = f"potted {', '.join(p.ball for p in object_pots)}" + (f" ({last} last)" if len(object_pots) > 1 else "")

        common = dict(
            t_s=shot.t_s, shot=shot.index, player=s.shooter, fouls=ordered, first_contact=facts.first, potted=potted,
            left_table=facts.off, respotted=respotted, positions=_mp(positions),
        )
        if not fouls:
            texts.insert(0, f"legal shot, first contact {facts.first}")
        pre = []
        if removed_before:
            pre.append(f"{', '.join(removed_before)} removed (the penalty)")
        if respotted:
            pre.append(f"{', '.join(respotted)} back on the table")
            rules_used.append("5.3.1")
        body = "; ".join(pre + texts + ([pot_text] if pot_text else []))

        def end(winner_side: int, how: str, text: str, *rules: str) -> FichaDecision:
            return self._frame_call(s, shot.t_s, shot.index, s.shooter, winner_side, how, text, tuple(rules_used) + rules,
                                    balls, positions, common=common, removed=removed_before)

        if forced.winner is not None:
            return end(s.sides.index(forced.winner), "override", body or "frame awarded by the operator")
        # ---- the frame-ending cases ----
        loss = fouls & LOSS_OF_FRAME
        if loss:
            return end(opp, "suicide", body, "6.2") if Foul.SUICIDE in loss else end(opp, "covered", body)
        if s.clearing == side:
            if not opp_after and fouls:
                return end(opp, "opponent_last_ball", body, "4.2.3.2")
            if not opp_after:
                return end(side, "cleared", body + "; the opponent's balls cleared under 4.2.3.3", "4.2.3.3", "6.1")
        else:
            own_emptied = bool(own_start) and not own_after
            opp_emptied = bool(opp_start) and not opp_after
            if own_emptied and opp_emptied:
                if not fouls and last in s.group_balls[side]:
                    return end(side, "last_balls", body + f"; both last balls dropped, {s.sides[side]}'s last", "4.2.3.1")
                if fouls:  # 4.2.3.1 wants a legal shot: the shooter's fourth ball does not count
                    return end(opp, "last_balls", body + "; both last balls dropped on a foul", "4.2.3.1", "4.2.3.2")
                return end(opp, "last_balls", body + f"; both last balls dropped, {s.sides[opp]}'s last", "4.2.3.2")
            if opp_emptied:
                return end(opp, "opponent_last_ball", body + f"; {s.sides[opp]}'s last ball went down", "4.2.3.2")
            if own_emptied and fouls:
                return end(opp, "last_ball_on_foul",
                           body + f"; {s.sides[side]}'s fourth ball dropped on a foul and cannot be potted legally", "6.1")
            if own_emptied and not (opt.rule_4233_clear_opponent and last in s.group_balls[opp]):
                extra = ("4.2.3.3", "6.1") if last in s.group_balls[opp] else ("6.1",)
                return end(side, "cleared", body + f"; {s.sides[side]} potted their fourth ball", *extra)
            if own_emptied:  # option rule_4233_clear_opponent: the shooter now clears the opponent's balls
                rs = _rules(*rules_used, "4.2.3.3", "4.2.1")
                return FichaDecision(
                    **common, next_player=forced.next_player or s.shooter, turn_end=None, balls=balls, removed=removed_before,
                    clearing=s.sides[side], frame=s.frame, score=_mp(dict(zip(s.sides, s.score))), warnings=s.warnings,
                    removals_due=tuple(s.sides[x] for x in s.removals_due), rules=rs,
                    explanation=f"ficha {', '.join(rs)}: {body}; {s.sides[side]} cleared their balls with {last} last and now "
                                f"clears {s.sides[opp]}'s (option rule_4233_clear_opponent); {s.shooter} continues",
                )
        # ---- the frame goes on ----
        if fouls:
            d = self._foul_call(s, s.shooter, fouls, body, shot.t_s, shot.index, positions, balls=balls, common=common,
                                rules_used=tuple(rules_used), forced=forced, removed_before=removed_before)
            return d
        clearing = s.sides[s.clearing] if s.clearing is not None else None
        if last is not None and last in s.group_balls[target_side]:
            rules_used.append("4.2.1")
            nxt, turn_end, tail = s.shooter, None, f"{s.shooter} continues"
        elif last is not None:
            rules_used.append("4.2.3")
            nxt = s.next_in_rotation(s.shooter)
            turn_end, tail = "opponent_ball_last", f"{last} (an opponent ball) dropped last: the turn ends, no penalty; {nxt} to play"
        else:
            nxt = s.next_in_rotation(s.shooter)
            turn_end, tail = "no_pot", f"no pot; {nxt} to play"
        if forced.next_player is not None:
            nxt = forced.next_player
            tail += f" (override: {nxt} to play)"
        if not rules_used:
            rules_used.append("4.2")
        rs = _rules(*rules_used)
        return FichaDecision(
            **common, next_player=nxt, turn_end=turn_end, balls=balls, removed=removed_before, clearing=clearing,
            frame=s.frame, score=_mp(dict(zip(s.sides, s.score))), warnings=s.warnings,
            removals_due=tuple(s.sides[x] for x in s.removals_due), rules=rs,
            explanation=f"ficha {', '.join(rs)}: {'; '.join(x for x in (body, tail) if x)}",
        )

    # ---- facts --------------------------------------------------------------------------------

    def _facts(self, s: State, shot: Shot, answers: Mapping[str, str], cushion_required: bool,
               legal_first: Sequence[str]) -> _Facts | Question:
        cue = s.cue
        minc = s.options.min_confidence
        events = shot.events[1:]
        contacts = [e for e in events if isinstance(e, BallBall) and cue in (e.a, e.b)]
        contact_balls = [e.b if e.a == cue else e.a for e in contacts]
        first: str | None = contact_balls[0] if contacts else None
        first_t: float | None = contacts[0].t_s if contacts else None
        asked: tuple[str, tuple[str, ...]] | None = None  # the question's text and options
        if contacts and contacts[0].confidence < minc:
            alt = next((b for b in contact_balls if b != first), "none")
            asked = (f"ficha 5.2: first contact {first} or {alt}?", (first, alt) if alt == "none" else (first, alt, "none"))
        else:
            # balls the cue ball touched at the instant of its first contact (or within the tolerance): when
            # they are a legal first ball and an illegal one, the log's order is no evidence of which came first (5.2)
            tol = s.options.contact_order_tolerance_s
            near = list(dict.fromkeys(b for e, b in zip(contacts, contact_balls) if e.t_s - contacts[0].t_s <= tol))
            if len({b in legal_first for b in near}) > 1:
                when = f"within {tol * 1000:.0f} ms" if tol > 0 else "at the same instant"
                asked = (f"ficha 5.2: which ball did the cue ball hit first, {' or '.join(near)} (touched {when})?", tuple(near))
        if asked is not None:
            key = Question.key(shot.index, "first_contact")
            if key not in answers:
                return Question(key, asked[0], asked[1], first)
            first = None if answers[key] == "none" else answers[key]
            if first is None:
                first_t = None
            else:
                first_t = next((e.t_s for e, b in zip(contacts, contact_balls) if b == first), first_t)

        def kept(e: Event, i: int, text: str) -> bool | Question:
            if e.confidence >= minc:
                return True
            key = Question.key(shot.index, e.kind, i)
            if key not in answers:
                return Question(key, text, ("yes", "no"), Question.seen(e.confidence))
            return answers[key] == "yes"

        pots: list[Pot] = []
        off: list[str] = []
        jumped = double_hit = False
        touched: list[str] = []
        cushion_first = False
        for i, e in enumerate(events, start=1):
            if isinstance(e, Pot):
                k = kept(e, i, f"ficha 4.2: did {e.ball} drop into {e.pocket} at {e.t_s:.2f}s?")
                if isinstance(k, Question):
                    return k
                if k:
                    if any(p.ball == e.ball for p in pots) or e.ball in off:
                        raise RulesError(f"ficha: shot {shot.index}: {e.ball} is potted at {e.t_s:.2f}s after it was already potted or off the table")
                    if e.ball not in s.balls.on_table:
                        raise RulesError(f"ficha: shot {shot.index}: pot of {e.ball} at {e.t_s:.2f}s, but {e.ball} is not on the table ({s.balls.where(e.ball)})")
                    pots.append(e)
            elif isinstance(e, OffTable):
                k = kept(e, i, f"ficha 5.3: did {e.ball} leave the table at {e.t_s:.2f}s?")
                if isinstance(k, Question):
                    return k
                if k and e.ball not in off:
                    if e.ball not in s.balls.on_table or any(p.ball == e.ball for p in pots):
                        raise RulesError(f"ficha: shot {shot.index}: {e.ball} leaves the table at {e.t_s:.2f}s but is not on it")
                    off.append(e.ball)
            elif isinstance(e, Jump) and e.ball == cue:
                k = kept(e, i, f"ficha 5.4: did the cue ball jump at {e.t_s:.2f}s?")
                if isinstance(k, Question):
                    return k
                jumped = jumped or bool(k)
            elif isinstance(e, CueContact):
                k = kept(e, i, f"ficha 5.7: did the cue touch {e.ball} again at {e.t_s:.2f}s?")
                if isinstance(k, Question):
                    return k
                if k and e.t_s > shot.t_s:
                    if e.ball == cue:
                        double_hit = True
                    elif e.ball not in touched:
                        touched.append(e.ball)
            elif isinstance(e, BallTouched):
                k = kept(e, i, f"ficha 5.6: was {e.ball} touched at {e.t_s:.2f}s?")
                if isinstance(k, Question):
                    return k
                if k and e.ball not in touched:
                    touched.append(e.ball)
            elif isinstance(e, BallCushion) and e.ball == cue and cushion_required and (first_t is None or e.t_s < first_t):
                k = kept(e, i, f"ficha 4.4.2: did the cue ball hit cushion {e.cushion} before {first or 'any ball'}?")
                if isinstance(k, Question):
                    return k
                cushion_first = cushion_first or bool(k)
        pots.sort(key=lambda p: p.t_s)
        return _Facts(first, first_t, cushion_first, tuple(pots), tuple(off), jumped, double_hit, tuple(touched),
                      tuple(contact_balls), tuple(e.t_s for e in contacts))

    def _frozen_moved(self, s: State, shot: Shot) -> tuple[str, ...]:
        """4.5: balls frozen to the cue ball at the strike that moved before another ball reached them:
        the cue ball's contact with it right at the strike (the push), or its first event showing it
        moving on its own (striking another ball, a cushion, a pot, leaving the table), or, with no
        event at all, its place at rest more than ``frozen_moved_mm`` from where it stood."""
        pos = shot.start_positions
        cue = s.cue
        if cue not in pos:
            return ()
        frozen = geometry.frozen_to(pos[cue], pos, self.radius_mm, s.options.frozen_gap_mm, exclude=(cue,))
        out = []
        end = shot.end_positions
        for b in frozen:
            first_event = next(
                (e for e in shot.events[1:] if (isinstance(e, BallBall) and b in (e.a, e.b))
                 or (isinstance(e, (Pot, OffTable, BallTouched, BallCushion)) and e.ball == b)),
                None,
            )
            if isinstance(first_event, BallBall):
                if cue in (first_event.a, first_event.b):
                    moved = first_event.t_s - shot.t_s <= FROZEN_CONTACT_S + 1e-6
                else:
                    moved = first_event.a == b  # ``a`` is the striking ball: it was already moving
            elif isinstance(first_event, (Pot, OffTable, BallCushion)):
                moved = True
            elif first_event is None:
                moved = b in end and math.dist(end[b], pos[b]) > s.options.frozen_moved_mm
            else:
                moved = False  # touched by hand: 5.6, called on its own
            if moved:
                out.append(b)
        return tuple(out)

    # ---- calls ----------------------------------------------------------------------------------

    def _frame_call(self, s: State, t_s: float, shot_index: int | None, player: str | None, winner_side: int, how: str,
                    body: str, rules_used: tuple[str, ...], balls: Balls, positions: Mapping[str, Any],
                    common: dict[str, Any] | None = None, removed: tuple[str, ...] = (), fouls: tuple[Foul, ...] = ()) -> FichaDecision:
        """A call that ends the frame, won by ``winner_side``."""
        score = list(s.score)
        score[winner_side] += 1
        need = s.options.frames // 2 + 1
        match_over = score[winner_side] >= need
        winner = s.sides[winner_side]
        rs = _rules(*rules_used, FRAME_ENDS[how] if how not in ("override", "last_balls", "removal_of_last_ball") else "")
        tail = f"frame {s.frame} to {winner} ({score[0]}-{score[1]})"
        if match_over:
            tail += f"; {winner} wins the match"
        base = dict(common or {})
        base.setdefault("t_s", t_s)
        base.setdefault("shot", shot_index)
        base.setdefault("player", player)
        base.setdefault("fouls", fouls)
        base.setdefault("positions", _mp(positions))
        player_side = s.side_of(base["player"]) if base["player"] else None
        if how == "removal_of_last_ball":
            penalty = f"removal of {', '.join(b for b in removed if b in s.group_balls[winner_side])}, {winner}'s last ball"
        elif player_side == 1 - winner_side and how in LOST_BY_PLAYER:
            penalty = "loss of the frame"
        else:
            penalty = None
        return FichaDecision(
            **base, penalty=penalty, next_player=None, frame_over=True, winner=winner, match_over=match_over,
            match_winner=winner if match_over else None, frame_end=how, balls=balls, removed=removed,
            frame=s.frame, score=_mp(dict(zip(s.sides, score))), warnings=s.warnings, rules=rs,
            explanation=f"ficha {', '.join(rs)}: {'; '.join(x for x in (body, tail) if x)}",
        )

    def _foul_call(self, s: State, offender: str, fouls: set[Foul], body: str, t_s: float, shot_index: int | None,
                   positions: Mapping[str, Any], balls: Balls | None = None, common: dict[str, Any] | None = None,
                   rules_used: tuple[str, ...] = (), forced: Forced = Forced(), removed_before: tuple[str, ...] = ()) -> FichaDecision:
        """A penalised foul by ``offender`` with the frame going on: removal of one of the other side's balls
        (5.2-5.7); the turn passes if the offender's side was at the table. Loss-of-frame fouls end it."""
        balls = balls or s.balls
        oside = s.side_of(offender)
        non = 1 - oside
        ordered = RULES.ordered(fouls)
        rules_used = _rules(*rules_used, *(RULES.rule_of(f) for f in ordered))
        base = dict(common or {})
        base.setdefault("t_s", t_s)
        base.setdefault("shot", shot_index)
        base.setdefault("player", offender)
        base.setdefault("fouls", ordered)
        base.setdefault("positions", _mp(positions))
        if fouls & LOSS_OF_FRAME:
            how = "suicide" if Foul.SUICIDE in fouls else "covered"
            return self._frame_call(s, t_s, shot_index, offender, non, how, body, rules_used, balls, positions, common=base,
                                    removed=removed_before)
        left = s.left(non, balls)
        due = list(s.removals_due)
        effective = len(left) - due.count(non)
        removed = list(removed_before)
        if forced.removal is not None:
            if forced.removal not in left:
                raise RulesError(f"ficha: override removal={forced.removal!r}: it must be one of {s.sides[non]}'s balls on the table ({', '.join(left)})")
            balls = balls.move(forced.removal, "removed")
            removed.append(forced.removal)
            penalty = f"removal of {forced.removal} (override)"
        elif effective <= 1:
            if s.options.removal_of_last_ball_wins and left:
                for b in left:
                    balls = balls.move(b, "removed")
                    removed.append(b)
                return self._frame_call(
                    s, t_s, shot_index, offender, non, "removal_of_last_ball",
                    f"{body}; the penalty removes {s.sides[non]}'s last ball {', '.join(left)}", rules_used, balls, positions,
                    common=base, removed=tuple(removed),
                )
            penalty = (f"no removal: {s.sides[non]}'s last ball stays (option removal_of_last_ball_wins=false)" if left
                       else f"no removal: {s.sides[non]} has no ball of their own on the table")
        elif s.options.removal_choice is RemovalMode.NEAREST_POCKET:
            choice = self._nearest_pocket([b for b in left], positions)
            balls = balls.move(choice, "removed")
            removed.append(choice)
            penalty = f"removal of {choice}, {s.sides[non]}'s ball nearest a pocket"
        else:
            due.append(non)
            penalty = f"removal of one of {s.sides[non]}'s balls ({s.sides[non]} chooses)"
        if oside == s.side_of(s.shooter):
            nxt = s.next_in_rotation(s.shooter)
        else:
            nxt = s.shooter
        if forced.next_player is not None:
            nxt = forced.next_player
        clearing = s.sides[s.clearing] if s.clearing is not None else None
        return FichaDecision(
            **base, penalty=penalty, next_player=nxt, turn_end="foul", balls=balls, removed=tuple(removed),
            removals_due=tuple(s.sides[x] for x in due), clearing=clearing, frame=s.frame,
            score=_mp(dict(zip(s.sides, s.score))), warnings=s.warnings, rules=rules_used,
            explanation=f"ficha {', '.join(rules_used)}: {'; '.join(x for x in (body, penalty, f'{nxt} to play') if x)}",
        )

    def _nearest_pocket(self, candidates: Sequence[str], positions: Mapping[str, Any]) -> str:
        known = [b for b in candidates if b in positions]
        if not known:
            return sorted(candidates)[0]
        return min(known, key=lambda b: (min(math.dist(positions[b], p.xy_mm) for p in self.profile.pockets), b))

    def _remove(self, s: State, side: int, ball: str, t_s: float) -> tuple[State, FichaDecision | None]:
        """Apply a removal owed by ``side``. If the side has no ball left afterwards (or only one for a
        second removal still owed) the frame is theirs (option removal_of_last_ball_wins)."""
        due = list(s.removals_due)
        due.remove(side)
        s = replace(s, balls=s.balls.move(ball, "removed"), removals_due=tuple(due))
        left = s.left(side)
        if not left or (len(left) <= due.count(side) and s.options.removal_of_last_ball_wins):
            balls = s.balls
            for b in left:
                balls = balls.move(b, "removed")
            d = self._frame_call(s, t_s, None, None, side, "removal_of_last_ball",
                                 f"the penalty removal took {s.sides[side]}'s last ball", ("5.2",), balls, s.positions,
                                 removed=(ball, *left))
            return s, d
        return s, None

    def _check_removal_choice(self, s: State, ball: str) -> None:
        if ball not in self.ball_ids:
            raise RulesError(f"ficha: removal_choice names ball {ball!r}, which the table does not have")
        if not s.removals_due:
            raise RulesError(f"ficha: removal_choice {ball}: no removal is owed now")
        side = s.removals_due[0]
        if ball not in s.left(side):
            raise RulesError(f"ficha: removal_choice {ball}: the penalty removes one of {s.sides[side]}'s balls on the table ({', '.join(s.left(side))})")

    def _unobserved_question(self, shot: Shot, answers: Mapping[str, str], d: FichaDecision) -> Question | None:
        """A shot the camera did not see whole (an ``unobserved`` interval, or no ``at_rest``: 4.1) is
        judged as seen only once the operator accepts the call."""
        end_t = shot.end.t_s if shot.end is not None else math.inf
        if shot.end is None and Question.key(shot.index, "unfinished") not in answers:
            return Question(Question.key(shot.index, "unfinished"), f"ficha 4.1: shot {shot.index} never came to rest in the log; the camera's call: "
                                                         f"{d.explanation}. Accept it (or override)?", ("accept",), "accept")
        for e in shot.events + shot.before:
            if isinstance(e, Unobserved) and e.t_s <= end_t and e.until_s >= shot.t_s:
                key = Question.key(shot.index, "unobserved")
                if key in answers:
                    return None
                why = f" ({e.reason})" if e.reason else ""
                return Question(key, f"ficha 4.1: shot {shot.index} was not fully seen ({e.t_s:.2f}-{e.until_s:.2f}s{why}); the camera's call: "
                                     f"{d.explanation}. Accept it (or override)?", ("accept",), "accept")
        return None

    # ---- operator inputs ------------------------------------------------------------------------

    def _concession(self, s: State, e: Concession) -> FichaDecision:
        side = s.side_of(e.player)
        return self._frame_call(s, e.t_s, None, e.player, 1 - side, "concession", f"{e.player} concedes", ("6.3",), s.balls, s.positions)

    def _warning(self, s: State, e: MisconductWarning) -> FichaDecision:
        """5.8: the first warning is only a warning; the second costs a removal; the third and later the frame."""
        side = s.side_of(e.player)
        count = s.warnings.get(e.player, 0) + 1
        warnings = _mp({**s.warnings, e.player: count})
        s = replace(s, warnings=warnings)
        what = f"misconduct by {e.player}" + (f" ({e.rule})" if e.rule else "") + f", warning {count}"
        if count == 1:
            return FichaDecision(
                t_s=e.t_s, shot=None, player=e.player, fouls=(Foul.MISCONDUCT,), penalty="warning", next_player=s.shooter,
                balls=s.balls, frame=s.frame, score=_mp(dict(zip(s.sides, s.score))), warnings=warnings,
                removals_due=tuple(s.sides[x] for x in s.removals_due),
                clearing=s.sides[s.clearing] if s.clearing is not None else None, positions=s.positions, rules=("5.8",),
                explanation=f"ficha 5.8: {what}: a warning; {s.shooter} to play",
            )
        if count == 2:
            return self._foul_call(s, e.player, {Foul.MISCONDUCT}, what, e.t_s, None, s.positions)
        return self._frame_call(s, e.t_s, None, e.player, 1 - side, "misconduct", f"{what}: loss of the frame", ("5.8",),
                                s.balls, s.positions, fouls=(Foul.MISCONDUCT,))

    # ---- state transitions ----------------------------------------------------------------------

    def _apply(self, s: State, d: FichaDecision, count_shot: bool) -> State:
        if d.frame_over:
            wside = s.sides.index(d.winner)
            score = list(s.score)
            score[wside] += 1
            history = s.history + (FrameResult(s.frame, d.winner, d.frame_end or "override"),)
            s = replace(s, score=(score[0], score[1]), history=history, warnings=d.warnings, balls=d.balls or s.balls, start_unseen=False)
            if d.match_over:
                return replace(s, match_over=True, match_winner=d.winner, removals_due=(), clearing=None)
            return self._rack(s, wside)
        return replace(
            s, balls=d.balls or s.balls, shooter=d.next_player or s.shooter, shots_in_frame=s.shots_in_frame + int(count_shot),
            start_unseen=s.start_unseen and not count_shot,
            removals_due=tuple(s.sides.index(x) for x in d.removals_due),
            clearing=s.sides.index(d.clearing) if d.clearing is not None else None,
            positions=d.positions if d.positions else s.positions, warnings=d.warnings,
        )

    def _rack(self, s: State, winner_side: int) -> State:
        """A new frame (3.1, 3.2): every ball on the table; the breaker per option next_break."""
        mode = s.options.next_break
        if mode is NextBreak.WINNER:
            bside = winner_side
        elif mode is NextBreak.LOSER:
            bside = 1 - winner_side
        else:
            bside = 1 - s.side_of(s.breaker)
        members = s.side_players[bside]
        breaker = members[s.breaks[bside] % len(members)]
        breaks = list(s.breaks)
        breaks[bside] += 1
        return replace(
            s, frame=s.frame + 1, breaker=breaker, breaks=(breaks[0], breaks[1]), shooter=breaker, shots_in_frame=0,
            balls=Balls(on_table=self.ball_ids), positions=_mp(), removals_due=(), clearing=None, joined=False, start_unseen=False,
        )


def parse_ficha_options(given: Mapping[str, Any] | None) -> Options:
    """Options from a mapping (names as in docs/rules-ficha.md), validated."""
    return parse_options(Options, given, GAME)
