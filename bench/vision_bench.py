"""Vision benchmark (the "done when" figures of the vision stage).

Renders corpora with the simulator (cached under ``--cache``, default ``out/vision-bench/``, one folder per seed), runs the
detector on every frame and scores it against the exact ground truth:

* **recall / precision per frame**: a visible ball (on the cloth or in the air, at most half hidden
  by an occluder) is found when a detection (visible or airborne) lies within 0.8 of its picture
  radius of it; a detection is right when it lies that near any ball drawn (held in a hand too);
* **position** RMS (mm, on the table) of balls at rest, with the true calibration and with the
  automatic one (``calibration.calibrate.calibrate_image`` on the clip's first frame, scored on the
  frames before any camera bump); of balls faster than 2 m/s;
* **colour class** accuracy of found balls (an uncertain label counts as wrong), on the corpus and on
  a close-colour corpus (Sinuca de Ficha with orange against yellow);
* **pin state** accuracy (bar billiards: standing or down; "moved" as standing);
* **airborne** balls: share of frames of a ball more than ``airborne_mm`` up that are reported
  airborne, and resting balls reported airborne;
* **speed**: on each 1080p clip, decoding (``cueref.video.VideoReader``, as the pipeline reads) and
  detecting, frame by frame in one loop, one OpenCV thread: the medians and their ratio.

The corpora are whole frames played by the simulator's automatic player (``simulator.samples.
corpus_specs``: random camera mount, one clip in five in low light, one in five with a camera bump)
at 720p and 1080p, with the cue, arms and hands, motion blur, noise and lamp flicker. Their seeds come
from ``--seed`` and are printed. The detector was developed on the committed sample videos and on
corpus seed 7 and seed 2024 (the default until 2026-11-27: frames of its Sinuca Brasileira clips were
looked at to find the pocket-mouth false balls); 3141, the default after it, was looked at that day
too (a calibration and one ball's edges). The default seed here, 5077, was not looked at while developing.

Usage: ``python bench/vision_bench.py [--seed 5077] [--per-game 2] [--shots 3] [--workers 1]
[--json out.json]``. A full run renders about 8000 frames (tens of minutes on 2 cores, once) and
scores them (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GAMES = ("ficha", "brasileira", "bar-billiards")
CLOSE = "1420x810,ball=52,corner=95,middle=105,groups=orange+yellow,name=ficha-orange"
FAST_MM_S = 2000.0
REST_MM_S = 1.0


# ---- corpora ---------------------------------------------------------------------------------------
def corpus(seed: int, per_game: int, shots: int) -> list:
    """The clips: ``per_game`` 720p clips and one 1080p clip per game, and a close-colour set."""
    from simulator.samples import corpus_specs

    specs = []
    for k, game in enumerate(GAMES):
        specs += corpus_specs([game], per_game, seed + 10 * k, (1280, 720), 30.0, shots)
        specs += [replace(s, name=s.name + "-1080") for s in corpus_specs([game], 1, seed + 10 * k + 5, (1920, 1080), 30.0, shots)]
    close = corpus_specs(["ficha"], per_game, seed + 100, (1280, 720), 30.0, shots)
    specs += [replace(s, name=s.name.replace("ficha", "close"), profile=CLOSE) for s in close]
    return specs


def fast_scripts(seed: int, per_game: int) -> list[tuple[str, dict, int]]:
    """Power shots (3.5-5 m/s) for the fast-ball figure: the automatic player rarely plays a ball
    above 2 m/s. ``(name, script, seed)``, one shot per clip: Sinuca de Ficha and Sinuca Brasileira
    from their opening layouts at a ball picked at random, bar billiards breaks from the D."""
    rng = np.random.default_rng([seed, 3])
    targets = {"ficha": [f"r{i}" for i in range(1, 5)] + [f"y{i}" for i in range(1, 5)],
               "brasileira": ["red", "yellow", "green", "brown", "blue", "pink", "black"]}
    out = []
    for k in range(per_game):
        for game in GAMES:
            s = int(rng.integers(0, 2**31 - 1))
            if game == "bar-billiards":
                steps = [{"place": {"ball": "red", "xy_mm": [800.0, 450.0]}},
                         {"shot": {"ball": "w1", "place_xy_mm": [450.0, 450.0 + float(rng.uniform(-60, 60))], "at": "red",
                                   "offset_deg": float(rng.uniform(-6, 6)), "speed_mm_s": float(rng.uniform(3500, 4500))}}]
            else:
                steps = [{"shot": {"ball": "cue", "at": str(rng.choice(targets[game])), "offset_deg": float(rng.uniform(-10, 10)),
                                   "speed_mm_s": float(rng.uniform(3500, 5000))}}]
            out.append((f"fast/{game}-{k:04d}", {"game": game, "players": ["A", "B"], "seed": s, "frames": [{"steps": steps}]}, s))
    return out


def render(job: tuple) -> str:
    spec, cache = job
    import cv2

    cv2.setNumThreads(1)
    if isinstance(spec, tuple):  # a power-shot script
        name, script, seed = spec
        path = Path(cache) / f"{name}.mp4"
        if not path.with_name(path.stem + ".truth.json").exists():
            from calibration.table import resolve_profile
            from simulator.camera import mount_camera
            from simulator.clip import make_clip
            from simulator.script import parse_script, run_script

            parsed = parse_script(script, name)
            profile = resolve_profile(parsed.profile or script["game"])
            path.parent.mkdir(parents=True, exist_ok=True)
            camera = mount_camera(profile, resolution=(1280, 720), rng=np.random.default_rng([seed, 11]))
            make_clip(run_script(parsed, profile, seed), profile, camera, path, fps=30, seed=seed)
        return str(path)
    from simulator.samples import build_sample

    path = Path(cache) / f"{spec.name}.mp4"
    if not path.with_name(path.stem + ".truth.json").exists():
        build_sample(spec, cache)
    return str(path)


# ---- scoring one clip ------------------------------------------------------------------------------
def score_clip(job: tuple) -> dict:
    """Run the detector over one clip with the true calibration (and, on its first frames, with the
    automatic one) and return the counts and errors."""
    path, auto_frames = job
    import cv2

    cv2.setNumThreads(1)
    from scipy.optimize import linear_sum_assignment

    from bench.simcal import true_calibration
    from calibration.calibrate import calibrate_image
    from calibration.homography import CalibrationError
    from calibration.table import resolve_profile
    from cueref.video import VideoReader
    from simulator.groundtruth import read_truth
    from simulator.scene import BallStatus
    from vision import BallState, Detector, PinState
    from vision.pins import MOVED_MM

    truth = read_truth(Path(path).with_name(Path(path).stem + ".truth.json"))
    profile = resolve_profile(truth.raw["profile"])
    colour = {b.id: b.colour for b in profile.balls}
    cfg_air = Detector(profile, true_calibration(truth.camera_at(0), profile)).cfg.airborne_mm
    ids = list(truth.xy_mm)
    n = truth.n_frames
    t = truth.t_s
    speed = {}
    for b in ids:
        xy = truth.xy_mm[b]
        a, c = np.r_[0, np.arange(n - 1)], np.r_[np.arange(1, n), n - 1]
        with np.errstate(invalid="ignore"):
            v = np.linalg.norm(xy[c] - xy[a], axis=1) / np.maximum(t[c] - t[a], 1e-9)
        speed[b] = np.nan_to_num(v, nan=0.0)
    drawn = (BallStatus.ON_TABLE, BallStatus.AIRBORNE, BallStatus.IN_HAND)
    out = {"clip": f"{Path(path).parent.name}/{Path(path).stem}", "profile": profile.name, "frames": n, "visible": 0, "found": 0, "detections": 0,
           "false": 0, "rest_err": [], "fast_err": [], "class_ok": 0, "class_unsure": 0, "class_n": 0,
           "air_true": 0, "air_found": 0, "air_false": 0, "rest_n": 0, "air_h_err": [], "occ_true": 0, "occ_found": 0,
           "pin_ok": 0, "pin_n": 0, "invalid": 0, "auto_rest_err": [], "auto_failed": False, "misses": [], "false_at": []}

    def run(cal_of_frame, frames_max: int, record: bool, errors_key: str) -> None:
        cam_index = 0
        det = Detector(profile, cal_of_frame(0))
        with VideoReader(path) as reader:
            for f in reader:
                k = f.index
                if k >= frames_max:
                    break
                ci = sum(1 for c in truth.raw["cameras"] if c["from_frame"] <= k) - 1
                if ci != cam_index:
                    if not record:
                        break  # the automatic run stops at a bump
                    cam_index = ci
                    det.recalibrate(cal_of_frame(k))
                d = det.detect(f.image, k, f.t_s)
                _score_frame(d, k, record, errors_key)

    def _score_frame(d, k: int, record: bool, errors_key: str) -> None:
        b = d.balls
        if not d.valid:
            out["invalid"] += int(record)
            return
        seen = (b.state == BallState.VISIBLE) | (b.state == BallState.AIRBORNE)
        tp, tid, tvis, tocc = [], [], [], []
        for i in ids:
            st = truth.status[i][k]
            if st in drawn:
                tp.append(truth.px[i][k])
                tid.append(i)
                on = st != BallStatus.IN_HAND
                tvis.append(on and truth.hidden[i][k] < 0.5)
                tocc.append(on and truth.hidden[i][k] >= 0.5)
        tp = np.array(tp).reshape(-1, 2)
        tvis = np.array(tvis, bool)
        radius = det_radius(tp)
        dp = b.xy_px[seen]
        dist = np.linalg.norm(tp[:, None] - dp[None], axis=2) if len(tp) and len(dp) else np.zeros((len(tp), len(dp)))
        pairs = {}
        if dist.size:
            rows, cols = linear_sum_assignment(dist)
            pairs = {r: c for r, c in zip(rows, cols) if dist[r, c] <= 0.8 * radius[r]}
        sel = np.nonzero(seen)[0]
        for r in range(len(tp)):
            i = tid[r]
            c = pairs.get(r)
            if tvis[r] and record:
                out["visible"] += 1
                out["found"] += c is not None
                if c is None and len(out["misses"]) < 40:
                    out["misses"].append([k, i])
            if c is None or not tvis[r]:
                continue
            j = sel[c]
            v = speed[i][k]
            h = truth.h_mm[i][k]
            err = float(np.linalg.norm(b.xy_mm[j] - truth.xy_mm[i][k]))
            if v <= REST_MM_S and h == 0:
                out[errors_key].append(err)
            if not record:
                continue
            if v > FAST_MM_S:
                out["fast_err"].append(err)
            out["class_n"] += 1
            out["class_ok"] += b.label[j] == colour[i]
            out["class_unsure"] += b.label[j] == ""
            if h > cfg_air:
                out["air_true"] += 1
                out["air_found"] += int(b.state[j] == BallState.AIRBORNE)
                if b.state[j] == BallState.AIRBORNE:
                    out["air_h_err"].append(float(b.height_mm[j] - h))
            elif h == 0:
                out["rest_n"] += 1
                out["air_false"] += int(b.state[j] == BallState.AIRBORNE)
        if not record:
            return
        out["detections"] += len(dp)
        matched = set(pairs.values())
        for c in range(len(dp)):
            if c not in matched:
                out["false"] += 1
                if len(out["false_at"]) < 4000:
                    out["false_at"].append([k, [round(float(v), 1) for v in dp[c]]])
        # occluded balls reported as such, near where they are
        occ = b.xy_px[b.state == BallState.OCCLUDED]
        for r in np.nonzero(np.array(tocc, bool))[0]:
            out["occ_true"] += 1
            if len(occ) and np.linalg.norm(occ - tp[r], axis=1).min() <= radius[r]:
                out["occ_found"] += 1
        # pins
        for pi, pid in enumerate(d.pins.ids):
            up = truth.pins_standing[pid][k]
            if up is None:
                continue
            got = PinState(int(d.pins.state[pi]))
            moved = False
            if up:
                spot = np.asarray(profile.pin(pid).xy_mm)
                p = truth.raw["pins"][[q["id"] for q in truth.raw["pins"]].index(pid)]
                xy = np.array([p["x_mm"][k], p["y_mm"][k]], dtype=float)
                moved = bool(np.linalg.norm(xy - spot) > MOVED_MM)
            want = PinState.DOWN if not up else (PinState.MOVED if moved else PinState.STANDING)
            out["pin_n"] += 1
            out["pin_ok"] += int(got == want)

    cals = {}

    def true_cal(k: int):
        cam = truth.camera_at(k)
        key = json.dumps(cam.to_dict(), sort_keys=True)
        if key not in cals:
            cals[key] = true_calibration(cam, profile)
        return cals[key]

    from vision.geometry import TableView

    views = {}

    def det_radius(px: np.ndarray) -> np.ndarray:
        cal = true_cal(0)
        if "v" not in views:
            views["v"] = TableView(cal, profile)
        return views["v"].radius_at_px(px) if len(px) else np.zeros(0)

    run(true_cal, n, True, "rest_err")
    with VideoReader(path) as reader:
        first = reader.read().image
    try:
        auto = calibrate_image(first, profile)
    except CalibrationError:
        out["auto_failed"] = True
    else:
        run(lambda k: auto, auto_frames, False, "auto_rest_err")
    return out


# ---- speed -----------------------------------------------------------------------------------------
def time_clip(path: str, frames: int) -> dict:
    """Decode and detect one clip frame by frame in one loop (one OpenCV thread): per-frame times.

    A frame's decoding time is what producing its BGR picture costs: the reader, left to itself,
    converts the next frame's colours in a thread while the caller works (``_CONVERT_AHEAD``), and
    timed frame by frame that conversion, most of the decoder's cost at 1080p, would hide behind the
    detector's time. Here each frame is converted when it is asked for."""
    import cv2

    import cueref.video.decoder as decoder

    cv2.setNumThreads(1)
    ahead, decoder._CONVERT_AHEAD = decoder._CONVERT_AHEAD, 0
    from bench.simcal import true_calibration
    from calibration.table import resolve_profile
    from cueref.video import VideoReader
    from simulator.groundtruth import read_truth
    from vision import Detector

    truth = read_truth(Path(path).with_name(Path(path).stem + ".truth.json"))
    profile = resolve_profile(truth.raw["profile"])
    det = Detector(profile, true_calibration(truth.camera_at(0), profile))
    dec, dt = [], []
    try:
        with VideoReader(path) as reader:
            while len(dec) < frames:
                t0 = time.perf_counter()
                f = reader.read()
                t1 = time.perf_counter()
                if f is None:
                    break
                det.detect(f.image, f.index, f.t_s)
                dec.append(t1 - t0)
                dt.append(time.perf_counter() - t1)
    finally:
        decoder._CONVERT_AHEAD = ahead
    return {"clip": f"{Path(path).parent.name}/{Path(path).stem}", "decode_ms": [1e3 * x for x in dec[1:]], "detect_ms": [1e3 * x for x in dt[1:]]}


