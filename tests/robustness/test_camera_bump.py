"""hard/camera-bump in a batch: the camera is knocked mid-shot; the calibration keeper loses the table
and finds it again, the log and the store hold an unobserved span over the frames between, and the
shot's call waits for the operator (a question) instead of guessing."""

from __future__ import annotations

from cueref.store import MatchStore
from tests.batch._standins import batch, sample_list
from tracking.events import Unobserved, read_events


def test_a_bumped_camera_is_recalibrated_and_the_unseen_moment_asked_about(tmp_path, capsys):
    listed = sample_list(tmp_path, ["hard/camera-bump"])
    store = tmp_path / "m.sqlite"
    assert batch([listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]) == 0
    assert "1 video(s): 1 refereed; 214 frames refereed, 1 shots, 1 calls in the store (1 pending an answer)" in capsys.readouterr().out
    _, events = read_events(tmp_path / "out" / "camera-bump" / "events.jsonl")
    (span,) = [e for e in events if isinstance(e, Unobserved)]
    assert 3.0 <= span.t_s < span.until_s < 3.5 and "camera moved" in span.reason and "recalibrated" in span.reason
    with MatchStore(store) as st:
        (m,) = st.matches()
        assert span in [e.event for e in st.events(m.id)]
        (call,) = st.decisions(m.id)
        assert call.pending and call.shot == 0
