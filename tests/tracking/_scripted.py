"""Scripted ball trajectories for the tracking tests: exact positions at any time, no physics engine
and no rendering, turned into the detections vision would hand over (with seeded noise).

A trajectory is a list of :class:`Leg` per ball: from ``t0`` the ball is at ``p0`` moving at ``v``
and slowing by ``decel`` (mm/s^2) along its way until it stops; the next leg takes over at its own
``t0``. A ball with no leg yet is not on the table; a leg with ``gone=True`` takes it off.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.table import TableProfile
from vision.types import BallDetections, BallState, FrameDetections, PinDetections

R_FICHA = 26.0


@dataclass(frozen=True)
class Leg:
    t0: float
    p0: tuple[float, float]
    v: tuple[float, float] = (0.0, 0.0)
    decel: float = 0.0
    gone: bool = False  # from t0 the ball is off the table (potted, lifted)
    height: float = 0.0  # off the cloth by this much (a jump), for the whole leg
    state: int = BallState.VISIBLE

    def at(self, t: float) -> np.ndarray:
        dt = t - self.t0
        v = np.asarray(self.v, dtype=float)
        s = float(np.linalg.norm(v))
        if s == 0 or self.decel == 0:
            return np.asarray(self.p0, dtype=float) + v * dt
        stop = s / self.decel
        dt = min(dt, stop)
        return np.asarray(self.p0, dtype=float) + v / s * (s * dt - 0.5 * self.decel * dt * dt)

    def velocity(self, t: float) -> np.ndarray:
        v = np.asarray(self.v, dtype=float)
        s = float(np.linalg.norm(v))
        if s == 0 or self.decel == 0:
            return v
        return v / s * max(s - self.decel * (t - self.t0), 0.0)


@dataclass
class Scene:
    """Balls (id -> colour and legs) and occluders (time span and polygon)."""

    colours: dict[str, str] = field(default_factory=dict)
    legs: dict[str, list[Leg]] = field(default_factory=dict)
    occluders: list[tuple[float, float, np.ndarray]] = field(default_factory=list)

    def add(self, ball: str, colour: str, *legs: Leg) -> "Scene":
        self.colours[ball] = colour
        self.legs.setdefault(ball, []).extend(legs)
        self.legs[ball].sort(key=lambda leg: leg.t0)
        return self

    def leg(self, ball: str, t: float) -> Leg | None:
        cur = None
        for leg in self.legs[ball]:
            if leg.t0 <= t + 1e-12:
                cur = leg
        return cur

    def position(self, ball: str, t: float) -> np.ndarray | None:
        leg = self.leg(ball, t)
        return None if leg is None or leg.gone else leg.at(t)


def keep_rows(balls: BallDetections, keep: np.ndarray) -> BallDetections:
    """The detections ``keep`` (a boolean mask) of one frame's balls."""
    return dataclasses.replace(balls, xy_mm=balls.xy_mm[keep], xy_px=balls.xy_px[keep], radius_px=balls.radius_px[keep],
                               height_mm=balls.height_mm[keep], label=balls.label[keep], class_prob=balls.class_prob[keep],
                               score=balls.score[keep], state=balls.state[keep])


def rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def detections(scene: Scene, profile: TableProfile, fps: float, t_end: float, noise_mm: float = 0.8, seed: int = 0,
               t_start: float = 0.0, hide: float = 0.5, repeat_every: int = 0, drop: tuple[int, ...] = (),
               invalid: tuple[float, float] | None = None, pins: PinDetections | None = None) -> list[FrameDetections]:
    """Frames from ``t_start`` to ``t_end`` at ``fps``: every ball on the table with Gaussian noise;
    a ball with its centre inside an occluder polygon (grown by ``hide`` of a radius) is not seen."""
    rng = np.random.default_rng(seed)
    classes = tuple(dict.fromkeys(b.colour for b in profile.balls))
    R = profile.ball_radius_mm
    out: list[FrameDetections] = []
    n = int(math.floor((t_end - t_start) * fps + 1e-9)) + 1
    prev = None
    for k in range(n):
        t = t_start + k / fps
        if k in drop:
            continue
        if repeat_every and prev is not None and k % repeat_every == 1:
            out.append(FrameDetections(k, t, prev.balls, prev.pins, prev.occluders, prev.valid, repeated=True))
            continue
        polys = tuple(p for t0, t1, p in scene.occluders if t0 <= t <= t1)
        rows = []
        for ball, colour in scene.colours.items():
            leg = scene.leg(ball, t)
            if leg is None or leg.gone:
                continue
            xy = leg.at(t)
            if any(_inside(p, xy, hide * R) for p in polys):
                continue
            rows.append((xy + rng.normal(0, noise_mm, 2), colour, leg.height, leg.state))
        m = len(rows)
        prob = np.zeros((m, len(classes)), dtype=np.float32)
        for r, (_, colour, _, _) in enumerate(rows):
            prob[r] = 0.02 / max(len(classes) - 1, 1)
            prob[r, classes.index(colour)] = 0.98
        balls = BallDetections(
            frame=k, t_s=t, classes=classes,
            xy_mm=np.array([r[0] for r in rows]).reshape(m, 2), xy_px=np.zeros((m, 2)), radius_px=np.full(m, 10.0),
            height_mm=np.array([r[2] for r in rows], dtype=float), label=np.array([r[1] for r in rows], dtype=object),
            class_prob=prob, score=np.full(m, 0.95, dtype=np.float32),
            state=np.array([BallState.AIRBORNE if r[2] > 0 else r[3] for r in rows], dtype=np.uint8),
        )
        valid = invalid is None or not (invalid[0] <= t < invalid[1])
        det = FrameDetections(k, t, balls, pins if pins is not None else PinDetections.empty(), polys, valid)
        prev = det
        out.append(det)
    return out


def _inside(poly: np.ndarray, xy: np.ndarray, grow: float) -> bool:
    """Whether ``xy`` lies inside the polygon or within ``grow`` of its outline."""
    d = cv2.pointPolygonTest(poly.astype(np.float32).reshape(-1, 1, 2), (float(xy[0]), float(xy[1])), True)
    return d >= -grow


def ficha_rack(profile: TableProfile) -> dict[str, tuple[float, float]]:
    """The ficha rack positions (ficha 3.1-3.2) with 20 mm gaps, as the simulator racks them."""
    R = profile.ball_radius_mm
    L, W = profile.length_mm, profile.width_mm
    pos = {"cue": (L / 2, W / 2)}
    for group, end_x, towards in (("r", R + 0.01, -1.0), ("y", L - R - 0.01, 1.0)):
        half = 10.0 + R
        pos[f"{group}1"] = (end_x, W / 2 - half)
        pos[f"{group}2"] = (end_x, W / 2 + half)
        pos[f"{group}3"] = (L / 2 + towards * 200.0, R + 0.01)
        pos[f"{group}4"] = (L / 2 + towards * 200.0, W - R - 0.01)
    return pos
