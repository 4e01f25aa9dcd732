"""Camera height and ball-height parallax of the automatic calibration, against the true camera.

For every rendered clip in the given folders (``NAME.mp4`` with its ``NAME.truth.json``), the first
frame is calibrated automatically with the table's profile only and compared with the clip's true
camera:

* height: the camera height the calibration estimates against the true one (and the focal lengths);
* px@ball: points one ball radius above the cloth on a 9 x 5 grid over the playing surface, placed
  in the image by the calibration (``to_image_px(h_mm=r)``) against the true camera's projection:
  RMS and worst (px);
* mm balls: the balls on the table in the first frame, their true image centres mapped to the table
  by the calibration (``balls_to_table_mm``) against their true positions: RMS and worst (mm).

Usage: ``python bench/parallax_bench.py DIR [DIR ...] [--json out.json]`` (e.g. the vision
benchmark's rendered corpus, ``out/vision-bench/corpus``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def measure(video: Path) -> dict:
    import av

    from bench.simcal import true_calibration
    from calibration.calibrate import calibrate_image
    from calibration.homography import CalibrationError
    from calibration.table import resolve_profile
    from simulator.groundtruth import read_truth
    from simulator.scene import BallStatus

    truth = read_truth(video.with_name(video.stem + ".truth.json"))
    profile = resolve_profile(truth.raw["profile"])
    camera = truth.camera_at(0)
    with av.open(str(video)) as container:
        image = next(container.decode(video=0)).to_ndarray(format="bgr24")
    out = {"clip": video.stem, "profile": profile.name, "true_height_mm": round(camera.height_mm, 1),
           "true_focal_per_width": round(camera.fx / camera.width, 3)}
    try:
        cal = calibrate_image(image, profile)
    except CalibrationError as e:
        return {**out, "ok": False, "error": str(e)}
    r = profile.ball_radius_mm
    gx, gy = np.meshgrid(np.linspace(0, profile.length_mm, 9), np.linspace(0, profile.width_mm, 5))
    grid = np.c_[gx.ravel(), gy.ravel()]
    px_err = np.linalg.norm(cal.to_image_px(grid, h_mm=r) - camera.project(np.c_[grid, np.full(len(grid), r)]), axis=1)
    on = [b for b in truth.xy_mm if truth.status[b][0] == BallStatus.ON_TABLE and truth.h_mm[b][0] == 0.0]
    ball_px = np.array([truth.px[b][0] for b in on])
    ball_mm = np.array([truth.xy_mm[b][0] for b in on])
    mm_err = np.linalg.norm(cal.balls_to_table_mm(ball_px) - ball_mm, axis=1) if on else np.zeros(0)
    true_cal = true_calibration(camera, profile)
    ref_err = np.linalg.norm(true_cal.balls_to_table_mm(ball_px) - ball_mm, axis=1) if on else np.zeros(0)
    return {**out, "ok": True, "height_mm": round(cal.camera_height_mm, 1),
            "focal_per_width": round(float(cal.camera_matrix[0, 0]) / camera.width, 3),
            "focal_source": cal.residuals.get("focal_source"),
            "px_rms": float(np.sqrt(np.mean(px_err ** 2))), "px_max": float(px_err.max()),
            "balls": len(on), "mm_rms": float(np.sqrt(np.mean(mm_err ** 2))) if on else None,
            "mm_max": float(mm_err.max()) if on else None,
            "mm_rms_true_cal": float(np.sqrt(np.mean(ref_err ** 2))) if on else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="folders of rendered clips with their truth files")
    ap.add_argument("--json", type=Path, help="write the per-clip figures here")
    args = ap.parse_args(argv)
    videos = sorted(v for d in args.dirs for v in d.glob("*.mp4") if v.with_name(v.stem + ".truth.json").exists())
    if not videos:
        print(f"no clips with truth files in {', '.join(map(str, args.dirs))}", file=sys.stderr)
        return 2
    rows = []
    print(f"{'clip':28s} {'profile':16s} {'height true/est mm':>19s} {'f/w true/est':>13s} {'source':>10s} "
          f"{'px@ball rms/max':>16s} {'mm balls rms/max (true cal)':>28s}")
    for v in videos:
        row = measure(v)
        rows.append(row)
        name = f"{v.parent.name}/{v.stem}"
        if not row["ok"]:
            print(f"{name:28s} {row['profile']:16s} refused: {row['error']}")
            continue
        mm = f"{row['mm_rms']:.1f}/{row['mm_max']:.1f} ({row['mm_rms_true_cal']:.1f})" if row["balls"] else "-"
        print(f"{name:28s} {row['profile'][:16]:16s} {row['true_height_mm']:8.0f}/{row['height_mm']:<8.0f}  "
              f"{row['true_focal_per_width']:.2f}/{row['focal_per_width']:<5.2f} {row['focal_source']:>12s} "
              f"{row['px_rms']:7.2f}/{row['px_max']:<6.2f} {mm:>24s}")
    ok = [r for r in rows if r["ok"]]
    by_game: dict[str, list[dict]] = {}
    for r in ok:
        by_game.setdefault(r["profile"].split(",")[0], []).append(r)
    print("\nper table (RMS over clips):")
    for game, rs in by_game.items():
        px = np.sqrt(np.mean([r["px_rms"] ** 2 for r in rs]))
        balls = [r for r in rs if r["balls"]]
        mm = np.sqrt(sum(r["mm_rms"] ** 2 * r["balls"] for r in balls) / sum(r["balls"] for r in balls)) if balls else float("nan")
        hgt = np.mean([abs(r["height_mm"] / r["true_height_mm"] - 1) for r in rs])
        print(f"  {game:20s} clips {len(rs):2d}  height error {100 * hgt:5.1f}% (mean |est/true - 1|)  "
              f"px@ball {px:5.2f} px RMS  balls {mm:5.2f} mm RMS")
    print(f"refused: {len(rows) - len(ok)} of {len(rows)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
