"""The end of a shot, which live is the moment of the call (``docs/live.md``): how soon after the last ball
stops the inferer says the shot is over, and what its analysis costs (it runs on the frame that gives the
call, so every millisecond of it is a millisecond of the call's delay). The shortcuts taken must give
exactly what the plain computation gives."""

import math

import numpy as np
import pytest

from tests.tracking._scripted import Leg, Scene, detections, rect
from tests.tracking.test_infer import FICHA, _roll_into, cue_stick, events_of, of, still
from tracking import geometry
from tracking.events import AtRest, BallTouched, Pot, ShotStart
from tracking.geometry import Outlines, _outline_points, polygon_distance
from tracking.infer import EventInferer
from tracking.infer import shot as shot_module
from tracking.infer.segments import Piece
from tracking.infer.shot import BallMotion
from tracking.tracker import BallTracker
from vision.types import FrameDetections


def test_an_outline_is_walked_in_steps_no_longer_than_asked_through_its_corners():
    square = rect(0.0, 0.0, 100.0, 20.0)
    pts = _outline_points(square, 8.0)
    for corner in square:
        assert np.any(np.all(pts == corner, axis=1))
    # every point lies on the outline, and each side is covered without a hole wider than the step
    for (x0, y0), (x1, y1) in zip(square, np.roll(square, -1, axis=0)):
        rel = pts - (x0, y0)
        on = pts[np.abs((x1 - x0) * rel[:, 1] - (y1 - y0) * rel[:, 0]) < 1e-9]
        along = np.sort(np.hypot(on[:, 0] - x0, on[:, 1] - y0))
        along = along[along <= math.hypot(x1 - x0, y1 - y0) + 1e-9]
        assert np.diff(along).max() <= 8.0 + 1e-9
    assert len(pts) == 4 + 2 * (13 - 1) + 2 * (3 - 1)  # 100 mm sides: 12 points between corners; 20 mm: 2


def test_the_nearest_outline_is_the_one_polygon_distance_finds():
    rng = np.random.default_rng(5)
    polys = [rect(*xy, *(xy + rng.uniform(10, 300, 2))) for xy in rng.uniform(0, 1200, (6, 2))]
    outlines = Outlines(polys)
    for xy in rng.uniform(-100, 1500, (300, 2)):
        exact = min(polygon_distance(p, xy[None])[0] for p in polys)
        for within in (26.0, 60.0):
            assert outlines.nearest(xy, within) == (exact if exact <= within else math.inf)


def test_a_path_is_where_the_ball_is_at_each_time():
    m = BallMotion(0, "cue", True, np.array([100.0, 200.0]), 1.0, moved=True, t_start=1.0)
    m.pieces = [Piece(0, 5, 1.0, 1.0, 1.5, np.array([100.0, 400.0, -50.0]), np.array([200.0, 0.0, 0.0]), 1.0),
                Piece(6, 9, 1.6, 1.6, 2.0, np.array([290.0, -300.0, 10.0]), np.array([200.0, 100.0, 0.0]), 1.0)]
    ts = np.linspace(0.5, 3.0, 101)
    for r1 in (None, np.array([180.0, 240.0])):
        m.r1 = r1
        assert np.array_equal(m.path(ts), np.array([m.at(t) for t in ts]))


def test_a_shots_cues_are_looked_for_once_a_frame(monkeypatch):
    # several balls near the cue and an arm beside it: every ball the analysis asks about looks at the
    # same frames; the cue search among their occluders (the costliest part of the analysis) is done once
    scene = Scene()
    for k, ball in enumerate(("r1", "r2", "r3", "y1")):
        still(scene, ball, (300.0 + 60.0 * k, 520.0))
    t0 = 1.5
    scene.add("cue", "white", Leg(0.0, (400.0, 450.0)), Leg(t0, (400.0, 450.0), (900.0, 0.0), 1500.0))
    cue_stick((400.0, 450.0), 0.0, t0, scene)
    scene.occluders.append((t0 - 0.8, t0 + 0.3, rect(-200.0, 300.0, 250.0, 400.0)))  # an arm
    searched: list[int] = []

    def counted(polygons, *args):
        searched.append(id(polygons))
        return geometry.cue_sticks(polygons, *args)

    monkeypatch.setattr(shot_module, "cue_sticks", counted)
    tracker, inferer = BallTracker(FICHA), EventInferer(FICHA)
    evs = []
    for d in detections(scene, FICHA, 30.0, 3.5):
        evs += inferer.step(tracker.update(d))
    assert [e.kind for e in evs if e.kind in ("shot_start", "at_rest")] == ["shot_start", "at_rest"]
    assert searched and len(searched) == len(set(searched))


def _shot_end(scene, frames):
    """The frame time at which the shot's at_rest came out, and the events."""
    tracker, inferer = BallTracker(FICHA), EventInferer(FICHA)
    out = []
    for d in frames:
        out += [(e, d.t_s) for e in inferer.step(tracker.update(d))]
    emitted = next((t for e, t in out if isinstance(e, AtRest)), None)
    return emitted, [e for e, _ in out]


