"""``cueref referee VIDEO --game GAME``: the main job: video in, refereed decisions out.

Everything that can be checked is checked before any long work (the game's options, the calls file,
the output folder, that the video opens, the calibration). Then the table is calibrated (or
``--calibration`` read), and :func:`cueref.pipeline.run` joins the stages (video -> calibration ->
vision -> tracking -> rules) while the run's consumers take its results: a progress bar, each shot's
events and call, the run's files (:class:`cueref.outputs.RunFiles`), and the match's record
(:class:`cueref.report.outputs.MatchOutputs`: the store, the annotated video, the review report). The
run itself is the library function :func:`cueref.referee_run.referee_video`, which ``cueref batch``
calls once per video. A stage this build does not have yet stops the job after the calibration with a
message that says which one and what can be done instead; nothing is guessed.
"""

from __future__ import annotations

import argparse

import cv2

from cueref.errors import UserError
from cueref.inputs import add_game_arguments
from cueref.options import parse_option_args, parse_players
from cueref.referee_run import MissingStagesError, RefereeJob, referee_video


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    add_game_arguments(p)
    p.add_argument("--no-video", action="store_true", help="do not write the annotated video (annotated.mp4)")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)  # OpenCV's own threads slow small kernels down on a few cores
    job = RefereeJob(
        video=args.video, game=args.game, table=args.table, players=tuple(parse_players(args.players)),
        options=parse_option_args(args.option), calls=tuple(str(c) for c in args.calls), calibration=args.calibration,
        out=args.out, overwrite=args.overwrite, store=args.store, annotate=not args.no_video)
    try:
        done = referee_video(job)
    except MissingStagesError as e:
        print(f"cueref referee: {e}")
        return 2
    if done.damaged:
        raise UserError(f"{done.damaged} The results up to there are in {done.out}/")
    if done.store_warning:
        print(f"store: {done.store_warning}")
    print(f"review report: {done.report}")
    pending = f", {done.pending} pending an answer" if done.pending else ""
    print(f"{done.frames} frames in {done.seconds:.1f} s ({done.frames / max(done.seconds, 1e-9):.0f} frames/s); {done.shots} shot(s) "
          f"called{pending}; written to {done.out}/: events.jsonl ({done.events} events), decisions.jsonl "
          f"({done.decisions}), tracks.csv{'' if args.no_video else ', annotated.mp4'}")
    return 0
