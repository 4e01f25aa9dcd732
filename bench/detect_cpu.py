"""The detector alone, frame by frame: the thread CPU of each ``Detector.detect`` call over a clip, and a
digest of what it saw (every ball's place, class and state), so that two versions of the detector can
be compared for cost and for sameness in one command each.

Each clip is a sample clip's name (``ficha/miss``), or ``VIDEO=CLIP``: any video of a sample clip's
table (a re-encoded copy, say) with that clip's table profile. The table is calibrated automatically
from the first frame; one OpenCV thread; decoding is not counted (it runs before each call).

Run: ``python bench/detect_cpu.py --clips ficha/miss,brasileira/wrong-pocket``; for the detector of
another checkout, run that checkout's copy of this script (it imports the code beside it).
``--steps`` also prints where each frame's time goes: the thread CPU of each step of
``Detector.detect`` (the ones named in ``STEPS``; one called inside another counts in both), as a
mean per frame over the clip.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


# the steps of a frame timed with --steps: (module, class or None, function)
STEPS = (
    ("vision.balls", None, "fit_balls"), ("vision.detect", "Detector", "_ball_detections"),
    ("vision.detect", "Detector", "_candidates"), ("vision.detect", "Detector", "_clusters"),
    ("vision.detect", "Detector", "_blobs"), ("vision.detect", "Detector", "_stadium_middles"),
    ("vision.detect", "Detector", "_occluder_mask"), ("vision.detect", "Detector", "_discs"),
    ("vision.background", "ClothBackground", "score"), ("vision.background", "ClothBackground", "update"),
    ("vision.background", "ClothBackground", "absorb_uncovered"), ("vision.pins", "PinWatcher", "detect"),
)


def _timed_steps() -> dict[str, float]:
    """Wrap every step of ``STEPS`` (where the detector calls it) to add its thread CPU time to the
    returned dict (seconds, by name; a step called inside another is counted in both)."""
    import functools
    import importlib

    spent: dict[str, float] = {}

    def wrap(owner, name: str, label: str) -> None:
        f = getattr(owner, name)

        @functools.wraps(f)
        def timed(*a, **k):
            t0 = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.thread_time() - t0

        setattr(owner, name, timed)

    for module, cls, name in STEPS:
        m = importlib.import_module(module)
        if cls is None:
            label = f"{module.split('.')[-1]}.{name}"
            wrap(m, name, label)
            if module == "vision.balls":  # vision.detect calls the name it imported
                wrap(importlib.import_module("vision.detect"), name, label)
        else:
            wrap(getattr(m, cls), name, f"{cls}.{name}")
    return spent


def measure(spec: str, steps: dict[str, float] | None = None) -> tuple[int, float]:
    import cv2

    from calibration.calibrate import calibrate_image
    from cueref.video import VideoReader
    from tests.pipeline._standins import load_clip
    from vision.detect import Detector

    cv2.setNumThreads(1)
    video, _, name = spec.rpartition("=")
    clip = load_clip(name)
    reader = VideoReader(video or str(clip.video))
    frame = reader.read()
    det = Detector(clip.profile, calibrate_image(frame.image, clip.profile))
    digest, cost = hashlib.sha1(), []
    while frame is not None:
        t0 = time.thread_time()
        out = det.detect(frame.image, frame.index, frame.t_s)
        cost.append(time.thread_time() - t0)
        for a in (out.balls.xy_mm, out.balls.label.astype(str), out.balls.state, out.pins.state):
            digest.update(a.tobytes())
        frame = reader.read()
    reader.close()
    print(f"{video or name}: {len(cost)} frames, detect mean {statistics.fmean(cost) * 1e3:.2f} ms, "
          f"median {statistics.median(cost) * 1e3:.2f} ms; what it saw: {digest.hexdigest()[:12]}")
    if steps is not None:
        n = max(len(cost), 1)
        for label, s in sorted(steps.items(), key=lambda kv: -kv[1]):
            print(f"  {label:34s} {s / n * 1e3:6.2f} ms a frame")
        steps.clear()
    return len(cost), sum(cost)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", required=True, help="sample clips or VIDEO=CLIP, comma-separated")
    ap.add_argument("--steps", action="store_true", help="also the CPU of each step of a frame (see STEPS)")
    args = ap.parse_args()
    steps = _timed_steps() if args.steps else None
    n = total = 0.0
    for spec in args.clips.split(","):
        k, s = measure(spec, steps)
        n, total = n + k, total + s
    print(f"all: {int(n)} frames, detect mean {total / max(n, 1) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
