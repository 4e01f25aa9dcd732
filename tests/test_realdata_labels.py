"""The hand labels of the real clips (tests/data/realdata_labels.json, realdata_events.json): the
independent reference that the detector (its real-footage figures) and the tracker (its real-clip figures) are scored against. See tests/data/README-realdata-labels.md for how they were made.

The files are checked on their own (shape, counts, classes, states, geometry, event times and ids);
where the clips are present (``$CUEREF_REALDATA``, else ``shared/realdata`` beside the repository; they are
not part of the repository) every labelled frame is checked to exist in its clip at its time and size, and
every sharp ball's label to sit on pixels of its colour. Nothing here uses the project's vision or
tracking code."""

import json
import math
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tests._realdata import REALDATA, REPOSITORY, need_source

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

CLASSES = {"white", "red", "yellow", "black", "orange", "pink", "green", "blue", "brown"}
STATES = {"on_table", "in_pocket", "occluded_partly", "blurred"}
POCKETS = {"TL", "TM", "TR", "BL", "BM", "BR"}
CUSHIONS = {"L", "R", "T1", "T2", "B1", "B2"}
HAND_KINDS = {"ball_removed", "ball_placed"}

# at least this many labelled frames per source (60 in all, spread over the clips)
MIN_FRAMES = {"billiard-ai-bfh": 28, "james-ecd-pool": 10, "ipi-final-br": 6}

LABELS = json.loads((DATA / "realdata_labels.json").read_text(encoding="utf-8"))
EVENTS = json.loads((DATA / "realdata_events.json").read_text(encoding="utf-8"))
FRAMES = LABELS["frames"]


def frame_id(f: dict) -> str:
    return f"{f['clip']}@{f['frame']}"


def clip_path(source: str, clip: str) -> Path:
    return REALDATA / source / clip


@lru_cache(maxsize=None)
def decoded(source: str, clip: str) -> tuple[tuple[float, ...], tuple[int, int]]:
    """Presentation times of every frame in decode order, and the frame size (PyAV, no conversion)."""
    import av

    with av.open(str(clip_path(source, clip))) as container:
        stream = container.streams.video[0]
        times = tuple(float(frame.time) for frame in container.decode(stream))
        return times, (stream.codec_context.width, stream.codec_context.height)


@lru_cache(maxsize=None)
def labelled_images(source: str, clip: str) -> dict[int, np.ndarray]:
    """The clip's labelled frames as RGB arrays, decoded in one pass."""
    import av

    wanted = {f["frame"] for f in FRAMES if (f["source"], f["clip"]) == (source, clip)}
    with av.open(str(clip_path(source, clip))) as container:
        out = {}
        for i, frame in enumerate(container.decode(video=0)):
            if i in wanted:
                out[i] = frame.to_ndarray(format="rgb24")
            if len(out) == len(wanted):
                break
        return out


def test_files_name_their_format_and_sources():
    assert (LABELS["format"], LABELS["version"]) == ("cueref-realdata-labels", 1)
    assert (EVENTS["format"], EVENTS["version"]) == ("cueref-realdata-events", 1)
    for source, repo in REPOSITORY.items():
        assert LABELS["sources"][source]["repository"] == repo
    assert EVENTS["sources"]["billiard-ai-bfh"]["repository"] == REPOSITORY["billiard-ai-bfh"]


def test_enough_frames_spread_over_the_sources_and_clips():
    assert len(FRAMES) >= 60
    per_source = Counter(f["source"] for f in FRAMES)
    for source, n in MIN_FRAMES.items():
        assert per_source[source] >= n, f"{source}: {per_source[source]} frames labelled, want {n}"
    assert len({f["clip"] for f in FRAMES if f["source"] == "ipi-final-br"}) == 3
    per_clip = Counter(f["clip"] for f in FRAMES if f["source"] == "billiard-ai-bfh")
    assert len(per_clip) == 14 and min(per_clip.values()) >= 2, per_clip
    assert len({frame_id(f) for f in FRAMES}) == len(FRAMES), "a frame is labelled twice"
    kinds = Counter(b["state"] for f in FRAMES for b in f["balls"])
    assert all(kinds[s] >= 1 for s in STATES), f"every state should be represented: {kinds}"


