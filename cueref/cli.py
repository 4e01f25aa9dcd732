"""``cueref``: the command line. A thin shell over the library: each subcommand lives in
``cueref/commands/<name>.py`` with ``add_arguments(parser)`` and ``run(args) -> int``.

Errors the user can fix (a missing file, a bad profile, an impossible event log, a stage that is not
built yet) print one clear message and exit non-zero; they never show a traceback (``--debug``
shows it).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from cueref.errors import UserError

# (name, module, one-line help) in the order --help lists them
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("referee", "cueref.commands.referee", "referee a video (file, camera index or stream URL) end to end"),
    ("live", "cueref.commands.live", "referee live from a camera, a stream or a file, with the operator's console and a scoreboard"),
    ("track", "cueref.commands.track", "a video's event log and per-frame ball tracks (events.jsonl, tracks.csv), without the referee"),
    ("batch", "cueref.commands.batch", "referee many recordings (a folder or a list) into one store, on this machine or a Dask cluster; resumable"),
    ("judge", "cueref.commands.judge", "replay an event log (JSON Lines) through a rules engine and print each decision"),
    ("simulate", "cueref.commands.simulate", "regenerate the sample videos, or make a corpus of simulated matches from seeds"),
    ("calibrate", "cueref.commands.calibrate", "find the image-to-table mapping from a video, an image or a camera"),
    ("detect", "cueref.commands.detect", "find the balls and pins in every frame of a video: a CSV and an annotated video"),
    ("profile", "cueref.commands.profile", "list, show or check table profiles"),
    ("events", "cueref.commands.events", "check an event log against the contract and a table profile"),
    ("report", "cueref.commands.report", "the review report of a match: an HTML page beside the annotated video, from the store or a run's event log"),
    ("export", "cueref.commands.export", "a stored match as files: event log and calls (JSON Lines), tracks and statistics (CSV), a clip per shot"),
    ("stats", "cueref.commands.stats", "shot statistics per player over one match or the whole store: table, CSV, JSON, plots"),
    ("review", "cueref.commands.review", "list stored matches and their calls; correct a call (override or answer) and re-judge the rest"),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command listed but only ``command``'s module imported (none when None,
    as for ``--help``), so that a quick command does not pay for OpenCV, PyAV and SciPy, which
    other commands load."""
    parser = argparse.ArgumentParser(
        prog="cueref",
        description="Automatic referee and match tracker for cue sports (Sinuca de Ficha, Sinuca Brasileira, "
        "4-pin bar billiards) from an overhead camera.",
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks and debug logging")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on the log")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, help_text in COMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name != command:
            continue
        module = importlib.import_module(module_name)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = {name for name, _, _ in COMMANDS}
    chosen = next((a for a in argv if a in names), None)
    parser = build_parser(chosen)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else (logging.WARNING if args.quiet else logging.INFO),
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("cueref: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the one place that turns errors into messages
        if args.debug:
            raise
        from cueref.video import VideoError  # imported late: most commands never touch video

        if isinstance(e, (UserError, ValueError, OSError, VideoError)):
            print(f"cueref {args.command}: error: {e}", file=sys.stderr)
            return 1
        print(
            f"cueref {args.command}: internal error: {type(e).__name__}: {e}\n"
            "This is a bug in cueref: run again with --debug for the traceback and report it.",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
