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
import glob
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
from tests.pipeline._standins import load_clip  # noqa: E402
from tracking.events import write_events  # noqa: E402

ROOT = Path(os.environ.get("E2E_OUT", Path(tempfile.gettempdir()) / "cueref-samples-e2e"))


def _decision(d: dict) -> SimpleNamespace:
    """A decision read back from decisions.jsonl, with the calls before its shot (``prior``) read too."""
    return SimpleNamespace(**{**d, "prior": tuple(_decision(p) for p in d.get("prior") or ())})

os.environ["CUEREF_STORE"] = str(ROOT / "store.sqlite")
names = sys.argv[1:] or sorted(str(Path(p).relative_to("sample_videos").with_suffix("")) for p in glob.glob("sample_videos/*/*.mp4"))
bad = 0
for n in names:
    clip = load_clip(n)
    out = ROOT / n
    game = clip.truth.raw["game"]
    args = ["referee", str(clip.video), "--game", game, "--out", str(out), "--no-video", "--overwrite"]
    args = ["-q"] + args + ["--players", ",".join(clip.players)]
    for k, v in clip.options.items():  # the match's rules options (a frame started mid-way ...)
        args += ["--option", f"{k}={v if isinstance(v, str) else json.dumps(v)}"]
    if clip.calls:
        write_events(out.parent / (out.name + ".calls.jsonl"), clip.calls) if out.parent.mkdir(parents=True, exist_ok=True) or True else None
        args += ["--calls", str(out.parent / (out.name + ".calls.jsonl"))]
    prof = clip.truth.raw.get("profile")
    if prof and prof != game:
        args += ["--table", prof]
    t = time.time()
    import io, contextlib
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            rc = main(args)
    except SystemExit as e:
        rc = e.code
    dt = time.time() - t
    try:
        got = [_decision(json.loads(l)) for l in (out / "decisions.jsonl").read_text().splitlines()]
        diffs = compare(got, clip.expected)
    except Exception as e:
        diffs = [f"no decisions: {e}"]
    ok = rc == 0 and not diffs
    bad += not ok
    print(f"{'OK ' if ok else 'BAD'} {n:40s} rc={rc} {dt:5.1f}s {len(clip.expected)} expected", flush=True)
    for d in diffs[:6]:
        print("     ", d, flush=True)
print("bad:", bad, "of", len(names))
