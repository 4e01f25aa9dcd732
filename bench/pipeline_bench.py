"""What the pipeline itself costs: decoding alone against the whole pipeline (calibration keeper,
vision, tracking, inference, the referee, and the consumers that write events.jsonl, decisions.jsonl
and tracks.csv and print each shot), with decoding in its own thread and without, and the peak memory
of each (every measurement runs in its own process).

Vision, tracking and inference are the stand-in stages of the tests (``tests/pipeline/_standins.py``:
the clip's ground truth, handed out as detections, tracks and events), so the figures are the
pipeline's overhead over decoding, not the speed of the real stages.

Run: ``python bench/pipeline_bench.py [--clips ficha/frame,brasileira/frame]`` (a minute or two).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODES = ("decode", "pipeline", "pipeline-no-thread")


def measure(clip_name: str, mode: str) -> dict:
    import cv2

    from calibration.calibrate import calibrate_image
    from calibration.monitor import CalibrationKeeper
    from cueref.compare import compare
    from cueref.console import ShotPrinter
    from cueref.outputs import RunFiles
    from cueref.pipeline import PipelineConfig, Stages, run
    from cueref.video import VideoReader
    from tests.pipeline._standins import TruthDetector, TruthInferer, TruthTracker, load_clip
    from tracking.events import LogHeader

    cv2.setNumThreads(1)
    clip = load_clip(clip_name)
    out: dict = {"clip": clip_name, "mode": mode}
    with VideoReader(clip.video) as reader:
        if mode == "decode":
            t0 = time.perf_counter()
            n = sum(1 for _ in reader)
            out["seconds"] = time.perf_counter() - t0
        else:
            first = reader.read()
            keeper = CalibrationKeeper(calibrate_image(first.image, clip.profile), clip.profile, first.image)
            stages = Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip), clip.referee(), keeper)
            config = PipelineConfig(queue_frames=8 if mode == "pipeline" else 0)
            printer = ShotPrinter(lambda line: None)
            decisions = []
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                with RunFiles(Path(tmp), LogHeader(game=clip.game)) as files, \
                        contextlib.closing(run(itertools.chain([first], reader), stages, clip.calls, config)) as results:
                    n = 0
                    for r in results:
                        files.add(r)
                        printer.add(r)
                        decisions += [s.decision for s in r.steps]
                        n += 1
                out["seconds"] = time.perf_counter() - t0
                out["tracks_csv_mb"] = (Path(tmp) / "tracks.csv").stat().st_size / 1e6
            out["decision_differences"] = len(compare(decisions, clip.expected))
    out["frames"] = n
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", default="ficha/frame,brasileira/frame", help="sample clips (comma-separated)")
    ap.add_argument("--one", nargs=2, metavar=("CLIP", "MODE"), help=argparse.SUPPRESS)  # a measurement in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one)))
        return
    print("clip                 mode                 frames  frames/s  vs decode  peak RSS MB  decisions")
    for clip in args.clips.split(","):
        decode_fps = None
        for mode in MODES:
            r = subprocess.run([sys.executable, __file__, "--one", clip, mode], capture_output=True, text=True, check=True)
            m = json.loads(r.stdout.strip().splitlines()[-1])
            fps = m["frames"] / m["seconds"]
            decode_fps = decode_fps or fps
            diff = m.get("decision_differences")
            verdict = "" if diff is None else ("all expected" if diff == 0 else f"{diff} differ")
            print(f"{clip:20s} {mode:20s} {m['frames']:6d}  {fps:8.1f}  {fps / decode_fps:8.2f}x  {m['peak_rss_mb']:11.0f}  {verdict}")


if __name__ == "__main__":
    main()
