"""The detector against the hand labels of the real clips (``tests/data/realdata_labels.json``, made by
another engineer without the detector: ``tests/data/README-realdata-labels.md``).

Each clip is run from its first frame to its last labelled one, every frame in order, as the
pipeline would run it; the labelled frames are scored:

* a labelled ball is **found** when a detection (not one merely remembered under an occluder) lies
  within its tolerance (``tol_px``, at least 4 px, or 0.8 of its radius for a blurred ball) of it;
* a detection is **false** when no labelled ball is that near (the labels list every ball a person
  can see); false detections on the labelled not-balls (rail sights, pockets, projected circles,
  hands, heads) are counted by kind;
* the **centre error** (px) of each found sharp ball (on the cloth, not blurred);
* the **class** of each found ball whose colour is one of the game's classes.

Calibration, as a user would do it: billiard-ai-bfh and james-ecd-pool automatically from the clip
with the table's size (``1800x900``, ``1830x915``), the hand-held james-ecd-pool camera followed by
``calibration.monitor.CalibrationKeeper``; ipi-final-br, whose table is partly out of view (automatic
calibration refuses it), by hand from landmarks read off its first frames by eye (below; not from
the labels), on the ficha table (a 1.42 m Brazilian bar table, its visible half's shape fits).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests._realdata import REALDATA, REPOSITORY  # noqa: E402

LABELS = ROOT / "tests" / "data" / "realdata_labels.json"
TABLE = {"billiard-ai-bfh": "1800x900", "james-ecd-pool": "1830x915", "ipi-final-br": "ficha"}
# ipi-final-br: landmarks (px) read by eye off the clips' first frames; the camera moved before Pool2
IPI_POINTS = {
    "Pool0.avi": {"corner:TR": (260.0, 22.7), "corner:BR": (260.0, 225.0), "pocket:TM": (76.0, 15.0), "pocket:BM": (82.0, 230.0)},
    "Pool1.avi": {"corner:TR": (260.0, 22.7), "corner:BR": (260.0, 225.0), "pocket:TM": (76.0, 15.0), "pocket:BM": (82.0, 230.0)},
    "Pool2.avi": {"corner:BR": (259.0, 198.0), "pocket:BR": (262.0, 206.0), "pocket:TR": (267.0, 3.0), "pocket:BM": (72.0, 205.0)},
}
SEEN = (0, 2, 3)  # BallState VISIBLE, AIRBORNE, IN_POCKET: what a detector reports as seen


def labels() -> dict:
    return json.loads(LABELS.read_text(encoding="utf-8"))


def clips(sources: list[str] | None = None, only: set[str] | None = None) -> dict[tuple[str, str], list[dict]]:
    """The labelled frames of each clip present on this machine, by (source, clip)."""
    out: dict[tuple[str, str], list[dict]] = {}
    for f in labels()["frames"]:
        if sources is not None and f["source"] not in sources:
            continue
        if only is not None and f["clip"] not in only:
            continue
        out.setdefault((f["source"], f["clip"]), []).append(f)
    return out


def present(source: str) -> bool:
    return (REALDATA / source).is_dir()


def calibrate(source: str, clip: str, first_frames: list[np.ndarray], profile):
    from calibration.calibrate import calibrate_frames, calibrate_manual

    if source == "ipi-final-br":
        h, w = first_frames[0].shape[:2]
        return calibrate_manual(IPI_POINTS[clip], profile, (w, h))
    return calibrate_frames(first_frames, profile)


def detected(source: str, clip: str, images: list, profile):
    """The detector's results on ``images`` ((index, t_s, image) of ``clip``, from its start), in order:
    (index, t_s, image, detections, detector). The clip is calibrated as a user would (see
    :func:`calibrate`); the hand-held james-ecd-pool camera is followed by the calibration keeper."""
    from calibration.monitor import CalibrationKeeper
    from vision import Detector

    cal = calibrate(source, clip, [im for _, _, im in images[::15][:5]], profile)  # frames half a second apart
    det = Detector(profile, cal)
    keeper = CalibrationKeeper(cal, profile, images[0][2]) if source == "james-ecd-pool" else None
    for k, (index, t_s, image) in enumerate(images):
        if keeper is not None and k:
            state = keeper.update(image, t_s)
            if state.status in ("followed", "recalibrated") and state.calibration is not None:
                det.recalibrate(state.calibration)
        yield index, t_s, image, det.detect(image, index, t_s), det


def score_clip(source: str, clip: str, frames: list[dict]) -> dict:
    """Run the detector over one clip and score its labelled frames (see the module docstring)."""
    import cv2

    cv2.setNumThreads(1)
    from calibration.table import resolve_profile
    from cueref.video import VideoReader

    profile = resolve_profile(TABLE[source])
    wanted = {round(f["t_s"], 3): f for f in frames}
    last_t = max(wanted) + 0.01
    out = {"source": source, "clip": clip, "balls": 0, "found": 0, "detections": 0, "false": 0, "false_on": Counter(),
           "err_px": [], "class_n": 0, "class_ok": 0, "frames": 0, "misses": [], "false_at": []}
    with VideoReader(str(REALDATA / source / clip)) as reader:
        images = []
        for f in reader:
            images.append((f.index, f.t_s, np.ascontiguousarray(f.image)))
            if f.t_s > last_t:
                break
    for index, t_s, image, d, det in detected(source, clip, images, profile):
        label = next((wanted[t] for t in wanted if abs(t - t_s) < 0.006), None)
        if label is None:
            continue
        out["frames"] += 1
        b = d.balls
        seen = np.isin(b.state, SEEN) if d.valid else np.zeros(len(b), bool)
        dp = b.xy_px[seen]
        dl = b.label[seen]
        used = set()
        for ball in label["balls"]:
            out["balls"] += 1
            p = np.array([ball["x_px"], ball["y_px"]])
            tol = max(float(ball.get("tol_px", 0.0)), 4.0)
            if ball["state"] == "blurred":
                tol = max(tol, 0.8 * float(ball["r_px"]))
            dist = np.linalg.norm(dp - p, axis=1) if len(dp) else np.zeros(0)
            order = [j for j in np.argsort(dist) if j not in used and dist[j] <= tol]
            if not order:
                out["misses"].append([clip, label["frame"], ball["class"], ball["state"]])
                continue
            j = order[0]
            used.add(j)
            out["found"] += 1
            if ball["state"] in ("on_table", "in_pocket"):
                out["err_px"].append(float(dist[j]))
            if ball["class"] in det.classes:
                out["class_n"] += 1
                out["class_ok"] += int(dl[j] == ball["class"])
        out["detections"] += len(dp)
        for j in set(range(len(dp))) - used:
            out["false"] += 1
            near = [n["what"] for n in label.get("not_balls", []) if np.hypot(n["x_px"] - dp[j][0], n["y_px"] - dp[j][1]) < 25]
            out["false_on"][near[0] if near else "cloth"] += 1
            out["false_at"].append([clip, label["frame"], [round(float(v), 1) for v in dp[j]]])
    return out


def summarise(results: list[dict]) -> dict[str, dict]:
    """Totals per source and over all: recall, precision, centre error, class accuracy."""
    out = {}
    for name in sorted({r["source"] for r in results}) + ["all"]:
        rs = [r for r in results if name in ("all", r["source"])]
        err = np.array([e for r in rs for e in r["err_px"]])
        s = {k: sum(r[k] for r in rs) for k in ("frames", "balls", "found", "detections", "false", "class_n", "class_ok")}
        s["recall"] = s["found"] / max(s["balls"], 1)
        s["precision"] = 1 - s["false"] / max(s["detections"], 1)
        s["err_median_px"] = float(np.median(err)) if len(err) else float("nan")
        s["err_rms_px"] = float(np.sqrt(np.mean(err**2))) if len(err) else float("nan")
        s["err_p90_px"] = float(np.percentile(err, 90)) if len(err) else float("nan")
        s["class_acc"] = s["class_ok"] / max(s["class_n"], 1)
        s["false_on"] = dict(sum((r["false_on"] for r in rs), Counter()))
        out[name] = s
    return out


def report(summary: dict[str, dict]) -> None:
    print(f"{'real footage':16s} {'frames':>6s} {'balls':>6s} {'recall':>8s} {'precision':>9s} {'err med':>8s} {'err RMS':>8s} "
          f"{'err p90':>8s} {'class':>7s}  false detections on")
    for name, s in summary.items():
        print(f"{name:16s} {s['frames']:6d} {s['balls']:6d} {s['recall']:8.2%} {s['precision']:9.2%} {s['err_median_px']:6.2f}px "
              f"{s['err_rms_px']:6.2f}px {s['err_p90_px']:6.2f}px {s['class_acc']:7.2%}  "
              + ", ".join(f"{k} {v}" for k, v in sorted(s["false_on"].items())))


FIGURES = (  # (source, clip, frame, what it shows)
    ("billiard-ai-bfh", "simulation_vs_reality_2_0153_0200.mp4", 30, "projected lines and rings, an arm and a cue"),
    ("billiard-ai-bfh", "video_12_0130_0140_Trim.mp4", 45, "a red in the pocket's mouth, a hand"),
    ("james-ecd-pool", "video-1531832402.mp4", 1, "the rack: sixteen touching balls, a hand-held camera"),
    ("james-ecd-pool", "video-1531832402.mp4", 60, "after the break"),
    ("ipi-final-br", "Pool0.avi", 12, "320x240, net pockets, half the table out of view"),
)


def figures(out_dir: Path) -> list[Path]:
    """Annotated frames of each real source (``docs/images/vision-*.png``)."""
    import cv2

    from calibration.table import resolve_profile
    from cueref.video import VideoReader
    from vision.draw import draw_detections

    written = []
    for source, clip, frame, _ in FIGURES:
        if not present(source):
            continue
        profile = resolve_profile(TABLE[source])
        with VideoReader(str(REALDATA / source / clip)) as reader:
            images = [(f.index, f.t_s, np.ascontiguousarray(f.image)) for f, _ in zip(reader, range(frame + 1))]
        for _, _, _, d, det in detected(source, clip, images, profile):
            pass
        drawn = draw_detections(images[-1][2], d, det.calibration)
        if drawn.shape[1] < 640:
            drawn = cv2.resize(drawn, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)
        elif drawn.shape[1] > 960:  # a few hundred KB for the docs
            drawn = cv2.resize(drawn, (960, round(drawn.shape[0] * 960 / drawn.shape[1])), interpolation=cv2.INTER_AREA)
        path = out_dir / f"vision-{source}-{Path(clip).stem}-{frame}.png"
        cv2.imwrite(str(path), drawn, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        written.append(path)
    return written


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="Score the detector on the hand-labelled real clips (or draw figures).")
    ap.add_argument("--figures", type=Path, help="write annotated frames of each source into this folder instead")
    args = ap.parse_args()
    if args.figures:
        args.figures.mkdir(parents=True, exist_ok=True)
        for p in figures(args.figures):
            print(p)
    else:
        found = [(s, c, fr) for (s, c), fr in clips().items() if present(s)]
        if not found:
            print(f"no real clips in {REALDATA} (set CUEREF_REALDATA)")
        results = []
        for source, clip, frames in found:
            try:
                results.append(score_clip(source, clip, frames))
            except Exception as e:  # noqa: BLE001 - a clip that cannot be calibrated is reported, not fatal
                print(f"{source}/{clip}: not scored: {e}")
        if results:
            report(summarise(results))
