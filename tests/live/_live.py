"""Helpers for the live tests: a sample clip's frames as a reader :class:`~cueref.live.source.LiveSource`
can open (truth times, blank pictures: no decoding), which can stop at given times until the test lets
it go on, and a live session of the stand-in stages (``tests/pipeline/_standins.py``)."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from cueref.live.session import LiveSession
from cueref.live.source import LiveSource
from cueref.pipeline import Stages
from cueref.video import Frame
from cueref.video.frame import VideoInfo
from tests.pipeline._standins import Clip, TruthDetector, TruthInferer, TruthTracker
from tracking.events import BallBall

BLANK = np.zeros((8, 8, 3), np.uint8)


class TruthReader:
    """The clip's frames with their true indices and times. At each time in ``gates`` it stops (``read``
    blocks) until :meth:`go` is called; ``gate_reached`` is set while it waits."""

    def __init__(self, clip: Clip, gates: tuple[float, ...] = ()):
        self.t_s = [float(t) for t in clip.truth.t_s]
        self.i = 0
        self.gates = sorted(gates)
        self.gate_reached = threading.Event()
        self._go = threading.Event()
        self.closed = threading.Event()
        self.info = VideoInfo(path=clip.name, width=1280, height=720, fps=None, frame_count=len(self.t_s), duration_s=None, codec=None)

    def read(self) -> Frame | None:
        if self.i >= len(self.t_s) or self.closed.is_set():
            return None
        if self.gates and self.t_s[self.i] >= self.gates[0]:
            self.gates.pop(0)
            self.gate_reached.set()
            while not self._go.wait(0.05):
                if self.closed.is_set():
                    return None
            self._go.clear()
        frame = Frame(self.i, self.t_s[self.i], BLANK)
        self.i += 1
        return frame

    def go(self) -> None:
        self.gate_reached.clear()
        self._go.set()

    def close(self) -> None:
        self.closed.set()


class Collected:
    """A consumer that keeps every result."""

    def __init__(self):
        self.results = []

    def add(self, result):
        self.results.append(result)


def unsure_first_contact(clip: Clip) -> Clip:
    """The clip with its first ball-ball contact seen at confidence 0.4: the referee asks about it."""
    events = list(clip.camera_events)
    i = next(i for i, e in enumerate(events) if isinstance(e, BallBall))
    events[i] = dataclasses.replace(events[i], confidence=0.4)
    return dataclasses.replace(clip, camera_events=events)


def standin_session(clip: Clip, source, *, latency_s: float = 0.2, consumers=(), calls=(), detector=None,
                    inferer=None) -> LiveSession:
    """A live session of ``clip`` through the stand-in stages (the inferer ``latency_s`` late)."""
    stages = Stages(detector or TruthDetector(clip), TruthTracker(clip), inferer or TruthInferer(clip, latency_s), clip.referee())
    return LiveSession(source, stages, game=clip.game, profile=clip.profile, players=clip.players, consumers=consumers,
                       calls=calls)


def truth_source(clip: Clip, gates: tuple[float, ...] = (), realtime: bool = False) -> tuple[LiveSource, TruthReader]:
    """A live source over the clip's truth frames (a file: played at real speed with ``realtime``)."""
    reader = TruthReader(clip, gates)
    return LiveSource(f"{clip.name}.mp4", realtime=realtime, opener=lambda: reader), reader
