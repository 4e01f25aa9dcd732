"""4-pin bar billiards: one case per rule of the rulebook and per option, property tests over random
frames and a hand-written log replayed (the league match record: test_league.py)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as hs

from rules import get_engine
from rules.bar_billiards import (
    BREAK_OFF,
    ENDGAME,
    ENTIRE_SCORE,
    FROM_D,
    FROM_TABLE,
    PRECEDENCE,
    Foul,
)
from rules.base import RulesError, replay
from tests.rules._bar_billiards_helpers import (
    BALLS,
    D_CENTRE,
    ENGINE,
    IN_D,
    SPOT,
    WHITES,
    break_shot,
    feed,
    make_shot,
    make_state,
    play,
    referee_at,
)
from tracking.events import (
    Answer,
    BallRemoved,
    BallTouched,
    BarDropped,
    Concession,
    Interference,
    InvokeEndgame,
    OperatorFoul,
    Override,
    Pot,
    RebreakChoice,
    Unobserved,
    read_events,
)

DATA = Path(__file__).with_name("data")
F = Foul

# a table with three whites up the table, the red in the trough
MID = {"w1": (900, 300), "w2": (1200, 760), "w3": (1600, 380)}
NO_RED = {"red": (1000, 620), **MID}


def fresh():
    return ENGINE.initial_state(("A", "B"))


# ---- the table-driven cases --------------------------------------------------------------------------
# each case: a state, a shot built on it, and what the call must say (only the keys given are checked)

CASES = [
    # 2b break-off
    pytest.param(fresh, lambda s: break_shot(s, ("hit", "w1", "red"), ("pot", "red", "h50t")),
                 dict(fouls=(), points=100, break_score=100, next_player="A", next_kind=FROM_D, next_ball="red"),
                 id="2b a legal break, the red potted scores double (guide)"),
    pytest.param(fresh, lambda s: break_shot(s, ("hit", "w1", "red")),
                 dict(fouls=(), points=0, next_player="B", visit_over=True, next_kind=FROM_D),
                 id="2b a legal break, nothing potted: play passes"),
    pytest.param(fresh, lambda s: break_shot(s, ("hit", "w1", "red"), ("down", "white1")),
                 dict(fouls=(F.PIN_DOWN,), next_player="B", awaiting_rebreak=False),
                 id="2b a a legal break with a later foul is not a foul break"),
    pytest.param(fresh, lambda s: break_shot(s, ("hit", "w1", "red"), at=(520, 450)),
                 dict(fouls=(F.FOUL_BREAK,), next_player="B", awaiting_rebreak=True),
                 id="2b b 1 white not from the centre of the D"),
    pytest.param(fresh, lambda s: break_shot(s, ("cushion", "w1", "T")),
                 dict(fouls=(F.FOUL_BREAK,), next_player="B", awaiting_rebreak=True),
                 id="2b b 2 white played into space"),
    pytest.param(fresh, lambda s: make_shot(s, "red", ("hit", "red", "w1"), at=D_CENTRE, positions={"w1": SPOT}),
                 dict(fouls=(F.FOUL_BREAK,), next_player="B"),
                 id="2b b 3 red and white the wrong way round"),
    pytest.param(fresh, lambda s: break_shot(s, ("hit", "w1", "red"), ("pot", "red", "h100"), ("pot", "w1", "h50b")),
                 dict(fouls=(), points=250, break_score=250, next_player="A", next_kind=BREAK_OFF, rules=("2b", "2b c", "2g")),
                 id="2b c both balls potted: break off again"),
    pytest.param(lambda: make_state(), lambda s: break_shot(s, ("hit", "w1", "red"), at=(462, 452)),
                 dict(fouls=()), id="2b b 1 option centre_tolerance_mm: 12 mm off the centre is the centre"),
    pytest.param(lambda: make_state(options={"centre_tolerance_mm": 5}), lambda s: break_shot(s, ("hit", "w1", "red"), at=(462, 452)),
                 dict(fouls=(F.FOUL_BREAK,)), id="2b b 1 option centre_tolerance_mm=5: 12 mm off is a foul break"),
    # 2c continuous play
    pytest.param(lambda: make_state(table=NO_RED, break_score=100), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")),
                 dict(fouls=(), points=200, break_score=300, next_player="A", banked={"A": 0, "B": 0}),
                 id="2c a a pot continues the visit; the break grows, nothing banked yet (guide)"),
    pytest.param(lambda: make_state(table=NO_RED, break_score=300, banked={"A": 50}), lambda s: make_shot(s, "w4", ("hit", "w4", "w1")),
                 dict(fouls=(), banked_now=300, banked={"A": 350, "B": 0}, next_player="B", break_score=0, visit_over=True),
                 id="2c d a non-scoring shot ends the visit and banks the break (guide)"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), at=(420, 450)),
                 dict(fouls=(F.NOT_FROM_D,), next_player="B"), id="2c b 3b c a ball cued from outside the D"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), at=(595, 450)),
                 dict(fouls=()), id="2c b anywhere in the D: on its arc's edge"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), at=IN_D),
                 dict(fouls=(F.WRONG_BALL,)), id="2c b a table ball played while the trough has balls"),
    pytest.param(lambda: make_state(table=MID), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")),
                 dict(fouls=(F.RED_NOT_PLAYED,), points=0, next_player="B", lost_break=0, trough_has="w1"),
                 id="2c c 3b e a white played while the red is in the trough"),
    pytest.param(lambda: make_state(table=MID), lambda s: make_shot(s, "red", ("hit", "red", "w1")),
                 dict(fouls=()), id="2c c the red from the trough first"),
    pytest.param(lambda: make_state(table={**NO_RED, "w4": (700, 200), "w5": (1300, 600), "w6": (1500, 300), "w7": (1700, 700)}, trough=()),
                 lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), at=IN_D),
                 dict(fouls=(), next_kind=FROM_TABLE, next_ball="w4"), id="2c c trough empty: the ball nearest the baulk line"),
    pytest.param(lambda: make_state(table={**NO_RED, "w4": (700, 200), "w5": (1300, 600), "w6": (1500, 300), "w7": (1700, 700)}, trough=()),
                 lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), at=IN_D),
                 dict(fouls=(F.WRONG_BALL,)), id="2c c trough empty: not the nearest ball is a foul"),
    pytest.param(lambda: make_state(table={**NO_RED, "w4": (700, 150), "w5": (700.5, 440), "w6": (1500, 300), "w7": (1700, 700)}, trough=()),
                 lambda s: make_shot(s, "w5", ("hit", "w5", "w1"), at=IN_D),
                 dict(fouls=()), id="2c c tie on the baulk distance: the ball nearest the D's centre"),
    pytest.param(lambda: make_state(table={**NO_RED, "w4": (700, 150), "w5": (700.5, 440), "w6": (1500, 300), "w7": (1700, 700)}, trough=()),
                 lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), at=IN_D),
                 dict(fouls=(F.WRONG_BALL,)), id="2c c tie on the baulk distance: the other one is a foul"),
    pytest.param(lambda: make_state(options={"tie_mm": 0}, table={**NO_RED, "w4": (700, 150), "w5": (700.5, 440), "w6": (1500, 300), "w7": (1700, 700)}, trough=()),
                 lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), at=IN_D),
                 dict(fouls=()), id="2c c option tie_mm=0: 0.5 mm nearer is nearer"),
    # 2d off the table
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("off", "w1")),
                 dict(fouls=(F.OFF_TABLE,), next_player="B", trough_has="w1"), id="2d 3b h a ball off the table goes to the trough"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("off", "w1"), ("back", "w1")),
                 dict(fouls=(), next_player="B"), id="2d a back by its own means off the rail: no foul"),
    pytest.param(lambda: make_state(table=NO_RED, bar_down=True), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("off", "w1")),
                 dict(fouls=(F.OFF_TABLE,), out_has="w1"), id="2d after the bar: the ball off the table is out of play"),
    # 2f balls dropping
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t"), ("pot", "w3", "h10")),
                 dict(fouls=(), points=50, table_has="w3", next_player="A"), id="2f a a stationary ball drops: replaced, no score"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t", 4.0)),
                 dict(fouls=(), points=50), id="2f b on the edge, dropped within 5 s: counts"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t", 6.0)),
                 dict(fouls=(), points=0, table_has="w1", next_player="B"), id="2f b after more than 5 s: stationary, replaced"),
    pytest.param(lambda: make_state(options={"edge_wait_s": 8}, table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t", 6.0)),
                 dict(fouls=(), points=50), id="2f b option edge_wait_s=8: 6 s counts"),
    # 2g scoring
    pytest.param(lambda: make_state(table=MID), lambda s: make_shot(s, "red", ("hit", "red", "w1"), ("pot", "red", "h200")),
                 dict(points=400), id="2g the red scores double"),
    pytest.param(lambda: make_state(table=NO_RED, bar_down=True), lambda s: make_shot(s, "w4", ("hit", "w4", "red"), ("pot", "red", "h30"), ("pot", "w4", "h60")),
                 dict(points=120, out_has="red"), id="2g after the bar the red still scores double, but stays down"),
    # 2h pins
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("moved", "red"), ("pot", "w1", "h50t")),
                 dict(fouls=(), pins_moved={"red"}), id="2h a pin moved but standing: no foul, not reset during the visit"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("moved", "red"), rest={"w1": (1345, 450)}),
                 dict(fouls=(), trough_has="w1", pins_moved=set()), id="2h a at the visit's end a ball on the pin's spot goes to the trough"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("moved", "red"), rest={"w1": (1345, 410)}),
                 dict(fouls=(), table_has="w1"), id="2h b a ball touching the pin off its spot stays"),
    pytest.param(lambda: make_state(table=NO_RED, break_score=150, banked={"A": 300}), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("down", "red")),
                 dict(fouls=(F.PIN_DOWN,), lost_break=150, banked={"A": 300, "B": 0}, next_player="B"), id="2h 3b a a pin other than the black: the break is lost"),
    pytest.param(lambda: make_state(table=NO_RED, break_score=150, banked={"A": 300}), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("down", "black")),
                 dict(fouls=(F.BLACK_PIN,), lost_break=150, lost_banked=300, banked={"A": 0, "B": 0}), id="2h 3a a the black pin: the entire score (guide)"),
    pytest.param(lambda: make_state(table=NO_RED, break_score=150, banked={"A": 300}), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("down", "white1"), ("down", "black")),
                 dict(fouls=(F.BLACK_PIN, F.PIN_DOWN), banked={"A": 0, "B": 0}), id="3 general two pins: the highest penalty applies"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("down", "nosuch")),
                 RulesError, id="2h an unknown pin id is an impossible log"),
    # 3b
    pytest.param(lambda: make_state(table=NO_RED, break_score=80), lambda s: make_shot(s, "w4", ("cushion", "w4", "R")),
                 dict(fouls=(F.MISS,), lost_break=80, next_player="B"), id="3b d a miss (guide)"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (440, 300)}),
                 dict(fouls=(F.BAULK,), trough_has="w4"), id="3b f a ball back behind the baulk line"),
    # 3b f: "touching" is where the ball meets the cloth, under its centre; these two were fouls
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (470, 150)}),
                 dict(fouls=(), table_has="w4"), id="3b f a ball overhanging the baulk line, its centre up the table: in play"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (615, 450)}),
                 dict(fouls=(), table_has="w4"), id="3b f a ball overhanging the D's arc, its centre outside the D: in play"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (450, 150)}),
                 dict(fouls=(F.BAULK,), trough_has="w4"), id="3b f a ball whose centre is on the baulk line touches it"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (590, 450)}),
                 dict(fouls=(F.BAULK,), trough_has="w4"), id="3b f a ball whose centre is inside the D touches it"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), rest={"w4": (630, 450)}),
                 dict(fouls=()), id="3b f just clear of the D's arc: in play"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("cue", "w4")),
                 dict(fouls=(F.DOUBLE_HIT,)), id="3b q the cue touches the ball twice"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("touch", "w2")),
                 dict(fouls=(F.TOUCHED,)), id="3b g a ball moved without a cause"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), before=[BallTouched(t_s=5.0, ball="w2")]),
                 dict(fouls=(F.TOUCHED,)), id="3b g a ball in play touched between shots"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), before=[BallTouched(t_s=5.0, ball="w2"), Interference(t_s=5.5)]),
                 dict(fouls=()), id="2e a ball moved by someone else between shots: no penalty"),
    pytest.param(lambda: make_state(table=NO_RED, break_score=100), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("down", "black"), before=[Interference(t_s=10.05)]),
                 dict(fouls=(), points=0, next_player="A", break_score=100, banked={"A": 0, "B": 0}, trough_has="w4"),
                 id="2e interference during the shot: void, balls put back, plays again"),
    # 2i the endgame
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True, banked={"A": 300, "B": 200}),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "T"), ("pot", "w1", "h100"), at=D_CENTRE),
                 dict(fouls=(), points=100, frame_over=True, winner="A", banked={"A": 400, "B": 200}, match_over=True),
                 id="2i d g off a cushion into the 100: the frame ends"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True, banked={"A": 300, "B": 200}),
                 lambda s: make_shot(s, "w1", ("pot", "w1", "h200"), at=D_CENTRE),
                 dict(fouls=(F.ENDGAME_NO_CUSHION,), lost_banked=300, banked={"A": 0, "B": 200}, frame_over=False, next_player="B", table_has="w1"),
                 id="2i e 3a b potted without a cushion: the entire score"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True, banked={"A": 300, "B": 200}),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "scoreboard"), ("cushion", "w1", "T"), at=D_CENTRE),
                 dict(fouls=(F.ENDGAME_SCOREBOARD,), next_player="B"), id="2i f the scoreboard's edge"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "T"), ("off", "w1"), ("back", "w1"), at=D_CENTRE),
                 dict(fouls=(F.ENDGAME_OFF_TABLE,), table_has="w1"), id="2i f leaving the table, even coming back"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "T"), at=IN_D),
                 dict(fouls=(F.NOT_FROM_D_CENTRE,)), id="2i c 3b j the endgame ball not from the centre of the D"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True),
                 lambda s: make_shot(s, "w1", at=D_CENTRE),
                 dict(fouls=(F.ENDGAME_NOT_OFF_CUSHION,)), id="2i d e an endgame shot off no cushion"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True, break_score=60, banked={"A": 100}),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "T"), ("cushion", "w1", "B"), at=D_CENTRE),
                 dict(fouls=(), banked={"A": 160, "B": 0}, next_player="B", endgame=True, frame_over=False),
                 id="2i b played correctly, not holed: the break is kept; play swaps"),
    pytest.param(lambda: make_state(table={"w1": (900, 300)}, trough=(), out=("red", *WHITES[1:]), bar_down=True, endgame=True),
                 lambda s: make_shot(s, "w1", ("cushion", "w1", "T"), ("pot", "w1", "h10"), at=D_CENTRE),
                 RulesError, id="2i a the back row is covered in the endgame"),
    pytest.param(lambda: make_state(table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]), bar_down=True, banked={"A": 300, "B": 150}),
                 lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h50t")),
                 dict(fouls=(), endgame=True, next_player="A", frame_over=False, next_kind=ENDGAME, next_ball="w1"),
                 id="2i one ball left, gap 200 or less: endgame, the player's visit continues"),
    pytest.param(lambda: make_state(table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]), bar_down=True, banked={"A": 300, "B": 150}),
                 lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h200")),
                 dict(fouls=(), endgame=False, frame_over=True, winner="A", banked={"A": 500, "B": 150}),
                 id="2i one white left, gap over 200: the frame is over"),
    pytest.param(lambda: make_state(table={"red": (900, 300), "w2": (1200, 760)}, trough=(), out=WHITES[:1] + WHITES[2:], bar_down=True, banked={"A": 300, "B": 0}),
                 lambda s: make_shot(s, "red", ("hit", "red", "w2"), ("pot", "w2", "h50t")),
                 dict(fouls=(), endgame=True, frame_over=False), id="2i the red left, gap 350 (400 or less): endgame"),
    pytest.param(lambda: make_state(table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]), bar_down=True, banked={"A": 300, "B": 300}),
                 lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h10"), ("pot", "w1", "h20")),
                 dict(fouls=(), frame_over=True, winner="A", banked={"A": 330, "B": 300}), id="2i every ball potted: the highest banked score wins"),
    pytest.param(lambda: make_state(table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]), bar_down=True, banked={"A": 270, "B": 300}),
                 lambda s: make_shot(s, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h10"), ("pot", "w1", "h20")),
                 dict(fouls=(), frame_over=True, winner=None, banked={"A": 300, "B": 300}), id="2i tied scores: the frame is shared"),
    # the clock
    pytest.param(lambda: make_state(table=NO_RED, clock_start=0.0), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t"), t0=900.0),
                 dict(bar_down=True, out_has="w1"), id="2g clock 15 min from the first break-off: a pot after it stays down"),
    pytest.param(lambda: make_state(table=NO_RED, clock_start=0.0), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t"), t0=800.0),
                 dict(bar_down=False, trough_has="w1"), id="2g before the clock runs out a pot returns to the trough"),
    pytest.param(lambda: make_state(options={"clock_minutes": 14}, table=NO_RED, clock_start=0.0),
                 lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t"), t0=845.0),
                 dict(bar_down=True, out_has="w1"), id="5 option clock_minutes=14"),
]


def _check(decision, after, expected):
    for key, want in expected.items():
        if key == "awaiting_rebreak":
            assert after.awaiting_rebreak is want
        elif key == "pins_moved":
            assert set(after.pins_moved) == want
        elif key == "trough_has":
            assert want in after.trough and want not in after.table
        elif key == "table_has":
            assert want in after.table
        elif key == "out_has":
            assert want in after.out and want not in after.trough
        elif key == "banked":
            assert dict(decision.banked) == want
        else:
            assert getattr(decision, key) == want, f"{key}: {decision.explanation}"


@pytest.mark.parametrize("make, shot_of, expected", CASES)
def test_rule(make, shot_of, expected):
    state = make()
    shot = shot_of(state)
    if expected is RulesError:
        with pytest.raises(RulesError):
            ENGINE.judge(state, shot)
        return
    decision, after = play(state, shot)
    assert decision.pending is None
    assert decision.explanation.startswith("bar billiards ")
    _check(decision, after, expected)
    assert set(after.table) | set(after.trough) | set(after.out) == set(BALLS)
    assert decision.fouls == tuple(f for f in PRECEDENCE if f in decision.fouls)


# ---- sequences --------------------------------------------------------------------------------------------


def _same_break_offs(state, n, red_xy=(1100, 450)):
    """n break-offs in a row, both balls potted, the same directions each time."""
    decisions = []
    for _ in range(n):
        shot = break_shot(state, ("hit", "w1", "red", (777, 450)), ("cushion", "red", "T", (1000, 0)),
                          ("cushion", "w1", "B", (1000, 900)), ("pot", "red", "h50t"), ("pot", "w1", "h50b"))
        d, state = play(state, shot)
        decisions.append(d)
    return decisions, state


def test_2b_d_the_same_break_off_a_fourth_time_is_a_foul():
    decisions, state = _same_break_offs(fresh(), 4)
    assert [d.fouls for d in decisions[:3]] == [(), (), ()]
    assert decisions[3].fouls == (F.SAME_BREAK_OFF,)
    assert decisions[2].break_score == 3 * 150 and decisions[3].lost_break == 3 * 150 and decisions[3].points == 0
    assert decisions[3].next_player == "B"


def test_2b_d_a_materially_different_break_off_resets_the_count():
    decisions, state = _same_break_offs(fresh(), 3)
    mirrored = break_shot(state, ("hit", "w1", "red", (777, 450)), ("cushion", "red", "B", (1000, 900)),
                          ("cushion", "w1", "T", (1000, 0)), ("pot", "red", "h50b"), ("pot", "w1", "h50t"))
    d, state = play(state, mirrored)
    assert d.fouls == ()
    more, _ = _same_break_offs(state, 1)
    assert more[0].fouls == ()  # only one of the original shot since the change


@pytest.mark.parametrize("degrees, foul", [pytest.param(10, False, id="2b d default 10 degrees: 20 degrees off is different"),
                                            pytest.param(25, True, id="2b d option same_break_off_degrees=25: 20 degrees off is the same")])
def test_2b_d_option_same_break_off_degrees(degrees, foul):
    state = ENGINE.initial_state(("A", "B"), {"same_break_off_degrees": degrees})
    _, state = _same_break_offs(state, 3)
    # the red leaves 20 degrees wider than before: from the spot (800, 450) towards the top cushion
    ang = math.atan2(0 - 450, 1000 - 800) - math.radians(20)  # the earlier red went from (800, 450) to (1000, 0)
    red_to = (800 + 400 * math.cos(ang), 450 + 400 * math.sin(ang))
    shot = break_shot(state, ("hit", "w1", "red", (777, 450)), ("cushion", "red", "T", red_to),
                      ("cushion", "w1", "B", (1000, 900)), ("pot", "red", "h50t"), ("pot", "w1", "h50b"))
    d, _ = play(state, shot)
    assert (d.fouls == (F.SAME_BREAK_OFF,)) is foul


def test_clock_starts_at_the_first_break_off():
    state = fresh()
    assert state.clock_start_t_s is None
    d, state = play(state, break_shot(state, ("hit", "w1", "red"), t0=42.0))
    assert state.clock_start_t_s == 42.0
    d, state = play(state, make_shot(state, "red", ("hit", "red", "w1"), t0=60.0))
    assert state.clock_start_t_s == 42.0


def test_2g_bar_dropped_input_overrides_the_clock():
    state = make_state(table=NO_RED, clock_start=0.0)
    d = ENGINE.on_input(state, BarDropped(t_s=30.0))
    assert d.bar_down and "2g" in d.rules
    state = ENGINE.advance(state, d)
    assert ENGINE.on_input(state, BarDropped(t_s=31.0)) is None
    d, state = play(state, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t"), t0=40.0))
    assert "w1" in state.out and d.points == 50


@pytest.mark.parametrize("choice, kind", [pytest.param("rebreak", BREAK_OFF, id="2b b the opponent re-breaks"),
                                           pytest.param("play_on", FROM_D, id="2b b the opponent plays on")])
def test_2b_b_opponent_chooses_after_a_foul_break(choice, kind):
    state = fresh()
    d, state = play(state, break_shot(state, ("cushion", "w1", "T")))
    assert d.fouls == (F.FOUL_BREAK,) and state.awaiting_rebreak
    d = ENGINE.on_input(state, RebreakChoice(t_s=20.0, choice=choice))
    state = ENGINE.advance(state, d)
    assert not state.awaiting_rebreak and state.next_kind == kind and state.player == "B"
    assert set(state.table) | set(state.trough) == set(BALLS)


def test_2b_b_the_choice_is_seen_from_the_set_up_when_not_entered():
    state = fresh()
    d, state = play(state, break_shot(state, ("cushion", "w1", "T")))
    rebreak = break_shot(state, ("hit", "w1", "red"), ("pot", "red", "h100"), white="w1")
    d, after = play(state, rebreak)
    assert "re-breaks" in d.explanation and d.fouls == () and d.points == 200
    with pytest.raises(RulesError):
        ENGINE.on_input(after, RebreakChoice(t_s=99.0, choice="rebreak"))


def test_2i_the_leader_may_invoke_the_endgame():
    state = make_state(table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]), bar_down=True, banked={"A": 300, "B": 150})
    d, state = play(state, make_shot(state, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h200")))
    assert d.frame_over and d.winner == "A"
    with pytest.raises(RulesError, match="only the leader"):
        ENGINE.on_input(state, InvokeEndgame(t_s=30.0, player="B"))
    d = ENGINE.on_input(state, InvokeEndgame(t_s=30.0, player="A"))
    state = ENGINE.advance(state, d)
    assert not d.frame_over and d.endgame and state.next_kind == ENDGAME
    d, state = play(state, make_shot(state, "w1", ("cushion", "w1", "T"), ("pot", "w1", "h100"), at=D_CENTRE, t0=40.0))
    assert d.frame_over and d.banked["A"] == 600


def test_3a_d_concession_forfeits_the_entire_score():
    state = make_state(table=NO_RED, banked={"A": 500, "B": 100})
    d = ENGINE.on_input(state, Concession(t_s=50.0, player="A"))
    assert d.frame_over and d.winner == "B" and d.fouls == (F.UNSPORTING,) and dict(d.banked) == {"A": 0, "B": 100}


def test_3b_operator_foul_after_the_shot_rejudges_it():
    """3b l a push on a potting shot: entered after the shot, the visit ends and the break is lost."""
    state = make_state(table=NO_RED, break_score=100)
    ref = referee_at(state)
    d = feed(ref, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")))
    assert d.next_player == "A" and d.break_score == 300
    d = feed(ref, OperatorFoul(t_s=16.0, player="A", rule="3b l"))
    state = ref.state
    assert d.fouls == (F.PUSH,) and d.lost_break == 100 and d.points == 0 and d.next_player == "B" and state.break_score == 0
    d = feed(ref, OperatorFoul(t_s=17.0, player="A", rule="3a c", note="deliberate"))
    assert set(d.fouls) == {F.DELIBERATE, F.PUSH} and d.fouls[0] == F.DELIBERATE


def test_3a_c_operator_foul_on_a_player_not_at_the_table():
    state = make_state(table=NO_RED, banked={"A": 100, "B": 400}, player="A")
    d = ENGINE.on_input(state, OperatorFoul(t_s=5.0, player="B", rule="deliberate"))
    assert dict(d.banked) == {"A": 100, "B": 0} and d.next_player == "A"
    with pytest.raises(RulesError, match="unknown foul"):
        ENGINE.on_input(state, OperatorFoul(t_s=5.0, player="B", rule="9z"))


def test_override_fouls_banked_and_next_player():
    state = make_state(table=NO_RED)
    ref = referee_at(state)
    d = feed(ref, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")))
    d = feed(ref, Override(t_s=20.0, field="fouls", value="miss", note="it never touched w1"))
    assert d.fouls == (F.MISS,) and d.next_player == "B" and d.explanation.startswith("override")
    d = feed(ref, Override(t_s=21.0, field="fouls", value="none"))
    assert d.fouls == () and d.break_score == 200 and d.next_player == "A"
    d = feed(ref, Override(t_s=22.0, field="banked", value="A=120,B=40"))
    assert dict(ref.state.banked) == {"A": 120, "B": 40}
    d = feed(ref, Override(t_s=23.0, field="next_player", value="B"))
    assert ref.state.player == "B"
    with pytest.raises(RulesError, match="accepts"):
        feed(ref, Override(t_s=24.0, field="winner", value="B"))


def test_pending_low_confidence_then_answered():
    state = make_state(table=NO_RED)
    shot = make_shot(state, "w4", ("hit", "w4", "w1"), Pot(t_s=10.3, ball="w1", pocket="h200", confidence=0.3))
    ref = referee_at(state)
    d = feed(ref, shot)
    assert d.pending is not None and d.pending.options == ("confirm", "discard") and "pot w1 h200" in d.pending.text
    pending = ref.state
    assert pending.table == state.table and pending.banked == state.banked
    with pytest.raises(RulesError, match="unanswered"):
        feed(ref, make_shot(pending, "w5", ("hit", "w5", "w2"), t0=30.0))
    yes = ENGINE.judge(state, shot.answered(d.pending.id, "confirm"))  # what either answer would call
    no = ENGINE.judge(state, shot.answered(d.pending.id, "discard"))
    assert yes.points == 200 and yes.next_player == "A"
    assert no.points == 0 and no.next_player == "B"
    with pytest.raises(RulesError):
        feed(ref, Answer(t_s=20.0, question=d.pending.id, answer="maybe"))
    assert feed(ref, Answer(t_s=20.0, question=d.pending.id, answer="confirm")) == yes


def test_pending_when_the_table_was_not_seen():
    state = make_state(table=NO_RED)
    shot = make_shot(state, "w4", ("hit", "w4", "w1"), before=[Unobserved(t_s=9.0, until_s=10.2, reason="arm over the table")])
    d = ENGINE.judge(state, shot)
    assert d.pending is not None and d.pending.options == ("confirm",)


def test_pending_when_the_balls_were_never_seen_at_rest():
    state = make_state(table=NO_RED)
    ref = referee_at(state)
    feed(ref, make_shot(state, "w4", ("hit", "w4", "w1"), end=False))
    d = ref.finish()[-1].decision
    assert d.pending is not None and "never seen at rest" in d.pending.text
    d = feed(ref, Answer(t_s=30.0, question=d.pending.id, answer="confirm"))
    assert d.pending is None and d.fouls == () and d.next_player == "B"


def test_3b_g_the_ball_being_retrieved_may_be_handled():
    table = {**NO_RED, "w4": (700, 200), "w5": (1300, 600), "w6": (1500, 300), "w7": (1700, 700)}
    state = make_state(table=table, trough=())
    d = ENGINE.judge(state, make_shot(state, "w4", ("hit", "w4", "w1"), before=[BallTouched(t_s=5.0, ball="w4")]))
    assert d.fouls == ()
    d = ENGINE.judge(state, make_shot(state, "w4", ("hit", "w4", "w1"), before=[BallTouched(t_s=5.0, ball="w5")]))
    assert d.fouls == (F.TOUCHED,)


def _unseen(shot, balls):
    """``shot`` as a camera that does not show ``balls`` at its start nor at rest logs it."""
    return replace(shot, events=tuple(replace(e, positions={b: xy for b, xy in e.positions.items() if b not in balls})
                                      if getattr(e, "positions", None) else e for e in shot.events))


def test_2g_a_white_named_out_of_play_is_the_white_taken_from_the_trough():
    """Whites cannot be told apart: the camera may call the white a player takes from the trough by
    the name of one potted after the bar dropped. That ball is the trough's white (2c b), and the frame
    goes on as if the camera had named it so."""
    state = make_state(table=NO_RED, trough=("w4", "w5"), out=("w6", "w7"), bar_down=True)
    shot = make_shot(state, "w7", ("hit", "w7", "w1"), ("pot", "w1", "h50t"))
    d = ENGINE.judge(state, shot)
    same = ENGINE.judge(state, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h50t")))
    assert d.fouls == same.fouls == () and d.next_player == same.next_player == "A"
    assert d.break_score == same.break_score == 50
    after = ENGINE.advance(state, d)
    # seven whites and the red, each once; w7 (played) is on the table, a trough white is out instead
    assert "w7" in after.table and "w7" not in after.out and "w1" in after.out
    assert len(after.out) == 3 and sorted(after.out + after.trough + tuple(after.table)) == sorted(BALLS)


def test_2g_a_white_named_out_of_play_keeps_the_whites_the_shot_names():
    """The trough white it stands for is one the shot does not name itself."""
    state = make_state(table={"red": (1000, 620), "w1": (900, 300)}, trough=("w2", "w3"), out=("w4", "w5", "w6", "w7"),
                       bar_down=True)
    shot = make_shot(state, "w7", ("hit", "w7", "w1"), positions={"w2": (1200, 760)})  # w2 put on the table by hand
    after = ENGINE.advance(state, ENGINE.judge(state, shot))
    assert "w3" in after.out and "w2" in after.table and "w7" in after.table


def test_2g_a_white_named_out_of_play_with_the_trough_empty_is_the_table_white_the_camera_names_so():
    """No white in the trough: the white the camera calls by an out-of-play name is the one the state
    has on the table and the shot's start does not show under its own name (2c c: the ball nearest the
    baulk line, lifted into the D)."""
    table = {"red": (1000, 620), "w1": (900, 300), "w2": (1200, 760), "w3": (1600, 380)}
    state = make_state(table=table, trough=(), out=("w4", "w5", "w6", "w7"), bar_down=True)
    shot = make_shot(state, "w7", ("hit", "w7", "w2"))  # w1, lifted into the D, is seen there as "w7"
    shot = _unseen(shot, {"w1"})
    d = ENGINE.judge(state, shot)
    assert d.pending is None and d.fouls == ()
    after = ENGINE.advance(state, d)
    assert "w1" in after.out and "w7" not in after.out and "w7" in after.table


def test_2g_a_white_named_out_of_play_is_the_white_a_hand_lifted_from_the_table():
    """Of the table whites the shot's start does not show, the one a hand lifted before it is the one
    the camera sees again in the D under an out-of-play name."""
    table = {"red": (1000, 620), "w1": (900, 300), "w2": (1200, 760), "w3": (1600, 380)}
    state = make_state(table=table, trough=(), out=("w4", "w5", "w6", "w7"), bar_down=True)
    shot = make_shot(state, "w7", ("hit", "w7", "w2"), before=[BallRemoved(t_s=5.0, ball="w3", xy_mm=(1600.0, 380.0))])
    hidden = {"w1", "w3"}  # w3 lifted into the D; w1 under the player's arm at the strike
    shot = _unseen(shot, hidden)
    after = ENGINE.advance(state, ENGINE.judge(state, shot))
    assert "w3" in after.out and "w1" in after.table and "w7" in after.table


@pytest.mark.parametrize("state_of, shot_of, match", [
    pytest.param(lambda: make_state(table=NO_RED, frame_over=True), lambda s: make_shot(s, "w4", ("hit", "w4", "w1")), "after the frame ended", id="a shot after the frame"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w9", ("hit", "w9", "w1")), "unknown ball", id="an unknown ball"),
    pytest.param(lambda: make_state(table=NO_RED, trough=(), out=("w4", "w5", "w6", "w7"), bar_down=True),
                 lambda s: make_shot(s, "w7", ("hit", "w7", "w1")), "out of play", id="a ball out of play, no white in the trough"),
    pytest.param(lambda: make_state(table=MID, trough=("red",), out=("w4", "w5", "w6", "w7"), bar_down=True),
                 lambda s: make_shot(s, "w7", ("hit", "w7", "w1")), "out of play", id="a white out of play, only the red in the trough"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w6", "h10")), "not on the table", id="a pot of a ball in the trough"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h999")), "no hole", id="an unknown hole"),
    pytest.param(lambda: make_state(table=NO_RED), lambda s: make_shot(s, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h10"), ("pot", "w1", "h20")), "twice", id="a ball potted twice"),
])
def test_impossible_logs(state_of, shot_of, match):
    state = state_of()
    with pytest.raises(RulesError, match=match):
        ENGINE.judge(state, shot_of(state))


def test_options_are_parsed_and_recorded():
    state = ENGINE.initial_state(("A", "B"), {"clock_minutes": "16", "same_break_off_degrees": 12})
    assert state.options.clock_minutes == 16.0 and state.options.same_break_off_degrees == 12.0
    with pytest.raises(RulesError, match="unknown option"):
        ENGINE.initial_state(("A", "B"), {"clock": 15})
    with pytest.raises(RulesError, match="positive"):
        ENGINE.initial_state(("A", "B"), {"clock_minutes": 0})
    with pytest.raises(RulesError):
        ENGINE.initial_state(("A",))
    assert get_engine("bar-billiards").name == "bar-billiards"


def test_doubles_partners_share_a_score_and_alternate():
    state = ENGINE.initial_state(("A1", "B1", "A2", "B2"))
    assert state.sides == ("A1 & A2", "B1 & B2")
    d, state = play(state, break_shot(state, ("hit", "w1", "red"), ("pot", "red", "h50t")))
    d, state = play(state, make_shot(state, "red", ("hit", "red", "w1")))
    assert dict(d.banked) == {"A1 & A2": 100, "B1 & B2": 0} and d.next_player == "B1"
    d, state = play(state, make_shot(state, "w2", ("cushion", "w2", "R")))
    assert d.next_player == "A2"


def test_precedence_lists_the_entire_score_fouls_first():
    n = len(ENTIRE_SCORE)
    assert set(PRECEDENCE[:n]) == ENTIRE_SCORE and len(PRECEDENCE) == len(set(PRECEDENCE)) == len(Foul)
    assert all(f.value == f.value.lower() and " " not in f.value for f in Foul)


# ---- the hand-written log ---------------------------------------------------------------------------------


def test_replay_a_hand_written_frame():
    header, events = read_events(DATA / "bar_billiards_frame.jsonl")
    steps = list(replay(ENGINE, events, header.players, header.options))
    calls = [(s.decision.player, s.decision.fouls, s.decision.points, dict(s.decision.banked), s.decision.next_player) for s in steps]
    assert calls == [
        ("A", (), 100, {"A": 0, "B": 0}, "A"),  # 2b a: the red in a 50 hole, double
        ("A", (), 200, {"A": 0, "B": 0}, "A"),  # 2c c: the red first; a white in the 200
        ("A", (), 0, {"A": 300, "B": 0}, "B"),  # 2c d: no pot, the break of 300 banked
        ("B", (), 20, {"A": 300, "B": 0}, "B"),  # the red in the 10: 20
        ("B", (F.RED_NOT_PLAYED,), 0, {"A": 300, "B": 0}, "A"),  # 3b e: a white while the red is in the trough
        ("A", (F.BLACK_PIN,), 0, {"A": 0, "B": 0}, "B"),  # 3a a: the black pin
        ("B", (), 0, {"A": 0, "B": 0}, "B"),  # bar_dropped input
        ("B", (), 200, {"A": 0, "B": 0}, "B"),  # 2g: the red still double, now out of play
        ("B", (F.MISS,), 0, {"A": 0, "B": 0}, "A"),  # 3b d
    ]
    final = steps[-1].state
    assert "red" in final.out and final.bar_down
    assert set(final.table) | set(final.trough) | set(final.out) == set(BALLS)


def test_replay_a_hand_written_endgame():
    """The bar drops early, break-offs with two whites once the red is out, a frame over on the gap,
    the leader's endgame, a doubtful cushion discarded by the operator (3a b), a legal endgame pot."""
    header, events = read_events(DATA / "bar_billiards_endgame.jsonl")
    steps = list(replay(ENGINE, events, header.players, header.options))
    calls = [(s.decision.shot, s.decision.player, s.decision.fouls, s.decision.points, dict(s.decision.banked),
              s.decision.next_player, s.decision.frame_over, s.decision.winner, s.decision.pending is not None) for s in steps]
    assert calls == [
        (0, "A", (), 250, {"A": 0, "B": 0}, "A", False, None, False),  # 2b c: both potted
        (None, "A", (), 0, {"A": 0, "B": 0}, "A", False, None, False),  # bar_dropped
        (1, "A", (), 400, {"A": 0, "B": 0}, "A", False, None, False),
        (2, "A", (), 30, {"A": 0, "B": 0}, "A", False, None, False),
        (3, "A", (), 70, {"A": 0, "B": 0}, "A", False, None, False),  # a break-off with two whites
        (4, "A", (), 60, {"A": 0, "B": 0}, "A", False, None, False),
        (5, "A", (), 50, {"A": 860, "B": 0}, None, True, "A", False),  # 2i: gap over 200
        (None, "A", (), 0, {"A": 0, "B": 0}, "A", False, None, False),  # 2i: the leader invokes the endgame; 2i b: A's break of 860 goes on
        (6, "A", (), 0, {"A": 0, "B": 0}, None, False, None, True),  # pending: the cushion is doubtful
        (6, "A", (F.ENDGAME_NO_CUSHION,), 0, {"A": 0, "B": 0}, "B", False, None, False),  # answered: 3a b
        (7, "B", (), 100, {"A": 0, "B": 100}, None, True, "B", False),  # 2i g
    ]
    assert set(steps[-1].state.out) == set(BALLS)


