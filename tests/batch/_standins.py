"""The stand-in stages (``tests/pipeline/_standins.py``: a sample clip's ground truth as detections,
tracks and events) as the stage loader ``cueref batch`` hands its workers, and a list file of the
bundled samples with each clip's game, players, options and operator calls.

The clip of a video is found from its path's last two parts (``.../ficha/miss.mp4`` is ``ficha/miss``),
so a copy of a sample (truncated, renamed folder above it) still finds its truth.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

from calibration.monitor import CalibrationKeeper
from cueref.pipeline import Stages
from rules import GAMES
from tests.pipeline._standins import ROOT, TruthDetector, TruthInferer, TruthTracker, load_clip, standin_loader
from tracking.events import write_events

SAMPLES = sorted(p.relative_to(ROOT / "sample_videos").with_suffix("").as_posix() for p in (ROOT / "sample_videos").glob("*/*.mp4"))


def clip_of(video: str):
    path = Path(video)
    return load_clip(f"{path.parent.name}/{path.stem}")


def truth_stages(video, profile, calibration, referee, first_image) -> Stages:
    """The stand-ins of ``video``'s clip with the real calibration keeper."""
    return standin_loader(clip_of(video))(profile, calibration, referee, first_image)


class _Slow(TruthTracker):
    def update(self, dets):
        time.sleep(float(os.environ.get("CUEREF_TEST_FRAME_DELAY_S", "0")))
        return super().update(dets)


def slow_truth_stages(video, profile, calibration, referee, first_image) -> Stages:
    """As :func:`truth_stages`, each frame ``$CUEREF_TEST_FRAME_DELAY_S`` slower (a kill lands mid-match)."""
    clip = clip_of(video)
    return Stages(TruthDetector(clip), _Slow(clip), TruthInferer(clip), referee, CalibrationKeeper(calibration, profile, first_image))


def referee_words(name: str, folder: Path, videos: Path = ROOT / "sample_videos") -> list[str]:
    """``cueref referee``'s words for the sample clip ``name`` (``videos/NAME.mp4``): its game, players,
    table, options and its operator calls (written to ``folder/calls/NAME.jsonl``)."""
    clip = load_clip(name)
    words = [str(videos / f"{name}.mp4"), "--game", clip.game, "--players", ",".join(clip.players)]
    if clip.truth.raw["profile"] != GAMES[clip.game][2]:
        words += ["--table", clip.truth.raw["profile"]]
    for key, value in clip.options.items():
        words += ["--option", f"{key}={json.dumps(value) if not isinstance(value, str) else value}"]
    if clip.calls:
        calls = folder / "calls" / f"{name}.jsonl"
        calls.parent.mkdir(parents=True, exist_ok=True)
        write_events(calls, clip.calls)
        words += ["--calls", str(calls)]
    return words


def sample_list(folder: Path, names=SAMPLES, videos: Path = ROOT / "sample_videos") -> Path:
    """A batch list of sample clips, each line with :func:`referee_words`."""
    path = folder / "videos.txt"
    lines = [shlex.join(referee_words(name, folder, videos)) for name in names]
    path.write_text("# the bundled samples\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def batch(argv, stages=truth_stages) -> int:
    """``cueref batch ARGV`` with ``stages`` in place of the installed ones (errors are raised)."""
    from cueref.cli import build_parser
    from cueref.commands import batch as command

    return command.run(build_parser("batch").parse_args(["batch", *map(str, argv)]), stages=stages)


def stored(location) -> dict:
    """Everything a store holds of its matches, keyed by the video's content hash (match ids and
    clocks left out): what two batches must agree on."""
    from cueref.store import MatchStore

    out = {}
    with MatchStore(location) as store:
        for m in store.matches():
            shots = [(s.number, s.frame_number, s.player, s.struck, s.t_start_s, s.t_end_s, s.first_seq, s.last_seq,
                      None if s.tracks is None else (s.tracks.frame.tolist(), s.tracks.t_s.tolist(), s.tracks.ball.tolist(),
                                                     s.tracks.xy_mm.round(3).tolist(), s.tracks.state.tolist()))
                     for s in store.shots(m.id, tracks=True)]
            out[m.video_sha256] = dict(
                game=m.game, profile=m.profile, players=m.players, options=m.options, status=m.status,
                events=[(e.seq, e.shot, e.event) for e in store.events(m.id)],
                decisions=[(d.seq, d.shot, d.t_s, d.player, d.pending, d.data) for d in store.decisions(m.id)],
                shots=shots, frames=store.frames(m.id))
    return out
