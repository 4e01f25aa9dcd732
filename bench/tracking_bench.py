"""Tracking and event inference, measured against the simulator's exact ground truth.

Every clip is a match the simulator plays from a printed seed (no rendering); the frames vision would
hand over come from the documented detection model of ``bench/detection_model.py`` (noise, blur,
misses, occlusion, class confusion, false detections); the tracker and the event inference run on
them exactly as on video; the inferred log is scored against the true events (``bench/scoring.py``)
and replayed through the game's rules engine against the decisions the generator's engine made.

    python bench/tracking_bench.py                  # the measurement seeds: >= 200 shots per game at 30 and 60 fps
    python bench/tracking_bench.py --dev            # the development seeds (what the code was tuned on)
    python bench/tracking_bench.py --games ficha --fps 30 --shots 50 --jobs 2
    python bench/tracking_bench.py --samples        # the sample videos' truth files (truth-derived detections)

Development and measurement use different corpus seeds (``--seed``, default the measurement seed),
and every match seed is printed. Expectations here are independent: they come from the simulator's
physics and its rules engine at generation time, never from the tracker.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEV_SEED = 7  # the corpus seed the code was developed on
MEASURE_SEED = 20240612  # the corpus seed of the published figures
GAMES = ("ficha", "brasileira", "bar-billiards")


def run_clip(job: tuple) -> dict:
    """Play, detect, track, infer and score one clip (a worker process)."""
    import cv2

    cv2.setNumThreads(1)
    from bench.corpora import generated, staged
    from bench.detection_model import DetectionModel, camera_for, detections
    from bench.scoring import IdentityCounter, score_clip
    from bench.simtruth import from_truth_file
    from tracking.infer import EventInferer
    from tracking.tracker import BallTracker

    kind, what, seed, fps = job
    try:
        if kind == "generated":
            clip = generated(what, seed, fps)
        elif kind == "staged":
            clip = staged(what, seed, fps)
        else:
            clip = from_truth_file(what)
            fps = clip.fps
    except Exception as e:  # noqa: BLE001 - a seed the simulator cannot play is reported and skipped
        return {"job": job, "skipped": f"{type(e).__name__}: {e}"}
    prof = clip.profile
    camera = camera_for(clip, seed)  # as a calibration would give it
    tracker, inferer = BallTracker(prof), EventInferer(prof, camera_xyh_mm=camera)
    ident = IdentityCounter(clip.ball_ids)
    events = []
    t_track = t_infer = 0.0
    n = 0
    for det in detections(clip, DetectionModel(), seed, camera):
        t0 = time.perf_counter()
        tracks = tracker.update(det)
        t1 = time.perf_counter()
        events += inferer.step(tracks)
        t_infer += time.perf_counter() - t1
        t_track += t1 - t0
        n += 1
        f = det.frame
        ident.update(f, det.t_s, clip.xy[f], clip.status[f], clip.hidden[f], tracks, prof.ball_radius_mm)
    events += inferer.finish()
    tally = score_clip(prof, clip.events, events, fps)
    tally.identity_switches, tally.ball_frames = ident.switches, ident.ball_frames
    rules = replay_rules(clip, events)
    return {"job": job, "name": clip.name, "game": clip.game, "fps": fps, "tally": tally, "rules": rules,
            "frames": n, "track_s": t_track, "infer_s": t_infer}


def replay_rules(clip, camera_events) -> dict:
    """The inferred camera events, with the truth's operator inputs merged in by time, through the
    rules engine as ``cueref referee`` feeds it on a recorded video (a question still unanswered when
    the next shot starts takes the camera's reading; a refused event is reported and the match goes
    on); compared with the decisions the generator's engine made on the true events."""
    from cueref.calls import merge_by_time
    from cueref.compare import compare
    from cueref.pipeline import take_camera_readings
    from rules import get_engine
    from rules.base import Referee, RulesError
    from tracking.events import OperatorInput, ShotStart

    expected = [dict(e) for e in clip.expected]
    if not expected:
        return {"expected": 0, "matched": 0, "pending": 0, "assumed": 0, "problems": []}
    inputs = [e for e in clip.events if isinstance(e, OperatorInput)]
    log = merge_by_time(camera_events, [inputs])
    referee = Referee(get_engine(clip.game, clip.profile), clip.players, clip.options)
    decisions, refused, assumed = [], [], 0
    for e in log:
        try:
            if isinstance(e, ShotStart):
                answers, steps = take_camera_readings(referee, e.t_s, refused)
                assumed += len(answers)
                decisions += [s.decision for s in steps]
            decisions += [s.decision for s in referee.feed(e)]
        except (RulesError, ValueError, KeyError) as err:
            refused.append(f"the engine refused {e.kind} at {e.t_s:.2f} s: {err}")
    try:
        decisions += [s.decision for s in referee.finish()]
    except (RulesError, ValueError, KeyError) as err:
        refused.append(f"the engine refused the end of the match: {err}")
    answers, steps = take_camera_readings(referee, log[-1].t_s if log else 0.0, refused)
    assumed += len(answers)
    decisions += [s.decision for s in steps]
    problems = compare(decisions, expected)
    bad = {p.split(":")[0] for p in problems}
    pending = sum(1 for d in decisions if d.pending is not None)
    return {"expected": len(expected), "matched": len(expected) - len(bad), "pending": pending, "assumed": assumed,
            "problems": problems + refused}


