"""``cueref judge EVENTS.jsonl --game GAME``: replay an event log through a rules engine.

The log is the contract of :mod:`tracking.events`; operator inputs recorded apart (a calls file: the
nominations of a Sinuca Brasileira match, say) are merged in by time with ``--calls``. Each decision
is printed on one line; ``--json`` writes them all as JSON Lines (a new file that appears when the
replay is over, never onto an input); ``--check TRUTH`` compares them with the decisions a simulated
clip's script expects and fails on the first difference. A log with no shot is refused.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from calibration.table import resolve_profile
from cueref.calls import merge_by_time, read_calls
from cueref.compare import compare, load_expected
from cueref.errors import UserError
from cueref.options import parse_option_args, parse_players
from cueref.outputs import atomic_output, decision_line, refuse_output_onto_inputs
from rules import GAMES, get_engine
from rules.base import Decision, replay
from tracking.events import ShotStart, read_events
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


def run(args: argparse.Namespace) -> int:
    refuse_output_onto_inputs([("--json", args.json)], [("event log", args.events), ("--check file", args.check),
                                                        *(("--calls file", c) for c in args.calls)])
    line_of: dict[int, int] = {}
    header, events = read_events(args.events, line_of)
    calls = read_calls(args.calls)
    if calls:
        events = merge_by_time(events, calls)
    if not any(isinstance(e, ShotStart) for e in events):
        what = (f"{len(events)} event(s), none a shot_start" if events else "no event at all")
        raise UserError(f"{args.events}: nothing to judge: the log holds {what}. A shot begins with a shot_start event "
                        "(docs/event-log.md); a file of operator calls goes with --calls beside the camera's log")
    game = args.game or (header.game if header else None)
    if game is None:
        raise ValueError(f"{args.events}: the log has no header naming the game: give --game ({', '.join(GAMES)})")
    profile = resolve_profile(args.table) if args.table else (resolve_profile(header.profile) if header and header.profile else None)
    engine = get_engine(game, profile)
    check_against_profile(events, engine.profile, source=str(args.events), line_of=line_of)
    players = parse_players(args.players) if args.players else (list(header.players) if header and header.players else ["A", "B"])
    options = dict(header.options) if header else {}
    options.update(parse_option_args(args.option))
    expected = load_expected(args.check) if args.check else None
    decisions: list[Decision] = []
    with atomic_output(args.json) if args.json else contextlib.nullcontext() as out:  # OUT appears only when the replay ends
        for step in replay(engine, events, players, options):
            decisions.append(step.decision)
            print(step.decision.summary())
            if out:
                out.write(decision_line(step.decision) + "\n")
    if expected is not None:
        problems = compare(decisions, expected)
        if problems:
            print(f"{len(problems)} difference(s) from {args.check}:", file=sys.stderr)
            for line in problems:
                print("  " + line, file=sys.stderr)
            return 1
        print(f"all expected decisions of {args.check} reproduced")
    return 0
