"""``cueref stats [MATCH]``: shot statistics per player over one match or the whole store.

Per player and game: shots, pots attempted and made, pot success by distance and cut angle, fouls by
kind, safeties, breaks (bar billiards: banked breaks, the highest break, black-pin disasters), the
mean cue-ball speed and shots per frame; ``docs/store.md`` defines each figure from the event log.
Printed as a table (default), CSV or JSON (``--format``, ``--out FILE``); ``--plots DIR`` also draws
them (pot success, fouls, heat maps of cue-ball positions and of pots by pocket or hole).
"""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import date
from pathlib import Path

from calibration.table import resolve_profile
from cueref.stats import player_stats, select_matches
from cueref.stats.output import format_table, text
from cueref.store import MatchStore

log = logging.getLogger(__name__)


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date: write YYYY-MM-DD") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("match", nargs="?", help="one match (id, start of its video hash, or the video file); default: every match the filters keep")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or cueref-out/matches.sqlite)")
    p.add_argument("--player", help="only this player's figures (and the matches they played)")
    p.add_argument("--game", choices=("ficha", "brasileira", "bar-billiards"), help="only matches of this game")
    p.add_argument("--since", type=_day, metavar="YYYY-MM-DD", help="only matches played on or after this day")
    p.add_argument("--until", type=_day, metavar="YYYY-MM-DD", help="only matches played on or before this day")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format (default: a table)")
    p.add_argument("--out", type=Path, help="write to this file instead of the terminal")
    p.add_argument("--plots", type=Path, metavar="DIR", help="also draw the plots as PNG files in DIR")


def run(args: argparse.Namespace) -> int:
    from cueref.stats.plots import all_plots

    with MatchStore(args.store) as store:
        filters = dict(game=args.game, player=args.player, since=args.since, until=args.until)
        matches = select_matches(store, args.match, **filters)
        stats = player_stats(store, args.match, **filters)
        out = format_table(stats) + "\n" if args.format == "table" else text(stats, args.format)
        if args.out:
            args.out.write_text(out, encoding="utf-8")
            print(f"statistics of {len(matches)} match(es) -> {args.out}")
        else:
            sys.stdout.write(out)
        if args.plots and stats:
            args.plots.mkdir(parents=True, exist_ok=True)
            for game in dict.fromkeys(s.game for s in stats):
                profiles = list(dict.fromkeys(m.profile for m in matches if m.game == game))
                if len(profiles) > 1:
                    log.info("%s is played on %d tables (%s): the heat maps are drawn on %s", game, len(profiles), ", ".join(profiles), profiles[0])
                for name, png in all_plots([s for s in stats if s.game == game], resolve_profile(profiles[0])).items():
                    path = args.plots / f"stats-{game}-{name}.png"
                    path.write_bytes(png)
                    print(f"plot: {path}")
    return 0
