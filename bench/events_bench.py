"""What the event-log contract costs: constructing events (a tracker makes dozens per shot) and
reading logs (every sample's committed event log parsed and validated). Run:
`python bench/events_bench.py` (a few seconds); it prints microseconds per event, of the process's
CPU time (best of five), so other work on the machine does not count."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tracking.events import AtRest, BallBall, BallCushion, Pot, ShotStart, read_events  # noqa: E402

POSITIONS = {f"b{i}": (100.0 + 10 * i, 200.5) for i in range(9)}  # a ficha table: nine balls


def per_call_us(make, repeat: int = 5, number: int = 20000) -> float:
    """Best of ``repeat`` runs of ``number`` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            make()
        best = min(best, time.process_time() - t0)
    return best / number * 1e6


def construction() -> None:
    cases = {
        "ball_ball": lambda: BallBall(t_s=1.5, a="cue", b="r1", xy_mm=(300.0, 200.0), confidence=0.9),
        "ball_cushion": lambda: BallCushion(t_s=1.6, ball="r1", cushion="T1", xy_mm=(200.0, 26.0)),
        "pot": lambda: Pot(t_s=1.7, ball="r1", pocket="TL", xy_mm=(-10.0, -10.0)),
        "shot_start (9 positions)": lambda: ShotStart(t_s=1.0, ball="cue", xy_mm=(710.0, 405.0), positions=POSITIONS),
        "at_rest (9 positions)": lambda: AtRest(t_s=4.0, positions=POSITIONS),
    }
    for name, make in cases.items():
        print(f"construct {name:<26} {per_call_us(make):6.2f} us")


def reading() -> None:
    logs = sorted((ROOT / "sample_videos").rglob("*.events.jsonl"))
    n = 0
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        n = sum(len(read_events(p)[1]) for p in logs)
        best = min(best, time.process_time() - t0)
    print(f"read {len(logs)} sample logs, {n} events: {best * 1e3:.1f} ms, {best / n * 1e6:.1f} us per event")


if __name__ == "__main__":
    construction()
    reading()