def test_cueref_judge_checks_the_frame_against_expected_decisions(tmp_path, capsys):
    from cueref.cli import main

    expected = [
        {"shot": 0, "fouls": [], "next_player": "A"},
        {"shot": 4, "fouls": ["red_not_played"], "next_player": "A"},
        {"shot": 5, "fouls": ["black_pin"], "next_player": "B", "frame_over": False},
        {"shot": 7, "fouls": ["miss"], "next_player": "A"},
    ]
    truth = tmp_path / "frame.expected.json"
    truth.write_text(json.dumps({"expected_decisions": expected}))
    assert main(["judge", str(DATA / "bar_billiards_frame.jsonl"), "--check", str(truth)]) == 0
    expected[3]["fouls"] = []
    truth.write_text(json.dumps({"expected_decisions": expected}))
    assert main(["judge", str(DATA / "bar_billiards_frame.jsonl"), "--check", str(truth)]) == 1
    assert "shot 7: fouls" in capsys.readouterr().err


# ---- property tests ------------------------------------------------------------------------------------


HOLES = tuple(h.id for h in ENGINE.profile.holes)


@settings(max_examples=60, deadline=None)
@given(hs.data())
def test_properties_over_random_frames(data):
    """Banked scores change only at the end of a visit; a black-pin foul always zeroes the offender; the
    trough, the table and the balls out of play always hold all eight balls, each once."""
    state = ENGINE.initial_state(("A", "B"), {"clock_minutes": 1.0})
    t = 0.0
    for _ in range(45):
        if state.frame_over:
            break
        t += data.draw(hs.floats(2.0, 9.0))
        if data.draw(hs.integers(0, 30)) == 0 and not state.bar_down:
            d = ENGINE.on_input(state, BarDropped(t_s=t))
            state = ENGINE.advance(state, d)
            t += 0.5
        kind = state.next_kind
        positions = {}
        if kind == BREAK_OFF:
            ball = next(b for b in state.trough if b != "red")
            obj = "red" if "red" in state.trough else next(b for b in state.trough if b != ball)
            at, positions = D_CENTRE, {obj: SPOT}
        elif kind == FROM_D:
            ball = "red" if "red" in state.trough else data.draw(hs.sampled_from(state.trough))
            at = IN_D
        elif kind == FROM_TABLE:
            ball, at = ENGINE.nearest_to_baulk(state.table, state.options.tie_mm)[0], IN_D
        else:
            ball, at = state.in_play[0], D_CENTRE
        targets = [b for b in {**state.table, **positions} if b != ball]
        steps = []
        hit = [data.draw(hs.sampled_from(targets))] if targets and data.draw(hs.integers(0, 5)) > 0 else []
        steps += [("hit", ball, b) for b in hit]
        if kind == ENDGAME and data.draw(hs.booleans()):
            steps.append(("cushion", ball, "T"))
        pin = data.draw(hs.sampled_from([None] * 6 + ["black", "red", "white1"]))
        if pin:
            steps.append(("down", pin))
        potted = [b for b in hit + [ball] if data.draw(hs.integers(0, 2)) > 0]
        for b in potted:
            steps.append(("pot", b, data.draw(hs.sampled_from(sorted(ENGINE.endgame_holes) if kind == ENDGAME else HOLES))))
        up = [b for b in {**state.table, **positions, ball: at} if b not in potted]
        rest = {b: (data.draw(hs.floats(380.0, 1900.0)), data.draw(hs.floats(40.0, 860.0))) for b in up}
        shot = make_shot(state, ball, *steps, at=at, positions=positions, rest=rest, t0=t)
        t += 1.0 + 0.1 * len(steps)
        side = state.side_of(state.player)
        decision = ENGINE.judge(state, shot)
        after = ENGINE.advance(state, decision)
        if decision.banked != state.banked:
            assert decision.visit_over or decision.frame_over, decision.explanation
        if not decision.visit_over:
            assert after.banked == state.banked and after.player == state.player
        if pin == "black":
            assert after.banked[side] == 0 and F.BLACK_PIN in decision.fouls
        if data.draw(hs.integers(0, 12)) == 0:  # the referee calls a deliberate foul on that shot (3a c): judged again
            decision = ENGINE.judge(state, shot.corrected(OperatorFoul(t_s=t, player=state.player, rule="3a c")))
            after = ENGINE.advance(state, decision)
            assert after.banked[side] == 0 and decision.visit_over and F.DELIBERATE in decision.fouls
            assert all(after.banked[o] == state.banked[o] for o in state.sides if o != side)
        held = list(after.table) + list(after.trough) + list(after.out)
        assert sorted(held) == sorted(BALLS), decision.explanation
        if not after.bar_down:
            assert not after.out
        event(f"shot kind {kind}")
        state = after
    event(f"frame over: {state.frame_over}")


