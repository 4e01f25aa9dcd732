"""cueref.pipeline: frames through stand-in stages built from sample clips' ground truth (no vision or
tracking needed), end to end to the referee's decisions.

The decisions are compared with each clip's ``expected_decisions``; for the generated whole frames
these are regression goldens the rules engine wrote when the clip was made, for the staged clips they
were written by hand from the rulebook (see ``tests/test_sample_videos.py``). What this checks is the
joining: frames, stages, calls, spans and the referee in the right order."""

from __future__ import annotations

import contextlib
import threading
import tracemalloc

import numpy as np
import pytest

from calibration.calibrate import calibrate_image
from calibration.monitor import CalibrationKeeper, KeeperEvent, KeeperState
from cueref.calls import merge_by_time
from cueref.compare import compare
from cueref.pipeline import FrameResult, PipelineConfig, PipelineError, Stages, run
from cueref.video import Frame, VideoReader
from rules.base import RulesError
from tests.pipeline._standins import TruthDetector, TruthInferer, TruthTracker, load_clip
from tracking.events import Answer, AtRest, ShotStart, Unobserved
from vision.types import BallDetections, FrameDetections

BLANK = np.zeros((8, 8, 3), np.uint8)


def truth_frames(clip):
    """The clip's frames with their true indices and times and a blank picture (no decoding)."""
    return (Frame(i, float(t), BLANK) for i, t in enumerate(clip.truth.t_s))


def standins(clip, keeper=None, latency_s=0.4):
    return Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip, latency_s), clip.referee(), keeper)


def decisions(results):
    return [s.decision for r in results for s in r.steps]


@pytest.mark.parametrize("name", ["ficha/frame", "brasileira/frame", "bar-billiards/visit", "ficha/ball-touched",
                                  "brasileira/wrong-pocket"])
def test_decisions_match_the_clips_expected_decisions(name):
    """Every frame gives one result; the operator's calls (the nominations of Sinuca Brasileira, given as
    a calls file) join the camera's events, which the inferer hands out 0.4 s late, exactly where
    ``cueref judge --calls`` puts them."""
    clip = load_clip(name)
    results = list(run(truth_frames(clip), standins(clip), clip.calls))
    assert [r.index for r in results] == list(range(clip.truth.n_frames))
    assert [r.last for r in results].count(True) == 1 and results[-1].last
    log = [e for r in results for e in r.events]
    assert log == merge_by_time(clip.camera_events, [clip.calls])
    assert compare(decisions(results), clip.expected) == []


def test_an_event_enters_the_log_no_earlier_than_the_frame_that_inferred_it():
    clip = load_clip("ficha/frame")
    for r in run(truth_frames(clip), standins(clip, latency_s=0.4), config=PipelineConfig(queue_frames=2)):
        assert all(e.t_s <= r.t_s - 0.4 + 1e-9 for e in r.events if not r.last)


def decoded_run(name):
    """A sample clip decoded for real, through the decoding thread, with the calibration keeper
    started from its first frame: the clip, the stages and the results."""
    clip = load_clip(name)
    with VideoReader(clip.video) as reader:
        first = reader.read()
    keeper = CalibrationKeeper(calibrate_image(first.image, clip.profile), clip.profile, first.image)
    stages = standins(clip, keeper)
    with VideoReader(clip.video) as reader, contextlib.closing(run(reader, stages)) as results:
        return clip, stages, list(results)


@pytest.fixture(scope="module")
def decoded_miss():
    return decoded_run("ficha/miss")


def test_a_decoded_clip_end_to_end(decoded_miss):
    clip, stages, results = decoded_miss
    assert [r.index for r in results] == list(range(clip.truth.n_frames))  # the detector checked each time too
    assert stages.detector.frames == list(range(clip.truth.n_frames))
    assert all(r.valid and r.calibration == "ok" for r in results)
    assert stages.detector.recalibrations == []
    assert not any(isinstance(e, Unobserved) for r in results for e in r.events)
    assert compare(decisions(results), clip.expected) == []
    assert not [t for t in threading.enumerate() if t.name == "cueref-decode"]


def test_a_bumped_camera_gives_an_unobserved_span_and_a_recalibration():
    """hard/camera-bump: the camera is knocked at 3.0 s, during the shot. The keeper loses the
    calibration and finds the table again; vision gets the new calibration; the frames between are
    marked invalid and the log holds an unobserved span over them, so the shot's call waits for the
    operator to confirm what the camera saw."""
    _, stages, results = decoded_run("hard/camera-bump")
    spans = [e for r in results for e in r.events if isinstance(e, Unobserved)]
    assert len(spans) == 1
    span = spans[0]
    assert 3.0 <= span.t_s < span.until_s < 3.5 and "camera moved" in span.reason
    invalid = [r.t_s for r in results if not r.valid]
    assert invalid and span.t_s == invalid[0] and span.until_s > invalid[-1]
    assert len(stages.detector.recalibrations) >= 1
    assert any(r.calibration == "recalibrated" for r in results)
    asked, assumed = [s.decision for r in results for s in r.steps if s.decision.shot == 0]
    assert asked.pending is not None  # the engine asks before calling a shot it partly did not see
    # nobody answers in a recorded run: at the end of the video the camera's reading is taken, and said so
    (answer,) = [e for r in results for e in r.events if isinstance(e, Answer)]
    assert answer.assumed and answer.question == asked.pending.id and answer.answer == asked.pending.default
    assert assumed.pending is None and "assumed" in assumed.explanation and asked.pending.id in assumed.explanation


