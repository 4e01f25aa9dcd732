"""hard/camera-bump in a batch: the camera is knocked mid-shot; the calibration keeper loses the table
and finds it again, the log and the store hold an unobserved span over the frames between, and the
shot's call waits for the operator (a question) instead of guessing. Nobody answers in a batch: at the
end of the video the camera's reading is taken as an assumed answer, a second call that says so, and
both calls are kept."""

from __future__ import annotations

from cueref.store import MatchStore
from tests.batch._standins import batch, sample_list
from tracking.events import Answer, Unobserved, read_events


def test_a_bumped_camera_is_recalibrated_and_the_unseen_moment_asked_about(tmp_path, capsys):
    listed = sample_list(tmp_path, ["hard/camera-bump"])
    store = tmp_path / "m.sqlite"
    assert batch([listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]) == 0
    assert "1 video(s): 1 refereed; 214 frames refereed, 1 shots, 2 calls in the store (1 pending an answer)" in capsys.readouterr().out
    _, events = read_events(tmp_path / "out" / "camera-bump" / "events.jsonl")
    (span,) = [e for e in events if isinstance(e, Unobserved)]
    assert 3.0 <= span.t_s < span.until_s < 3.5 and "camera moved" in span.reason and "recalibrated" in span.reason
    with MatchStore(store) as st:
        (m,) = st.matches()
        assert span in [e.event for e in st.events(m.id)]
        asked, assumed = st.decisions(m.id)
        assert asked.pending and asked.shot == 0 and not assumed.pending and assumed.shot == 0
        (answer,) = [e for e in events if isinstance(e, Answer)]
        assert answer.assumed and answer.question == asked.data["pending"]["id"]
