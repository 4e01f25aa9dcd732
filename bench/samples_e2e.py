"""The sample clips refereed from video end to end (calibration, vision, tracking, inference, rules), one
``cueref referee`` each, and their calls compared with the scripted ones (``NAME.truth.json``
``expected_decisions``); each difference is printed.

    python bench/samples_e2e.py ficha/jump hard/two-pots   # some clips
    python bench/samples_e2e.py                            # every sample clip

The run folders (events.jsonl, decisions.jsonl, ...) go to ``$E2E_OUT/<clip>/`` (default: the system's
temporary folder, ``cueref-samples-e2e``). The expected calls of the 24 staged clips were written by
hand from the rulebooks; those of the four generated frames (ficha/frame, brasileira/frame,
bar-billiards/visit, hard/close-colours) are the rules engine's own calls on the true log (regression
goldens). ``tests/test_referee_samples.py`` makes the same check inside the test suite.
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.chdir(Path(__file__).resolve().parents[1])

from cueref.cli import main  # noqa: E402
from cueref.compare import compare  # noqa: E402
from tests.batch._standins import SAMPLES, referee_words  # noqa: E402
from tests.pipeline._standins import load_clip  # noqa: E402

ROOT = Path(os.environ.get("E2E_OUT", Path(tempfile.gettempdir()) / "cueref-samples-e2e"))


def run_samples() -> int:
    os.environ["CUEREF_STORE"] = str(ROOT / "store.sqlite")
    names = sys.argv[1:] or SAMPLES
    bad = 0
    for name in names:
        clip = load_clip(name)
        out = ROOT / name
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # the calls are compared, not printed
            rc = main(["-q", "referee", *referee_words(name, ROOT), "--out", str(out), "--no-video", "--overwrite"])
        dt = time.perf_counter() - t
        path = out / "decisions.jsonl"
        made = [SimpleNamespace(**json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []
        diffs = compare(made, clip.expected) if rc == 0 else [f"cueref referee exited with {rc}"]
        bad += bool(diffs)
        print(f"{'BAD' if diffs else 'OK '} {name:40s} rc={rc} {dt:5.1f}s {len(clip.expected)} expected", flush=True)
        for d in diffs[:6]:
            print("     ", d, flush=True)
    print("bad:", bad, "of", len(names))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(run_samples())
