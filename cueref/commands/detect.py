"""``cueref detect VIDEO --game GAME --out DIR``: "does it see my table?"

Runs calibration and the vision stage alone over a video and writes what was seen:

* ``DIR/detections.csv``: one row per ball per frame: ``frame, t_s, x_mm, y_mm, x_px, y_px, radius_px,
  class, score, state`` (``class`` empty when the colour is uncertain; ``state`` visible, occluded,
  airborne or in_pocket). Frames the table could not be read in have no rows;
* ``DIR/pins.csv`` (bar billiards): ``frame, t_s, pin, x_mm, y_mm, state, score``;
* ``DIR/detections.mp4``: the video with every ball's outline and class, the occluders and the pins
  drawn (``--no-video`` skips it);
* ``DIR/calibration.json``: the calibration used (found in the first frame unless ``--calibration``).

The camera is watched throughout (``calibration.monitor.CalibrationKeeper``): a drift is followed and
a bump recalibrated, and the detector told. Files are written as the video plays, so an interrupted
run keeps everything up to the last frame read.
"""

from __future__ import annotations

import argparse
import csv
import logging
import time
from pathlib import Path

import cv2
import numpy as np

from calibration import calfile
from calibration.calibrate import calibrate_frames, calibrate_image
from calibration.homography import CalibrationError
from calibration.monitor import CalibrationKeeper
from calibration.table import resolve_profile
from cueref.video import VideoReader, VideoWriter
from rules import GAMES
from vision import Detector
from vision.draw import draw_detections
from vision.types import BallState, PinState

log = logging.getLogger(__name__)

BALL_COLUMNS = ("frame", "t_s", "x_mm", "y_mm", "x_px", "y_px", "radius_px", "class", "score", "state")
PIN_COLUMNS = ("frame", "t_s", "pin", "x_mm", "y_mm", "state", "score")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("video", help="a video file, a camera index (0, 1, ...) or a stream URL (rtsp://...)")
    p.add_argument("--game", required=True, choices=sorted(GAMES), help="the game on the table (it names the ball colours)")
    p.add_argument("--table", help="table profile: built-in name, .yaml file or LENGTHxWIDTH spec (default: the game's)")
    p.add_argument("--calibration", help="a CAL.json from `cueref calibrate` (default: calibrate from the first frame)")
    p.add_argument("--out", required=True, help="folder for detections.csv, the annotated video and the calibration")
    p.add_argument("--no-video", action="store_true", help="write the CSV files only (faster)")
    p.add_argument("--max-frames", type=int, metavar="N", help="stop after N frames")


