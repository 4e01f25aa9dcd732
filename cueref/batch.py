"""A season of recordings: many videos refereed into one store, on this machine or on a Dask cluster.

::

    tasks = find_tasks("league/2024/", Settings(game="ficha"), out="cueref-out/2024")   # a folder or a list file
    outcomes = run_batch(tasks, store="league.sqlite", jobs=2)                          # or engine="dask"

Each video is one :func:`cueref.referee_run.referee_video` run, exactly what ``cueref referee`` does
(the run folder ``OUT/NAME/``, the match in the store, the annotated video and the review report),
done by :func:`referee_one` in a worker:

* **local** (the default): a pool of worker processes on this machine (pebble's ``ProcessPool``,
  started with ``spawn``); a worker that dies (out of memory, a crash in a native library) fails its
  video only, and the pool goes on with the others. One job runs in this process.
* **dask**: Dask's distributed scheduler, at a given address or on a local cluster of worker processes
  (``pip install 'cueref[cluster]'``). The workers must see the videos and the output folder under
  the same paths, and the store (a PostgreSQL URL for machines apart; a SQLite file only on one
  machine).

**Resumable.** A video is known by its content (SHA-256), as the store knows its match: a video whose
match is ``complete`` in the store is skipped (``force`` referees it again), and one left
``recording`` by an interrupted run is refereed again, which updates its rows without duplicating
any (``cueref.store``). **One bad video never stops the batch**: whatever goes wrong with it becomes
its :class:`VideoOutcome` (``failed`` or ``damaged``, with a one-line reason).

A list file names one video a line, optionally followed by that video's own ``cueref referee``
arguments (``--game``, ``--table``, ``--players``, ``--option``, ``--calls``, ``--calibration``);
paths are relative to the list's folder; ``#`` starts a comment. See ``docs/batch.md``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import dataclasses
import functools
import logging
import multiprocessing
import os
import shlex
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from sqlalchemy.exc import IntegrityError

from cueref.errors import UserError
from cueref.options import parse_option_args, parse_players
from cueref.referee_run import RefereeJob, StageLoader, referee_video
from cueref.store import MatchStore, StoreError, video_digest
from rules import GAMES

__all__ = ["VIDEO_SUFFIXES", "Settings", "VideoTask", "VideoOutcome", "find_tasks", "referee_one", "run_batch", "ENGINES"]

log = logging.getLogger(__name__)

VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".avi", ".m4v", ".ts", ".mts", ".webm")
ENGINES = ("local", "dask")
SCHEDULER_TIMEOUT_S = 20.0  # how long to try reaching a Dask scheduler (a cluster's may take a while to answer)


@dataclass(frozen=True, slots=True)
class Settings:
    """A video's ``cueref referee`` settings: the batch's, unless its list line says otherwise."""

    game: str | None = None
    table: str | None = None
    players: tuple[str, ...] = ("A", "B")
    options: Mapping[str, Any] = field(default_factory=dict)
    calibration: str | None = None
    calls: tuple[str, ...] = ()  # calls files (the operator's inputs): one video's own, from its list line
    annotate: bool = True


@dataclass(frozen=True, slots=True)
class VideoTask:
    """One video of a batch: its name (its run folder under the batch's output folder) and its job."""

    name: str
    job: RefereeJob
    where: str  # where it was named, for messages: "DIR" or "LIST, line N"


@dataclass(frozen=True, slots=True)
class VideoOutcome:
    """What became of one video."""

    name: str
    video: str
    status: str  # refereed | skipped (complete in the store) | damaged (refereed up to the damage) | failed
    match_id: int | None = None
    frames: int = 0
    shots: int = 0
    decisions: int = 0
    pending: int = 0
    seconds: float = 0.0
    reason: str | None = None  # one line: why it failed, where it broke, why it was skipped
    out: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("refereed", "skipped")


# ---- the videos of a batch ------------------------------------------------------------------------------


class _LineError(Exception):
    pass


class _LineParser(argparse.ArgumentParser):
    """The arguments a list line may give its video (those of ``cueref referee``); errors raise."""

    def __init__(self) -> None:
        super().__init__(prog="", add_help=False, exit_on_error=False)
        self.add_argument("video")
        self.add_argument("--game", choices=sorted(GAMES))
        self.add_argument("--table")
        self.add_argument("--players")
        self.add_argument("--option", action="append", default=[])
        self.add_argument("--calls", action="append", default=[])
        self.add_argument("--calibration")

    def error(self, message: str) -> None:  # argparse would exit the process
        raise _LineError(message)


def find_tasks(source: str | Path, settings: Settings, out: str | Path, store: str | None = None) -> list[VideoTask]:
    """The videos of a batch: every video file under the folder ``source`` (its subfolders too, in
    name order, those under ``out`` left out), or those a list file names. Each is checked as far as it
    can be before any work (the file, the game and its options, the calls files) and refused with the
    place it was named. A video's run folder is ``out/NAME``: its path under the folder, or for a list
    its file name with as many of its folders as tell it from the others'."""
    source, out = Path(source).expanduser(), Path(out).expanduser().resolve()
    if not source.exists():
        raise UserError(f"{source}: no such folder or list file: give a folder of recordings or a text file naming one "
                        "video a line")
    if source.is_dir():
        videos = sorted(p for p in source.rglob("*") if p.suffix.lower() in VIDEO_SUFFIXES and p.is_file()
                        and not p.resolve().is_relative_to(out))
        if not videos:
            raise UserError(f"{source}: no video file in this folder or under it ({', '.join(VIDEO_SUFFIXES)})")
        entries = [(p, settings, str(source)) for p in videos]
        names = [p.relative_to(source).with_suffix("").as_posix() for p in videos]
    elif source.suffix.lower() in VIDEO_SUFFIXES:
        raise UserError(f"{source} is a video: `cueref referee {source}` referees one video; cueref batch takes a folder or "
                        "a list file")
    else:
        entries = list(_read_list(source, settings))
        names = _short_names([p.resolve() for p, _, _ in entries])
    tasks, seen, taken = [], {}, set()
    for (video, given, where), name in zip(entries, names):
        path = video.expanduser().resolve()
        if path in seen:
            raise UserError(f"{where}: {video} is named twice (first at {seen[path]}): give each video once")
        seen[path] = where
        if not path.is_file():
            raise UserError(f"{where}: {video}: no such video file")
        if given.game is None:
            raise UserError(f"{where}: no game for {video}: give --game to cueref batch, or on the video's line of a list file")
        name = _unique(name, taken)
        job = RefereeJob(video=str(path), game=given.game, table=_absolute(given.table), players=given.players,
                         options=dict(given.options), calls=tuple(map(_absolute, given.calls)),
                         calibration=_absolute(given.calibration), out=str(out / name), overwrite=True, store=store,
                         annotate=given.annotate)
        try:
            job.check()
        except (UserError, ValueError, OSError) as e:
            raise UserError(f"{where}: {video}: {e}") from None
        tasks.append(VideoTask(name, job, where))
    return tasks


def _absolute(path: str | None) -> str | None:
    """A file path as every worker sees it (a table profile may also be a name or a size)."""
    if path is None or not Path(path).expanduser().exists():
        return path
    return str(Path(path).expanduser().resolve())


def _short_names(videos: Sequence[Path]) -> list[str]:
    """Each video's name: its file name without the suffix, with as many of its folders as it takes to
    tell it from the others (``ficha/frame`` and ``brasileira/frame``; ``baulk``)."""
    parts = [v.with_suffix("").parts for v in videos]
    depth = [1] * len(parts)
    while True:
        names = ["/".join(p[-d:]) for p, d in zip(parts, depth)]
        clash = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clash and depth[i] < len(parts[i])]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1


