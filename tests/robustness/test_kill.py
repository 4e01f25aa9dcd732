"""A batch killed mid-match (SIGKILL, a real subprocess with its pool of workers) and run again: no call
decided before the kill is lost or duplicated, the workers die with the batch, and the second run
completes the match the kill interrupted while skipping the one already complete."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from cueref.store import MatchStore, video_digest
from tests.batch._standins import batch, sample_list
from tests.pipeline._standins import ROOT, load_clip
from tests.robustness._reference import reference


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def progress(store: Path) -> dict[str, tuple[str, int]]:
    """Each match's status and number of calls, read while the batch writes."""
    if not store.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            rows = db.execute("SELECT m.video_sha256, m.status, COUNT(d.seq) FROM matches m LEFT JOIN decisions d "
                              "ON d.match_id = m.id GROUP BY m.id").fetchall()
    except sqlite3.OperationalError:  # the schema is not made yet
        return {}
    return {sha: (status, n) for sha, status, n in rows}


def test_a_killed_batch_resumes_without_losing_or_duplicating_a_call(tmp_path):
    listed = sample_list(tmp_path, ["ficha/ball-touched", "ficha/suicide"])
    store = tmp_path / "m.sqlite"
    touched, suicide = (video_digest(load_clip(n).video) for n in ("ficha/ball-touched", "ficha/suicide"))
    cmd = [sys.executable, "-m", "tests.batch._batch_cli", str(listed), "--out", str(tmp_path / "out"), "--store", str(store),
           "--jobs", "2", "--no-video"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUEREF_TEST_FRAME_DELAY_S": "0.02"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            seen = progress(store)
            if seen.get(suicide, ("", 0))[0] == "complete" and seen.get(touched, ("", 0))[1] >= 1:
                break
            time.sleep(0.2)
        assert proc.poll() is None, f"the batch ended before the kill: {proc.stderr.read()}"
        workers = children(proc.pid)
        assert len(workers) >= 2
        proc.send_signal(signal.SIGKILL)  # the batch itself, not its workers
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(1.0)
    assert not [w for w in workers if alive(w)], "a worker outlived the batch it belonged to"

    log, calls = reference("ficha/ball-touched")
    with MatchStore(store) as st:
        by_video = {m.video_sha256: m for m in st.matches()}
        assert by_video[suicide].status == "complete" and by_video[touched].status == "recording"
        kept = [d.data for d in st.decisions(by_video[touched].id)]
        assert 1 <= len(kept) < len(calls)
        assert kept == calls[:len(kept)]  # every call written before the kill is there, once
        assert [e.event for e in st.events(by_video[touched].id)] == log[:len(st.events(by_video[touched].id))]

    assert batch([listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]) == 0
    with MatchStore(store) as st:
        m = st.match(touched)
        assert m.status == "complete"
        assert [d.data for d in st.decisions(m.id)] == calls
        assert [e.event for e in st.events(m.id)] == log
        assert [s.number for s in st.shots(m.id)] == list(range(2))
        assert len(st.matches()) == 2