@pytest.mark.parametrize("f", FRAMES, ids=frame_id)
def test_frame_labels_are_well_formed(f):
    w, h = f["size"]
    assert f["source"] in REPOSITORY and f["frame"] >= 0 and f["t_s"] >= 0
    assert isinstance(f["note"], str)
    for b in f["balls"]:
        assert set(b) <= {"x_px", "y_px", "r_px", "class", "state", "note", "tol_px"}, b
        assert 0 <= b["x_px"] <= w - 1 and 0 <= b["y_px"] <= h - 1, f"ball outside the image: {b}"
        assert b["class"] in CLASSES and b["state"] in STATES, b
        assert 0.005 * w < b["r_px"] < 0.05 * w, f"implausible radius: {b}"
        assert 2 <= b.get("tol_px", 2) <= 5, b
    for nb in f["not_balls"]:
        assert set(nb) == {"x_px", "y_px", "what"} and nb["what"], nb
        assert 0 <= nb["x_px"] <= w - 1 and 0 <= nb["y_px"] <= h - 1, f"not-ball outside the image: {nb}"


@pytest.mark.parametrize("f", FRAMES, ids=frame_id)
def test_balls_do_not_overlap(f):
    """Two balls on the cloth cannot interpenetrate: a sign of a label put on the wrong blob."""
    on_cloth = [b for b in f["balls"] if b["state"] in ("on_table", "occluded_partly")]
    for i, a in enumerate(on_cloth):
        for b in on_cloth[i + 1:]:
            gap = math.hypot(a["x_px"] - b["x_px"], a["y_px"] - b["y_px"]) - a["r_px"] - b["r_px"]
            assert gap > -3.0, f"{a} and {b} overlap by {-gap:.1f} px"


@pytest.mark.parametrize("f", FRAMES, ids=frame_id)
def test_labelled_frame_exists_in_its_clip(f):
    need_source(f["source"])
    times, size = decoded(f["source"], f["clip"])
    assert f["frame"] < len(times), f"{f['clip']} has {len(times)} frames, not {f['frame'] + 1}"
    assert list(size) == f["size"]
    assert f["t_s"] == pytest.approx(times[f["frame"]], abs=0.0015)


# what a sharp ball's body looks like, per class: RGB medians over the annulus between 0.45 and 0.8
# radii (the centre is often a washed-out highlight); generous, as lamps and glare differ
def _looks_like(cls: str, rgb: np.ndarray) -> bool:
    r, g, b = (float(v) for v in rgb)
    if cls == "white":
        return min(r, g, b) > 140 and max(r, g, b) - min(r, g, b) < 90
    if cls == "red":
        return r > g + 60 and r > b + 40
    if cls == "yellow":
        return r > b + 50 and g > b + 40
    if cls == "black":
        return max(r, g, b) < 110
    return True


SHARP = [(f, b) for f in FRAMES for b in f["balls"] if b["state"] == "on_table"]


@pytest.mark.parametrize("f, ball", SHARP, ids=[f"{frame_id(f)}-{b['class']}@{b['x_px']:.0f},{b['y_px']:.0f}" for f, b in SHARP])
def test_sharp_ball_label_sits_on_its_colour(f, ball):
    need_source(f["source"])
    img = labelled_images(f["source"], f["clip"])[f["frame"]]
    yy, xx = np.mgrid[: img.shape[0], : img.shape[1]]
    d = np.hypot(xx - ball["x_px"], yy - ball["y_px"]) / ball["r_px"]
    body = np.median(img[(d >= 0.45) & (d <= 0.8)], axis=0)
    assert _looks_like(ball["class"], body), f"the label's body colour is {body}, not {ball['class']}"
    # the label is centred on its ball: the body colour reaches equally far in all four directions
    reach = []
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        steps = np.arange(0.7, 1.35, 0.05) * ball["r_px"]  # past markings and highlights near the centre
        xs = np.clip(np.round(ball["x_px"] + dx * steps).astype(int), 0, img.shape[1] - 1)
        ys = np.clip(np.round(ball["y_px"] + dy * steps).astype(int), 0, img.shape[0] - 1)
        far = np.abs(img[ys, xs].astype(float) - body).max(axis=1) > 60
        reach.append(steps[np.argmax(far)] if far.any() else steps[-1])
    assert max(abs(reach[0] - reach[1]), abs(reach[2] - reach[3])) < 0.5 * ball["r_px"], \
        f"the ball's colour ends at {np.round(reach, 1)} px right/left/down/up of the label"


def _clips_of(source: str) -> set[str]:
    return {e["clip"] for e in EVENTS["clips"] if e["source"] == source}


def test_every_billiard_ai_clip_has_event_labels():
    labelled = {f["clip"] for f in FRAMES if f["source"] == "billiard-ai-bfh"}
    assert _clips_of("billiard-ai-bfh") == labelled and len(labelled) == 14


