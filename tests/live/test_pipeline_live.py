"""cueref.pipeline live: operator inputs given while the run goes on (entering the log once the inferer's
watermark, the stand-in's ``settled_s``, passes them), undo, gaps in a live source, eager results.

The decisions are compared with the clips' ``expected_decisions`` (for the staged clips used here,
written by hand from the rulebook: see ``tests/test_sample_videos.py``); the question asked about an
unsure contact and its answer come from the rules engine."""

from __future__ import annotations

import pytest

from cueref.calls import merge_by_time
from cueref.compare import compare
from cueref.pipeline import LiveInputs, PipelineConfig, PipelineError, SourceGap, Stages, run
from cueref.video import Frame
from tests.live._live import BLANK, unsure_first_contact
from tests.pipeline.test_pipeline import truth_frames
from tests.pipeline._standins import TruthDetector, TruthInferer, TruthTracker, load_clip
from rules.base import Undo, replay
from tracking.events import Answer, BallCushion, Concession, Nomination, UndoCall, Unobserved
from tracking.events import Warning as MisconductWarning
from tracking.infer import EventInferer
from tracking.tracker import BallTracker

LATENCY_S = 0.4  # the stand-in inferer gives each event this late; its watermark follows the frames as late


def stages(clip, latency_s=LATENCY_S):
    return Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip, latency_s), clip.referee())


def live_run(clip, given, gaps=(), inferer=None, tracker=None):
    """Run the clip's frames; ``given`` maps a frame time to a function of the results so far that returns
    the operator input given just before that frame (as the console would). ``gaps``: (from, to) spans
    of frames the source never delivered, each announced by a SourceGap."""
    inputs, results, given = LiveInputs(), [], sorted(given.items())

    def frames():
        last = None
        for i, t in enumerate(clip.truth.t_s):
            t = float(t)
            if any(a < t < b for a, b in gaps):
                continue
            if last is not None and any(last <= a and t >= b for a, b in gaps):
                yield SourceGap(last, t, "the stream stalled")
            while given and t >= given[0][0]:
                inputs.put(given.pop(0)[1](results))
            last = t
            yield Frame(i, t, BLANK)

    config = PipelineConfig(queue_frames=0, eager=True, assume_answers=False)
    s = stages(clip) if inferer is None else Stages(TruthDetector(clip), tracker or TruthTracker(clip), inferer, clip.referee())
    for r in run(frames(), s, config=config, inputs=inputs):
        results.append(r)
    return results


def logged(results):
    return [e for r in results for e in r.events]


def test_a_live_input_is_stamped_with_its_frame_and_enters_the_log_where_a_calls_file_puts_it():
    """Sinuca Brasileira: the nomination of shot 1 (red into TR) given on the console at 9.2 s enters
    the log at the frame 0.4 s later, before the strike at 9.5 s: the log is the one ``cueref judge
    --calls`` makes, and the calls are the clip's own."""
    clip = load_clip("brasileira/wrong-pocket")
    results = live_run(clip, {9.2: lambda _: Nomination(t_s=0, ball="red", pocket="TR")})
    (nomination,) = [e for e in logged(results) if isinstance(e, Nomination)]
    assert 9.2 <= nomination.t_s < 9.2 + 1 / 30 + 1e-9  # the frame it arrived with
    (entered,) = [r for r in results if nomination in r.events]
    assert nomination.t_s + LATENCY_S <= entered.t_s < nomination.t_s + LATENCY_S + 1 / 30 + 1e-9
    assert logged(results) == merge_by_time(clip.camera_events, [[nomination]])
    assert compare([s.decision for r in results for s in r.steps], clip.expected) == []


def test_an_answer_given_live_changes_the_pending_call():
    """The first contact of shot 0 seen at 0.4 confidence: the call is a question; the operator's answer
    (red) turns it into the call the clip expects, and the nomination then lets shot 1 be judged."""
    clip = unsure_first_contact(load_clip("brasileira/wrong-pocket"))

    def answer(results):
        (question,) = [s.decision.pending for r in results for s in r.steps if s.decision.pending is not None]
        assert question.options[:2] == ("red", "pink")  # the camera's candidates first, then the other balls on the table
        return Answer(t_s=0, question=question.id, answer="red")

    results = live_run(clip, {8.6: answer, 9.2: lambda _: Nomination(t_s=0, ball="red", pocket="TR")})
    calls = [(r.t_s, s.decision) for r in results for s in r.steps]
    assert [d.pending is not None for _, d in calls] == [True, False, False]
    (asked_s, asked), (answered_s, answered), _ = calls
    assert asked.shot == answered.shot == 0 and asked_s < 8.6 and 8.6 + LATENCY_S <= answered_s < 8.6 + LATENCY_S + 0.07
    calls = [d for _, d in calls]
    assert compare(calls[1:], clip.expected) == []
    assert not [p for r in results for p in r.problems]


