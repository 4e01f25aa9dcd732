"""The Norwich league match record of 4-pin bar billiards (league rules 4-8): the draw, the five-player
rule and the scorecard, from numbers or from the engine's final state of a frame."""

from __future__ import annotations

import pytest

from rules.base import RulesError
from rules.league import draw_league_match
from tests.rules._bar_billiards_helpers import WHITES, make_shot, make_state, play

HOME6 = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")
AWAY6 = ("Gus", "Hal", "Ivy", "Jo", "Kim", "Lou")


def _appearances(match, side):
    singles = [p for f in match.frames if f.kind == "singles" for p in getattr(f, side)]
    doubles = [p for f in match.frames if f.kind == "doubles" for p in getattr(f, side)]
    return singles, doubles


def test_6_six_singles_then_three_doubles_drawn():
    m = draw_league_match("Home", HOME6, "Away", AWAY6, seed=7)
    assert [f.kind for f in m.frames] == ["singles"] * 6 + ["doubles"] * 3
    assert [f.referee for f in m.frames] == ["home", "away"] * 4 + ["home"]
    for side, team in (("home", HOME6), ("away", AWAY6)):
        singles, doubles = _appearances(m, side)
        assert sorted(singles) == sorted(team) and sorted(doubles) == sorted(team)
    assert draw_league_match("Home", HOME6, "Away", AWAY6, seed=7) == m
    draws = {tuple(f.home for f in draw_league_match("Home", HOME6, "Away", AWAY6, seed=s).frames) for s in range(8)}
    assert len(draws) > 1  # the seed drives the draw


@pytest.mark.parametrize("seed", range(12))
def test_8_five_players(seed):
    five = HOME6[:5]
    m = draw_league_match("Home", five, "Away", AWAY6, seed=seed)
    singles, doubles = _appearances(m, "home")
    twice = [p for p in five if singles.count(p) == 2]
    assert len(singles) == 6 and len(twice) == 1 and set(singles) == set(five)  # 8 a, 8 b
    third = m.frames[8].home
    assert len(third) == 2 and third[0] != third[1]  # 8 c: a pair of two players
    assert len(doubles) == 6 and doubles.count(twice[0]) == 1  # 8 c: not the one who played two singles
    assert sorted(doubles.count(p) for p in five) == [1, 1, 1, 1, 2]
    assert any("8 b" in n for n in m.frames[5].notes) and any("8 c" in n for n in m.frames[8].notes)
    away_singles, _ = _appearances(m, "away")
    assert sorted(away_singles) == sorted(AWAY6)


def test_8_fewer_than_five_and_the_clock():
    with pytest.raises(RulesError, match="at least five"):
        draw_league_match("Home", HOME6[:4], "Away", AWAY6, seed=1)
    with pytest.raises(RulesError, match="14 and 18"):
        draw_league_match("Home", HOME6, "Away", AWAY6, seed=1, clock_minutes=20)


def test_match_record_scores_each_frame():
    m = draw_league_match("Home", HOME6, "Away", AWAY6, seed=3)
    for n in range(1, 10):
        m = m.record(n, 1000 if n <= 5 else 200, 500 if n != 9 else 200)
    assert m.over and m.frames_won == {"home": 5.5, "away": 3.5} and m.winner == "Home"
    assert m.frames[8].result == "shared"
    with pytest.raises(RulesError):
        m.record(10, 1, 2)
    # a frame's score from the engine's final state
    frame = m.frames[0]
    assert dict(m.frame_options) == {"clock_minutes": 15.0}
    state = make_state(frame.players, m.frame_options, table={"w1": (900, 300), "w2": (1200, 760)}, trough=(), out=("red", *WHITES[2:]),
                       bar_down=True, banked={frame.players[0]: 300, frame.players[1]: 300})
    d, state = play(state, make_shot(state, "w1", ("hit", "w1", "w2"), ("pot", "w2", "h10"), ("pot", "w1", "h20")))
    m = m.record_state(1, state)
    assert (m.frames[0].home_score, m.frames[0].away_score) == (330, 300)
