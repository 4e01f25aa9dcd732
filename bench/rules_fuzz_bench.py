"""Random physically possible play through the three referees, longer than the test suite runs it.

Drives the property test of ``tests/rules/test_protocol.py`` (random shots among the balls on the
table, random operator inputs, random answers) with more examples per engine, and counts what the
referee did: the calls it made, the questions it asked, what it refused (an input the rules cannot
take, the shot each match tries after its end), the frames that ended.
A shot that happened is never refused, no ball is created or lost, every frame end is counted once:
the run fails on the first counter-example.

Run: ``python bench/rules_fuzz_bench.py [--examples 300] [--seed 1]`` (about a minute per 300).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tests.rules.test_protocol as protocol  # noqa: E402
from rules.base import Referee, RulesError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=300, help="random matches per engine (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="the random seed (printed; default 1)")
    args = ap.parse_args(argv)
    if args.examples < 1:
        ap.error("--examples must be 1 or more")
    counts: Counter[str] = Counter()
    feed = Referee.feed

    def counting_feed(self, event):
        try:
            steps = feed(self, event)
        except RulesError:
            counts[f"{self.engine.name} refused"] += 1
            raise
        for s in steps:
            counts[f"{self.engine.name} calls"] += 1
            counts[f"{self.engine.name} questions"] += s.decision.pending is not None
            counts[f"{self.engine.name} frames ended"] += s.decision.frame_over and s.decision.pending is None
        return steps

    Referee.feed = counting_feed  # type: ignore[method-assign]
    inner = protocol.test_random_physically_possible_play_always_gets_a_call.hypothesis.inner_test
    print(f"rules fuzz: {args.examples} random matches per engine, seed {args.seed}")
    failed = 0
    for game in protocol.IDS:

        @seed(args.seed)
        @settings(max_examples=args.examples, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def run(data):
            counts[f"{game} matches"] += 1
            inner(game, data)

        t0 = time.perf_counter()
        try:
            run()
            verdict = "ok"
        except Exception as err:  # the counter-example is printed by hypothesis
            verdict = f"FAILED: {type(err).__name__}: {str(err).splitlines()[0][:200]}"
            failed += 1
        dt = time.perf_counter() - t0
        c = {k.split(" ", 1)[1]: v for k, v in counts.items() if k.startswith(game + " ")}
        print(f"  {game:14s} {verdict:4s} {c.get('matches', 0):5d} matches, {c.get('calls', 0):6d} calls "
              f"({c.get('questions', 0)} questions), {c.get('frames ended', 0):4d} frames ended, "
              f"{c.get('refused', 0):4d} refused (inputs the rules cannot take, shots after the end), {dt:6.1f} s")
    Referee.feed = feed  # type: ignore[method-assign]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
