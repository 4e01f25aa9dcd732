"""``cueref track VIDEO --game GAME --out DIR``: a video's event log and ball tracks, without the referee.

The same stages as ``cueref referee`` (calibration, vision, tracking, event inference, run by
:func:`cueref.pipeline.run`), consumed here into two files written as the video plays:

``DIR/events.jsonl``  the event log (``docs/event-log.md``), header first; a shot's events appear
                      within half a second of its last ball stopping
``DIR/tracks.csv``    one row per ball per frame: ``frame, t_s, ball, class, x_mm, y_mm, state, confidence``

``cueref judge DIR/events.jsonl`` then referees the log (``--calls`` adds what the camera cannot see).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
from pathlib import Path
from typing import Any

import cv2
from tqdm import tqdm

from calibration.table import resolve_profile
from cueref.errors import UserError
from cueref.inputs import calibration_for, first_frame
from cueref.options import parse_players
from cueref.outputs import TRACKS_COLUMNS, refuse_output_onto_inputs, run_folder
from cueref.pipeline import load_stages, missing_stages, run as run_pipeline
from cueref.video import DamagedVideoError, VideoReader
from rules import GAMES, get_engine
from rules.base import Referee
from tracking.events import AtRest, LogHeader, ShotStart, write_events

TRACK_FILES = ("events.jsonl", "tracks.csv")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    p.add_argument("--game", required=True, choices=sorted(GAMES), help="the game being played (its balls and table)")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the game's)")
    p.add_argument("--calibration", help="a CAL.json from `cueref calibrate` (default: calibrate from the first frame)")
    p.add_argument("--players", default="A,B", help="player names for the log's header (default A,B)")
    p.add_argument("--out", required=True, help="folder for events.jsonl and tracks.csv")
    p.add_argument("--overwrite", action="store_true", help="replace the files of an earlier run in --out")


class TrackFiles:
    """``events.jsonl`` and ``tracks.csv`` of a run, each frame's lines written as the frame is done
    (a crash keeps everything up to it)."""

    def __init__(self, folder: Path, header: LogHeader):
        folder.mkdir(parents=True, exist_ok=True)
        self.events = open(folder / "events.jsonl", "w", encoding="utf-8")
        self.tracks = open(folder / "tracks.csv", "w", encoding="utf-8", newline="")
        write_events(self.events, [], header)
        self._csv = csv.writer(self.tracks)
        self._csv.writerow(TRACKS_COLUMNS)
        self.n_events = self.n_shots = self.n_rows = 0

    def add(self, result: Any) -> None:
        t = f"{result.t_s:.6f}"
        rows = result.tracks.rows()
        self._csv.writerows((result.index, t, ball, cls, f"{x:.2f}", f"{y:.2f}", state, f"{conf:.3f}")
                            for ball, cls, x, y, state, conf in rows)
        self.n_rows += len(rows)
        if result.events:
            write_events(self.events, result.events)
            self.n_events += len(result.events)
            self.n_shots += sum(1 for e in result.events if isinstance(e, ShotStart))
            self.events.flush()
            self.tracks.flush()

    def close(self) -> None:
        self.events.close()
        self.tracks.close()


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down on a few cores
    profile = resolve_profile(args.table or GAMES[args.game][2])
    players = parse_players(args.players)
    out = run_folder(args.out, str(args.video), args.overwrite)
    refuse_output_onto_inputs([("the output", out / name) for name in TRACK_FILES],
                              [("video", args.video), ("--calibration file", args.calibration)])
    with VideoReader(args.video) as reader:
        first, line = first_frame(reader, str(args.video))
        info = reader.info
        print(line)
        cal, said = calibration_for(args.calibration, profile, first.image, out, str(args.video), first.t_s)
        print(said)
        missing = missing_stages()
        if missing:
            raise UserError(f"this build has no {' or '.join(missing)} stage yet, so no event can be inferred from "
                            f"{args.video}; a log written by hand or by the simulator can be refereed with cueref judge")
        # the referee only keeps the pipeline's contract (events in time order); its calls are not written
        stages = load_stages(profile, cal, Referee(get_engine(args.game, profile), players), first.image)
        header = LogHeader(game=args.game, profile=args.table or GAMES[args.game][2], players=tuple(players),
                           source=str(args.video))
        bar = tqdm(total=info.frame_count, unit="frame", desc="track", dynamic_ncols=True)
        files = TrackFiles(out, header)
        with contextlib.closing(files), bar, contextlib.closing(
                run_pipeline(itertools.chain([first], reader), stages)) as results:
            try:
                for result in results:
                    files.add(result)
                    bar.update(1)
                    if any(isinstance(e, AtRest) for e in result.events):
                        bar.set_postfix(shots=files.n_shots, refresh=False)
            except DamagedVideoError as e:
                raise UserError(f"{e} The events and tracks up to there are in {out}/") from None
    elapsed_s = bar.format_dict["elapsed"]
    print(f"{bar.n} frames in {elapsed_s:.1f} s ({bar.n / max(elapsed_s, 1e-9):.0f} frames/s); {files.n_shots} shot(s), "
          f"{files.n_events} events -> {out}/events.jsonl; {files.n_rows} track rows -> {out}/tracks.csv")
    return 0
