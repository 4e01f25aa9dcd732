"""The referee's pipeline as a library object: frames in, one :class:`FrameResult` per frame out.

::

    stages = Stages(detector, tracker, inferer, referee, keeper)     # passed in: tests use stand-ins
    for result in run(frames, stages, calls):                         # frames: Frame(index, t_s, image)
        ...                                                           # draw, write files, print: consumers

Per frame, in the pipeline's one direction (``STYLE.md`` section 5):

1. the **calibration keeper** (:class:`calibration.monitor.CalibrationKeeper`) checks the frame against
   the calibration; a new calibration (the camera bumped and recalibrated, or a drift followed) is
   handed to vision with ``detector.recalibrate(calibration)``;
2. **vision** (``detector.detect(image, frame, t_s) -> FrameDetections``) finds balls and pins in table
   millimetres; a frame the keeper could not check is passed on with ``valid=False`` (and, while there
   is no calibration at all, with no detections);
3. **tracking** (``tracker.update(detections) -> tracks``, every frame) and **event inference**
   (``inferer.step(tracks) -> [Event]``, ``inferer.finish()`` at the end of the video) turn tracks into
   camera events;
4. the **event log** is the camera's events, the operator's calls (a calls file: nominations,
   concessions, answers) and the pipeline's own ``unobserved`` spans (the camera moved and the table
   was recalibrated) merged by time exactly as :func:`cueref.calls.merge_by_time` merges files: a call
   or a span enters the log just before the first camera event at or after its time (so a call waits
   for the camera to get past it), and whatever is left enters at the end;
5. the **referee** (:class:`rules.base.Referee`) takes the log one event at a time and returns the
   steps (decisions) each completes.

Decoding runs in its own thread through a bounded queue (:func:`cueref.video.prefetch`); the pipeline
keeps nothing per frame, so memory stays flat in the video's length. Drawing, printing and the output
files are consumers of the generator (:mod:`cueref.outputs`, :mod:`cueref.console`), never part of it.

Live (``cueref live``, :mod:`cueref.live`) adds two things, both optional:

* **operator inputs while the run goes on**: :class:`LiveInputs`, a thread-safe queue the console puts
  inputs into (an ``undo`` among them: the last call taken back, :meth:`rules.base.Referee.undo`, and
  kept in the log so that a replay takes it back too); each
  frame takes what arrived, stamps it with the frame's time, and holds it like a call until the camera's
  events are known up to that time: a camera event after it arrives, or the inferer says it has given
  everything before it (its optional ``settled_s``), so the log keeps its order;
* **gaps in a live source**: a frame source may yield a :class:`SourceGap` between two frames (a stalled
  stream reopened, frames dropped); the gap enters the log as an ``unobserved`` span, the first frame
  after it reaches tracking marked invalid, and no inferred event may fall inside it.
"""

from __future__ import annotations

import dataclasses
import heapq
import importlib
import importlib.util
import itertools
import logging
import math
import queue
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Iterator, Protocol, Sequence

import numpy as np

from calibration.camera import Calibration
from calibration.monitor import CalibrationKeeper
from cueref.calls import merge_key
from cueref.video import Frame, prefetch
from rules.base import Referee, RulesError, Step
from tracking.events import Answer, Event, OperatorInput, ShotStart, UndoCall, Unobserved
from vision.types import BallDetections, FrameDetections

__all__ = [
    "Detector", "Tracker", "Inferer", "Stages", "FrameResult", "PipelineConfig", "PipelineError",
    "SourceGap", "LiveInputs", "run", "missing_stages", "load_stages", "take_camera_readings",
]

log = logging.getLogger(__name__)


# ---- the stages' contract ---------------------------------------------------------------------------


class Detector(Protocol):
    """Vision: ``vision.Detector(profile, calibration, config=None)``."""

    def detect(self, image: np.ndarray, frame: int, t_s: float) -> FrameDetections: ...

    def recalibrate(self, calibration: Calibration) -> None: ...


