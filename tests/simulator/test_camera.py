"""The simulated camera: OpenCV-exact projection, rays that invert it, a mount that frames the table."""

import json
import math

import numpy as np
import pytest

from calibration.table import resolve_profile
from simulator.camera import CameraModel, mount_camera

PROFILES = ["ficha", "brasileira", "bar-billiards"]


def pinhole(cam: CameraModel, xyh: np.ndarray) -> np.ndarray:
    """An independent projection written from the OpenCV formulas (world z = -height)."""
    R = cam.R
    world = np.column_stack([xyh[:, 0], xyh[:, 1], -xyh[:, 2]])
    X = world @ R.T + np.asarray(cam.tvec)
    x, y = X[:, 0] / X[:, 2], X[:, 1] / X[:, 2]
    k1, k2, p1, p2, k3 = cam.dist
    r2 = x * x + y * y
    rad = 1 + k1 * r2 + k2 * r2**2 + k3 * r2**3
    xd = x * rad + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
    yd = y * rad + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
    return np.column_stack([cam.fx * xd + cam.cx, cam.fy * yd + cam.cy])


def random_points(profile, rng, n=200, h_max=150.0):
    return np.column_stack([
        rng.uniform(-profile.rail_width_mm, profile.length_mm + profile.rail_width_mm, n),
        rng.uniform(-profile.rail_width_mm, profile.width_mm + profile.rail_width_mm, n),
        rng.uniform(0, h_max, n),
    ])


@pytest.mark.parametrize("name", PROFILES)
def test_project_matches_the_opencv_model(name):
    p = resolve_profile(name)
    rng = np.random.default_rng(3)
    cam = mount_camera(p, tilt_deg=8, tilt_dir_deg=120, yaw_deg=2, k1=-0.2, k2=0.03)
    pts = random_points(p, rng)
    np.testing.assert_allclose(cam.project(pts), pinhole(cam, pts), atol=1e-6)


def test_straight_overhead_camera_sees_the_table_frame_unrotated():
    p = resolve_profile("ficha")
    cam = mount_camera(p, height_mm=1500, tilt_deg=0, yaw_deg=0, k1=0.0, k2=0.0)
    np.testing.assert_allclose(cam.R, np.eye(3), atol=1e-12)
    assert cam.height_mm == pytest.approx(1500.0)
    c = cam.table_corners_px(p)
    # head end on the left, y = 0 at the top: TL is left of TR and above BL
    assert c[0, 0] < c[1, 0] and c[0, 1] < c[3, 1]
    # the table's centre falls on the principal point
    centre = cam.project(np.array([[p.length_mm / 2, p.width_mm / 2, 0.0]]))[0]
    np.testing.assert_allclose(centre, [cam.cx, cam.cy], atol=1e-9)
    # a point raised towards the camera moves away from the centre (perspective)
    lo = cam.project(np.array([[100.0, 100.0, 0.0]]))[0]
    hi = cam.project(np.array([[100.0, 100.0, 200.0]]))[0]
    assert np.linalg.norm(hi - centre) > np.linalg.norm(lo - centre) + 10


