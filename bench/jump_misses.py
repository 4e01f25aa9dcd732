"""Every jump of a tracking-bench corpus, found or missed, with what the camera could see of it, and the
parallax reading of every shot (jump or not).

Runs the clips of ``bench/tracking_bench.py`` (same corpus seeds, same detection model, the camera's
place given to the inference as a calibration gives it) and lists, for each true jump, its height,
its time in the air, the most its parallax moves it (vision places a ball it reads on the cloth on the
plane of a resting ball's centre: one ``h`` up is seen further from the point under the camera by its
distance from it times ``h / (H - R - h)``), whether it left the table, and whether a jump of that ball
was inferred within 0.2 s. Then the flights :func:`tracking.infer.jump.parallax_jumps` tried (its debug
log): how much better a flight explains the struck ball's path than a path on the cloth (``gain``, noise
units squared), for the shots with a true jump and for the others, among the readings that also pass the
shift and fit tests: what ``flight_gain`` and ``flight_ask_gain`` separate.

    python bench/jump_misses.py --dev --fps 30 --shots 100 --staged-clips 3
    python bench/jump_misses.py --seed 11 --games ficha --fps 60
"""

from __future__ import annotations

import argparse
import logging
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.tracking_bench import DEV_SEED, MEASURE_SEED, jobs_for  # noqa: E402


class _Flights(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.rows: list[tuple] = []

    def emit(self, record: logging.LogRecord) -> None:
        if hasattr(record, "flight"):
            self.rows.append(record.flight)


def run(job: tuple) -> dict:
    import cv2

    cv2.setNumThreads(1)
    from bench.corpora import generated, staged
    from bench.detection_model import DetectionModel, camera_for, detections
    from tracking.infer import EventInferer
    from tracking.tracker import BallTracker

    kind, what, seed, fps = job
    try:
        clip = generated(what, seed, fps) if kind == "generated" else staged(what, seed, fps)
    except Exception:  # noqa: BLE001 - a seed the simulator cannot play
        return {"jumps": [], "flights": []}
    lg = logging.getLogger("tracking.infer.jump")
    lg.setLevel(logging.DEBUG)
    h = _Flights()
    lg.addHandler(h)
    cam = camera_for(clip, seed)
    tracker, inferer = BallTracker(clip.profile), EventInferer(clip.profile, camera_xyh_mm=cam)
    events = []
    for det in detections(clip, DetectionModel(), seed, cam):
        events += inferer.step(tracker.update(det))
    events += inferer.finish()
    lg.removeHandler(h)
    R = clip.profile.ball_radius_mm
    inferred = [e for e in events if e.kind == "jump"]
    true = [e for e in clip.events if e.kind == "jump"]
    jumps = []
    for e in true:
        i = clip.ball_ids.index(e.ball)
        k0, k1 = np.searchsorted(clip.t_s, [e.t_s, e.t_s + e.airborne_s])
        hs = clip.h[k0:k1 + 1, i]
        d = np.linalg.norm(clip.xy[k0:k1 + 1, i] - np.asarray(cam[:2]), axis=1)
        shift = d * hs / np.maximum(cam[2] - R - hs, 1.0)
        jumps.append({"clip": clip.name, "fps": fps, "t": round(e.t_s, 3), "ball": e.ball, "air_s": round(e.airborne_s, 3),
                      "h_mm": round(float(np.nanmax(hs)) if len(hs) else 0.0, 1),
                      "shift_mm": round(float(np.nanmax(shift)) if len(shift) else 0.0, 1),
                      "off_table": any(o.kind == "off_table" and o.ball == e.ball and 0 <= o.t_s - e.t_s <= e.airborne_s + 0.05
                                       for o in clip.events),
                      "found": any(x.ball == e.ball and abs(x.t_s - e.t_s) < 0.2 for x in inferred)})
    flights = []
    for ball, t0, T, gain, shift, fits in h.rows:
        jump = any(e.ball == ball and abs(e.t_s - t0) < 0.2 for e in true)
        flights.append({"clip": clip.name, "fps": fps, "t": round(t0, 3), "T": round(T, 3), "gain": round(gain, 2),
                        "shift": round(shift, 1), "fits": fits, "jump": jump})
    return {"jumps": jumps, "flights": flights}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="ficha,brasileira,bar-billiards")
    ap.add_argument("--fps", default="30")
    ap.add_argument("--shots", type=int, default=100)
    ap.add_argument("--staged-clips", type=int, default=3)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--dev", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    args.games = [g.strip() for g in args.games.split(",") if g.strip()]
    args.fps = [float(f) for f in args.fps.split(",")]
    args.staged = True
    seed = args.seed if args.seed is not None else (DEV_SEED if args.dev else MEASURE_SEED)
    jobs = jobs_for(args, seed)
    print(f"corpus seed {seed}: {len(jobs)} clips")
    with ProcessPoolExecutor(args.jobs) as ex:
        res = list(ex.map(run, jobs))
    jumps = [j for r in res for j in r["jumps"]]
    flights = [f for r in res for f in r["flights"]]
    print(f"\n{len(jumps)} true jumps, {sum(j['found'] for j in jumps)} found")
    for lo, hi in ((0, 15), (15, 30), (30, 60), (60, 1e9)):
        sel = [j for j in jumps if lo <= j["h_mm"] < hi]
        if sel:
            print(f"  {lo:3.0f}-{hi if hi < 1e9 else 'up':>3} mm high: {sum(j['found'] for j in sel):2d} of {len(sel):2d} found, "
                  f"parallax median {np.median([j['shift_mm'] for j in sel]):5.1f} mm, off the table {sum(j['off_table'] for j in sel)} "
                  f"({sum(j['off_table'] and j['found'] for j in sel)} of them found)")
    for j in jumps:
        print(f"    {'found ' if j['found'] else 'MISSED'} {j['clip']} @ {j['fps']:.0f} fps {j['t']:8.3f} s: {j['h_mm']:5.1f} mm high, "
              f"{j['air_s']:.3f} s, parallax up to {j['shift_mm']:5.1f} mm{', off the table' if j['off_table'] else ''}")
    ok = [f for f in flights if f["fits"] and f["shift"] >= 4.0]
    print(f"\n{len(flights)} shots' flights read off the parallax ({sum(f['jump'] for f in flights)} with a true jump); "
          f"passing the shift and fit tests: {len(ok)}")
    nj = [f["gain"] for f in ok if not f["jump"]]
    print(f"  without a jump: {len(nj)}, largest gain {max(nj):.2f}" if nj else "  without a jump: none")
    print(f"  with a jump: gains {sorted((f['gain'] for f in ok if f['jump']), reverse=True)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
