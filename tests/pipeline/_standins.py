"""Stand-in stages built from a sample clip's ground truth, to drive the pipeline end to end before
(and beside) the real vision and tracking: what they return is exactly what the simulator drew.

* :class:`TruthDetector` (vision): every ball the clip shows on the table in that frame, at its true
  position, labelled with its colour class; it checks that the pipeline hands it the frame index and
  time the clip has;
* :class:`TruthTracker` (tracking): the true ball ids and positions of the frame (``rows()`` for
  ``tracks.csv``); balls on a frame marked invalid keep their last position, state ``unobserved``;
* :class:`TruthInferer` (event inference): the clip's camera events, each handed out ``latency_s`` after
  it happened, as a real inferer that waits to be sure would (``settled_s``: everything before has been given).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calibration.table import TableProfile, resolve_profile
from rules import get_engine
from rules.base import Referee
from simulator.groundtruth import ClipTruth, read_truth
from simulator.scene import BallStatus
from tracking.events import Event, OperatorInput, read_events
from vision.types import BallDetections, BallState, FrameDetections

ROOT = Path(__file__).resolve().parents[2]
SEEN = (BallStatus.ON_TABLE, BallStatus.AIRBORNE)


@dataclass(frozen=True)
class Clip:
    """A sample clip and what the stand-ins need of it."""

    name: str
    truth: ClipTruth
    profile: TableProfile
    camera_events: list[Event]
    calls: list[Event]  # the operator inputs of its log, as a calls file would hold them
    game: str
    players: tuple[str, ...]
    options: dict

    @property
    def video(self) -> Path:
        return ROOT / "sample_videos" / f"{self.name}.mp4"

    @property
    def expected(self) -> list[dict]:
        return self.truth.raw["expected_decisions"]

    def referee(self) -> Referee:
        return Referee(get_engine(self.game, self.profile), self.players, self.options)


def load_clip(name: str) -> Clip:
    base = ROOT / "sample_videos" / name
    truth = read_truth(base.with_suffix(".truth.json"))
    header, events = read_events(base.with_suffix(".events.jsonl"))
    raw = truth.raw
    return Clip(name, truth, resolve_profile(raw["profile"]), [e for e in events if not isinstance(e, OperatorInput)],
                [e for e in events if isinstance(e, OperatorInput)], raw["game"], tuple(raw["players"]), dict(raw["options"]))


class TruthDetector:
    def __init__(self, clip: Clip):
        self.truth, self.profile = clip.truth, clip.profile
        self.colour = {b.id: b.colour for b in clip.profile.balls}
        self.classes = tuple(dict.fromkeys(b.colour for b in clip.profile.balls))
        self.recalibrations: list[object] = []
        self.frames: list[int] = []

    def detect(self, image: np.ndarray, frame: int, t_s: float) -> FrameDetections:
        assert abs(t_s - self.truth.t_s[frame]) < 1e-3, f"frame {frame} at {t_s} s, the clip has it at {self.truth.t_s[frame]} s"
        self.frames.append(frame)
        ids = [b for b, st in self.truth.status.items() if st[frame] in SEEN and np.isfinite(self.truth.xy_mm[b][frame]).all()]
        n, k = len(ids), len(self.classes)
        labels = np.array([self.colour[b] for b in ids], dtype=object)
        prob = np.zeros((n, k), np.float32)
        prob[np.arange(n), [self.classes.index(c) for c in labels]] = 1.0
        balls = BallDetections(
            frame=frame, t_s=t_s, classes=self.classes,
            xy_mm=np.array([self.truth.xy_mm[b][frame] for b in ids]).reshape(n, 2),
            xy_px=np.array([self.truth.px[b][frame] for b in ids]).reshape(n, 2),
            radius_px=np.full(n, 10.0), height_mm=np.array([self.truth.h_mm[b][frame] for b in ids]).reshape(n),
            label=labels, class_prob=prob, score=np.ones(n, np.float32), state=np.full(n, BallState.VISIBLE, np.uint8),
        )
        return FrameDetections(frame, t_s, balls)

    def recalibrate(self, calibration: object) -> None:
        self.recalibrations.append(calibration)


@dataclass(frozen=True)
class TruthTracks:
    frame: int
    t_s: float
    xy_mm: dict[str, tuple[float, float]]
    colour: dict[str, str]
    observed: bool

    def rows(self):
        state = "tracked" if self.observed else "unobserved"
        return [(b, self.colour[b], x, y, state, 1.0 if self.observed else 0.5) for b, (x, y) in self.xy_mm.items()]


class TruthTracker:
    def __init__(self, clip: Clip):
        self.truth = clip.truth
        self.colour = {b.id: b.colour for b in clip.profile.balls}
        self.last: dict[str, tuple[float, float]] = {}

    def update(self, dets: FrameDetections) -> TruthTracks:
        if dets.valid:
            f = dets.frame
            self.last = {b: tuple(self.truth.xy_mm[b][f]) for b, st in self.truth.status.items()
                         if st[f] in SEEN and np.isfinite(self.truth.xy_mm[b][f]).all()}
        return TruthTracks(dets.frame, dets.t_s, dict(self.last), self.colour, dets.valid)


class TruthInferer:
    def __init__(self, clip: Clip, latency_s: float = 0.4):
        self.pending = list(clip.camera_events)
        self.latency_s = latency_s
        self.finished = False
        self.settled_s = float("-inf")  # every event before this has been given (the live pipeline's watermark)

    def step(self, tracks: TruthTracks) -> list[Event]:
        self.settled_s = tracks.t_s - self.latency_s
        n = next((i for i, e in enumerate(self.pending) if e.t_s > tracks.t_s - self.latency_s), len(self.pending))
        ready, self.pending = self.pending[:n], self.pending[n:]
        return ready

    def finish(self) -> list[Event]:
        self.finished = True
        ready, self.pending = self.pending, []
        return ready


def standin_loader(clip: Clip):
    """A ``load_stages`` for a command under test: the stand-ins of ``clip`` with a calibration keeper."""
    from calibration.monitor import CalibrationKeeper
    from cueref.pipeline import Stages

    def load_stages(profile, calibration, referee, first_image):
        keeper = CalibrationKeeper(calibration, profile, first_image)
        return Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip), referee, keeper)

    return load_stages
