"""cueref.live.session: the live run and its consumers. Stopping a session ends the match as the end of
a video does; the store records the operator's inputs and an undo; calls are spoken with espeak-ng
where the machine has it (a stand-in program here, which writes down what it was asked to say)."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from cueref.errors import UserError
from cueref.live.board import spoken
from cueref.live.session import Announcer, InputError
from cueref.report.outputs import MatchOutputs
from cueref.store import MatchStore
from tests.live._live import Collected, standin_session, truth_source
from tests.pipeline._standins import TruthInferer, load_clip


class SeenOnly(TruthInferer):
    """At the end, only the events up to the last frame seen (the stand-in would give the whole clip's)."""

    def step(self, tracks):
        self.seen_s = tracks.t_s
        return super().step(tracks)

    def finish(self):
        self.latency_s = 0.0
        return super().step(type("T", (), {"t_s": self.seen_s})())


def test_stopping_a_session_ends_the_match_as_the_end_of_a_video_does():
    """ficha/frame stopped at 2.5 s, in the first shot: a warning given just before the stop, which no
    frame took in, enters the log, and the last result closes the open shot (the referee's finish: the
    shot is called unfinished)."""
    clip = load_clip("ficha/frame")
    source, reader = truth_source(clip, gates=(2.5,))
    collected = Collected()
    session = standin_session(clip, source, consumers=[collected], inferer=SeenOnly(clip, 0.2))
    worker = threading.Thread(target=session.run)
    worker.start()
    assert reader.gate_reached.wait(10)
    session.submit({"kind": "warning", "player": "B", "rule": "5.8"})
    session.stop()
    worker.join(10)
    assert not worker.is_alive()
    last = collected.results[-1]
    assert last.last and sum(r.last for r in collected.results) == 1
    assert [e.kind for e in last.events][-1] == "warning" and not [p for r in collected.results for p in r.problems]
    assert [(s.decision.shot, "5.8" in s.decision.rules) for s in last.steps] == [(None, True), (0, False)]
    assert session.board.finished


def test_the_store_records_live_inputs_and_an_undo(tmp_path):
    """brasileira/wrong-pocket refereed live with the nomination given on the console and the second
    call undone: the store holds the nomination among the events and every call, the undo included, and
    the review report is written."""
    clip = load_clip("brasileira/wrong-pocket")
    source, reader = truth_source(clip, gates=(9.2, 14.2))
    with MatchStore(tmp_path / "matches.sqlite") as store:
        match = MatchOutputs.open(tmp_path / "run", video=clip.video, game=clip.game, profile=clip.profile,
                                  players=clip.players, store=store, annotate=False, plots=False)
        session = standin_session(clip, source, consumers=[match])
        worker = threading.Thread(target=session.run)
        worker.start()
        assert reader.gate_reached.wait(10)
        session.submit({"kind": "nomination", "ball": "red", "pocket": "TR"})
        reader.go()
        assert reader.gate_reached.wait(10)
        session.undo("the referee saw the red nominated into BR")
        reader.go()
        worker.join(20)
        match.close()
        (summary,) = store.matches()
        events, decisions = store.events(summary.id), store.decisions(summary.id)
    assert match.report is not None and match.report.exists()
    assert any(e.event.kind == "nomination" and e.event.ball == "red" for e in events)
    explanations = [d.data["explanation"] for d in decisions]
    assert len(explanations) == 3 and explanations[2].startswith("undo: the call on shot 1 is withdrawn")


def test_an_input_for_another_game_is_refused_before_the_referee_sees_it():
    clip = load_clip("ficha/miss")
    source, _ = truth_source(clip)
    session = standin_session(clip, source)
    with pytest.raises(InputError, match="not an input of ficha"):
        session.submit({"kind": "nomination", "ball": "r1", "pocket": "TL"})
    source.close()


@pytest.fixture()
def fake_espeak(tmp_path, monkeypatch):
    said = tmp_path / "said.txt"
    program = tmp_path / "espeak-ng"
    program.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {said}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return said


def test_each_call_is_spoken_without_its_rule_numbers(fake_espeak):
    clip = load_clip("ficha/miss")
    source, _ = truth_source(clip)
    announcer = Announcer()
    session = standin_session(clip, source, consumers=[announcer])
    session.run()
    announcer._speaking.wait(5)
    (call,) = [c for c in session.board.calls]
    assert announcer.said == [call["spoken"]]
    assert fake_espeak.read_text().strip() == call["spoken"]
    assert not call["spoken"].startswith("ficha") and call["explanation"].startswith("ficha")


def test_speaking_without_espeak_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="apt install espeak-ng"):
        Announcer()


def test_a_question_is_spoken_as_a_question():
    from rules.base import Decision, Question

    d = Decision(t_s=1.0, shot=0, player="A", pending=Question("s0:first_contact", "first contact red or pink?", ("red", "pink")))
    assert spoken(d) == "Referee's question: first contact red or pink?"
