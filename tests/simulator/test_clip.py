"""Clips: the video, its ground truth and its event log agree with each other and with the match."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from calibration.table import resolve_profile
from simulator import physics as ph
from simulator.camera import mount_camera
from simulator.clip import Choreography, ClipOptions, frame_rate, frame_times, make_clip, render_still
from simulator.groundtruth import read_truth
from simulator.render import RenderOptions
from cueref.video import VideoReader
from tracking.events import event_to_dict, read_events

RES = (480, 270)


def small_match(profile):
    """A slow shot, then a hand lifts r1 off the table: 0.9 s to about 5.5 s."""
    world = ph.rack_ficha(profile).at_time(0.9)
    shot = ph.simulate(world, ph.Shot("cue", 200.0, 500.0), rng=1)
    lift = ph.remove_ball(shot.world_after, "r1", shot.timeline.t_end_s + 0.3)
    events = sorted(list(shot.events) + list(lift.events), key=lambda e: e.t_s)
    return SimpleNamespace(events=events, expected=[{"t_s": shot.timeline.t_end_s, "shot": 0, "fouls": []}], game="ficha",
                           players=("Ana", "Bia"), options={}, timeline=ph.join_timelines([shot.timeline, lift.timeline]))


def white_centroid(img: np.ndarray, around: np.ndarray, r_px: float) -> np.ndarray:
    """Centroid of the white ball's pixels (all three channels bright) near ``around``."""
    x0, y0 = (around - 2 * r_px).astype(int)
    x1, y1 = (around + 2 * r_px).astype(int) + 1
    win = img[y0:y1, x0:x1].astype(float)
    low = win.min(axis=2)
    w = np.clip((low - 60.0) / 60.0, 0, 1)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    return np.array([(w * xs).sum() / w.sum(), (w * ys).sum() / w.sum()])


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    profile = resolve_profile("ficha")
    run = small_match(profile)
    cam = mount_camera(profile, resolution=RES, height_mm=1600, tilt_deg=6, tilt_dir_deg=200, k1=-0.15)
    bump_at = run.timeline.t_end_s + 0.25
    opts = ClipOptions(arm_probability=0.0, bump_at_s=bump_at, tail_s=0.5,
                       render=RenderOptions(noise_sigma=1.5, flicker=0.01))
    out = tmp_path_factory.mktemp("clip") / "match.mp4"
    res = make_clip(run, profile, cam, out, fps=25, seed=4, options=opts)
    with VideoReader(res.video_path) as reader:
        frames = [(f.t_s, f.image) for f in reader]
    return SimpleNamespace(profile=profile, run=run, camera=cam, result=res, truth=read_truth(res.truth_path),
                           frames=frames, bump_at=bump_at)


def test_every_frame_is_in_the_video_at_its_time(clip):
    truth, frames = clip.truth, clip.frames
    assert len(frames) == truth.n_frames == clip.result.n_frames
    np.testing.assert_allclose([t for t, _ in frames], truth.t_s, atol=1e-4)
    np.testing.assert_allclose(truth.t_s, np.arange(truth.n_frames) / 25.0, atol=1e-9)
    assert truth.t_s[-1] >= clip.run.timeline.t_end_s + 0.5 - 0.04
    assert frames[0][1].shape == (RES[1], RES[0], 3)


def test_the_truth_says_where_the_balls_are_in_the_decoded_frames(clip):
    """After H.264, noise and flicker, the white ball sits where the truth's pixel centre says."""
    truth, frames, prof = clip.truth, clip.frames, clip.profile
    r = prof.ball_radius_mm
    checked = 0
    for k in range(0, truth.n_frames, 7):
        if truth.status["cue"][k] is None or truth.status["cue"][k].value != "on_table":
            continue
        occluded = [o for o in truth.raw["occluders"] if o["frame"] == k]
        if occluded:
            continue
        cam = truth.camera_at(k)
        x, y = truth.xy_mm["cue"][k]
        expect = cam.project(np.array([[x, y, r]]))[0]
        np.testing.assert_allclose(truth.px["cue"][k], expect, atol=2e-3)
        r_px = cam.fx / cam.height_mm * r
        found = white_centroid(frames[k][1], expect, r_px)
        assert np.linalg.norm(found - expect) < 1.0, (k, found, expect)
        checked += 1
    assert checked >= 10


def test_events_and_log_match_the_match(clip):
    truth, run = clip.truth, clip.run
    assert truth.raw["events"] == [event_to_dict(e) for e in run.events]
    for e, k in zip(run.events, truth.raw["event_frames"]):
        assert truth.t_s[k] >= e.t_s - 1e-9 and (k == 0 or truth.t_s[k - 1] < e.t_s)
    header, events = read_events(clip.result.events_path)
    assert header.game == "ficha" and header.profile == "ficha" and header.players == ("Ana", "Bia")
    assert header.source == "match.mp4"
    assert [event_to_dict(e) for e in events] == [event_to_dict(e) for e in run.events]
    assert truth.raw["expected_decisions"] == run.expected
    assert truth.raw["seed"] == 4 and truth.raw["generator"]["fps"] == "25/1"


