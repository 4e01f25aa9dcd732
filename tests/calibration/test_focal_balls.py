"""The focal length from resting balls' outlines (calibration.balls), and the lens fit's principal
point staying near the picture's centre, on a camera that looks straight down through a wide lens:
the view where the table's own perspective cannot give the focal length."""

from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

from bench.simcal import true_calibration
from calibration.balls import Outline, ball_outlines, focal_from_outlines
from calibration.calibrate import CalibrationConfig, calibrate_image
from calibration.table import resolve_profile
from simulator.camera import CameraModel, mount_camera
from simulator.render import Renderer, RenderOptions
from simulator.scene import BallPose, Scene


@lru_cache(maxsize=None)
def _square_on(profile_name: str = "brasileira", height_mm: float = 1350.0, k1: float = -0.1, resolution=(1280, 720)):
    """A camera straight over the table's middle, low enough to need a wide lens, eight balls spread
    out in a 4 x 2 grid (none touching, none by a cushion)."""
    p = resolve_profile(profile_name)
    cam = mount_camera(p, height_mm=height_mm, tilt_deg=0.0, yaw_deg=0.0, k1=k1, k2=0.0, resolution=resolution)
    xs = np.linspace(0.15, 0.85, 4) * p.length_mm
    ys = np.array([0.3, 0.7]) * p.width_mm
    balls = tuple(BallPose(b.id, (float(x), float(y))) for b, (x, y) in zip(p.balls, [(x, y) for x in xs for y in ys]))
    image = Renderer(p, cam, seed=5).render(Scene(0.0, balls=balls, pins=()))
    return image, cam, p


def _ball_plane_rms_mm(cal, truth, profile) -> float:
    xs = np.linspace(100, profile.length_mm - 100, 7)
    ys = np.linspace(100, profile.width_mm - 100, 4)
    pts = np.array([(x, y) for x in xs for y in ys])
    r = profile.ball_radius_mm
    err = np.linalg.norm(cal.to_table_mm(truth.to_image_px(pts, r), r) - pts, axis=1)
    return float(np.sqrt(np.mean(err ** 2)))


def test_a_wide_lens_looking_straight_down_has_its_focal_length_read_from_the_balls():
    image, cam, p = _square_on()
    truth = true_calibration(cam, p)
    f_true = truth.camera_matrix[0, 0]
    assert f_true < 0.6 * image.shape[1]  # a wide lens: the default (0.9 x width) is far off

    outlines = ball_outlines(image, truth, p)
    assert len(outlines) >= 6  # of 8: a ball hardly apart from the cloth in colour may be left out
    found = focal_from_outlines(outlines, image.shape[1])
    assert found is not None
    assert abs(found[0] / f_true - 1) < 0.06

    cal = calibrate_image(image, p)
    assert cal.residuals["focal_source"] == "balls"
    assert abs(cal.camera_matrix[0, 0] / f_true - 1) < 0.08
    assert abs(cal.camera_height_mm / truth.camera_height_mm - 1) < 0.08
    without = calibrate_image(image, p, config=CalibrationConfig(focal_from_balls=False))
    # a ball's centre, 26 mm up, is placed within 3 mm with the balls' focal length; several times
    # that without it
    assert _ball_plane_rms_mm(cal, truth, p) < 3.0
    assert _ball_plane_rms_mm(without, truth, p) > 2 * _ball_plane_rms_mm(cal, truth, p)


def test_the_lens_fit_keeps_the_principal_point_near_the_pictures_centre():
    # A camera 1.34 m over the large table, 2 degrees off straight down, a wide lens, low light:
    # the cushion edges are soft and the lens fit once let the principal point wander 15 px.
    p = resolve_profile("brasileira")
    cam = CameraModel(size=(1920, 1080), fx=850.15, fy=850.15, cx=962.11, cy=532.96, dist=(-0.10484, 0.00986, 0.0, 0.0, 0.0),
                      rvec=(-0.038014, 0.014098, -0.017597), tvec=(-1431.94, -684.02, 1385.0))
    spots = [(450.0, 800.0), (2130.0, 1065.0), (586.5, 970.0), (586.5, 450.0), (586.5, 710.0), (1420.0, 710.0),
             (2130.0, 710.0), (2582.2, 710.0)]
    balls = tuple(BallPose(b.id, xy) for b, xy in zip(p.balls, spots))
    image = Renderer(p, cam, seed=0, options=RenderOptions(low_light=True)).render(Scene(0.0, balls=balls, pins=()))
    cal = calibrate_image(image, p)
    offset = np.linalg.norm(cal.camera_matrix[:2, 2] - (cam.cx, cam.cy))
    assert offset < 8.0, f"principal point {offset:.1f} px off"


def test_an_empty_table_leaves_the_focal_length_to_the_tables_perspective():
    _, cam, p = _square_on()
    empty = Renderer(p, cam, seed=5).render(Scene(0.0, balls=(), pins=()))
    cal = calibrate_image(empty, p)
    assert cal.residuals["focal_source"] in ("default", "estimated")
    assert ball_outlines(empty, true_calibration(cam, p), p) == []


def _outlines(f: float, rhos, noise=0.0, seed=0) -> list[Outline]:
    rng = np.random.default_rng(seed)
    return [Outline((0.0, 0.0), float(r), float(np.sqrt(1 + (r / f) ** 2) + rng.normal(0, noise)), 10.0, 0.1) for r in rhos]


@pytest.mark.parametrize("f", [500.0, 900.0, 1500.0])
def test_the_focal_length_that_explains_the_stretches_is_found(f):
    rhos = np.linspace(200, 600, 8)
    got, se, n = focal_from_outlines(_outlines(f, rhos), 1280)
    assert n == 8 and abs(got / f - 1) < 0.01 and se < 0.01 * f


def test_one_misread_ball_does_not_pull_the_focal_length():
    good = _outlines(700.0, np.linspace(250, 600, 7), noise=0.005, seed=1)
    bad = replace(good[3], stretch=good[3].stretch + 0.25)  # a ball merged with its shadow
    got, _, _ = focal_from_outlines(good[:3] + [bad] + good[4:], 1280)
    assert abs(got / 700.0 - 1) < 0.04


def test_outlines_near_the_middle_or_too_few_say_nothing():
    assert focal_from_outlines(_outlines(800.0, [10.0, 50.0, 90.0, 120.0]), 1280) is None  # all within 0.1 width
    assert focal_from_outlines(_outlines(800.0, [300.0, 400.0]), 1280) is None
