"""The event-log contract: every kind round-trips through JSON Lines, and a bad log is refused with
its line number and the reason."""

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from calibration.table import resolve_profile
from tracking import events as ev
from tracking.validate import check_against_profile

EXAMPLES = [
    ev.ShotStart(t_s=0.5, ball="cue", xy_mm=(710, 405), positions={"cue": (710, 405), "r1": (100.5, 60.25)}),
    ev.CueContact(t_s=0.51, ball="cue", confidence=0.7),
    ev.BallBall(t_s=0.9, a="cue", b="r1", xy_mm=(300, 200), confidence=0.93),
    ev.BallCushion(t_s=1.0, ball="r1", cushion="T1", xy_mm=(200, 26)),
    ev.Pot(t_s=1.2, ball="r1", pocket="TL", xy_mm=(-10, -10)),
    ev.Pot(t_s=1.25, ball="w1", pocket="h100", edge_wait_s=3.2),
    ev.OffTable(t_s=1.3, ball="y2", xy_mm=(1420, 30)),
    ev.Returned(t_s=1.5, ball="y2", xy_mm=(1400, 30)),
    ev.Jump(t_s=1.6, ball="cue", xy_mm=(500, 400), airborne_s=0.12),
    ev.PinDown(t_s=1.7, pin="black"),
    ev.PinMoved(t_s=1.8, pin="red", xy_mm=(1350, 452)),
    ev.AtRest(t_s=3.0, positions={"cue": (10, 20)}, pins={"red": (1350, 452)}),
    ev.Unobserved(t_s=3.1, until_s=3.9, reason="camera moved"),
    ev.BallPlaced(t_s=4.0, ball="cue", xy_mm=(710, 405)),
    ev.BallRemoved(t_s=4.5, ball="y1", xy_mm=(1300, 700)),
    ev.BallTouched(t_s=4.6, ball="y3"),
    ev.Nomination(t_s=5.0, ball="blue", pocket="TM"),
    ev.Concession(t_s=5.1, player="B"),
    ev.Warning(t_s=5.2, player="A", rule="5.8"),
    ev.RemovalChoice(t_s=5.3, ball="y4"),
    ev.OperatorFoul(t_s=5.4, player="A", rule="3b l", note="push shot"),
    ev.PlayAgain(t_s=5.5),
    ev.RebreakChoice(t_s=5.6, choice="play_on"),
    ev.Interference(t_s=5.7),
    ev.BarDropped(t_s=5.8),
    ev.InvokeEndgame(t_s=5.9, player="A"),
    ev.Answer(t_s=6.0, question="q3", answer="r2"),
    ev.Override(t_s=6.1, field="fouls", value="none", note="referee saw a fair hit"),
    ev.UndoCall(t_s=6.2, reason="a practice stroke taken for a shot"),
]


def test_every_kind_has_an_example():
    assert {e.kind for e in EXAMPLES} == set(ev.EVENT_KINDS)


def test_round_trip_through_json_lines():
    header = ev.LogHeader(game="ficha", profile="ficha", players=("A", "B"), options={"frames": 3})
    text = ev.dumps_events(EXAMPLES, header)
    assert text.splitlines()[0].startswith('{"kind":"header"')
    h2, back = ev.parse_events(text.splitlines())
    assert h2 == header
    assert back == EXAMPLES


def test_events_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXAMPLES[2].a = "y1"
    with pytest.raises(TypeError):
        EXAMPLES[0].positions["cue"] = (0, 0)


def test_write_is_atomic_and_reads_back(tmp_path):
    path = tmp_path / "log.jsonl"
    ev.write_events(path, EXAMPLES)
    assert not list(tmp_path.glob("*.part"))
    assert ev.read_events(path) == (None, EXAMPLES)


# the first shot of the ficha frame sample (its log's line 2)
FIRST_SHOT = json.loads((Path(__file__).resolve().parents[1] / "sample_videos" / "ficha" / "frame.events.jsonl")
                        .read_text(encoding="utf-8").splitlines()[1])


def shot_line(**changes):
    return json.dumps({**FIRST_SHOT, **changes})


GOOD = '{"kind":"at_rest","t_s":1.0}'