class _Failing:
    """A frame source that breaks after ``n`` frames, as a damaged file does."""

    def __init__(self, frames, n):
        self.frames, self.n = frames, n

    def __iter__(self):
        for i, f in enumerate(self.frames):
            if i == self.n:
                raise OSError("the disk went away")
            yield f


def test_a_source_that_fails_finishes_what_was_read_then_raises():
    clip = load_clip("ficha/miss")
    stages = standins(clip)
    got: list[FrameResult] = []
    with pytest.raises(OSError, match="disk went away"):
        for r in run(_Failing(truth_frames(clip), 100), stages):  # frame 100 is 3.3 s, in the shot (1.0-3.9 s)
            got.append(r)
    assert len(got) == 100 and got[-1].last and stages.inferer.finished
    assert AtRest in [type(e) for e in got[-1].events]  # what finish() gave closes the open shot
    assert len(decisions(got)) == 1 and decisions(got)[0].shot == 0


def test_events_out_of_time_order_are_a_contract_error():
    clip = load_clip("ficha/miss")

    class Backwards(TruthInferer):
        def step(self, tracks):
            return [ShotStart(t_s=2.0, ball="cue"), ShotStart(t_s=1.0, ball="cue")] if tracks.frame == 3 else []

    stages = Stages(TruthDetector(clip), TruthTracker(clip), Backwards(clip), clip.referee())
    with pytest.raises(PipelineError, match="time order"):
        list(run(truth_frames(clip), stages))


def test_a_call_the_referee_refuses_is_reported_and_the_run_goes_on():
    clip = load_clip("ficha/miss")

    class Grumpy:
        def feed(self, e):
            if isinstance(e, ShotStart):
                raise RulesError("ficha: shot 0 comes after the match ended")
            return []

        def finish(self):
            return []

    stages = Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip), Grumpy())
    results = list(run(truth_frames(clip), stages))
    problems = [p for r in results for p in r.problems]
    assert len(results) == clip.truth.n_frames
    assert problems == ["shot_start at 1.00 s: ficha: shot 0 comes after the match ended"]


class _Still:
    """Trivial stages for long runs: no balls, no events."""

    def detect(self, image, frame, t_s):
        return FrameDetections(frame, t_s, BallDetections.empty(frame, t_s, ("white",)))

    def recalibrate(self, calibration):
        pass

    def update(self, dets):
        return dets.frame

    def step(self, tracks):
        return []

    def finish(self):
        return []

    def feed(self, e):
        return []


def _peak_bytes(n_frames: int) -> int:
    image = np.zeros((72, 128, 3), np.uint8)
    frames = (Frame(i, i / 30, image) for i in range(n_frames))
    s = _Still()
    tracemalloc.start()
    try:
        for _ in run(frames, Stages(s, s, s, s)):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_in_the_videos_length():
    short, long = _peak_bytes(600), _peak_bytes(12_000)
    assert long < short * 1.5 + 200_000, f"peak {short} B over 600 frames, {long} B over 12000"


def test_closing_the_results_early_stops_the_decoding_thread():
    clip = load_clip("ficha/miss")
    with contextlib.closing(run(truth_frames(clip), standins(clip))) as results:
        next(results)
    assert not [t for t in threading.enumerate() if t.name == "cueref-decode"]


class _ScriptedKeeper:
    """A calibration keeper whose status per frame is given: ``ok`` frames, a ``suspect`` run (an arm
    over two cushions) and, from ``lost_at``, a camera that moved and is never found again."""

    def __init__(self, suspect: range, lost_at: int):
        self.calibration = object()
        self.suspect, self.lost_at = suspect, lost_at
        self.events: list[KeeperEvent] = []
        self.frame = 0

    def update(self, image, t_s):
        k, self.frame = self.frame, self.frame + 1
        if k >= self.lost_at:
            if k == self.lost_at:
                self.events.append(KeeperEvent(t_s, "lost", "cushions not where calibrated on 3 side(s)"))
            return KeeperState(t_s, None, False, "recalibrating", None)
        if k in self.suspect:
            return KeeperState(t_s, self.calibration, False, "suspect", None)
        return KeeperState(t_s, self.calibration, True, "ok", None)


def test_a_short_unchecked_run_is_only_marked_and_a_lost_camera_is_unobserved_to_the_end():
    clip = load_clip("ficha/miss")
    keeper = _ScriptedKeeper(suspect=range(40, 42), lost_at=150)
    results = list(run(truth_frames(clip), standins(clip, keeper)))
    assert [r.index for r in results if not r.valid] == [40, 41, *range(150, clip.truth.n_frames)]
    assert all(len(r.detections.balls) == 0 for r in results[150:])  # no calibration: nothing to look with
    spans = [e for r in results for e in r.events if isinstance(e, Unobserved)]
    assert len(spans) == 1 and spans[0] in results[-1].events
    assert spans[0].t_s == results[150].t_s and spans[0].until_s == results[-1].t_s
    assert spans[0].reason == ("camera moved: cushions not where calibrated on 3 side(s); "
                               "not found again before the end of the video")
