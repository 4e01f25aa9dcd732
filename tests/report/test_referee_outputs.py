"""The referee's one consumer: cueref.pipeline's per-frame results, from a decoded sample clip through
the stand-in stages built from its ground truth, go into MatchOutputs.add, which stores the match,
writes the annotated video and, at the end, the report, exactly as cueref referee will."""

from __future__ import annotations

import contextlib
import json

from calibration.calibrate import calibrate_image
from cueref.cli import main
from cueref.pipeline import Stages, run
from cueref.report.outputs import MatchOutputs
from cueref.store import MatchStore
from cueref.video import VideoReader
from tests.pipeline._standins import TruthDetector, TruthInferer, TruthTracker, load_clip
from tests.pipeline.test_referee_command import with_standins  # noqa: F401  (the fixture that puts the stand-ins in cueref referee)


def test_the_pipelines_results_become_the_stored_match_the_annotated_video_and_the_report(tmp_path):
    clip = load_clip("ficha/ball-touched")
    with VideoReader(clip.video) as reader:
        first = reader.read()
        fps = reader.fps
    cal = calibrate_image(first.image, clip.profile)
    stages = Stages(TruthDetector(clip), TruthTracker(clip), TruthInferer(clip), clip.referee())
    made = []
    with VideoReader(clip.video) as reader, MatchOutputs.open(tmp_path / "out", video=clip.video, game=clip.game, profile=clip.profile,
                                                              players=clip.players, options=clip.options, calibration=cal, fps=fps,
                                                              store=tmp_path / "m.sqlite") as outputs, \
            contextlib.closing(run(reader, stages, clip.calls)) as results:
        for result in results:
            outputs.add(result)
            made += [json.loads(json.dumps(s.decision.to_dict())) for s in result.steps]
    assert outputs.report == tmp_path / "out" / "report.html" and outputs.report.exists()
    with VideoReader(tmp_path / "out" / "annotated.mp4") as a:
        assert a.info.frame_count == clip.truth.n_frames
    with MatchStore(tmp_path / "m.sqlite") as store:
        (m,) = store.matches()
        assert m.status == "complete" and m.annotated_video == str((tmp_path / "out" / "annotated.mp4").resolve())
        assert [d.data for d in store.decisions(m.id)] == made
        assert [e.event for e in store.events(m.id)] == [e for e in clip.camera_events]
        shots = store.shots(m.id, tracks=True)
        assert len(shots) == 2 and all(s.tracks is not None and len(s.tracks) for s in shots)
        assert set(shots[0].tracks.ball) == {b for b, st in clip.truth.status.items() if st[0] is not None and st[0].value == "on_table"}


def test_a_referee_run_folder_becomes_the_stored_match_and_its_report(with_standins, tmp_path):
    """cueref referee (the stand-in stages in place of vision and tracking) writes its run folder;
    cueref report --run reads it back: the same calls, the tracks, the annotated video and the page
    (the shortest sample: what is checked is the run folder's way into the store, not the clip)."""
    clip = load_clip("ficha/suicide")
    with_standins(clip)
    run_dir, store = tmp_path / "run", tmp_path / "m.sqlite"
    assert main(["-q", "referee", str(clip.video), "--game", "ficha", "--out", str(run_dir)]) == 0
    assert main(["-q", "report", "--run", str(run_dir), "--store", str(store)]) == 0
    assert (run_dir / "annotated.mp4").exists() and (run_dir / "report.html").exists()
    written = [json.loads(line) for line in (run_dir / "decisions.jsonl").read_text().splitlines()]
    with MatchStore(store) as st:
        (m,) = st.matches()
        assert [d.data for d in st.decisions(m.id)] == written
        assert all(s.tracks is not None and len(s.tracks) for s in st.shots(m.id, tracks=True))
