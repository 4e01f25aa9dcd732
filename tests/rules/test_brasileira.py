"""Sinuca Brasileira engine: one case per rule of "Sinuca Brasileira (Brazilian Snooker)" (rule numbers as rules/brasileira.py
numbers them), the rulebook's own examples, operator inputs, re-spotting, and property tests."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules import get_engine
from rules.base import Referee, RulesError, frozen_map, replay
from rules.brasileira import PRECEDENCE, BrasileiraRules, Foul, Mode
from tests.rules._brasileira_helpers import (
    CUE_REST,
    OBJECT_BALLS,
    PROFILE,
    SPOTS,
    VALUES,
    Game,
    bonus_after_red,
    clear_to,
    fresh,
    in_hand,
    layout,
    on_ball,
    opened,
)
from tracking.events import (
    Answer,
    AtRest,
    BallBall,
    BallTouched,
    Concession,
    CueContact,
    Jump,
    Nomination,
    OffTable,
    OperatorFoul,
    Override,
    PlayAgain,
    ShotStart,
    Unobserved,
    read_events,
)

DATA = Path(__file__).parent / "data"
R = PROFILE.ball_radius_mm
EDGE_Y = PROFILE.width_mm - R - 0.5  # a ball against the bottom cushion


def snookered_layout(on_table, target: str = "red") -> dict[str, tuple[float, float]]:
    """``target`` against the bottom cushion near the foot, the cue ball along the cushion with the
    pink and the black stacked between them: no straight path from the cue ball to any part of it."""
    moved = {target: (2780.0, EDGE_Y), "pink": (2640.0, EDGE_Y), "black": (2640.0, EDGE_Y - 2 * R - 0.5)}
    return layout(on_table, (2500.0, EDGE_Y), {b: xy for b, xy in moved.items() if b in on_table})


# ---- one case per rule -----------------------------------------------------------------------------

SETUPS = {
    "fresh": fresh,
    "opened": opened,
    "bonus_after_red": bonus_after_red,
    "in_hand": in_hand,
    "on_yellow": on_ball("yellow"),
    "on_pink": on_ball("pink"),
    "on_black": on_ball("black"),
}

ALL = OBJECT_BALLS

CASES = [
    # rule 1: standard snooker fouls
    pytest.param("opened", dict(nominate=("red", "BR"), pots=[("cue", "TL")]),
                 dict(fouls=("in_off",), foul_points=7, next_player="A", cue_in_hand=True, scores={"A": 7, "B": 0}),
                 id="1 in-off on a free shot: 7 to the opponent, ball in hand"),
    pytest.param("opened", dict(nominate=("red", "BR"), pots=[("blue", "TM")]),
                 dict(fouls=("other_ball_potted",), foul_points=7, respots=(("blue", SPOTS["blue"]),), on_table=ALL),
                 id="1 a colour potted on a foul is re-spotted"),
    pytest.param("opened", dict(nominate=("yellow", "TL"), first="red", pots=[("red", "BR")]),
                 dict(fouls=("wrong_ball_first", "other_ball_potted", "penalty_missed"), foul_points=7,
                      on_table=ALL[1:], respots=()),
                 id="1 the red potted on a foul stays down"),
    pytest.param("opened", dict(nominate=("red", "BR"), extra=lambda t: [OffTable(t_s=t + 2, ball="yellow")]),
                 dict(fouls=("off_table",), respots=(("yellow", SPOTS["yellow"]),), next_player="A"),
                 id="1 a ball forced off the table: foul, colour re-spotted"),
    pytest.param("opened", dict(nominate=("red", "BR"), struck="red"),
                 dict(fouls=("wrong_ball_struck",), foul_points=7),
                 id="1 the cue strikes an object ball"),
    pytest.param("in_hand", dict(nominate=("red", "BR"), start=layout(ALL, (1000.0, 700.0))),
                 dict(fouls=("not_from_d",), next_player="B"),
                 id="1 ball in hand played from outside the D"),
    pytest.param("in_hand", dict(nominate=("red", "BR")),
                 dict(fouls=(), next_player="B", cue_in_hand=False),
                 id="1 ball in hand played from the D"),
    pytest.param("opened", dict(nominate=("red", "BR"), extra=lambda t: [CueContact(t_s=t + 0.2, ball="cue")]),
                 dict(fouls=("double_hit",)), id="1 the cue touches the cue ball again"),
    pytest.param("opened", dict(nominate=("red", "BR"), extra=lambda t: [Jump(t_s=t + 0.2, ball="cue", airborne_s=0.1)]),
                 dict(fouls=("jump_shot",)), id="1 the cue ball jumps before its first contact"),
    pytest.param("opened", dict(nominate=("red", "BR"), extra=lambda t: [Jump(t_s=t + 0.8, ball="cue", airborne_s=0.1)]),
                 dict(fouls=()), id="1 a jump after the first contact is no foul"),
    pytest.param("opened", dict(nominate=("red", "BR"), extra=lambda t: [BallTouched(t_s=t + 3, ball="pink")]),
                 dict(fouls=("ball_touched",)), id="1 a ball moved with no contact"),
    pytest.param("opened", dict(nominate=("red", "BR"), first=None),
                 dict(fouls=("no_ball_hit",), foul_points=7, next_player="A"), id="1 no ball hit"),
    # rule 4: nominations
    pytest.param("opened", dict(nominate=("red", "BR"), first="yellow"),
                 dict(fouls=("wrong_ball_first",), foul_points=7, scores={"A": 7, "B": 0}),
                 id="4 the first ball hit is not the nominated ball"),
    pytest.param("opened", dict(nominate=("red", "BR"), pots=[("red", "TR")]),
                 dict(fouls=("wrong_pocket",), foul_points=7, points_potted=0, on_table=ALL[1:]),
                 id="4 the nominated ball potted in another pocket"),
    pytest.param("opened", dict(nominate=("red", "BR"), pots=[("red", "BR"), ("pink", "TM")]),
                 dict(fouls=("other_ball_potted",), points_potted=0, foul_points=7,
                      respots=(("pink", SPOTS["pink"]),), on_table=ALL[1:]),
                 id="4 a ball that was not nominated is potted"),
    # rules 5-11: free and penalty shots, foul value
    pytest.param("opened", dict(nominate=("blue", "TM"), first="blue"),
                 dict(fouls=("penalty_missed",), foul_points=7, next_player="A", shot_kind="penalty", scores={"A": 7, "B": 0}),
                 id="5 8 11 a missed penalty shot: 7 points to the opponent"),
    pytest.param("opened", dict(nominate=("red", "BR")),
                 dict(fouls=(), shot_kind="free", next_player="A", next_mode="choice", scores={"A": 0, "B": 0}),
                 id="6 7 10 a missed free shot at the lowest ball is no foul; the turn passes"),
    pytest.param("opened", dict(nominate=("red", "BR"), pots=[("red", "BR")]),
                 dict(fouls=(), shot_kind="free", points_potted=1, next_player="B", next_mode="bonus", on_table=ALL[1:]),
                 id="9 nominating the lowest ball is a free shot"),
    pytest.param("opened", dict(nominate=("green", "BL"), first="green", pots=[("green", "BL")]),
                 dict(fouls=(), shot_kind="penalty", points_potted=3, next_player="B", next_mode="must_on",
                      respots=(("green", SPOTS["green"]),), on_table=ALL),
                 id="9 11 nominating any other ball is a penalty shot"),
    # rule 12: the opening shot
    pytest.param("fresh", dict(),
                 dict(fouls=(), shot_kind="opening", next_player="B", next_mode="choice", reset=False, on_table=ALL),
                 id="12 a legal opening shot hits the red: the opponent plays"),
    pytest.param("fresh", dict(nominate=("red", "TR")),
                 dict(fouls=(), shot_kind="opening", next_player="B"),
                 id="12 a nomination of the red on the opening shot is accepted"),
    pytest.param("fresh", dict(first="yellow"),
                 dict(fouls=("wrong_ball_first",), foul_points=7, next_player="B", reset=False),
                 id="12 the opening shot must be played at the red"),
    pytest.param("fresh", dict(pots=[("red", "BR")]),
                 dict(reset=True, fouls=(), foul_points=0, next_player="A", next_mode="opening", on_table=ALL, scores={"A": 0, "B": 0}),
                 id="12 the red potted on the opening shot resets the table"),
    pytest.param("fresh", dict(pots=[("cue", "BR")]),
                 dict(reset=True, fouls=("in_off",), foul_points=0, next_player="A", next_mode="opening"),
                 id="12 an in-off on the opening shot resets the table"),
    pytest.param("fresh", dict(end=snookered_layout(ALL)),
                 dict(reset=True, fouls=(), next_player="A", next_mode="opening",
                      respots=tuple((b, SPOTS[b]) for b in ALL)),
                 id="12 an opening shot that snookers the opponent resets the table"),
    # rule 13 and its paragraphs
    pytest.param("opened", dict(nominate=("black", "TR"), first="black", pots=[("black", "TR")]),
                 dict(fouls=(), points_potted=7, next_player="B", next_mode="must_on", respots=(("black", SPOTS["black"]),)),
                 id="13 13.2 the next player may choose any other ball: potted, scored and re-spotted"),
    pytest.param("bonus_after_red", dict(nominate=("pink", "TM"), first="pink"),
                 dict(fouls=(), shot_kind="bonus", next_player="A", next_mode="choice", foul_points=0),
                 id="13.1 the bonus after the red: a miss is no foul"),
    pytest.param("bonus_after_red", dict(nominate=("blue", "TM"), first="blue", pots=[("blue", "TM")]),
                 dict(fouls=(), shot_kind="bonus", points_potted=5, next_player="B", next_mode="choice",
                      respots=(("blue", SPOTS["blue"]),), on_table=ALL[1:], then_on="yellow"),
                 id="13.1 the red then a colour: the colour is re-spotted and the yellow is next"),
    pytest.param("bonus_after_red", dict(nominate=("yellow", "BL"), first="yellow", pots=[("yellow", "BL")]),
                 dict(fouls=(), points_potted=2, respots=(("yellow", SPOTS["yellow"]),), then_on="yellow", next_player="B"),
                 id="13.1 the red then the yellow: the yellow returns to its spot and is on"),
    pytest.param("on_yellow", dict(nominate=("yellow", "BL"), first="yellow", pots=[("yellow", "BL")]),
                 dict(fouls=(), shot_kind="free", points_potted=2, next_mode="bonus", on_table=ALL[2:], then_on="green"),
                 id="13.1 the yellow chosen as the lowest ball: a free shot, potted it stays down"),
    pytest.param("on_yellow", dict(nominate=("brown", "BL"), first="brown"),
                 dict(fouls=("penalty_missed",), shot_kind="penalty", foul_points=7),
                 id="13.2 the yellow lowest, another colour chosen and missed: a foul"),
    pytest.param("on_pink", dict(nominate=("black", "TR"), first="black", pots=[("black", "TR")]),
                 dict(fouls=(), shot_kind="penalty", points_potted=7, next_mode="must_on",
                      respots=(("black", SPOTS["black"]),), on_table=("pink", "black"), then_on="pink",
                      rules=("brasileira 13.2", "brasileira 13.3")),
                 id="13.3 the pink lowest, the black chosen and potted: re-spotted, the pink next"),
    pytest.param("on_pink", dict(nominate=("pink", "TM"), first="pink", pots=[("pink", "TM")]),
                 dict(fouls=(), shot_kind="free", points_potted=6, next_mode="bonus", on_table=("black",), frame_over=False),
                 id="13.3 the pink lowest, the pink chosen and potted: the bonus at the black"),
    # the end of the frame (rule 1, standard snooker)
    pytest.param("on_black", dict(nominate=("black", "TR"), first="black", pots=[("black", "TR")]),
                 dict(fouls=(), points_potted=7, frame_over=True, match_over=True),
                 id="1 end: the black potted as the ball on ends the frame"),
    pytest.param("on_black", dict(nominate=("black", "TR"), first="black", pots=[("cue", "TL")]),
                 dict(fouls=("in_off",), foul_points=7, frame_over=True),
                 id="1 end: with only the black left a foul ends the frame"),
    pytest.param("on_black", dict(nominate=("black", "TR"), first="black"),
                 dict(fouls=(), frame_over=False, next_mode="choice", on_table=("black",)),
                 id="1 end: the black missed without a foul: the frame goes on"),
]


@pytest.mark.parametrize("setup, shot, expected", CASES)
def test_rule(setup, shot, expected):
    g = SETUPS[setup]()
    shooter = g.state.to_play
    before = g.scores
    d = g.play(**shot)
    assert d.pending is None
    assert d.player == shooter
    then_on = expected.pop("then_on", None)
    for key, want in expected.items():
        got = getattr(d, key)
        if key in ("scores",):
            got, want = dict(got), {p: before[p] + want[p] for p in want}
        if key in ("fouls", "next_mode", "shot_kind"):
            got = tuple(got) if key == "fouls" else (got.value if got is not None else None)
        assert got == want, f"{key}: {got!r} != {want!r} ({d.explanation})"
    if then_on is not None:
        assert g.engine.ball_on(g.state.on_table) == then_on
    assert d.explanation.startswith("brasileira ")
    assert all(r.startswith("brasileira ") for r in d.rules)
    assert list(d.fouls) == [f for f in PRECEDENCE if f in d.fouls]  # precedence order


@pytest.mark.parametrize("ball", ["yellow", "green", "brown", "blue", "pink", "black"])
def test_3_values_of_the_colours(ball):
    """Rule 3: a colour scores its snooker value (a penalty pot right after the opening)."""
    g = opened()
    d = g.play((ball, "BR"), first=ball, pots=[(ball, "BR")])
    assert d.points_potted == VALUES[ball] == PROFILE.ball(ball).value
    assert g.scores == {"A": 0, "B": VALUES[ball]}


def test_2_the_opening_table_and_the_red_on():
    g = Game()
    assert g.state.on_table == frozenset(OBJECT_BALLS)
    assert g.engine.ball_on(g.state.on_table) == "red"
    assert g.state.mode is Mode.OPENING and g.state.to_play == "A"
    # the profile's red sits halfway between the pink and the right-hand (bottom) side cushion
    assert SPOTS["red"][0] == SPOTS["pink"][0]
    assert SPOTS["red"][1] == pytest.approx((SPOTS["pink"][1] + PROFILE.width_mm) / 2)


# ---- rule 4: nominations --------------------------------------------------------------------------------


def test_4_a_shot_without_a_nomination_is_asked_then_judged():
    """Rule 4 (every shot that happened gets a call): a shot with no nomination was refused; now
    the operator is asked which ball and pocket were nominated, and the shot is judged."""
    g = opened()
    d = g.play(None, first="red", pots=[("red", "BR")])
    assert d.pending is not None and d.pending.id == "s1:nomination"
    assert "brasileira rule 4: shot 1 has no nomination: which ball and pocket did B nominate?" == d.pending.text
    assert "red@BR" in d.pending.options and all(o.split("@")[0] in OBJECT_BALLS for o in d.pending.options)
    d = g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="red@BR"))
    assert d.fouls == () and d.points_potted == 1 and d.next_mode is Mode.BONUS


def test_4_a_nomination_after_the_strike_does_not_count():
    g = opened()
    shot = g.shot(None, first="red")
    late = Nomination(t_s=shot.t_s + 0.1, ball="red", pocket="BR")
    d = g.engine.judge(g.state, replace(shot, before=(late,)))
    assert d.pending is not None and "no nomination" in d.pending.text


@pytest.mark.parametrize("ball, pocket, message", [
    pytest.param("purple", "TR", "unknown ball 'purple'", id="4 unknown ball"),
    pytest.param("red", "XX", "unknown pocket 'XX'", id="4 unknown pocket"),
    pytest.param("cue", "TR", "cue ball cannot be nominated", id="4 the cue ball"),
])
def test_4_nominations_are_checked(ball, pocket, message):
    g = opened()
    with pytest.raises(RulesError, match=message):
        g.input(Nomination(t_s=20.0, ball=ball, pocket=pocket))


def test_4_a_ball_not_on_the_table_cannot_be_nominated():
    g = bonus_after_red()
    with pytest.raises(RulesError, match="the red is not on the table"):
        g.input(Nomination(t_s=30.0, ball="red", pocket="BR"))


def test_12_the_opening_shot_is_played_at_the_red_whatever_is_nominated():
    """Rule 12 (every shot that happened gets a call): a nomination of the pink for the opening shot was refused; now the shot is
    judged: played at the pink, it is a foul, since the opening shot must hit the red."""
    g = fresh()
    assert g.input(Nomination(t_s=1.0, ball="pink", pocket="TR")) is None
    d = g.play(first="pink")
    assert d.fouls == (Foul.WRONG_BALL_FIRST,) and d.shot_kind.value == "opening" and "brasileira 12" in d.rules


def test_13_2_after_a_potted_penalty_ball_the_ball_on_must_be_played():
    g = opened()
    g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    d = g.play(("red", "BR"), first="red", pots=[("red", "BR")])
    assert d.fouls == () and d.next_mode is Mode.BONUS


@pytest.mark.parametrize("foul_value, points", [("seven", 7), ("lowest_on_table", 1), ("highest_involved", 5)])
def test_13_2_another_colour_nominated_after_a_potted_penalty_ball_is_a_foul(foul_value, points):
    """13.2 (every shot that happened gets a call): nominating the blue again after potting it as a penalty ball was refused, so the
    shot was never judged; now it is a foul worth seven points (or the variation's value), the blue
    potted scores nothing and is re-spotted, and the opponent plays the red."""
    g = opened({"foul_value": foul_value})
    g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    assert g.input(Nomination(t_s=g.t_s + 1, ball="blue", pocket="TM")) is None
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    assert Foul.BALL_ON_NOT_PLAYED in d.fouls and "brasileira 13.2" in d.rules and d.foul_points == points
    assert d.points_potted == 0 and d.respots == (("blue", SPOTS["blue"]),) and d.next_player == "A"
    assert g.scores == {"A": points, "B": 5}


# ---- the rulebook's examples ------------------------------------------------------------------------------


def test_V0_example_the_blue_potted_repeatedly():
    """PENALTY SHOTS: the green on the table, the blue chosen, potted and re-spotted again and again;
    then missed: seven to the opponent, the points already scored kept."""
    g = clear_to(Game({"penalty_repeat": True}), "green")
    player, other = g.state.to_play, g.state.opponent(g.state.to_play)
    start = g.scores
    for _ in range(4):
        d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
        assert d.fouls == () and d.points_potted == 5 and d.respots == (("blue", SPOTS["blue"]),)
        assert d.next_player == player and d.next_mode is Mode.CHOICE
        assert "brasileira V0" in d.rules
    assert g.scores[player] == start[player] + 20
    d = g.play(("blue", "TM"), first="blue")
    assert d.fouls == (Foul.PENALTY_MISSED,) and d.foul_points == 7 and d.next_player == other
    assert g.scores == {player: start[player] + 20, other: start[other] + 7}


def test_V0_example_the_green_nominated_after_the_blues():
    g = clear_to(Game({"penalty_repeat": True}), "green")
    player = g.state.to_play
    g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    d = g.play(("green", "BL"), first="green", pots=[("green", "BL")])
    assert d.shot_kind.value == "free" and d.next_mode is Mode.BONUS and d.next_player == player
    assert "green" not in g.state.on_table


def test_V0_off_the_blue_repeated_is_a_foul():
    """Without the PENALTY SHOTS variation the blue cannot be played again after it was potted as a
    penalty ball (13.2); that shot was refused, now it is a foul."""
    g = clear_to(Game(), "green")
    g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    assert d.fouls == (Foul.BALL_ON_NOT_PLAYED,) and d.points_potted == 0 and "brasileira 13.2" in d.rules


def test_V1_example_penalty_two():
    """VARIATION 1: the red potted, the yellow the lowest; the pink nominated and missed: 2 points."""
    g = clear_to(Game({"foul_value": "lowest_on_table"}), "yellow")
    other = g.state.opponent(g.state.to_play)
    before = g.scores[other]
    d = g.play(("pink", "TM"), first="pink")
    assert d.fouls == (Foul.PENALTY_MISSED,) and d.foul_points == 2
    assert g.scores[other] == before + 2 and "brasileira V1" in d.rules


def test_V2_example_penalty_six():
    """VARIATION 2: the green lowest; the blue nominated and potted, then the cue ball knocks the pink
    in: 6 points, the value of the pink."""
    g = clear_to(Game({"foul_value": "highest_involved"}), "green")
    other = g.state.opponent(g.state.to_play)
    before = g.scores[other]
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM"), ("pink", "TR")],
               extra=lambda t: [BallBall(t_s=t + 1.05, a="cue", b="pink")])
    assert d.fouls == (Foul.OTHER_BALL_POTTED,) and d.foul_points == 6 and d.points_potted == 0
    assert g.scores[other] == before + 6 and "brasileira V2" in d.rules
    assert dict(d.respots) == {"blue": SPOTS["blue"], "pink": SPOTS["pink"]}


def test_V2_a_missed_penalty_costs_the_nominated_ball():
    g = clear_to(Game({"foul_value": "highest_involved"}), "green")
    assert g.play(("black", "TR"), first="black").foul_points == 7


def test_13_3_example_the_pink_black_ending():
    """The pink the lowest: the black chosen and potted, re-spotted; the pink must be played next;
    then the pink, the bonus black (re-spotted), and the black as the ball on ends the frame."""
    g = clear_to(Game(), "pink")
    p = g.state.to_play
    start = g.scores[p]
    g.play(("black", "TR"), first="black", pots=[("black", "TR")])
    d = g.play(("pink", "TM"), first="pink", pots=[("pink", "TM")])
    assert d.next_mode is Mode.BONUS and d.on_table == ("black",)
    d = g.play(("black", "TR"), first="black", pots=[("black", "TR")])
    assert d.shot_kind.value == "bonus" and not d.frame_over and d.respots == (("black", SPOTS["black"]),)
    d = g.play(("black", "TR"), first="black", pots=[("black", "TR")])
    assert d.frame_over and d.winner == p and g.scores[p] == start + 7 + 6 + 7 + 7
    assert g.state.match_over and g.state.match_winner == p


def test_1_end_a_tie_re_spots_the_black():
    """Level scores when the black drops: the black is re-spotted and the other player plays first
    from hand; the next score or foul ends the frame."""
    g = clear_to(Game(), "black")
    p = g.state.to_play
    o = g.state.opponent(p)
    g.state = replace(g.state, scores=frozen_map({p: 10, o: 17}))
    d = g.play(("black", "TR"), first="black", pots=[("black", "TR")])
    assert not d.frame_over and d.winner is None and dict(d.scores) == {p: 17, o: 17}
    assert d.respots == (("black", SPOTS["black"]),) and d.on_table == ("black",)
    assert d.next_player == o and d.cue_in_hand and "scores level" in d.explanation
    d = g.play(("black", "BR"), first="black")
    assert not d.frame_over and d.next_player == p
    d = g.play(("black", "BR"), first="black", pots=[("black", "BR")])
    assert d.frame_over and d.winner == p and dict(d.scores) == {p: 24, o: 17}


def test_1_end_a_tie_after_a_foul_re_spots_the_black():
    g = clear_to(Game(), "black")
    p = g.state.to_play
    o = g.state.opponent(p)
    g.state = replace(g.state, scores=frozen_map({p: 12, o: 5}))
    d = g.play(("black", "TR"), first=None)
    assert d.fouls == (Foul.NO_BALL_HIT,) and not d.frame_over and dict(d.scores) == {p: 12, o: 12}
    assert d.next_player == o and g.state.on_table == frozenset({"black"})
    d = g.play(("black", "TR"), first="black", pots=[("cue", "TR")])
    assert d.frame_over and d.winner == p


# ---- 13.4: play again -----------------------------------------------------------------------------------


def test_13_4_play_again_after_a_foul():
    g = opened()
    d = g.play(("red", "BR"), first="yellow", end=snookered_layout(ALL))
    assert d.fouls == (Foul.WRONG_BALL_FIRST,) and d.snookered is True and d.offender == "B"
    assert "play again" in d.explanation
    scores = g.scores
    d = g.input(PlayAgain(t_s=g.t_s + 1))
    assert d.next_player == "B" and d.player == "A" and dict(d.scores) == scores
    assert g.state.to_play == "B" and g.state.mode is Mode.CHOICE
    d = g.play(("pink", "TM"), first="pink", pots=[("pink", "TM")])  # the same options as before
    assert d.shot_kind.value == "penalty" and d.points_potted == 6


def test_13_4_play_again_needs_a_foul():
    g = opened()
    g.play(("red", "BR"), first="red")
    with pytest.raises(RulesError, match="only possible right after a foul"):
        g.input(PlayAgain(t_s=g.t_s + 1))


def test_13_4_play_again_only_once():
    g = opened()
    g.play(("red", "BR"), first="yellow")
    g.input(PlayAgain(t_s=g.t_s + 1))
    with pytest.raises(RulesError, match="rule 13.4"):
        g.input(PlayAgain(t_s=g.t_s + 2))


# ---- re-spotting ------------------------------------------------------------------------------------------


def test_respot_own_spot_occupied_goes_to_the_highest_free_spot():
    g = opened()
    # the cue ball stopped on the blue spot; the black has left its spot, the pink has not
    end = layout(set(ALL) - {"blue"}, SPOTS["blue"], {"black": (2400.0, 300.0)})
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")], end=end)
    assert d.respots == (("blue", SPOTS["black"]),)


def test_respot_every_spot_taken_goes_towards_the_top_cushion():
    g = opened()
    end = layout(set(ALL) - {"pink"}, SPOTS["pink"])  # the cue ball on the pink spot, every other spot taken
    d = g.play(("pink", "TM"), first="pink", pots=[("pink", "TM")], end=end)
    (ball, (x, y)), = d.respots
    assert ball == "pink" and y == SPOTS["pink"][1]
    assert x == pytest.approx(SPOTS["pink"][0] + 2 * R)  # touching the cue ball, on the top-cushion side


def test_respot_the_highest_value_first():
    g = opened()
    end = layout(set(ALL) - {"pink", "black"}, SPOTS["black"])
    d = g.play(("pink", "TM"), first="pink", pots=[("pink", "TM"), ("black", "TR")], end=end)
    assert d.fouls == (Foul.OTHER_BALL_POTTED,)
    spots = dict(d.respots)
    assert [b for b, _ in d.respots] == ["black", "pink"]
    assert spots["black"] == SPOTS["pink"]  # the black's spot is taken: the highest free spot is the pink's
    assert spots["pink"] == pytest.approx((SPOTS["pink"][0] + 2 * R, SPOTS["pink"][1]))


def test_respot_blocked_to_the_cushion_goes_back_towards_the_head():
    """Every colour spot taken and a row of balls from the pink spot to the top cushion: the pink
    goes as near as possible to its spot on the head side."""
    g = opened()
    x0, y = SPOTS["pink"]
    end = {b: SPOTS[b] for b in ("yellow", "green", "brown", "blue")}
    end["cue"] = (x0, y)
    k = 1
    while x0 + 2 * R * k <= PROFILE.length_mm - R:  # the row covers the black's spot too
        end[f"w{k}"] = (x0 + 2 * R * k, y)
        k += 1
    (ball, xy), = g.engine._respot(["pink"], end)
    assert ball == "pink" and xy == pytest.approx((x0 - 2 * R, y))


# ---- operator inputs: questions, overrides, fouls the camera cannot see, concession ---------------------------


def test_pending_first_contact_is_asked_and_answered():
    g = opened()
    state = g.state
    d = g.play(("red", "BR"), first="yellow", confidence={"first": 0.3},
               extra=lambda t: [BallBall(t_s=t + 0.9, a="cue", b="red")])
    assert d.pending is not None and d.pending.options[:2] == ("yellow", "red") and d.pending.default == "yellow"
    assert "pink" in d.pending.options and "none" not in d.pending.options  # the referee may have seen another ball first
    assert "first contact yellow or red (or another ball on the table)?" in d.pending.text
    assert g.state.scores == state.scores and g.state.on_table == state.on_table and g.referee.pending == d.pending
    with pytest.raises(RulesError, match="pending"):
        g.play(("red", "BR"))
    with pytest.raises(RulesError, match="answer one of"):
        g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="cue"))
    d = g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="red"))
    assert d.pending is None and d.fouls == () and d.next_player == "A"


def test_min_confidence_option_sets_what_is_asked():
    g = Game({"min_confidence": 0.2})
    g.open()
    d = g.play(("red", "BR"), first="yellow", confidence={"first": 0.3})
    assert d.pending is None and d.fouls == (Foul.WRONG_BALL_FIRST,)


def test_the_semi_official_table_uses_its_own_spots():
    g = Game(profile="brasileira-semi")
    g.open()
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")], end={"cue": CUE_REST})
    semi = g.engine.profile
    assert semi.name == "brasileira-semi" and d.respots == (("blue", semi.spots["blue"]),) != (("blue", SPOTS["blue"]),)


def test_pending_pot_answered_no():
    g = opened()
    d = g.play(("red", "BR"), first="red", pots=[("red", "BR")], confidence={"red": 0.2})
    assert d.pending is not None and d.pending.options == ("yes", "no")
    d = g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="no"))
    assert d.points_potted == 0 and "red" in g.state.on_table and d.next_player == "A"


def test_pending_unobserved_moment_is_confirmed():
    g = opened()
    d = g.play(("red", "BR"), first="red", pots=[("red", "BR")],
               extra=lambda t: [Unobserved(t_s=t + 0.7, until_s=t + 1.5, reason="head over the table")])
    assert d.pending is not None and "unobserved" in d.pending.text
    d = g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="confirm"))
    assert d.points_potted == 1 and d.next_mode is Mode.BONUS


def test_12_opening_snooker_unknown_without_positions_is_asked():
    g = fresh()
    d = g.play(end={"cue": CUE_REST})  # the red was not seen at rest
    assert d.pending is not None and "snookered" in d.pending.text
    d = g.input(Answer(t_s=g.t_s + 1, question=d.pending.id, answer="yes"))
    assert d.reset and d.next_player == "A"


def test_override_fouls_none_restores_the_scores():
    g = opened()
    d = g.play(("red", "BR"), first="yellow", confidence={})
    assert d.fouls == (Foul.WRONG_BALL_FIRST,) and g.scores == {"A": 7, "B": 0}
    d = g.input(Override(t_s=g.t_s + 1, field="fouls", value="none"))
    assert d.amends and d.fouls == () and g.scores == {"A": 0, "B": 0} and d.next_player == "A"


def test_override_pots_the_camera_missed():
    g = opened()
    g.play(("red", "BR"), first="red")
    d = g.input(Override(t_s=g.t_s + 1, field="pots", value="red@BR"))
    assert d.points_potted == 1 and d.next_player == "B" and d.next_mode is Mode.BONUS
    assert g.scores == {"A": 0, "B": 1}


def test_override_nomination_and_first_contact():
    g = opened()
    g.play(("red", "BR"), first="red", pots=[("red", "TR")])
    assert g.scores == {"A": 7, "B": 0}
    d = g.input(Override(t_s=g.t_s + 1, field="nomination", value="red@TR"))
    assert d.fouls == () and g.scores == {"A": 0, "B": 1}
    d = g.input(Override(t_s=g.t_s + 2, field="first_contact", value="none"))
    assert d.fouls == (Foul.NO_BALL_HIT,) and g.scores == {"A": 7, "B": 0}


@pytest.mark.parametrize("field, value, message", [
    pytest.param("winner", "A", "cannot override 'winner'", id="override unknown field"),
    pytest.param("fouls", "push", "use 'none' or comma-separated", id="override unknown foul"),
    pytest.param("pots", "red", "not ball@pocket", id="override bad pots"),
])
def test_override_errors(field, value, message):
    g = opened()
    g.play(("red", "BR"), first="red")
    with pytest.raises(RulesError, match=message):
        g.input(Override(t_s=g.t_s + 1, field=field, value=value))


def test_override_without_a_shot_is_refused():
    with pytest.raises(RulesError, match="no shot call to change"):
        fresh().input(Override(t_s=0.5, field="fouls", value="none"))


def test_1_operator_foul_on_the_last_shot():
    g = opened()
    g.play(("red", "BR"), first="red", pots=[("red", "BR")])
    d = g.input(OperatorFoul(t_s=g.t_s + 1, player="B", rule="1", note="push stroke"))
    assert d.fouls == (Foul.OPERATOR,) and d.foul_points == 7 and d.points_potted == 0
    assert g.scores == {"A": 7, "B": 0} and "push stroke" in d.explanation
    with pytest.raises(RulesError, match="played by B"):
        g.input(OperatorFoul(t_s=g.t_s + 2, player="A", rule="1"))


def test_concession_and_best_of_three():
    g = Game({"frames": 3})
    g.open()
    d = g.input(Concession(t_s=g.t_s + 1, player="B"))
    assert d.frame_over and d.winner == "A" and not d.match_over and d.next_player == "B"
    assert g.state.frame == 2 and g.state.breaker == "B" and g.state.mode is Mode.OPENING
    d = g.input(Concession(t_s=g.t_s + 1, player="A"))
    assert d.winner == "B" and dict(d.frames_won) == {"A": 1, "B": 1} and not d.match_over
    assert g.state.frame == 3 and g.state.breaker == "A" and g.state.scores == {"A": 0, "B": 0}
    d = clear_to(g, "black").play(("black", "TR"), first="black", pots=[("black", "TR")])
    assert d.frame_over and d.match_over and g.state.match_winner == d.winner == d.match_winner
    assert dict(d.frames_won)[d.winner] == 2
    with pytest.raises(RulesError, match="match is over"):
        g.play(("red", "BR"))


# ---- impossible logs and options ----------------------------------------------------------------------------


@pytest.mark.parametrize("kw, message", [
    pytest.param(dict(nominate=("yellow", "TL"), first="yellow", pots=[("red", "TL")]), "not on the table", id="pot of a ball not on the table"),
    pytest.param(dict(nominate=("yellow", "TL"), first="purple"), "unknown ball 'purple'", id="unknown ball"),
    pytest.param(dict(nominate=("yellow", "TL"), first="yellow", pots=[("yellow", "ZZ")]), "unknown pocket 'ZZ'", id="unknown pocket"),
    pytest.param(dict(nominate=("yellow", "TL"), first="yellow", pots=[("yellow", "TL"), ("yellow", "TR")]), "potted twice", id="potted twice"),
])
def test_impossible_logs(kw, message):
    g = bonus_after_red()
    with pytest.raises(RulesError, match=message):
        g.play(**kw)


@pytest.mark.parametrize("options, message", [
    ({"foul_value": "eight"}, "foul_value"),
    ({"frames": 2}, "odd number"),
    ({"penalty_shots": True}, "unknown option"),
])
def test_bad_options(options, message):
    with pytest.raises(RulesError, match=message):
        Game(options)


def test_options_are_recorded_and_registry():
    engine = get_engine("brasileira")
    assert isinstance(engine, BrasileiraRules) and engine.name == "brasileira"
    state = engine.initial_state(["A", "B"], {"foul_value": "highest_involved", "penalty_repeat": "true"})
    assert state.options_record == {"foul_value": "highest_involved", "penalty_repeat": True, "frames": 1, "min_confidence": 0.6,
                                    "start": "rack", "start_player": "", "start_scores": "", "start_balls": ""}
    semi = get_engine("brasileira", "brasileira-semi")
    assert semi.profile.name == "brasileira-semi"


def test_decisions_are_json_ready():
    g = opened()
    d = g.play(("blue", "TM"), first="blue", pots=[("blue", "TM")])
    text = json.dumps(d.to_dict())
    assert '"respots": [["blue", [1420.0, 710.0]]]' in text


# ---- a hand-written log through replay ---------------------------------------------------------------------


def test_replay_of_a_hand_written_log():
    header, events = read_events(DATA / "brasileira_rulebook.jsonl")
    engine = get_engine(header.game, header.profile)
    steps = list(replay(engine, events, header.players, header.options))
    calls = [(s.decision.shot, s.decision.player, tuple(s.decision.fouls), s.decision.next_player, dict(s.decision.scores)) for s in steps]
    assert calls == [
        (0, "Ana", (), "Bia", {"Ana": 0, "Bia": 0}),  # 12: the opening shot hits the red
        (1, "Bia", (), "Bia", {"Ana": 0, "Bia": 1}),  # 13.1: the red potted, the bonus
        (2, "Bia", (), "Bia", {"Ana": 0, "Bia": 6}),  # 13.1: the blue on the bonus, re-spotted
        (3, "Bia", ("penalty_missed",), "Ana", {"Ana": 7, "Bia": 6}),  # 13.2: the pink missed
        (None, "Ana", (), "Bia", {"Ana": 7, "Bia": 6}),  # 13.4: play again
        (4, "Bia", ("wrong_pocket",), "Ana", {"Ana": 14, "Bia": 6}),  # 4: the yellow in the wrong pocket
        (5, "Ana", (), "Ana", {"Ana": 16, "Bia": 6}),  # 13.1: the yellow free
    ]
    assert steps[2].decision.respots == (("blue", SPOTS["blue"]),)
    assert steps[-1].state.mode is Mode.BONUS and "yellow" not in steps[-1].state.on_table


def test_cueref_judge_with_a_calls_file(tmp_path, capsys):
    """``cueref judge`` merges a separate calls file (the nominations and the play-again request)
    into the camera's log and reproduces the expected calls."""
    from cueref.cli import main
    from tracking.events import OperatorInput, write_events

    header, events = read_events(DATA / "brasileira_rulebook.jsonl")
    camera, calls = tmp_path / "camera.jsonl", tmp_path / "calls.jsonl"
    write_events(camera, [e for e in events if not isinstance(e, OperatorInput)], header)
    write_events(calls, [e for e in events if isinstance(e, OperatorInput)])
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"expected_decisions": [
        {"shot": 0, "fouls": [], "next_player": "Bia"},
        {"shot": 3, "fouls": ["penalty_missed"], "next_player": "Ana"},
        {"shot": 4, "fouls": ["wrong_pocket"], "next_player": "Ana"},
        {"shot": 5, "fouls": [], "next_player": "Ana", "frame_over": False},
    ]}))
    out = tmp_path / "decisions.jsonl"
    assert main(["judge", str(camera), "--calls", str(calls), "--check", str(expected), "--json", str(out)]) == 0
    assert "all expected decisions" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 7 and "facts" not in rows[0] and rows[4]["explanation"].startswith("brasileira 13.4")
    assert main(["judge", str(camera), "--check", str(expected)]) == 1  # without the nominations: asked, not judged
    assert "has no nomination" in capsys.readouterr().out


