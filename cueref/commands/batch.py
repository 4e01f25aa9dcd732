"""``cueref batch DIR_OR_LIST --game GAME``: referee many recordings into one store, resumably.

Every video under a folder (or named by a list file, one a line, each with its own ``cueref referee``
arguments if it needs them) is refereed exactly as ``cueref referee`` would (``OUT/NAME/``: the run
files, the annotated video and the review report; the match in the store), by a pool of worker
processes on this machine (``--jobs``) or on a Dask cluster (``--engine dask``). A video whose match is
complete in the store is skipped, so an interrupted batch is resumed by running it again. A progress
bar counts the videos (and, with one job, the frames); a table sums it up at the end. One bad video
never stops the batch: it is listed with its reason, and the exit status is 1. See
:mod:`cueref.batch` and ``docs/batch.md``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sqlalchemy.engine import make_url
from tqdm import tqdm

from cueref.batch import ENGINES, Settings, VideoOutcome, find_tasks, run_batch
from cueref.errors import UserError
from cueref.options import parse_option_args, parse_players
from cueref.pipeline import missing_stages
from cueref.referee_run import StageLoader, missing_stages_message
from cueref.store import store_url
from rules import GAMES

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", metavar="DIR_OR_LIST",
                   help="a folder of recordings (every video under it), or a text file naming one video a line, each "
                        "optionally followed by its own --game, --table, --players, --option, --calls, --calibration")
    p.add_argument("--game", choices=sorted(GAMES), help="the game of every video (a list line may give its own)")
    p.add_argument("--table", help="table profile of every video (default: the game's)")
    p.add_argument("--players", default="A,B", help="comma-separated player names in break order (default A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable)")
    p.add_argument("--calibration", help="a CAL.json for every video (default: calibrate each from its first frame)")
    p.add_argument("--out", help="folder of the run folders, OUT/NAME/ for each video (default: cueref-out/DIR-OR-LIST-NAME/)")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or "
                                   "cueref-out/matches.sqlite); a cluster's machines need a PostgreSQL store")
    p.add_argument("--no-video", action="store_true", help="do not write the annotated videos")
    p.add_argument("--jobs", type=int, default=CORES,
                   help=f"videos refereed at once: worker processes, or a local Dask cluster's workers (default: the "
                        f"cores, {CORES}); 1 runs them one by one in this process")
    p.add_argument("--engine", choices=ENGINES, default="local",
                   help="local: a process pool on this machine (default); dask: a Dask cluster (pip install 'cueref[cluster]')")
    p.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler (tcp://HOST:8786); default: a local cluster")
    p.add_argument("--force", action="store_true", help="referee again the videos whose match is complete in the store")


def run(args: argparse.Namespace, stages: StageLoader | None = None) -> int:
    """``stages`` replaces the installed stages (the tests' stand-ins; a module-level function)."""
    if args.scheduler and args.engine != "dask":
        raise UserError("--scheduler is the address of a Dask scheduler: add --engine dask")
    settings = Settings(game=args.game, table=args.table, players=tuple(parse_players(args.players)),
                        options=parse_option_args(args.option), calibration=args.calibration, annotate=not args.no_video)
    source = Path(args.source)
    out = Path(args.out) if args.out else Path("cueref-out") / (source.resolve().name if source.is_dir() else source.stem)
    store = store_url(args.store)
    tasks = find_tasks(source, settings, out, store)
    if stages is None and (missing := missing_stages()):
        print(f"cueref batch: {len(tasks)} video(s) found, but {missing_stages_message(missing, args.game or 'GAME')}")
        return 2
    where = args.scheduler or (f"a local Dask cluster of {args.jobs} worker(s)" if args.engine == "dask" else
                               "this process" if args.jobs == 1 else f"{args.jobs} worker processes")
    print(f"batch: {len(tasks)} video(s) from {source} on {where}; run folders in {out}/; store "
          f"{make_url(store).render_as_string(hide_password=True)}")

    with tqdm(total=len(tasks), unit="video", desc="batch", dynamic_ncols=True) as bar:
        failed = 0

        def on_done(o: VideoOutcome) -> None:
            nonlocal failed
            bar.update(1)
            if not o.ok:
                failed += 1
                bar.set_postfix(failed=failed, refresh=False)
                tqdm.write(f"{o.name}: {o.status}: {o.reason}")

        def frames(name: str, total: int | None) -> tqdm:
            return tqdm(total=total, unit="frame", desc=name, leave=False, dynamic_ncols=True)

        outcomes = run_batch(tasks, engine=args.engine, jobs=args.jobs, scheduler=args.scheduler, stages=stages,
                             force=args.force, on_done=on_done, progress=frames)
    print(summary(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def summary(outcomes: list[VideoOutcome]) -> str:
    """The table at the end: one row per video, the totals, and each failure with its reason."""
    width = max([len("video"), *(len(o.name) for o in outcomes)])
    lines = [f"{'video':{width}s}  {'status':8s}  {'match':>5s}  {'frames':>7s}  {'shots':>5s}  {'calls':>5s}  {'time':>7s}"]
    for o in outcomes:
        lines.append(f"{o.name:{width}s}  {o.status:8s}  {o.match_id if o.match_id is not None else '-':>5}  {o.frames:7d}  "
                     f"{o.shots:5d}  {o.decisions:5d}  {o.seconds:6.1f}s")
    counts = {s: sum(o.status == s for o in outcomes) for s in ("refereed", "skipped", "damaged", "failed")}
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    lines.append(f"{len(outcomes)} video(s): {said}; {sum(o.frames for o in outcomes)} frames refereed, "
                 f"{sum(o.shots for o in outcomes)} shots, {sum(o.decisions for o in outcomes)} calls in the store"
                 + (f" ({sum(o.pending for o in outcomes)} pending an answer)" if any(o.pending for o in outcomes) else ""))
    bad = [o for o in outcomes if not o.ok]
    if bad:
        lines.append("not refereed to the end (run the batch again once fixed; what was decided is kept):")
        lines += [f"  {o.name}: {o.status}: {o.reason}" for o in bad]
    return "\n".join(lines)