def test_the_cue_strikes_at_the_shot_and_never_passes_through_the_ball(clip):
    truth, run, r = clip.truth, clip.run, clip.profile.ball_radius_mm
    start = next(e for e in run.events if e.kind == "shot_start")
    cue_frames = sorted({o["frame"] for o in truth.raw["occluders"] if o["kind"] == "cue"})
    assert cue_frames, "no cue drawn"
    assert truth.t_s[cue_frames[0]] == pytest.approx(start.t_s - 0.85, abs=0.05)
    assert truth.t_s[cue_frames[-1]] == pytest.approx(start.t_s + 0.9, abs=0.05)
    gaps = []
    for o in truth.raw["occluders"]:
        if o["kind"] != "cue":
            continue
        k = o["frame"]
        gap = np.hypot(*(np.array(o["tip_xy_mm"]) - truth.xy_mm["cue"][k])) - r
        gaps.append((truth.t_s[k], gap))
        assert gap > -0.5, (k, gap)
    # at the strike itself (between frames here) the tip touches the ball
    choreo = Choreography(clip.profile, run.timeline, run.events, np.random.default_rng(0), ClipOptions())
    sc = choreo.scene(start.t_s)
    tip = next(o.tip_xy_mm for o in sc.occluders if o.kind == "cue")
    assert np.hypot(tip[0] - start.xy_mm[0], tip[1] - start.xy_mm[1]) - r == pytest.approx(0.0, abs=1e-6)
    before = next(o.tip_xy_mm for o in choreo.scene(start.t_s - 0.2).occluders if o.kind == "cue")
    assert np.hypot(before[0] - start.xy_mm[0], before[1] - start.xy_mm[1]) - r > 40.0  # drawn back


def test_a_lifted_ball_is_in_hand_under_a_hand_then_gone(clip):
    truth = clip.truth
    s = [st.value if st else None for st in truth.status["r1"]]
    first_hand = s.index("in_hand")
    assert s[first_hand - 1] == "on_table"
    assert s[-1] == "pocketed"
    hands = {o["frame"] for o in truth.raw["occluders"] if o["kind"] == "hand"}
    in_hand = {k for k, v in enumerate(s) if v == "in_hand"}
    assert in_hand and in_hand <= hands
    assert np.mean([truth.hidden["r1"][k] for k in in_hand]) > 0.3  # the hand hides much of it
    assert truth.hidden["r1"][first_hand - 10] == 0.0
    # an empty hand comes in before the lift
    assert {first_hand - 3, first_hand - 1} <= hands
    # carried away: it rises and then moves off the table towards the nearer side
    last = max(in_hand)
    assert truth.h_mm["r1"][last] > 60
    assert not clip.profile.contains(tuple(truth.xy_mm["r1"][last]), 0.0) or truth.h_mm["r1"][last] > 100


def test_a_camera_bump_is_recorded_and_seen(clip):
    truth, frames = clip.truth, clip.frames
    cams = truth.raw["cameras"]
    assert len(cams) == 2
    k = cams[1]["from_frame"]
    assert truth.t_s[k] >= clip.bump_at > truth.t_s[k - 1]
    moved = np.array(cams[1]["table_corners_px"]) - np.array(cams[0]["table_corners_px"])
    assert np.abs(moved).max() > 2.0
    # a ball at rest keeps its table position but jumps in the picture, and the picture agrees
    np.testing.assert_allclose(truth.xy_mm["cue"][k], truth.xy_mm["cue"][k - 1])
    assert np.linalg.norm(truth.px["cue"][k] - truth.px["cue"][k - 1]) > 1.0
    r_px = truth.camera_at(k).fx / truth.camera_at(k).height_mm * clip.profile.ball_radius_mm
    found = white_centroid(frames[k][1], truth.px["cue"][k], r_px)
    assert np.linalg.norm(found - truth.px["cue"][k]) < 1.0