@pytest.mark.parametrize(
    "line, reason",
    [
        ('{"kind":"teleport","t_s":2}', "unknown event kind 'teleport'"),
        ('{"kind":"pot","t_s":2,"ball":"r1"}', "pot: missing field 'pocket'"),
        ('{"kind":"pot","t_s":2,"ball":"r1","pocket":"TL","speed":3}', "pot: unknown field(s) speed"),
        ('{"kind":"ball_ball","t_s":0.5,"a":"cue","b":"r1"}', "time goes backwards: t_s=0.5 s comes after t_s=1 s"),
        ('{"kind":"ball_ball","t_s":2,"a":"cue","b":"r1","confidence":1.5}', "confidence must be between 0 and 1"),
        ('{"kind":"ball_ball","t_s":2,"a":"cue","b":7}', "field 'b' must be a string"),
        ('{"kind":"jump","t_s":2,"ball":"cue","xy_mm":[1]}', "field 'xy_mm' must be [x_mm, y_mm]"),
        ('{"kind":"pot","t_s":-1,"ball":"r1","pocket":"TL"}', "t_s must not be negative"),
        ('{"kind":"rebreak_choice","t_s":2,"choice":"maybe"}', "choice must be 'rebreak' or 'play_on'"),
        ('{"t_s":2}', "missing field 'kind'"),
        ("[1, 2]", "an event must be a JSON object"),
        ('{"kind":"pot", "t_s":2', "not valid JSON"),
        ('{"kind":"header","version":1}', "a header may only be the first record"),
        # bad input a new user might write: every case is one clear line naming the field
    pytest.param(shot_line(positions={**FIRST_SHOT["positions"], "cue": [float("nan"), 405]}),
                     "shot_start: field 'positions.cue' must be [x_mm, y_mm] (two finite numbers), got [nan, 405]", id="NaN in positions"),
        pytest.param(shot_line(xy_mm=[float("inf"), 405]), "field 'xy_mm' must be [x_mm, y_mm]", id="Infinity in xy_mm"),
        pytest.param('{"kind":"at_rest","t_s":2,"pins":{"red":[1350,-Infinity]}}', "at_rest: field 'pins.red' must be [x_mm, y_mm]",
                     id="-Infinity in pins"),
        pytest.param('{"kind":"pot","t_s":1e999,"ball":"r1","pocket":"TL"}', "pot: field 't_s' must be a finite number, got inf",
                     id="1e999"),
        pytest.param('{"kind":"ball_ball","t_s":2,"a":"cue","b":"r1","confidence":NaN}', "field 'confidence' must be a finite number",
                     id="NaN confidence"),
        pytest.param('{"kind":"pot","t_s":2,"ball":"r1","pocket":"TL","edge_wait_s":' + "9" * 400 + "}",
                     "pot: field 'edge_wait_s' must be a number, got 999", id="400 digits"),
        pytest.param('{"kind":"pot","t_s":' + "9" * 5000 + ',"ball":"r1","pocket":"TL"}', "not valid JSON (Exceeds the limit",
                     id="5000 digits"),
        pytest.param('{"kind":"pot","t_s":2,"ball":' + "[" * 100000 + "]" * 100000 + ',"pocket":"TL"}', "a value is nested too deeply",
                     id="deeply nested"),
        pytest.param('{"kind":"pot","t_s":2,"ball":' + "[" * 50 + "]" * 50 + ',"pocket":"TL"}', "pot: field 'ball' must be a string",
                     id="nested 50 deep"),
        pytest.param('{"kind":["pot"],"t_s":2}', "field 'kind' must be the name of an event kind, got ['pot']", id="kind is a list"),
        pytest.param('{"kind":7,"t_s":2}', "field 'kind' must be the name of an event kind, got 7", id="kind is a number"),
        pytest.param('{"kind":"pot","t_s":"2","ball":"r1","pocket":"TL"}', "pot: field 't_s' must be a number, got '2'", id="time as text"),
        pytest.param('{"kind":"pot","t_s":true,"ball":"r1","pocket":"TL"}', "pot: field 't_s' must be a number, got True", id="time as bool"),
        pytest.param('{"kind":"pot","t_s":2,"ball":"","pocket":"TL"}', "pot: field 'ball' must be a non-empty string", id="empty id"),
        pytest.param('{"kind":"at_rest","t_s":2,"positions":{"":[1,2]}}', "at_rest: field 'positions' has a key '' that must be a non-empty string",
                     id="empty id in positions"),
        pytest.param('{"kind":"at_rest","t_s":2,"pins":{"\\n":null}}', "at_rest: field 'pins['\\n']' must be [x_mm, y_mm]",
                     id="a newline as a pin's id"),
        pytest.param('{"kind":"at_rest","t_s":2,"a\\tb":1}', "at_rest: unknown field(s) 'a\\tb'", id="a tab in an unknown field's name"),
    ],
)
def test_bad_logs_are_refused_with_line_and_reason(line, reason):
    with pytest.raises(ev.EventLogError) as err:
        ev.parse_events(["# a comment", GOOD, line], source="match.jsonl")
    assert err.value.line == 3
    assert str(err.value).startswith("match.jsonl, line 3: ")
    assert reason in str(err.value)
    assert "\n" not in str(err.value)  # one line