@pytest.mark.parametrize("clip", EVENTS["clips"], ids=lambda c: c["clip"])
def test_event_labels_are_consistent(clip):
    end_s = (clip["frames"] - 1) / clip["fps"] + 0.002  # times are rounded to the millisecond
    assert clip["shots"], "every clip shows a shot"
    previous_strike = -1.0
    for shot in clip["shots"]:
        t0 = shot["strike_t_s"]
        assert previous_strike < t0 <= end_s and isinstance(shot["sure"], bool)
        previous_strike = t0
        first = shot["first_contact"]
        if first is not None:
            assert first["ball"] in CLASSES - {"white"} and t0 < first["t_s"] <= end_s
        for c in shot["cushions"]:
            assert c["cushion"] in CUSHIONS and c["ball"] in CLASSES and t0 < c["t_s"] <= end_s, c
        for p in shot["pots"] + shot["not_pots"]:
            assert p["pocket"] in POCKETS and p["ball"] in CLASSES and t0 < p["t_s"] <= end_s, p
        for h in shot["hand_events"]:
            assert h["kind"] in HAND_KINDS and h["ball"] in CLASSES and t0 < h["t_s"] <= end_s, h
        potted = [p["ball"] for p in shot["pots"]]
        assert len(potted) == len(set(potted)), "a ball is potted twice in one shot"
        if first is None:
            assert not potted or potted == ["white"], "an object ball dropped with no first contact"
        for event in shot["cushions"] + shot["pots"] + shot["not_pots"] + shot["hand_events"]:
            assert isinstance(event.get("sure", True), bool) and isinstance(event.get("note", ""), str)
    for span in clip["over_table"]:
        assert 0 <= span["from_t_s"] < span["to_t_s"] <= end_s, span


@pytest.mark.parametrize("clip", EVENTS["clips"], ids=lambda c: c["clip"])
def test_event_clip_matches_the_video(clip):
    need_source(clip["source"])
    times, _ = decoded(clip["source"], clip["clip"])
    assert len(times) == clip["frames"]
    assert (len(times) - 1) / (times[-1] - times[0]) == pytest.approx(clip["fps"], rel=0.01)


RELABEL = LABELS["relabel_blind"]


def relabel_distances_px() -> np.ndarray:
    return np.array([math.dist(r["first_xy_px"], r["second_xy_px"]) for r in RELABEL])


def test_blind_relabel_agrees_with_the_labels():
    """12 balls read a second time, blind, by eye only: the reference's own repeatability."""
    assert len(RELABEL) >= 10 and {r["source"] for r in RELABEL} == set(REPOSITORY)
    by_id = {frame_id(f): f for f in FRAMES}
    for r in RELABEL:
        balls = by_id[f"{r['clip']}@{r['frame']}"]["balls"]
        nearest = min(math.dist((b["x_px"], b["y_px"]), r["second_xy_px"]) for b in balls)
        assert nearest <= 3.0, f"{r}: no label within 3 px of the second reading"
    d = relabel_distances_px()
    assert np.median(d) <= 1.0 and d.max() <= 3.0, d


def summary() -> str:
    """Totals of both files and the blind re-label disagreement (`python tests/test_realdata_labels.py`)."""
    lines = []
    for source in REPOSITORY:
        frames = [f for f in FRAMES if f["source"] == source]
        states = Counter(b["state"] for f in frames for b in f["balls"])
        lines.append(f"{source}: {len(frames)} frames, {sum(len(f['balls']) for f in frames)} balls "
                     f"({', '.join(f'{n} {s}' for s, n in sorted(states.items()))}), "
                     f"{sum(len(f['not_balls']) for f in frames)} not-balls")
    lines.append(f"all: {len(FRAMES)} frames, {sum(len(f['balls']) for f in FRAMES)} balls, "
                 f"{sum(len(f['not_balls']) for f in FRAMES)} not-balls "
                 f"({dict(Counter(n['what'].split(' (')[0] if not n['what'].startswith('pocket') else 'pocket' for f in FRAMES for n in f['not_balls']))})")
    for clip in EVENTS["clips"]:
        n = Counter()
        for shot in clip["shots"]:
            n["shot"] += 1
            n["first contact"] += shot["first_contact"] is not None
            for key in ("cushions", "pots", "not_pots", "hand_events"):
                n[key.replace("_", " ")] += len(shot[key])
            n["not sure"] += (not shot["sure"]) + sum(not e.get("sure", True) for key in
                                                       ("cushions", "pots", "not_pots", "hand_events") for e in shot[key])
        lines.append(f"{clip['clip']}: " + ", ".join(f"{v} {k}" for k, v in n.items() if v))
    d = relabel_distances_px()
    lines.append(f"blind re-label of {len(d)} balls: mean {d.mean():.2f} px, median {np.median(d):.2f} px, "
                 f"RMS {np.sqrt(np.mean(d ** 2)):.2f} px, max {d.max():.2f} px, {int((d <= 2).sum())} within 2 px")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