class Tracker(Protocol):
    """Tracking: ``tracking.tracker.BallTracker(profile, config=None)``. ``update`` returns a frozen
    snapshot of the tracks; ``tracks.csv`` reads it through ``rows()`` (:mod:`cueref.outputs`)."""

    def update(self, dets: FrameDetections) -> Any: ...


class Inferer(Protocol):
    """Event inference: ``tracking.infer.EventInferer(profile, config=None, camera_xyh_mm=None)``. ``step``
    returns the events that became certain this frame, in time order; ``finish`` those still open at the end.
    Optional: ``camera_xyh_mm``, where the calibration puts the camera (kept up to date on a recalibration).

    Optional, for live runs: ``settled_s``, the time before which every event has been given (the
    inferer's watermark, read after each ``step``). An operator input given live enters the log as soon
    as the watermark passes it; with no ``settled_s`` it enters only when a later camera event arrives (or
    at the end), which is never out of order but can keep the console waiting for a whole shot."""

    def step(self, tracks: Any) -> list[Event]: ...

    def finish(self) -> list[Event]: ...


@dataclass(frozen=True, slots=True)
class Stages:
    """The stateful objects one run uses (each serves one video, in order)."""

    detector: Detector
    tracker: Tracker
    inferer: Inferer
    referee: Referee
    keeper: CalibrationKeeper | None = None  # None: the calibration is trusted for the whole video


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    queue_frames: int = 8  # decoded frames waiting for the pipeline (0: decode in this thread); 8 at 1080p is ~50 MB
    # live: yield each frame's result at once rather than after the next frame is read (a call is not held
    # back a frame, nor through a stalled stream); the end of the source is then one more result (end_only)
    eager: bool = False
    # a recorded run: a question still unanswered when the next shot starts (or the video ends) takes its
    # default, the camera's own reading, as an ``answer`` marked ``assumed`` in the log, and the match goes
    # on. Off live, where the operator answers at the console.
    assume_answers: bool = True
    # how long (s) a thread waiting for Python's interpreter lock waits before the running one must hand it
    # over, for the run (None: Python's own, 5 ms). The decoding and converting threads work in FFmpeg without
    # the lock and need it back only briefly between frames; waiting 5 ms behind the stages' Python each time
    # leaves their core idle (measured: bench/throughput_bench.py --switch)
    switch_interval_s: float | None = 0.001


@dataclass(frozen=True, slots=True)
class SourceGap:
    """A live frame source saw nothing from ``t_s`` (its last frame before) to ``until_s`` (its first frame
    after): a stalled stream it reopened, or frames it dropped. Yielded between the two frames."""

    t_s: float
    until_s: float
    reason: str


