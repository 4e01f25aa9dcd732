"""4-pin bar billiards refereed from the outside: situations written from the rulebook alone.

Each situation of ``data/bar_billiards_situations/situations.yaml`` is a small event log written by
hand as a person would (only the fields the contract requires, mostly no header) and the call a
referee would make, also written by hand from the 4-pin bar billiards how-to-play guide, its detailed
rules and the Norwich league rules (with the project's rules decisions). They are independent checks,
not goldens: nobody ran the engine to write them. Each log is replayed with ``cueref judge --game
bar-billiards --json`` and every field the expectation names is compared with the call on the shot
(or input) at that time; a log the rules cannot accept must be refused with the line and the reason.

To replay one by hand: ``python -m tests.rules.test_bar_billiards_situations NAME > x.jsonl`` then
``cueref judge x.jsonl --game bar-billiards`` (with the situation's ``options`` as ``--option``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cueref.cli import main

DATA = Path(__file__).with_name("data") / "bar_billiards_situations"
SITUATIONS: list[dict[str, Any]] = yaml.safe_load((DATA / "situations.yaml").read_text(encoding="utf-8"))


def _judge(situation: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    log = tmp_path / f"{situation['name']}.jsonl"
    log.write_text(situation["log"], encoding="utf-8")
    out = tmp_path / "decisions.jsonl"
    argv = ["judge", str(log), "--game", "bar-billiards", "--json", str(out)]
    for name, value in (situation.get("options") or {}).items():
        argv += ["--option", f"{name}={value}"]
    if "players" in situation:
        argv += ["--players", ",".join(situation["players"])]
    if "table" in situation:
        argv += ["--table", str(DATA / situation["table"])]
    rc = main(argv)
    err = capsys.readouterr().err
    decisions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return rc, decisions, err


def _check(call: dict[str, Any], expected: dict[str, Any], where: str) -> None:
    for key, want in expected.items():
        if key == "t":
            continue
        if key == "fouls":  # the engine lists them in its precedence order; the rulebook gives none
            assert sorted(call["fouls"]) == sorted(want), f"{where}: fouls {call['fouls']}, expected {want}\n{call['explanation']}"
        elif key == "rules":  # these rule numbers at least are quoted
            missing = [r for r in want if r not in call["rules"] and r not in call["explanation"]]
            assert not missing, f"{where}: rules {missing} not quoted in {call['explanation']!r}"
        elif key == "says":  # words the explanation must hold
            assert want in call["explanation"], f"{where}: {want!r} not in {call['explanation']!r}"
        elif key == "pending":
            got = call["pending"]["id"] if call["pending"] else None
            assert got == want, f"{where}: pending {got}, expected {want}"
        elif key in ("trough", "out"):
            assert sorted(call[key]) == sorted(want), f"{where}: {key} {call[key]}, expected {want}"
        else:
            assert call[key] == want, f"{where}: {key} = {call[key]!r}, expected {want!r}\n{call['explanation']}"


@pytest.mark.parametrize("situation", SITUATIONS, ids=[s["name"] for s in SITUATIONS])
def test_situation_called_as_the_rulebook_says(situation, tmp_path, capsys):
    rc, decisions, err = _judge(situation, tmp_path, capsys)
    if "refused" in situation:  # an impossible or malformed log: a message with the line, no traceback
        assert rc == 1, f"expected the log refused, got rc {rc}; {err}"
        for words in situation["refused"]:
            assert words in err, f"{words!r} not in {err!r}"
        return
    assert rc == 0, err
    for call in (d for d in decisions if "withdrawn" not in d and not d["pending"]):  # every call quotes rule numbers
        assert re.search(r"(^|: )bar billiards \d", call["explanation"]), call["explanation"]
    if "decisions" in situation:
        assert len(decisions) == situation["decisions"], [d["explanation"] for d in decisions]
    for expected in situation["expect"]:  # written by hand from the rulebook, not produced by the engine
        at = [d for d in decisions if d["t_s"] == expected["t"]]
        assert at, f"no call at t={expected['t']}: " + "; ".join(f"{d['t_s']}: {d['explanation']}" for d in decisions)
        _check(at[-1], expected, f"{situation['name']} t={expected['t']}")


if __name__ == "__main__":  # print one situation's log, to replay it by hand
    chosen = [s for s in SITUATIONS if s["name"] == sys.argv[1]] if len(sys.argv) > 1 else []
    if not chosen:
        sys.exit("usage: python -m tests.rules.test_bar_billiards_situations NAME; names: " + ", ".join(s["name"] for s in SITUATIONS))
    sys.stdout.write(chosen[0]["log"])