def test_missing_file(tmp_path):
    with pytest.raises(ev.EventLogError, match="does not exist"):
        ev.read_events(tmp_path / "none.jsonl")


def test_header_version_is_checked():
    with pytest.raises(ev.EventLogError, match="version 9 is not supported"):
        ev.parse_events(['{"kind":"header","version":9}'])


def test_log_checked_against_the_table():
    ficha = resolve_profile("ficha")
    ok = [ev.ShotStart(t_s=0, ball="cue"), ev.BallBall(t_s=0.2, a="cue", b="r1"), ev.Pot(t_s=0.5, ball="r1", pocket="TL"), ev.AtRest(t_s=2)]
    check_against_profile(ok, ficha)
    for bad, msg in [
        (ok[:1] + [ev.BallBall(t_s=0.2, a="cue", b="r9")], "ball 'r9' is not in table profile 'ficha'"),
        (ok[:2] + [ev.Pot(t_s=0.5, ball="r1", pocket="h200")], "pocket 'h200' is not on table"),
        (ok + [ev.ShotStart(t_s=3, ball="cue"), ev.Pot(t_s=3.5, ball="r1", pocket="TM")], "already off the table"),
        (ok[:2] + [ev.ShotStart(t_s=0.4, ball="cue")], "before the previous one came to rest"),
        (ok + [ev.ShotStart(t_s=3, ball="r1")], "the struck ball 'r1' is not on the table"),
    ]:
        with pytest.raises(ev.EventLogError, match=msg):
            check_against_profile(bad, ficha)


finite = st.floats(min_value=-5000, max_value=5000, allow_nan=False)


@given(
    t=st.floats(min_value=0, max_value=1e5, allow_nan=False),
    conf=st.floats(min_value=0, max_value=1),
    xy=st.tuples(finite, finite),
    ids=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5, unique=True),
)
def test_any_positions_round_trip(t, conf, xy, ids):
    e = ev.ShotStart(t_s=t, ball=ids[0], xy_mm=xy, confidence=conf, positions={i: xy for i in ids})
    (back,) = ev.parse_events([json.dumps(ev.event_to_dict(e))])[1]
    assert back.ball == e.ball and back.positions.keys() == e.positions.keys()
    assert back.t_s == pytest.approx(t, abs=1e-6) and back.xy_mm == pytest.approx(xy, abs=1e-6)


def test_the_documented_example_is_a_valid_log():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "event-log.md").read_text(encoding="utf-8")
    block = doc.split("```jsonl\n", 1)[1].split("```", 1)[0]
    header, events = ev.parse_events(block.splitlines(), "docs/event-log.md")
    assert header.game == "ficha" and len(events) == 9
    check_against_profile(events, resolve_profile(header.profile))
    assert (root / "docs" / "examples" / "ficha-two-shots.jsonl").read_text(encoding="utf-8") == block


# ---- bad input a new user might write: every case is one clear line naming the field -------------


@pytest.mark.parametrize("header, reason", [
    pytest.param('{"kind":"header","game":5}', "header: field 'game' must be a string, got 5", id="game"),
    pytest.param('{"kind":"header","profile":["ficha"]}', "header: field 'profile' must be a string", id="profile"),
    pytest.param('{"kind":"header","players":"AB"}', "header: field 'players' must be a list, got 'AB'", id="players text"),
    pytest.param('{"kind":"header","players":["A",2]}', "header: field 'players[1]' must be a string, got 2", id="player number"),
    pytest.param('{"kind":"header","source":3}', "header: field 'source' must be a string", id="source"),
    pytest.param('{"kind":"header","version":"1"}', "header: field 'version' must be a whole number, got '1'", id="version text"),
    pytest.param('{"kind":"header","options":[1]}', "header: field 'options' must be a mapping, got [1]", id="options list"),
    pytest.param('{"kind":"header","options":{"frames":NaN}}', "header: field 'options.frames' must be a finite number, got nan",
                 id="options NaN"),
    pytest.param('{"kind":"header","gmae":"ficha"}', "header: unknown field(s) 'gmae'", id="misspelt field"),
])
def test_header_fields_of_the_wrong_type_are_refused(header, reason):
    with pytest.raises(ev.EventLogError) as err:
        ev.parse_events([header, GOOD], source="match.jsonl")
    assert str(err.value).startswith("match.jsonl, line 1: ") and reason in str(err.value)


