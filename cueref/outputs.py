"""The files cueref writes, and the rules every output follows: never onto an input, never half-written
under its final name (a finished file appears at once, by a rename), and never over a previous run's
results without being asked.

A referee run's folder (:class:`RunFiles`, a consumer of :func:`cueref.pipeline.run`):

``calibration.json``  the calibration used (when it was found automatically)
``events.jsonl``      the event log, header first, streamed as it grows (``docs/event-log.md``)
``decisions.jsonl``   every decision as one JSON object a line, as ``cueref judge --json`` writes them
``tracks.csv``        one row per ball per frame: ``frame, t_s, ball, class, x_mm, y_mm, state, confidence``

The three streamed files are written in place, a frame's lines as soon as the frame is done, so that
a crash or an interrupted run keeps everything up to that frame and a viewer can follow them live.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from cueref.errors import UserError
from rules.base import Decision
from tracking.events import LogHeader, write_events

__all__ = [
    "RUN_FILES", "TRACKS_COLUMNS", "decision_line", "atomic_output", "refuse_output_onto_inputs",
    "run_folder", "RunFiles",
]

RUN_FILES = ("calibration.json", "events.jsonl", "decisions.jsonl", "tracks.csv")
TRACKS_COLUMNS = ("frame", "t_s", "ball", "class", "x_mm", "y_mm", "state", "confidence")


def decision_line(decision: Decision) -> str:
    """One decision as a line of JSON (``decisions.jsonl``, ``cueref judge --json``)."""
    return json.dumps(decision.to_dict())


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[TextIO]:
    """A text file written under a temporary name beside ``path`` and renamed onto it when the block
    ends without an error; on an error ``path`` is left as it was."""
    path = Path(path)
    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: the folder {path.parent} does not exist; create it or write elsewhere")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp made it private; an output is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def refuse_output_onto_inputs(outputs: Iterable[tuple[str, Path | str | None]],
                              inputs: Iterable[tuple[str, Path | str | None]]) -> None:
    """Refuse an output that is one of the inputs (``cueref judge LOG --json LOG`` would replace the log
    with the decisions). Each pair names the flag or argument, for the message, and its path (None:
    not given)."""
    given = [(name, Path(p)) for name, p in inputs if p is not None]
    for out_name, out in outputs:
        if out is None:
            continue
        for in_name, path in given:
            if _same_file(Path(out), path):
                raise UserError(f"{out_name} {out} is the {in_name} this command reads: write the output elsewhere")


def run_folder(out: str | Path | None, source: str, overwrite: bool = False) -> Path:
    """The folder a referee run writes into (not created here).

    Given ``--out``: that folder, refused when it holds a previous run's files unless ``overwrite``.
    Not given: ``cueref-out/NAME`` after the video (``camera-0`` for a camera), or ``NAME-2``,
    ``NAME-3`` ... when an earlier run is there: a second run never replaces the first one's results.
    """
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise UserError(f"--out {folder} is a file, not a folder: give a folder for the run's files")
        previous = _previous_run(folder)
        if previous and not overwrite:
            raise UserError(f"--out {folder} already holds a run's results ({', '.join(previous)}): "
                            "give another folder, or add --overwrite to replace them")
        return folder
    text = str(source)
    name = f"camera-{text.strip()}" if text.strip().isdigit() else Path(text.split("?")[0].rstrip("/")).stem
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "video"
    base = Path("cueref-out")
    return next(folder for n in itertools.count(1)
                if not _previous_run(folder := base / (name if n == 1 else f"{name}-{n}")))


def _previous_run(folder: Path) -> list[str]:
    return [name for name in RUN_FILES if (folder / name).exists()] if folder.is_dir() else []


class RunFiles:
    """Writes ``events.jsonl``, ``decisions.jsonl`` and ``tracks.csv`` of a referee run from its frame
    results (use as a context manager; :meth:`add` each :class:`~cueref.pipeline.FrameResult`).

    ``tracks.csv`` reads the tracker's snapshot through ``tracks.rows()``: one
    ``(ball, class, x_mm, y_mm, state, confidence)`` tuple per track.
    """

    def __init__(self, folder: Path, header: LogHeader):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._files: list[TextIO] = []
        self.events = self._open("events.jsonl")
        self.decisions = self._open("decisions.jsonl")
        self.tracks = self._open("tracks.csv", newline="")
        write_events(self.events, [], header)
        self._csv = csv.writer(self.tracks)
        self._csv.writerow(TRACKS_COLUMNS)
        self.n_events = self.n_decisions = 0

    def _open(self, name: str, **kw: Any) -> TextIO:
        fh = open(self.folder / name, "w", encoding="utf-8", **kw)
        self._files.append(fh)
        return fh

    def __enter__(self) -> "RunFiles":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def add(self, result: Any) -> None:
        rows = getattr(result.tracks, "rows", None)
        if rows is None:
            raise TypeError(f"the tracker's snapshot ({type(result.tracks).__name__}) has no rows(): tracks.csv needs "
                            "one (ball, class, x_mm, y_mm, state, confidence) tuple per track")
        t = f"{result.t_s:.6f}"
        self._csv.writerows((result.index, t, ball, cls, f"{x:.2f}", f"{y:.2f}", state, f"{conf:.3f}")
                            for ball, cls, x, y, state, conf in rows())
        if result.events:
            write_events(self.events, result.events)
            self.n_events += len(result.events)
        for step in result.steps:
            self.decisions.write(decision_line(step.decision) + "\n")
            self.n_decisions += 1
        if result.events or result.steps or result.last:
            for fh in self._files:
                fh.flush()

    def close(self) -> None:
        for fh in self._files:
            fh.close()
