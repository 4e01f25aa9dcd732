"""Referee situations for Sinuca Brasileira, written from the rulebook by an outside referee.

Each file in ``data/brasileira_situations/`` is an event log (docs/event-log.md) that
``cueref judge FILE --game brasileira`` replays as it stands. Its ``#expect`` comment lines are the
calls a referee makes from "Sinuca Brasileira (Brazilian Snooker)" and the project's rules
decisions, written by hand before the engine was run: they are independent checks, not goldens.

One ``#expect`` line per call the referee prints, in order (a log whose every call is not written
out fails). Each holds the fields of the decision that matter (``decision_line``'s JSON); three
read differently: ``pending`` is the id of the question asked, ``says`` lists words the
explanation (or the question) must contain (rule numbers), ``respots`` the balls re-spotted (``respots_at`` also where). ``{"error": [...]}``
says the log is refused: ``cueref judge`` exits with 1 and a message holding every word listed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cueref.cli import main

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