def test_events_made_in_code_are_checked_too():
    with pytest.raises(ValueError, match="positions"):
        ev.ShotStart(t_s=1.0, ball="cue", positions={"cue": (float("nan"), 405.0)})
    with pytest.raises(ValueError, match="t_s"):
        ev.Pot(t_s=float("inf"), ball="r1", pocket="TL")
    with pytest.raises(ValueError, match="speed"):
        ev.Pot(t_s=1.0, ball="r1", pocket="TL", speed=3.0)
    assert hash(ev.BallBall(t_s=1.0, a="cue", b="r1")) == hash(ev.BallBall(t_s=1.0, a="cue", b="r1"))
    assert ev.ShotStart.kind == "shot_start" and isinstance(EXAMPLES[0], ev.CameraEvent)


def test_positions_and_pins_are_checked_against_the_table():
    ficha = resolve_profile("ficha")
    with pytest.raises(ev.EventLogError, match="positions names ball 'r9', which is not in table profile 'ficha'"):
        check_against_profile([ev.ShotStart(t_s=0, ball="cue", positions={"cue": (710, 405), "r9": (100, 100)})], ficha)
    with pytest.raises(ev.EventLogError, match="pins names pin 'red', which is not on table 'ficha'"):
        check_against_profile([ev.AtRest(t_s=0, pins={"red": (100, 100)})], ficha)
    shot = [ev.ShotStart(t_s=0, ball="cue"), ev.Pot(t_s=0.5, ball="r1", pocket="TL")]
    with pytest.raises(ev.EventLogError, match="it names 'r1', which is not on the table"):
        check_against_profile(shot + [ev.BallCushion(t_s=0.6, ball="r1", cushion="L")], ficha)


def run_cli(capsys, *args):
    from cueref.cli import main

    code = main(list(args))
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize("edit, reason", [
    pytest.param(lambda lines: lines.__setitem__(1, shot_line(positions={**FIRST_SHOT["positions"], "cue": [float("nan"), 405]})),
                 "line 2: shot_start: field 'positions.cue' must be [x_mm, y_mm]", id="NaN cue ball"),
    pytest.param(lambda lines: lines.__setitem__(1, shot_line(positions={**FIRST_SHOT["positions"], "r9": [300.0, 300.0]})),
                 "line 2: shot_start at t_s=1: positions names ball 'r9'", id="unknown ball in positions"),
    pytest.param(lambda lines: lines.__setitem__(0, lines[0].replace('"players":["A","B"]', '"players":"AB"')),
                 "line 1: header: field 'players' must be a list", id="players of the wrong type"),
    pytest.param(lambda lines: lines.__setitem__(0, lines[0].replace('"game":"ficha"', '"game":"snooker"')),
                 "snooker", id="a game no engine plays"),
])
def test_events_check_refuses_what_judge_refuses(tmp_path, capsys, edit, reason):
    """The first shot of the ficha frame sample, edited: `cueref events check` and `cueref judge` both
    refuse it with the same one-line message (before, a NaN cue ball passed both and changed the call)."""
    lines = (Path(__file__).resolve().parents[1] / "sample_videos" / "ficha" / "frame.events.jsonl").read_text().splitlines()
    edit(lines)
    log = tmp_path / "frame.jsonl"
    log.write_text("\n".join(lines) + "\n")
    checked = run_cli(capsys, "events", "check", str(log))
    judged = run_cli(capsys, "judge", str(log))
    assert checked[0] == judged[0] == 1
    assert reason in checked[1] and reason in judged[1] and len(checked[1].splitlines()) == 1
    if str(log) in judged[1]:  # the same message, after the command's name
        assert checked[1].split(str(log), 1)[1] == judged[1].split(str(log), 1)[1]


def test_a_refusal_of_the_log_check_names_the_file_line_after_comments(tmp_path, capsys):
    """The profile check names the line a person sees in the file, not the event's place among events
    (comment lines and the header shift them apart)."""
    lines = (Path(__file__).resolve().parents[1] / "sample_videos" / "ficha" / "frame.events.jsonl").read_text().splitlines()
    lines[1] = shot_line(positions={**FIRST_SHOT["positions"], "r9": [300.0, 300.0]})
    lines[1:1] = ["# a comment", ""]
    log = tmp_path / "frame.jsonl"
    log.write_text("\n".join(lines) + "\n")
    for command in (("events", "check"), ("judge",)):
        code, err = run_cli(capsys, *command, str(log))
        assert code == 1 and f"{log}, line 4: shot_start at t_s=1: positions names ball 'r9'" in err