def _f(v: float, nd: int) -> str:
    return "" if not np.isfinite(v) else f"{v:.{nd}f}"


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    cv2.setNumThreads(1)
    profile = resolve_profile(args.table or GAMES[args.game][2])
    if args.max_frames is not None and args.max_frames < 1:
        raise ValueError(f"--max-frames {args.max_frames} must be at least 1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with VideoReader(args.video) as reader:
        first = reader.read()
        if first is None:
            raise ValueError(f"{args.video}: the video holds no frame")
        if args.calibration:
            cal = calfile.load(args.calibration)
            if tuple(cal.image_size) != (first.image.shape[1], first.image.shape[0]):
                raise CalibrationError(
                    f"{args.calibration} was made for {cal.image_size[0]}x{cal.image_size[1]} pictures but {args.video} "
                    f"is {first.image.shape[1]}x{first.image.shape[0]}", "calibrate this video: cueref calibrate VIDEO --table ... --out CAL.json")
            print(f"calibration: {args.calibration} ({cal.method})")
        else:
            cal = _calibrate(args.video, first.image, profile)
            print(f"calibration: found the {profile.name} table automatically "
                  f"(landmark residual {cal.residuals.get('landmark_rms_mm', 'n/a')} mm)")
        calfile.save(cal, out / "calibration.json", source={"video": str(args.video), "t_s": first.t_s})
        detector = Detector(profile, cal)
        keeper = CalibrationKeeper(cal, profile, first.image)
        spots = np.array([p.xy_mm for p in profile.pins], dtype=np.float64) if profile.pins else None
        total = reader.frame_count
        if args.max_frames is not None:
            total = min(total, args.max_frames) if total else args.max_frames
        writer = None if args.no_video else VideoWriter(out / "detections.mp4", reader.fps or 30.0,
                                                        size=(first.image.shape[1], first.image.shape[0]))
        counts = {"frames": 0, "unreadable": 0, "balls": 0}
        spent = 0.0
        with open(out / "detections.csv", "w", newline="", encoding="utf-8") as fb, \
                open(out / "pins.csv", "w", newline="", encoding="utf-8") if profile.pins else _Null() as fp:
            balls_csv = csv.writer(fb)
            balls_csv.writerow(BALL_COLUMNS)
            pins_csv = csv.writer(fp) if profile.pins else None
            if pins_csv is not None:
                pins_csv.writerow(PIN_COLUMNS)
            bar = tqdm(total=total, unit="frame", desc="detect", dynamic_ncols=True)
            frame = first
            try:
                while frame is not None:
                    if args.max_frames is not None and counts["frames"] >= args.max_frames:
                        break
                    state = keeper.update(frame.image, frame.t_s) if counts["frames"] else None
                    if state is not None and state.status in ("followed", "recalibrated") and state.calibration is not None:
                        detector.recalibrate(state.calibration)
                    t0 = time.perf_counter()
                    dets = detector.detect(frame.image, frame.index, frame.t_s)
                    spent += time.perf_counter() - t0
                    readable = dets.valid and (state is None or state.valid)
                    counts["frames"] += 1
                    if not readable:
                        counts["unreadable"] += 1
                    else:
                        _write_rows(balls_csv, pins_csv, dets)
                        counts["balls"] += int(np.sum(dets.balls.state != BallState.OCCLUDED))
                    if writer is not None:
                        shown = dets if readable else type(dets)(dets.frame, dets.t_s, dets.balls[np.zeros(len(dets.balls), bool)], valid=False)
                        writer.write(draw_detections(frame.image, shown, detector.calibration, spots), frame.t_s)
                    bar.update(1)
                    if counts["frames"] % 30 == 0:
                        bar.set_postfix(balls=len(dets.balls), detect_ms=f"{1e3 * spent / counts['frames']:.1f}")
                        fb.flush()
                    frame = reader.read()
            finally:
                bar.close()
                if writer is not None:
                    writer.close()
    n = max(counts["frames"], 1)
    print(f"{counts['frames']} frames ({counts['unreadable']} unreadable), {counts['balls'] / n:.1f} balls seen per frame, "
          f"detector {1e3 * spent / n:.1f} ms per frame")
    print(f"-> {out / 'detections.csv'}" + (f", {out / 'pins.csv'}" if profile.pins else "")
          + ("" if writer is None else f", {out / 'detections.mp4'}"))
    return 0


def _calibrate(video: str, first: np.ndarray, profile) -> "object":
    """The automatic calibration: from the first frame, or, if that is refused (an arm over a
    cushion, a projection on the cloth) and the video is a file, from the steadiest of frames up to
    two seconds in."""
    try:
        return calibrate_image(first, profile)
    except CalibrationError as e:
        refused = e
    if Path(str(video)).is_file():
        frames, next_t = [first], 0.5
        with VideoReader(video) as reader:
            for f in reader:
                if f.t_s + 1e-6 >= next_t:
                    frames.append(np.ascontiguousarray(f.image))
                    next_t += 0.5
                if len(frames) >= 5:
                    break
        try:
            return calibrate_frames(frames, profile)
        except CalibrationError as e:
            refused = e
    raise CalibrationError(f"{video}: the {profile.name} table was not found automatically: {refused.reason}",
                           "check --table, or calibrate by hand: cueref calibrate VIDEO --table ... "
                           "--corners 'X,Y X,Y X,Y X,Y' --out CAL.json, then pass --calibration CAL.json")


def _write_rows(balls_csv, pins_csv, dets) -> None:
    b = dets.balls
    for i in range(len(b)):
        balls_csv.writerow((dets.frame, f"{dets.t_s:.6f}", _f(b.xy_mm[i, 0], 2), _f(b.xy_mm[i, 1], 2), _f(b.xy_px[i, 0], 2),
                            _f(b.xy_px[i, 1], 2), _f(b.radius_px[i], 2), b.label[i], f"{b.score[i]:.3f}",
                            BallState(int(b.state[i])).name.lower()))
    if pins_csv is not None:
        p = dets.pins
        for i, pid in enumerate(p.ids):
            pins_csv.writerow((dets.frame, f"{dets.t_s:.6f}", pid, _f(p.xy_mm[i, 0], 2), _f(p.xy_mm[i, 1], 2),
                               PinState(int(p.state[i])).name.lower(), f"{p.score[i]:.3f}"))


class _Null:
    """A stand-in for a file that is not written (a table without pins)."""

    def __enter__(self) -> "_Null":
        return self

    def __exit__(self, *exc: object) -> None:
        return None
