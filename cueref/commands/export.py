"""``cueref export MATCH``: a stored match as files other tools read.

Writes into ``--out`` (default: ``cueref-out/VIDEO-NAME/export/``) the event log and the calls as
JSON Lines (``events.jsonl``, ``decisions.jsonl``; with the corrected log and the automatic calls too
when the match was corrected), the tracks and the statistics as CSV (``tracks.csv``, ``stats.csv``,
``shots.csv``); ``--what`` picks some of them. ``--clips 3,7`` (or ``all``) also cuts a clip per shot
from the annotated video (``--source``: from the original video).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from cueref.export import DATA, export_clips, export_data
from cueref.store import MatchStore


def _shots(text: str) -> list[int] | None:
    if text == "all":
        return None
    try:
        return sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--clips {text!r}: give shot numbers separated by commas (3,7,12) or all") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("match", help="match id, start of its video hash, or the video file (`cueref review` lists them)")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or cueref-out/matches.sqlite)")
    p.add_argument("--out", type=Path, help="folder for the files (default: cueref-out/VIDEO-NAME/export/)")
    p.add_argument("--what", default=",".join(DATA), help=f"comma-separated data exports (default all: {','.join(DATA)}); 'none' for clips only")
    p.add_argument("--clips", type=_shots, metavar="N,M|all", default=False, help="also cut a clip per shot (these shots, or all)")
    p.add_argument("--source", action="store_true", help="cut the clips from the original video, not the annotated one")
    p.add_argument("--pad", type=float, default=1.0, metavar="S", help="seconds of video before the strike and after the rest (default 1)")


def run(args: argparse.Namespace) -> int:
    with MatchStore(args.store) as store:
        m = store.match(args.match)
        out = args.out or Path("cueref-out") / Path(m.video_path).stem / "export"
        what = [] if args.what.strip() == "none" else [w.strip() for w in args.what.split(",") if w.strip()]
        for path in export_data(store, m.id, out, what):
            print(f"wrote {path}")
        if args.clips is not False:
            n = m.shots if args.clips is None else len(args.clips)
            with tqdm(total=n, desc="clips", unit="shot") as bar:
                paths = export_clips(store, m.id, out, args.clips, pad_s=args.pad, source=args.source, progress=bar.update)
            print(f"wrote {len(paths)} clip(s) in {out / 'clips'}")
    return 0
