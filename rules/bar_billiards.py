"""4-pin bar billiards: the referee of one frame.

Rule numbers are those of the 4-pin bar billiards rulebook (the how-to-play guide, the detailed rules
1-3, the Norwich league rules 4-8); where it is silent the engine follows the project's rules
decisions and the choices written below (also in ``docs/rules-bar-billiards.md``). The league match
(rules 4-8: the draw, the five-player rule, the scorecard) is bookkeeping, not refereeing:
:mod:`rules.league`.

Decided from camera events
    2b    break-off when no ball is on the table: red on ``spots['break']``, a white from the centre of
          the D (``centre_tolerance_mm``); legal if the white's first contact is the red (2b a); foul
          break (2b b 1-3, 3b b); both balls potted: break off again (2b c); the same break-off a
          fourth time in a row (2b d, 3b i, ``same_break_off_degrees``).
    2c    a pot continues the visit (2c a); the next ball: the red from the trough first (2c c, 3b e),
          else a white from the trough placed in the D (2c b, 3b c), else the ball nearest the baulk
          line (2c c, ties: nearest the D's centre); a non-scoring shot ends the visit (2c d).
    2d    a ball off the table that does not come back by itself: foul, back to the trough.
    2f    a ball that drops without having moved in the shot, or after more than ``edge_wait_s`` on a
          hole's edge, is replaced and scores nothing (2f a, 2f b).
    2g    a white scores its hole's value, the red double; the break is banked at the end of a visit.
    2h    pins down (2h, 3a a, 3b a; the highest penalty applies); pins moved but standing are not
          reset until the visit ends, when a ball on a pin's spot goes back to the trough (2h a).
    2i    the frame ends when every ball is gone; one ball left: the endgame if the gap is 200 or less
          (400 with the red), else the frame is over; endgame shots (2i c-h, 3a b).
    3b    miss (3b d), ball at rest touching the D or the baulk line, or behind it (3b f: "touching" is
          where the ball meets the cloth, the point under its centre; a ball whose centre is up the
          table only overhangs the line or the D and is in play), returned to the trough; a ball
          touched or moved without a shot (3b g), a second cue contact (3b q).
    clock the bar drops ``clock_minutes`` after the first break-off's ``t_s`` (2g, 2i, league 5): a
          ball potted (or off the table, in baulk, displaced by a pin) after that is out of play.

A frame joined mid-way (option ``start=mid_frame``: the camera switched on during a frame)
    ``start_player`` (default the first player) is at the table with no break yet; ``start_banked``
    (``"A=900,B=800"``, sides as in ``banked``) the scores banked so far; ``start_balls`` the balls
    still in play (default all). Fewer than all means the bar has dropped (2g, 2i: the others are out
    of play); one ball left with a gap of 200 or less (400 with the red) is the endgame (2i), over
    the gap the frame would be over (refused). The first ``shot_start``'s ``positions`` say which
    balls in play rest on the table (the camera's view is the truth): every other ball in play, and
    the struck ball (always played from the D), is in the trough. The game clock of a joined frame is
    unknown: the bar drops with a ``bar_dropped`` input.

Decided from operator inputs
    2a    who breaks first: the first player given.  2b b: ``rebreak_choice`` (without one, the next
    shot's set-up tells: white on the D's centre and red on the spot means a re-break).  2d b, 3a c,
    3a d, 3b g, k, l, m, n, o, p, q: ``operator_foul`` with the rule number (or a :class:`Foul` value),
    entered after the shot it concerns.  2e: ``interference`` (during a shot: the shot is void; between
    shots: hand-moved balls are not a foul).  2g/2i: ``bar_dropped``.  2i: ``endgame`` (the leader
    invokes it).  3a d: ``concession``.  ``answer`` to a pending question; ``override`` of the last
    shot's call (fields ``fouls``, ``banked``, ``next_player``): the shot is judged again with it, as
    it is with an ``operator_foul`` on the player who played it (:class:`rules.base.Referee`).

Asked, not guessed
    an event below ``min_confidence``, a shot overlapping an ``unobserved`` interval, or a shot never
    seen at rest makes the call pending; the ``answer`` ``confirm`` judges the events as logged,
    ``discard`` drops the doubtful ones.

Cannot see
    a ball moved by a falling pin (2f a), a ball that touched the baulk line and rolled back out (3b f),
    intent (3a c, 3b k), a ball returned after touching a person (2d b), the referee duties (6, 7).

Choices where the rulebook is silent (also in ``docs/rules-bar-billiards.md``)
    * after the bar has dropped, a ball that would go back to the trough (off the table, in baulk,
      under a pin's spot) is out of play like a potted ball: the trough no longer feeds balls back.
    * whites are alike: a white a shot names that the state holds out of play is another white under
      the camera's name (one in the trough, else one on the table the shot's start does not show, the
      one a hand lifted first); the two names are exchanged (:meth:`BarBilliardsRules._named_as_seen`).
    * break-off directions: each ball's direction is from where it starts moving (the white: the
      contact with the red; the red: its spot) to its next event position (cushion, ball, hole, leaving
      the table) or, failing that, its rest position. "In a row" means consecutive break-offs of one
      visit; any other shot starts the count again.
    * the endgame's gap counts the break of the player at the table; an illegal endgame pot (no
      cushion, 3a b) or any endgame foul puts the ball back in play for the opponent.
    * playing a ball from the table while the trough has one, or a table ball that is not the
      nearest to the baulk line, is a foul (``wrong_ball``, 2c b/c) costing the break.
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
from rules.base import (
    Decision,
    Engine,
    Question,
    RuleTable,
    RulesError,
    RulesOptions,
    Shot,
    first_contact,
    other,
    joined_player,
    parse_balls,
    parse_options,
    parse_points,
    pots_in_order,
)
from tracking.events import (
    AtRest,
    BallBall,
    BallCushion,
    BallPlaced,
    BallRemoved,
    BallTouched,
    BarDropped,
    Concession,
    CueContact,
    Event,
    Interference,
    InvokeEndgame,
    OffTable,
    OperatorFoul,
    OperatorInput,
    Override,
    PinDown,
    PinMoved,
    Pot,
    RebreakChoice,
    Returned,
    ShotStart,
    Unobserved,
    balls_involved,
)

__all__ = [
    "Options",
    "FrameStart",
    "Foul",
    "PRECEDENCE",
    "ENTIRE_SCORE",
    "BreakOff",
    "State",
    "BarBilliardsDecision",
    "BarBilliardsRules",
    "RULES",
]

log = logging.getLogger(__name__)

XY = tuple[float, float]
GAME = "bar-billiards"
ENDGAME_GAP = 200  # 2i: the endgame applies when the scores differ by this or less...
ENDGAME_GAP_RED = 400  # ...or by this or less when the last ball is the red


class FrameStart(StrEnum):
    """How the frame starts (option ``start``)."""

    RACK = "rack"  # every ball in the trough, a break-off first (2b)
    MID_FRAME = "mid_frame"  # joined mid-way (module docstring)


class Options(RulesOptions):
    """Match settings (the rules decisions for bar billiards), recorded in the state."""

    clock_minutes: float = Field(15.0, gt=0, allow_inf_nan=False)  # 2g, 2i, league 5 (14-18): the game clock, from the first break-off
    same_break_off_degrees: float = Field(10.0, gt=0, allow_inf_nan=False)  # 2b d, 3b i: both balls within this of the three previous break-offs
    centre_tolerance_mm: float = Field(15.0, ge=0, allow_inf_nan=False)  # 2b b 1, 3b j: how far from the D's centre a break-off/endgame ball may stand
    d_tolerance_mm: float = Field(5.0, ge=0, allow_inf_nan=False)  # 2c b, 3b c: slack for a ball placed on the D's edge (calibration error)
    edge_wait_s: float = Field(5.0, gt=0, allow_inf_nan=False)  # 2f b: a ball on a hole's edge that drops within this counts
    tie_mm: float = Field(2.0, ge=0, allow_inf_nan=False)  # 2c c: two balls closer than this to the same distance from the baulk line tie
    min_confidence: float = Field(0.6, ge=0.0, le=1.0)  # events less sure than this make the call pending with a question
    start: FrameStart = FrameStart.RACK  # the frame from the start, or joined mid-way
    start_player: str = ""  # start=mid_frame: at the table ("" = the first player)
    start_banked: str = ""  # start=mid_frame: banked scores so far, "side=points,..." ("" = none)
    start_balls: str = ""  # start=mid_frame: the balls still in play, comma-separated ("" = all)


class Foul(StrEnum):
    """Every foul the engine calls, with its rule. The first four lose the entire score (3a)."""

    BLACK_PIN = "black_pin"  # 3a a: the pin guarding the top hole (black by default) knocked over
    ENDGAME_NO_CUSHION = "endgame_no_cushion"  # 3a b: the final ball potted without first striking a cushion
    DELIBERATE = "deliberate"  # 3a c: a deliberate foul (operator)
    UNSPORTING = "unsporting"  # 3a d: not playing in the spirit of the game, forfeiting a frame (operator)
    PIN_DOWN = "pin_down"  # 3b a: any other pin knocked over
    FOUL_BREAK = "foul_break"  # 2b b, 3b b: white not from the D's centre, white misses the red, wrong way round
    SAME_BREAK_OFF = "same_break_off"  # 2b d, 3b i: the same break-off a fourth time in a row
    NOT_FROM_D = "not_from_d"  # 2c b, 3b c: a ball cued from outside the D
    NOT_FROM_D_CENTRE = "not_from_d_centre"  # 2i c, 3b j: the endgame ball not played from the D's centre
    RED_NOT_PLAYED = "red_not_played"  # 2c c, 3b e: a white played while the red is in the trough
    WRONG_BALL = "wrong_ball"  # 2c b, 2c c: a table ball played while the trough has one, or not the nearest to baulk
    MISS = "miss"  # 3b d: the cued ball touches no other ball
    BAULK = "baulk"  # 3b f: a ball at rest touching the D or the baulk line, or behind it
    OFF_TABLE = "off_table"  # 2d, 3b h: a ball leaves the table and does not come back by itself
    ENDGAME_NOT_OFF_CUSHION = "endgame_not_off_cushion"  # 2i d, e: an endgame shot that touches no cushion
    ENDGAME_SCOREBOARD = "endgame_scoreboard"  # 2i f: the endgame ball touches the scoreboard's edge
    ENDGAME_OFF_TABLE = "endgame_off_table"  # 2i f: the endgame ball leaves the table, back or not
    TOUCHED = "touched"  # 3b g: a ball moved other than by a shot from the D
    DOUBLE_HIT = "double_hit"  # 3b q: the cue touches the ball again
    JUMP = "jump"  # 3b k: intentionally jumping the cue ball (operator)
    PUSH = "push"  # 3b l: a push shot (operator)
    NOT_CUE_TIP = "not_cue_tip"  # 3b m: striking with anything but the tip (operator)
    NOT_AT_REST = "not_at_rest"  # 3b n: playing before everything stopped (operator)
    NOT_RESET = "not_reset"  # 3b o: playing before balls were returned / pins reset (operator)
    OUT_OF_TURN = "out_of_turn"  # 3b p: playing out of turn (operator)


# The rule numbers every call quotes, in one place: the rule of each foul, the order a decision lists
# fouls in (declaration order: entire-score fouls first, then by when they happen) and the rules an
# operator_foul may give (a Foul value is accepted too).
RULES = RuleTable(
    game=GAME,
    title="4-pin bar billiards: how to play, detailed rules and Norwich league rules",
    fouls=MappingProxyType({
        Foul.BLACK_PIN: "3a a", Foul.ENDGAME_NO_CUSHION: "3a b", Foul.DELIBERATE: "3a c", Foul.UNSPORTING: "3a d",
        Foul.PIN_DOWN: "3b a", Foul.FOUL_BREAK: "2b b", Foul.SAME_BREAK_OFF: "3b i", Foul.NOT_FROM_D: "3b c",
        Foul.NOT_FROM_D_CENTRE: "3b j", Foul.RED_NOT_PLAYED: "3b e", Foul.WRONG_BALL: "2c c", Foul.MISS: "3b d",
        Foul.BAULK: "3b f", Foul.OFF_TABLE: "2d", Foul.ENDGAME_NOT_OFF_CUSHION: "2i e", Foul.ENDGAME_SCOREBOARD: "2i f",
        Foul.ENDGAME_OFF_TABLE: "2i f", Foul.TOUCHED: "3b g", Foul.DOUBLE_HIT: "3b q", Foul.JUMP: "3b k",
        Foul.PUSH: "3b l", Foul.NOT_CUE_TIP: "3b m", Foul.NOT_AT_REST: "3b n", Foul.NOT_RESET: "3b o",
        Foul.OUT_OF_TURN: "3b p",
    }),
    precedence=tuple(Foul),
    operator=MappingProxyType({
        "2d b": Foul.OFF_TABLE, "3a c": Foul.DELIBERATE, "3a d": Foul.UNSPORTING, "3b g": Foul.TOUCHED,
        "3b k": Foul.JUMP, "3b l": Foul.PUSH, "3b m": Foul.NOT_CUE_TIP, "3b n": Foul.NOT_AT_REST,
        "3b o": Foul.NOT_RESET, "3b p": Foul.OUT_OF_TURN, "3b q": Foul.DOUBLE_HIT,
    }),
)
PRECEDENCE = RULES.precedence
ENTIRE_SCORE = frozenset({Foul.BLACK_PIN, Foul.ENDGAME_NO_CUSHION, Foul.DELIBERATE, Foul.UNSPORTING})

# what to play next
BREAK_OFF, FROM_D, FROM_TABLE, ENDGAME = "break_off", "from_d", "from_table", "endgame"


def _angle_diff_deg(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


@dataclass(frozen=True, slots=True)
class BreakOff:
    """One break-off's directions (degrees in the table frame; None when unseen): 2b d."""

    player: str
    white_deg: float | None
    red_deg: float | None

    def same_as(self, other_: "BreakOff", tolerance_deg: float) -> bool:
        pairs = ((self.white_deg, other_.white_deg), (self.red_deg, other_.red_deg))
        return all(a is not None and b is not None and _angle_diff_deg(a, b) <= tolerance_deg for a, b in pairs)



