"""Corrections (on SQLite and PostgreSQL): an override or an answer is put into the log after its shot,
the engines judge the rest again from it, and the automatic and corrected calls are both kept. And a
store made by the first schema is upgraded when opened."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import MetaData, insert

from cueref.cli import main
from cueref.store import MatchStore
from cueref.store.corrections import CorrectionError, correct, shot_call
from cueref.store.db import connect, head_revision, migrate, schema_revision
from tests.store.test_store import FICHA, record


def _call(store, match_id, shot, revision=None):
    return shot_call(store.decisions(match_id, revision), shot).data


def test_an_override_is_judged_with_the_rest_of_the_frame_and_both_calls_are_kept(store_location):
    with MatchStore(store_location) as store:
        m = record(store, FICHA).match_id
        automatic = [d.data for d in store.decisions(m)]
        assert _call(store, m, 3)["fouls"] == [] and _call(store, m, 3)["next_player"] == "A"

        # ficha 5.2: the referee saw on the replay that B's cue ball missed: a foul, A chooses the removal
        r = correct(store, m, 3, field="fouls", value="miss", reason="the cue ball missed y2 (replay)", author="Ref")
        assert r.automatic["fouls"] == [] and r.corrected["fouls"] == ["miss"]
        assert r.changed_shots == (4,) and "pending" in r.stopped
        pending = _call(store, m, 4)["pending"]
        assert pending["id"] == "s4:removal" and "5.2" in pending["text"]
        assert all(shot_call(store.decisions(m), n) is None for n in (5, 6, 7))  # not judged until it is answered

        r = correct(store, m, 4, answer="r1", reason="Bia chose r1")
        assert "r1" in r.corrected["removed"] and r.stopped is not None  # the frame now ends a shot earlier
        assert _call(store, m, 6)["frame_over"] and _call(store, m, 6)["winner"] == "A"  # 6.1, the fourth ball after the removal
        assert [f.last_shot for f in store.frames(m)][0] == 6

        # the automatic calls are untouched, the corrections keep both calls of their shot
        assert [d.data for d in store.decisions(m, 0)] == automatic
        assert store.match(m).revision == 2
        c3, c4 = store.corrections(m)
        assert (c3.shot, c3.event.field, c3.event.value, c3.reason, c3.author) == (3, "fouls", "miss", "the cue ball missed y2 (replay)", "Ref")
        assert c3.automatic == automatic[3] and c3.corrected["fouls"] == ["miss"]
        assert (c4.event.kind, c4.event.answer, c4.automatic["fouls"], c4.corrected["removed"]) == ("answer", "r1", [], ["r1"])


def test_a_correction_the_rules_refuse_changes_nothing(store_location):
    with MatchStore(store_location) as store:
        m = record(store, FICHA).match_id
        before = [d.data for d in store.decisions(m)]
        with pytest.raises(CorrectionError, match="field 'colour' is not one the engine accepts"):
            correct(store, m, 3, field="colour", value="blue", reason="typo")
        with pytest.raises(CorrectionError, match="reason"):
            correct(store, m, 3, field="fouls", value="miss", reason=" ")
        with pytest.raises(CorrectionError, match="no pending question"):
            correct(store, m, 3, answer="yes", reason="nothing was asked")
        with pytest.raises(CorrectionError, match="no shot 42: its shots are 0 to 7"):
            correct(store, m, 42, field="fouls", value="miss", reason="r")
        assert [d.data for d in store.decisions(m)] == before and store.corrections(m) == [] and store.match(m).revision == 0


def test_refereeing_the_match_again_applies_its_corrections_again(store_location):
    with MatchStore(store_location) as store:
        m = record(store, FICHA).match_id
        correct(store, m, 1, field="fouls", value="double_hit", reason="heard the double hit")
        corrected = [d.data for d in store.decisions(m)]
        again = record(store, FICHA)
        assert again.match_id == m and again.warning is None
        assert [d.data for d in store.decisions(m)] == corrected
        assert store.corrections(m)[0].corrected["fouls"] == ["double_hit"]


def test_a_store_made_by_the_first_schema_is_upgraded_when_opened(store_location):
    engine = connect(store_location, upgrade=False)
    migrate(engine, "0001")
    assert schema_revision(engine) == "0001"
    meta = MetaData()
    meta.reflect(engine)
    assert "corrections" not in meta.tables
    with engine.begin() as conn:
        from datetime import datetime, timezone

        now = datetime(2024, 5, 1, tzinfo=timezone.utc)
        conn.execute(insert(meta.tables["players"]).values(id=1, name="Ana"))
        conn.execute(insert(meta.tables["matches"]).values(id=1, video_sha256="ab" * 32, video_path="old.mp4", game="ficha", profile="ficha",
                                                            options={}, status="complete", played_at=now, created_at=now, updated_at=now))
        conn.execute(insert(meta.tables["match_players"]).values(match_id=1, seat=0, player_id=1))
    engine.dispose()
    with MatchStore(store_location) as store:
        assert schema_revision(store.engine) == head_revision() != "0001"
        (m,) = store.matches()
        assert (m.video_path, m.players, m.revision) == ("old.mp4", ("Ana",), 0)
        assert store.corrections(m.id) == []


def test_the_review_command_lists_shows_and_corrects(tmp_path, capsys):
    path = tmp_path / "m.sqlite"
    video = tmp_path / "frame.mp4"
    shutil.copyfile(Path(FICHA).with_suffix(".mp4"), video)
    with MatchStore(path) as store:
        m = record(store, FICHA, video=video).match_id
    assert main(["review", "--store", str(path)]) == 0
    assert "frame.mp4" in capsys.readouterr().out
    assert main(["review", str(m), "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "shot   3" in out and "ficha 4.2: legal shot, first contact y2" in out
    assert main(["review", str(video), "--shot", "3", "--set", "fouls=miss", "--reason", "replay", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "automatic call: ficha 4.2" in out and "corrected call: override fouls=miss (replay): ficha 5.2: miss" in out and "shots 4 changed" in out
    assert main(["review", str(m), "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[corrected]" in out and f"PENDING - ficha 5.2: which of A's balls was removed" in out and f"cueref review {m} --shot 4 --answer" in out
    assert main(["review", str(m), "--shot", "3", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "call that stands:" in out and "override fouls=miss: replay" in out
    assert main(["review", str(m), "--shot", "3", "--set", "fouls", "--reason", "x", "--store", str(path)]) == 1
    assert "must be FIELD=VALUE" in capsys.readouterr().err
