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


def test_an_outline_off_the_cameras_axis_is_the_ellipse_predicted():
    """A low camera (1 m over a 1.42 m table, no lens distortion) sees a corner ball's outline a good
    fifth longer from the picture's centre outwards than across: the predicted shape's two reaches
    match the rendered silhouette's extents along and across that line, to a fraction of a pixel."""
    from calibration.table import resolve_profile
    from simulator.camera import mount_camera
    from bench.simcal import true_calibration

    p = resolve_profile("ficha")
    cam = mount_camera(p, height_mm=1000.0, tilt_deg=0.0, tilt_dir_deg=0.0, yaw_deg=0.0, k1=0.0, k2=0.0, resolution=(1280, 720))
    v = TableView(true_calibration(cam, p), p)
    plain = Renderer(p, cam, 0, RenderOptions(texture=False, lighting=False, vignetting=0, shadows=False,
                                              noise_sigma=0, flicker=0, lens_blur_px=0, markings=False))
    empty = plain.render(Scene(0.0, ()))
    xy = [60.0, 60.0]
    img = plain.render(Scene(0.0, (BallPose("cue", tuple(xy)),)))
    ys, xs = np.nonzero(np.abs(img.astype(float) - empty.astype(float)).max(axis=2) > 0)
    sil, _, radius = v.outline(np.array([xy]))
    shape = v.shape_at_px(sil)[0]
    out = sil[0] - np.array([639.5, 359.5])
    out /= np.linalg.norm(out)
    across = np.array([-out[1], out[0]])
    pts = np.c_[xs, ys] - sil[0]
    for u in (out, across):
        predicted = radius[0] / np.sqrt(u @ shape @ u)
        seen = np.abs(pts @ u).max()  # the outermost touched pixel centre: within ~half a pixel of the edge
        assert abs(seen - predicted) < 0.8
    assert 1.2 < np.sqrt((across @ shape @ across) / (out @ shape @ out)) < 1.5  # visibly an ellipse
    assert np.allclose(v.shape_at_px(np.array([[640.0, 360.0]]))[0], np.eye(2), atol=0.01)  # a circle below the camera
