"""Rendered frames shared by the vision tests: the simulator's camera and renderer (so the truth is
exact) and the detector run over a few frames of a scene."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bench.simcal import true_calibration
from calibration.table import TableProfile, resolve_profile
from simulator.camera import CameraModel, mount_camera
from simulator.render import RenderOptions, Renderer
from simulator.scene import BallPose, PinPose, Scene
from vision import Detector


@dataclass(frozen=True, eq=False)
class Table:
    profile: TableProfile
    camera: CameraModel
    renderer: Renderer

    @property
    def calibration(self):
        return true_calibration(self.camera, self.profile)

    def render(self, balls=(), pins=None, occluders=(), t_s: float = 0.0) -> np.ndarray:
        pins = tuple(PinPose(p.id, p.xy_mm) for p in self.profile.pins) if pins is None else tuple(pins)
        return self.renderer.render(Scene(t_s, tuple(balls), pins, tuple(occluders)))

    def px(self, xy_mm, h_mm: float = 0.0) -> np.ndarray:
        xy = np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2)
        return self.camera.project(np.c_[xy, np.full(len(xy), self.profile.ball_radius_mm + h_mm)])

    def detector(self) -> Detector:
        return Detector(self.profile, self.calibration)


@lru_cache(maxsize=None)
def table(profile: str, resolution=(1280, 720), seed: int = 3, low_light: bool = False, tilt_deg: float = 6.0,
          k1: float = -0.15) -> Table:
    p = resolve_profile(profile)
    cam = mount_camera(p, height_mm=1500.0 if p.length_mm < 2000 else 2300.0, tilt_deg=tilt_deg, tilt_dir_deg=40.0,
                       yaw_deg=1.0, k1=k1, k2=0.0, resolution=resolution)
    return Table(p, cam, Renderer(p, cam, seed=seed, options=RenderOptions(low_light=low_light)))


def spread_balls(profile: TableProfile, rng: np.random.Generator, ids=None, gap_radii: float = 3.0) -> list[BallPose]:
    """Balls at random places on the cloth, clear of each other, the cushions, holes and pins."""
    r = profile.ball_radius_mm
    out: list[BallPose] = []
    keep_off = [(h.xy_mm, h.radius_mm + 2 * r) for h in profile.holes] + [(q.xy_mm, 2.5 * r + q.height_mm) for q in profile.pins]
    for bid in ids or profile.ball_ids:
        while True:
            xy = (float(rng.uniform(2 * r, profile.length_mm - 2 * r)), float(rng.uniform(2 * r, profile.width_mm - 2 * r)))
            if all(np.hypot(xy[0] - b.xy_mm[0], xy[1] - b.xy_mm[1]) > gap_radii * r for b in out) and all(
                    np.hypot(xy[0] - c[0], xy[1] - c[1]) > d for c, d in keep_off):
                out.append(BallPose(bid, xy))
                break
    return out


def run(det: Detector, frames: list[np.ndarray], t0: float = 0.0, fps: float = 30.0):
    """Detections of each frame, in order."""
    return [det.detect(img, k, t0 + k / fps) for k, img in enumerate(frames)]


def noisy(image: np.ndarray, rng: np.random.Generator, sigma: float = 2.0, gain: float = 1.0) -> np.ndarray:
    """The same picture with fresh sensor noise and a brightness gain (a new frame of a still scene)."""
    out = image.astype(np.float32) * gain + rng.normal(0.0, sigma, image.shape).astype(np.float32)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def match(dets, truth_px: np.ndarray, within_px: float):
    """For each true centre (n, 2): the index of the detection within ``within_px`` (or -1)."""
    out = []
    for p in np.asarray(truth_px).reshape(-1, 2):
        d = np.linalg.norm(dets.xy_px - p, axis=1) if len(dets) else np.zeros(0)
        out.append(int(np.argmin(d)) if len(d) and d.min() <= within_px else -1)
    return np.array(out)