def test_inputs_given_together_keep_their_order():
    clip = load_clip("ficha/miss")
    results = live_run(clip, {5.5: lambda _: Concession(t_s=0, player="B")})
    (concession,) = [e for e in logged(results) if isinstance(e, Concession)]
    decisions = [s.decision for r in results for s in r.steps]
    assert decisions[-1].t_s == concession.t_s and decisions[-1].frame_over


def test_an_undo_takes_the_last_call_back_in_its_place_in_the_log():
    """ficha/frame: shot 0 is called at 4.07 s (given 0.4 s later); the operator undoes it at 4.6 s with a
    reason, before shot 1 starts (5.27 s). The undo's call names the call withdrawn and the reason, the
    match is where it was before shot 0, and the undo is in the log, so a replay of the log through the
    rules alone takes the call back too. An undo with nothing to take back is refused, reported and left
    out of the log."""
    clip = load_clip("ficha/frame")
    results = live_run(clip, {0.5: lambda _: UndoCall(t_s=0.0, reason="nothing called yet"),
                              4.6: lambda _: UndoCall(t_s=0.0, reason="the camera saw a practice stroke")})
    steps = [s for r in results for s in r.steps]
    undo = steps[1]
    assert isinstance(undo.decision, Undo) and undo.decision.withdrawn == steps[0].decision
    assert "practice stroke" in undo.decision.explanation and undo.decision.t_s >= 4.6
    assert undo.state == clip.referee().state  # before shot 0
    (kept,) = [e for e in logged(results) if isinstance(e, UndoCall)]
    assert kept.reason == "the camera saw a practice stroke" and kept.t_s >= 4.6
    assert [e for e in logged(results) if e is not kept] == clip.camera_events
    before_shot_1 = [e for e in logged(results) if e.t_s < 5.2]
    replayed = [s.decision for s in replay(clip.referee().engine, before_shot_1, clip.players, clip.options)]
    assert [d.explanation for d in replayed] == [s.decision.explanation for s in steps[:2]]
    problems = [p for r in results for p in r.problems]
    assert problems[0].startswith("undo at 0.5") and "no call to undo" in problems[0]


def test_a_gap_in_the_source_is_unobserved_and_nothing_inferred_falls_inside_it():
    """ficha/miss: the cue ball leaves T2 at 2.48 s; the stream delivers nothing from 2.2 s to 3.0 s. The
    gap enters the log as an unobserved span, the first frame after it reaches tracking marked invalid,
    the cushion contact inside it is left out (reported), and the shot's call waits for the operator."""
    clip = load_clip("ficha/miss")
    results = live_run(clip, {}, gaps=[(2.2, 3.0)])
    (span,) = [e for e in logged(results) if isinstance(e, Unobserved)]
    assert 2.2 - 1 / 30 < span.t_s <= 2.2 and 3.0 <= span.until_s < 3.0 + 1 / 30 and "stalled" in span.reason
    after = next(r for r in results if r.t_s >= 3.0)
    assert not after.valid and all(r.valid for r in results if r is not after)
    assert not [e for e in logged(results) if span.t_s < e.t_s <= span.until_s]
    assert not [e for e in logged(results) if isinstance(e, BallCushion)]
    assert any("ball_cushion at 2.48 s: inferred inside the unobserved gap" in p for r in results for p in r.problems)
    (call,) = [s.decision for r in results for s in r.steps]
    assert call.shot == 0 and call.pending is not None


