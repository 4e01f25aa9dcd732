"""Decisions against expectations: the check behind ``cueref judge --check`` and the benches that
compare a referee's calls with a sample clip's expected decisions."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

from rules.base import Decision

__all__ = ["COMPARED", "load_expected", "compare"]

COMPARED = ("fouls", "next_player", "frame_over", "winner", "match_over", "match_winner")


def load_expected(path: Path) -> list[dict[str, Any]]:
    """Expected decisions from a ground-truth file: a list under ``expected_decisions`` (or the file
    itself a list)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read expected decisions: {e}") from None
    items = data.get("expected_decisions") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError(f"{path}: no 'expected_decisions' list in it")
    return items


def compare(decisions: Sequence[Decision], expected: Sequence[dict[str, Any]]) -> list[str]:
    """Differences between decisions and expectations, one line each (empty: all agree).

    An expectation with a ``shot`` index matches that shot's decision; one whose ``shot`` is None
    (an operator input's call) matches the input decisions in order; one with no ``shot`` key matches
    the decisions in order. ``before_shot: true`` marks the call on something that happened between
    shots (a ball touched while aiming), which an engine reports in the shot decision's ``prior``."""
    settled = [d for d in decisions if d.pending is None]
    by_shot = {d.shot: d for d in settled if d.shot is not None}
    input_calls = iter([d for d in settled if d.shot is None])
    problems = []
    for n, exp in enumerate(expected):
        if "shot" not in exp:
            d, label = (settled[n] if n < len(settled) else None), f"decision {n}"
        elif exp["shot"] is None:
            d, label = next(input_calls, None), f"input call at {exp.get('t_s', '?')} s"
        else:
            d, label = by_shot.get(exp["shot"]), f"shot {exp['shot']}"
        if d is not None and exp.get("before_shot"):
            prior = getattr(d, "prior", ())
            d, label = (prior[0] if prior else None), f"{label} (the call before it)"
            if isinstance(d, dict):  # a decision read back from JSON (a run's decisions.jsonl, the store)
                d = SimpleNamespace(**d)
        if d is None:
            problems.append(f"{label}: expected a decision, the engine made none")
            continue
        for key in COMPARED:
            if key not in exp:
                continue
            got, want = getattr(d, key), exp[key]
            if key == "fouls":
                got, want = sorted(got), sorted(want)
            if got != want:
                problems.append(f"{label}: {key} expected {want!r}, got {got!r} ({d.explanation})")
    return problems