class LiveInputs:
    """Operator inputs given while a run goes on (the live console): any thread may :meth:`put`; the
    pipeline takes what arrived at each frame and stamps it with that frame's time, the moment the input
    joined the match. The event's own ``t_s`` is replaced."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[OperatorInput] = queue.SimpleQueue()

    def put(self, event: OperatorInput) -> None:
        if not isinstance(event, OperatorInput):
            raise TypeError(f"only operator inputs join a run live, not {type(event).__name__}")
        self._queue.put(event)

    def take(self) -> list[OperatorInput]:
        """Everything put since the last call, in order."""
        out = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out


class PipelineError(RuntimeError):
    """A stage broke its contract (an event inferred out of time order): a bug, not bad input."""


@dataclass(frozen=True, slots=True, eq=False)
class FrameResult:
    """What one frame produced.

    ``events`` are the events that entered the event log with this frame, in log order (camera events,
    operator calls and ``unobserved`` spans); ``steps`` the referee's decisions they completed, in
    order. ``calibration`` is the keeper's status (``ok``, ``followed``, ``suspect``, ``recalibrating``,
    ``recalibrated``; ``fixed`` without a keeper). ``problems`` are events the referee refused (one line
    each; the run goes on). The ``last`` result of a video also holds what the inferer and the referee
    gave at its end: the last frame's result, or in an eager run (``PipelineConfig.eager``) one more result
    after it, ``end_only``, whose tracks have no rows (nothing is written twice).
    """

    frame: Frame
    detections: FrameDetections
    tracks: Any
    events: tuple[Event, ...] = ()
    steps: tuple[Step, ...] = ()
    calibration: str = "fixed"
    problems: tuple[str, ...] = ()
    last: bool = False
    end_only: bool = False  # eager runs: the end of the source, on the last frame again, with no tracks of its own

    @property
    def index(self) -> int:
        return self.frame.index

    @property
    def t_s(self) -> float:
        return self.frame.t_s

    @property
    def valid(self) -> bool:
        """False when nothing may be inferred from this frame (the camera could not be checked)."""
        return self.detections.valid


# ---- the run ------------------------------------------------------------------------------------------


def run(frames: Iterable[Frame | SourceGap], stages: Stages, calls: Sequence[Event] = (),
        config: PipelineConfig = PipelineConfig(), inputs: LiveInputs | None = None) -> Iterator[FrameResult]:
    """Referee ``frames`` (in time order): one :class:`FrameResult` per frame.

    ``calls`` are operator inputs (a calls file), merged into the event log by time; ``inputs`` those
    given while the run goes on (live). A live source may put a :class:`SourceGap` between two frames.
    When the frame source fails part-way (a damaged file), the frames before the damage are finished as a
    whole video (the last result carries the end) and then the source's error is raised. Close the
    generator (``contextlib.closing``) before closing the source: that stops the decoding thread.
    """
    joined = _Joiner(stages, calls, inputs, assume_answers=config.assume_answers)
    items = prefetch(frames, config.queue_frames) if config.queue_frames else iter(frames)
    source = joined.frames_of(items)
    interval = sys.getswitchinterval()
    if config.switch_interval_s is not None:
        sys.setswitchinterval(config.switch_interval_s)
    try:
        if config.eager:
            yield from _eager(joined, source)
            return
        frame = next(source, None)
        while frame is not None:
            result = joined.step(frame)
            try:
                frame = next(source, None)
            except Exception:
                yield joined.finish(result)
                raise
            yield joined.finish(result) if frame is None else result
    finally:
        sys.setswitchinterval(interval)
        source.close()
        close = getattr(items, "close", None)
        if close is not None:
            close()


class _NoTracks:
    """The tracks of an end-only result: none (the last frame's came with it)."""

    def rows(self) -> list:
        return []


def _eager(joined: "_Joiner", source: Iterator[Frame]) -> Iterator[FrameResult]:
    """Each frame's result as soon as it is made, then the end as one more (also when the source fails:
    its error is raised after)."""

    def end(last: FrameResult) -> FrameResult:
        return joined.finish(dataclasses.replace(last, tracks=_NoTracks(), events=(), steps=(), problems=(), end_only=True))

    result = None
    while True:
        try:
            frame = next(source)
        except StopIteration:
            break
        except Exception:
            if result is not None:
                yield end(result)
            raise
        result = joined.step(frame)
        yield result
    if result is not None:
        yield end(result)


class _Joiner:
    """The per-run state between the stages: the calibration in use, the open unobserved span, the
    calls and spans waiting for their place in the log, the live inputs and the source's gaps."""

    def __init__(self, stages: Stages, calls: Sequence[Event], inputs: LiveInputs | None = None,
                 assume_answers: bool = False):
        self.stages = stages
        self.inputs = inputs
        self.assume_answers = assume_answers
        self.gaps: list[SourceGap] = []  # gaps no inferred event has passed yet
        self.after_gap = False  # the next frame follows a gap: nothing may be inferred from it alone
        self.calibration = stages.keeper.calibration if stages.keeper is not None else None  # the one vision has
        self.classes: tuple[str, ...] = ()
        self.blind_since: float | None = None  # first frame time of the current run of unchecked frames
        self.lost = False  # the current run included a lost calibration: it becomes an unobserved span
        self.last_t_s = 0.0
        self.last_logged_t_s = float("-inf")  # the last camera event's time
        self.settled_t_s = float("-inf")  # the last live input or gap the inferer's watermark let into the log
        self.seq = itertools.count()
        # (log order, event, whether the inferer's watermark may let it in before a camera event does)
        self.held: list[tuple[tuple[float, int, int, int], Event, bool]] = []
        for e in calls:
            self._hold(e)

    def frames_of(self, items: Iterator[Frame | SourceGap]) -> Iterator[Frame]:
        """The frames of a source; its gaps are taken in between, in order."""
        for item in items:
            if isinstance(item, SourceGap):
                self._gap(item)
            else:
                yield item

    # -- one frame

    def step(self, frame: Frame) -> FrameResult:
        s = self.stages
        for e in self.inputs.take() if self.inputs is not None else ():
            self._hold(dataclasses.replace(e, t_s=frame.t_s), live=True)
        status, valid, calibrated = "fixed", True, True
        if s.keeper is not None:
            state = s.keeper.update(frame.image, frame.t_s)
            status, valid, calibrated = state.status, state.valid, state.calibration is not None
            if calibrated and state.calibration is not self.calibration:
                self.calibration = state.calibration  # the one vision has
                s.detector.recalibrate(state.calibration)
                if hasattr(s.inferer, "camera_xyh_mm"):  # where the camera hangs now (jump shots' parallax)
                    s.inferer.camera_xyh_mm = state.calibration.camera_xyh_mm
        if calibrated:
            dets = s.detector.detect(frame.image, frame.index, frame.t_s)
            self.classes = dets.balls.classes
            if not valid:
                dets = dataclasses.replace(dets, valid=False)
        else:  # no calibration until the keeper finds the table again: nothing to look with
            dets = FrameDetections(frame.index, frame.t_s, BallDetections.empty(frame.index, frame.t_s, self.classes), valid=False)
        if self.after_gap and dets.valid:  # the source lost frames just before this one: tracking must not bridge them
            dets = dataclasses.replace(dets, valid=False)
        self.after_gap = False
        tracks = s.tracker.update(dets)
        spans = self._track_blind_span(frame.t_s, valid, status)
        self.last_t_s = frame.t_s
        for span in spans:
            self._hold(span)
        inferred = s.inferer.step(tracks)
        events, steps, problems = self._log(inferred, settled_s=getattr(s.inferer, "settled_s", -math.inf))
        return FrameResult(frame, dets, tracks, events, steps, status, problems)

    def finish(self, result: FrameResult) -> FrameResult:
        """The end of the video, added to the last frame's result (with the live inputs given after it)."""
        for e in self.inputs.take() if self.inputs is not None else ():
            self._hold(dataclasses.replace(e, t_s=self.last_t_s))
        if self.blind_since is not None and self.lost:
            self._hold(self._span(self.last_t_s, recovered=False))
        events, steps, problems = self._log(self.stages.inferer.finish(), flush=True)
        problems_end: list[str] = []
        try:
            steps += tuple(self.stages.referee.finish())
        except RulesError as e:
            problems_end.append(f"end of the video: {e}")
        assumed, assumed_steps = self._assume(self.last_t_s, problems_end)
        events += assumed
        steps += assumed_steps
        return dataclasses.replace(
            result, events=result.events + events, steps=result.steps + steps,
            problems=result.problems + problems + tuple(problems_end), last=True,
        )

    # -- unobserved spans

    def _gap(self, gap: SourceGap) -> None:
        """A gap in a live source: an unobserved span over it, the next frame invalid, and no inferred
        event inside it (what no frame showed cannot have been seen)."""
        log.warning("no frame from %.2f s to %.2f s: %s", gap.t_s, gap.until_s, gap.reason)
        self._hold(Unobserved(t_s=gap.t_s, until_s=gap.until_s, reason=gap.reason), live=True)
        self.gaps.append(gap)
        self.after_gap = True

    def _unseen(self, e: Event) -> SourceGap | None:
        """The source gap ``e`` falls inside (after the gap's last frame, up to its first frame after)."""
        self.gaps = [g for g in self.gaps if g.until_s >= self.last_logged_t_s]
        return next((g for g in self.gaps if g.t_s < e.t_s <= g.until_s), None)

    def _track_blind_span(self, t_s: float, valid: bool, status: str) -> list[Unobserved]:
        """Frames the keeper could not check form a run; a run in which the calibration was lost (the
        camera moved) becomes an ``unobserved`` span from its first frame to the first good frame. A
        short run that ends with the calibration standing (an arm over two cushions) is only marked
        invalid frame by frame."""
        if not valid:
            if self.blind_since is None:
                self.blind_since, self.lost = t_s, False
            self.lost = self.lost or status == "recalibrating"
            return []
        spans = [self._span(t_s, recovered=True)] if self.blind_since is not None and self.lost else []
        self.blind_since, self.lost = None, False
        return spans

    def _span(self, until_s: float, recovered: bool) -> Unobserved:
        keeper = self.stages.keeper
        lost = [e for e in (keeper.events if keeper is not None else ()) if e.kind == "lost"]
        why = lost[-1].detail if lost else "the table could not be checked"
        end = "recalibrated" if recovered else "not found again before the end of the video"
        return Unobserved(t_s=self.blind_since, until_s=max(until_s, self.blind_since), reason=f"camera moved: {why}; {end}")

    # -- the event log

    def _hold(self, event: Event, live: bool = False) -> None:
        """A call or a span waits for the camera's events to reach its time (a ``live`` input or source gap
        also enters once the inferer's watermark passes it)."""
        stream = 1 if isinstance(event, OperatorInput) else 0  # calls as from a calls file, spans as the camera's
        key = merge_key(event, stream, next(self.seq))
        heapq.heappush(self.held, (key, event, live))

    def _log(self, inferred: Iterable[Event], flush: bool = False,
             settled_s: float = -math.inf) -> tuple[tuple[Event, ...], tuple[Step, ...], tuple[str, ...]]:
        """Merge the inferred events with the held calls and spans, feed them to the referee in log
        order (an undo in its place), and return what entered the log, the steps and the refusals."""
        logged: list[Event] = []
        problems: list[str] = []
        for e in sorted(inferred, key=lambda e: e.t_s):
            if e.t_s < self.last_logged_t_s:
                raise PipelineError(
                    f"event inference gave {e.kind} at {e.t_s:.3f} s after an event at {self.last_logged_t_s:.3f} s: "
                    "events must come in time order")
            if e.t_s < self.settled_t_s:
                raise PipelineError(
                    f"event inference gave {e.kind} at {e.t_s:.3f} s after its settled_s had passed {self.settled_t_s:.3f} s "
                    "(a live input entered the log there): an inferer gives every event before its settled_s")
            gap = None if isinstance(e, Unobserved) else self._unseen(e)  # the inferer's own blind spans are kept
            if gap is not None:
                log.warning("%s at %.3f s falls in a gap of the source (%.2f-%.2f s): left out", e.kind, e.t_s, gap.t_s, gap.until_s)
                problems.append(f"{e.kind} at {e.t_s:.2f} s: inferred inside the unobserved gap {gap.t_s:.2f}-{gap.until_s:.2f} s, left out")
                continue
            while self.held and self.held[0][1].t_s <= e.t_s:
                logged.append(heapq.heappop(self.held)[1])
            logged.append(e)
            self.last_logged_t_s = e.t_s
        while self.held and (flush or (self.held[0][2] and self.held[0][1].t_s <= settled_s)):
            event = heapq.heappop(self.held)[1]
            logged.append(event)
            self.settled_t_s = max(self.settled_t_s, event.t_s)
        steps: list[Step] = []
        entered: list[Event] = []
        for e in logged:
            if isinstance(e, ShotStart):
                assumed, assumed_steps = self._assume(e.t_s, problems)
                entered += assumed
                steps += assumed_steps
            try:
                steps += self.stages.referee.feed(e)
            except RulesError as err:
                log.warning("the referee refused %s at %.3f s: %s", e.kind, e.t_s, err)
                problems.append(f"{e.kind} at {e.t_s:.2f} s: {err}")
                if isinstance(e, UndoCall):  # an undo that took nothing back is no part of the match
                    continue
            entered.append(e)
        return tuple(entered), tuple(steps), tuple(problems)

    def _assume(self, t_s: float, problems: list[str]) -> tuple[tuple[Event, ...], tuple[Step, ...]]:
        """In a recorded run, :func:`take_camera_readings` at ``t_s``; nothing live."""
        if not self.assume_answers:
            return (), ()
        return take_camera_readings(self.stages.referee, t_s, problems)


def take_camera_readings(referee: Referee, t_s: float, problems: list[str]) -> tuple[tuple[Event, ...], tuple[Step, ...]]:
    """What a recorded run does with a question still unanswered at ``t_s`` (the next shot's start, or
    the end of the video): the question's default (the camera's reading) is fed to ``referee`` as an
    assumed answer at ``t_s``; returns the answers entered in the log and the steps they made. Nothing
    when no question waits. A question with no default, or whose default the engine cannot judge either,
    has its shot's call withdrawn (an ``undo`` in the log, with the reason, added to ``problems``) so that
    the later shots are not refused."""
    answers: list[Answer | UndoCall] = []
    steps: list[Step] = []
    asked: set[str] = set()
    while True:  # an answer may lead the engine to its next question on the same shot
        q = getattr(referee, "pending", None)  # a referee that never asks has none
        if q is None or q.id in asked:
            break
        asked.add(q.id)
        try:
            if q.default is None:
                raise RulesError("only a person can answer it")
            answer = Answer(t_s=t_s, question=q.id, answer=q.default, assumed=True)
            steps += referee.feed(answer)
        except RulesError as err:
            # the shot cannot be judged with the camera's reading either (its events contradict the
            # table: a ball potted that the record has off): its call is withdrawn, in the log as an
            # undo, so that the match goes on rather than every later shot waiting behind the question
            problems.append(f"no answer to {q.id!r} by {t_s:.2f} s, and the camera's reading {q.default!r}: {err}")
            undo = UndoCall(t_s=t_s, reason=f"no answer to {q.id}, and the camera's reading {q.default!r}: {err}")
            steps += referee.feed(undo)
            answers.append(undo)
            log.warning("%s at %.2f s: %s", undo.kind, t_s, undo.reason)
            break
        log.info("no answer to %s (%s) by %.2f s: the camera's reading %r taken", q.id, q.text, t_s, q.default)
        answers.append(answer)
    return tuple(answers), tuple(steps)


# ---- the installed stages ------------------------------------------------------------------------------

# stage -> the (module, name) each needs
STAGES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("vision", (("vision", "Detector"),)),
    ("tracking", (("tracking.tracker", "BallTracker"), ("tracking.infer", "EventInferer"))),
)


def _provides(module: str, name: str) -> bool:
    if importlib.util.find_spec(module) is None:
        return False
    return hasattr(importlib.import_module(module), name)


def missing_stages() -> list[str]:
    """The pipeline stages this build does not have yet."""
    return [stage for stage, needs in STAGES if not all(_provides(m, n) for m, n in needs)]


def load_stages(profile: Any, calibration: Calibration, referee: Referee, first_image: np.ndarray) -> Stages:
    """The installed stages for one video: vision, tracking, event inference, the given referee, and a
    calibration keeper that starts from ``first_image``."""
    from tracking.infer import EventInferer
    from tracking.tracker import BallTracker
    from vision import Detector

    return Stages(
        detector=Detector(profile, calibration), tracker=BallTracker(profile),
        inferer=EventInferer(profile, camera_xyh_mm=calibration.camera_xyh_mm),
        referee=referee, keeper=CalibrationKeeper(calibration, profile, first_image),
    )
