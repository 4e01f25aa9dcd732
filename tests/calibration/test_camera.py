"""Calibration object: lens, homography and parallax at ball-centre height."""

import numpy as np
import pytest

from calibration.calibrate import calibrate_manual
from simulator.camera import mount_camera
from calibration.table import resolve_profile
from tests.calibration._views import project

FICHA = resolve_profile("ficha")


def mount(profile, size, height_mm, tilt_deg=0.0, tilt_dir_deg=0.0, k1=0.0):
    return mount_camera(profile, height_mm=height_mm, tilt_deg=tilt_deg, tilt_dir_deg=tilt_dir_deg, yaw_deg=1.0,
                        k1=k1, k2=0.0, resolution=size)


def manual_from_truth(cam, profile, **kw):
    corners_px = project(cam, profile.corners_mm)
    return calibrate_manual(dict(zip(["TL", "TR", "BR", "BL"], corners_px)), profile, cam.size,
                            camera_matrix=cam.K, dist_coeffs=cam.dist_coeffs, **kw)


@pytest.mark.parametrize("tilt_deg, k1", [(0.0, 0.0), (6.0, -0.15), (10.0, -0.25)])
def test_corner_ball_parallax_is_removed_at_1_2_m(tilt_deg, k1):
    cam = mount(FICHA, (1280, 720), height_mm=1200.0, tilt_deg=tilt_deg, tilt_dir_deg=40.0, k1=k1)
    cal = manual_from_truth(cam, FICHA)
    assert cal.camera_height_mm == pytest.approx(cam.height_mm, rel=0.01)
    r = FICHA.ball_radius_mm
    balls_mm = np.array([[r, r], [FICHA.length_mm - r, r], [FICHA.length_mm - r, FICHA.width_mm - r], [r, FICHA.width_mm - r]])
    seen_px = project(cam, balls_mm, h_mm=r)  # the image of each ball's centre
    on_cloth = np.linalg.norm(cal.to_table_mm(seen_px) - balls_mm, axis=1)
    corrected = np.linalg.norm(cal.balls_to_table_mm(seen_px) - balls_mm, axis=1)
    assert on_cloth.max() > 12.0  # the error the issue describes (~18 mm from straight above)
    assert corrected.max() < 1.0


def test_to_image_and_back_at_any_height():
    cam = mount(FICHA, (1920, 1080), height_mm=1500.0, tilt_deg=7.0, tilt_dir_deg=200.0, k1=-0.2)
    cal = manual_from_truth(cam, FICHA)
    rng = np.random.default_rng(0)
    pts = rng.uniform([0, 0], [FICHA.length_mm, FICHA.width_mm], (30, 2))
    for h in (0.0, 26.0, 36.0):
        px = cal.to_image_px(pts, h_mm=h)
        assert np.allclose(px, project(cam, pts, h_mm=h), atol=0.05)
        assert np.allclose(cal.to_table_mm(px, h_mm=h), pts, atol=0.05)


def test_given_camera_height_is_used():
    cam = mount(FICHA, (1280, 720), height_mm=1500.0)
    corners_px = project(cam, FICHA.corners_mm)
    cal = calibrate_manual(dict(zip(["TL", "TR", "BR", "BL"], corners_px)), FICHA, cam.size, camera_height_mm=1500.0)
    assert cal.camera_height_mm == pytest.approx(1500.0, rel=1e-3)
    assert cal.camera_matrix[0, 0] == pytest.approx(cam.fx, rel=0.02)
    assert cal.residuals["focal_source"] == "from camera height"