def jobs_for(args, corpus_seed: int) -> list[tuple]:
    """The clips to run: generated frames until each game has ``--shots`` shots, per frame rate (shot
    counts are estimated from the first frames and topped up), and the staged corpora."""
    rng = np.random.default_rng(corpus_seed)
    jobs = []
    for fps in args.fps:
        for game in args.games:
            # a generated frame has about 8 (ficha), 18 (brasileira), 30 (bar billiards) shots
            per = {"ficha": 8, "brasileira": 17, "bar-billiards": 28}[game]
            for _ in range(int(np.ceil(args.shots / per * 1.15))):
                jobs.append(("generated", game, int(rng.integers(0, 2**31 - 1)), fps))
        if args.staged:
            from bench.corpora import STAGED

            for kind in STAGED:
                for _ in range(args.staged_clips if kind != "near_miss" else args.staged_clips * 8):
                    jobs.append(("staged", kind, int(rng.integers(0, 2**31 - 1)), fps))
    return jobs


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:6.2f} % ({a}/{b})" if b else "     - (0/0)"


def summarise(results: list[dict], label: str) -> dict:
    from bench.scoring import Tally

    t = Tally()
    rules_expected = rules_matched = rules_pending = rules_assumed = 0
    frames = 0
    track_s = infer_s = 0.0
    for r in results:
        t.add(r["tally"])
        rules_expected += r["rules"]["expected"]
        rules_matched += r["rules"]["matched"]
        rules_pending += r["rules"]["pending"]
        rules_assumed += r["rules"]["assumed"]
        frames += r["frames"]
        track_s += r["track_s"]
        infer_s += r["infer_s"]
    te = np.array(t.time_errors_s)
    per = np.array(t.frame_periods_s)
    within = int(np.sum(te <= per + 1e-12)) if len(te) else 0
    shots = max(t.shots, 1)
    print(f"\n== {label}: {len(results)} clips, {t.shots} shots ({t.shots_found} found, {t.shots_spurious} spurious), {frames} frames")
    print(f"  first contact correct      {pct(t.first_ok, t.shots)}")
    print(f"  pots recall                {pct(t.pots_found, t.pots_true)}   precision {pct(t.pots_found, t.pots_inferred)}"
          f"   order {pct(t.pot_order_ok, t.pot_order_shots)}")
    print(f"  cushion contacts recall    {pct(t.cushions_found, t.cushions_true)}   precision {pct(t.cushions_found, t.cushions_inferred)}")
    print(f"  ball-ball contacts recall  {pct(t.contacts_found, t.contacts_true)}   precision {pct(t.contacts_found, t.contacts_inferred)}")
    if len(te):
        print(f"  contact times <= 1 frame   {pct(within, len(te))}   median {1000 * np.median(te):.1f} ms, 99th percentile {1000 * np.percentile(te, 99):.1f} ms")
    for k, (true, found, false) in t.kinds.items():
        if true or false:
            print(f"  {k:26s} recall {pct(found, true)}   false calls {false} ({200.0 * false / shots:.2f} per 200 shots)")
    print(f"  identity switches          {t.identity_switches} in {t.ball_frames} ball-frames ({1000.0 * t.identity_switches / max(t.ball_frames, 1):.3f} per 1000)")
    if rules_expected:
        print(f"  rules decisions reproduced {pct(rules_matched, rules_expected)}   questions to the operator {rules_pending}, "
              f"the camera's reading taken for {rules_assumed}")
    print(f"  time per frame             tracking {1000 * track_s / max(frames, 1):.2f} ms, inference {1000 * infer_s / max(frames, 1):.2f} ms")
    return {"label": label, "clips": len(results), "shots": t.shots, "first_contact": [t.first_ok, t.shots],
            "pots": [t.pots_found, t.pots_true, t.pots_inferred], "pot_order": [t.pot_order_ok, t.pot_order_shots],
            "cushions": [t.cushions_found, t.cushions_true, t.cushions_inferred],
            "contacts": [t.contacts_found, t.contacts_true, t.contacts_inferred], "times_within_frame": [within, len(te)],
            "kinds": t.kinds, "identity_switches": [t.identity_switches, t.ball_frames], "rules": [rules_matched, rules_expected],
            "rules_questions": [rules_pending, rules_assumed],
            "ms_per_frame": [1000 * track_s / max(frames, 1), 1000 * infer_s / max(frames, 1)]}