def _names(e: Event) -> list[str]:
    """The balls an event names: its ``ball``, ``a`` and ``b``, and the balls of its ``positions``."""
    return [getattr(e, k) for k in ("ball", "a", "b") if isinstance(getattr(e, k, None), str)] + list(getattr(e, "positions", None) or ())

@dataclass(frozen=True, slots=True)
class State:
    """One frame's state. ``banked`` is keyed by side (the player in singles, "A1 & A2" in doubles).

    Every ball is in exactly one of ``table`` (at rest, with its position), ``trough`` and ``out`` (out
    of play once the bar has dropped).
    """

    players: tuple[str, ...]
    options: Options
    player: str  # at the table (or to play next)
    banked: Mapping[str, int]
    break_score: int = 0
    table: Mapping[str, XY] = field(default_factory=lambda: MappingProxyType({}))
    trough: tuple[str, ...] = ()
    out: tuple[str, ...] = ()
    pins_moved: frozenset[str] = frozenset()  # moved but standing this visit: reset when it ends (2h)
    break_offs: tuple[BreakOff, ...] = ()  # the break-offs played in a row this visit (2b d)
    clock_start_t_s: float | None = None  # the first break-off's strike
    bar_down: bool = False
    bar_t_s: float | None = None  # when the operator said the bar dropped (None: down from the start, or by the clock)
    endgame: bool = False
    awaiting_rebreak: bool = False  # after a foul break, the opponent chooses (2b b)
    frame_over: bool = False
    winner: str | None = None  # a side; None with frame_over: a shared frame
    endgame_invocable: bool = False  # one ball left, gap over the threshold: the leader may invoke (2i)
    ended_break: int = 0  # the break the frame's end banked for the player at the table: an invoked endgame continues it (2i b)
    shots: int = 0
    start_unseen: bool = False  # joined mid-way: which balls in play rest on the table is read from the first strike

    # ---- look-ups -----------------------------------------------------------------------------
    @property
    def sides(self) -> tuple[str, ...]:
        n = len(self.players)
        if n == 2:
            return self.players
        return (f"{self.players[0]} & {self.players[2]}", f"{self.players[1]} & {self.players[3]}")

    def side_of(self, player: str) -> str:
        if player not in self.players:
            raise RulesError(f"{GAME}: {player!r} is not playing this frame ({', '.join(self.players)})")
        return self.sides[self.players.index(player) % 2]

    def next_after(self, player: str) -> str:
        return self.players[(self.players.index(player) + 1) % len(self.players)]

    @property
    def red_where(self) -> str:
        """Where the red is: ``table``, ``trough`` or ``out``."""
        return "table" if "red" in self.table else "trough" if "red" in self.trough else "out"

    @property
    def in_play(self) -> tuple[str, ...]:
        return tuple(self.table) + self.trough

    @property
    def next_kind(self) -> str:
        """What the next shot is: a break-off, a ball from the trough in the D, a table ball, the endgame."""
        if self.endgame:
            return ENDGAME
        if not self.table and len(self.trough) >= 2:
            return BREAK_OFF
        return FROM_D if self.trough else FROM_TABLE


