"""The end of a shot, which live is the moment of the call (``docs/live.md``): what its analysis costs (it
runs on the frame that gives the call, so every millisecond of it is a millisecond of the call's delay).
The shortcuts taken must give exactly what the plain computation gives."""

import math

import numpy as np

from tests.tracking._scripted import Leg, Scene, detections, rect
from tests.tracking.test_infer import FICHA, cue_stick, still
from tracking import geometry
from tracking.geometry import Outlines, _outline_points, polygon_distance
from tracking.infer import EventInferer
from tracking.infer import shot as shot_module
from tracking.infer.segments import Piece
from tracking.infer.shot import BallMotion
from tracking.tracker import BallTracker


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

