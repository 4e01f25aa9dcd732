"""``cueref calibrate``: find the image-to-table mapping from a video, an image or a camera and write
CAL.json (the file format is in docs/calibration.md).

Automatic by default; ``--corners`` / ``--point`` give landmarks by hand and ``--interactive`` opens a
window to click them. Every refusal is one line saying what was seen and what to do, and a non-zero
exit status.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import cv2
import numpy as np

from calibration import calfile
from calibration.calibrate import calibrate_frames, calibrate_manual, intrinsics_from_chessboard, landmarks_mm
from calibration.homography import CalibrationError
from calibration.overlay import draw_calibration
from calibration.interactive import pick_corners, require_display
from calibration.table import resolve_profile
from cueref.options import require_positive
from cueref.outputs import refuse_output_onto_inputs

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
_XY = r"\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a video file, an image, a stream URL or a camera index (0, 1 ...)")
    p.add_argument("--table", required=True, help="table profile: built-in name, .yaml file, or LENGTHxWIDTH spec (mm)")
    p.add_argument("--out", required=True, help="where to write CAL.json")
    p.add_argument("--frames", type=int, default=5, help="frames of a video to calibrate from (the steadiest wins; default 5)")
    p.add_argument("--at", type=float, default=0.0, metavar="T_S", help="start at this time in the video (seconds)")
    p.add_argument("--every", type=float, default=0.5, metavar="S", help="seconds between the frames used (default 0.5)")
    p.add_argument("--head", choices=("left", "right", "top", "bottom"),
                   help="where the head cushion is in the picture (default: left, or top for a portrait table)")
    p.add_argument("--corners", metavar="'X,Y X,Y X,Y X,Y'",
                   help="manual: the playing-surface corners TL TR BR BL in pixels (clockwise from the head end's top)")
    p.add_argument("--point", action="append", default=[], metavar="NAME=X,Y",
                   help="manual: a named landmark in pixels, e.g. pocket:TM=640,52 (repeat; see --list-landmarks)")
    p.add_argument("--interactive", action="store_true", help="click and drag the corners in a window")
    p.add_argument("--list-landmarks", action="store_true", help="print the landmark names of the profile and exit")
    p.add_argument("--focal-px", type=float, help="the lens's focal length in pixels, if known")
    p.add_argument("--camera-height-mm", type=float, help="height of the lens above the cloth, if measured (for parallax)")
    p.add_argument("--chessboard", metavar="VIDEO", help="estimate the lens from a chessboard video instead of the cushions")
    p.add_argument("--board", default="9x6", metavar="COLSxROWS", help="inner corners of the chessboard (default 9x6)")
    p.add_argument("--square-mm", type=float, default=25.0, help="chessboard square size in mm (default 25)")
    p.add_argument("--draw", metavar="PNG", help="also write the frame with the calibration drawn on it (.png or .jpg)")


def parse_corners(text: str) -> dict[str, tuple[float, float]]:
    """``"x,y x,y x,y x,y"`` (or separated by ``;``) -> the four corners TL TR BR BL."""
    pairs = re.findall(_XY, text)
    if len(pairs) != 4 or re.sub(_XY, "", text).strip(" ;") != "":
        raise CalibrationError(f"--corners {text!r} is not four 'x,y' pairs",
                               "give them as --corners '120,80 1160,82 1158,640 118,636' (TL TR BR BL)")
    return {c: (float(x), float(y)) for c, (x, y) in zip(("TL", "TR", "BR", "BL"), pairs)}


def parse_point(text: str) -> tuple[str, tuple[float, float]]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_:.-]+)\s*=" + _XY, text)
    if not m:
        raise CalibrationError(f"--point {text!r} is not NAME=X,Y", "for example --point pocket:TM=640,52")
    return m.group(1), (float(m.group(2)), float(m.group(3)))


def _read_frames(source: str, n: int, at_s: float, every_s: float) -> list[np.ndarray]:
    """Frames of the source: an image file gives itself; a video or camera gives ``n`` frames
    ``every_s`` apart from ``at_s``."""
    if Path(source).suffix.lower() in IMAGE_SUFFIXES:
        if not Path(source).exists():
            raise CalibrationError(f"image {source!r} does not exist")
        image = cv2.imread(source, cv2.IMREAD_COLOR)
        if image is None:
            raise CalibrationError(f"{source!r} is not a readable image")
        return [image]
    from cueref.video import VideoReader

    frames: list[np.ndarray] = []
    next_t = at_s
    with VideoReader(source) as reader:
        for frame in reader:
            if frame.t_s + 1e-6 < next_t:
                continue
            frames.append(np.ascontiguousarray(frame.image))
            next_t = frame.t_s + every_s
            if len(frames) >= n:
                break
    if not frames:
        raise CalibrationError(f"no frames read from {source!r} after {at_s:g} s", "check the source and --at")
    return frames


def parse_board(text: str) -> tuple[int, int]:
    """``"9x6"`` -> (9, 6): the chessboard's inner corners (OpenCV needs at least 3 each way)."""
    m = re.fullmatch(r"(\d+)[xX](\d+)", text.strip())
    if not m:
        raise CalibrationError(f"--board {text!r} is not COLSxROWS", "for example --board 9x6")
    cols, rows = int(m.group(1)), int(m.group(2))
    if cols < 3 or rows < 3:
        raise CalibrationError(f"--board {text} has too few inner corners",
                               "count the corners where four squares meet, at least 3 each way (a board of 10x7 squares is --board 9x6)")
    return cols, rows