def speed(games, corpus_seed: int) -> int:
    """CPU time (this process only: other work on the machine does not count) per frame of the tracker
    and the event inference, on the detections of one generated frame per game at 30 fps."""
    import cv2

    cv2.setNumThreads(1)
    from bench.corpora import generated
    from bench.detection_model import DetectionModel, detections
    from tracking.infer import EventInferer
    from tracking.tracker import BallTracker

    rng = np.random.default_rng(corpus_seed)
    for game in games:
        seed = int(rng.integers(0, 2**31 - 1))
        clip = generated(game, seed, 30.0)
        dets = list(detections(clip, DetectionModel(), seed))
        best = (np.inf, np.inf)
        for _ in range(3):
            tracker, inferer = BallTracker(clip.profile), EventInferer(clip.profile)
            t_track = t_infer = 0.0
            for d in dets:
                t0 = time.process_time()
                tracks = tracker.update(d)
                t1 = time.process_time()
                inferer.step(tracks)
                t_infer += time.process_time() - t1
                t_track += t1 - t0
            t1 = time.process_time()
            inferer.finish()
            t_infer += time.process_time() - t1
            best = min(best, (t_track, t_infer))
        n = len(dets)
        print(f"{game} (seed {seed}, {clip.shots} shots, {n} frames at 30 fps): tracking {1000 * best[0] / n:.2f} ms, "
              f"inference {1000 * best[1] / n:.2f} ms CPU per frame")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default=",".join(GAMES), help="comma-separated games (default all three)")
    ap.add_argument("--fps", default="30,60", help="comma-separated frame rates (default 30,60)")
    ap.add_argument("--shots", type=int, default=200, help="at least this many shots per game and frame rate (default 200)")
    ap.add_argument("--seed", type=int, default=None, help=f"corpus seed (default {MEASURE_SEED}; --dev: {DEV_SEED})")
    ap.add_argument("--dev", action="store_true", help="use the development corpus seed")
    ap.add_argument("--no-staged", dest="staged", action="store_false", help="skip the staged corpora (near misses, jumps, touches, double hits)")
    ap.add_argument("--staged-clips", type=int, default=13, help="clips per staged corpus and frame rate (8 shots each; near misses: 8 times as many, 1 shot each)")
    ap.add_argument("--samples", action="store_true", help="instead: the sample videos' truth files under sample_videos/")
    ap.add_argument("--speed", action="store_true", help="instead: CPU time per frame of tracking and inference on one "
                                                         "generated frame per game (one process, best of three)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    ap.add_argument("--verbose", action="store_true", help="list every wrong first contact and rules difference")
    args = ap.parse_args(argv)
    args.games = [g for g in args.games.split(",") if g]
    args.fps = [float(f) for f in args.fps.split(",") if f]
    corpus_seed = args.seed if args.seed is not None else (DEV_SEED if args.dev else MEASURE_SEED)
    if args.speed:
        return speed(args.games, corpus_seed)
    if args.samples:
        jobs = [("truth", str(p), 0, 0.0) for p in sorted((ROOT / "sample_videos").glob("*/*.truth.json"))]
    else:
        jobs = jobs_for(args, corpus_seed)
        print(f"corpus seed {corpus_seed} ({'development' if corpus_seed == DEV_SEED else 'measurement'}): {len(jobs)} clips")
    from tqdm import tqdm

    results = []
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for r in tqdm(pool.map(run_clip, jobs), total=len(jobs), desc="clips", unit="clip"):
            results.append(r)
    print(f"{len(results)} clips in {time.time() - t0:.0f} s")
    for r in [r for r in results if "skipped" in r]:
        print(f"skipped {r['job']}: the simulator could not play it ({r['skipped']})")
    results = [r for r in results if "skipped" not in r]
    if not args.samples:
        seeds: dict[str, list] = {}
        for r in results:
            kind, what, seed, fps = r["job"]
            seeds.setdefault(f"{kind} {what} @ {fps:g} fps", []).append(seed)
        for k, v in seeds.items():
            print(f"seeds {k}: {' '.join(map(str, v))}")
    out = []
    groups: dict[str, list] = {}
    for r in results:
        kind, what, seed, fps = r["job"]
        label = (r["game"] if kind == "truth" else f"{r['game']} {fps:g} fps") if kind in ("generated", "truth") else f"staged {what} {fps:g} fps"
        groups.setdefault(label, []).append(r)
    for label in sorted(groups):
        out.append(summarise(groups[label], label))
        if args.verbose:
            for r in groups[label]:
                for w in r["tally"].first_wrong:
                    print(f"    {r['name']}: first contact {w}")
                for kind, t_s, true_id, inferred_id in r["tally"].misses:
                    what = f"false call {kind.removesuffix(' (false)')}" if kind.endswith(" (false)") else f"missed {kind}"
                    print(f"    {r['name']} @ {r['fps']:g} fps: {what} of {true_id} (tracked as {inferred_id}) at {t_s} s")
                for p in r["rules"]["problems"]:
                    print(f"    {r['name']}: {p}")
    out.append(summarise(results, "all clips"))
    if args.json:
        args.json.write_text(json.dumps({"corpus_seed": corpus_seed, "groups": out}, indent=1, default=int))
    return 0


if __name__ == "__main__":
    sys.exit(main())