@dataclass(frozen=True, slots=True, kw_only=True)
class BarBilliardsDecision(Decision):
    """A bar billiards call: the shot's points, the break and the banked scores after it, where the
    balls went, and what comes next. ``after`` is the state the call leads to (``advance`` applies it)."""

    points: int = 0
    pots: tuple[str, ...] = ()  # "w3 h200 +200", "w5 h50t replaced (2f a)"
    break_score: int = 0
    banked: Mapping[str, int] = field(default_factory=dict)
    banked_now: int = 0
    lost_break: int = 0
    lost_banked: int = 0
    visit_over: bool = False
    trough: tuple[str, ...] = ()
    out: tuple[str, ...] = ()
    bar_down: bool = False
    endgame: bool = False
    next_kind: str | None = None
    next_ball: str | None = None
    after: State | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = Decision.to_dict(replace(self, after=None))
        d.pop("after", None)
        return d


# ---- the engine -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What a shot did, before it is scored."""

    kind: str
    struck: str
    fouls: tuple[Foul, ...]
    counted: tuple[Pot, ...]
    replaced: tuple[Pot, ...]
    table: Mapping[str, XY]
    to_trough: tuple[tuple[str, float], ...]  # ball, time it left play
    notes: tuple[str, ...]
    rules: tuple[str, ...]
    moved_pins: frozenset[str]
    break_off: BreakOff | None
    clock_start_t_s: float | None
    legal_endgame_pot: bool