def check_outputs(args: argparse.Namespace) -> None:
    """Before any work: the outputs can be written, and none of them is an input."""
    for flag, path in (("--out", args.out), ("--draw", args.draw)):
        if path is None:
            continue
        folder = Path(path).parent
        if not folder.is_dir():
            raise CalibrationError(f"{flag} {path}: the folder {folder} does not exist", "create it first, or write elsewhere")
        if Path(path).is_dir():
            raise CalibrationError(f"{flag} {path} is a folder", f"give a file name, e.g. {Path(path) / ('CAL.json' if flag == '--out' else 'drawn.png')}")
    if args.draw and not cv2.haveImageWriter(args.draw):
        raise CalibrationError(f"--draw {args.draw} is not an image file name", "end it in .png or .jpg")
    refuse_output_onto_inputs([("--out", args.out), ("--draw", args.draw)],
                              [("source", args.source), ("--chessboard video", args.chessboard)])
    if args.draw and Path(args.draw).resolve() == Path(args.out).resolve():
        raise CalibrationError(f"--draw and --out are the same file {args.out}", "give the drawing another name")


def run(args: argparse.Namespace) -> int:
    cv2.setNumThreads(1)
    profile = resolve_profile(args.table)
    if args.list_landmarks:
        for name, (x, y) in landmarks_mm(profile).items():
            print(f"{name:16s} ({x:8.1f}, {y:7.1f}) mm")
        return 0
    if args.frames < 1:
        raise CalibrationError(f"--frames {args.frames} must be at least 1")
    require_positive("--focal-px", args.focal_px, "pixels")
    require_positive("--camera-height-mm", args.camera_height_mm, "millimetres")
    require_positive("--square-mm", args.square_mm, "millimetres")
    require_positive("--every", args.every, "seconds")
    if not args.at >= 0:
        raise CalibrationError(f"--at {args.at:g} must be a time in seconds from the start of the video (0 or more)")
    check_outputs(args)
    board = parse_board(args.board) if args.chessboard else None
    if args.interactive:
        require_display()
    k = dist = None
    if board is not None:
        k, dist, rms = intrinsics_from_chessboard(_read_frames(args.chessboard, 200, 0.0, 0.2), board, args.square_mm)
        log.info("lens from the chessboard: f = %.1f px, k1 = %.4f, k2 = %.4f, rms %.3f px", k[0, 0], dist[0], dist[1], rms)
    frames = _read_frames(args.source, args.frames, args.at, args.every)
    image = frames[0]
    lens = dict(focal_px=args.focal_px, camera_height_mm=args.camera_height_mm, camera_matrix=k, dist_coeffs=dist)
    points = parse_corners(args.corners) if args.corners else {}
    points.update(dict(parse_point(p) for p in args.point))
    if args.interactive:
        points = pick_corners(image, profile, points or None)
    if points:
        cal = calibrate_manual(points, profile, (image.shape[1], image.shape[0]), **lens)
    else:
        cal = calibrate_frames(frames, profile, head=args.head, **lens)
    source_info = {"source": str(args.source), "table": args.table, "frames": len(frames)}
    out = calfile.save(cal, args.out, source_info)
    r = cal.residuals
    print(f"calibrated {args.source} ({cal.method}) -> {out}")
    print("  corners px: " + "  ".join(f"{c} ({x:.1f}, {y:.1f})" for c, (x, y) in zip(("TL", "TR", "BR", "BL"), cal.corners_px)))
    print(f"  camera {cal.camera_height_mm:.0f} mm above the cloth (focal {cal.camera_matrix[0, 0]:.0f} px, {r.get('focal_source')}); "
          f"k1 {cal.dist_coeffs[0]:.4f}, k2 {cal.dist_coeffs[1]:.4f}")
    if r.get("line_rms_px"):
        print("  cushion line scatter px: " + ", ".join(f"{s} {v:.2f}" for s, v in r["line_rms_px"].items()))
    if r.get("landmarks_mm"):
        print(f"  landmark residuals mm (rms {r.get('landmark_rms_mm')}): "
              + ", ".join(f"{n} {v:.1f}" for n, v in r["landmarks_mm"].items()))
    if args.draw:
        drawn = draw_calibration(image, cal, profile, r.get("landmarks_found_mm"))
        if not cv2.imwrite(args.draw, drawn):
            raise CalibrationError(f"could not write {args.draw!r}", "check that the folder can be written")
        print(f"  drawing -> {args.draw}")
    return 0
