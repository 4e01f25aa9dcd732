"""``cueref events check LOG``: validate an event log against the contract and a table profile."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from calibration.table import resolve_profile
from rules import GAMES, UnknownGameError
from tracking.validate import check_against_profile
from tracking.events import read_events


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("check",), help="check a log")
    p.add_argument("log", type=Path, help="event log, JSON Lines")
    p.add_argument("--table", help="table profile to check ids against (default: the header's, else the game's)")


def run(args: argparse.Namespace) -> int:
    line_of: dict[int, int] = {}
    header, events = read_events(args.log, line_of)
    if header and header.game and header.game not in GAMES:  # as judge refuses it
        raise UnknownGameError(f"{args.log}: the header's game {header.game!r} is not one of {', '.join(GAMES)}")
    name = args.table or (header.profile if header and header.profile else None)
    if name is None and header and header.game in GAMES:
        name = GAMES[header.game][2]
    if name:
        check_against_profile(events, resolve_profile(name), source=str(args.log), line_of=line_of)
    counts = Counter(e.kind for e in events)
    span = f"{events[0].t_s:.2f}-{events[-1].t_s:.2f} s" if events else "empty"
    print(f"{args.log}: valid, {len(events)} events ({span}): " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    return 0