# ---- a frame joined mid-way (option start=mid_frame) -----------------------------------------------------

def test_2i_endgame_from_a_mid_frame_position_the_last_ball_off_a_cushion_into_the_200_wins():
    st = ENGINE.initial_state(("A", "B"), {"start": "mid_frame", "start_balls": "w3", "start_banked": "A=2300,B=2450"})
    assert st.endgame and st.bar_down and st.next_kind == ENDGAME and st.out == tuple(b for b in BALLS if b != "w3")
    assert dict(st.banked) == {"A": 2300, "B": 2450} and st.player == "A"
    d, st = play(st, make_shot(st, "w3", ("cushion", "w3", "T"), ("pot", "w3", "h200")))
    assert d.fouls == () and d.frame_over and d.winner == "A" and dict(d.banked) == {"A": 2500, "B": 2450} and "2i g" in d.rules


def test_2i_endgame_from_a_mid_frame_position_a_pot_off_no_cushion_loses_the_entire_score():
    st = ENGINE.initial_state(("A", "B"), {"start": "mid_frame", "start_balls": "w3", "start_banked": "A=2300,B=2450",
                                           "start_player": "B"})
    d, st = play(st, make_shot(st, "w3", ("pot", "w3", "h100")))
    assert d.player == "B" and d.fouls == (F.ENDGAME_NO_CUSHION,) and not d.frame_over and dict(d.banked)["B"] == 0
    assert d.next_player == "A" and st.next_kind == ENDGAME