def test_a_still_tables_repeated_frames_count_as_seen_still():
    # once everything stops, a rendered (or very clean) picture no longer changes: vision marks the frames
    # repeated (no new measurement); the table is seen still all the same, and the shot ends on time
    scene = Scene()
    still(scene, "r1", (300.0, 200.0))
    v, decel, t0 = 1200.0, 1200.0, 1.5
    t_stop = t0 + v / decel
    scene.add("cue", "white", Leg(0.0, (400.0, 500.0)), Leg(t0, (400.0, 500.0), (v, 0.0), decel))
    cue_stick((400.0, 500.0), 0.0, t0, scene)
    frames = detections(scene, FICHA, 30.0, 5.0)
    for k, d in enumerate(frames):  # from the stop on, only one frame in six differs from the one before
        if d.t_s > t_stop + 0.05 and k % 6:
            prev = frames[k - 1]
            frames[k] = FrameDetections(d.frame, d.t_s, prev.balls, prev.pins, prev.occluders, prev.valid, repeated=True)
    emitted, _ = _shot_end(scene, frames)
    assert emitted is not None and emitted - t_stop <= 0.5


def test_a_ball_read_in_the_air_as_it_tips_into_a_pocket_has_dropped():
    # in its last frame a ball going down a pocket is read in the air, off its way (the part of it still in
    # view): the tracker bends its velocity away from the pocket; the shot need not wait for the tracker to
    # give it up (half a second)
    tr = FICHA.pocket("TR")
    start = (1000.0, 300.0)
    legs, t_in = _roll_into(tr.xy_mm, start, 1000.0, 1.5)
    u = (np.asarray(tr.xy_mm) - start) / np.linalg.norm(np.asarray(tr.xy_mm) - start)
    t_tip = t_in + 0.5 / 30
    tip = tuple(np.asarray(tr.xy_mm) - u * (tr.radius_mm + 30.0))
    scene = Scene().add("r2", "red", Leg(0.0, start), legs[0], Leg(t_tip, tip, height=100.0),
                        Leg(t_tip + 1 / 30, tuple(tr.xy_mm), gone=True))
    still(scene, "cue", (700.0, 500.0))
    cue_stick(start, math.degrees(math.atan2(u[1], u[0])), 1.5, scene)
    emitted, evs = _shot_end(scene, detections(scene, FICHA, 30.0, 4.0))
    assert [(p.ball, p.pocket) for p in evs if isinstance(p, Pot)] == [("r1", "TR")]
    assert emitted is not None and emitted - t_in <= 0.25


def test_a_ball_creeping_over_a_pockets_edge_has_dropped():
    # a red dying into a corner pocket reaches the drop circle's edge at 20 mm/s, slower than the tracker
    # calls moving (its filtered velocity is nil), and then drops: the shot need not wait for the tracker
    # to give it up (half a second)
    tr = FICHA.pocket("TR")
    start = np.array([1000.0, 300.0])
    d = np.asarray(tr.xy_mm) - start
    u = d / np.linalg.norm(d)
    s = float(np.linalg.norm(d)) - tr.radius_mm  # to the drop circle's edge
    v0, v1 = 700.0, 20.0
    decel = (v0**2 - v1**2) / (2 * s)
    t0 = 1.5
    t_in = t0 + (v0 - v1) / decel
    scene = Scene().add("r2", "red", Leg(0.0, tuple(start)), Leg(t0, tuple(start), tuple(u * v0), decel),
                        Leg(t_in + 0.1, tuple(tr.xy_mm), gone=True))
    still(scene, "cue", (700.0, 500.0))
    cue_stick(tuple(start), math.degrees(math.atan2(u[1], u[0])), t0, scene)
    emitted, evs = _shot_end(scene, detections(scene, FICHA, 30.0, t_in + 2.0))
    assert [(p.ball, p.pocket) for p in evs if isinstance(p, Pot)] == [("r1", "TR")]
    assert emitted is not None and emitted - (t_in + 0.1) <= 0.3


@pytest.mark.parametrize("decel, seed", [(45.0, 0), (45.0, 3), (30.0, 1), (30.0, 11)])
def test_a_ball_rolling_to_a_stop_slowly_is_at_rest_where_it_stops_not_before(decel, seed):
    """The cue ball dies away slowly (fast cloth: 30-45 mm/s² from 200 mm/s): for its last second it
    rolls slower than the tracker calls moving, and vision's noise (1.5 mm a frame) can make the
    halves' medians of a rest window agree. Called at rest then, it stood short of where it stopped,
    and its last millimetres were read as a second shot by no cue (a ball moved by itself); the line
    through all the window's measurements still runs on. (The noise of these seeds did it before.)"""
    v, t0 = 200.0, 1.0
    stop = (400.0 + v * v / (2 * decel), 400.0)
    scene = Scene().add("cue", "white", Leg(0.0, (400.0, 400.0)), Leg(t0, (400.0, 400.0), (v, 0.0), decel))
    still(scene, "r1", (300.0, 200.0))
    cue_stick((400.0, 400.0), 0.0, t0, scene)
    evs = events_of(detections(scene, FICHA, 60.0, t0 + v / decel + 1.5, noise_mm=1.5, seed=seed))
    assert len(of(evs, ShotStart)) == 1 and not of(evs, BallTouched), evs
    (rest,) = of(evs, AtRest)
    assert np.linalg.norm(np.subtract(rest.positions["cue"], stop)) < 5.0  # (its last creep averaged in)
