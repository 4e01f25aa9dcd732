"""What the calibration predicts of a ball's picture (vision.geometry) against the renderer's camera."""

import numpy as np
import pytest

from simulator.scene import BallPose, Scene
from simulator.render import RenderOptions, Renderer
from vision.geometry import TableView

from tests.vision._scenes import table


@pytest.fixture(scope="module")
def view():
    t = table("ficha", resolution=(1920, 1080), tilt_deg=8.0, k1=-0.2)
    return t, TableView(t.calibration, t.profile)


def test_projection_is_the_cameras(view):
    t, v = view
    rng = np.random.default_rng(1)
    xyh = np.c_[rng.uniform(0, 1420, 20), rng.uniform(0, 810, 20), rng.uniform(0, 120, 20)]
    assert np.abs(v.project(xyh) - t.camera.project(xyh)).max() < 1e-6


def test_outline_centre_lies_outwards_of_the_centres_picture(view):
    t, v = view
    corner, middle = np.array([[40.0, 40.0]]), np.array([[710.0, 405.0]])
    sil_c, proj_c, _ = v.outline(corner)
    sil_m, proj_m, _ = v.outline(middle)
    assert 0.05 < np.linalg.norm(sil_c - proj_c) < 0.6  # near a corner: a fraction of a pixel
    assert np.linalg.norm(sil_m - proj_m) < np.linalg.norm(sil_c - proj_c)


def test_outline_matches_the_rendered_silhouette(view):
    """The rendered ball's silhouette (a plain render: no texture, no shadow) spans the predicted
    outline: its extent along each axis is the predicted diameter and its middle the predicted
    centre, to a fraction of a pixel."""
    t, v = view
    plain = Renderer(t.profile, t.camera, 0, RenderOptions(texture=False, lighting=False, vignetting=0, shadows=False,
                                                         noise_sigma=0, flicker=0, lens_blur_px=0, markings=False))
    empty = plain.render(Scene(0.0, ()))
    for xy in ([60.0, 60.0], [1360.0, 760.0], [710.0, 405.0]):
        img = plain.render(Scene(0.0, (BallPose("cue", tuple(xy)),)))
        inside = np.abs(img.astype(float) - empty.astype(float)).max(axis=2) > 0  # any coverage at all
        ys, xs = np.nonzero(inside)
        sil, _, radius = v.outline(np.array([xy]))
        # the outermost touched pixels' centres lie within half a pixel of the true edge
        extent = np.array([xs.max() - xs.min(), ys.max() - ys.min()]) / 2.0
        assert np.all(np.abs(extent - radius[0]) < 0.75)
        assert np.linalg.norm(np.array([(xs.max() + xs.min()) / 2, (ys.max() + ys.min()) / 2]) - sil[0]) < 0.75


def test_balls_to_table_inverts_the_outline(view):
    _, v = view
    xy = np.array([[30.0, 30.0], [700.0, 400.0], [1390.0, 780.0]])
    for lift in (0.0, 50.0):
        sil, _, _ = v.outline(xy, lift)
        assert np.abs(v.balls_to_table(sil, lift) - xy).max() < 1e-3


def test_a_ball_in_the_air_looks_larger_by_its_height(view):
    _, v = view
    xy = np.array([[500.0, 300.0]])
    sil, _, r_air = v.outline(xy, 60.0)
    assert abs(v.lift_from_radius(sil, r_air)[0] - 60.0) < 3.0
