"""Every staged scene makes the referee decision it promises (checked by the rules engine), and the
hard cases are what they say."""

from __future__ import annotations

import json

import pytest

from simulator.scenarios import SCENARIOS, scenario, scenario_names
from simulator.script import dumps_script, parse_script, run_script
from rules import get_engine
from rules.base import replay
from tracking.events import BallBall, BallPlaced, Pot, ShotStart, dumps_events


def _decisions(run):
    return [s.decision for s in replay(get_engine(run.game), run.events, run.players, run.options) if s.decision.shot is not None]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_gets_its_expected_call(name):
    run = run_script(scenario(name))
    assert run.expected, "a scenario must promise a decision"
    decisions = _decisions(run)
    for exp in run.expected:
        d = decisions[exp.shot]
        if exp.before_shot:  # a hand action's call: the call made before that shot (ficha's prior)
            assert d.prior, (exp.note, d.explanation)
            d = d.prior[0]
        assert not exp.mismatches(d), (exp.note, d.explanation)


def test_hard_cases_are_hard():
    near = run_script(scenario("hard_near_miss"))
    assert not [e for e in near.events if isinstance(e, BallBall) and "y4" in (e.a, e.b)]
    pots = [e for e in run_script(scenario("hard_two_pots")).events if isinstance(e, Pot)]
    assert len(pots) == 2 and abs(pots[0].t_s - pots[1].t_s) < 0.05
    cluster = [e for e in run_script(scenario("hard_kiss_cluster")).events if isinstance(e, BallBall)]
    assert len({frozenset((e.a, e.b)) for e in cluster if e.t_s == cluster[0].t_s}) >= 3


def test_scenarios_round_trip_through_json():
    sc = scenario("ficha_wrong_ball_first")
    again = parse_script(json.loads(dumps_script(sc)))
    assert dumps_events(run_script(again).events) == dumps_events(run_script(sc).events)
    assert "ficha_miss" in scenario_names("ficha")
    with pytest.raises(KeyError):
        scenario("nope")


@pytest.mark.parametrize("name, order", [("ficha_both_last_balls", ["r1", "y1"]), ("ficha_both_last_balls_own_last", ["y1", "r1"])])
def test_both_last_balls_scenes_start_mid_frame_and_drop_both(name, order):
    run = run_script(scenario(name))
    first = next(e for e in run.events if isinstance(e, ShotStart))
    assert set(first.positions) == {"cue", "r1", "y1"}  # what the camera sees: the engine takes it as the table
    assert not [e for e in run.events if isinstance(e, BallPlaced)]
    assert run.options["start"] == "mid_frame"
    pots = [e for e in run.events if isinstance(e, Pot)]
    assert [p.ball for p in pots] == order and pots[1].t_s - pots[0].t_s > 0.1
    # judged as a racked frame (no start options) the same log is a break with balls missing: another call
    racked = [s.decision for s in replay(get_engine(run.game), run.events, run.players)]
    assert not racked[0].frame_over
