"""The sample set: every entry names a real match, and a sample builds into a clip with its truth."""

import json
from dataclasses import replace

from rules import GAMES
from simulator.groundtruth import read_truth
from simulator.samples import SAMPLES, build_sample, corpus_specs, sample
from simulator.scenarios import SCENARIOS


def test_the_sample_set_is_well_formed():
    names = [s.name for s in SAMPLES]
    assert len(names) == len(set(names))
    for s in SAMPLES:
        assert s.game in GAMES
        assert s.scenario is None or s.scenario in SCENARIOS
        assert s.name.split("/")[0] in ("ficha", "brasileira", "bar-billiards", "hard")
    # the hard cases: low light, a camera bump and close colours are in the set
    assert any(s.low_light for s in SAMPLES) and any(s.bump_at_s for s in SAMPLES)
    assert any(s.profile and "orange" in s.profile for s in SAMPLES)
    assert {s.fps for s in SAMPLES} >= {25.0, 29.97, 30.0, 50.0, 60.0}
    assert {s.resolution for s in SAMPLES} == {(1280, 720), (1920, 1080)}


def test_corpus_specs_are_reproducible():
    a, b = corpus_specs(["ficha", "bar-billiards"], 3, seed=5), corpus_specs(["ficha", "bar-billiards"], 3, seed=5)
    assert a == b and len(a) == 6 and len({s.match_seed for s in a}) == 6
    assert corpus_specs(["ficha"], 3, seed=6) != corpus_specs(["ficha"], 3, seed=5)


def test_a_sample_builds_and_rebuilds_the_same_truth(tmp_path):
    spec = replace(sample("ficha/miss"), resolution=(320, 180))
    a = build_sample(spec, tmp_path / "a")
    b = build_sample(spec, tmp_path / "b")
    assert a.video_path == tmp_path / "a" / "ficha" / "miss.mp4" and a.video_path.exists()
    assert a.truth_path.read_bytes() == b.truth_path.read_bytes()
    truth = read_truth(a.truth_path)
    kinds = [e["kind"] for e in truth.raw["events"]]
    assert "shot_start" in kinds and "ball_removed" in kinds  # the miss, then the removal by hand
    assert json.loads(a.truth_path.read_text())["expected_decisions"]


def test_progress_is_reported_for_every_frame(tmp_path):
    calls = []
    spec = replace(sample("ficha/miss"), resolution=(320, 180))
    res = build_sample(spec, tmp_path, progress=lambda n, total: calls.append((n, total)))
    assert calls == [(n, res.n_frames) for n in range(res.n_frames)]
