"""Keeping calibration true during a match.

:class:`CushionCheck` is the cheap per-frame test: on a few dozen short profiles across the four
cushion noses, where the calibration says they are, it finds the nose edge again (same polarity as
when calibrated) and measures how far it has moved, in pixels. It samples about two thousand pixels
with one ``cv2.remap``: well under a millisecond at 720p.

:class:`CalibrationKeeper` is the stateful object the pipeline calls on every frame:

* edges where expected: the calibration stands, the frame is valid;
* edges all seen but shifted a little (a hand-held or slowly drifting camera): the cushion lines are
  refitted to the measured points and the calibration follows (event ``followed``); while it keeps
  following, a full automatic calibration replaces the followed one every ``refresh_s`` (event
  ``refreshed``), so small errors do not add up;
* edges not where expected on several sides for ``confirm_frames`` frames (bumped, zoomed): the
  calibration is dropped, frames are marked invalid (no event may be inferred from them), and a full
  automatic calibration is tried on each following frame until one succeeds (event
  ``recalibrated``). A single bad frame (an arm over two cushions) is only marked invalid.

Every change is recorded in :attr:`CalibrationKeeper.events`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import Callable

import cv2
import numpy as np

from calibration import detect
from calibration.camera import Calibration
from calibration.homography import CalibrationError, Homography
from calibration.numeric import median
from calibration.table import TableProfile

__all__ = ["MonitorConfig", "SideReading", "CheckResult", "CushionCheck", "KeeperEvent", "KeeperState", "CalibrationKeeper"]

log = logging.getLogger(__name__)

SIDES = ("top", "right", "bottom", "left")


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    profiles_per_side: int = 24  # more: steadier offsets, a little more time
    search_px: float = 10.0  # how far from the expected line the nose is looked for; a bigger jump is a bump
    ok_px: float = 0.8  # median shift below which nothing is done (noise, compression)
    # frames in a row whose shift exceeds ok_px (but not twice ok_px) before it is followed: a still 1080p
    # camera's sensor noise takes about one frame in a hundred past 0.8 px, now and then two in a row (the
    # baseline is one frame's reading, its noise in every shift after it), hardly ever three; a drift stays
    follow_frames: int = 3
    follow_px: float = 8.0  # shifts up to this are followed by refitting the lines; beyond, recalibrate
    min_seen: float = 0.5  # share of a side's profiles that must find the edge for the side to count
    min_sides: int = 3  # sides that must count for a frame to be judged at all
    confirm_frames: int = 3  # consecutive bad frames before the calibration is dropped (~0.1 s at 30 fps)
    recalibrate_every: int = 1  # try a full calibration on every n-th frame while recalibrating
    refresh_s: float = 1.0  # while following a drift, a full calibration replaces the followed one this often
    # (a drift is followed frames no further apart than this; a follow after a longer still spell starts a new one)


@dataclass(frozen=True, slots=True, eq=False)
class SideReading:
    side: str
    shift_px: float  # median signed shift of the nose along the inward normal (NaN if not seen)
    seen: float  # share of the side's profiles where the edge was found
    points_px: np.ndarray  # (n, 2) measured edge points (image pixels)


@dataclass(frozen=True, slots=True, eq=False)
class CheckResult:
    t_s: float
    sides: tuple[SideReading, ...]

    @property
    def sides_seen(self) -> int:
        return sum(1 for s in self.sides if math.isfinite(s.shift_px))

    @property
    def max_shift_px(self) -> float:
        v = [abs(s.shift_px) for s in self.sides if math.isfinite(s.shift_px)]
        return max(v) if v else float("nan")


class CushionCheck:
    """Where are the cushion noses now, relative to where ``cal`` puts them?"""

    def __init__(self, cal: Calibration, profile: TableProfile, reference: np.ndarray, config: MonitorConfig = MonitorConfig()):
        self.cal, self.profile, self.config = cal, profile, config
        L, W = profile.length_mm, profile.width_mm
        margin = 0.12 * W  # stay clear of the pockets' jaws
        n = config.profiles_per_side
        mid_gap = 0.1 * W
        t_long = np.r_[np.linspace(margin, L / 2 - mid_gap, n // 2), np.linspace(L / 2 + mid_gap, L - margin, n - n // 2)]
        t_short = np.linspace(margin, W - margin, n)
        lines = {
            "top": (np.c_[t_long, np.zeros(n)], (0.0, 1.0)),
            "right": (np.c_[np.full(n, L), t_short], (-1.0, 0.0)),
            "bottom": (np.c_[t_long[::-1], np.full(n, W)], (0.0, -1.0)),
            "left": (np.c_[np.zeros(n), t_short[::-1]], (1.0, 0.0)),
        }
        s = config.search_px
        self.steps = np.arange(-math.ceil(s) - 2, math.ceil(s) + 3, dtype=np.float64)  # inward offsets sampled
        self.base, self.normal = {}, {}
        maps_x, maps_y = [], []
        for side in SIDES:
            pts_mm, nrm = lines[side]
            p0 = cal.to_image_px(pts_mm)
            p1 = cal.to_image_px(pts_mm + np.array(nrm) * 5.0)
            nrm_px = (p1 - p0) / np.linalg.norm(p1 - p0, axis=1, keepdims=True)
            self.base[side], self.normal[side] = p0, nrm_px
            # Sample from outside to inside would flip signs; sample from inside (+) to outside (-).
            pos = p0[:, None, :] + nrm_px[:, None, :] * self.steps[::-1][None, :, None]
            maps_x.append(pos[..., 0])
            maps_y.append(pos[..., 1])
        self.map_x = np.concatenate(maps_x).astype(np.float32)
        self.map_y = np.concatenate(maps_y).astype(np.float32)
        # The nose edge's polarity and strength on the reference frame, per side, and where each
        # profile sees it then (the baseline shifts are measured from).
        grad = self._gradients(reference)
        centre = len(self.steps) // 2
        self.sign, self.strength = {}, {}
        for i, side in enumerate(SIDES):
            g = grad[i * n: (i + 1) * n, centre - 1: centre + 2].mean(axis=1)
            med = float(median(g))
            self.sign[side] = 1.0 if med >= 0 else -1.0
            self.strength[side] = abs(med)
        self.baseline = {side: np.zeros(n) for side in SIDES}
        for side, (inward, ok) in self._edges(grad).items():
            self.baseline[side] = np.where(ok, inward, 0.0)

    def _gradients(self, image: np.ndarray) -> np.ndarray:
        samples = cv2.remap(image, self.map_x, self.map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        gray = samples.astype(np.float32) @ np.array([0.114, 0.587, 0.299], np.float32) if samples.ndim == 3 else samples.astype(np.float32)
        gray = cv2.GaussianBlur(gray, (0, 0), sigmaX=1.0, sigmaY=0.01)
        g = np.zeros_like(gray)
        g[:, 1:-1] = (gray[:, 2:] - gray[:, :-2]) / 2.0  # along the profile: from inside to outside
        return g

    def _edges(self, g: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per side: each profile's inward offset of the nose edge (the local gradient peak of the
        calibrated polarity nearest its baseline) and whether it was found (all sides' profiles at once)."""
        n = self.config.profiles_per_side
        steps_out = self.steps[::-1]  # inward offset of each sample column
        cols = np.arange(g.shape[1], dtype=np.float64)
        sign = np.repeat([self.sign[side] for side in SIDES], n)
        thr = np.repeat([max(0.35 * self.strength[side], 1.0) for side in SIDES], n)
        baseline = getattr(self, "baseline", None)
        base = np.concatenate([baseline[side] for side in SIDES]) if baseline is not None else np.zeros(len(SIDES) * n)
        sg = sign[:, None] * g
        peak = np.zeros_like(sg, dtype=bool)
        peak[:, 1:-1] = (sg[:, 1:-1] >= sg[:, :-2]) & (sg[:, 1:-1] > sg[:, 2:]) & (sg[:, 1:-1] >= thr[:, None])
        dist = np.where(peak, np.abs(cols[None, :] - (steps_out[0] - base)[:, None]), np.inf)
        rows = np.arange(len(sg))
        j = np.argmin(dist, axis=1)
        ok = np.isfinite(dist[rows, j])
        j = np.clip(j, 1, sg.shape[1] - 2)
        a, b, c = sg[rows, j - 1], sg[rows, j], sg[rows, j + 1]
        den = a - 2 * b + c
        off = np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1.0), 0.0)
        inward = steps_out[0] - (j + np.clip(off, -0.5, 0.5))
        return {side: (inward[i * n:(i + 1) * n], ok[i * n:(i + 1) * n]) for i, side in enumerate(SIDES)}

    def check(self, image: np.ndarray, t_s: float = 0.0) -> CheckResult:
        """Measure each side's shift on one frame (BGR or grey, the calibrated size)."""
        readings = []
        for side, (inward, ok) in self._edges(self._gradients(image)).items():
            seen = float(ok.mean())
            moved = inward - self.baseline[side]
            # Where the calibration's nose lies now: its points moved by the measured shifts.
            pts = self.base[side][ok] + self.normal[side][ok] * moved[ok, None]
            shift = float(median(moved[ok])) if seen >= self.config.min_seen else float("nan")
            readings.append(SideReading(side, shift, seen, pts))
        return CheckResult(t_s, tuple(readings))


