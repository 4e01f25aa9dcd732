"""The detector alone, frame by frame: the thread CPU of each ``Detector.detect`` call over a clip, and a
digest of what it saw (every ball's place, class and state), so that two versions of the detector can
be compared for cost and for sameness in one command each.

Each clip is a sample clip's name (``ficha/miss``), or ``VIDEO=CLIP``: any video of a sample clip's
table (a re-encoded copy, say) with that clip's table profile. The table is calibrated automatically
from the first frame; one OpenCV thread; decoding is not counted (it runs before each call).

Run: ``python bench/detect_cpu.py --clips ficha/miss,brasileira/wrong-pocket``; for the detector of
another checkout, run that checkout's copy of this script (it imports the code beside it).
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


def measure(spec: str) -> tuple[int, float]:
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
    return len(cost), sum(cost)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", required=True, help="sample clips or VIDEO=CLIP, comma-separated")
    args = ap.parse_args()
    n = total = 0.0
    for spec in args.clips.split(","):
        k, s = measure(spec)
        n, total = n + k, total + s
    print(f"all: {int(n)} frames, detect mean {total / max(n, 1) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