def test_2c_c_from_a_mid_frame_position_read_off_the_first_strike_a_white_while_the_red_is_in_the_trough():
    st = ENGINE.initial_state(("A", "B"), {"start": "mid_frame", "start_player": "B", "start_balls": "red,w1,w2,w5"})
    assert st.start_unseen and st.bar_down and not st.endgame
    shot = make_shot(st, "w2", ("hit", "w2", "w1"), positions={"w1": (900.0, 300.0), "w5": (1200.0, 760.0)})
    d, st = play(st, shot)
    assert d.player == "B" and d.fouls == (F.RED_NOT_PLAYED,) and "2b" not in d.rules
    assert not st.start_unseen and "w5" in st.table and "red" in st.trough


def test_2c_a_from_a_mid_frame_position_every_ball_in_play_and_the_bar_up():
    st = ENGINE.initial_state(("A", "B"), {"start": "mid_frame", "start_banked": "A=120"})
    assert not st.bar_down and not st.out and dict(st.banked) == {"A": 120, "B": 0}
    table = {"red": (900.0, 300.0), "w1": (1200.0, 760.0), "w2": (1600.0, 380.0)}
    d, st = play(st, make_shot(st, "w3", ("hit", "w3", "w1"), ("pot", "w1", "h50b"), positions=table))
    assert d.fouls == () and d.next_player == "A" and d.break_score == 50 and set(st.table) >= {"red", "w2"} and "w4" in st.trough


