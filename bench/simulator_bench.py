"""Simulator and pipeline-foundation figures quoted in the README: physics against closed forms,
physics and render speed, decoding speed of the sample videos, and the rules engines replaying
every sample's ground-truth log. Run: `python bench/simulator_bench.py` (about a minute)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration.table import resolve_profile  # noqa: E402
from cueref.compare import compare  # noqa: E402
from simulator.camera import mount_camera  # noqa: E402
from simulator.samples import SAMPLES  # noqa: E402
from simulator.physics import G_MM_S2, BallState, PhysicsParams, Shot, World, rack_ficha, simulate  # noqa: E402
from simulator.render import Renderer  # noqa: E402
from simulator.scene import BallPose, Occluder, Scene  # noqa: E402
from cueref.video import VideoReader  # noqa: E402
from rules import get_engine  # noqa: E402
from rules.base import replay  # noqa: E402
from tracking.events import BallBall, BallCushion, read_events  # noqa: E402

FICHA = resolve_profile("ficha")
P = PhysicsParams()
R = FICHA.ball_radius_mm


def physics_accuracy() -> None:
    f = P.mu_roll * G_MM_S2
    errors = []
    for v0, gap in [(800.0, 200.0), (1500.0, 500.0), (3000.0, 900.0)]:
        w = World(FICHA, (BallState("cue", (200.0, 405.0)), BallState("r1", (200.0 + 2 * R + gap, 405.0))))
        hit = next(e for e in simulate(w, Shot("cue", 0.0, v0, top=0.4)).events if isinstance(e, BallBall))
        t_exact = (v0 - math.sqrt(v0 * v0 - 2 * f * gap)) / f
        errors.append(abs(hit.t_s - t_exact))
    print(f"head-on contact time, worst error over 3 speeds: {max(errors):.1e} s (a frame at 60 fps is 1.7e-02 s)")
    v0 = 400.0  # stops about 0.8 m on, well short of the foot cushion
    end = simulate(World(FICHA, (BallState("cue", (100.0, 405.0)),)), Shot("cue", 0.0, v0, top=0.4)).world_after.ball("cue").xy_mm
    print(f"rolling stopping distance: {end[0] - 100.0:.6f} mm simulated, {v0 * v0 / (2 * f):.6f} mm closed form")
    worst = 0.0
    for angle in (10.0, 30.0, 50.0):
        res = simulate(World(FICHA, (BallState("cue", (150.0, 250.0)),)), Shot("cue", -90.0 + angle, 1200.0, top=0.4),
                       params=PhysicsParams(mu_cushion=0.0))
        hit = next(e for e in res.events if isinstance(e, BallCushion))
        vb = res.timeline.ball_pose("cue", hit.t_s - 1e-7).velocity_mm_s
        va = res.timeline.ball_pose("cue", hit.t_s + 1e-7).velocity_mm_s
        out = math.degrees(math.atan2(abs(va[0]), abs(va[1])))
        expected = math.degrees(math.atan(math.tan(math.atan2(abs(vb[0]), abs(vb[1]))) / P.e_cushion))
        worst = max(worst, abs(out - expected))
    print(f"cushion angle (frictionless nose, tan out = tan in / e): worst error {worst:.1e} degrees")


def physics_speed() -> None:
    rng = np.random.default_rng(0)
    times = []
    for k in range(20):
        w = rack_ficha(FICHA, rng)
        t0 = time.perf_counter()
        simulate(w, Shot("cue", float(rng.uniform(0, 360)), float(rng.uniform(1500, 6000)), top=float(rng.uniform(-0.4, 0.4))))
        times.append(time.perf_counter() - t0)
    print(f"ficha shots from the rack (20 random): median {np.median(times) * 1e3:.0f} ms, worst {max(times) * 1e3:.0f} ms")


def render_speed() -> None:
    cv2.setNumThreads(1)
    rng = np.random.default_rng(1)
    balls = tuple(BallPose(b.id, (float(rng.uniform(60, 1360)), float(rng.uniform(60, 750)))) for b in FICHA.balls)
    cue = Occluder("cue", tip_xy_mm=(400.0, 300.0), butt_xy_mm=(-900.0, 350.0), h_mm=30.0)
    for res in ((1280, 720), (1920, 1080)):
        renderer = Renderer(FICHA, mount_camera(FICHA, rng=np.random.default_rng(0), resolution=res), seed=0)
        t = []
        for k in range(15):
            t0 = time.perf_counter()
            renderer.render(Scene(k / 30, balls, occluders=(cue,)))
            t.append(time.perf_counter() - t0)
        print(f"render ficha with cue, {res[0]}x{res[1]}, one thread: median {1 / np.median(t):.0f} frames/s")


def decode_speed() -> None:
    clips = sorted((ROOT / "sample_videos").rglob("*.mp4"))
    if not clips:
        print("decode: no sample videos (run `cueref simulate samples`)")
        return
    n, t0 = 0, time.perf_counter()
    for clip in clips[:4]:
        with VideoReader(clip) as r:
            for _ in r:
                n += 1
    print(f"decode sample videos (accurate colour): {n / (time.perf_counter() - t0):.0f} frames/s over {n} frames")


def samples_judged() -> None:
    """Hand-written expectations (staged scenarios, from the rulebook) and goldens (the generated
    frames' expectations, written by the engine itself) are counted apart: only the first are an
    independent check of the engines."""
    import json

    counts = {True: [0, 0, 0], False: [0, 0, 0]}  # golden -> [clips, reproduced, expected]
    for spec in SAMPLES:
        log = ROOT / "sample_videos" / f"{spec.name}.events.jsonl"
        header, events = read_events(log)
        expected = json.loads(log.with_name(log.name.replace(".events.jsonl", ".truth.json")).read_text())["expected_decisions"]
        engine = get_engine(header.game, resolve_profile(header.profile))
        decisions = [s.decision for s in replay(engine, events, header.players, header.options)]
        problems = compare(decisions, expected)
        c = counts[spec.golden]
        c[0] += 1
        c[1] += len(expected) - len(problems)
        c[2] += len(expected)
        if problems:
            print(f"  {log.relative_to(ROOT)}: {problems[0]}")
    for golden, what in ((False, "hand-written from the rulebook"), (True, "goldens (the engine's own calls at generation)")):
        clips, ok, total = counts[golden]
        print(f"rules engines on the sample logs, {what}: {ok} of {total} expected decisions reproduced in {clips} clips")

if __name__ == "__main__":
    physics_accuracy()
    physics_speed()
    render_speed()
    decode_speed()
    samples_judged()
