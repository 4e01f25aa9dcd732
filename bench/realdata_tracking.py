"""Tracking and event inference on the real billiard-ai-bfh clips, against the hand labels.

For every clip of ``tests/data/realdata_events.json`` (what a person sees: the strike, the first
contact, cushions, pots, balls that stop at a pocket's lip, hand events), the clip is decoded,
calibrated from its first frame (profile ``1800x900``), and run through the installed stages of
:func:`cueref.pipeline.load_stages`: vision, the tracker and the event inference. The script prints
one Markdown row per clip (labels against what was reported) and the totals, for ``docs/tracking.md``.

    python bench/realdata_tracking.py                 # clips under the shared real-footage folder (or $CUEREF_REALDATA)

It needs a vision stage (``vision.Detector``); without one it says so and stops.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests._realdata import REALDATA  # noqa: E402

COLOUR = {"cue": "white"}  # tracker ids -> the labels' colour words; every other ball by its profile colour
MATCH_S = 0.2  # an event this close to its label is the same one


def run_clip(path: Path, profile) -> list:
    """The camera events the pipeline infers from one clip (the rules engine only keeps the contract)."""
    import itertools

    import cv2

    from calibration.calibrate import calibrate_frames
    from cueref.pipeline import load_stages, run
    from cueref.video import VideoReader
    from rules import get_engine
    from rules.base import Referee

    cv2.setNumThreads(1)
    with VideoReader(path) as reader:
        # a hand or a cue may cover a cushion in the first frame: the calibration takes the first second
        cal = calibrate_frames([f.image for f in itertools.islice(reader, 0, 30, 3)], profile)
    events = []
    with VideoReader(path) as reader:
        first = reader.read()
        stages = load_stages(profile, cal, Referee(get_engine("ficha", profile), ("A", "B")), first.image)
        for result in run(itertools.chain([first], reader), stages, (), ):
            events += result.events
    return events


def colour(profile, ball: str) -> str:
    return COLOUR.get(ball) or profile.ball(ball).colour


def compare(label: dict, events: list, profile) -> dict:
    """What was labelled and what was reported, per kind, for one clip."""
    from tracking.events import BallBall, BallCushion, BallPlaced, BallRemoved, Pot, ShotStart

    shot = label["shots"][0] if label["shots"] else None
    starts = [e for e in events if isinstance(e, ShotStart)]
    out: dict = {"clip": label["clip"]}
    out["strike"] = (f"{shot['strike_t_s']:.2f}" if shot and shot.get("strike_t_s") is not None else "-",
                     ", ".join(f"{colour(profile, s.ball)} {s.t_s:.2f}" for s in starts) or "-")
    fc = shot.get("first_contact") if shot else None
    mine = None
    if starts:
        s = starts[0]
        hit = next((e for e in events if isinstance(e, BallBall) and s.ball in (e.a, e.b)), None)
        if hit is not None:
            other = hit.b if hit.a == s.ball else hit.a
            mine = f"{colour(profile, other)} {hit.t_s:.2f}"
    out["first"] = (f"{fc['ball']} {fc['t_s']:.2f}" if fc else "none", mine or "none")
    out["first_ok"] = (fc is None and mine is None) or (fc is not None and mine is not None and mine.split()[0] == fc["ball"])
    lp = [(p["ball"], p["pocket"]) for p in (shot or {}).get("pots", [])]
    ip = [(colour(profile, e.ball), e.pocket) for e in events if isinstance(e, Pot)]
    out["pots"] = (" ".join(f"{b} {p}" for b, p in lp) or "-", " ".join(f"{b} {p}" for b, p in ip) or "-")
    out["pots_ok"] = sorted(lp) == sorted(ip)
    lc = [(c["ball"], c["cushion"], c["t_s"]) for c in (shot or {}).get("cushions", [])]
    ic = [(colour(profile, e.ball), e.cushion, e.t_s) for e in events if isinstance(e, BallCushion)]
    found = sum(1 for b, c, t in lc if any(b == b2 and c == c2 and abs(t - t2) <= MATCH_S for b2, c2, t2 in ic))
    out["cushions"] = (len(lc), found, len(ic) - found)
    lh = [(h["kind"], h["ball"]) for h in (shot or {}).get("hand_events", [])]
    ih = [(e.kind, colour(profile, e.ball)) for e in events if isinstance(e, (BallPlaced, BallRemoved))]
    out["hands"] = (" ".join(f"{k} {b}" for k, b in lh) or "-", " ".join(f"{k} {b}" for k, b in ih) or "-")
    return out


def main() -> int:
    from calibration.homography import CalibrationError
    from calibration.table import resolve_profile
    from cueref.pipeline import missing_stages

    if missing_stages():
        print(f"this build has no {' or '.join(missing_stages())} stage: nothing to measure on video")
        return 2
    labels = json.loads((ROOT / "tests" / "data" / "realdata_events.json").read_text())
    base = REALDATA
    profile = resolve_profile(labels["sources"]["billiard-ai-bfh"]["table"])
    rows = []
    print("| clip | strike (label / reported) | first contact | pots | cushions labelled, found, extra | hand events |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label in labels["clips"]:
        path = base / label["source"] / label["clip"]
        if not path.exists():
            print(f"| {label['clip']} | clip not found under {base} (from {labels['sources'][label['source']]['repository']}) | | | | |")
            continue
        try:
            r = compare(label, run_clip(path, profile), profile)
        except CalibrationError as e:
            print(f"| {label['clip']} | the table could not be calibrated: {e} | | | | |")
            continue
        rows.append(r)
        mark = lambda ok: "" if ok else " **x**"  # noqa: E731
        print(f"| {r['clip']} | {r['strike'][0]} / {r['strike'][1]} | {r['first'][0]} / {r['first'][1]}{mark(r['first_ok'])} | "
              f"{r['pots'][0]} / {r['pots'][1]}{mark(r['pots_ok'])} | {r['cushions'][0]}, {r['cushions'][1]}, {r['cushions'][2]} | "
              f"{r['hands'][0]} / {r['hands'][1]} |")
    n = len(rows)
    print(f"\n{n} clips: first contact right in {sum(r['first_ok'] for r in rows)}, pots (ball and pocket) right in "
          f"{sum(r['pots_ok'] for r in rows)}; cushions {sum(r['cushions'][1] for r in rows)} of "
          f"{sum(r['cushions'][0] for r in rows)} found, {sum(r['cushions'][2] for r in rows)} extra")
    return 0


if __name__ == "__main__":
    sys.exit(main())
