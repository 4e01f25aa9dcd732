"""``cueref judge EVENTS.jsonl --game GAME``: replay an event log through a rules engine.

The log is the contract of :mod:`tracking.events`; operator inputs recorded apart (a calls file: the
nominations of a Sinuca Brasileira match, say) are merged in by time with ``--calls``. Each decision
is printed on one line; ``--json`` writes them all as JSON Lines; ``--check TRUTH`` compares them
with the decisions a simulated clip's script expects and fails on the first difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from calibration.table import resolve_profile
from rules import GAMES, get_engine
from rules.base import Decision, replay
from tracking.events import Event, OperatorInput, read_events
from tracking.validate import check_against_profile


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("events", type=Path, help="event log, JSON Lines (see docs/event-log.md)")
    p.add_argument("--game", choices=sorted(GAMES), help="the game (default: the log header's)")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the header's, else the game's)")
    p.add_argument("--players", help="comma-separated player names in break order (default: the header's, else A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable); see docs/rules-*.md")
    p.add_argument("--calls", type=Path, action="append", default=[], help="operator inputs recorded apart (JSON Lines), merged in by time")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write every decision as JSON Lines to OUT")
    p.add_argument("--check", type=Path, metavar="TRUTH", help="compare with the expected decisions of a ground-truth file (.truth.json or .expected.json)")


def merge_by_time(camera: Sequence[Event], calls: Iterable[Sequence[Event]]) -> list[Event]:
    """Merge logs by time; at equal times operator inputs come first (a nomination precedes its shot),
    and otherwise each log keeps its own order."""
    keyed = [
        ((e.t_s, 0 if isinstance(e, OperatorInput) else 1, i, n), e)
        for i, stream in enumerate([camera, *calls])
        for n, e in enumerate(stream)
    ]
    return [e for _, e in sorted(keyed, key=lambda item: item[0])]


def parse_option_args(pairs: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--option {pair!r} must be NAME=VALUE")
        k, v = pair.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


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


COMPARED = ("fouls", "next_player", "frame_over", "winner", "match_over", "match_winner")


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


def run(args: argparse.Namespace) -> int:
    header, events = read_events(args.events)
    calls = [read_events(c)[1] for c in args.calls]
    if calls:
        events = merge_by_time(events, calls)
    game = args.game or (header.game if header else None)
    if game is None:
        raise ValueError(f"{args.events}: the log has no header naming the game: give --game ({', '.join(GAMES)})")
    profile = resolve_profile(args.table) if args.table else (resolve_profile(header.profile) if header and header.profile else None)
    engine = get_engine(game, profile)
    check_against_profile(events, engine.profile, source=str(args.events))
    players = [p for p in args.players.split(",") if p] if args.players else (list(header.players) if header and header.players else ["A", "B"])
    options = dict(header.options) if header else {}
    options.update(parse_option_args(args.option))
    decisions: list[Decision] = []
    out = open(args.json, "w", encoding="utf-8") if args.json else None
    try:
        for step in replay(engine, events, players, options):
            decisions.append(step.decision)
            print(step.decision.summary())
            if out:
                out.write(json.dumps(step.decision.to_dict()) + "\n")
    finally:
        if out:
            out.close()
    if args.check:
        problems = compare(decisions, load_expected(args.check))
        if problems:
            print(f"{len(problems)} difference(s) from {args.check}:", file=sys.stderr)
            for line in problems:
                print("  " + line, file=sys.stderr)
            return 1
        print(f"all expected decisions of {args.check} reproduced")
    return 0
