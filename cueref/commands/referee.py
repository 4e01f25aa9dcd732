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

import cv2
from tqdm import tqdm

from cueref.console import ShotPrinter
from cueref.errors import UserError
from cueref.inputs import add_game_arguments, calibration_for, game_inputs
from cueref.outputs import RUN_FILES, RunFiles, refuse_output_onto_inputs, run_folder
from cueref.report.outputs import MatchOutputs
from cueref.pipeline import load_stages, missing_stages, run as run_pipeline
from cueref.video import DamagedVideoError, VideoReader


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    add_game_arguments(p)
    p.add_argument("--no-video", action="store_true", help="do not write the annotated video (annotated.mp4)")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down on a few cores
    given = game_inputs(args)  # checked before any video work
    profile, players, options = given.profile, given.players, given.options
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
        cal, said = calibration_for(args.calibration, profile, first.image, out, str(args.video), first.t_s)
        print(said)
        missing = missing_stages()
        if missing:
            print(
                f"cueref referee: {args.video} opens and decodes ({info.width}x{info.height}), the table is calibrated, and the "
                f"{args.game} rules engine is ready, but this build has no {' or '.join(missing)} stage yet, so no event can "
                f"be inferred from video. To referee a match whose events are logged, run: cueref judge EVENTS.jsonl "
                f"--game {args.game} (sample logs: sample_videos/*/*.events.jsonl)."
            )
            return 2
        stages = load_stages(profile, cal, given.referee(), first.image)
        header = given.header(str(args.video))
        frames = itertools.chain([first], reader)
        bar = tqdm(total=info.frame_count, unit="frame", desc="referee", dynamic_ncols=True)
        printer = ShotPrinter(tqdm.write)
        with RunFiles(out, header) as files, bar, MatchOutputs.open(
                out, video=args.video, game=args.game, profile=profile, profile_ref=header.profile, players=players,
                options=options, calibration=cal, fps=info.fps, store=args.store, annotate=not args.no_video,
        ) as match, contextlib.closing(run_pipeline(frames, stages, given.calls)) as results:
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