class BarBilliardsRules(Engine):
    """The bar billiards referee (see the module docstring for the rules it decides)."""

    name = GAME
    rules = RULES

    def __init__(self, profile: TableProfile):
        if profile.kind != "bar_billiards":
            raise RulesError(f"{GAME}: table profile {profile.name!r} is a {profile.kind} table, not a bar billiards table")
        for needed in ("baulk_x_mm", "d_centre_mm", "d_radius_mm"):
            if getattr(profile, needed) is None:
                raise RulesError(f"{GAME}: table profile {profile.name!r} has no {needed}")
        if "break" not in profile.spots:
            raise RulesError(f"{GAME}: table profile {profile.name!r} has no 'break' spot (the red's break-off spot)")
        if "red" not in profile.ball_ids:
            raise RulesError(f"{GAME}: table profile {profile.name!r} has no ball 'red'")
        self.profile = profile
        self.ball_order = profile.ball_ids
        by_value = sorted(profile.holes, key=lambda h: -h.value)
        self.endgame_holes = frozenset(h.id for h in by_value[:2])  # 2i: the 100 and the 200
        self.cushion_ids = frozenset(c.id for c in profile.cushions)

    # ---- setup ---------------------------------------------------------------------------------
    def initial_state(self, players: Sequence[str], options: Mapping[str, Any] | None = None) -> State:
        players = tuple(players)
        if len(players) not in (2, 4) or len(set(players)) != len(players):
            raise RulesError(f"{GAME}: a frame needs 2 players (singles) or 4 (doubles, order A1 B1 A2 B2), all different; got {players!r}")
        opts = parse_options(Options, options, GAME)
        st = State(players=players, options=opts, player=players[0], banked=MappingProxyType({}), trough=self.ball_order)
        st = replace(st, banked=MappingProxyType({s: 0 for s in st.sides}))
        player = joined_player(GAME, opts, players, "start_player")
        return st if player is None else self._joined(st, opts, player)

    def _joined(self, st: State, opts: Options, player: str) -> State:
        """The state of a frame joined mid-way (module docstring), before its first strike is seen."""
        banked = parse_points(GAME, "start_banked", opts.start_banked, st.sides, "side")
        names = parse_balls(GAME, "start_balls", opts.start_balls, self.ball_order, self.profile.name) or list(self.ball_order)
        in_play = self._sort(names)
        bar_down = len(in_play) < len(self.ball_order)
        endgame = False
        if bar_down and len(in_play) == 1:
            gap = abs(banked[st.sides[0]] - banked[st.sides[1]])
            limit = ENDGAME_GAP_RED if in_play[0] == "red" else ENDGAME_GAP
            if gap > limit:
                raise RulesError(f"{GAME}: a frame joined with one ball left ({in_play[0]}) and a gap of {gap} (over {limit}) is already "
                                 "over (2i); it cannot be joined")
            endgame = True
        return replace(st, player=player, banked=MappingProxyType(banked), trough=in_play,
                       out=self._sort(set(self.ball_order) - set(in_play)), bar_down=bar_down, endgame=endgame, start_unseen=True)

    def _seen_start(self, state: State, shot: Shot) -> State:
        """A frame joined mid-way at its first strike: the balls in play the strike shows (but the
        struck one) rest on the table, the others are in the trough."""
        if not state.start_unseen:
            return state
        pos = shot.start.positions
        table = {b: pos[b] for b in state.trough if b in pos and b != shot.struck}
        return replace(state, table=MappingProxyType(table), trough=self._sort(set(state.trough) - set(table)), start_unseen=False)

    def _named_as_seen(self, state: State, shot: Shot) -> State:
        """The state with alike balls (the whites: one colour, one group) named as the shot names them.

        Whites cannot be told apart, so which of them a camera calls ``w3`` is its own bookkeeping: a
        white it names that this state holds out of play (potted after the bar dropped, 2g) is another
        white under a name the camera gave it: one waiting in the trough (the player took it from
        there, 2c b); else, with no white in the trough, one this state has on the table that the
        shot's start does not show and its play does not name: the one a hand lifted from the table
        before it, if any (2c c: the ball nearest the baulk line, played from the D). The two names are
        exchanged in the state, which changes nothing on the table; a white named out of play with no
        such ball to be is still refused (:meth:`_check_ids`)."""
        if not state.out:
            return state
        played = {shot.struck}.union(*(_names(e) for e in shot.events))  # the start's positions among them
        named = played.union(*(_names(e) for e in shot.before))
        lifted = [e.ball for e in shot.before if isinstance(e, BallRemoved)]
        out, trough, table = list(state.out), list(state.trough), dict(state.table)

        def alike(a: str, b: str) -> bool:
            pa, pb = self.profile.ball(a), self.profile.ball(b)
            return pa.colour == pb.colour and pa.group == pb.group

        for ball in sorted(b for b in named if b in state.out and b in self.ball_order):
            other = next((b for b in trough if b not in named and alike(b, ball)), None)
            if other is not None:
                out[out.index(ball)], trough[trough.index(other)] = other, ball
                continue
            unseen = [b for b in self._sort(table) if b not in played and alike(b, ball)]
            other = next((b for b in reversed(lifted) if b in unseen), unseen[0] if unseen else None)
            if other is not None:
                out[out.index(ball)] = other
                table[ball] = table.pop(other)
        return replace(state, out=self._sort(out), trough=self._sort(trough), table=MappingProxyType(table))

    # ---- geometry ------------------------------------------------------------------------------
    def in_baulk(self, xy: XY) -> bool:
        """3b f: a ball at rest touching the baulk line or the D, or behind the line. A ball touches
        where it meets the cloth, under its centre (the rules decisions): a ball whose centre is up
        the table from the line and outside the D only overhangs them and is in play."""
        p = self.profile
        return self.baulk_distance(xy) <= 0.0 or math.dist(xy, p.d_centre_mm) <= p.d_radius_mm

    def baulk_distance(self, xy: XY) -> float:
        return self.profile.d_direction * (xy[0] - self.profile.baulk_x_mm)

    def nearest_to_baulk(self, table: Mapping[str, XY], tie_mm: float) -> tuple[str, ...]:
        """2c c: the ball(s) nearest the baulk line; ties go to the nearest to the D's centre."""
        if not table:
            return ()
        dist = {b: self.baulk_distance(xy) for b, xy in table.items()}
        best = min(dist.values())
        tied = [b for b in dist if dist[b] <= best + tie_mm]
        centre = {b: math.dist(table[b], self.profile.d_centre_mm) for b in tied}
        c_best = min(centre.values())
        return tuple(b for b in tied if centre[b] <= c_best + tie_mm)

    def points_of(self, ball: str, hole: str) -> int:
        """2g: a white scores the hole's value, the red double."""
        value = self.profile.hole(hole).value
        return value * 2 if self.profile.ball(ball).group == "red" else value

    def _sort(self, balls) -> tuple[str, ...]:
        s = set(balls)
        return tuple(b for b in self.ball_order if b in s)

    # ---- judging ---------------------------------------------------------------------------------
    def over(self, state: State) -> tuple[str, str | None] | None:
        return ("frame", state.winner) if state.frame_over else None

    def _check_ids(self, state: State, shot: Shot) -> None:
        """Every ball an event names is a ball of the table, and the struck one is in play."""
        for e in shot.events + shot.before:
            for ball in _names(e):
                if ball not in self.ball_order:
                    raise RulesError(f"{GAME}: shot {shot.index}: {e.kind} at {e.t_s:.2f}s names unknown ball {ball!r} "
                                     f"(balls: {', '.join(self.ball_order)})")
        if shot.struck in state.out:
            raise RulesError(f"{GAME}: shot {shot.index} strikes {shot.struck}, which is out of play since the bar dropped")

    def _question(self, state: State, shot: Shot) -> Question | None:
        thr = state.options.min_confidence
        doubtful = [e for e in shot.events if e.confidence < thr and not isinstance(e, (ShotStart, AtRest))]
        end_t = shot.end.t_s if shot.end is not None else shot.events[-1].t_s
        hidden = [u for u in shot.before + shot.events if isinstance(u, Unobserved) and u.t_s <= end_t and u.until_s >= shot.t_s]
        if not doubtful and not hidden and shot.end is not None:
            return None
        parts = []
        if doubtful:
            parts.append("unsure of " + ", ".join(f"{_describe(e)} ({e.confidence:.2f})" for e in doubtful))
        if hidden:
            parts.append("the table was not seen " + ", ".join(f"{u.t_s:g}-{u.until_s:g} s" for u in hidden))
        if shot.end is None:
            parts.append("the balls were never seen at rest")
        options = ("confirm", "discard") if doubtful else ("confirm",)
        ask = "confirm the camera's events or discard the doubtful ones?" if doubtful else "confirm the camera's events?"
        likely = not doubtful or all(e.confidence >= 0.5 for e in doubtful)
        return Question.about(shot.index, "events", f"shot {shot.index} ({state.player}): {'; '.join(parts)} - {ask}", options,
                              default="confirm" if likely else "discard")

    def corrects(self, state: State, last: Decision, event: OperatorInput) -> bool:
        """An override, an operator's foul on the player who played the last shot (3b), or the last
        shot played out of turn by another player (3b p)."""
        if isinstance(event, OperatorFoul):
            return event.player == last.player or RULES.foul_named(event.rule) is Foul.OUT_OF_TURN
        return isinstance(event, Override)

    def _judge(self, state: State, shot: Shot) -> BarBilliardsDecision:
        """The call on one shot (pure), with the operator's answer (``confirm`` the camera's doubtful
        events or ``discard`` them) and corrections (an operator's foul, an override)."""
        state = self._seen_start(state, shot)
        state = self._named_as_seen(state, shot)
        self._check_ids(state, shot)
        q = self._question(state, shot)
        if q is not None and q.id not in shot.answers:
            return self._pending(state, shot, q)
        if q is not None and shot.answers[q.id] == "discard":
            thr = state.options.min_confidence
            events = tuple(e for e in shot.events if isinstance(e, (ShotStart, AtRest)) or e.confidence >= thr)
            shot = replace(shot, events=events)
        intruder = next((e.player for e in shot.corrections if isinstance(e, OperatorFoul) and e.player != state.player
                         and RULES.foul_named(e.rule) is Foul.OUT_OF_TURN), None)
        if intruder is not None:
            return self._out_of_turn(state, shot, intruder)
        rq = self._rebreak_question(state, shot)
        if rq is not None and rq.id not in shot.answers:
            return self._pending(state, shot, rq)
        base, notes = self._resolve_rebreak(state, shot)
        if any(isinstance(e, Interference) and e.t_s >= shot.t_s for e in shot.before):
            return self._void(base, state, shot)
        o = self._observe(base, shot, notes)
        fouls = set(o.fouls) | {RULES.foul_named(e.rule) for e in shot.corrections if isinstance(e, OperatorFoul)}
        for e in shot.overrides:
            if e.field == "fouls":
                fouls = {RULES.foul_named(v.strip()) for v in e.value.split(",") if v.strip() and v.strip().lower() != "none"}
        d = self._score(base, shot, replace(o, fouls=RULES.ordered(fouls)))
        for e in shot.overrides:
            d = self._overridden(d, e)
        return d

    def _out_of_turn(self, state: State, shot: Shot, intruder: str) -> BarBilliardsDecision:
        """3b p: the shot was played out of turn by ``intruder``: their foul (nothing scores, they have
        no break to lose), the balls stay as they lie, and the player whose turn it was plays on with
        their break."""
        side = state.side_of(intruder)
        base, notes = self._resolve_rebreak(replace(state, player=intruder, break_score=0), shot)
        o = self._observe(base, shot, notes)
        d = self._score(base, shot, replace(o, fouls=(Foul.OUT_OF_TURN,)))
        assert d.after is not None and side in d.after.banked
        after = replace(d.after, player=state.player, break_score=state.break_score)
        text = (f"bar billiards 3b p: {intruder} played out of turn - a foul, nothing scores; the balls stay as they lie; "
                f"{state.player} plays on with a break of {state.break_score}: {self._next_text(after)}")
        return replace(d, after=after, next_player=None if after.frame_over else state.player, break_score=state.break_score,
                       explanation=text, rules=("3b p",), visit_over=False)

    def _overridden(self, d: BarBilliardsDecision, e: Override) -> BarBilliardsDecision:
        """The call with an override of ``banked`` or ``next_player`` applied (``fouls`` is applied
        while scoring)."""
        after = d.after
        assert after is not None
        if e.field == "fouls":
            return d
        if e.field == "banked":
            banked = dict(after.banked)
            for part in e.value.split(","):
                name, _, value = part.partition("=")
                name = name.strip()
                if name not in banked or not value.strip().lstrip("-").isdigit():
                    raise RulesError(f"{GAME}: override banked {e.value!r}: write side=points for sides {', '.join(banked)}")
                banked[name] = int(value)
            after = replace(after, banked=MappingProxyType(banked))
        elif e.field == "next_player":
            if e.value not in after.players:
                raise RulesError(f"{GAME}: override next_player {e.value!r}: not a player ({', '.join(after.players)})")
            after = replace(after, player=e.value, break_score=0 if e.value != after.player else after.break_score)
        else:
            raise RulesError(f"{GAME}: override field {e.field!r} is not one bar billiards accepts (fouls, banked, next_player)")
        return replace(d, after=after, banked=after.banked, break_score=after.break_score,
                       next_player=None if after.frame_over else after.player)

    def _pending(self, state: State, shot: Shot, q: Question) -> BarBilliardsDecision:
        """The call waits for the answer to ``q``: nothing changes."""
        return BarBilliardsDecision(
            t_s=shot.t_s, shot=shot.index, player=state.player, pending=q, explanation=f"pending: {q.text}",
            banked=state.banked, break_score=state.break_score, trough=state.trough, out=state.out,
            bar_down=state.bar_down, endgame=state.endgame,
        )

    def _rebreak_question(self, state: State, shot: Shot) -> Question | None:
        """2b b: after a foul break with no rebreak_choice input and a strike that shows no set-up (no
        ``positions``), whether the opponent re-broke or played on is asked, not guessed, unless the
        shot touches a ball a re-break has not (anything but one object ball: then it was played on).
        The default (the likelier reading): a white struck from the D's centre is a re-break."""
        if not state.awaiting_rebreak or shot.start.positions:
            return None
        involved = {b for e in shot.events for b in balls_involved(e)} - {shot.struck}
        if len(involved) > 1 or (involved - {"red"} and "red" in state.in_play):
            return None  # the set-up decides: not a break-off's
        xy = shot.start.xy_mm
        centre = xy is not None and math.dist(xy, self.profile.d_centre_mm) <= state.options.centre_tolerance_mm
        likely = "rebreak" if centre and shot.struck != "red" else "play_on"
        return Question.about(shot.index, "rebreak", f"shot {shot.index} ({state.player}): after the foul break (2b b), did "
                              f"{state.player} re-break or play on? (the set-up was not seen)", ("rebreak", "play_on"), default=likely)

    def _resolve_rebreak(self, state: State, shot: Shot) -> tuple[State, tuple[str, ...]]:
        """2b b: the opponent's choice after a foul break, when no rebreak_choice input came: the answer
        to the re-break question, else the shot's set-up: a shot set up as a break-off (white on the D's
        centre, red on the spot, nothing else) is a re-break."""
        if not state.awaiting_rebreak:
            return state, ()
        answer = shot.answers.get(Question.key(shot.index, "rebreak"))
        if answer is not None:
            chosen = "re-breaks" if answer == "rebreak" else "plays on"
            return (self._rebreak(state) if answer == "rebreak" else replace(state, awaiting_rebreak=False)), (f"2b b: {state.player} {chosen}",)
        p = self.profile
        pos = shot.start.positions
        tol = state.options.centre_tolerance_mm
        white_xy = shot.start.xy_mm or pos.get(shot.struck)
        set_up = (
            len(pos) == 2 and "red" in pos and shot.struck != "red"
            and math.dist(pos["red"], p.spots["break"]) <= tol
            and white_xy is not None and math.dist(white_xy, p.d_centre_mm) <= tol
        )
        if set_up:
            return self._rebreak(state), (f"2b b: {state.player} re-breaks (seen from the set-up)",)
        return replace(state, awaiting_rebreak=False), (f"2b b: {state.player} plays on (seen from the set-up)",)

    def _rebreak(self, state: State) -> State:
        """The balls on the table are collected for a new break-off (2b b)."""
        return replace(state, table=MappingProxyType({}), trough=self._sort(set(state.trough) | set(state.table)), awaiting_rebreak=False)

    def _void(self, base: State, state: State, shot: Shot) -> BarBilliardsDecision:
        """2e: interference during the shot: no penalty, the balls are put back, the player plays again."""
        after = replace(base, shots=state.shots + 1)
        return self._decision(
            after, shot.t_s, shot.index, state.player, (), f"bar billiards 2e: interference - no penalty, the balls are put back; {state.player} plays again",
            ("2e",), points=0, pots=(), banked_now=0, lost_break=0, lost_banked=0, visit_over=False,
        )

    def _observe(self, state: State, shot: Shot, notes: tuple[str, ...]) -> _Outcome:
        """Everything the camera shows about the shot, as fouls and ball movements (not yet scored)."""
        p, opts = self.profile, state.options
        s = shot.struck
        kind = state.next_kind
        fouls: set[Foul] = set()
        notes_ = list(notes)
        pos = dict(shot.start.positions)
        placed = [e for e in shot.before if isinstance(e, BallPlaced) and e.ball == s and e.xy_mm is not None]
        s_xy = shot.start.xy_mm or pos.get(s) or (placed[-1].xy_mm if placed else None)
        if s not in state.table and s not in state.trough:
            raise RulesError(f"{GAME}: shot {shot.index} strikes {s}, which is neither on the table nor in the trough")
        # on the table: the balls at rest there, the struck one, and any ball the strike shows placed
        # from the trough (put in the D by hand, then another ball played)
        on: set[str] = set(state.table) | {s} | {b for b in shot.start.positions if b in state.trough}
        strike_fouls, strike_notes, obj, break_off = self._check_strike(state, shot, kind, s_xy, pos)
        fouls |= strike_fouls
        notes_ += strike_notes
        if obj is not None:
            on.add(obj)
        rules: list[str] = ["2b"] if kind == BREAK_OFF else ["2i"] if kind == ENDGAME else []

        # pins (2h, 3a a, 3b a)
        moved_pins: set[str] = set()
        for e in shot.events:
            if isinstance(e, (PinDown, PinMoved)):
                try:
                    pin = p.pin(e.pin)
                except KeyError as err:
                    raise RulesError(f"{GAME}: shot {shot.index}: {err.args[0]}") from None
                moved_pins.add(pin.id)
                if isinstance(e, PinDown):
                    fouls.add(Foul.BLACK_PIN if pin.penalty == "entire_score" else Foul.PIN_DOWN)
                    notes_.append(f"{'3a a' if pin.penalty == 'entire_score' else '3b a'}: the {pin.id} pin guarding {pin.guards} is down")

        # the cue and hands (3b g, 3b q; 2e excuses hand events between shots)
        excused = any(isinstance(e, Interference) for e in shot.before)
        for e in shot.events:
            if isinstance(e, CueContact):
                fouls.add(Foul.DOUBLE_HIT if e.ball == s else Foul.TOUCHED)
            elif isinstance(e, BallTouched):
                fouls.add(Foul.TOUCHED)
        if not excused and any(isinstance(e, BallTouched) and e.ball in state.table and e.ball != s for e in shot.before):
            fouls.add(Foul.TOUCHED)

        # pots (2f, 2g, 2i g) and balls off the table (2d, 2i f)
        counted: list[Pot] = []
        replaced: list[Pot] = []
        gone: dict[str, float] = {}
        seen: set[str] = set()
        contacts = [e for e in shot.events if isinstance(e, BallBall)]
        legal_endgame_pot = False
        for pot in pots_in_order(shot):
            if pot.ball not in self.ball_order:
                raise RulesError(f"{GAME}: shot {shot.index}: pot of unknown ball {pot.ball!r}")
            if pot.ball not in on:
                raise RulesError(f"{GAME}: shot {shot.index}: pot of {pot.ball}, which is not on the table")
            if pot.ball in seen:
                raise RulesError(f"{GAME}: shot {shot.index}: {pot.ball} is potted twice")
            try:
                p.hole(pot.pocket)
            except KeyError as err:
                raise RulesError(f"{GAME}: shot {shot.index}: {err.args[0]}") from None
            seen.add(pot.ball)
            moved = pot.ball == s or any(pot.ball in (c.a, c.b) and c.t_s <= pot.t_s for c in contacts)
            if not moved or pot.edge_wait_s > opts.edge_wait_s:
                replaced.append(pot)
                continue
            if kind == ENDGAME:
                if pot.pocket not in self.endgame_holes:
                    raise RulesError(f"{GAME}: endgame shot {shot.index}: hole {pot.pocket} is covered in the endgame (2i a)")
                # 2i d, e: a cushion before the drop; at one time stamp the log's order tells which came first
                upto = shot.events[:shot.events.index(pot)]
                real = [c for c in upto if isinstance(c, BallCushion) and c.ball == pot.ball and c.cushion != "scoreboard"]
                if not real:
                    fouls.add(Foul.ENDGAME_NO_CUSHION)
                else:
                    legal_endgame_pot = True
            counted.append(pot)
            gone[pot.ball] = pot.t_s
        back = {e.ball: e.t_s for e in shot.events if isinstance(e, Returned)}
        for e in shot.events:
            if isinstance(e, OffTable):
                if e.ball not in on:
                    raise RulesError(f"{GAME}: shot {shot.index}: {e.ball} leaves the table but was not on it")
                if kind == ENDGAME:
                    fouls.add(Foul.ENDGAME_OFF_TABLE)  # back or not (2i f); the ball stays in play
                elif back.get(e.ball, -1.0) < e.t_s and e.ball not in gone:
                    fouls.add(Foul.OFF_TABLE)
                    gone[e.ball] = e.t_s
        if kind == ENDGAME:
            if any(isinstance(e, BallCushion) and e.cushion == "scoreboard" for e in shot.events):
                fouls.add(Foul.ENDGAME_SCOREBOARD)
            if not counted and not any(isinstance(e, BallCushion) and e.ball == s and e.cushion != "scoreboard" for e in shot.events):
                fouls.add(Foul.ENDGAME_NOT_OFF_CUSHION)
        for e in shot.events:
            if isinstance(e, BallCushion) and e.cushion not in self.cushion_ids and e.cushion != "scoreboard":
                raise RulesError(f"{GAME}: shot {shot.index}: unknown cushion {e.cushion!r}")

        # where everything rests; balls in baulk go back (3b f)
        rest = dict(shot.end.positions) if shot.end is not None else {}
        table: dict[str, XY] = {}
        for b in self._sort(on):
            if b in gone:
                continue
            xy = rest.get(b) or pos.get(b) or state.table.get(b) or s_xy or p.d_centre_mm
            table[b] = xy
        to_trough = dict(gone)
        if shot.end is not None:
            in_baulk = [b for b, xy in table.items() if b in rest and self.in_baulk(xy)]
            if in_baulk:
                fouls.add(Foul.BAULK)
                notes_.append(f"3b f: {', '.join(in_baulk)} at rest in baulk")
                for b in in_baulk:
                    to_trough[b] = shot.end.t_s
                    del table[b]
        clock = state.clock_start_t_s if state.clock_start_t_s is not None else (shot.t_s if kind == BREAK_OFF else None)
        return _Outcome(
            kind=kind, struck=s, fouls=RULES.ordered(fouls), counted=tuple(counted), replaced=tuple(replaced),
            table=MappingProxyType(table), to_trough=tuple(to_trough.items()), notes=tuple(notes_), rules=tuple(rules),
            moved_pins=frozenset(moved_pins), break_off=break_off, clock_start_t_s=clock, legal_endgame_pot=legal_endgame_pot,
        )

    def _check_strike(self, state: State, shot: Shot, kind: str, s_xy: XY | None, pos: Mapping[str, XY]
                      ) -> tuple[set[Foul], list[str], str | None, BreakOff | None]:
        """The struck ball, where it was played from and what it hit first (2b, 2c, 2i c, 3b c-e, 3b j).

        Returns the fouls, their notes, the ball the break-off is played at (None otherwise) and the
        break-off's directions when it was legal."""
        p, opts = self.profile, state.options
        s = shot.struck
        fouls: set[Foul] = set()
        notes: list[str] = []
        obj: str | None = None
        break_off: BreakOff | None = None

        if kind == BREAK_OFF:
            # the object ball: the red; else (the wrong way round, or the red out of play) the ball the strike
            # shows on the spot, else the one ball the shot names, else any from the trough
            named = [b for e in shot.events for b in balls_involved(e) if b != s and b in state.trough]
            obj = "red" if "red" in state.trough and s != "red" else next(
                (b for b in pos if b != s and b in state.trough and math.dist(pos[b], p.spots["break"]) <= opts.centre_tolerance_mm),
                named[0] if len(set(named)) == 1 else next(b for b in state.trough if b != s),
            )
            reasons = []
            if s == "red":
                reasons.append("2b b 3: red and white the wrong way round")
            if s_xy is not None and math.dist(s_xy, p.d_centre_mm) > opts.centre_tolerance_mm:
                reasons.append(f"2b b 1: {s} not played from the centre of the D ({math.dist(s_xy, p.d_centre_mm):.0f} mm off)")
            fc = first_contact(shot, s)
            if fc is None or other(fc, s) != obj:
                reasons.append(f"2b b 2: {s} did not touch the {obj}" + (" (played into space)" if fc is None else f" first (hit {other(fc, s)})"))
            if reasons:
                fouls.add(Foul.FOUL_BREAK)
                notes += reasons
            else:
                break_off = self._break_off_directions(state.player, shot, s, obj, pos, fc)
                run = state.break_offs[-3:]
                if len(run) == 3 and all(break_off.same_as(b, opts.same_break_off_degrees) for b in run):
                    fouls.add(Foul.SAME_BREAK_OFF)
                    notes.append("2b d: the same break-off a fourth time in a row")
        elif kind == ENDGAME:
            last = state.in_play
            if s not in last:
                raise RulesError(f"{GAME}: endgame shot {shot.index} strikes {s}, but the last ball is {', '.join(last)}")
            if s_xy is not None and math.dist(s_xy, p.d_centre_mm) > opts.centre_tolerance_mm:
                fouls.add(Foul.NOT_FROM_D_CENTRE)
        else:
            if kind == FROM_D:
                if "red" in state.trough and s != "red":
                    fouls.add(Foul.RED_NOT_PLAYED)
                    notes.append(f"2c c: {s} played while the red is in the trough")
                elif s not in state.trough:
                    fouls.add(Foul.WRONG_BALL)
                    notes.append(f"2c b: {s} taken from the table while the trough has a ball")
            else:
                nearest = self.nearest_to_baulk(state.table, opts.tie_mm)
                if s not in nearest:
                    fouls.add(Foul.WRONG_BALL)
                    notes.append(f"2c c: {s} played, but the ball nearest the baulk line is {' or '.join(nearest)}")
            if s_xy is not None and not p.in_d(s_xy, opts.d_tolerance_mm):
                fouls.add(Foul.NOT_FROM_D)
            if first_contact(shot, s) is None:
                fouls.add(Foul.MISS)

        return fouls, notes, obj, break_off

    def _break_off_directions(self, player: str, shot: Shot, white: str, red: str, pos: Mapping[str, XY], contact: BallBall) -> BreakOff:
        """2b d: the direction each ball leaves in (see the module docstring)."""
        red_start = pos.get(red) or self.profile.spots["break"]
        white_start = contact.xy_mm or pos.get(white)
        return BreakOff(
            player,
            self._leave_deg(shot, white, white_start, contact.t_s),
            self._leave_deg(shot, red, red_start, contact.t_s),
        )

    @staticmethod
    def _leave_deg(shot: Shot, ball: str, start: XY | None, after_t_s: float) -> float | None:
        if start is None:
            return None
        target = None
        for e in shot.events:
            if e.t_s <= after_t_s or getattr(e, "xy_mm", None) is None:
                continue
            if isinstance(e, BallBall) and ball in (e.a, e.b) or isinstance(e, (BallCushion, Pot, OffTable)) and e.ball == ball:
                target = e.xy_mm
                break
        if target is None and shot.end is not None:
            target = shot.end.positions.get(ball)
        if target is None or math.dist(target, start) < 1.0:
            return None
        return math.degrees(math.atan2(target[1] - start[1], target[0] - start[0]))

    # ---- scoring and the next state -------------------------------------------------------------------
    def _bar_down_at(self, state: State, clock_start: float | None, t_s: float) -> bool:
        if state.bar_down:  # a ball that left play before the bar dropped (mid-shot) still went back to the trough
            return state.bar_t_s is None or t_s >= state.bar_t_s
        return clock_start is not None and t_s >= clock_start + state.options.clock_minutes * 60.0

    def _score(self, state: State, shot: Shot, o: _Outcome) -> BarBilliardsDecision:
        p = self.profile
        player = state.player
        side = state.side_of(player)
        fouls = o.fouls
        foul = bool(fouls)
        entire = any(f in ENTIRE_SCORE for f in fouls)
        rules = list(o.rules)
        pots_txt = []
        points = 0
        for pot in o.counted:
            pts = self.points_of(pot.ball, pot.pocket)
            points += pts
            pots_txt.append(f"{pot.ball} {pot.pocket} +{pts}")
        for pot in o.replaced:
            why = "2f b: dropped after the edge wait" if pot.edge_wait_s > state.options.edge_wait_s else "2f a: it had not moved"
            pots_txt.append(f"{pot.ball} {pot.pocket} replaced ({why})")
            rules.append("2f")
        table = dict(o.table)
        to_trough = list(o.to_trough)
        end_t = shot.end.t_s if shot.end is not None else shot.events[-1].t_s

        if o.kind == ENDGAME and foul:
            # the last ball stays in play for the opponent's endgame shot (module docstring)
            table = {o.struck: p.d_centre_mm}
            to_trough = [(b, t) for b, t in to_trough if b != o.struck]

        banked = dict(state.banked)
        lost_break = lost_banked = banked_now = 0
        continues = not foul and bool(o.counted) and o.kind != ENDGAME
        if foul:
            lost_break = state.break_score  # the shot's own pots never count
            points = 0
            if entire:
                lost_banked = banked[side]
                banked[side] = 0
            break_score = 0
            rules += [RULES.fouls[f] for f in fouls]
        elif continues:
            break_score = state.break_score + points
            rules += ["2b c", "2g"] if o.kind == BREAK_OFF and not o.table else ["2c a", "2g"]
        else:
            break_score = 0
            banked_now = state.break_score + points
            banked[side] += banked_now
            rules += ["2c d", "2g"] if o.kind != ENDGAME else ["2i b", "2g"]
        visit_over = not continues

        # pins are reset at the end of a visit; a ball on a pin's spot goes back (2h a)
        moved = state.pins_moved | o.moved_pins
        if visit_over and o.kind != ENDGAME:
            r = p.ball_radius_mm
            for pin_id in sorted(moved):
                pin = p.pin(pin_id)
                for b, xy in list(table.items()):
                    if math.dist(xy, pin.xy_mm) < pin.radius_mm + r:
                        del table[b]
                        to_trough.append((b, end_t))
                        rules.append("2h a")
            moved = frozenset()

        # the trough and the clock (2g, 2i)
        trough = set(state.trough) - set(o.table) - {b for b, _ in o.to_trough} - {o.struck} - set(table)
        out = set(state.out)
        for b, t in to_trough:
            (out if self._bar_down_at(state, o.clock_start_t_s, t) else trough).add(b)
        bar_down = self._bar_down_at(state, o.clock_start_t_s, end_t)
        if bar_down and not state.bar_down:
            rules.append("2g")

        next_player = player if continues else state.next_after(player)
        after = replace(
            state,
            player=next_player, banked=MappingProxyType(banked), break_score=break_score, table=MappingProxyType(table),
            trough=self._sort(trough), out=self._sort(out), pins_moved=frozenset(moved),
            break_offs=(state.break_offs + (o.break_off,))[-3:] if continues and o.break_off is not None else (),
            clock_start_t_s=o.clock_start_t_s, bar_down=bar_down,
            awaiting_rebreak=Foul.FOUL_BREAK in fouls, shots=state.shots + 1,
        )

        # the end of the frame (2i)
        end_note = ""
        remaining = after.in_play
        if o.legal_endgame_pot and not foul:
            after, end_note = self._end_frame(after, side, break_score, "2i g: the endgame ball is potted")
            rules.append("2i g")
        elif bar_down and not remaining:
            after, end_note = self._end_frame(after, side, break_score, "2i: every ball is potted")
            rules.append("2i")
        elif bar_down and len(remaining) == 1 and not after.endgame:
            scores = dict(after.banked)
            scores[side] += break_score
            gap = abs(scores[after.sides[0]] - scores[after.sides[1]])
            limit = ENDGAME_GAP_RED if remaining[0] == "red" else ENDGAME_GAP
            rules.append("2i")
            if gap <= limit:
                after = replace(after, endgame=True)
                end_note = f"2i: one ball left ({remaining[0]}), gap {gap} <= {limit}: endgame; {after.player} plays it from the centre of the D off a cushion"
            else:
                after, end_note = self._end_frame(after, side, break_score, f"2i: one ball left ({remaining[0]}), gap {gap} > {limit}: the frame is over")
                after = replace(after, endgame_invocable=True, ended_break=break_score)

        if after.frame_over:
            banked_now += after.banked[side] - banked[side] if not foul else 0
            visit_over = True

        rules_ = tuple(dict.fromkeys(rules))
        text = self._explain(state, o, fouls, rules_, break_score, banked_now, lost_break, lost_banked, after, end_note, pots_txt)
        return self._decision(
            after, shot.t_s, shot.index, player, fouls, text, rules_,
            points=points, pots=tuple(pots_txt), banked_now=banked_now, lost_break=lost_break, lost_banked=lost_banked,
            visit_over=visit_over,
        )

    def _end_frame(self, state: State, side: str, break_score: int, why: str) -> tuple[State, str]:
        banked = dict(state.banked)
        banked[side] += break_score
        a, b = state.sides
        winner = a if banked[a] > banked[b] else b if banked[b] > banked[a] else None
        result = f"{winner} wins {banked[winner]}-{min(banked.values())}" if winner else f"shared at {banked[a]}-{banked[b]}"
        return replace(state, banked=MappingProxyType(banked), break_score=0, frame_over=True, winner=winner, endgame=False), f"{why}; {result}"

    def _explain(self, state: State, o: _Outcome, fouls, rules, break_score, banked_now, lost_break, lost_banked,
                 after: State, end_note: str, pots_txt) -> str:
        who = state.player
        parts = []
        if fouls:
            names = ", ".join(f"{f.value} ({RULES.fouls[f]})" for f in fouls)
            loss = f"{who} loses the break of {lost_break}"
            if lost_banked or any(f in ENTIRE_SCORE for f in fouls):
                loss += f" and the entire banked score of {lost_banked} (3a)"
            parts.append(f"foul: {names} - {loss}")
        elif o.counted:
            parts.append(f"{', '.join(pots_txt)}" + (f"; break {break_score}" if o.kind != ENDGAME else ""))
        else:
            parts.append("no pot" + (f"; {who} banks {banked_now}" if banked_now else ""))
        parts += list(o.notes)
        if o.replaced and not fouls:
            parts += [t for t in pots_txt if "replaced" in t]
        if end_note:
            parts.append(end_note)
        elif after.awaiting_rebreak:
            parts.append(f"{after.player} chooses: re-break or play on (2b b)")
        else:
            parts.append(f"{after.player} {'plays on' if after.player == who else 'to play'}: {self._next_text(after)}")
        score = ", ".join(f"{k} {v}" for k, v in after.banked.items())
        return f"bar billiards {', '.join(rules)}: " + "; ".join(parts) + f" [banked: {score}]"

    def next_ball(self, state: State) -> str | None:
        """The ball the next shot must strike (2b, 2c c, 2i): ``white`` for a break-off or any white
        from the trough, ``red`` when it is in the trough, else the table ball nearest the baulk line."""
        kind = state.next_kind
        if kind == BREAK_OFF or (kind == FROM_D and "red" not in state.trough):
            return "white"
        if kind == FROM_D:
            return "red"
        if kind == ENDGAME:
            return state.in_play[0] if state.in_play else None
        nearest = self.nearest_to_baulk(state.table, state.options.tie_mm)
        return " or ".join(nearest) if nearest else None

    def _next_text(self, state: State) -> str:
        kind = state.next_kind
        if kind == BREAK_OFF:
            on_spot = "the red" if "red" in state.trough else "a white (the red is out of play)"
            return f"break-off ({on_spot} on the spot, a white from the centre of the D)"
        if kind == FROM_D:
            return "the red from the trough, in the D" if "red" in state.trough else "a white from the trough, in the D"
        if kind == ENDGAME:
            return f"the endgame ball ({self.next_ball(state)}) from the centre of the D"
        return f"the ball nearest the baulk line ({self.next_ball(state)}), in the D"

    def _decision(self, after: State, t_s: float, shot: int | None, player: str | None, fouls, text: str, rules,
                  **kw: Any) -> BarBilliardsDecision:
        kind = after.next_kind if not after.frame_over else None
        return BarBilliardsDecision(
            t_s=t_s, shot=shot, player=player, fouls=tuple(fouls),
            penalty=_penalty_text(fouls, kw.get("lost_break", 0), kw.get("lost_banked", 0)),
            next_player=None if after.frame_over else after.player, frame_over=after.frame_over, winner=after.winner,
            match_over=after.frame_over, match_winner=after.winner, explanation=text, rules=tuple(rules),
            break_score=after.break_score, banked=after.banked, trough=after.trough, out=after.out,
            bar_down=after.bar_down, endgame=after.endgame, next_kind=kind, next_ball=self.next_ball(after) if kind else None,
            after=after, **kw,
        )

    def _advance(self, state: State, decision: Decision) -> State:
        if not isinstance(decision, BarBilliardsDecision) or decision.after is None:
            raise RulesError(f"{GAME}: advance needs a decision made by this engine")
        return decision.after

    # ---- operator inputs ---------------------------------------------------------------------------
    def _on_input(self, state: State, event: OperatorInput) -> BarBilliardsDecision | None:
        """Inputs that act at once; the others (nomination, warning...) do nothing in bar billiards."""
        if isinstance(event, OperatorFoul):
            return self._operator_foul(state, event)
        if isinstance(event, RebreakChoice):
            if not state.awaiting_rebreak:
                raise RulesError(f"{GAME}: rebreak_choice at {event.t_s:g} s, but there was no foul break to choose after (2b b)")
            after = self._rebreak(state) if event.choice == "rebreak" else replace(state, awaiting_rebreak=False)
            return self._input_decision(state, after, event, f"bar billiards 2b b: {state.player} chooses to {'re-break' if event.choice == 'rebreak' else 'play on'}; {self._next_text(after)}", ("2b b",))
        if isinstance(event, BarDropped):
            if state.bar_down or state.frame_over:
                return None
            after = replace(state, bar_down=True, bar_t_s=event.t_s)
            return self._input_decision(state, after, event, "bar billiards 2g, 2i: the bar has dropped - potted balls no longer return to the trough", ("2g", "2i"))
        if isinstance(event, InvokeEndgame):
            return self._invoke_endgame(state, event)
        if isinstance(event, Concession):
            if state.frame_over:
                raise RulesError(f"{GAME}: {event.player} concedes at {event.t_s:g} s, after the frame ended")
            side = state.side_of(event.player)
            banked = dict(state.banked)
            lost = banked[side]
            banked[side] = 0
            winner = next(s for s in state.sides if s != side)
            after = replace(state, banked=MappingProxyType(banked), break_score=0, frame_over=True, winner=winner)
            return self._input_decision(
                state, after, event, f"bar billiards 3a d: {event.player} forfeits the frame and loses the entire score of {lost}; {winner} wins",
                ("3a d",), fouls=(Foul.UNSPORTING,), player=event.player, lost_banked=lost,
            )
        log.debug("bar billiards ignores operator input %s at %.2f s", event.kind, event.t_s)
        return None

    def _input_decision(self, state: State, after: State, event: OperatorInput, text: str, rules, *, fouls=(), player=None,
                        lost_break: int = 0, lost_banked: int = 0) -> BarBilliardsDecision:
        """A decision on an input."""
        return self._decision(after, event.t_s, None, player or state.player, fouls, text, rules,
                              lost_break=lost_break, lost_banked=lost_banked, visit_over=after.player != state.player)

    def _operator_foul(self, state: State, event: OperatorFoul) -> BarBilliardsDecision:
        """An operator's foul that does not concern the last shot's player: the player at the table
        loses the break and play passes (3b, e.g. 3b p: playing out of turn is the offender's foul);
        one away from the table loses only what an entire-score foul takes (3a)."""
        foul = RULES.foul_named(event.rule)
        side = state.side_of(event.player)
        if state.frame_over:
            raise RulesError(f"{GAME}: operator foul at {event.t_s:g} s after the frame ended, not on its last shot")
        banked = dict(state.banked)
        lost_banked = 0
        if foul in ENTIRE_SCORE:
            lost_banked = banked[side]
            banked[side] = 0
        if event.player == state.player:
            lost_break = state.break_score
            after = replace(state, banked=MappingProxyType(banked), break_score=0, player=state.next_after(state.player),
                            pins_moved=frozenset(), break_offs=())
            text = f"bar billiards {RULES.fouls[foul]}: foul {foul.value} by {event.player} - loses the break of {lost_break}" + (
                f" and the entire score of {lost_banked}" if foul in ENTIRE_SCORE else "") + f"; {after.player} to play: {self._next_text(after)}"
        else:
            lost_break = 0
            after = replace(state, banked=MappingProxyType(banked))
            text = f"bar billiards {RULES.fouls[foul]}: foul {foul.value} by {event.player}, who is not at the table" + (
                f" - loses the entire score of {lost_banked}" if foul in ENTIRE_SCORE else " - no break to lose")
        return self._input_decision(state, after, event, text, (RULES.fouls[foul],), fouls=(foul,), player=event.player,
                                    lost_break=lost_break, lost_banked=lost_banked)

    def _invoke_endgame(self, state: State, event: InvokeEndgame) -> BarBilliardsDecision:
        if not state.endgame_invocable:
            raise RulesError(f"{GAME}: {event.player} invokes the endgame at {event.t_s:g} s, but the frame did not end with one ball left over the gap (2i)")
        if state.side_of(event.player) != state.winner:
            raise RulesError(f"{GAME}: only the leader ({state.winner}) may invoke the endgame (2i), not {event.player}")
        # 2i b: the first endgame shot continues the visit of the player at the table, whose break the
        # frame's end had banked: it is at stake again (a foul loses it, a correct shot banks it)
        banked = dict(state.banked)
        banked[state.side_of(state.player)] -= state.ended_break
        after = replace(state, frame_over=False, winner=None, endgame=True, endgame_invocable=False, ended_break=0,
                        banked=MappingProxyType(banked), break_score=state.ended_break)
        return self._input_decision(state, after, event, f"bar billiards 2i, 2i b: {event.player} invokes the endgame; {after.player} plays the last "
                                    f"ball from the centre of the D off a cushion, continuing a break of {after.break_score}", ("2i", "2i b"), player=event.player)


# ---- helpers ---------------------------------------------------------------------------------------------


def _penalty_text(fouls, lost_break: int, lost_banked: int) -> str | None:
    if not fouls:
        return None
    if any(f in ENTIRE_SCORE for f in fouls):
        return f"loss of the entire score ({lost_banked} banked + {lost_break} break)"
    return f"loss of the break ({lost_break})"


def _describe(e: Event) -> str:
    fields_ = [str(v) for v in (getattr(e, k, None) for k in ("ball", "a", "b", "pocket", "cushion", "pin")) if v is not None]
    return " ".join([e.kind, *fields_])
