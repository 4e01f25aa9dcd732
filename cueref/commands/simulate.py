"""``cueref simulate``: make simulated matches with exact ground truth.

* ``cueref simulate samples`` rebuilds the committed sample videos (``sample_videos/``) from their
  seeds: the ground truth comes out byte-for-byte equal.
* ``cueref simulate corpus --games ficha,brasileira --per-game 20 --seed 7 --out corpus/`` makes a
  larger corpus of whole frames played by the automatic player, each with a random camera mount.
* ``cueref simulate script MATCH.yaml --out clip.mp4`` renders a match script of your own
  (docs/simulator-physics.md describes the format).
* ``cueref simulate frame --game ficha --seed 3 --out clip.mp4`` renders one generated frame.

Each clip is written as ``NAME.mp4`` with ``NAME.truth.json`` (camera, per-frame positions, events,
expected decisions; docs/simulator-render.md) and ``NAME.events.jsonl`` (the ground-truth event
log, ready for ``cueref judge``).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np
from tqdm import tqdm

from cueref.errors import UserError
from rules import GAMES

log = logging.getLogger(__name__)


def _resolution(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"resolution {text!r} must be WIDTHxHEIGHT, e.g. 1280x720") from None
    if w < 64 or h < 64 or w % 2 or h % 2:
        raise argparse.ArgumentTypeError(f"resolution {text!r} must be even and at least 64x64")
    return (w, h)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    s = sub.add_parser("samples", help="rebuild the bundled sample videos from their seeds")
    s.add_argument("--out", type=Path, default=Path("sample_videos"), help="output folder (default sample_videos/)")
    s.add_argument("--only", nargs="*", metavar="NAME", help="only these samples (e.g. ficha/miss); --list shows the names")
    s.add_argument("--list", action="store_true", help="list the samples and what each shows, then stop")
    c = sub.add_parser("corpus", help="make N generated frames per game with random cameras")
    c.add_argument("--games", default="ficha,brasileira,bar-billiards", help="comma-separated games (default all three)")
    c.add_argument("--per-game", type=int, default=10, help="frames per game (default 10)")
    c.add_argument("--seed", type=int, default=0, help="corpus seed: the same seed makes the same corpus")
    c.add_argument("--out", type=Path, default=Path("corpus"), help="output folder (default corpus/)")
    c.add_argument("--resolution", type=_resolution, default=(1280, 720), help="WIDTHxHEIGHT (default 1280x720)")
    c.add_argument("--fps", type=float, default=30.0, help="frame rate: 25, 29.97, 30, 50 or 60 (default 30)")
    c.add_argument("--max-shots", type=int, default=40, help="stop a frame after this many shots (default 40)")
    for name, help_text in (("script", "render a match script (YAML or JSON)"), ("frame", "render one frame played by the automatic player")):
        q = sub.add_parser(name, help=help_text)
        if name == "script":
            q.add_argument("script", type=Path, help="match script (docs/simulator-physics.md)")
        else:
            q.add_argument("--game", required=True, choices=sorted(GAMES))
            q.add_argument("--max-shots", type=int, default=40)
        q.add_argument("--table", help="table profile (default: the script's or the game's)")
        q.add_argument("--seed", type=int, default=0, help="seed of the match, camera, textures and noise")
        q.add_argument("--out", type=Path, required=True, help="output video (.mp4); truth and log are written beside it")
        q.add_argument("--resolution", type=_resolution, default=(1280, 720))
        q.add_argument("--fps", type=float, default=30.0)


def _frame_bar(desc: str):
    """A ``progress(n, total)`` callback that drives a per-clip frame bar under the clip bar."""
    bar: tqdm | None = None

    def update(n: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit="frame", leave=False)
        bar.update(1)
        if n + 1 == total:
            bar.close()

    return update


def _report(results) -> None:
    for r in results:
        print(f"{r.video_path}: {r.n_frames} frames at {float(r.fps):.3f} fps ({r.duration_s:.1f} s); truth {r.truth_path.name}, log {r.events_path.name}")


def run(args: argparse.Namespace) -> int:
    from simulator import samples as S

    if args.what == "samples":
        if args.list:
            for spec in S.SAMPLES:
                print(f"{spec.name:32s} {spec.game:14s} {spec.note}")
            return 0
        known = [s.name for s in S.SAMPLES]
        names = args.only or known
        unknown = [n for n in names if n not in known]
        if unknown:  # before any work
            raise UserError(f"unknown sample(s) {', '.join(unknown)}: `cueref simulate samples --list` shows the "
                            f"{len(known)} names (e.g. {known[1]})")
        results = []
        for name in tqdm(names, desc="samples", unit="clip"):
            results.append(S.build_sample(S.sample(name), args.out, progress=_frame_bar(name)))
        _report(results)
        return 0
    if args.what == "corpus":
        games = [g for g in args.games.split(",") if g]
        unknown = [g for g in games if g not in GAMES]
        if unknown:
            raise ValueError(f"unknown game(s) {', '.join(unknown)}: choose from {', '.join(GAMES)}")
        if args.per_game < 1:
            raise ValueError("--per-game must be at least 1")
        specs = S.corpus_specs(games, args.per_game, args.seed, args.resolution, args.fps, args.max_shots)
        results = [S.build_sample(spec, args.out, progress=_frame_bar(spec.name)) for spec in tqdm(specs, desc="corpus", unit="clip")]
        _report(results)
        return 0

    from calibration.table import resolve_profile
    from simulator.camera import mount_camera
    from simulator.clip import make_clip

    if args.what == "script":
        from simulator.script import load_script, run_script

        script = load_script(args.script)
        profile = resolve_profile(args.table or script.profile)
        match = run_script(script, profile, args.seed)
    else:
        from simulator.player import generate_frame

        profile = resolve_profile(args.table or GAMES[args.game][2])
        match = generate_frame(args.game, profile, seed=args.seed, max_shots=args.max_shots).run
    camera = mount_camera(profile, resolution=args.resolution, rng=np.random.default_rng([args.seed, 11]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table_ref = args.table or (script.profile if args.what == "script" else GAMES[args.game][2])
    _report([make_clip(match, profile, camera, args.out, fps=args.fps, seed=args.seed, profile_ref=table_ref,
                       progress=_frame_bar(args.out.name))])
    return 0
