"""Match scripts (parsing, errors, running), the aiming helper and the automatic player."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from calibration.table import resolve_profile
from simulator.aim import aim_pot, pot_geometry
from simulator.physics import BallState, World, simulate
from simulator.player import AutoPlayer, generate_frame
from simulator.scene import BallStatus
from simulator.script import ScriptError, dumps_script, load_script, parse_script, run_script
from rules import get_engine
from rules.base import replay
from tracking.events import (
    AtRest,
    BallPlaced,
    BallRemoved,
    BallTouched,
    Concession,
    Nomination,
    Pot,
    ShotStart,
    dumps_events,
)

FICHA = resolve_profile("ficha")


def ficha_script(**extra):
    return {
        "game": "ficha",
        "players": ["A", "B"],
        "frames": [{
            "steps": [
                {"shot": {"ball": "cue", "direction_deg": 183.0, "speed_mm_s": 2500.0, "top": 0.1},
                 "expect": {"fouls": [], "next_player": "B", "note": "break"}},
                {"touch": {"ball": "y1", "velocity_mm_s": [-150.0, 0.0]}},
                {"remove": {"ball": "r2"}},
                {"place": {"ball": "r2", "xy_mm": [300.0, 300.0]}, "pause_s": 0.5},
                {"wait": 2.0},
                {"input": {"kind": "concession", "player": "B"}, "expect": {"frame_over": True, "winner": "A"}},
            ],
        }],
        **extra,
    }


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s.update(game="pool"), "'game' must be one of"),
    (lambda s: s["frames"][0]["steps"][0].update(place={"ball": "r1", "xy_mm": [1, 2]}), "exactly one of"),
    (lambda s: s["frames"][0]["steps"][0]["shot"].update(speed_mm_s="fast"), "speed_mm_s must be a number"),
    (lambda s: s["frames"][0]["steps"][0]["shot"].update(spin=0.2), "unknown field(s) spin"),
    (lambda s: s["frames"][0]["steps"][0]["expect"].update(fouls=["scratch"]), "scratch not a foul of ficha"),
    (lambda s: s["frames"][0]["steps"][0]["expect"].update(next_player="C"), "'C' is not a player"),
    (lambda s: s["frames"][0]["steps"][3]["place"].update(xy_mm=[1.0]), "must be [x_mm, y_mm]"),
    (lambda s: s["frames"][0]["steps"][5]["input"].update(kind="pot"), "must be an operator input"),
    (lambda s: s["frames"][0]["steps"][3].update(expect={"fouls": []}), "only shots, operator inputs and touches"),
    (lambda s: s["frames"][0]["steps"][0]["shot"].update(side=0.5, top=0.5), "miscue"),
])
def test_script_errors_name_the_place(mutate, message):
    s = ficha_script()
    mutate(s)
    with pytest.raises(ScriptError) as err:
        parse_script(s, "test.yaml")
    assert message in str(err.value)
    assert "test.yaml" in str(err.value)


def test_script_runs_every_step_in_time_order():
    run = run_script(ficha_script(), seed=4)
    events, segments, expected = run
    times = [e.t_s for e in events]
    assert times == sorted(times) and times[0] == 1.0
    kinds = [type(e) for e in events]
    assert kinds[0] is ShotStart and AtRest in kinds
    for k in (BallTouched, BallRemoved, BallPlaced, Concession):
        assert k in kinds
    assert events[-1].t_s == pytest.approx(max(times))
    assert [e.shot for e in expected] == [0, None]
    assert expected[0].checks == ("fouls", "next_player") and expected[1].winner == "A"
    at_rest = next(e for e in events if isinstance(e, AtRest))
    assert expected[0].t_s == pytest.approx(at_rest.t_s)
    # the joined timeline shows r2 in the hand, then on its new place
    placed = next(e for e in events if isinstance(e, BallPlaced))
    tl = run.timeline
    assert tl.at(placed.t_s - 0.3).balls[FICHA.ball_ids.index("r2")].status is BallStatus.IN_HAND
    assert tl.at(placed.t_s + 0.1).balls[FICHA.ball_ids.index("r2")].xy_mm == (300.0, 300.0)
    assert run.world.ball("r2").xy_mm == (300.0, 300.0)


def test_script_is_reproducible_from_its_seed_and_file(tmp_path):
    a = dumps_events(run_script(ficha_script(), seed=4).events)
    assert a == dumps_events(run_script(ficha_script(), seed=4).events)
    assert a != dumps_events(run_script(ficha_script(), seed=5).events)  # the rack's gaps differ
    path = tmp_path / "s.json"
    path.write_text(dumps_script(parse_script(ficha_script(seed=4))))
    assert dumps_events(run_script(load_script(path)).events) == a


def test_expectations_match_the_rules_engine_on_a_scripted_miss():
    """A scripted 5.2 miss (opponent ball first) must be called so by the ficha engine."""
    s = {
        "game": "ficha",
        "frames": [{
            "setup": {"positions": {"cue": [700.0, 400.0], "r1": [300.0, 200.0], "y1": [1000.0, 400.0], "r2": [200, 600],
                                    "r3": [500, 700], "r4": [100, 100], "y2": [1200, 700], "y3": [1300, 100], "y4": [900, 700]}},
            "steps": [{"shot": {"ball": "cue", "direction_deg": 0.0, "speed_mm_s": 1200.0},
                       "expect": {"fouls": ["wrong_ball_first"], "next_player": "B"}}],
        }],
    }
    run = run_script(s)
    decisions = [st.decision for st in replay(get_engine("ficha", FICHA), run.events, run.players)]
    assert not run.expected[0].mismatches(decisions[0]), decisions[0].explanation


def test_aim_pot_finds_pots_that_the_simulation_confirms():
    rng = np.random.default_rng(11)
    tried = found = 0
    for _ in range(15):
        c = (rng.uniform(150, 1270), rng.uniform(150, 660))
        o = (rng.uniform(150, 1270), rng.uniform(150, 660))
        if math.dist(c, o) < 150:
            continue
        w = World(FICHA, (BallState("cue", c), BallState("r1", o)))
        for pk in ("TL", "TM", "TR", "BL", "BM", "BR"):
            plan = pot_geometry(w, "r1", pk)
            if plan is None or plan.cut_deg > 55:
                continue
            tried += 1
            shot = aim_pot(w, "r1", pk)
            if shot is not None:
                found += 1
                pots = [e for e in simulate(w, shot).events if isinstance(e, Pot)]
                assert ("r1", pk) in [(p.ball, p.pocket) for p in pots]
    assert tried >= 10 and found >= 0.8 * tried


def test_aim_pot_refuses_a_blocked_line():
    w = World(FICHA, (BallState("cue", (300.0, 405.0)), BallState("r1", (700.0, 405.0)), BallState("y1", (500.0, 405.0))))
    assert pot_geometry(w, "r1", "TR") is None
    assert pot_geometry(w.with_ball(BallState("y1", (500.0, 600.0))), "r1", "TR") is not None
    straight = World(FICHA, (BallState("cue", (100.0, 100.0)), BallState("r1", (1000.0, 600.0)), BallState("y1", (550.0, 350.0))))
    assert aim_pot(straight, "r1", "BR") is None


def test_auto_player_plays_safe_when_nothing_pots():
    w = World(FICHA, (BallState("cue", (710.0, 405.0)), BallState("r1", (710.0, FICHA.width_mm - 26.01))))
    ap = AutoPlayer("ficha", np.random.default_rng(0))
    choice = ap.choose(w, ["r1"], pockets=["TL"])
    assert choice.kind == "safe" and choice.ball == "r1"


@pytest.mark.parametrize("game, seed", [("ficha", 1), ("brasileira", 1), ("bar-billiards", 2)])
def test_generated_frames_finish_replay_and_agree_with_the_engine(game, seed):
    """A generated frame ends, replays to the same log, and the engine's replay gives the calls it
    recorded: its expectations are the engine's own (regression goldens), so this checks that the
    log and the calls are reproducible, not that the calls are right."""
    gf = generate_frame(game, seed=seed, max_shots=60)
    assert gf.complete, [d.explanation for d in gf.decisions]
    assert gf.decisions[-1].frame_over
    # the script replays to the same log, through JSON too
    again = run_script(parse_script(json.loads(dumps_script(gf.script))))
    assert dumps_events(again.events) == dumps_events(gf.run.events)
    # replaying the log through the engine gives the recorded expectations
    shot_decisions = [s.decision for s in replay(get_engine(game), gf.run.events, gf.run.players) if s.decision.shot is not None]
    assert len(shot_decisions) == len(gf.run.expected)
    for exp, dec in zip(gf.run.expected, shot_decisions):
        assert not exp.mismatches(dec), (exp, dec.explanation)
    if game == "brasileira":
        assert any(isinstance(e, Nomination) for e in gf.run.events)


def test_shot_aimed_at_a_ball_hits_it_first_and_round_trips():
    s = ficha_script(seed=2)
    s["frames"][0]["steps"].insert(1, {"shot": {"ball": "cue", "at": "y2", "speed_mm_s": 1500.0}})
    run = run_script(s)
    starts = [i for i, e in enumerate(run.events) if isinstance(e, ShotStart)]
    from tracking.events import BallBall
    first = next(e for e in run.events[starts[1]:] if isinstance(e, BallBall))
    assert {first.a, first.b} == {"cue", "y2"}
    again = run_script(parse_script(json.loads(dumps_script(parse_script(s)))))
    assert dumps_events(again.events) == dumps_events(run.events)
    with pytest.raises(ScriptError, match="either 'direction_deg' or 'at'"):
        parse_script({"game": "ficha", "frames": [{"steps": [{"shot": {"ball": "cue", "speed_mm_s": 100.0}}]}]})


def test_joined_timeline_holds_between_pieces():
    run = run_script(ficha_script(), seed=4)
    tl = run.timeline
    rest = next(e for e in run.events if isinstance(e, AtRest))
    gap_t = rest.t_s + 0.5  # after the shot stopped, before the touch
    for bid, xy in rest.positions.items():
        assert tl.ball_pose(bid, gap_t).xy_mm == pytest.approx(xy)
    assert tl.t_start_s == 1.0 and tl.t_end_s == pytest.approx(run.t_end_s)


def test_the_documented_example_script_runs_and_gets_its_calls():
    import re
    from pathlib import Path

    import yaml

    doc = (Path(__file__).resolve().parents[2] / "docs" / "simulator-physics.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", doc, re.S).group(1)
    run = run_script(yaml.safe_load(block))
    steps = list(replay(get_engine("ficha"), run.events, run.players))
    calls = {s.decision.shot: s.decision for s in steps}
    for exp in run.expected:
        decision = calls[exp.shot] if exp.shot is not None else steps[-1].decision
        assert not exp.mismatches(decision), (exp, decision.explanation)


def start_script(**start):
    return {"game": "ficha", "players": ["A", "B"], "seed": 2,
            "start": {"positions": {"cue": [700.0, 400.0], "r1": [300.0, 200.0], "r2": [300.0, 600.0], "y1": [1000.0, 600.0]},
                      **start},
            "frames": [{"steps": [{"shot": {"ball": "cue", "at": "r1", "speed_mm_s": 800.0},
                                   "expect": {"fouls": ["wrong_ball_first"], "next_player": "A",
                                              "note": "5.2, no break: B (yellows) plays a red first"}}]}]}


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s["start"].update(player="C"), "'C' is not a player"),
    (lambda s: s["start"].update(positions={}), "must list the balls"),
    (lambda s: s["start"].update(trough=["r2"]), "only bar billiards"),
    (lambda s: s["start"].update(banked={"A": 10}), "only bar billiards"),
    (lambda s: s["start"].update(pins={}), "only a bar-billiards table"),
    (lambda s: s["start"].update(colour="red"), "unknown field(s) colour"),
    (lambda s: s.update(options={"start_shooter": "B"}), "leave them out of 'options'"),
    (lambda s: s["frames"][0].update(setup={"positions": {"cue": [700.0, 400.0]}}), "may not have a 'setup' too"),
])
def test_start_block_errors_name_the_place(mutate, message):
    s = start_script(player="B")
    mutate(s)
    with pytest.raises(ScriptError, match=None) as err:
        parse_script(s, "t.yaml")
    assert message in str(err.value) and "t.yaml" in str(err.value)


def test_start_block_joins_a_ficha_frame_mid_way():
    sc = parse_script(start_script(player="B"))
    run = run_script(sc)
    assert run.options == {"start": "mid_frame", "start_shooter": "B"}
    first = next(e for e in run.events if isinstance(e, ShotStart))
    assert set(first.positions) == {"cue", "r1", "r2", "y1"} and not [e for e in run.events if isinstance(e, BallPlaced)]
    statuses = {b.id: b.status for b in run.world.balls}
    assert statuses["r3"] is BallStatus.POCKETED and statuses["y4"] is BallStatus.POCKETED
    decisions = [st.decision for st in replay(get_engine("ficha", FICHA), run.events, run.players, run.options)]
    # B (yellows) plays a red first: a foul, not a break (2.4 would not apply either way)
    assert decisions[0].player == "B" and [f.value for f in decisions[0].fouls] == ["wrong_ball_first"]
    assert not run.expected[0].mismatches(decisions[0]) and "2.4" not in decisions[0].rules
    again = parse_script(json.loads(dumps_script(sc)))
    assert again.start == sc.start and dumps_events(run_script(again).events) == dumps_events(run.events)


def test_start_block_joins_a_sinuca_brasileira_frame_mid_way():
    s = {"game": "brasileira", "players": ["A", "B"], "seed": 3,
         "start": {"player": "B", "positions": {"cue": [1500.0, 700.0], "pink": [2130.0, 710.0], "black": [2580.0, 710.0]}},
         "frames": [{"steps": [{"input": {"kind": "nomination", "ball": "pink", "pocket": "TR"}},
                               {"shot": {"ball": "cue", "at": "pink", "speed_mm_s": 700.0}}]}]}
    run = run_script(parse_script(s))
    assert run.options == {"start": "mid_frame", "start_player": "B", "start_balls": "cue,pink,black"}
    decisions = [st.decision for st in replay(get_engine("brasileira"), run.events, run.players, run.options)]
    assert decisions[0].player == "B" and decisions[0].ball_on == "pink" and decisions[0].shot_kind.value == "free"


def test_start_block_on_a_bar_billiards_table_closes_the_trough_and_drops_the_scoreboard():
    s = {"game": "bar-billiards", "players": ["A", "B"],
         "start": {"positions": {"w1": [450.0, 450.0]}, "player": "B", "banked": {"A": 900, "B": 800}},
         "frames": [{"steps": [{"wait": 1.0}]}]}
    run = run_script(s)
    assert run.world.scoreboard_down and not run.world.trough_open
    assert {b.id: b.status for b in run.world.balls}["w2"] is BallStatus.POCKETED
    assert run.options == {"start": "mid_frame", "start_player": "B", "start_balls": "w1", "start_banked": "A=900,B=800"}
    s["start"]["trough"] = ["w2"]
    run = run_script(s)
    assert not run.world.scoreboard_down and not run.world.trough_open
    assert {b.id: b.status for b in run.world.balls}["w2"] is BallStatus.IN_TROUGH
    with pytest.raises(ScriptError, match="banked"):
        parse_script({**s, "start": {**s["start"], "banked": {"A": -5}}})


def test_a_touch_carries_the_expectation_of_its_call_made_before_the_next_shot():
    s = ficha_script()
    s["frames"][0]["steps"][1]["expect"] = {"fouls": ["ball_touched"], "next_player": "A", "note": "5.6"}
    run = run_script(s)
    touch = [e for e in run.expected if e.before_shot]
    assert len(touch) == 1 and touch[0].shot == 1 and touch[0].to_dict()["before_shot"] is True
    assert not [e for e in run.expected if not e.before_shot and e.shot == 1]
    s["frames"][0]["steps"][2]["expect"] = {"fouls": []}
    with pytest.raises(ScriptError, match="only shots, operator inputs and touches"):
        parse_script(s)


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s["frames"][0]["steps"][0]["shot"].update(speed_mm_s=float("nan")), "shot.speed_mm_s must be a finite number, got nan"),
    (lambda s: s["frames"][0]["steps"][3]["place"].update(xy_mm=[300.0, float("inf")]), "place.xy_mm must be [x_mm, y_mm]"),
    (lambda s: s["frames"][0]["steps"][0]["shot"].update(speed_mm_s=10**400), "shot.speed_mm_s must be a number"),
    (lambda s: s["frames"][0]["steps"][4].update(wait="2"), "steps[4].wait must be a number, got '2'"),
    (lambda s: s.update(options={"frames": float("nan")}), "options.frames must be a finite number, got nan"),
    (lambda s: s["frames"][0]["steps"][5]["input"].update(player=["B"]), "input: concession: field 'player' must be a string"),
    (lambda s: s["frames"][0].update(setup="racked"), "frames[0].setup must be 'rack' or a mapping of positions"),
    (lambda s: s.update(frames=[]), "frames must have at least 1 item(s)"),
])
def test_script_numbers_and_shapes_are_refused_on_one_line(mutate, message):
    s = ficha_script()
    mutate(s)
    with pytest.raises(ScriptError) as err:
        parse_script(s, "test.yaml")
    assert str(err.value).startswith("test.yaml: ") and message in str(err.value) and "\n" not in str(err.value)


def test_a_deeply_nested_script_file_is_refused(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("game: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ScriptError, match="nested too deeply"):
        load_script(path)
