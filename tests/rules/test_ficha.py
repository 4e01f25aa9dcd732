"""Sinuca de Ficha referee: one case per rule number and per option (ids name the rule), a replayed
hand-written log, and property tests over random legal shot sequences."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rules import get_engine
from rules.base import Referee, RulesError, Shot, replay
from rules.ficha import PRECEDENCE, FichaRules, Foul, Options, RemovalMode
from tests.rules._ficha_helpers import ENGINE, PROFILE, R, YELLOWS, Match, mid_frame, rack_positions, shot_events
from tracking.events import (
    Answer,
    AtRest,
    BallBall,
    BallPlaced,
    BallRemoved,
    BallTouched,
    Concession,
    CueContact,
    Event,
    Jump,
    OffTable,
    OperatorFoul,
    Override,
    Pot,
    RemovalChoice,
    ShotStart,
    Warning,
    read_events,
)

DATA = Path(__file__).parent / "data"


# ---- single shots, one per rule --------------------------------------------------------------------
# (state setup, steps, expected fouls, expected next player, expected winner or None)

def _mid(**kw):
    return lambda m: m.mid(**kw)


def _none(m):
    return m


CASES = [
    pytest.param(_none, [("hit", "cue", "r1"), ("pot", "r1", "TL")], (), "A", None, id="2.4 break: own ball first and potted, A continues"),
    pytest.param(_none, [("hit", "cue", "y1")], (Foul.WRONG_BALL_FIRST,), "B", None, id="2.4 break: opponent ball first is a miss"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("pot", "r1", "TL")], (), "A", None, id="4.2.1 own ball potted: the shooter continues"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR")], (), "B", None,
                 id="4.2.3 opponent ball dropped last: the turn ends, no foul"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "y1", "BR"), ("pot", "r1", "TL")], (), "A", None,
                 id="4.2 only the last ball counts: own ball last continues"),
    pytest.param(_mid(), [("hit", "cue", "r1")], (), "B", None, id="4.2 no pot: the turn ends"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("pot", "cue", "TM")], (Foul.SUICIDE,), None, "B", id="4.2.2 suicide loses the frame"),
    pytest.param(_mid(red_left=("r1",)), [("hit", "cue", "r1"), ("pot", "r1", "TL"), ("pot", "cue", "TM")], (Foul.SUICIDE,), None, "B",
                 id="4.2.2 suicide loses even when the last own ball drops"),
    pytest.param(_mid(red_left=("r1",), yellow_left=("y1",)),
                 [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "y1", "BR"), ("pot", "r1", "TL")], (), None, "A",
                 id="4.2.3.1 both last balls, own dropped last: the shooter wins"),
    pytest.param(_mid(red_left=("r1",), yellow_left=("y1",)),
                 [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR")], (), None, "B",
                 id="4.2.3.2 opponent last ball dropped last: the opponent wins even with the own last ball down"),
    pytest.param(_mid(red_left=("r1",), yellow_left=("y1",)),
                 [("hit", "cue", "y1"), ("hit", "y1", "r1"), ("pot", "y1", "BR"), ("pot", "r1", "TL")], (Foul.WRONG_BALL_FIRST,), None, "B",
                 id="4.2.3.1 both last balls but an opponent ball first: the opponent wins"),
    pytest.param(_mid(yellow_left=("y1",)), [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "y1", "BR")], (), None, "B",
                 id="4.2.3.2 opponent last ball potted: the opponent wins"),
    pytest.param(_mid(red_left=("r1",)), [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR")], (), None, "A",
                 id="4.2.3.3 own fourth then an opponent ball (default): a win under 6.1"),
    pytest.param(_mid(red_left=("r1",)), [("hit", "cue", "r1"), ("pot", "r1", "TL")], (), None, "A", id="6.1 fourth ball legally potted wins"),
    pytest.param(_mid(red_left=("r1",)), [("hit", "cue", "y1"), ("hit", "y1", "r1"), ("pot", "r1", "TL")], (Foul.WRONG_BALL_FIRST,), None, "B",
                 id="6.1 own fourth ball potted on a foul: the frame is lost"),
    pytest.param(_mid(), [("cushion", "cue", "R")], (Foul.MISS,), "B", None, id="5.2 miss: no ball hit"),
    pytest.param(_mid(), [("hit", "cue", "y2"), ("hit", "y2", "r1"), ("pot", "r1", "TL")], (Foul.WRONG_BALL_FIRST,), "B", None,
                 id="5.2 opponent ball first: foul even though an own ball dropped"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("pot", "r1", "TL"), ("off", "y2")], (Foul.OFF_TABLE,), "B", None,
                 id="5.3 ball off the table: removal and the turn passes even after an own pot"),
    pytest.param(_mid(), [("jump", "cue"), ("hit", "cue", "r1"), ("pot", "r1", "TL")], (Foul.JUMP,), "B", None, id="5.4 jump shot"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("touch", "cue")], (Foul.CUE_BALL_TOUCHED,), "B", None, id="5.5 cue ball touched during the shot"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("touch", "y3")], (Foul.BALL_TOUCHED,), "B", None, id="5.6 object ball touched during the shot"),
    pytest.param(_mid(), [("hit", "cue", "r1"), ("cue", "y3")], (Foul.BALL_TOUCHED,), "B", None, id="5.6 the cue touches an object ball"),
    pytest.param(_mid(), [("cue", "cue"), ("hit", "cue", "r1"), ("pot", "r1", "TL")], (Foul.DOUBLE_HIT,), "B", None, id="5.7 double hit"),
    pytest.param(_mid(), [("hit", "cue", "y1"), ("jump", "cue"), ("pot", "cue", "BL")], (Foul.SUICIDE, Foul.WRONG_BALL_FIRST, Foul.JUMP), None, "B",
                 id="precedence: every foul found, loss of the frame first"),
]


@pytest.mark.parametrize("setup, steps, fouls, next_player, winner", CASES)
def test_rule(setup, steps, fouls, next_player, winner, request):
    m = setup(Match())
    d = m.shot(*steps)
    assert d.pending is None
    rule = request.node.callspec.id.split()[0]
    assert rule in d.rules or not rule[0].isdigit(), (rule, d.rules)
    assert d.fouls == fouls
    assert tuple(d.fouls) == tuple(f for f in PRECEDENCE if f in d.fouls)
    assert d.rules and d.explanation.startswith("ficha ")
    if winner is None:
        assert not d.frame_over and d.next_player == next_player
        assert m.state.shooter == next_player
    else:
        assert d.frame_over and d.winner == winner and d.match_over and d.match_winner == winner
        assert d.penalty == ("loss of the frame" if winner == "B" else None)
    if fouls and not d.frame_over:
        assert d.removals_due == ("B",) and "removal" in d.penalty


def test_4_2_3_no_removal_for_opponent_ball_last():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "y1", "BR"))
    assert d.fouls == () and d.penalty is None and d.turn_end == "opponent_ball_last" and "4.2.3" in d.rules
    assert m.state.removals_due == () and "y1" in m.state.balls.potted


def test_4_2_3_3_option_clear_opponent():
    m = Match(options={"rule_4233_clear_opponent": True}).mid(red_left=("r1",), yellow_left=("y1", "y2"))
    d = m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR"))
    assert not d.frame_over and d.next_player == "A" and d.clearing == "A" and "4.2.3.3" in d.rules
    assert m.state.clearing == 0 and m.state.balls.on_table == {"cue", "y2"}


def test_4_2_3_3_option_clear_opponent_wins_by_potting_the_rest():
    m = Match(options={"rule_4233_clear_opponent": True}).mid(red_left=("r1",), yellow_left=("y1", "y2"))
    m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR"))
    d = m.shot(("hit", "cue", "y2"), ("pot", "y2", "TR"))  # now the yellows are A's target
    assert d.fouls == () and d.frame_over and d.winner == "A" and "4.2.3.3" in d.rules


def test_4_2_3_3_option_clear_opponent_miss_passes_the_turn():
    m = Match(options={"rule_4233_clear_opponent": True}).mid(red_left=("r1",), yellow_left=("y1", "y2", "y3"))
    m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR"))
    d = m.shot(("cushion", "cue", "L"))
    assert d.fouls == (Foul.MISS,) and d.next_player == "B" and d.removals_due == ("B",)


# ---- positions: 4.3, 4.4.1, 4.4.2, 4.4.3, 4.5 ----------------------------------------------------------

SURROUNDED = rack_positions(
    y1=(710 + 53.5, 405.0), y2=(710 - 53.5, 405.0), y3=(710.0, 405 + 53.5), y4=(710.0, 405 - 53.5),
)


def test_4_4_1_snookered_no_path_no_cushion_frame_to_opponent_after_confirmation():
    m = Match().mid()
    d = m.shot(("hit", "cue", "y1"), positions=SURROUNDED)
    assert d.pending is not None and "4.4.1" in d.pending.text and d.pending.options == ("yes", "no")
    assert m.state.frame == 1 and m.pending is not None
    d = m.answer("yes")
    assert d.frame_over and d.winner == "B" and d.frame_end == "snookered" and "4.4.1" in d.rules


def test_4_4_1_operator_says_play_on():
    m = Match().mid()
    m.shot(("hit", "cue", "y1"), positions=SURROUNDED)
    d = m.answer("no")
    assert not d.frame_over and d.fouls == (Foul.WRONG_BALL_FIRST,)


WALLED = rack_positions(r1=(300.0, 405.0), r2=None, r3=None, r4=None, y1=(655.0, 405.0))


def test_4_4_2_snookered_must_play_a_cushion_first():
    m = Match().mid(red_left=("r1",))
    d = m.shot(("hit", "cue", "r1"), positions=WALLED)
    assert d.fouls == (Foul.NO_CUSHION_FIRST,) and "4.4.2" in d.rules and d.next_player == "B"


def test_4_4_2_cushion_first_is_legal():
    m = Match().mid(red_left=("r1", "r2"))
    pos = rack_positions(r1=(300.0, 405.0), r2=(200.0, 405.0), r3=None, r4=None, y1=(655.0, 405.0))
    d = m.shot(("cushion", "cue", "R"), ("hit", "cue", "r1"), ("pot", "r1", "TL"), positions=pos)
    assert d.fouls == () and d.next_player == "A"


def test_4_4_2_not_snookered_no_cushion_needed():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), positions=rack_positions())
    assert d.fouls == ()


# r1, A's last ball, in the jaws of TL; y1 frozen against it on the table side; the cue ball behind y1
COVERED = rack_positions(r1=(35.0, 35.0), r2=None, r3=None, r4=None, y1=(72.5, 72.5), cue=(300.0, 300.0))


def test_4_3_covered_last_ball_frame_to_opponent_after_confirmation():
    m = Match().mid(red_left=("r1",))
    d = m.shot(("hit", "cue", "y1"), positions=COVERED)
    assert d.pending is not None and "4.3" in d.pending.text and "TL" in d.pending.text and "y1" in d.pending.text
    d = m.answer("yes")
    assert d.frame_over and d.winner == "B" and d.frame_end == "covered"


def test_4_4_3_covered_ball_potted_off_the_opponent_ball_loses():
    m = Match().mid(red_left=("r1",))
    m.shot(("hit", "cue", "y1"), ("hit", "y1", "r1"), ("pot", "r1", "TL"), positions=COVERED)
    d = m.answer("no")
    assert Foul.COVERED_BALL_STRUCK in d.fouls and d.frame_over and d.winner == "B" and "4.4.3" in d.rules


def test_4_3_not_covered_in_open_play():
    m = Match().mid(red_left=("r1",))
    d = m.shot(("hit", "cue", "r1"), positions=rack_positions(r2=None, r3=None, r4=None))
    assert d.pending is None and d.fouls == ()


FROZEN = rack_positions(r1=(710 + 2 * R + 0.5, 405.0))


def test_4_5_frozen_ball_pushed():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TR"), positions=FROZEN)
    assert Foul.FROZEN_BALL_MOVED in d.fouls and d.next_player == "B" and "4.5" in d.rules


def test_4_5_frozen_ball_left_still_is_legal():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r2"), positions=FROZEN, end=FROZEN)
    assert d.fouls == ()


def test_4_5_frozen_ball_moved_with_no_contact():
    m = Match().mid()
    end = dict(FROZEN, r1=(FROZEN["r1"][0] + 10.0, 405.0))
    d = m.shot(("hit", "cue", "r2"), positions=FROZEN, end=end)
    assert d.fouls == (Foul.FROZEN_BALL_MOVED,)


def test_4_5_frozen_ball_reached_later_by_another_ball_is_legal():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r2"), ("hit", "r2", "r1"), positions=FROZEN, end=dict(FROZEN, r1=(900.0, 405.0)))
    assert d.fouls == ()


def test_4_4_1_a_ball_touching_the_cue_ball_from_behind_does_not_block():
    m = Match().mid()
    pos = rack_positions(y1=(710 + 2 * R - 3.0, 405.0), r1=(300.0, 405.0))  # y1 overlaps the cue ball on the far side
    d = m.shot(("hit", "cue", "r1"), positions=pos)
    assert d.pending is None and d.fouls == ()


def test_4_3_opponent_ball_in_the_pocket_mouth_covers():
    m = Match().mid(red_left=("r1",))
    pos = rack_positions(r1=(55.0, 55.0), r2=None, r3=None, r4=None, y1=(17.0, 17.0), cue=(400.0, 300.0))
    d = m.shot(("hit", "cue", "r1"), positions=pos)
    assert d.pending is not None and "4.3" in d.pending.text


def test_4_3_touching_but_reachable_is_not_covered():
    m = Match().mid(red_left=("r1",))
    pos = rack_positions(r1=(35.0, 35.0), r2=None, r3=None, r4=None, y1=(35.0 + 2 * R + 0.5, 35.0), cue=(35.0, 400.0))
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"), positions=pos)
    assert d.pending is None and d.frame_over and d.winner == "A"


# ---- 5.3 off the table and its re-spotting ----------------------------------------------------------


def test_5_3_cue_ball_off_and_back_on_the_centre_spot():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("off", "cue"))
    assert d.fouls == (Foul.OFF_TABLE,) and "cue" in m.state.balls.lifted and d.next_player == "B"
    m.hand(BallRemoved, ball="y4")
    m.hand(BallPlaced, ball="cue", xy_mm=PROFILE.spots["centre"])
    d = m.shot(("hit", "cue", "y1"), ("pot", "y1", "TL"))
    assert d.player == "B" and d.removed == ("y4",) and d.fouls == () and d.next_player == "B"
    assert "cue" in m.state.balls.on_table and "y4" in m.state.balls.removed


def test_5_3_object_ball_off_is_respotted_by_the_next_strike():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"), ("off", "r2"))
    m.hand(RemovalChoice, ball="y3")
    d = m.shot(("hit", "cue", "y1"))
    assert d.respotted == ("r2",) and d.removed == ("y3",) and "r2" in m.state.balls.on_table


def test_5_3_2_1_cue_ball_dropping_while_respotted_is_not_suicide():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"), ("off", "cue"))
    m.hand(RemovalChoice, ball="y3")
    m.hand(BallPlaced, ball="cue", xy_mm=(710.0, 405.0))
    m.hand(Pot, ball="cue", pocket="TM")
    m.hand(BallPlaced, ball="cue", xy_mm=(710.0, 405.0))
    d = m.shot(("hit", "cue", "y1"))
    assert d.fouls == () and not d.frame_over and d.player == "B"


# ---- removal penalty and its options ------------------------------------------------------------------


def test_removal_non_offender_asked_when_no_removal_seen():
    m = Match().mid()
    m.shot(("hit", "cue", "y1"))
    d = m.shot(("hit", "cue", "y2"), positions=rack_positions(y3=None))
    assert d.pending is not None and d.pending.options[0] == "y3" and "removed" in d.pending.text
    d = m.answer("y3")
    assert d.removed == ("y3",) and d.player == "B" and "y3" in m.state.balls.removed


def test_removal_choice_input_is_applied_with_the_next_shot():
    m = Match().mid()
    m.shot(("hit", "cue", "y1"))
    assert m.say(RemovalChoice, ball="y2") is None
    d = m.shot(("hit", "cue", "y1"))
    assert d.removed == ("y2",)


def test_removal_choice_of_the_offenders_ball_is_refused():
    m = Match().mid()
    m.shot(("hit", "cue", "y1"))
    with pytest.raises(RulesError, match="one of B's balls"):
        m.say(RemovalChoice, ball="r2")


def test_option_removal_choice_nearest_pocket():
    m = Match(options={"removal_choice": "nearest_pocket"}).mid()
    end = rack_positions(y2=(1380.0, 770.0))  # y2 next to BR
    d = m.shot(("hit", "cue", "y1"), end=end)
    assert d.removed == ("y2",) and d.removals_due == () and "y2" in m.state.balls.removed
    assert "nearest a pocket" in d.penalty


def test_option_removal_of_last_ball_wins():
    m = Match().mid(yellow_left=("y1",))
    d = m.shot(("hit", "cue", "y1"))
    assert d.frame_over and d.winner == "B" and d.frame_end == "removal_of_last_ball" and d.removed == ("y1",)
    assert d.penalty == "removal of y1, B's last ball"


def test_option_removal_of_last_ball_wins_false():
    m = Match(options={"removal_of_last_ball_wins": False}).mid(yellow_left=("y1",))
    d = m.shot(("hit", "cue", "y1"))
    assert not d.frame_over and d.removed == () and d.removals_due == () and d.next_player == "B"


def test_removal_choice_answers_the_pending_removal_question():
    m = Match().mid()
    m.shot(("hit", "cue", "y1"))
    assert m.shot(("hit", "cue", "y1")).pending is not None
    d = m.say(RemovalChoice, ball="y4")
    assert d is not None and d.removed == ("y4",) and d.pending is None


def test_override_removal():
    m = Match(options={"removal_choice": "nearest_pocket"}).mid()
    m.shot(("hit", "cue", "y1"))
    d = m.say(Override, field="removal", value="y3")
    assert d.removed == ("y3",) and m.state.balls.removed == {"y3"}


def test_option_nearest_pocket_without_positions_still_removes_one():
    m = Match(options={"removal_choice": "nearest_pocket"}).mid()
    d = m.say(Warning, player="A")
    d = m.say(Warning, player="A")
    assert len(d.removed) == 1 and d.removed[0] in YELLOWS and d.removals_due == ()


# ---- fouls between shots and operator fouls --------------------------------------------------------------


def test_5_6_ball_touched_while_aiming_passes_the_turn_before_the_shot():
    m = Match().mid()
    m.hand(BallTouched, ball="r3")
    m.hand(BallRemoved, ball="y4")
    d = m.shot(("hit", "cue", "y1"), ("pot", "y1", "TL"))
    assert len(d.prior) == 1 and d.prior[0].player == "A" and d.prior[0].fouls == (Foul.BALL_TOUCHED,)
    assert d.player == "B" and d.removed == ("y4",) and d.next_player == "B"
    assert {"y1"} <= m.state.balls.potted and "y4" in m.state.balls.removed


def test_5_6_operator_foul_on_the_player_away_from_the_table_keeps_the_turn():
    m = Match().mid()
    m.hand(OperatorFoul, player="B", rule="5.6")
    m.hand(BallRemoved, ball="r4")
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert d.prior[0].player == "B" and d.prior[0].next_player == "A" and d.player == "A" and d.removed == ("r4",)
    assert d.explanation.startswith("before the shot: ficha 5.6")


def test_5_6_low_confidence_touch_while_aiming_is_asked():
    m = Match().mid()
    m.hand(BallTouched, ball="r3", confidence=0.2)
    d = m.shot(("hit", "cue", "r1"))
    assert d.pending is not None and "r3" in d.pending.text
    d = m.answer("no")
    assert d.prior == () and d.player == "A"


def test_5_5_operator_foul_during_the_shot():
    m = Match().mid()
    events = shot_events(5.0, ("hit", "cue", "r1"), ("pot", "r1", "TL"))
    s = Shot(0, tuple(events), (OperatorFoul(t_s=5.15, player="A", rule="5.5"),))
    d = ENGINE.judge(m.state, s)
    assert d.fouls == (Foul.CUE_BALL_TOUCHED,) and d.next_player == "B"


def test_2_4_push_shot_called_by_the_operator_after_the_shot():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert m.state.shooter == "A"
    assert m.say(OperatorFoul, player="A", rule="2.4", note="push") is None
    m.hand(BallRemoved, ball="y1")
    d = m.shot(("hit", "cue", "y2"))
    assert d.prior[0].fouls == (Foul.PUSH_SHOT,) and d.player == "B"


def test_operator_foul_unknown_rule_is_refused():
    m = Match().mid()
    with pytest.raises(RulesError, match="operator_foul rule"):
        m.say(OperatorFoul, player="A", rule="9.9")


# ---- 5.8 warnings, 6.3 concession ------------------------------------------------------------------


def test_5_8_warning_then_removal_then_loss_of_frame():
    m = Match().mid()
    d1 = m.say(Warning, player="A", rule="5.8")
    assert d1.fouls == (Foul.MISCONDUCT,) and d1.penalty == "warning" and d1.next_player == "A" and not d1.frame_over
    d2 = m.say(Warning, player="A")
    assert d2.removals_due == ("B",) and d2.next_player == "B" and not d2.frame_over
    d3 = m.say(Warning, player="A")
    assert d3.frame_over and d3.winner == "B" and d3.frame_end == "misconduct" and d3.penalty == "loss of the frame"


def test_5_8_warning_to_the_player_not_at_the_table_keeps_the_turn():
    m = Match().mid()
    m.say(Warning, player="B")
    d = m.say(Warning, player="B")
    assert d.removals_due == ("A",) and d.next_player == "A"


def test_6_3_concession():
    m = Match().mid()
    d = m.say(Concession, player="A")
    assert d.frame_over and d.winner == "B" and d.frame_end == "concession" and "6.3" in d.rules


# ---- uncertainty ----------------------------------------------------------------------------------


def test_low_confidence_first_contact_asks_and_resumes():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r2", {"confidence": 0.3}), ("hit", "cue", "y1"))
    assert d.pending is not None and d.pending.text.endswith("first contact r2 or y1?")
    assert m.state.shooter == "A" and m.pending is not None
    with pytest.raises(RulesError, match="pending"):
        m.shot(("hit", "cue", "r1"))
    d = m.answer("y1")
    assert d.fouls == (Foul.WRONG_BALL_FIRST,) and d.next_player == "B"


def test_option_min_confidence():
    m = Match(options={"min_confidence": 0.2}).mid()
    d = m.shot(("hit", "cue", "r2", {"confidence": 0.3}), ("hit", "cue", "y1"))
    assert d.pending is None and d.fouls == ()


def test_low_confidence_pot_asks():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL", {"confidence": 0.4}))
    assert d.pending is not None and "r1" in d.pending.text
    d = m.answer("no")
    assert d.potted == () and d.next_player == "B" and "r1" in m.state.balls.on_table


def test_unobserved_shot_needs_confirmation():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("unseen", 0.5), ("pot", "r1", "TL"))
    assert d.pending is not None and "not fully seen" in d.pending.text and d.pending.options == ("accept",)
    d = m.answer("accept")
    assert d.fouls == () and d.next_player == "A"


def test_answer_without_question_is_refused():
    m = Match()
    with pytest.raises(RulesError, match="no question is pending"):
        m.say(Answer, question="x", answer="y")


# ---- override --------------------------------------------------------------------------------------


def test_override_fouls_replaces_the_last_call():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    d = m.say(Override, field="fouls", value="double_hit")
    assert d.replaces_last and d.fouls == (Foul.DOUBLE_HIT,) and d.next_player == "B"
    assert m.state.shooter == "B" and m.state.removals_due == (1,) and "r1" in m.state.balls.potted
    d = m.say(Override, field="fouls", value="")
    assert d.fouls == () and m.state.shooter == "A" and m.state.removals_due == ()


def test_override_winner_and_next_player():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"))
    d = m.say(Override, field="next_player", value="A")
    assert d.next_player == "A" and m.state.shooter == "A"
    d = m.say(Override, field="winner", value="A")
    assert d.frame_over and d.winner == "A" and m.state.match_over


def test_override_unknown_field_is_refused():
    m = Match().mid()
    m.shot(("hit", "cue", "r1"))
    with pytest.raises(RulesError, match="override field"):
        m.say(Override, field="colour", value="blue")


# ---- whole matches: frames, break, doubles -------------------------------------------------------------


def _win_frame(m: Match, loser: str) -> None:
    m.say(Concession, player=loser)


@pytest.mark.parametrize("mode, breakers", [
    pytest.param("alternate", ["A", "B", "A"], id="2.1 next_break alternate"),
    pytest.param("winner", ["A", "A", "B"], id="2.1 next_break winner"),
    pytest.param("loser", ["A", "B", "A"], id="2.1 next_break loser"),
])
def test_option_next_break(mode, breakers):
    m = Match(options={"frames": 3, "next_break": mode})
    seen = [m.state.breaker]
    _win_frame(m, "B")  # A wins frame 1
    seen.append(m.state.breaker)
    _win_frame(m, "A")  # B wins frame 2
    seen.append(m.state.breaker)
    assert seen == breakers and m.state.frame == 3 and m.state.shooter == breakers[-1]


def test_2_1_best_of_three():
    m = Match(options={"frames": 3})
    _win_frame(m, "B")
    assert not m.decisions[-1].match_over and m.state.score == (1, 0) and m.state.balls.on_table == frozenset(PROFILE.ball_ids)
    _win_frame(m, "A")
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert d.frame == 3 and m.state.shots_in_frame == 1
    d = m.say(Concession, player="B")
    assert d.match_over and d.match_winner == "A" and m.state.record["score"] == {"A": 2, "B": 1}
    with pytest.raises(RulesError, match="after the end of the match"):
        m.shot(("hit", "cue", "r1"))


@pytest.mark.parametrize("frames", [0, 2, 4])
def test_2_1_even_number_of_frames_is_refused(frames):
    with pytest.raises(RulesError, match="odd"):
        ENGINE.initial_state(("A", "B"), {"frames": frames})


def test_options_are_recorded_and_unknown_ones_refused():
    s = ENGINE.initial_state(("A", "B"), {"frames": "5", "removal_choice": "nearest_pocket"})
    assert s.options == Options(frames=5, removal_choice=RemovalMode.NEAREST_POCKET)
    assert s.record["options"]["removal_choice"] == "nearest_pocket"
    with pytest.raises(RulesError, match="unknown option"):
        ENGINE.initial_state(("A", "B"), {"fames": 3})
    with pytest.raises(RulesError):
        ENGINE.initial_state(("A", "B"), {"next_break": "random"})
    with pytest.raises(RulesError, match="negative"):
        ENGINE.initial_state(("A", "B"), {"pot_order_tolerance_s": -1})
    with pytest.raises(RulesError, match="min_confidence"):
        ENGINE.initial_state(("A", "B"), {"min_confidence": 2})


def test_option_first_group():
    m = Match(options={"first_group": "yellow"})
    d = m.shot(("hit", "cue", "y1"), ("pot", "y1", "TL"))
    assert d.fouls == () and d.next_player == "A"
    with pytest.raises(RulesError, match="first_group"):
        ENGINE.initial_state(("A", "B"), {"first_group": "blue"})


def test_doubles_rotation_and_team_win():
    m = Match(players=("A1", "B1", "A2", "B2"))
    order = [m.state.shooter]
    for _ in range(4):
        m.shot(("hit", "cue", "r1" if m.state.shooter.startswith("A") else "y1"))
        order.append(m.state.shooter)
    assert order == ["A1", "B1", "A2", "B2", "A1"]
    m.state = mid_frame(m.state, red_left=("r1",), shooter="A2")
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert d.winner == "A1+A2" and d.player == "A2"


def test_6_3_doubles_concession_gives_the_frame_to_the_other_team():
    m = Match(players=("A1", "B1", "A2", "B2"))
    d = m.say(Concession, player="A2")
    assert d.winner == "B1+B2" and d.match_winner == "B1+B2"


def test_decisions_serialise_to_json():
    m = Match().mid()
    m.hand(BallTouched, ball="r3")
    m.hand(BallRemoved, ball="y4")
    d = m.shot(("hit", "cue", "y1"), ("pot", "y1", "TL"))
    out = json.loads(json.dumps(d.to_dict()))
    assert out["prior"][0]["fouls"] == ["ball_touched"] and out["balls"]["removed"] == ["y4"] and "source_shot" not in out


def test_doubles_break_rotates_within_the_team():
    m = Match(players=("A1", "B1", "A2", "B2"), options={"frames": 5, "next_break": "winner"})
    _win_frame(m, "B1")
    assert m.state.breaker == "A2"
    _win_frame(m, "B2")
    assert m.state.breaker == "A1"


# ---- impossible logs ------------------------------------------------------------------------------


def test_impossible_logs_raise():
    m = Match().mid(red_left=("r1", "r2"))
    with pytest.raises(RulesError, match="not on the table"):
        m.shot(("hit", "cue", "r1"), ("pot", "r3", "TL"))
    with pytest.raises(RulesError, match="strikes r4"):
        m.shot(strike="r4")
    with pytest.raises(RulesError, match="names ball 'z9'"):
        m.shot(("hit", "cue", "z9"))
    with pytest.raises(RulesError, match="pocket 'XX'"):
        m.shot(("hit", "cue", "r1"), ("pot", "r1", "XX"))
    with pytest.raises(RulesError, match="2 players"):
        ENGINE.initial_state(("A", "B", "C"))


# ---- a hand-written log replayed -------------------------------------------------------------------


def test_replay_singles_log():
    header, events = read_events(DATA / "ficha_singles.jsonl")
    engine = get_engine("ficha", header.profile)
    steps = list(replay(engine, events, header.players, header.options))
    got = [(s.decision.player, tuple(s.decision.fouls), s.decision.next_player, s.decision.winner) for s in steps]
    assert got == [
        ("Ana", (), "Ana", None),  # 2.4 break, r1 potted: continues
        ("Ana", ("wrong_ball_first",), "Bia", None),  # 5.2
        ("Bia", (), "Bia", None),  # y4 removed by Bia; y1 then y2 potted: continues (4.2.1)
        ("Bia", (), "Ana", None),  # r2 (Ana's) dropped last: the turn ends (4.2.3)
        ("Ana", ("suicide",), None, "Bia"),  # 4.2.2
    ]
    last = steps[-1].state
    assert last.match_over and last.match_winner == "Bia" and last.history[0].how == "suicide"
    assert last.balls.removed == {"y4"} and {"r1", "r2", "y1", "y2", "cue"} == last.balls.potted


def test_engine_is_registered():
    assert isinstance(get_engine("ficha"), FichaRules)
    assert not any(f.value != f.value.lower() for f in Foul)


# ---- property tests over random legal shot sequences ----------------------------------------------------

ALL_BALLS = frozenset(PROFILE.ball_ids)
GROUP_EMPTIED_ENDS = {"cleared", "last_balls", "opponent_last_ball", "removal_of_last_ball"}


def _check_partition(state) -> None:
    b = state.balls
    sets = [b.on_table, b.potted, b.removed, b.lifted]
    assert sum(len(x) for x in sets) == len(ALL_BALLS), b
    assert frozenset().union(*sets) == ALL_BALLS, b


def _check_frame_end(state_before, d) -> None:
    """The winner cleared a group, or the loser committed suicide / conceded / fouled / misbehaved."""
    wside = state_before.sides.index(d.winner)
    lside = 1 - wside
    if d.frame_end in GROUP_EMPTIED_ENDS:
        assert not set(state_before.group_balls[wside]) & d.balls.on_table or state_before.clearing == wside, d.explanation
    elif d.frame_end == "last_ball_on_foul":
        assert d.fouls and not set(state_before.group_balls[lside]) & d.balls.on_table
    elif d.frame_end == "suicide":
        assert Foul.SUICIDE in d.fouls and state_before.side_of(d.player) == lside
    elif d.frame_end == "misconduct":
        assert Foul.MISCONDUCT in d.fouls and state_before.side_of(d.player) == lside
    elif d.frame_end in ("snookered", "covered") and not d.fouls:  # confirmed by the operator
        key = f"s{d.shot}:4.4.1" if d.frame_end == "snookered" else f"s{d.shot}:4.3"
        assert d.answers.get(key) == "yes" and state_before.side_of(d.player) == lside
    elif d.frame_end == "covered":
        assert Foul.COVERED_BALL_STRUCK in d.fouls and state_before.side_of(d.player) == lside
    else:
        assert d.frame_end == "concession" and state_before.side_of(d.player) == lside, d.frame_end


def _draw_shot(data, state, t0: float) -> list[Event]:
    on = sorted(state.balls.on_table | state.balls.lifted)
    objects = [b for b in on if b != "cue"]
    positions: dict[str, tuple[float, float]] = {}
    if data.draw(st.booleans(), label="positions"):  # the balls somewhere on the table, not overlapping
        for b in on:
            for _ in range(20):
                xy = (data.draw(st.floats(R, PROFILE.length_mm - R)), data.draw(st.floats(R, PROFILE.width_mm - R)))
                if all(math.dist(xy, o) >= 2 * R for o in positions.values()):
                    positions[b] = xy
                    break
    events: list[Event] = [ShotStart(t_s=t0, ball="cue", positions=positions)]
    t = t0
    first = data.draw(st.sampled_from(objects + [None]), label="first contact")
    if first is not None:
        t += 0.1
        conf = data.draw(st.sampled_from([1.0, 1.0, 1.0, 0.3]), label="confidence")
        events.append(BallBall(t_s=t, a="cue", b=first, confidence=conf))
    pots = data.draw(st.lists(st.sampled_from(objects), unique=True, max_size=2), label="pots") if objects else []
    for b in pots:
        t += 0.1
        events.append(Pot(t_s=t, ball=b, pocket=data.draw(st.sampled_from(["TL", "TM", "TR", "BL", "BM", "BR"]))))
    rest = [b for b in on if b not in pots]
    extra = data.draw(st.sampled_from(["none"] * 16 + ["suicide", "off", "off", "jump", "double", "touch"]), label="extra")
    t += 0.1
    if extra == "suicide":
        events.append(Pot(t_s=t, ball="cue", pocket="BM"))
    elif extra == "off" and rest:
        events.append(OffTable(t_s=t, ball=data.draw(st.sampled_from(rest))))
    elif extra == "jump":
        events.append(Jump(t_s=t, ball="cue"))
    elif extra == "double":
        events.append(CueContact(t_s=t, ball="cue"))
    elif extra == "touch":
        events.append(BallTouched(t_s=t, ball=data.draw(st.sampled_from(on))))
    events.append(AtRest(t_s=t + 0.5))
    return events


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_properties_random_matches(data):
    players = data.draw(st.sampled_from([("A", "B"), ("A1", "B1", "A2", "B2")]), label="players")
    options = {
        "frames": data.draw(st.sampled_from([1, 3]), label="frames"),
        "next_break": data.draw(st.sampled_from(["alternate", "winner", "loser"])),
        "removal_choice": data.draw(st.sampled_from(["non_offender", "nearest_pocket"])),
        "removal_of_last_ball_wins": data.draw(st.booleans()),
        "rule_4233_clear_opponent": data.draw(st.booleans()),
    }
    engine = ENGINE
    referee = Referee(engine, players, options)
    log: list[Event] = []
    before: list[Event] = []
    calls = []  # (shot index, player, fouls, next_player, frame_over, winner) of every non-pending call, in order
    t = 1.0
    index = 0
    frames_ended: list[int] = []

    def feed(e):
        """Feed one event to the referee and check every call it completes."""
        s0 = referee.state
        for step in referee.feed(e):
            take(step.decision, s0)
            s0 = referee.state

    def take(d, s0):
        state = referee.state
        _check_partition(state)
        if d.pending is not None:
            assert referee.pending == d.pending and state.balls == s0.balls and state.frame == s0.frame
            return
        calls.append((d.shot, d.player, d.fouls, d.next_player, d.frame_over, d.winner))
        s = s0
        for p in (*d.prior, d):
            if p.frame_over:
                _check_frame_end(s, p)
                frames_ended.append(s.frame)
            s = engine.advance(s, p) if p is not d else s
        if d.frame_over:
            assert state.match_over or (state.frame == s0.frame + 1 + sum(p.frame_over for p in d.prior) and state.shots_in_frame == 0)
        assert sum(state.score) == len(frames_ended)

    for _ in range(data.draw(st.integers(5, 60), label="steps")):
        state = referee.state
        if state.match_over:
            break
        action = data.draw(st.sampled_from(["shot"] * 24 + ["warning", "concession", "place", "place", "remove", "remove", "touch", "choice", "opfoul"]), label="action")
        t = round(t + 1.0, 6)
        if action == "shot":
            # the table at the strike: after the hand events and any removal still owed (answered now)
            stub = Shot(index, (ShotStart(t_s=t, ball="cue"),), tuple(before))
            answers: dict[str, str] = {}
            while not isinstance(at_strike := engine._before(state, stub, answers), tuple):
                answers[at_strike.pending.id] = data.draw(st.sampled_from(at_strike.pending.options), label="removal")
            if at_strike[1].match_over:
                break  # a foul while aiming ended the match: no shot follows (it stays unjudged without one)
            events = _draw_shot(data, at_strike[1], t)
            log += events
            before = []
            index += 1
            t = events[-1].t_s
            for e in events:
                feed(e)
            while referee.pending is not None:
                t = round(t + 0.1, 6)
                q = referee.pending
                value = answers[q.id] if q.id in answers else data.draw(st.sampled_from(q.options), label="answer")
                ans = Answer(t_s=t, question=q.id, answer=value)
                log.append(ans)
                feed(ans)
            continue
        if action == "warning":
            e = Warning(t_s=t, player=data.draw(st.sampled_from(players)))
        elif action == "concession":
            e = Concession(t_s=t, player=data.draw(st.sampled_from(players)))
        elif action == "place" and state.balls.lifted:
            e = BallPlaced(t_s=t, ball=sorted(state.balls.lifted)[0])
        elif action == "touch":
            e = BallTouched(t_s=t, ball=data.draw(st.sampled_from(sorted(state.balls.on_table))))
        elif action == "choice" and state.removals_due:
            e = RemovalChoice(t_s=t, ball=data.draw(st.sampled_from(state.left(state.removals_due[0]))))
        elif action == "opfoul":
            e = OperatorFoul(t_s=t, player=data.draw(st.sampled_from(players)), rule=data.draw(st.sampled_from(["2.4", "5.1", "5.5", "5.6", "5.7"])))
        elif action == "remove" and state.removals_due:
            e = BallRemoved(t_s=t, ball=data.draw(st.sampled_from(state.left(state.removals_due[0]))))
        else:
            continue
        log.append(e)
        before.append(e)
        feed(e)
    state = referee.state

    # a frame ends exactly once: frame numbers end in order, each once
    assert frames_ended == list(range(1, len(frames_ended) + 1))
    event(f"frames ended: {len(frames_ended)}, match over: {state.match_over}")
    event(f"frame ends: {sorted(set(f.how for f in state.history))}")
    if state.match_over:
        need = options["frames"] // 2 + 1
        assert max(state.score) == need and state.match_winner == state.sides[state.score.index(need)]
        # no decision after the end of the match
        with pytest.raises(RulesError, match="after the end of the match"):
            engine.judge(state, Shot(index, tuple(_draw_shot(data, engine.initial_state(players, options), t + 1.0))))
    # the same log replayed through rules.base.replay gives the same calls
    replayed = [
        (s.decision.shot, s.decision.player, s.decision.fouls, s.decision.next_player, s.decision.frame_over, s.decision.winner)
        for s in replay(engine, log, players, options) if s.decision.pending is None
    ]
    assert replayed == calls


def test_option_nearest_pocket_referee_picks_another_ball():
    m = Match(options={"removal_choice": "nearest_pocket"}).mid()
    end = rack_positions(y2=(1380.0, 770.0))
    m.shot(("hit", "cue", "y1"), end=end)
    assert m.state.balls.removed == {"y2"}
    assert m.say(RemovalChoice, ball="y2") is None  # the same ball: nothing to do
    d = m.say(RemovalChoice, ball="y1")
    assert d.replaces_last and d.removed == ("y1",) and m.state.balls.removed == {"y1"} and m.state.shooter == "B"
    d = m.shot(("hit", "cue", "y2"), ("pot", "y2", "BR"))
    assert d.player == "B" and d.fouls == () and d.removed == () and m.state.balls.removed == {"y1"}


@pytest.mark.parametrize("steps, moved", [
    pytest.param([("hit", "r1", "y1")], True, id="4.5 the frozen ball strikes another ball first: it was pushed"),
    pytest.param([("cushion", "r1", "R")], True, id="4.5 the frozen ball reaches a cushion with nothing touching it"),
    pytest.param([("hit", "cue", "r2"), ("hit", "y1", "r1")], False, id="4.5 the frozen ball struck by another ball first"),
])
def test_4_5_frozen_ball_first_event(steps, moved):
    m = Match().mid()
    d = m.shot(*steps, positions=FROZEN)
    assert (Foul.FROZEN_BALL_MOVED in d.fouls) == moved


def test_removal_seen_of_the_last_ball_owed_twice_wins_that_frame_before_the_break():
    m = Match(options={"frames": 3}).mid(yellow_left=("y1", "y2"))
    m.state = replace(m.state, removals_due=(1, 1), shooter="B")  # two removals owed to B, two yellows left
    m.hand(BallRemoved, ball="y1")
    d = m.shot(("hit", "cue", "y3"), ("pot", "y3", "TL"))
    assert d.prior[0].frame_over and d.prior[0].winner == "B" and d.prior[0].removed == ("y1", "y2")
    assert d.frame == 2 and d.player == "B" and d.removed == () and d.fouls == () and d.next_player == "B"
    assert m.state.score == (0, 1) and m.state.balls.potted == {"y3"}


def test_4_2_3_2_call_quotes_its_own_rule():
    m = Match().mid(red_left=("r1",), yellow_left=("y1",))
    d = m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), ("pot", "y1", "BR"))
    assert "4.2.3.2" in d.rules and "4.2.3.1" not in d.rules and d.explanation.startswith("ficha 4.2, 4.2.3.2:")


def test_replay_doubles_log_with_operator_inputs_and_questions():
    header, events = read_events(DATA / "ficha_doubles_inputs.jsonl")
    steps = list(replay(get_engine("ficha", header.profile), events, header.players, header.options))
    got = [(d.shot, d.player, tuple(d.fouls), d.next_player, d.winner, d.pending.id if d.pending else None)
           for d in (s.decision for s in steps)]
    assert got == [
        (0, "A1", (), None, None, "s0:first_contact"),
        (0, "A1", (), "B1", None, None),  # answered r1: 2.4 legal break
        (1, "B1", (), "B1", None, None),  # 4.2.1
        (None, "B1", ("misconduct",), "B1", None, None),  # 5.8 first warning
        (2, "B1", ("wrong_ball_first",), "A2", None, None),  # 5.2
        (3, "A2", (), "A2", None, None),  # r4 removed, r3 potted
        (None, "B2", (), None, "A1+A2", None),  # 6.3
        (4, "A2", ("wrong_ball_first",), "B2", None, None),  # frame 2: next_break=winner, A2 breaks
        (5, "B2", (), None, None, "s5:removal"),
        (5, "B2", (), None, None, "s5:unobserved"),
        (5, "B2", (), "A1", None, None),
        (None, "A1", (), None, "B1+B2", None),
        (6, "B1", ("suicide",), None, "A1+A2", None),  # frame 3: B1 breaks for team B
    ]
    final = steps[-1].state
    assert final.match_over and final.score == (2, 1) and [f.how for f in final.history] == ["concession", "concession", "suicide"]
    assert final.warnings == {"B1": 1} and final.record["options"]["next_break"] == "winner"


def test_4_1_a_shot_that_never_comes_to_rest_needs_confirmation():
    m = Match().mid()
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"), rest=False)
    assert d.pending is not None and d.pending.id == "s0:unfinished" and "4.1" in d.pending.text
    d = m.answer("accept")
    assert d.fouls == () and d.next_player == "A" and "r1" in m.state.balls.potted


@pytest.mark.parametrize("answer, next_player", [
    pytest.param("y1", "B", id="4.2 near-simultaneous drops: the operator says the opponent ball dropped last"),
    pytest.param("r1", "A", id="4.2 near-simultaneous drops: the operator says the own ball dropped last"),
])
def test_4_2_drop_order_too_close_to_call(answer, next_player):
    m = Match().mid()
    events = shot_events(5.0, ("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"),
                         Pot(t_s=5.32, ball="y1", pocket="TR"))
    d = m.events(events)
    assert d.pending is not None and d.pending.text == "ficha 4.2: which dropped last, r1 or y1?"
    d = m.answer(answer)
    assert d.next_player == next_player and d.potted[-1] == answer


def test_option_pot_order_tolerance_s():
    m = Match(options={"pot_order_tolerance_s": 0.0}).mid()
    events = shot_events(5.0, ("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", "r1", "TL"), Pot(t_s=5.32, ball="y1", pocket="TR"))
    d = ENGINE.judge(m.state, Shot(0, tuple(events)))
    assert d.pending is None and d.next_player == "B"


# ---- a frame joined mid-way (option start=mid_frame) ---------------------------------------------------

def _last_two(first_down, second_down):
    return [("hit", "cue", "r1"), ("hit", "r1", "y1"), ("pot", first_down, "TL" if first_down == "r1" else "BR"),
            ("pot", second_down, "TL" if second_down == "r1" else "BR")]


def test_4_2_3_1_both_last_balls_from_a_mid_frame_position_given_by_start_balls():
    m = Match(options={"start": "mid_frame", "start_balls": "cue, r1, y1", "start_shooter": "B"})
    assert m.state.balls.on_table == {"cue", "r1", "y1"} and m.state.balls.potted == set(PROFILE.ball_ids) - {"cue", "r1", "y1"}
    assert m.state.shooter == "B" and not m.state.at_break
    d = m.shot(("hit", "cue", "y1"), ("hit", "y1", "r1"), ("pot", "r1", "TL"), ("pot", "y1", "BR"))
    assert d.frame_over and d.winner == "B" and d.fouls == () and "4.2.3.1" in d.rules and "2.4" not in d.rules


@pytest.mark.parametrize("first_down, second_down, winner, rule", [("r1", "y1", "B", "4.2.3.2"), ("y1", "r1", "A", "4.2.3.1")])
def test_4_2_3_both_last_balls_from_a_mid_frame_position_read_off_the_first_strike(first_down, second_down, winner, rule):
    m = Match(options={"start": "mid_frame"})
    assert m.state.start_unseen and m.state.shooter == "A"
    d = m.shot(*_last_two(first_down, second_down), positions=rack_positions(r2=None, r3=None, r4=None, y2=None, y3=None, y4=None))
    assert d.frame_over and d.winner == winner and d.frame_end == "last_balls" and rule in d.rules, d.explanation
    assert "2.4" not in d.rules and not m.state.start_unseen


def test_mid_frame_start_reads_the_table_once_and_judges_no_break():
    m = Match(options={"start": "mid_frame", "start_shooter": "B"})
    pos = rack_positions(r2=None, y2=None)
    d = m.shot(("hit", "cue", "r1"), positions=pos)  # B owns the yellows: a red first is a foul, not a break
    assert d.fouls == (Foul.WRONG_BALL_FIRST,) and "2.4" not in d.rules and d.next_player == "A"
    assert m.state.balls.potted == {"r2", "y2"}
    # later strikes do not re-read the table: a ball hidden from the camera is still on the table
    m.say(RemovalChoice, ball="r4")  # B's foul: one of A's balls comes off
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"), positions=rack_positions(r2=None, r4=None, y2=None, y4=None))
    assert d.removed == ("r4",) and d.next_player == "A" and "y4" in m.state.balls.on_table and "r1" in m.state.balls.potted


def test_mid_frame_start_then_the_next_frame_is_racked():
    m = Match(options={"start": "mid_frame", "start_balls": "cue,r1,y1,y2", "frames": 3})
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert d.frame_over and d.winner == "A" and d.frame_end == "cleared"
    assert m.state.frame == 2 and m.state.at_break and m.state.balls.on_table == set(PROFILE.ball_ids) and not m.state.joined
    d = m.shot(("hit", "cue", "y1"))  # B breaks frame 2 (alternate): 2.4 applies again
    assert "2.4" in d.rules and d.fouls == ()


@pytest.mark.parametrize("options, message", [
    ({"start_balls": "cue,r1,y1"}, "need start=mid_frame"),
    ({"start_shooter": "B"}, "need start=mid_frame"),
    ({"start": "mid_frame", "start_shooter": "C"}, "not a player"),
    ({"start": "mid_frame", "start_balls": "cue,r1,y9"}, "y9"),
    ({"start": "mid_frame", "start_balls": "cue,r1,r1,y1"}, "twice"),
    ({"start": "mid_frame", "start_balls": "r1,y1"}, "cue ball"),
    ({"start": "mid_frame", "start_balls": "cue,r1,r2"}, "at least one of B's balls"),
    ({"start": "halfway"}, "start"),
])
def test_mid_frame_start_options_are_checked(options, message):
    with pytest.raises(RulesError, match=message):
        ENGINE.initial_state(("A", "B"), options)


def test_mid_frame_start_from_the_first_strike_needs_positions_that_make_sense():
    with pytest.raises(RulesError, match="positions"):
        Match(options={"start": "mid_frame"}).shot(("hit", "cue", "r1"))
    with pytest.raises(RulesError, match="at least one of B's balls"):
        Match(options={"start": "mid_frame"}).shot(("hit", "cue", "r1"), positions=rack_positions(y1=None, y2=None, y3=None, y4=None))


# ---- every shot that happened gets a call ----------------------------------------------------------------


def test_5_3_the_shooters_last_ball_off_the_table_is_respotted_and_can_still_win():
    """5.3, 5.3.1: the last red leaves the table: it has not dropped, so it is re-spotted; removal of
    one of B's balls, the turn passes (it used to count as the fourth ball dropped on a foul, 6.1,
    and give B the frame). A pots it later and wins (6.1)."""
    m = Match().mid(red_left=("r1",))
    d = m.shot(("hit", "cue", "r1"), ("off", "r1"))
    assert d.fouls == (Foul.OFF_TABLE,) and not d.frame_over and d.next_player == "B" and d.removals_due == ("B",)
    assert "5.3" in d.rules and "r1" in m.state.balls.lifted
    m.hand(BallPlaced, ball="r1", xy_mm=(30.0, 400.0))  # 5.3.1: against a cushion
    m.hand(RemovalChoice, ball="y4")
    d = m.shot(("hit", "cue", "y1"))
    assert d.player == "B" and d.removed == ("y4",) and d.next_player == "A" and "r1" in m.state.balls.on_table
    d = m.shot(("hit", "cue", "r1"), ("pot", "r1", "TL"))
    assert d.frame_over and d.winner == "A" and d.frame_end == "cleared" and "6.1" in d.rules


def test_5_3_the_opponents_last_ball_off_the_table_has_not_dropped():
    """5.3.1: B's last ball knocked off the table is re-spotted, not potted: no 4.2.3.2 win for B."""
    m = Match(options={"removal_of_last_ball_wins": False}).mid(yellow_left=("y1",))
    d = m.shot(("hit", "cue", "r1"), ("hit", "r1", "y1"), ("off", "y1"))
    assert d.fouls == (Foul.OFF_TABLE,) and not d.frame_over and d.next_player == "B" and "y1" in m.state.balls.lifted
    d = m.shot(("hit", "cue", "y1"))
    assert d.respotted == ("y1",) and d.player == "B" and d.fouls == ()


@pytest.mark.parametrize("answer, where", [("yes", "on_table"), ("no", "potted")])
def test_4_2_a_potted_ball_put_back_by_hand_is_asked_not_refused(answer, where):
    """4.2: potted balls stay down. A potted ball put back on the table by hand was refused; now the
    referee says whether it is back in play (the record was wrong) or stays potted."""
    m = Match().mid(red_left=("r1", "r2", "r3"))
    m.hand(BallPlaced, ball="r4", xy_mm=(300.0, 300.0))
    d = m.shot(("hit", "cue", "r1"))
    assert d.pending is not None and d.pending.id.startswith("s0:placed_back") and "r4 was potted" in d.pending.text
    d = m.answer(answer)
    assert d.pending is None and d.fouls == () and m.state.balls.where("r4") == where