@pytest.mark.parametrize("name", PROFILES)
def test_pixel_rays_pass_through_the_points_they_came_from(name):
    p = resolve_profile(name)
    rng = np.random.default_rng(4)
    cam = mount_camera(p, rng=rng)
    pts = random_points(p, rng, 100)
    rays = cam.pixel_rays(cam.project(pts))
    world = np.column_stack([pts[:, 0], pts[:, 1], -pts[:, 2]])
    v = world - cam.centre_world
    miss = np.linalg.norm(np.cross(v, rays), axis=1)
    assert miss.max() < 1e-5
    assert np.all(np.einsum("ij,ij->i", v, rays) > 0)  # in front of the camera


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mount_frames_the_whole_table_with_its_rails(name, seed):
    p = resolve_profile(name)
    for res in ((1280, 720), (1920, 1080)):
        cam = mount_camera(p, resolution=res, rng=np.random.default_rng(seed))
        assert 1200 <= cam.height_mm <= 2500
        m = p.rail_width_mm
        outer = np.array([[x, y, p.cushion_nose_height_mm] for x in np.linspace(-m, p.length_mm + m, 21)
                          for y in (-m, p.width_mm + m)] + [[x, y, p.cushion_nose_height_mm] for y in np.linspace(-m, p.width_mm + m, 11) for x in (-m, p.length_mm + m)])
        px = cam.project(outer)
        w, h = res
        assert px[:, 0].min() >= 0 and px[:, 0].max() <= w - 1
        assert px[:, 1].min() >= 0 and px[:, 1].max() <= h - 1
        # a random lens is barrel (or neutral) out to the rails' corners, never a pincushion
        k1, k2 = cam.dist[:2]
        world = np.column_stack([outer[:, 0], outer[:, 1], -outer[:, 2]]) @ cam.R.T + np.asarray(cam.tvec)
        r2 = (world[:, 0] / world[:, 2]) ** 2 + (world[:, 1] / world[:, 2]) ** 2
        assert np.all(k1 * r2 + k2 * r2**2 <= 1e-12)
        # and it is not absurdly small: the table fills most of one dimension
        span = px.max(0) - px.min(0)
        assert max(span[0] / w, span[1] / h) > 0.85


def test_tilt_is_the_angle_of_the_optical_axis_from_the_vertical():
    p = resolve_profile("brasileira")
    for tilt in (0.0, 4.0, 10.0):
        cam = mount_camera(p, tilt_deg=tilt, tilt_dir_deg=70)
        axis = cam.R[2]  # camera z in the world frame
        angle = math.degrees(math.acos(axis @ np.array([0.0, 0.0, 1.0])))
        assert angle == pytest.approx(tilt, abs=1e-9)
        # it still looks at the table's centre
        centre = cam.project(np.array([[p.length_mm / 2, p.width_mm / 2, 0.0]]))[0]
        np.testing.assert_allclose(centre, [cam.cx, cam.cy], atol=1e-6)


@pytest.mark.parametrize("name", PROFILES)
def test_strong_distortion_never_folds_the_picture(name):
    p = resolve_profile(name)
    cam = mount_camera(p, height_mm=1200, k1=-0.25, k2=0.0)
    assert -0.25 <= cam.dist[0] <= 0.0
    # points along a line from the centre to beyond the rails' corner project in order
    L, W, m = p.length_mm, p.width_mm, p.rail_width_mm
    s = np.linspace(0, 1.3, 200)[:, None]
    pts = np.column_stack([L / 2 + s[:, 0] * (L / 2 + m), W / 2 + s[:, 0] * (W / 2 + m), np.zeros(len(s))])
    px = cam.project(pts)
    r = np.linalg.norm(px - px[0], axis=1)
    assert np.all(np.diff(r) > 0)


def test_dict_round_trip_through_json():
    p = resolve_profile("bar-billiards")
    cam = mount_camera(p, rng=np.random.default_rng(9), resolution=(1920, 1080))
    again = CameraModel.from_dict(json.loads(json.dumps(cam.to_dict())))
    assert again == cam
    pts = random_points(p, np.random.default_rng(1), 20)
    np.testing.assert_array_equal(again.project(pts), cam.project(pts))


def test_a_bumped_camera_moves_the_picture():
    p = resolve_profile("ficha")
    cam = mount_camera(p, k1=-0.1)
    bumped = cam.moved(drot_deg=(0.0, 0.5, 0.0))
    shift = bumped.table_corners_px(p) - cam.table_corners_px(p)
    # half a degree about the camera's y axis moves the picture sideways by about f * 0.0087 px
    assert np.all(np.abs(shift[:, 0]) > 0.5 * cam.fx * math.radians(0.5))
    np.testing.assert_allclose(bumped.centre_world, cam.centre_world)
    np.testing.assert_allclose(cam.moved().tvec, cam.tvec, atol=1e-9)