# ---- properties ---------------------------------------------------------------------------------------------

POCKETS = tuple(p.id for p in PROFILE.pockets)


def _draw_shot(data, g: Game):
    state = g.state
    on_table = [b for b in OBJECT_BALLS if b in state.on_table]
    on = on_table[0]
    if state.mode is Mode.OPENING:
        nominate = None
        target = "red"
    else:
        choices = [on] if state.mode is Mode.MUST_ON else on_table
        target = data.draw(st.sampled_from(choices))
        nominate = (target, data.draw(st.sampled_from(POCKETS)))
    others = [b for b in on_table if b != target]
    first = data.draw(st.sampled_from([target, target, target, None] + others[:2]))
    pocket = nominate[1] if nominate else "BR"
    wrong = next(p for p in POCKETS if p != pocket)
    pots = data.draw(st.sampled_from([
        [], [(target, pocket)], [(target, pocket)], [(target, pocket)], [(target, wrong)],
        [("cue", wrong)], [(target, pocket), ("cue", wrong)],
    ] + ([[(others[-1], wrong)]] if others else [])))
    return nominate, first, pots


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), foul_value=st.sampled_from(["seven", "lowest_on_table", "highest_involved"]), repeat=st.booleans())
def test_properties_scores_grow_points_add_up_frame_ends_once(data, foul_value, repeat):
    g = Game({"foul_value": foul_value, "penalty_repeat": repeat})
    frame_ends = 0
    n_random = data.draw(st.integers(0, 40))
    for i in range(200):
        if g.state.match_over:
            break
        state = g.state
        on_table = [b for b in OBJECT_BALLS if b in state.on_table]
        if i < n_random:
            nominate, first, pots = _draw_shot(data, g)
        elif state.mode is Mode.OPENING:  # then finish the frame legally: see clear_to
            nominate, first, pots = None, "red", []
        elif state.mode is Mode.BONUS:
            nominate, first, pots = (on_table[0], "TL"), on_table[0], []
        else:
            nominate, first, pots = (on_table[0], "TR"), on_table[0], [(on_table[0], "TR")]
        before = dict(state.scores)
        d = g.play(nominate, first=first, pots=pots)
        assert d.pending is None
        after = dict(d.scores)
        # scores only grow, and what they grew by is the points awarded: pots plus foul points
        assert all(after[p] >= before[p] for p in before)
        assert sum(after.values()) - sum(before.values()) == d.points_potted + d.foul_points
        assert after[d.player] - before[d.player] == d.points_potted
        # the pot points: the nominated ball, potted in the nominated pocket, on a shot with no foul
        target = nominate[0] if nominate else "red"
        legal_pot = nominate is not None and (target, nominate[1]) in pots and not d.fouls
        assert d.points_potted == (VALUES[target] if legal_pot else 0)
        # foul points: exactly on a penalised foul, worth what the option says
        if d.fouls and not d.reset:
            expected = {"seven": 7, "lowest_on_table": VALUES[on_table[0]]}.get(foul_value)
            if expected is not None:
                assert d.foul_points == expected
            else:
                assert VALUES[target] <= d.foul_points <= 7
        else:
            assert d.foul_points == 0
        if d.reset:
            assert state.mode is Mode.OPENING and g.state.on_table == frozenset(OBJECT_BALLS)
        if not d.frame_over:
            assert "black" in g.state.on_table
        frame_ends += d.frame_over
        assert frame_ends <= 1
    assert g.state.match_over and frame_ends == 1
    # the same log through rules.base.replay (nominations offered to on_input) gives the same calls
    steps = list(replay(g.engine, g.log, ("A", "B"), {"foul_value": foul_value, "penalty_repeat": repeat}))
    assert [s.decision.to_dict() for s in steps] == [d.to_dict() for d in g.decisions]
    assert g.state.match_winner == max(g.decisions[-1].scores, key=lambda p: g.decisions[-1].scores[p])
    with pytest.raises(RulesError, match="match is over"):
        g.play(("black", "TR"), first="black")


