"""cueref batch: sample clips refereed by the local process pool and by a real local Dask cluster
(worker processes) store the same matches; a second run skips what is complete and completes what a
crash left recording; a bad video or a dying worker never stops the others.

Vision and tracking are the stand-in stages built from each clip's ground truth
(``tests/pipeline/_standins.py``); the calibration keeper, the referee, the run files and the store
are the real ones. The calls are checked against each clip's ``expected_decisions`` (written by hand
from the rulebooks for these staged clips, see ``tests/test_sample_videos.py``)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3

import pytest

from cueref.compare import compare
from cueref.errors import UserError
from cueref.store import MatchStore, video_digest
from tests.batch._standins import batch, clip_of, sample_list, stored, truth_stages
from tests.pipeline._standins import load_clip

# one clip of each game, a 1080p one, a 29.97 fps one, a 60 fps one, and the operator's nominations of Sinuca Brasileira
CLIPS = ["bar-billiards/black-pin-down", "brasileira/penalty-missed", "ficha/off-table", "ficha/double-hit", "hard/two-pots"]


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    """The clips through the local pool (2 worker processes) and through a local Dask cluster (2 worker
    processes), each into a store of its own."""
    tmp = tmp_path_factory.mktemp("batch")
    listed = sample_list(tmp, CLIPS)
    runs = {}
    for engine in ("local", "dask"):
        store = tmp / f"{engine}.sqlite"
        code = batch([listed, "--out", tmp / engine, "--store", store, "--jobs", 2, "--engine", engine, "--no-video"])
        runs[engine] = (code, store, tmp / engine)
    return listed, runs


def test_the_local_pool_and_a_dask_cluster_store_the_same_matches(pooled):
    _, runs = pooled
    assert runs["local"][0] == runs["dask"][0] == 0
    local, dask = stored(runs["local"][1]), stored(runs["dask"][1])
    assert len(local) == len(CLIPS) and all(m["status"] == "complete" for m in local.values())
    assert local == dask


def test_each_clips_calls_are_those_its_rulebook_gives(pooled):
    _, runs = pooled
    matches = stored(runs["local"][1])
    for name in CLIPS:
        clip = load_clip(name)
        m = matches[video_digest(clip.video)]
        assert m["game"] == clip.game and m["players"] == clip.players
        assert [e for _, _, e in m["events"] if e not in clip.calls] == clip.camera_events
        made = [type("Call", (), data) for *_, data in m["decisions"]]
        assert compare(made, clip.expected) == [], name
        out = runs["local"][2] / name.split("/")[1]
        assert all((out / f).exists() for f in ("events.jsonl", "decisions.jsonl", "tracks.csv", "report.html")), out


def test_a_second_run_skips_what_is_complete_and_completes_what_a_crash_left_recording(pooled, tmp_path, capsys):
    listed, runs = pooled
    store = tmp_path / "m.sqlite"
    shutil.copy(runs["local"][1], store)
    before = stored(store)
    digest = video_digest(load_clip("brasileira/penalty-missed").video)
    with sqlite3.connect(store) as db:  # as a kill after its first call leaves it
        (match_id,) = db.execute("SELECT id FROM matches WHERE video_sha256 = ?", (digest,)).fetchone()
        db.execute("UPDATE matches SET status = 'recording' WHERE id = ?", (match_id,))
        (first_after,) = db.execute("SELECT MIN(seq) FROM events WHERE match_id = ? AND shot = 1", (match_id,)).fetchone()
        db.execute("DELETE FROM decisions WHERE match_id = ? AND seq >= 1", (match_id,))
        db.execute("DELETE FROM events WHERE match_id = ? AND seq >= ?", (match_id, first_after))
        db.execute("DELETE FROM shots WHERE match_id = ? AND number >= 1", (match_id,))
    capsys.readouterr()
    assert batch([listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]) == 0
    table = capsys.readouterr().out
    assert f"{len(CLIPS)} video(s): 1 refereed, {len(CLIPS) - 1} skipped" in table
    assert stored(store) == before  # completed, nothing duplicated
    assert not (tmp_path / "out" / "off-table").exists()  # a skipped video's run folder is not touched


def dying_stages(video, *args):
    """Stand-ins, except that the worker refereeing the two-pots clip dies as an out-of-memory kill would."""
    if video.endswith("two-pots.mp4"):
        os.kill(os.getpid(), signal.SIGKILL)
    return truth_stages(video, *args)


def test_a_worker_that_dies_fails_its_video_only(tmp_path, capsys):
    listed = sample_list(tmp_path, ["hard/two-pots", "ficha/suicide", "ficha/miss"])
    code = batch([listed, "--out", tmp_path / "out", "--store", tmp_path / "m.sqlite", "--jobs", 2, "--no-video"], stages=dying_stages)
    out = capsys.readouterr().out
    assert code == 1
    assert "two-pots: failed: the worker process died (killed by SIGKILL) while refereeing it" in out
    assert "3 video(s): 2 refereed, 1 failed" in out
    with MatchStore(tmp_path / "m.sqlite") as store:
        assert [m.status for m in store.matches()] == ["complete", "complete"]  # it died before its match began


def test_a_folder_with_a_bad_video_referees_the_others(tmp_path, capsys):
    folder = tmp_path / "night"
    (folder / "ficha").mkdir(parents=True)
    shutil.copy(load_clip("ficha/suicide").video, folder / "ficha" / "suicide.mp4")
    (folder / "ficha" / "notes.mp4").write_text("not a video, a note saved under the wrong name")
    code = batch([folder, "--game", "ficha", "--out", folder / "out", "--store", tmp_path / "m.sqlite", "--jobs", 1, "--no-video"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ficha/suicide  refereed" in out and "1 shots" in out
    (reason,) = [line for line in out.splitlines() if line.startswith("  ficha/notes: failed: ")]
    assert "notes.mp4" in reason and "not" in reason and "video" in reason
    # the run's own folder under the recordings is not taken for recordings the next time
    assert batch([folder, "--game", "ficha", "--out", folder / "out", "--store", tmp_path / "m.sqlite", "--jobs", 1]) == 1
    assert "2 video(s): 1 skipped, 1 failed" in capsys.readouterr().out


def test_clip_of_finds_a_copys_clip(tmp_path):
    copy = tmp_path / "ficha" / "miss.mp4"
    assert clip_of(str(copy)).name == "ficha/miss"


@pytest.mark.parametrize("line, message", [
    ("missing.mp4 --game ficha", r"videos.txt, line 2: .*missing.mp4: no such video file"),
    ("{video} --game snooker", r"videos.txt, line 2: argument --game: invalid choice: 'snooker'"),
    ("{video} --game ficha --option frames=2", r"videos.txt, line 2: .*ficha: option frames=2 must be an odd number"),
    ("{video} --game ficha --colour red", r"videos.txt, line 2: unrecognized arguments: --colour red"),
    ("'{video} --game ficha", r"videos.txt, line 2: No closing quotation"),
    ("{video}", r"videos.txt, line 2: no game for .*suicide.mp4: give --game"),
    ("{video} --game ficha --players A,,B", r"videos.txt, line 2: --players 'A,,B' has an empty name"),
    ("{video} --game ficha --calls nowhere.jsonl", r"videos.txt, line 2: .*nowhere.jsonl"),
])
def test_a_bad_list_line_is_refused_with_its_line_before_any_work(tmp_path, line, message):
    listed = tmp_path / "videos.txt"
    listed.write_text("# tonight\n" + line.format(video=load_clip("ficha/suicide").video) + "\n")
    with pytest.raises(UserError, match=message):
        batch([listed, "--store", tmp_path / "m.sqlite", "--out", tmp_path / "out"])
    assert not (tmp_path / "out").exists() and not (tmp_path / "m.sqlite").exists()


def test_a_video_named_twice_or_no_video_at_all_is_refused(tmp_path):
    video = load_clip("ficha/suicide").video
    listed = tmp_path / "videos.txt"
    listed.write_text(f"{video} --game ficha\n\n{video} --game ficha\n")
    with pytest.raises(UserError, match=r"line 3: .* is named twice \(first at .*line 1\)"):
        batch([listed])
    listed.write_text("# nothing yet\n")
    with pytest.raises(UserError, match="names no video"):
        batch([listed])
    with pytest.raises(UserError, match="no video file in this folder"):
        batch([tmp_path, "--game", "ficha"])
    with pytest.raises(UserError, match="is a video: `cueref referee"):
        batch([video, "--game", "ficha"])


def test_an_unreachable_dask_scheduler_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr("cueref.batch.SCHEDULER_TIMEOUT_S", 1.0)
    listed = sample_list(tmp_path, ["ficha/suicide"])
    with pytest.raises(UserError, match=r"--scheduler tcp://127.0.0.1:9: cannot reach a Dask scheduler there .*dask scheduler"):
        batch([listed, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--store", tmp_path / "m.sqlite"])
    with pytest.raises(UserError, match="add --engine dask"):
        batch([listed, "--scheduler", "tcp://127.0.0.1:9"])


def test_without_vision_and_tracking_the_batch_says_so_before_any_work(tmp_path, capsys):
    from cueref.cli import main
    from cueref.pipeline import missing_stages

    if not missing_stages():
        pytest.skip("this build has every stage")
    listed = sample_list(tmp_path, ["ficha/suicide"])
    assert main(["batch", str(listed), "--out", str(tmp_path / "out")]) == 2
    assert "1 video(s) found, but this build has no" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def pg_server():
    from tests.store import _pg

    server = _pg.start()
    if isinstance(server, str):
        pytest.skip(f"PostgreSQL batch test skipped: {server}")
    yield server
    server.stop()


def test_two_workers_into_a_postgresql_store_store_what_sqlite_holds(pooled, pg_server, tmp_path):
    """A league server's store: two workers begin their matches at once (the players' rows are made by
    whichever comes first) and the store holds what the SQLite one does."""
    listed, runs = pooled
    url = pg_server.create_database("cueref_batch")
    assert batch([listed, "--out", tmp_path / "out", "--store", url, "--jobs", 2, "--no-video"]) == 0
    assert stored(url) == stored(runs["local"][1])


def test_the_largest_videos_are_started_first(tmp_path):
    from cueref.batch import VideoTask, _longest_first
    from cueref.referee_run import RefereeJob

    sizes = {"short": 10, "long": 3000, "missing": None, "middle": 200}
    tasks = []
    for name, size in sizes.items():
        if size is not None:
            (tmp_path / f"{name}.mp4").write_bytes(b"x" * size)
        tasks.append(VideoTask(name, RefereeJob(video=str(tmp_path / f"{name}.mp4"), game="ficha"), where=name))
    assert [t.name for t in _longest_first(tasks)] == ["long", "middle", "short", "missing"]
