"""Where a live referee's time goes, frame by frame: each sample clip read as fast as the referee takes it
through the live pipeline (``cueref.live.session.LIVE``: eager, no questions assumed) with the installed
stages, and every stage's thread CPU time on every frame: the calibration keeper, vision, tracking, event
inference, the rules, and the console's board.

CPU time, not wall time: what the refereeing thread spends on a frame, whatever else runs on the machine.
A frame that costs more than the frame interval holds up the call it gives (the call comes with the
frame that ends the shot) and the frames behind it, which a live source then drops.

Run: ``python bench/stage_cpu.py --clips brasileira/opening-reset,hard/close-colours`` (about 30 s of CPU
a clip); ``--over MS`` lists the frames that cost more (default 40 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STAGES = ("keeper", "detect", "track", "infer", "rules", "board")


class Timed:
    """A stage whose calls add their thread CPU time to ``spent[name]``."""

    CALLS = ("update", "detect", "step", "feed", "finish", "recalibrate")

    def __init__(self, stage, name: str, spent: dict[str, float]):
        self._stage, self._name, self._spent = stage, name, spent

    def __getattr__(self, attr):
        value = getattr(self._stage, attr)
        if attr not in self.CALLS or not callable(value):
            return value

        def timed(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return value(*args, **kwargs)
            finally:
                self._spent[self._name] = self._spent.get(self._name, 0.0) + time.thread_time() - t0

        return timed


def measure(name: str, over_s: float) -> None:
    import cv2

    from calibration.calibrate import calibrate_image
    from cueref.live.board import Board
    from cueref.live.session import LIVE
    from cueref.pipeline import Stages, load_stages, run
    from cueref.video import VideoReader
    from tests.pipeline._standins import load_clip

    cv2.setNumThreads(1)
    clip = load_clip(name)
    reader = VideoReader(str(clip.video))
    first = reader.read()
    t0 = time.thread_time()
    cal = calibrate_image(first.image, clip.profile)
    installed = load_stages(clip.profile, cal, clip.referee(), first.image)
    setup_s = time.thread_time() - t0
    spent: dict[str, float] = {}
    stages = Stages(*(Timed(getattr(installed, s), n, spent) for s, n in
                      (("detector", "detect"), ("tracker", "track"), ("inferer", "infer"), ("referee", "rules"), ("keeper", "keeper"))))
    board = Board(clip.game, clip.profile, clip.players, stages.referee)

    def frames():
        yield first
        while (frame := reader.read()) is not None:
            yield frame

    rows = []
    results = run(frames(), stages, clip.calls, LIVE)
    while True:
        spent.clear()
        t0 = time.thread_time()
        try:
            result = next(results)
        except StopIteration:
            break
        t1 = time.thread_time()
        board.add(result)
        spent["board"] = time.thread_time() - t1
        rows.append((result.t_s, t1 - t0 + spent["board"], dict(spent), [e.kind for e in result.events]))
    reader.close()
    total = [r[1] for r in rows]
    print(f"{name}: {len(rows) - 1} frames and the end; calibration and stages set up in {setup_s:.2f} s; per frame "
          f"median {statistics.median(total) * 1000:.1f} ms, mean {statistics.fmean(total) * 1000:.1f} ms, worst {max(total) * 1000:.1f} ms")
    for stage in STAGES:
        cost = [r[2].get(stage, 0.0) for r in rows]
        k = max(range(len(cost)), key=cost.__getitem__)
        print(f"  {stage:7s} median {statistics.median(cost) * 1000:6.1f} ms   mean {statistics.fmean(cost) * 1000:6.1f} ms   "
              f"worst {cost[k] * 1000:7.1f} ms at {rows[k][0]:7.3f} s")
    for t_s, cost, parts, kinds in rows:
        if cost > over_s:
            print(f"  frame at {t_s:7.3f} s: {cost * 1000:6.1f} ms (" + ", ".join(
                f"{s} {parts[s] * 1000:.1f}" for s in STAGES if parts.get(s, 0.0) > 0.002) + ")"
                  + (f": {', '.join(kinds)}" if kinds else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", required=True, help="sample clips, comma-separated (ficha/frame,...)")
    ap.add_argument("--over", type=float, default=40.0, metavar="MS", help="list the frames that cost more than this")
    args = ap.parse_args()
    for name in args.clips.split(","):
        measure(name, args.over / 1000)


if __name__ == "__main__":
    main()