# ---- bad input: a clear call, never an internal error -----------------------------------


def test_4_an_override_to_a_wrong_pocket_when_nothing_dropped_is_a_call_not_an_internal_error():
    """The sequence that stopped the engine with StopIteration: a nomination, a shot at the red seen
    without positions (no snooker seen, rule 12), then an override of the fouls to wrong_pocket
    (rule 4) although the red did not drop."""
    referee = Referee(get_engine("brasileira"), ("A", "B"))
    events = [Nomination(t_s=0.5, ball="red", pocket="BR"), ShotStart(t_s=1.0, ball="cue"),
              BallBall(t_s=1.5, a="cue", b="red"), AtRest(t_s=4.0)]
    d = [st for e in events for st in referee.feed(e)][-1].decision
    assert d.pending is None and d.fouls == () and d.next_player == "B" and not d.reset and "no snooker seen" in d.explanation
    d = referee.feed(Override(t_s=6.0, field="fouls", value="wrong_pocket"))[-1].decision
    assert d.amends and d.fouls == (Foul.WRONG_POCKET,) and "the red was not potted, nominated BR" in d.explanation
    assert d.foul_points == 7 and d.next_player == "B" and "brasileira 12" in d.rules


# ---- a frame joined mid-way (option start=mid_frame) ---------------------------------------------------------


