"""Exports of a stored match: the logs and calls as JSON Lines (the corrected log judged again gives the
calls that stand), tracks and statistics as CSV, a clip per shot cut from the video."""

from __future__ import annotations

import csv
import json

import numpy as np

from cueref.cli import main
from cueref.export import export_clips, export_data
from cueref.store import MatchStore, StoppingReferee, read_tracks_csv
from cueref.store.corrections import correct
from cueref.video import VideoReader
from rules import get_engine
from tests.store._truth import truth_tracks
from tests.store.test_store import FICHA, record
from tracking.events import read_events


def test_the_exports_give_back_the_log_the_calls_the_tracks_and_the_statistics(tmp_path):
    tracks = truth_tracks(FICHA.with_suffix(".truth.json"))
    with MatchStore(tmp_path / "m.sqlite") as store:
        m = record(store, FICHA, tracks=tracks).match_id
        correct(store, m, 1, field="fouls", value="double_hit", reason="heard it twice")  # then A's removal is asked at shot 2
        files = {p.name for p in export_data(store, m, tmp_path / "out")}
        stored_tracks = [s.tracks for s in store.shots(m, tracks=True)]
    assert files == {"events.jsonl", "events-corrected.jsonl", "decisions.jsonl", "decisions-automatic.jsonl", "tracks.csv",
                     "stats.csv", "shots.csv"}
    out = tmp_path / "out"
    header, events = read_events(out / "events.jsonl")
    assert events == read_events(FICHA.with_suffix(".events.jsonl"))[1] and header.game == "ficha"
    # the corrected log, judged again (up to the question it raises), gives exactly the calls that stand
    header, corrected = read_events(out / "events-corrected.jsonl")
    referee = StoppingReferee(get_engine("ficha"), list(header.players), header.options)
    again = [json.loads(json.dumps(d.to_dict())) for e in corrected for d in referee.feed(e)]
    assert again == [json.loads(line) for line in open(out / "decisions.jsonl")]
    assert [d for d in again if d["shot"] == 1][-1]["fouls"] == ["double_hit"] and again[-1]["pending"]["id"] == "s2:removal"
    automatic = [json.loads(line) for line in open(out / "decisions-automatic.jsonl")]
    assert len(automatic) == 8 and automatic[1]["fouls"] == []
    exported = read_tracks_csv(out / "tracks.csv")
    assert len(exported) == sum(len(t) for t in stored_tracks) < len(tracks)  # the shots' frames only
    assert np.abs(exported.xy_mm - np.concatenate([t.xy_mm for t in stored_tracks])).max() < 1e-3
    (stats_a, stats_b) = sorted(csv.DictReader(open(out / "stats.csv")), key=lambda r: r["player"])
    shots = list(csv.DictReader(open(out / "shots.csv")))
    judged = [r for r in shots if r["player"]]  # the shots after the pending question have no call, no player yet
    assert len(shots) == 8 and int(stats_a["shots"]) + int(stats_b["shots"]) == len(judged) == 3
    settled = [r for r in judged if r["pending"] == "False"]  # a pending call counts as a shot, nothing else of it
    assert sum(r["made"] == "True" for r in settled) == int(stats_a["pots_made"]) + int(stats_b["pots_made"])


def test_a_clip_per_shot_is_cut_from_the_video(tmp_path, capsys):
    with MatchStore(tmp_path / "m.sqlite") as store:
        m = record(store, FICHA).match_id
        (shot,) = store.shots(m, numbers=[2])
        (clip,) = export_clips(store, m, tmp_path, [2], pad_s=0.5)
    with VideoReader(clip) as r:
        frames = list(r)
    with VideoReader(FICHA.with_suffix(".mp4")) as src:
        fps = src.fps
    expected = (shot.t_end_s - shot.t_start_s + 1.0) * fps
    assert abs(len(frames) - expected) <= 2 and frames[0].t_s == 0.0
    assert main(["export", str(m), "--store", str(tmp_path / "m.sqlite"), "--what", "none", "--clips", "0,99", "--out", str(tmp_path)]) == 1
    assert "has no shot 99" in capsys.readouterr().err
