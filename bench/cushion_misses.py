"""Every missed, false and late cushion contact of a tracking-bench corpus, with what surrounded it.

Runs the clips of ``bench/tracking_bench.py`` (same corpus seeds, same detection model) and lists,
for each true cushion contact not found within two frame periods, each inferred one with no true
one, and each matched one more than a frame period off, the ball's speed and angle of approach,
how far it was from a pocket jaw and from the nearest other ball, how long after its last ball-ball
contact, and whether it touched another cushion within 0.2 s (a corner). A class column sums them up.

    python bench/cushion_misses.py --dev --fps 30 --shots 8 --staged-clips 1 --jobs 1
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.tracking_bench import DEV_SEED, MEASURE_SEED, jobs_for  # noqa: E402


def run(job: tuple) -> list[dict]:
    import cv2

    cv2.setNumThreads(1)
    from bench.corpora import generated, staged
    from bench.detection_model import DetectionModel, detections
    from bench.scoring import _id_map, _match, split_shots
    from tracking.events import BallBall, BallCushion
    from tracking.infer import EventInferer
    from tracking.tracker import BallTracker

    kind, what, seed, fps = job
    try:
        clip = generated(what, seed, fps) if kind == "generated" else staged(what, seed, fps)
    except Exception:  # noqa: BLE001 - a seed the simulator cannot play
        return []
    prof = clip.profile
    tracker, inferer = BallTracker(prof), EventInferer(prof)
    events = []
    for det in detections(clip, DetectionModel(), seed):
        events += inferer.step(tracker.update(det))
    events += inferer.finish()
    period = 1.0 / fps
    R = prof.ball_radius_mm
    jaws = np.array([p.xy_mm for p in getattr(prof, "pockets", ())] or [[np.inf, np.inf]], dtype=float)
    jaw_points = np.array([j for p in getattr(prof, "pockets", ()) for j in p.jaws_mm] or [[np.inf, np.inf]], dtype=float)
    out = []
    tshots, ishots = split_shots(clip.events), split_shots(events)
    for ts in tshots:
        cand = [s for s in ishots if abs(s[0].t_s - ts[0].t_s) <= 0.5]
        tc = [e for e in ts if isinstance(e, BallCushion)]
        if not cand:
            continue
        ish = min(cand, key=lambda s: abs(s[0].t_s - ts[0].t_s))
        idm = _id_map(prof, ts[0], ish[0])
        from bench.scoring import _rename

        ish = [_rename(e, idm) for e in ish]
        ic = [e for e in ish if isinstance(e, BallCushion)]
        mc = _match(tc, ic, lambda e: (e.ball, e.cushion), 2 * period + 1e-6)
        tbb = [e for e in ts if isinstance(e, BallBall)]

        def context(e, what):
            i = clip.ball_ids.index(e.ball) if e.ball in clip.ball_ids else None
            row = {"clip": clip.name, "fps": fps, "what": what, "ball": e.ball, "cushion": e.cushion, "t": round(e.t_s, 4)}
            if i is None:
                return row
            f = int(np.clip(np.searchsorted(clip.t_s, e.t_s), 2, clip.n_frames - 3))
            xy = clip.xy[:, i]
            v_in = (xy[f - 1] - xy[f - 2]) * fps
            v_out = (xy[f + 2] - xy[f + 1]) * fps
            row["speed_in"] = round(float(np.linalg.norm(v_in)), 0)
            row["speed_out"] = round(float(np.linalg.norm(v_out)), 0)
            axis = 0 if e.cushion in ("L", "R") else 1
            row["angle_deg"] = round(math.degrees(math.atan2(abs(v_in[axis]), abs(v_in[1 - axis]) + 1e-9)), 1)  # from along the cushion
            row["v_across_in"] = round(float(abs(v_in[axis])), 0)
            row["v_across_out"] = round(float(abs(v_out[axis])), 0)
            others = np.delete(clip.xy[f], i, axis=0)
            row["near_ball_mm"] = round(float(np.nanmin(np.linalg.norm(others - xy[f], axis=1)) - 2 * R), 0) if len(others) else None
            row["jaw_mm"] = round(float(np.min(np.linalg.norm(jaws - xy[f], axis=1))), 0)
            # the simulator logs a touch of a jaw point (the end of a cushion's nose at a pocket) as a
            # contact with the cushion that owns it, placed at that point
            row["jaw_touch"] = bool(np.min(np.linalg.norm(jaw_points - np.asarray(e.xy_mm), axis=1)) < 0.5)
            lastbb = [b.t_s for b in tbb if e.ball in (b.a, b.b) and b.t_s <= e.t_s + 1e-9]
            row["after_bb_s"] = round(e.t_s - lastbb[-1], 3) if lastbb else None
            row["corner"] = any(c.ball == e.ball and c.cushion != e.cushion and abs(c.t_s - e.t_s) < 0.2 for c in tc)
            row["hidden"] = round(float(clip.hidden[f, i]), 2)
            row["status"] = str(clip.status[f, i])
            near_inf = [(c.cushion, round(c.t_s - e.t_s, 3)) for c in ic if c.ball == e.ball and abs(c.t_s - e.t_s) < 0.3]
            row["inferred_near"] = near_inf
            return row

        out.append({"what": "count", "true": len(tc), "inferred": len(ic), "matched": len(mc),
                    "within": sum(1 for a, b in mc if abs(a.t_s - b.t_s) <= period + 1e-12)})
        for e in tc:
            pair = [b for a, b in mc if a is e]
            if not pair:
                out.append(context(e, "missed"))
            elif abs(pair[0].t_s - e.t_s) > period + 1e-12:
                r = context(e, "late")
                r["dt_ms"] = round(1000 * (pair[0].t_s - e.t_s), 1)
                out.append(r)
        ib = [e for e in ish if isinstance(e, BallBall)]
        for a, b in _match(tbb, ib, lambda e: frozenset((e.a, e.b)), 2 * period + 1e-6):
            if abs(a.t_s - b.t_s) > period + 1e-12:
                ia, iba = clip.ball_ids.index(a.a), clip.ball_ids.index(a.b)
                f = int(np.clip(np.searchsorted(clip.t_s, a.t_s), 1, clip.n_frames - 2))
                sp = [round(float(np.linalg.norm(clip.xy[f + 1, q] - clip.xy[f - 1, q]) * fps / 2), 0) for q in (ia, iba)]
                out.append({"clip": clip.name, "fps": fps, "what": "late ball-ball", "ball": f"{a.a}-{a.b}", "cushion": "",
                            "t": round(a.t_s, 4), "dt_ms": round(1000 * (b.t_s - a.t_s), 1), "speeds_after": sp,
                            "others_within_0.1s": sum(1 for o in tbb if o is not a and abs(o.t_s - a.t_s) < 0.1)})
        for e in ic:
            if not any(b is e for _, b in mc):
                r = context(e, "false")
                r["conf"] = e.confidence
                r["true_near"] = [(c.cushion, round(c.t_s - e.t_s, 3)) for c in tc if c.ball == e.ball and abs(c.t_s - e.t_s) < 0.3]
                out.append(r)
    return out


def classify(r: dict) -> str:
    if r["what"] == "late ball-ball":
        return "in a cluster (another contact within 0.1 s)" if r["others_within_0.1s"] else "alone"
    if r.get("speed_in") is None:
        return "unknown"
    if r["what"] == "false":
        return "false: near a true one of another cushion" if r.get("true_near") else "false"
    if r.get("status") not in ("T",):
        return f"status {r.get('status')}"
    if r["inferred_near"]:
        return "another cushion or time inferred"
    if r.get("jaw_touch"):
        return "a jaw point touched"
    if r["jaw_mm"] is not None and r["jaw_mm"] < 120:
        return "near a pocket"
    if r["corner"]:
        return "corner"
    if r["after_bb_s"] is not None and r["after_bb_s"] < 0.1:
        return "right after a ball contact"
    if r["near_ball_mm"] is not None and r["near_ball_mm"] < 10:
        return "in a cluster"
    if r["speed_in"] < 150:
        return "slow (< 150 mm/s)"
    if r["angle_deg"] < 15:
        return "shallow (< 15 deg)"
    return "other"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="ficha,brasileira,bar-billiards")
    ap.add_argument("--fps", default="30")
    ap.add_argument("--shots", type=int, default=8)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--dev", action="store_true")
    ap.add_argument("--staged-clips", type=int, default=1)
    ap.add_argument("--no-staged", dest="staged", action="store_false")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    args.games = [g for g in args.games.split(",") if g]
    args.fps = [float(f) for f in args.fps.split(",") if f]
    seed = args.seed if args.seed is not None else (DEV_SEED if args.dev else MEASURE_SEED)
    jobs = jobs_for(args, seed)
    print(f"corpus seed {seed}: {len(jobs)} clips")
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(run, jobs):
            rows += r
    tot = collections.Counter()
    for r in rows:
        if r["what"] == "count":
            tot.update({k: v for k, v in r.items() if k != "what"})
    rows = [r for r in rows if r["what"] != "count"]
    counts = collections.Counter()
    for r in rows:
        c = classify(r)
        counts[(r["what"], c)] += 1
        print(f"{r['what']:6s} [{c}] " + " ".join(f"{k}={v}" for k, v in r.items() if k != "what"))
    print()
    print(f"cushions: {tot['true']} true, {tot['inferred']} inferred, {tot['matched']} matched "
          f"(recall {100 * tot['matched'] / max(tot['true'], 1):.2f} %, precision {100 * tot['matched'] / max(tot['inferred'], 1):.2f} %), "
          f"{tot['within']} within a frame period ({100 * tot['within'] / max(tot['matched'], 1):.2f} % of those matched)")
    for (what, c), n in counts.most_common():
        print(f"{n:4d}  {what:6s} {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