# ---- report ----------------------------------------------------------------------------------------
def rms(v: list) -> float:
    return float(np.sqrt(np.mean(np.square(v)))) if len(v) else float("nan")


def summarise(results: list[dict], timing: list[dict]) -> dict:
    def agg(rs: list[dict]) -> dict:
        s = {k: sum(r[k] for r in rs) for k in ("visible", "found", "detections", "false", "class_ok", "class_unsure", "class_n",
                                                "air_true", "air_found", "air_false", "rest_n", "occ_true", "occ_found",
                                                "pin_ok", "pin_n", "invalid", "frames")}
        for k in ("rest_err", "fast_err", "auto_rest_err", "air_h_err"):
            s[k] = [x for r in rs for x in r[k]]
        s["recall"] = s["found"] / max(s["visible"], 1)
        s["precision"] = 1 - s["false"] / max(s["detections"], 1)
        s["class_acc"] = s["class_ok"] / max(s["class_n"], 1)
        s["auto_failed"] = sum(r["auto_failed"] for r in rs)
        return s

    main = [r for r in results if "/close" not in r["clip"]]
    close = [r for r in results if "/close" in r["clip"]]
    per_game = {g: agg([r for r in main if r["clip"].split("/")[-1].startswith(g)]) for g in GAMES}
    total = agg(main)
    dec = np.concatenate([t["decode_ms"] for t in timing]) if timing else np.zeros(0)
    det = np.concatenate([t["detect_ms"] for t in timing]) if timing else np.zeros(0)
    return {"per_game": per_game, "total": total, "close": agg(close) if close else None,
            "decode_ms": float(np.median(dec)) if len(dec) else float("nan"),
            "detect_ms": float(np.median(det)) if len(det) else float("nan"),
            "detect_mean_ms": float(np.mean(det)) if len(det) else float("nan"),
            "detect_p90_ms": float(np.percentile(det, 90)) if len(det) else float("nan"),
            "per_clip_ms": [(t["clip"], float(np.median(t["decode_ms"])), float(np.median(t["detect_ms"])))
                            for t in timing if len(t["decode_ms"])]}