def test_ntsc_rate_and_byte_for_byte_truth(tmp_path):
    profile = resolve_profile("ficha")
    world = ph.rack_ficha(profile).at_time(0.2)
    shot = ph.simulate(world, ph.Shot("cue", 90.0, 900.0), rng=2)  # into the bottom middle pocket
    run = SimpleNamespace(events=list(shot.events), expected=[], game="ficha", players=("A", "B"), options={},
                          timeline=shot.timeline)
    cam = mount_camera(profile, resolution=(320, 180), rng=np.random.default_rng(1))
    opts = ClipOptions(tail_s=0.2, render=RenderOptions(texture=False))
    a = make_clip(run, profile, cam, tmp_path / "a.mp4", fps=29.97, seed=9, options=opts)
    b = make_clip(run, profile, cam, tmp_path / "b.mp4", fps=29.97, seed=9, options=opts)
    assert a.fps == frame_rate(29.97) == frame_rate(30000 / 1001)
    ta, tb = json.loads(a.truth_path.read_text()), json.loads(b.truth_path.read_text())
    tb["video"]["file"] = ta["video"]["file"]
    assert ta == tb
    assert a.truth_path.read_text().replace("a.mp4", "b.mp4") == b.truth_path.read_text()
    assert a.events_path.read_text().replace("a.mp4", "b.mp4") == b.events_path.read_text()
    t = np.asarray(ta["frames"]["t_s"])
    np.testing.assert_allclose(t, np.arange(len(t)) * 1001 / 30000, atol=1e-6)
    with VideoReader(a.video_path) as reader:
        got = [f.t_s for f in reader]
    np.testing.assert_allclose(got, t, atol=1e-4)
    # the cue ball dropped into BM: the truth has it pocketed at the end and the pot event with its frame
    assert ta["balls"][0]["id"] == "cue" and ta["balls"][0]["status"][-1][1] == "P"
    pot = next(i for i, e in enumerate(ta["events"]) if e["kind"] == "pot")
    assert ta["events"][pot]["pocket"] == "BM"


def test_frame_times_are_exact_multiples():
    t = frame_times(2.0, 29.97)
    assert len(t) == 60 and t[1] == pytest.approx(1001 / 30000, abs=1e-12)
    assert len(frame_times(2.0, 25)) == 51 and len(frame_times(1.0, 60)) == 61


def test_a_script_is_played_and_rendered(tmp_path):
    pytest.importorskip("simulator.script")
    profile = resolve_profile("ficha")
    script = {
        "game": "ficha", "players": ["A", "B"], "start_t_s": 0.9,
        "frames": [{"setup": {"positions": {"cue": [710, 405], "r1": [900, 405]}},
                    "steps": [{"shot": {"ball": "cue", "direction_deg": 0, "speed_mm_s": 600}, "pause_s": 0.2}]}],
    }
    cam = mount_camera(profile, resolution=(320, 180))
    res = make_clip(script, profile, cam, tmp_path / "s.mp4", fps=25, seed=1,
                    options=ClipOptions(tail_s=0.1, render=RenderOptions(texture=False)))
    header, events = read_events(res.events_path)
    kinds = [e.kind for e in events]
    assert kinds[0] in ("shot_start", "ball_placed") and "ball_ball" in kinds
    truth = read_truth(res.truth_path)
    assert set(truth.xy_mm) >= {"cue", "r1"}
    first = res.truth_path.read_text()
    # a parsed Script object is played the same way
    from simulator.script import parse_script

    again = make_clip(parse_script(script), profile, cam, tmp_path / "s.mp4", fps=25, seed=1,
                      options=ClipOptions(tail_s=0.1, render=RenderOptions(texture=False)))
    assert again.truth_path.read_text() == first


def test_a_still_is_the_clip_frame_before_compression(clip):
    k = clip.truth.raw["event_frames"][0] + 2  # just after the strike: the ball moves, the cue follows through
    opts = ClipOptions(arm_probability=0.0, tail_s=0.5, render=RenderOptions(noise_sigma=1.5, flicker=0.01))
    still = render_still(clip.run, clip.profile, clip.camera, clip.truth.t_s[k], fps=25, seed=4, options=opts)
    decoded = clip.frames[k][1]
    assert still.shape == decoded.shape
    assert np.abs(still.astype(float) - decoded.astype(float)).mean() < 3.0
    other = clip.frames[k + 6][1]
    assert np.abs(still.astype(float) - other.astype(float)).mean() > np.abs(still.astype(float) - decoded.astype(float)).mean()


def test_a_custom_table_is_named_so_that_it_can_be_read_back(tmp_path):
    from calibration.table import profile_from_spec

    spec = "1420x810,ball=52,corner=95,middle=105,groups=orange+yellow,name=ficha-orange"
    profile = profile_from_spec(spec)
    world = ph.rack_ficha(profile).at_time(0.2)
    shot = ph.simulate(world, ph.Shot("cue", 90.0, 900.0), rng=2)
    run = SimpleNamespace(events=list(shot.events), expected=[], game="ficha", players=("A", "B"), options={},
                          timeline=shot.timeline)
    cam = mount_camera(profile, resolution=(320, 180))
    res = make_clip(run, profile, cam, tmp_path / "c.mp4", fps=25, seed=1, profile_ref=spec,
                    options=ClipOptions(tail_s=0.1, render=RenderOptions(texture=False)))
    header, _ = read_events(res.events_path)
    assert header.profile == spec and read_truth(res.truth_path).raw["profile"] == spec
    assert resolve_profile(header.profile).groups == ("orange", "yellow")
