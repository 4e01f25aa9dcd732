"""The store's disk fills up while a match is being recorded: the video fails with a message that says
what to do, the store stays consistent (every call written is whole: its shot, its events; nothing
half-written), and once there is room again the batch completes the match without a duplicate.

The small disk is a size-limited tmpfs mounted for the test (root); without root it is SQLite's own
limit on the store's size (``PRAGMA max_page_count``), which fails a write exactly as a full disk does
(SQLITE_FULL). Only when neither can be made is the test skipped, saying why."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess

import pytest

import cueref.store.db as db
from cueref.store import MatchStore
from tests.batch._standins import batch, sample_list
from tests.robustness._reference import reference

FREE_KB = 150  # room left for the match on the small disk: a few shots' transactions (the write-ahead log grows with each)
FREE_PAGES = 5  # SQLite's limit: the pages the store may grow by (the whole sample frame takes 14)


def _tmpfs(folder):
    """``folder`` on a tmpfs with FREE_KB left once the store is made; yields what makes room, or None
    when no tmpfs can be mounted here."""
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
                                           capture_output=True).returncode != 0:
        return None
    MatchStore(folder / "m.sqlite").close()
    used_kb = int(subprocess.run(["df", "-k", "--output=used", str(folder)], capture_output=True, text=True, check=True).stdout.split()[-1])
    subprocess.run(["mount", "-o", f"remount,size={used_kb + FREE_KB}k", str(folder)], check=True)
    return lambda: subprocess.run(["mount", "-o", "remount,size=64m", str(folder)], check=True)


def _page_limit(folder, monkeypatch):
    """The store in ``folder`` may grow by FREE_PAGES pages (every connection the store opens is told)."""
    MatchStore(folder / "m.sqlite").close()
    with contextlib.closing(sqlite3.connect(folder / "m.sqlite")) as conn:
        limit = conn.execute("PRAGMA page_count").fetchone()[0] + FREE_PAGES
    pragmas = db._sqlite_pragmas

    def limited(dbapi_connection, record):
        pragmas(dbapi_connection, record)
        dbapi_connection.execute(f"PRAGMA max_page_count = {limit}")

    monkeypatch.setattr(db, "_sqlite_pragmas", limited)
    return lambda: monkeypatch.setattr(db, "_sqlite_pragmas", pragmas)


@pytest.fixture(params=["tmpfs", "sqlite-page-limit"])
def small_disk(request, tmp_path, monkeypatch):
    """A folder whose store can hardly grow, and what makes room."""
    folder = tmp_path / "small"
    folder.mkdir()
    if request.param == "sqlite-page-limit":
        yield folder, _page_limit(folder, monkeypatch)
        return
    make_room = _tmpfs(folder)
    if make_room is None:
        pytest.skip("no tmpfs: mounting one needs root (the SQLite page limit case runs instead)")
    try:
        yield folder, make_room
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_keeps_the_store_consistent_and_the_match_is_completed_once_there_is_room(small_disk, tmp_path, capsys):
    folder, make_room = small_disk
    listed = sample_list(tmp_path, ["ficha/frame"])
    log, calls = reference("ficha/frame")
    store = folder / "m.sqlite"
    args = [listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]
    assert batch(args) == 1
    out = capsys.readouterr().out
    assert "frame: failed: the match store could not be written (database or disk is full): free some space" in out

    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with MatchStore(store) as st:
        (m,) = st.matches()
        assert m.status == "recording"
        kept = [d.data for d in st.decisions(m.id)]
        events = [e.event for e in st.events(m.id)]
        shots = st.shots(m.id, tracks=True)
    assert 1 <= len(kept) < len(calls) and kept == calls[:len(kept)]
    assert events == log[:len(events)]
    assert [s.number for s in shots] == list(range(len(shots))) and len(shots) >= len(kept)
    assert all(s.last_seq < len(events) for s in shots)  # a shot is written with its events

    make_room()
    assert batch(args) == 0
    with MatchStore(store) as st:
        (m,) = st.matches()
        assert m.status == "complete"
        assert [d.data for d in st.decisions(m.id)] == calls
        assert [e.event for e in st.events(m.id)] == log
        assert [s.number for s in st.shots(m.id)] == list(range(8))
