"""``cueref live --camera FILE --game GAME`` end to end with the stand-in stages in place of vision and
tracking, and its refusals, each made before the camera opens and before any folder is made."""

from __future__ import annotations

import pytest

import cueref.commands.live as live_command
from cueref.cli import main
from cueref.compare import compare
from cueref.store import MatchStore
from tests.pipeline._standins import load_clip, standin_loader
from tests.pipeline.test_referee_command import written_decisions
from tracking.events import read_events


@pytest.fixture()
def with_standins(monkeypatch):
    def use(clip):
        monkeypatch.setattr(live_command, "missing_stages", lambda: [])
        monkeypatch.setattr(live_command, "load_stages", standin_loader(clip))

    return use


def test_live_referees_a_file_serves_the_console_and_records_the_match(with_standins, tmp_path, capsys, monkeypatch):
    clip = load_clip("ficha/miss")
    with_standins(clip)
    store = tmp_path / "matches.sqlite"
    out = tmp_path / "run"
    assert main(["live", "--camera", str(clip.video), "--game", "ficha", "--out", str(out), "--port", "0",
                 "--store", str(store)]) == 0
    printed = capsys.readouterr()
    assert "console: http://127.0.0.1:" in printed.out and "scoreboard: http://127.0.0.1:" in printed.out
    assert "shot 0 at 1.00 s: cue struck" in printed.out and "review report:" in printed.out
    assert "0 gap(s) in the source" in printed.out.splitlines()[-1]
    _, events = read_events(out / "events.jsonl")
    assert events == clip.camera_events
    assert compare(written_decisions(out), clip.expected) == []
    assert (out / "report.html").exists() and not (out / "annotated.mp4").exists()
    with MatchStore(store) as s:
        (match,) = s.matches()
        assert match.status == "complete" and len(s.decisions(match.id)) == 1


@pytest.mark.parametrize("extra, message", [
    pytest.param(["--host", "0.0.0.0"], "add --allow-remote", id="off this machine"),
    pytest.param(["--stall", "0"], "--stall 0 must be a positive number of seconds", id="stall"),
    pytest.param(["--max-gap", "-1"], "--max-gap -1 must be a positive number", id="max gap"),
    pytest.param(["--port", "70000"], "--port 70000 is not a port number", id="port"),
    pytest.param(["--option", "frames=2"], "frames", id="rules option"),
])
def test_live_refuses_bad_arguments_before_the_camera_opens(tmp_path, capsys, extra, message):
    out = tmp_path / "run"
    assert main(["live", "--camera", str(tmp_path / "no-such-camera.mp4"), "--game", "ficha", "--out", str(out), *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_live_says_what_a_missing_camera_is(tmp_path, capsys):
    assert main(["live", "--camera", str(tmp_path / "nothing.mp4"), "--game", "ficha", "--out", str(tmp_path / "run")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_live_without_vision_and_tracking_says_what_can_be_done(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(live_command, "missing_stages", lambda: ["vision", "tracking"])
    clip = load_clip("ficha/miss")
    assert main(["live", "--camera", str(clip.video), "--game", "ficha", "--out", str(tmp_path / "run")]) == 2
    assert "no vision or tracking stage yet" in capsys.readouterr().out
