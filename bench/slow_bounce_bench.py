"""Slow cushion bounces on scripted trajectories: how often the bounce is found, and timed within a
frame period, as the apex window of ``cushion.py`` varies.

A ball slowing as it rolls (70 mm/s^2) comes onto the bottom cushion and leaves it slower; five
speeds and angles (40 to 250 mm/s in, 35 to 80 degrees), each with the scripted tests' detections
(0.8 mm of Gaussian noise) drawn from every seed of ``--seeds``, at 30 and 60 fps.

    python bench/slow_bounce_bench.py --apex-window 0.05 --seeds 10:18
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CASES = [(60.0, 30.0, 75.0), (120.0, 60.0, 60.0), (40.0, 25.0, 80.0), (250.0, 150.0, 45.0), (90.0, 50.0, 35.0)]  # in, out mm/s; degrees


def main(argv=None) -> int:
    from calibration.table import resolve_profile
    from tests.tracking._scripted import detections
    from tests.tracking.test_infer import slow_bounce
    from tracking.events import BallCushion
    from tracking.infer import EventInferer, InferConfig
    from tracking.tracker import BallTracker

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apex-window", type=float, default=InferConfig().apex_window_s, help="apex_window_s, s")
    ap.add_argument("--seeds", default="10:18", help="noise seeds, first:last+1")
    args = ap.parse_args(argv)
    a, b = (int(x) for x in args.seeds.split(":"))
    prof = resolve_profile("ficha")
    cfg = dataclasses.replace(InferConfig(), apex_window_s=args.apex_window)
    t_hit = 2.5
    for fps in (30.0, 60.0):
        n = within = found = extra = 0
        for seed in range(a, b):
            for v_in, v_out, angle in CASES:
                scene = slow_bounce(v_in, v_out, angle, t_hit=t_hit)
                tracker, inferer = BallTracker(prof), EventInferer(prof, cfg)
                evs = []
                for d in detections(scene, prof, fps, 4.5, seed=seed):
                    evs += inferer.step(tracker.update(d))
                evs += inferer.finish()
                cs = [e for e in evs if isinstance(e, BallCushion)]
                err = min((abs(c.t_s - t_hit) for c in cs if c.cushion == "B1"), default=math.inf)
                n += 1
                within += err <= 1 / fps + 1e-9
                found += err <= 2 / fps + 1e-6
                extra += len(cs) - (err <= 2 / fps + 1e-6)
        print(f"apex window {args.apex_window:g} s, {fps:g} fps: {n} bounces, found {found}, within a frame {within}, other cushion calls {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
