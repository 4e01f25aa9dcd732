"""One referee run as a library function: a video in; its run folder, its match in the store, its
annotated video and its review report out. ``cueref referee`` is a shell around it, and ``cueref
batch`` calls it once per video, in a worker process or on a cluster::

    job = RefereeJob(video="league/2024-03-01.mp4", game="ficha", players=("Ana", "Bia"), store="league.sqlite")
    result = referee_video(job)            # the installed stages; or stages=LOADER (tests: stand-ins)
    print(result.shots, result.report)

Everything that can be checked is checked before any long work (:meth:`RefereeJob.check`: the game's
options, the calls files, the output folder). Then the video is opened, the table calibrated (or the
job's CAL.json read), and :func:`cueref.pipeline.run` joins the stages while the run's consumers take
its results: the run files (:class:`cueref.outputs.RunFiles`), the match's record
(:class:`cueref.report.outputs.MatchOutputs`), the progress bar and the shot printer.

A damaged video (truncated, corrupt) is refereed up to its last good frame: every call made before
the damage stays in the run folder and in the store, whose match stays ``recording`` (a re-copied,
whole file is another file, hence another match); :attr:`RefereeResult.damaged` says where it broke.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
from sqlalchemy.exc import OperationalError
from tqdm import tqdm

from calibration import calfile
from calibration.camera import Calibration
from calibration.table import TableProfile
from cueref.console import ShotPrinter
from cueref.errors import UserError
from cueref.inputs import GameInputs, calibration_for, first_frame, match_inputs
from cueref.outputs import RUN_FILES, RunFiles, refuse_output_onto_inputs, run_folder
from cueref.pipeline import Stages, load_stages, missing_stages, run as run_pipeline
from cueref.report.outputs import MatchOutputs
from cueref.video import DamagedVideoError, VideoReader
from rules import GAMES
from rules.base import Referee

__all__ = ["RefereeJob", "RefereeResult", "StageLoader", "MissingStagesError", "missing_stages_message", "installed_stages", "referee_video"]

#: builds the stages of one video: ``(video, profile, calibration, referee, first_image) -> Stages``
StageLoader = Callable[[str, TableProfile, Calibration, Referee, np.ndarray], Stages]


class MissingStagesError(UserError):
    """This build has no vision or tracking stage yet: nothing can be inferred from video."""


def missing_stages_message(missing: list[str], game: str) -> str:
    return (f"this build has no {' or '.join(missing)} stage yet, so no event can be inferred from video. To referee a "
            f"match whose events are logged, run: cueref judge EVENTS.jsonl --game {game} (sample logs: "
            "sample_videos/*/*.events.jsonl).")


def installed_stages(video: str, profile: TableProfile, calibration: Calibration, referee: Referee,
                     first_image: np.ndarray) -> Stages:
    """The stages this build has (:func:`cueref.pipeline.load_stages`); refused when one is missing."""
    missing = missing_stages()
    if missing:
        height, width = first_image.shape[:2]
        game = referee.engine.name
        raise MissingStagesError(f"{video} opens and decodes ({width}x{height}), the table is calibrated, and the {game} "
                                 f"rules engine is ready, but {missing_stages_message(missing, game)}")
    return load_stages(profile, calibration, referee, first_image)


@dataclass(frozen=True, slots=True)
class RefereeJob:
    """One video to referee and how: what ``cueref referee`` takes on its command line."""

    video: str
    game: str
    table: str | None = None  # profile name, .yaml file or LENGTHxWIDTH spec (None: the game's)
    players: tuple[str, ...] = ("A", "B")  # in break order
    options: Mapping[str, Any] = field(default_factory=dict)  # rules options (the engine checks them)
    calls: tuple[str, ...] = ()  # calls files: the operator's inputs, merged in by time
    calibration: str | None = None  # a CAL.json (None: calibrate from the first frame)
    out: str | None = None  # the run folder (None: cueref-out/NAME/, beside an earlier run)
    overwrite: bool = False  # replace an earlier run's files in ``out``
    store: str | None = None  # SQLite file or postgresql:// URL (None: $CUEREF_STORE or the default)
    annotate: bool = True  # write annotated.mp4

    def check(self) -> tuple[GameInputs, Path]:
        """Everything that can be checked before the video is opened (the match's inputs, the calibration
        file, the output folder): the match's inputs and the run folder, or a clear error."""
        if self.game not in GAMES:
            raise UserError(f"unknown game {self.game!r}: one of {', '.join(sorted(GAMES))}")
        given = match_inputs(self.game, self.table, self.players, self.options, self.calls)
        if self.calibration:
            calfile.load(self.calibration)  # its fit to the table and the video's size is checked once the video is open
        out = run_folder(self.out, str(self.video), self.overwrite)
        refuse_output_onto_inputs([("the output", out / name) for name in RUN_FILES],
                                  [("video", self.video), ("--calibration file", self.calibration),
                                   *(("--calls file", c) for c in self.calls)])
        return given, out


