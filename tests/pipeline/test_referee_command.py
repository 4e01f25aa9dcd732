"""``cueref referee VIDEO --game GAME`` end to end with the stand-in stages in place of vision and
tracking: the progress bar, each shot's events and call, and the run's files."""

from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

import cueref.referee_run as referee_run
from cueref.cli import main
from cueref.compare import compare
from cueref.outputs import TRACKS_COLUMNS
from tests.pipeline._standins import load_clip, standin_loader
from tracking.events import read_events, write_events


def written_decisions(out):
    """decisions.jsonl read back, each decision's fields as attributes (what compare reads)."""
    return [SimpleNamespace(**json.loads(line)) for line in (out / "decisions.jsonl").read_text().splitlines()]


@pytest.fixture()
def with_standins(monkeypatch):
    """Make ``cueref referee`` run the stand-in stages of ``clip``."""

    def use(clip):
        monkeypatch.setattr(referee_run, "missing_stages", lambda: [])
        monkeypatch.setattr(referee_run, "load_stages", standin_loader(clip))

    return use


def test_referee_prints_each_shot_and_writes_its_files(with_standins, tmp_path, capsys):
    clip = load_clip("ficha/miss")
    with_standins(clip)
    out = tmp_path / "run"
    assert main(["referee", str(clip.video), "--game", "ficha", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    shot = lines.index(next(line for line in lines if line.startswith("shot 0 at 1.00 s: cue struck; cue off T2; at rest 3.92 s")))
    assert "shot   0 A:" in lines[shot + 1] and "5.2" in lines[shot + 1]  # the call quotes its rule
    assert "frame/s" in captured.err  # the progress bar's rate
    assert "1 shot(s) called" in lines[-1]

    header, events = read_events(out / "events.jsonl")
    assert header.game == "ficha" and header.source == str(clip.video)
    assert events == clip.camera_events
    assert compare(written_decisions(out), clip.expected) == []
    with open(out / "tracks.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == TRACKS_COLUMNS
    assert len({r[0] for r in rows[1:]}) == clip.truth.n_frames
    assert (out / "calibration.json").exists()


def test_referee_merges_a_calls_file(with_standins, tmp_path, capsys):
    """Sinuca Brasileira: the nominations come from --calls, as an operator's console would record them."""
    clip = load_clip("brasileira/wrong-pocket")
    with_standins(clip)
    calls = tmp_path / "calls.jsonl"
    write_events(calls, clip.calls)
    out = tmp_path / "run"
    assert main(["referee", str(clip.video), "--game", "brasileira", "--calls", str(calls), "--out", str(out), "--no-video"]) == 0
    _, events = read_events(out / "events.jsonl")
    assert [e for e in events if e in clip.calls] == clip.calls
    assert compare(written_decisions(out), clip.expected) == []