@dataclass(frozen=True, slots=True)
class KeeperEvent:
    t_s: float
    kind: str  # "followed" | "refreshed" | "lost" | "recalibrated"
    detail: str


@dataclass(frozen=True, slots=True, eq=False)
class KeeperState:
    """The calibration to use for this frame (None while recalibrating) and whether events may be
    inferred from it."""

    t_s: float
    calibration: Calibration | None
    valid: bool
    status: str  # "ok" | "followed" | "suspect" | "recalibrating" | "recalibrated"
    check: CheckResult | None


class CalibrationKeeper:
    """Checks every frame against the calibration and keeps it true (module docstring)."""

    def __init__(self, cal: Calibration, profile: TableProfile, reference: np.ndarray,
                 config: MonitorConfig = MonitorConfig(),
                 recalibrate: Callable[[np.ndarray], Calibration] | None = None):
        from calibration.calibrate import calibrate_image  # calibrate imports nothing from here; avoid a cycle

        self.profile, self.config = profile, config
        self.recalibrate = recalibrate or (lambda image: calibrate_image(image, profile))
        self.events: list[KeeperEvent] = []
        self._bad = 0
        self._frames = 0
        self._followed_since: float | None = None  # time of the first follow of this drift since the last full calibration
        self._last_follow = -math.inf  # time of the last follow
        self._shifted = 0  # frames in a row whose shifts exceed ok_px
        self._set(cal, reference)

    def _set(self, cal: Calibration, image: np.ndarray) -> None:
        self.calibration: Calibration | None = cal
        self.checker = CushionCheck(cal, self.profile, image, self.config)

    def update(self, image: np.ndarray, t_s: float) -> KeeperState:
        self._frames += 1
        cfg = self.config
        if self.calibration is None:
            if self._frames % cfg.recalibrate_every:
                return KeeperState(t_s, None, False, "recalibrating", None)
            try:
                cal = self.recalibrate(image)
            except CalibrationError as e:
                log.debug("recalibration at %.3f s refused: %s", t_s, e)
                return KeeperState(t_s, None, False, "recalibrating", None)
            self._set(cal, image)
            self._followed_since = None
            self.events.append(KeeperEvent(t_s, "recalibrated", "automatic calibration from this frame"))
            log.info("camera recalibrated at %.3f s", t_s)
            return KeeperState(t_s, cal, True, "recalibrated", None)
        res = self.checker.check(image, t_s)
        shifts = [s.shift_px for s in res.sides if math.isfinite(s.shift_px)]
        if len(shifts) >= cfg.min_sides and max(abs(v) for v in shifts) <= cfg.ok_px:
            self._bad = self._shifted = 0
            return KeeperState(t_s, self.calibration, True, "ok", res)
        if len(shifts) == 4 and max(abs(v) for v in shifts) <= cfg.follow_px:
            self._shifted += 1
            if self._shifted < cfg.follow_frames and max(abs(v) for v in shifts) <= 2 * cfg.ok_px:
                self._bad = 0  # one frame's small excess is noise until the next frame repeats it
                return KeeperState(t_s, self.calibration, True, "ok", res)
            try:
                cal = self._refit(res)
            except CalibrationError as e:
                log.debug("follow at %.3f s failed: %s", t_s, e)
            else:
                self._bad = self._shifted = 0
                self.events.append(KeeperEvent(t_s, "followed", f"cushions moved up to {max(abs(v) for v in shifts):.1f} px"))
                if self._followed_since is None or t_s - self._last_follow > cfg.refresh_s:
                    self._followed_since = t_s  # a new drift
                self._last_follow = t_s
                if t_s - self._followed_since >= cfg.refresh_s:
                    # Small steps add up: a full calibration of this frame resets the sum.
                    try:
                        cal = self.recalibrate(image)
                        self.events.append(KeeperEvent(t_s, "refreshed", "automatic calibration while following a drift"))
                        self._followed_since = None
                    except CalibrationError as e:
                        log.debug("refresh at %.3f s refused: %s", t_s, e)
                self._set(cal, image)
                return KeeperState(t_s, cal, True, "followed", res)
        self._bad += 1
        self._shifted = 0
        if self._bad >= cfg.confirm_frames:
            self.events.append(KeeperEvent(t_s, "lost", f"cushions not where calibrated on {4 - len(shifts)} side(s), "
                                                       f"shift up to {res.max_shift_px:.1f} px"))
            log.info("camera moved at %.3f s: recalibrating", t_s)
            self.calibration = None
            self._bad = 0
            return KeeperState(t_s, None, False, "recalibrating", res)
        return KeeperState(t_s, self.calibration, False, "suspect", res)

    def _refit(self, res: CheckResult) -> Calibration:
        """The calibration with its cushion lines refitted to the measured nose points (same lens; the
        camera centre used for parallax stays that of the last full calibration, refreshed every
        ``refresh_s``)."""
        cal = self.calibration
        assert cal is not None
        lines = []
        for s in res.sides:
            if len(s.points_px) < 5:
                raise CalibrationError(f"too few points on the {s.side} cushion to follow")
            c, d, _ = detect.fit_line(cal.undistort_px(s.points_px))
            lines.append((c, d))
        top, right, bottom, left = lines
        corners = np.array([detect.intersect(*left, *top), detect.intersect(*top, *right),
                            detect.intersect(*right, *bottom), detect.intersect(*bottom, *left)])
        hom = Homography.from_correspondences(corners, np.array(self.profile.corners_mm))
        return replace(cal, homography=hom, corners_px=cal.distort_px(corners))
