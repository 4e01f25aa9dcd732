"""The referee's console lines (cueref.console.ShotPrinter): each shot's events with its call, and what
happens between a call and the next strike."""

from types import SimpleNamespace

from cueref.console import ShotPrinter
from rules.base import Decision, Step
from tracking.events import AtRest, BallPlaced, ShotStart


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