def _unique(name: str, taken: set[str]) -> str:
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def _read_list(path: Path, settings: Settings) -> Iterable[tuple[Path, Settings, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text file: a list file names one video a line") from None
    parser, folder, any_line = _LineParser(), path.parent, False
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path}, line {n}"
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:
            raise UserError(f"{where}: {e}: quote a path with spaces as \"a b.mp4\"") from None
        if not words:
            continue
        any_line = True
        try:
            a = parser.parse_args(words)
        except (_LineError, argparse.ArgumentError) as e:
            raise UserError(f"{where}: {e} (a line is VIDEO [--game G] [--table T] [--players A,B] [--option NAME=VALUE] "
                            "[--calls FILE] [--calibration CAL.json])") from None
        try:
            given = dataclasses.replace(
                settings, game=a.game or settings.game, table=a.table or settings.table,
                players=tuple(parse_players(a.players)) if a.players else settings.players,
                options={**settings.options, **parse_option_args(a.option)},
                calibration=str(folder / a.calibration) if a.calibration else settings.calibration,
                calls=tuple(str(folder / c) for c in a.calls))
        except (UserError, ValueError) as e:
            raise UserError(f"{where}: {e}") from None
        yield folder / a.video, given, where
    if not any_line:
        raise UserError(f"{path}: the list names no video: write one video path a line")


# ---- one video, in a worker ---------------------------------------------------------------------------------


def _flat(text: str) -> str:
    return " ".join(text.split())


def _one_line(e: BaseException) -> str:
    text = _flat(str(e))
    if isinstance(e, (UserError, ValueError, OSError)) or type(e).__module__.startswith("cueref"):
        return text or type(e).__name__
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def referee_one(task: VideoTask, stages: StageLoader | None = None, force: bool = False,
                progress: Callable[[int | None], Any] | None = None) -> VideoOutcome:
    """Referee one video of a batch (in a worker): skipped when its match is complete in the store
    (unless ``force``); whatever goes wrong becomes the outcome, never an exception."""
    import cv2

    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down when every core runs a video
    job, t0 = task.job, time.perf_counter()
    base = dict(name=task.name, video=job.video, out=job.out)
    try:
        digest = video_digest(job.video)
        with MatchStore(job.store) as store:
            try:
                stored = store.match(digest)
            except StoreError:  # no match of this video yet
                stored = None
            if stored is not None and stored.status == "complete" and not force:
                return VideoOutcome(**base, status="skipped", match_id=stored.id, shots=stored.shots,
                                    decisions=len(store.decisions(stored.id)), reason=f"complete in the store (match {stored.id})")
        try:
            done = referee_video(job, stages=stages, video_sha256=digest, say=log.debug, shots=None, progress=progress)
        except IntegrityError:  # another worker made the same new player's row at the same moment: it is there now
            log.info("%s: the store's players changed under it; once more", job.video)
            done = referee_video(job, stages=stages, video_sha256=digest, say=log.debug, shots=None, progress=progress)
    except Exception as e:  # noqa: BLE001 - one bad video never stops the batch
        log.debug("%s failed", job.video, exc_info=True)
        return VideoOutcome(**base, status="failed", seconds=time.perf_counter() - t0, reason=_one_line(e))
    return VideoOutcome(**base, status="damaged" if done.damaged else "refereed", match_id=done.match_id, frames=done.frames,
                        shots=done.shots, decisions=done.decisions, pending=done.pending, seconds=time.perf_counter() - t0,
                        reason=_flat(done.damaged) if done.damaged else done.store_warning)


# ---- the engines ------------------------------------------------------------------------------------------------


def run_batch(tasks: Sequence[VideoTask], *, engine: str = "local", jobs: int = 2, scheduler: str | None = None,
              stages: StageLoader | None = None, force: bool = False, on_done: Callable[[VideoOutcome], Any] = lambda o: None,
              progress: Callable[[str, int | None], Any] | None = None) -> list[VideoOutcome]:
    """Referee ``tasks`` (see the module docstring); ``on_done`` gets each outcome as it comes, and the
    outcomes are returned in the tasks' order. ``stages`` builds each video's stages (default: the
    installed ones); it must be picklable (a module-level function) for the worker processes.
    ``progress(name, total_frames)`` makes a frame bar per video when the batch runs in this process
    (one job)."""
    if engine not in ENGINES:
        raise UserError(f"unknown engine {engine!r}: one of {', '.join(ENGINES)}")
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: give 1 or more worker processes")
    stores = {t.job.store for t in tasks}
    for location in stores:  # made and migrated once, here, before the workers write to it
        MatchStore(location).close()
    outcomes: dict[str, VideoOutcome] = {}

    def done(outcome: VideoOutcome) -> None:
        outcomes[outcome.name] = outcome
        on_done(outcome)

    if engine == "dask":
        _run_dask(tasks, jobs, scheduler, stages, force, done)
    elif jobs == 1 or len(tasks) == 1:
        for task in tasks:
            done(referee_one(task, stages, force, functools.partial(progress, task.name) if progress else None))
    else:
        _run_local(tasks, jobs, stages, force, done)
    return [outcomes[t.name] for t in tasks]


def _worker_started(level: int) -> None:
    """A local worker: dies with the batch (a batch killed with SIGKILL leaves no worker writing), logs
    as the batch does, and leaves Ctrl-C to the batch."""
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def _run_local(tasks: Sequence[VideoTask], jobs: int, stages: StageLoader | None, force: bool,
               done: Callable[[VideoOutcome], None]) -> None:
    from pebble import ProcessExpired, ProcessPool

    level = logging.getLogger().getEffectiveLevel()
    with ProcessPool(max_workers=min(jobs, len(tasks)), initializer=_worker_started, initargs=(level,),
                     context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.schedule(referee_one, args=(task, stages, force)): task for task in _longest_first(tasks)}
        try:
            for future in concurrent.futures.as_completed(futures):
                task = futures[future]
                try:
                    done(future.result())
                except ProcessExpired as e:  # the worker died: out of memory, or a crash in a native library
                    done(_lost(task, f"the worker process died ({_exit_text(e.exitcode)}) while refereeing it"))
                except Exception as e:  # noqa: BLE001 - the outcome could not come back
                    done(_lost(task, _one_line(e)))
        except BaseException:
            pool.stop()
            raise


def _longest_first(tasks: Sequence[VideoTask]) -> list[VideoTask]:
    """The tasks by their video's size, largest first: a long recording started last would leave the
    other workers idle while it runs alone (outcomes are still reported in the tasks' order)."""
    def size(task: VideoTask) -> int:
        try:
            return os.path.getsize(task.job.video)
        except OSError:
            return 0

    return sorted(tasks, key=size, reverse=True)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit code {code}"


def _lost(task: VideoTask, reason: str) -> VideoOutcome:
    return VideoOutcome(name=task.name, video=task.job.video, status="failed", reason=reason, out=task.job.out)


def _run_dask(tasks: Sequence[VideoTask], jobs: int, scheduler: str | None, stages: StageLoader | None, force: bool,
              done: Callable[[VideoOutcome], None]) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UserError("--engine dask needs Dask's distributed scheduler: pip install 'cueref[cluster]'") from None
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s")
            except (OSError, TimeoutError) as e:
                raise UserError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({_one_line(e)}): start one "
                                "(`dask scheduler`, and `dask worker ADDRESS` on each machine), or leave --scheduler out "
                                "for a local cluster") from None
        else:
            cluster = LocalCluster(n_workers=min(jobs, len(tasks)), threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        with client:
            ordered = _longest_first(tasks)
            futures = client.map(referee_one, ordered, stages=stages, force=force, pure=False)
            by_key = {f.key: t for f, t in zip(futures, ordered)}
            for future in as_completed(futures):
                task = by_key[future.key]
                try:
                    done(future.result())
                except Exception as e:  # noqa: BLE001 - a worker lost (KilledWorker) or the result undeliverable
                    done(_lost(task, _one_line(e)))
    finally:
        if cluster is not None:
            cluster.close()
