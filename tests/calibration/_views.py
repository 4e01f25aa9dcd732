"""Rendered views shared by the calibration tests: the simulator's camera and renderer, so the true
camera is known exactly."""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from calibration.table import TableProfile, resolve_profile
from simulator.camera import CameraModel, mount_camera
from simulator.render import RenderOptions, Renderer
from simulator.scene import BallPose, PinPose, Scene


@dataclass(frozen=True, eq=False)
class View:
    image: np.ndarray
    camera: CameraModel
    profile: TableProfile


def scene_for(profile: TableProfile, rng: np.random.Generator, n_balls: int = 4, scoreboard_down: bool = False) -> Scene:
    r = profile.ball_radius_mm
    balls = tuple(BallPose(b.id, (float(rng.uniform(r, profile.length_mm - r)), float(rng.uniform(r, profile.width_mm - r))))
                  for b in profile.balls[:n_balls])
    return Scene(0.0, balls=balls, pins=tuple(PinPose(p.id, p.xy_mm) for p in profile.pins), scoreboard_down=scoreboard_down)


@lru_cache(maxsize=None)
def view(profile_name: str, resolution=(1280, 720), height_mm=1500.0, tilt_deg=0.0, tilt_dir_deg=0.0, yaw_deg=0.0,
         k1=0.0, seed=0, low_light=False, scoreboard_down=False) -> View:
    p = resolve_profile(profile_name)
    cam = mount_camera(p, height_mm=height_mm, tilt_deg=tilt_deg, tilt_dir_deg=tilt_dir_deg, yaw_deg=yaw_deg,
                       k1=k1, k2=0.0, resolution=resolution)
    image = Renderer(p, cam, seed=seed, options=RenderOptions(low_light=low_light)).render(
        scene_for(p, np.random.default_rng(seed), scoreboard_down=scoreboard_down))
    return View(image, cam, p)


def project(camera: CameraModel, xy_mm, h_mm: float = 0.0) -> np.ndarray:
    xy = np.asarray(xy_mm, float).reshape(-1, 2)
    return camera.project(np.c_[xy, np.full(len(xy), h_mm)])


def corner_errors_mm(cal, v: View) -> np.ndarray:
    corners = np.array(v.profile.corners_mm)
    return np.linalg.norm(cal.to_table_mm(project(v.camera, corners)) - corners, axis=1)