class NoWatermark(TruthInferer):
    """An inferer that does not say how far it has given its events (no ``settled_s``)."""

    def __getattribute__(self, name):
        if name == "settled_s":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_the_inferers_own_unobserved_span_after_a_gap_is_kept():
    """A real inferer, seeing the frame after a gap marked invalid, says so with an unobserved span of its
    own that starts at that frame: it is logged, not taken for an event inferred inside the gap."""

    class Blind(TruthInferer):
        def step(self, tracks):
            out = super().step(tracks)
            if not tracks.observed:
                out.append(Unobserved(t_s=tracks.t_s, until_s=tracks.t_s, reason="the frames could not be read"))
            return out

    clip = load_clip("ficha/miss")
    results = live_run(clip, {}, gaps=[(5.5, 6.0)], inferer=Blind(clip, LATENCY_S))
    spans = [e for e in logged(results) if isinstance(e, Unobserved)]
    assert [s.reason for s in spans] == ["the stream stalled", "the frames could not be read"]
    assert not [p for r in results for p in r.problems]
    assert [e.kind for e in logged(results)] == ["shot_start", "ball_cushion", "at_rest", "ball_removed", "unobserved", "unobserved"]


def test_without_the_inferers_watermark_an_input_waits_for_the_next_camera_event():
    """ficha/frame: a warning given at 4.6 s, between shots: with no watermark it enters the log just
    before the next camera event (the strike at 5.27 s, given 0.4 s later): late, never out of order."""
    clip = load_clip("ficha/frame")
    results = live_run(clip, {4.6: lambda _: MisconductWarning(t_s=0, player="B", rule="5.8")}, inferer=NoWatermark(clip, LATENCY_S))
    (warning,) = [e for e in logged(results) if isinstance(e, MisconductWarning)]
    (entered,) = [r for r in results if warning in r.events]
    assert entered.t_s >= 5.27 + LATENCY_S and logged(results) == merge_by_time(clip.camera_events, [[warning]])


def test_with_the_installed_inferer_an_input_between_shots_enters_the_log_within_a_few_frames():
    """ficha/miss through the installed tracker and event inference (on the clip's true detections): a
    warning given at 0.6 s, before the strike at 1.0 s, enters the log within three frames, as the
    inferer's watermark passes it (with no watermark it would wait for the shot's events, given when the
    balls stop at 3.9 s); the log keeps its order and the call is the clip's own."""
    clip = load_clip("ficha/miss")
    results = live_run(clip, {0.6: lambda _: MisconductWarning(t_s=0, player="B", rule="5.8")},
                       inferer=EventInferer(clip.profile), tracker=BallTracker(clip.profile))
    (warning,) = [e for e in logged(results) if isinstance(e, MisconductWarning)]
    (entered,) = [r for r in results if warning in r.events]
    assert entered.t_s <= warning.t_s + 3 / 30 + 1e-9
    kinds = [e.kind for e in logged(results)]
    assert kinds.index("warning") < kinds.index("shot_start")
    assert not [p for r in results for p in r.problems]
    assert compare([s.decision for r in results for s in r.steps], clip.expected) == []


def test_an_inferer_that_breaks_its_watermark_is_a_contract_error():
    """An input entered the log once the watermark passed it; an event from before it given afterwards
    would put the log out of order."""

    class Lying(TruthInferer):
        @property
        def settled_s(self):
            return self._t + 1.0

        @settled_s.setter
        def settled_s(self, t):
            self._t = t

    clip = load_clip("ficha/frame")
    with pytest.raises(PipelineError, match="settled_s"):
        live_run(clip, {4.2: lambda _: Concession(t_s=0, player="B")}, inferer=Lying(clip, LATENCY_S))


def test_an_eager_run_gives_each_result_before_reading_the_next_frame():
    """Live, a frame's result (its call) is given at once, not after the next frame arrives (which a
    stalled stream may hold back for seconds); the end comes as one more result with no tracks of its
    own, so nothing is written twice."""
    clip = load_clip("ficha/miss")
    read = []

    def frames():
        for i, t in enumerate(clip.truth.t_s):
            read.append(i)
            yield Frame(i, float(t), BLANK)

    config = PipelineConfig(queue_frames=0, eager=True, assume_answers=False)
    results = []
    for r in run(frames(), stages(clip), config=config):
        assert r.end_only or read[-1] == r.index  # the frame after it is not read yet
        results.append(r)
    *frames_, end = results
    assert [r.index for r in frames_] == list(range(clip.truth.n_frames)) and not any(r.last for r in frames_)
    assert end.last and end.end_only and end.index == frames_[-1].index and end.tracks.rows() == []
    eager = [s.decision for r in results for s in r.steps]
    assert eager == [s.decision for r in run(truth_frames(clip), stages(clip)) for s in r.steps]


def test_only_operator_inputs_join_live():
    with pytest.raises(TypeError, match="operator inputs"):
        LiveInputs().put(Unobserved(t_s=1.0, until_s=2.0))
