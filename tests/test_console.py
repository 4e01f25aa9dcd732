"""The terminal's shot printer (cueref.console.ShotPrinter)."""

from types import SimpleNamespace

from cueref.console import ShotPrinter
from tracking.events import AtRest, BallCushion, ShotStart


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
