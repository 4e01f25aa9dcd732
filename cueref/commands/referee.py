"""``cueref referee VIDEO --game GAME``: the main job: video in, refereed decisions out.

The stages run in the pipeline's order (video → calibration → vision → tracking → rules). A stage
this build does not have yet stops the job with a message that says which one and what can be done
instead; nothing is guessed.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
from pathlib import Path

from calibration import calfile
from calibration.calibrate import calibrate_image
from calibration.table import resolve_profile
from cueref.cli import UserError
from cueref.commands.judge import parse_option_args
from cueref.video import VideoReader
from rules import GAMES, get_engine

log = logging.getLogger(__name__)

# stage name -> the module that provides it
STAGES: tuple[tuple[str, str], ...] = (
    ("calibration", "calibration.calibrate"),
    ("vision", "vision.detect"),
    ("tracking", "tracking.tracker"),
)


def missing_stages() -> list[str]:
    """The pipeline stages whose module is not part of this build."""
    return [name for name, module in STAGES if importlib.util.find_spec(module) is None]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    p.add_argument("--game", required=True, choices=sorted(GAMES), help="the game being played")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the game's)")
    p.add_argument("--players", default="A,B", help="comma-separated player names in break order (default A,B)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option (repeatable)")
    p.add_argument("--calibration", help="a CAL.json from `cueref calibrate` (default: calibrate automatically)")
    p.add_argument("--out", help="folder for the calibration, event log, decisions and report (default: cueref-out/VIDEO-NAME/)")


def run(args: argparse.Namespace) -> int:
    profile = resolve_profile(args.table or GAMES[args.game][2])
    engine = get_engine(args.game, profile)
    players = [p for p in args.players.split(",") if p]
    engine.initial_state(players, parse_option_args(args.option))  # options are checked before any video work

    with VideoReader(args.video) as reader:
        first = reader.read()
        if first is None:
            raise ValueError(f"{args.video}: the video holds no frame")
        log.info("%s: %dx%d, %s fps, %s frames", args.video, reader.width, reader.height,
                 f"{reader.fps:.3f}" if reader.fps else "unknown", reader.frame_count or "unknown")
    out = Path(args.out) if args.out else Path("cueref-out") / Path(str(args.video)).stem
    out.mkdir(parents=True, exist_ok=True)
    if args.calibration:
        cal = calfile.load(args.calibration)
        print(f"calibration: {args.calibration} ({cal.method})")
    else:
        cal = calibrate_image(first.image, profile)
        cal_path = calfile.save(cal, out / "calibration.json", source={"video": str(args.video), "t_s": first.t_s})
        rms = cal.residuals.get("landmark_rms_mm")
        print(f"calibration: found the {profile.name} table automatically in the first frame "
              f"(landmark residual {rms if rms is not None else 'n/a'} mm) -> {cal_path}")
    missing = missing_stages()
    if missing:
        print(
            f"cueref referee: {args.video} opens and decodes ({reader.width}x{reader.height}), the table is calibrated, and the {args.game} rules "
            f"engine is ready, but this build has no {' or '.join(missing)} stage yet, so no event can be inferred "
            "from video. To referee a match whose events are logged, run: cueref judge EVENTS.jsonl "
            f"--game {args.game} (sample logs: sample_videos/*/*.events.jsonl)."
        )
        return 2
    raise UserError("cueref referee: every stage is installed but this build does not join vision and tracking yet")
