"""The referee's console lines (cueref.console.ShotPrinter): each shot's events with its call, and what
happens between a call and the next strike."""

from types import SimpleNamespace

from cueref.console import ShotPrinter
from rules.base import Decision, Step
from tracking.events import AtRest, BallCushion, BallPlaced, ShotStart


def result(events=(), decisions=()):
    return SimpleNamespace(events=tuple(events), steps=tuple(Step(d, None) for d in decisions), problems=())


def test_each_shot_is_printed_with_its_call_and_a_ball_placed_after_the_call_on_its_own():
    lines = []
    printer = ShotPrinter(lines.append)
    printer.add(result([ShotStart(t_s=1.0, ball="cue", xy_mm=(100.0, 100.0)), AtRest(t_s=3.0)]))
    printer.add(result(decisions=[Decision(t_s=3.0, shot=0, player="A", explanation="ficha 2.4: legal shot")]))
    printer.add(result([BallPlaced(t_s=4.0, ball="r1", xy_mm=(300.0, 200.0))]))
    printer.add(result([ShotStart(t_s=5.0, ball="cue", xy_mm=(100.0, 100.0))]))
    assert lines[0].startswith("shot 0 at 1.00 s: cue struck; at rest 3.00 s")
    assert "ficha 2.4: legal shot" in lines[1]
    assert lines[2] == "between shots: r1 placed (4.00 s)"
    assert printer.n_shots == 1 and len(lines) == 3

def _call(shot: int) -> SimpleNamespace:
    return SimpleNamespace(decision=SimpleNamespace(shot=shot, pending=None, summary=lambda: f"shot {shot} called"))


def test_events_after_a_shots_call_are_not_a_crash():
    """Shot 0 not judged (kept), shot 1 called at its first contact (a question): the cushion and the
    rest that follow belong to a shot already printed and are dropped, not a KeyError."""
    lines = []
    printer = ShotPrinter(lines.append)
    printer.add(SimpleNamespace(events=[ShotStart(t_s=1.0, ball="cue"), AtRest(t_s=2.0)], steps=[], problems=["not judged"]))
    printer.add(SimpleNamespace(events=[ShotStart(t_s=3.0, ball="cue")], steps=[_call(1)], problems=[]))
    printer.add(SimpleNamespace(events=[BallCushion(t_s=3.5, ball="cue", cushion="R"), AtRest(t_s=4.0)], steps=[], problems=[]))
    printer.add(SimpleNamespace(events=[ShotStart(t_s=5.0, ball="cue")], steps=[_call(2)], problems=[]))
    assert [line.split(":")[0] for line in lines if line.startswith("shot ") and " at " in line] == ["shot 1 at 3.00 s", "shot 2 at 5.00 s"]
    assert set(printer.shots) == {0}