def report(s: dict, seeds: dict, elapsed_s: float) -> bool:
    print(f"vision benchmark ({elapsed_s:.0f} s); corpus seeds: {seeds}")
    hdr = f"{'corpus':14s} {'frames':>6s} {'visible':>8s} {'recall':>8s} {'precision':>9s} {'rest RMS':>9s} {'auto RMS':>9s} {'fast RMS':>9s} {'class':>7s} {'unsure':>7s} {'pins':>7s}"
    print(hdr)

    def line(name: str, a: dict) -> None:
        pins = f"{a['pin_ok'] / a['pin_n']:.2%}" if a["pin_n"] else "-"
        print(f"{name:14s} {a['frames']:6d} {a['visible']:8d} {a['recall']:8.2%} {a['precision']:9.2%} "
              f"{rms(a['rest_err']):7.3f}mm {rms(a['auto_rest_err']):7.3f}mm {rms(a['fast_err']):7.2f}mm "
              f"{a['class_acc']:7.2%} {a['class_unsure'] / max(a['class_n'], 1):7.2%} {pins:>7s}")

    for g, a in s["per_game"].items():
        line(g, a)
    t = s["total"]
    line("all", t)
    if s["close"]:
        line("close colours", s["close"])
    print(f"fast balls (> 2 m/s): {len(t['fast_err'])} ball-frames; at rest: {len(t['rest_err'])} (true calibration), "
          f"{len(t['auto_rest_err'])} (automatic; {t['auto_failed']} clip(s) not calibrated)")
    print(f"airborne: {t['air_found']} of {t['air_true']} ball-frames more than the threshold up reported airborne "
          f"(height error RMS {rms(t['air_h_err']):.1f} mm); {t['air_false']} of {t['rest_n']} resting ball-frames reported airborne")
    print(f"occluded: {t['occ_found']} of {t['occ_true']} ball-frames more than half hidden reported occluded where they are; "
          f"{t['invalid']} frames declared unreadable")
    print(f"speed (1080p, one thread, side by side): decode median {s['decode_ms']:.2f} ms/frame, detect median "
          f"{s['detect_ms']:.2f} ms/frame (mean {s['detect_mean_ms']:.2f}, 90th percentile {s['detect_p90_ms']:.2f}); "
          f"ratio detect/decode {s['detect_ms'] / s['decode_ms']:.2f}")
    for clip, d_ms, t_ms in s["per_clip_ms"]:
        print(f"  {clip}: decode median {d_ms:.2f} ms/frame, detect median {t_ms:.2f} ms/frame")
    close = s["close"]
    bars = [
        ("recall >= 99.5 %", t["recall"] >= 0.995),
        ("precision >= 99.5 %", t["precision"] >= 0.995),
        ("rest RMS <= 0.5 mm (true calibration)", rms(t["rest_err"]) <= 0.5),
        ("rest RMS <= 1.5 mm (automatic calibration)", rms(t["auto_rest_err"]) <= 1.5),
        ("fast RMS <= 5 mm", rms(t["fast_err"]) <= 5.0),
        ("class accuracy >= 99.5 %", t["class_acc"] >= 0.995),
        ("close-colour class accuracy >= 98 %", close is not None and close["class_acc"] >= 0.98),
        ("pin state accuracy >= 99 %", t["pin_n"] > 0 and t["pin_ok"] / t["pin_n"] >= 0.99),
        ("detect median <= decode median (1080p)", s["detect_ms"] <= s["decode_ms"]),
    ]
    for name, ok in bars:
        print(f"  {'MET    ' if ok else 'NOT MET'} {name}")
    return all(ok for _, ok in bars)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=5077, help="corpus seed (default 5077, not used while developing)")
    ap.add_argument("--per-game", type=int, default=2, help="720p clips per game and close-colour clips (default 2)")
    ap.add_argument("--shots", type=int, default=3, help="shots per clip (default 3)")
    ap.add_argument("--workers", type=int, default=1, help="processes for rendering and scoring (default 1)")
    ap.add_argument("--cache", type=Path, default=ROOT / "out" / "vision-bench", help="where rendered clips are kept")
    ap.add_argument("--auto-frames", type=int, default=90, help="frames per clip scored with the automatic calibration")
    ap.add_argument("--timing-frames", type=int, default=300, help="frames per 1080p clip timed (default 300)")
    ap.add_argument("--only", help="score only clips whose name contains this")
    ap.add_argument("--json", type=Path, help="also write every figure and per-clip result here")
    ap.add_argument("--render-only", action="store_true", help="only render the corpora into the cache")
    args = ap.parse_args()
    from tqdm import tqdm

    t0 = time.time()
    specs = corpus(args.seed, args.per_game, args.shots) + fast_scripts(args.seed, 3)
    name = (lambda s: s[0] if isinstance(s, tuple) else s.name)
    if args.only:
        specs = [s for s in specs if args.only in name(s)]
    seeds = {name(s): (s[2] if isinstance(s, tuple) else s.seed) for s in specs}
    cache = args.cache / f"seed-{args.seed}"  # clip names repeat from seed to seed: one folder per corpus seed
    cache.mkdir(parents=True, exist_ok=True)
    jobs = [(s, str(cache)) for s in specs]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        paths = list(tqdm(pool.map(render, jobs), total=len(jobs), desc="render", unit="clip"))
        if args.render_only:
            print(f"{len(paths)} clips in {cache}")
            return 0
        results = list(tqdm(pool.map(score_clip, [(p, args.auto_frames) for p in paths]), total=len(paths),
                            desc="score", unit="clip"))
    timing = [time_clip(p, args.timing_frames) for p in tqdm([p for p in paths if "1080" in p], desc="time", unit="clip")]
    s = summarise(results, timing)
    ok = report(s, seeds, time.time() - t0)
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "clips": results, "seeds": seeds}, default=float, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
