"""``cueref referee VIDEO --game GAME``: the main job: video in, refereed decisions out.

Everything that can be checked is checked before any long work (the game's options, the calls file,
the output folder, that the video opens, the calibration). Then the table is calibrated (or
``--calibration`` read), and :func:`cueref.pipeline.run` joins the stages (video -> calibration ->
vision -> tracking -> rules) while this command consumes its results: a progress bar, each shot's
events and call, the run's files (:class:`cueref.outputs.RunFiles`), and the match's record
(:class:`cueref.report.outputs.MatchOutputs`: the store, the annotated video, the review report). A stage this build does not
have yet stops the job after the calibration with a message that says which one and what can be done
instead; nothing is guessed.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
from pathlib import Path

import cv2
from tqdm import tqdm

from calibration import calfile
from calibration.calibrate import calibrate_image
from calibration.table import resolve_profile
from cueref.calls import merge_by_time, read_calls
from cueref.console import ShotPrinter
from cueref.errors import UserError
from cueref.inputs import load_calibration
from cueref.options import parse_option_args, parse_players
from cueref.outputs import RUN_FILES, RunFiles, refuse_output_onto_inputs, run_folder
from cueref.report.outputs import MatchOutputs
from cueref.pipeline import load_stages, missing_stages, run as run_pipeline
from cueref.video import DamagedVideoError, VideoReader
from rules import GAMES, get_engine
from rules.base import Referee
from tracking.events import LogHeader


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    p.add_argument("--game", required=True, choices=sorted(GAMES), help="the game being played")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the game's)")
    p.add_argument("--players", default="A,B", help="comma-separated player names in break order (default A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable)")
    p.add_argument("--calls", type=Path, action="append", default=[],
                   help="operator inputs the camera cannot see (nominations, concessions, answers), JSON Lines in the "
                        "event-log format; merged in by time (repeatable)")
    p.add_argument("--calibration", help="a CAL.json from `cueref calibrate` (default: calibrate automatically)")
    p.add_argument("--out", help="folder for the calibration, event log, decisions and tracks "
                                 "(default: cueref-out/VIDEO-NAME/, or VIDEO-NAME-2/ ... beside an earlier run)")
    p.add_argument("--overwrite", action="store_true", help="replace the results of an earlier run in --out")
    p.add_argument("--store", help="match store: SQLite file or postgresql:// URL (default: $CUEREF_STORE or "
                                   "cueref-out/matches.sqlite); a re-run of the same video updates its match")
    p.add_argument("--no-video", action="store_true", help="do not write the annotated video (annotated.mp4)")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down on a few cores
    profile = resolve_profile(args.table or GAMES[args.game][2])
    engine = get_engine(args.game, profile)
    players = parse_players(args.players)
    options = parse_option_args(args.option)
    engine.initial_state(players, options)  # options are checked before any video work
    calls = merge_by_time([], read_calls(args.calls))
    out = run_folder(args.out, str(args.video), args.overwrite)
    refuse_output_onto_inputs([("the output", out / name) for name in RUN_FILES],
                              [("video", args.video), ("--calibration file", args.calibration),
                               *(("--calls file", c) for c in args.calls)])

    with VideoReader(args.video) as reader:
        first = reader.read()
        if first is None:
            raise ValueError(f"{args.video}: the video holds no frame")
        info = reader.info
        print(f"video: {args.video}, {info.width}x{info.height}, {f'{info.fps:.3f}' if info.fps else 'unknown'} fps, "
              f"{info.frame_count or 'unknown'} frames")
        if args.calibration:
            cal = load_calibration(args.calibration, profile, (info.width, info.height))
            print(f"calibration: {args.calibration} ({cal.method})")
        else:
            cal = calibrate_image(first.image, profile)
            out.mkdir(parents=True, exist_ok=True)
            cal_path = calfile.save(cal, out / "calibration.json", source={"video": str(args.video), "t_s": first.t_s})
            rms = cal.residuals.get("landmark_rms_mm")
            print(f"calibration: found the {profile.name} table automatically in the first frame "
                  f"(landmark residual {rms if rms is not None else 'n/a'} mm) -> {cal_path}")
        missing = missing_stages()
        if missing:
            print(
                f"cueref referee: {args.video} opens and decodes ({info.width}x{info.height}), the table is calibrated, and the "
                f"{args.game} rules engine is ready, but this build has no {' or '.join(missing)} stage yet, so no event can "
                f"be inferred from video. To referee a match whose events are logged, run: cueref judge EVENTS.jsonl "
                f"--game {args.game} (sample logs: sample_videos/*/*.events.jsonl)."
            )
            return 2
        stages = load_stages(profile, cal, Referee(engine, players, options), first.image)
        header = LogHeader(game=args.game, profile=args.table or GAMES[args.game][2], players=tuple(players),
                           options=options, source=str(args.video))
        frames = itertools.chain([first], reader)
        bar = tqdm(total=info.frame_count, unit="frame", desc="referee", dynamic_ncols=True)
        printer = ShotPrinter(tqdm.write)
        with RunFiles(out, header) as files, bar, MatchOutputs.open(
                out, video=args.video, game=args.game, profile=profile, profile_ref=header.profile, players=players,
                options=options, calibration=cal, fps=info.fps, store=args.store, annotate=not args.no_video,
        ) as match, contextlib.closing(run_pipeline(frames, stages, calls)) as results:
            try:
                for result in results:
                    files.add(result)
                    match.add(result)
                    printer.add(result)
                    bar.update(1)
            except DamagedVideoError as e:
                raise UserError(f"{e} The results up to there are in {out}/") from None
    if match.warning:
        print(f"store: {match.warning}")
    print(f"review report: {match.report}")
    elapsed_s = bar.format_dict["elapsed"]
    pending = f", {printer.n_pending} pending an answer" if printer.n_pending else ""
    print(f"{bar.n} frames in {elapsed_s:.1f} s ({bar.n / max(elapsed_s, 1e-9):.0f} frames/s); {printer.n_shots} shot(s) "
          f"called{pending}; written to {out}/: events.jsonl ({files.n_events} events), decisions.jsonl "
          f"({files.n_decisions}), tracks.csv{'' if args.no_video else ', annotated.mp4'}")
    return 0