@dataclass(frozen=True, slots=True)
class RefereeResult:
    """What one run did."""

    video: str
    out: Path
    match_id: int
    frames: int
    seconds: float
    shots: int  # shots called
    pending: int  # calls waiting for an operator's answer
    events: int  # entries of the event log
    decisions: int
    report: Path | None  # the review report (None when the video was damaged)
    store_warning: str | None = None  # earlier corrections of the match no longer apply: why
    damaged: str | None = None  # where and why decoding stopped early (the results up to there are kept)


def _reason(e: OperationalError) -> str:
    return " ".join(str(e.orig if e.orig is not None else e).split())


def _frame_bar(total: int | None) -> tqdm:
    return tqdm(total=total, unit="frame", desc="referee", dynamic_ncols=True)


def referee_video(job: RefereeJob, *, stages: StageLoader | None = None, video_sha256: str | None = None,
                  say: Callable[[str], Any] = print, shots: Callable[[str], Any] | None = tqdm.write,
                  progress: Callable[[int | None], tqdm] | None = _frame_bar) -> RefereeResult:
    """Referee ``job``'s video end to end (module docstring) and return what was done.

    ``stages`` builds the stages (default :func:`installed_stages`); ``video_sha256`` is the video's
    content hash when the caller has it already. ``say`` gets the lines about the video and the
    calibration, ``shots`` each shot's events and call (None: silent), ``progress(total_frames)`` makes
    the frame bar (None: no bar).
    """
    given, out = job.check()
    with VideoReader(job.video) as reader:
        first, line = first_frame(reader, str(job.video))
        info = reader.info
        say(line)
        cal, said = calibration_for(job.calibration, given.profile, first.image, out, str(job.video), first.t_s)
        say(said)
        made = (stages or installed_stages)(str(job.video), given.profile, cal, given.referee(), first.image)
        header = given.header(str(job.video))
        printer = ShotPrinter(shots or (lambda line: None))
        bar = progress(info.frame_count) if progress else tqdm(disable=True)
        damaged, frames = None, 0
        t0 = time.perf_counter()
        try:
            with RunFiles(out, header) as files, bar, MatchOutputs.open(
                    out, video=job.video, game=job.game, profile=given.profile, profile_ref=header.profile,
                    players=given.players, options=given.options, calibration=cal, fps=info.fps, store=job.store,
                    annotate=job.annotate, video_sha256=video_sha256,
            ) as match, contextlib.closing(run_pipeline(itertools.chain([first], reader), made, given.calls)) as results:
                for result in results:
                    files.add(result)
                    match.add(result)
                    printer.add(result)
                    bar.update(1)
                    frames += 1
        except DamagedVideoError as e:  # the outputs kept every call made before it; the match stays recording
            damaged = str(e)
        except OperationalError as e:  # the store could not be written (its disk is full, its server went away)
            raise UserError(f"the match store could not be written ({_reason(e)}): free some space or bring the store "
                            f"back, and run again; every call made before is kept in the store and in {out}/") from None
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            raise UserError(f"no space left on the disk of {e.filename or out}: free some space and run again; everything "
                            f"written before is kept in {out}/ and in the store") from None
    return RefereeResult(
        video=str(job.video), out=out, match_id=match.recorder.match_id, frames=frames, seconds=time.perf_counter() - t0,
        shots=printer.n_shots, pending=printer.n_pending, events=files.n_events, decisions=files.n_decisions,
        report=match.report, store_warning=match.warning, damaged=damaged)