@pytest.mark.parametrize("options, message", [
    ({"start_player": "B"}, "need start=mid_frame"),
    ({"start_banked": "A=10"}, "need start=mid_frame"),
    ({"start": "mid_frame", "start_player": "C"}, "not a player"),
    ({"start": "mid_frame", "start_banked": "C=10"}, "side=points"),
    ({"start": "mid_frame", "start_banked": "A=-10"}, "side=points"),
    ({"start": "mid_frame", "start_balls": "w1,w9"}, "w9"),
    ({"start": "mid_frame", "start_balls": "w1,w1"}, "twice"),
    ({"start": "mid_frame", "start_balls": "w1", "start_banked": "A=500,B=200"}, "already over"),
])
def test_mid_frame_start_options_are_checked(options, message):
    with pytest.raises(RulesError, match=message):
        ENGINE.initial_state(("A", "B"), options)


def test_2i_a_red_left_with_a_gap_of_350_from_a_mid_frame_position_is_an_endgame():
    st = ENGINE.initial_state(("A", "B"), {"start": "mid_frame", "start_balls": "red", "start_banked": "A=500,B=150"})
    assert st.endgame and st.next_kind == ENDGAME


# ---- bad input refused clearly, and every shot that happened gets a call -------------------------------------


@pytest.mark.parametrize("step", [("hit", "w4", "w9"), ("hit", "zz", "w1"), ("touch", "w9"), ("cushion", "w9", "T")],
                         ids=["a contact with an unknown ball", "a contact of an unknown ball", "an unknown ball touched",
                              "an unknown ball on a cushion"])
