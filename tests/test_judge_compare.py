"""`cueref judge --check`: decisions are matched to expectations by shot, by input order, or in order."""

from types import SimpleNamespace

from cueref.calls import merge_by_time
from cueref.compare import compare
from rules.base import Decision, Question
from tracking.events import AtRest, Nomination, ShotStart


def d(shot, **kw):
    return Decision(t_s=1.0, shot=shot, player="A", **kw)


def test_matching_by_shot_and_by_input_order():
    decisions = [d(0, fouls=("miss",), next_player="B"), d(None, frame_over=True, winner="B"), d(1, next_player="A")]
    ok = [{"shot": 1, "next_player": "A"}, {"shot": None, "winner": "B"}, {"shot": 0, "fouls": ["miss"]}]
    assert compare(decisions, ok) == []
    bad = [{"shot": 0, "fouls": ["suicide"]}, {"shot": None, "winner": "A"}, {"shot": 7, "next_player": "A"}]
    problems = compare(decisions, bad)
    assert len(problems) == 3
    assert problems[0].startswith("shot 0: fouls expected ['suicide'], got ['miss']")
    assert "winner expected 'A', got 'B'" in problems[1]
    assert problems[2] == "shot 7: expected a decision, the engine made none"


def test_pending_decisions_are_not_matched():
    q = Question("q1", "first contact r2 or y1?", ("r2", "y1"))
    assert compare([d(0, pending=q)], [{"shot": 0, "next_player": "B"}]) == ["shot 0: expected a decision, the engine made none"]


def test_calls_come_before_camera_events_at_the_same_time():
    camera = [ShotStart(t_s=2.0, ball="cue"), AtRest(t_s=4.0)]
    calls = [Nomination(t_s=2.0, ball="red", pocket="TL"), Nomination(t_s=5.0, ball="blue", pocket="TM")]
    merged = merge_by_time(camera, [calls])
    assert [type(e).__name__ for e in merged] == ["Nomination", "ShotStart", "AtRest", "Nomination"]


def test_a_call_before_the_shot_is_read_from_prior():
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True, kw_only=True)
    class WithPrior(Decision):
        prior: tuple = ()

    touched = Decision(t_s=0.5, shot=None, player="B", fouls=("touched",), next_player="A")
    shot = WithPrior(t_s=1.0, shot=3, player="A", next_player="A", prior=(touched,))
    assert compare([shot], [{"shot": 3, "before_shot": True, "fouls": ["touched"], "next_player": "A"}]) == []
    problems = compare([shot], [{"shot": 3, "before_shot": True, "fouls": ["miss"]}])
    assert problems and problems[0].startswith("shot 3 (the call before it): fouls expected ['miss']")
    assert compare([WithPrior(t_s=1.0, shot=3, player="A")], [{"shot": 3, "before_shot": True}]) == [
        "shot 3 (the call before it): expected a decision, the engine made none"
    ]


def test_the_call_before_a_shot_read_back_from_json_is_compared_too():
    """Decisions read back from decisions.jsonl or the store carry ``prior`` as plain dicts."""
    shot = SimpleNamespace(t_s=2.0, shot=3, player="B", pending=None, fouls=[], next_player="B", frame_over=False,
                           explanation="ficha 2.4: legal shot", prior=[{"t_s": 1.0, "fouls": ["touched"], "next_player": "A",
                                                                        "explanation": "ficha 5.6: touched"}])
    assert compare([shot], [{"shot": 3, "before_shot": True, "fouls": ["touched"], "next_player": "A"}]) == []
    assert compare([shot], [{"shot": 3, "before_shot": True, "fouls": ["miss"]}]) != []
