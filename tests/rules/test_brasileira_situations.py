"""Referee situations for Sinuca Brasileira, written from the rulebook by an outside referee.

Each file in ``data/brasileira_situations/`` is an event log (docs/event-log.md) that
``cueref judge FILE --game brasileira`` replays as it stands. Its ``#expect`` comment lines are the
calls a referee makes from "Sinuca Brasileira (Brazilian Snooker)" and the project's rules
decisions, written by hand before the engine was run: they are independent checks, not goldens.

One ``#expect`` line per call the referee prints, in order (a log whose every call is not written
out fails). Each holds the fields of the decision that matter (``decision_line``'s JSON); some read
differently: ``pending`` is the id of the question asked, ``says`` lists words the explanation (or
the question) must contain (rule numbers), ``respots`` the balls re-spotted (``respots_at``: and
where). ``{"error": [...]}`` says the log is refused: ``cueref judge`` exits with 1 and a message
holding every word listed.

Below them, property tests (hypothesis) for the classes of bug the situations found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.table import resolve_profile
from cueref.cli import main
from rules import get_engine
from rules.base import replay
from tracking.events import Answer, AtRest, BallBall, BallPlaced, Nomination, Pot, ShotStart

DATA = Path(__file__).parent / "data" / "brasileira_situations"
SITUATIONS = sorted(DATA.glob("*.jsonl"))
UNORDERED = ("fouls", "on_table")


def expectations(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line.removeprefix("#expect")) for line in lines if line.startswith("#expect")]


def differences(got: dict, want: dict) -> list[str]:
    problems = []
    for key, value in want.items():
        if key == "pending":
            actual = (got["pending"] or {}).get("id")
        elif key == "says":
            said = got["explanation"] + " " + (got["pending"] or {}).get("text", "")
            missing = [w for w in value if w not in said]
            if missing:
                problems.append(f"explanation lacks {missing}")
            continue
        elif key == "respots_at":
            actual = {ball: list(xy) for ball, xy in got["respots"] if ball in value}
        elif key == "respots":
            actual = sorted(ball for ball, _ in got["respots"])
            value = sorted(value)
        elif key in UNORDERED:
            actual, value = sorted(got[key]), sorted(value)
        else:
            actual = got.get(key, "(no such field)")
        if actual != value:
            problems.append(f"{key} expected {value!r}, got {actual!r}")
    return problems


def test_the_situations_are_there():
    assert len(SITUATIONS) >= 40
    for path in SITUATIONS:
        assert expectations(path), f"{path.name} has no #expect line"


@pytest.mark.parametrize("path", SITUATIONS, ids=[p.stem for p in SITUATIONS])
def test_situation(path, tmp_path, capsys):
    expected = expectations(path)
    out = tmp_path / "calls.jsonl"
    rc = main(["judge", str(path), "--game", "brasileira", "--json", str(out)])
    printed = capsys.readouterr()
    if "error" in expected[0]:
        assert rc == 1, f"the log should be refused; the referee printed:\n{printed.out}"
        message = printed.err
        assert "Traceback" not in message
        missing = [w for w in expected[0]["error"] if w not in message]
        assert not missing, f"the refusal lacks {missing}: {message}"
        return
    assert rc == 0, printed.err
    calls = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    report = []
    for n, want in enumerate(expected):
        if n >= len(calls):
            report.append(f"call {n}: expected {want}, the referee made no more calls")
            continue
        report += [f"call {n} ({calls[n]['explanation']}): {p}" for p in differences(calls[n], want)]
    if len(calls) > len(expected):
        report += [f"call {n}: not expected: {c['explanation']}" for n, c in enumerate(calls) if n >= len(expected)]
    assert not report, "\n".join(report)


# ---- properties: the classes of bug the situations found ------------------------------------------------
# Each drew a wrong call from the engine before the audit: a nomination keyed while the balls rolled
# was lost (57), a cue ball in hand struck outside the D went unseen unless the strike carried full
# positions (53), and the first-contact question refused the ball the referee saw (42).

PROFILE = resolve_profile("brasileira")
OBJECT_BALLS = ("red", "yellow", "green", "brown", "blue", "pink", "black")
MID_FRAME = {"start": "mid_frame", "start_balls": "red"}


def calls(events, options=MID_FRAME):
    return [step.decision for step in replay(get_engine("brasileira", PROFILE), events, ("A", "B"), options)]


@settings(max_examples=40, deadline=None)
@given(when=st.floats(2.01, 9.99), ball=st.sampled_from(OBJECT_BALLS), pocket=st.sampled_from([p.id for p in PROFILE.pockets]))
def test_a_nomination_keyed_after_a_strike_is_for_the_next_shot(when, ball, pocket):
    """Rule 4: whenever the nomination is keyed between one strike and the next (balls rolling or
    at rest), the next shot is judged with it."""
    events = [Nomination(t_s=1.0, ball="red", pocket="BR"), ShotStart(t_s=2.0, ball="cue"),
              BallBall(t_s=2.005, a="cue", b="red"), AtRest(t_s=5.0), ShotStart(t_s=10.0, ball="cue"), AtRest(t_s=12.0)]
    events.append(Nomination(t_s=when, ball=ball, pocket=pocket))
    events.sort(key=lambda e: e.t_s)  # stable: at equal times the log's order stays
    first, second = calls(events)
    assert first.nomination == ("red", "BR") and first.fouls == ()
    assert second.pending is None and second.nomination == (ball, pocket)


@settings(max_examples=40, deadline=None)
@given(x=st.floats(0.0, 2840.0), y=st.floats(0.0, 1420.0), told=st.sampled_from(("positions", "xy_mm", "ball_placed")))
def test_the_ball_in_hand_is_judged_from_where_it_was_struck_however_the_log_says_it(x, y, told):
    """Rule 1 (snooker): after an in-off the cue ball is played from the D; the foul depends on where
    it stood, whether the log gives the strike's positions, its point, or the hand placing it."""
    start = ShotStart(t_s=7.0, ball="cue", positions={"cue": (x, y), "red": (2130.0, 1065.0)} if told == "positions" else {},
                      xy_mm=(x, y) if told == "xy_mm" else None)
    placed = [BallPlaced(t_s=6.0, ball="cue", xy_mm=(x, y))] if told == "ball_placed" else []
    events = [Nomination(t_s=1.0, ball="red", pocket="BR"), ShotStart(t_s=2.0, ball="cue"), BallBall(t_s=2.5, a="cue", b="red"),
              Pot(t_s=3.0, ball="cue", pocket="TR"), AtRest(t_s=5.0), *placed, Nomination(t_s=6.5, ball="red", pocket="BR"),
              start, BallBall(t_s=7.5, a="cue", b="red"), AtRest(t_s=9.0)]
    in_off, second = calls(events)
    assert in_off.fouls == ("in_off",) and in_off.cue_in_hand
    assert ("not_from_d" in second.fouls) == (not PROFILE.in_d((x, y), tolerance_mm=1.0))


@settings(max_examples=20, deadline=None)
@given(seen=st.sampled_from(OBJECT_BALLS), said=st.sampled_from(OBJECT_BALLS))
def test_the_referee_may_answer_any_ball_on_the_table_as_the_first_contact(seen, said):
    """Rule 4: a doubtful first contact is asked; whatever ball on the table the referee saw first is
    an answer, and the shot (at the red) is judged with it."""
    events = [Nomination(t_s=1.0, ball="red", pocket="BR"), ShotStart(t_s=2.0, ball="cue"),
              BallBall(t_s=2.5, a="cue", b=seen, confidence=0.3), AtRest(t_s=5.0),
              Answer(t_s=6.0, question="s0:first_contact", answer=said)]
    asked, judged = calls(events)
    assert asked.pending is not None and asked.pending.options[0] == seen and set(OBJECT_BALLS) <= set(asked.pending.options)
    assert judged.pending is None and judged.fouls == (() if said == "red" else ("wrong_ball_first",))