def test_an_unknown_ball_in_any_event_is_an_impossible_log(step):
    state = make_state(table=NO_RED)
    with pytest.raises(RulesError, match="unknown ball"):
        ENGINE.judge(state, make_shot(state, "w4", ("hit", "w4", "w1"), step))


def test_3a_d_after_a_concession_nothing_changes_the_frame_and_it_ends_once():
    state = make_state(table=NO_RED, banked={"A": 300, "B": 100})
    ref = referee_at(state)
    d = feed(ref, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")))
    d = feed(ref, Concession(t_s=30.0, player="A"))
    assert d.frame_over and d.winner == "B"
    with pytest.raises(RulesError, match="no shot call to change"):
        feed(ref, Override(t_s=31.0, field="fouls", value="none"))
    with pytest.raises(RulesError, match="after the frame ended"):
        feed(ref, OperatorFoul(t_s=32.0, player="B", rule="3b l"))
    with pytest.raises(RulesError, match="after the frame ended"):
        feed(ref, Concession(t_s=33.0, player="B"))
    with pytest.raises(RulesError, match="after the frame ended"):
        feed(ref, make_shot(ref.state, "w5", ("hit", "w5", "w2"), t0=40.0))
    assert sum(c.decision.frame_over for c in ref.history) == 1 and ref.state.winner == "B"


def test_3b_p_a_shot_out_of_turn_is_the_intruders_foul_and_the_player_plays_on():
    """3b p: B plays A's ball while A is on a break of 100; the operator marks it after the shot. The
    shot is judged again as B's foul: nothing scores, A keeps the break and plays on."""
    state = make_state(table=NO_RED, break_score=100, banked={"A": 50, "B": 200})
    ref = referee_at(state)
    d = feed(ref, make_shot(state, "w4", ("hit", "w4", "w1"), ("pot", "w1", "h200")))
    assert d.player == "A" and d.points == 200
    d = feed(ref, OperatorFoul(t_s=30.0, player="B", rule="3b p"))
    assert d.amends and d.player == "B" and d.fouls == (F.OUT_OF_TURN,) and d.points == 0 and "3b p" in d.rules
    assert d.next_player == "A" and ref.state.player == "A" and ref.state.break_score == 100
    assert dict(ref.state.banked) == {"A": 50, "B": 200} and "w1" in ref.state.trough