def test_13_3_from_a_mid_frame_position_read_off_the_first_strike():
    """Joined with the pink and the black on the table (and a ball hidden by the camera above the
    pink would still count): B, 12-30 down, nominates the black as a penalty shot (13.3) and pots it."""
    g = Game({"start": "mid_frame", "start_player": "B", "start_scores": "A=30,B=12"})
    assert g.state.to_play == "B" and g.scores == {"A": 30, "B": 12} and g.state.mode is Mode.CHOICE
    start = layout(("pink", "black"), CUE_REST)
    d = g.play(("black", "TR"), first="black", pots=[("black", "TR")], start=start, end=layout(("pink",), CUE_REST))
    assert d.fouls == () and d.shot_kind.value == "penalty" and d.points_potted == 7 and d.ball_on == "pink"
    assert g.state.on_table == frozenset({"pink", "black"}) and g.scores == {"A": 30, "B": 19} and "brasileira 13.3" in d.rules


def test_1_end_from_a_mid_frame_position_given_by_start_balls():
    g = Game({"start": "mid_frame", "start_balls": "black", "start_scores": "A=40,B=41"})
    assert g.state.on_table == frozenset({"black"}) and not g.state.start_unseen
    d = g.play(("black", "BR"), first="black", pots=[("black", "BR")], start=layout(("black",), CUE_REST))
    assert d.frame_over and d.winner == "A" and dict(d.scores) == {"A": 47, "B": 41}


def test_mid_frame_a_ball_hidden_above_the_lowest_one_seen_is_still_on_the_table():
    g = Game({"start": "mid_frame"})
    start = layout(("brown", "pink", "black"), CUE_REST)  # the blue is hidden from the camera
    d = g.play(("brown", "BL"), first="brown", start=start)
    assert d.fouls == () and g.state.on_table == frozenset({"brown", "blue", "pink", "black"})


@pytest.mark.parametrize("options, message", [
    ({"start_player": "B"}, "need start=mid_frame"),
    ({"start_scores": "A=3"}, "need start=mid_frame"),
    ({"start": "mid_frame", "start_player": "C"}, "not a player"),
    ({"start": "mid_frame", "start_scores": "C=3"}, "player=points"),
    ({"start": "mid_frame", "start_scores": "A=-3"}, "player=points"),
    ({"start": "mid_frame", "start_balls": "purple"}, "purple"),
    ({"start": "mid_frame", "start_balls": "cue"}, "needs an object ball"),
])
def test_mid_frame_start_options_are_checked(options, message):
    with pytest.raises(RulesError, match=message):
        Game(options)
