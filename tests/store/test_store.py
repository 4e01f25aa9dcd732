"""The match store on SQLite and PostgreSQL: what a referee run writes is kept whole, a re-run on the
same video updates rather than duplicates, tracks are kept per shot, and a kill mid-match loses
nothing that was decided."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from cueref.store import MatchStore, StoreError, record_log
from cueref.store.db import connect
from rules import get_engine
from rules.base import replay
from tests.store._truth import truth_tracks
from tracking.events import AtRest, ShotStart, event_to_dict, read_events

ROOT = Path(__file__).resolve().parents[2]
FICHA = ROOT / "sample_videos" / "ficha" / "frame"
BAR = ROOT / "sample_videos" / "bar-billiards" / "visit"


def _paths(base: Path) -> tuple[Path, Path, Path]:
    return base.with_suffix(".mp4"), base.with_suffix(".events.jsonl"), base.with_suffix(".truth.json")


def record(store: MatchStore, base: Path, *, video: Path | None = None, events=None, tracks=None, **kw):
    mp4, log, _ = _paths(base)
    header, logged = read_events(log)
    return record_log(store, video=video or mp4, engine=get_engine(header.game, header.profile), game=header.game,
                      profile=header.profile, players=list(header.players), options=dict(header.options),
                      events=logged if events is None else events, tracks=tracks, **kw)


def test_a_recorded_match_holds_the_log_every_call_its_shots_and_frames(store_location):
    mp4, log, _ = _paths(FICHA)
    header, events = read_events(log)
    expected = [s.decision for s in replay(get_engine("ficha"), events, list(header.players), header.options)]
    with MatchStore(store_location) as store:
        result = record(store, FICHA)
        assert result.error is None
        m = store.match(result.match_id)
        assert (m.game, m.players, m.status, m.shots) == ("ficha", ("A", "B"), "complete", 8)
        assert [event_to_dict(e.event) for e in store.events(m.id)] == [event_to_dict(e) for e in events]
        stored = store.decisions(m.id)
        assert [d.data for d in stored] == [_plain(d.to_dict()) for d in expected]
        assert [d.summary for d in stored] == [d.summary() for d in expected]
        shots = store.shots(m.id)
        starts = [e for e in events if isinstance(e, ShotStart)]
        rests = [e for e in events if isinstance(e, AtRest)]
        assert [s.t_start_s for s in shots] == [e.t_s for e in starts]
        assert [s.t_end_s for s in shots] == [e.t_s for e in rests]
        assert [s.player for s in shots] == [d.player for d in expected]
        (frame,) = store.frames(m.id)
        assert (frame.first_shot, frame.last_shot, frame.breaker, frame.winner) == (0, 7, "A", expected[-1].winner)
        # the same match is found by the start of its video hash and by its video's path
        assert store.match(m.video_sha256[:10]).id == store.match(str(mp4)).id == m.id


def _plain(d):
    import json

    return json.loads(json.dumps(d))


def test_rerunning_the_same_video_even_renamed_updates_the_match_and_duplicates_nothing(store_location, tmp_path):
    mp4, _, _ = _paths(FICHA)
    copy = tmp_path / "renamed.mp4"
    shutil.copyfile(mp4, copy)
    with MatchStore(store_location) as store:
        first = record(store, FICHA)
        counts = (len(store.events(first.match_id)), len(store.decisions(first.match_id)), len(store.shots(first.match_id)))
        again = record(store, FICHA)
        renamed = record(store, FICHA, video=copy)
        assert first.match_id == again.match_id == renamed.match_id
        assert len(store.matches()) == 1
        assert (len(store.events(first.match_id)), len(store.decisions(first.match_id)), len(store.shots(first.match_id))) == counts
        assert store.match(first.match_id).video_path == str(copy.resolve())


def test_a_rerun_that_sees_less_replaces_what_changed_and_drops_what_it_no_longer_saw(store_location):
    _, log, _ = _paths(FICHA)
    _, events = read_events(log)
    cut = [i for i, e in enumerate(events) if isinstance(e, AtRest)][2] + 1  # the first three shots only
    with MatchStore(store_location) as store:
        full = record(store, FICHA)
        short = record(store, FICHA, events=events[:cut])
        assert short.match_id == full.match_id
        assert [e.event for e in store.events(full.match_id)] == events[:cut]
        assert [s.number for s in store.shots(full.match_id)] == [0, 1, 2]
        assert len(store.decisions(full.match_id)) == 3


def test_tracks_are_kept_per_shot_so_the_store_grows_with_shots_not_frames(store_location):
    _, _, truth = _paths(FICHA)
    tracks = truth_tracks(truth)
    with MatchStore(store_location) as store:
        result = record(store, FICHA, tracks=tracks)
        shots = store.shots(result.match_id, tracks=True)
        kept = 0
        for s in shots:
            want = tracks.between(s.t_start_s, s.t_end_s)
            assert s.tracks is not None and len(s.tracks) == len(want)
            assert (s.tracks.frame == want.frame).all() and (s.tracks.ball == want.ball).all()
            assert (s.tracks.state == want.state).all() and np.array_equal(s.tracks.t_s, want.t_s)
            assert np.abs(s.tracks.xy_mm - want.xy_mm).max() < 1e-3  # float32 in the store
            kept += len(s.tracks)
        # the frames between shots (hands re-spotting, players walking round) are not stored
        assert kept < 0.8 * len(tracks)
        assert store.shots(result.match_id)[0].tracks is None  # not unpacked unless asked for


def test_matches_are_listed_by_game_player_and_day(store_location):
    with MatchStore(store_location) as store:
        a = record(store, FICHA, played_at=datetime(2024, 3, 1, 20, 0, tzinfo=timezone.utc))
        b = record(store, BAR, played_at=datetime(2024, 4, 2, 21, 0, tzinfo=timezone.utc))
        ids = lambda **kw: [m.id for m in store.matches(**kw)]  # noqa: E731
        assert ids() == [a.match_id, b.match_id]
        assert ids(game="bar-billiards") == [b.match_id]
        assert ids(player="A") == [a.match_id, b.match_id] and ids(player="Nobody") == []
        assert ids(since=date(2024, 3, 2)) == [b.match_id]
        assert ids(until=date(2024, 3, 1)) == [a.match_id]


def test_store_locations_that_cannot_work_say_what_to_do(tmp_path):
    with pytest.raises(StoreError, match="is a folder"):
        MatchStore(tmp_path)
    with pytest.raises(StoreError, match="SQLite .* or PostgreSQL"):
        MatchStore("mysql://someone@localhost/league")
    with pytest.raises(StoreError, match="cannot open the match store .*postgresql://"):
        MatchStore("postgresql://nobody@127.0.0.1:9/league")
    with pytest.raises(StoreError, match="no match '99'"):
        with MatchStore(tmp_path / "m.sqlite") as store:
            store.match(99)


def test_a_store_made_by_a_newer_cueref_is_refused_not_damaged(tmp_path):
    path = tmp_path / "m.sqlite"
    MatchStore(path).close()
    engine = connect(path)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    engine.dispose()
    with pytest.raises(StoreError, match="newer cueref"):
        MatchStore(path)


def test_a_kill_mid_match_loses_nothing_decided_and_the_rerun_duplicates_nothing(store_location, tmp_path):
    """A real subprocess records the match slowly; SIGKILL after its third call; then the run again."""
    mp4, log, truth = _paths(FICHA)
    cmd = [sys.executable, "-m", "tests.store._write_match", store_location, str(log), str(mp4), str(truth)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*cmd, "0.04"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    decided = []
    try:
        for line in proc.stdout:
            if line.startswith("decided"):
                decided.append(line)
            if len(decided) == 3:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()

    header, events = read_events(log)
    expected = [_plain(s.decision.to_dict()) for s in replay(get_engine("ficha"), events, list(header.players), header.options)]
    with MatchStore(store_location) as store:
        (m,) = store.matches()
        assert m.status == "recording"
        stored = [d.data for d in store.decisions(m.id)]
        assert len(decided) <= len(stored) < len(expected)
        assert stored == expected[:len(stored)]  # every call written before the kill is there, once
        assert [e.event for e in store.events(m.id)] == events[:len(store.events(m.id))]

    rerun = subprocess.run([*cmd, "0"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    with MatchStore(store_location) as store:
        (m,) = store.matches()
        assert m.status == "complete"
        assert [d.data for d in store.decisions(m.id)] == expected
        assert [e.event for e in store.events(m.id)] == events
        assert [s.number for s in store.shots(m.id)] == list(range(8))
        assert sum(len(s.tracks) for s in store.shots(m.id, tracks=True)) > 0


def test_between_shots_the_recorder_holds_only_a_few_seconds_of_tracks(tmp_path):
    """Memory stays flat in the video's length: an idle table for 100 s (some frames see no ball)."""
    from cueref.store import MatchRecorder, TrackPoint, Tracks
    from cueref.store.recorder import IDLE_TRACKS_S

    with MatchStore(tmp_path / "m.sqlite") as store:
        rec = MatchRecorder.open(store, video=FICHA.with_suffix(".mp4"), game="ficha", profile="ficha", players=["A", "B"])
        for k in range(3000):
            t = k / 30
            rec.frame(k, t, Tracks.from_points([TrackPoint(k, t, "cue", "white", 700.0, 400.0, "at_rest", 1.0)]) if k % 7 else Tracks.empty())
        assert sum(len(t) for t in rec._tracks) <= IDLE_TRACKS_S * 30 + 1
