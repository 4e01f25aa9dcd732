"""One shot's frames as arrays, and each ball's motion in it: where it rested, when it started, the
pieces of free motion it went through and the velocity changes (kinks) between them, where it
ended. The per-kind modules (:mod:`tracking.infer.contact`, ``cushion``, ``pot`` ...) read this.

Every time here is seconds from the video's start; a time between two frames comes from fitted
pieces (:mod:`tracking.infer.segments`), not from a frame index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from tracking.geometry import Outlines, TableGeometry, cue_sticks
from tracking.infer.segments import Piece, segment
from tracking.tracks import Tracks, TrackState

if TYPE_CHECKING:
    from tracking.infer import InferConfig

__all__ = ["ShotFrames", "Kink", "BallMotion", "ShotContext", "build_context"]


@dataclass(frozen=True, slots=True, eq=False)
class ShotFrames:
    """The snapshots of one motion episode stacked: arrays are (T,) or (T, n) or (T, n, 2)."""

    t: np.ndarray
    z: np.ndarray  # measured centres, NaN where not measured
    xy: np.ndarray  # filtered centres
    v: np.ndarray  # filtered velocities
    state: np.ndarray  # TrackState codes
    height: np.ndarray
    occluders: tuple[tuple[np.ndarray, ...], ...]
    pin_state: np.ndarray | None  # (T, p) PinState codes, or None without pins
    pin_xy: np.ndarray | None  # (T, p, 2)
    valid: np.ndarray  # (T,) bool
    k_trigger: int = 0  # the frame where the first motion was confirmed (three frames off its place)
    _outlines: dict[int, Outlines] = field(default_factory=dict, repr=False)  # frame index -> its occluders, made ready

    @classmethod
    def stack(cls, frames: Sequence[Tracks], k_trigger: int = 0, lone_mm: float = 0.0) -> "ShotFrames":
        """``lone_mm`` (> 0): a sighting more than twice this far off a ball's place, the two sightings
        before it and the two after it together within this of that place, is vision's outlier and is
        dropped (a ball cannot leave its place and be back in it within two frames)."""
        pins = [f.pins for f in frames]
        has_pins = any(p is not None and len(p) for p in pins)
        if has_pins:
            p = max(len(q) for q in pins if q is not None)
            ps = np.stack([q.state if q is not None and len(q) == p else np.zeros(p, dtype=np.uint8) for q in pins])
            pxy = np.stack([q.xy_mm if q is not None and len(q) == p else np.full((p, 2), np.nan) for q in pins])
        else:
            ps = pxy = None
        return cls(
            t=np.array([f.t_s for f in frames]),
            z=_drop_lone_sightings(np.stack([f.z_mm for f in frames]), lone_mm),
            xy=np.stack([f.xy_mm for f in frames]),
            v=np.stack([f.v_mm_s for f in frames]),
            state=np.stack([f.state for f in frames]),
            height=np.stack([f.height_mm for f in frames]),
            occluders=tuple(f.occluders for f in frames),
            pin_state=ps, pin_xy=pxy,
            valid=np.array([f.valid for f in frames]),
            k_trigger=int(k_trigger),
        )

    @property
    def n_frames(self) -> int:
        return len(self.t)

    def occluder_near(self, k: int, xy: np.ndarray, within: float) -> float:
        """How far ``xy`` lies from frame ``k``'s nearest occluder (negative: under it), when one comes
        within ``within`` of it; else inf."""
        if not self.occluders[k]:
            return math.inf
        if k not in self._outlines:
            self._outlines[k] = Outlines(self.occluders[k])
        return self._outlines[k].nearest(xy, within)


@dataclass(slots=True)
class Kink:
    """A change of velocity of one ball between two pieces, at ``t`` (between frames)."""

    t: float
    xy: np.ndarray
    v_in: np.ndarray
    v_out: np.ndarray
    piece: int  # index of the piece before it
    explained: bool = False

    @property
    def dv(self) -> float:
        return float(np.linalg.norm(self.v_out - self.v_in))


@dataclass(slots=True)
class BallMotion:
    """What one ball did during the shot."""

    i: int
    id: str
    present0: bool  # on the table when the episode began
    r0: np.ndarray | None  # where it rested before it moved (or where it was first seen)
    sigma0: float  # its measurement noise at rest, mm
    moved: bool = False
    k_move: int | None = None  # first frame it was seen off its rest place
    t_start: float | None = None  # when it started to move (estimated between frames)
    ts: np.ndarray = field(default_factory=lambda: np.zeros(0))  # times of the moving samples
    zs: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    pieces: list[Piece] = field(default_factory=list)
    kinks: list[Kink] = field(default_factory=list)
    k_last: int = -1  # last frame it was measured
    end_state: int = TrackState.OFF
    r1: np.ndarray | None = None  # where it came to rest (None: it left the table)
    t_stop: float | None = None
    cause: str | None = None  # what started it: "cue", "ball", "hand" (set by the kind modules)
    nudged: bool = False  # moved a little, too little for any frame to show it moving (no pieces, no start time)
    noise_scale: float = 1.0  # its measurements in motion scatter this many times more than ``sigma0`` and the blur say

    @property
    def t_last(self) -> float:
        return float(self.ts[-1]) if len(self.ts) else math.nan

    def at(self, t: float) -> np.ndarray | None:
        """Where the ball was at ``t``: its rest place before it moved, a piece, or its final place."""
        if not self.moved or self.t_start is None or t <= self.t_start:
            return self.r0
        for p in self.pieces:
            if t <= p.t_last:
                return p.at(max(t, p.t_first)) if t >= p.t_first else p.at(t)
        if self.r1 is not None:
            return self.r1
        return self.pieces[-1].at(t) if self.pieces else self.r0

    def path(self, ts: np.ndarray) -> np.ndarray:
        """(k, 2): where the ball was at each of the times ``ts``, as :meth:`at` says (at once)."""
        if self.r0 is None:
            return np.array([self.at(t) for t in ts])
        out = np.empty((len(ts), 2))
        out[:] = self.r0
        if not self.moved or self.t_start is None:
            return out
        # the first piece that lasts until t (pieces come in time order)
        k = np.searchsorted(np.array([p.t_last for p in self.pieces]), ts, side="left")
        k[ts <= self.t_start] = -1
        for j, p in enumerate(self.pieces):
            if np.any(sel := k == j):
                out[sel] = p.at(ts[sel])
        if np.any(after := k == len(self.pieces)):
            out[after] = self.r1 if self.r1 is not None else self.pieces[-1].at(ts[after]) if self.pieces else self.r0
        return out

    def piece_at(self, t: float) -> Piece | None:
        """The piece covering ``t`` (the nearest when ``t`` falls between two)."""
        if not self.pieces:
            return None
        for k, p in enumerate(self.pieces):
            if t < p.t_first:
                return p if k == 0 else (self.pieces[k - 1] if t - self.pieces[k - 1].t_last < p.t_first - t else p)
            if t <= p.t_last:
                return p
        return self.pieces[-1]


@dataclass(slots=True)
class ShotContext:
    """Everything the kind modules share about one shot."""

    frames: ShotFrames
    geometry: TableGeometry
    config: "InferConfig"
    ids: tuple[str, ...]
    motions: list[BallMotion]
    dt: float  # the frame period
    striker: int = -1
    t_strike: float = math.nan
    _cues: dict[int, list] = field(default_factory=dict)  # frame index -> its cues (:meth:`cues`)
    camera_xyh_mm: tuple[float, float, float] | None = None  # where the camera hangs (the calibration's), if known

    @property
    def R(self) -> float:
        return self.geometry.R

    def moving(self) -> list[BallMotion]:
        return [m for m in self.motions if m.moved]

    def cue_near(self, xy: np.ndarray, t0: float, t1: float, reach_mm: float) -> tuple[bool, bool]:
        """Whether an occluder came within ``reach_mm`` of ``xy`` between ``t0`` and ``t1``, and
        whether one of those was stick-shaped (a cue) with its tip there."""
        near, tip = self.cue_tip(xy, t0, t1, reach_mm)
        return near, tip <= reach_mm

    def cue_tip(self, xy: np.ndarray, t0: float, t1: float, reach_mm: float, past_mm: float = 0.0) -> tuple[bool, float]:
        """Whether an occluder came within ``reach_mm`` of ``xy`` between ``t0`` and ``t1``, and the
        closest a cue-shaped occluder's tip end came to ``xy`` (inf: none). ``past_mm``: the tip may
        also have gone this far past ``xy`` along its line (following through where a ball stood)."""
        cfg = self.config
        near = False
        tip = math.inf
        ks = np.flatnonzero((self.frames.t >= t0) & (self.frames.t <= t1))
        for k in ks:
            if not self.frames.occluder_near(k, xy, reach_mm) <= reach_mm:
                continue
            near = True
            for a, b in self.cues(k):
                # the tip is the end further inside the table (the butt is in the player's hand, over
                # the rail or beyond); a struck ball lies ahead of the tip, on the cue's line, never
                # under the cue behind it
                if self.geometry_inside(a) < self.geometry_inside(b):
                    a, b = b, a
                u = (a - b) / max(float(np.linalg.norm(a - b)), 1e-9)
                rel = xy - a
                ahead = float(rel @ u)
                aside = abs(float(rel[0] * u[1] - rel[1] * u[0]))
                # (a cue strikes within 0.6 of a radius of the centre: a miscue beyond)
                if self.R - cfg.tip_slack_mm - past_mm <= ahead <= reach_mm and aside <= 0.6 * self.R + cfg.tip_slack_mm / 2:
                    tip = min(tip, float(np.linalg.norm(rel)))
        return near, tip

    def cues(self, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The cues among frame ``k``'s occluders, each as its two ends (a cue cut in pieces by a ball it
        passes over is one cue: its tip is not at that ball). Found once a frame: every ball near the
        strike asks for the same frames."""
        if k not in self._cues:
            cfg = self.config
            self._cues[k] = cue_sticks(self.frames.occluders[k], cfg.cue_min_length_mm, cfg.cue_max_width_mm,
                                       2 * self.R + cfg.cue_gap_mm)
        return self._cues[k]

    def geometry_inside(self, xy: np.ndarray) -> float:
        """How far ``xy`` lies inside the playing surface (negative: outside)."""
        g = self.geometry
        return float(min(xy[0], g.length_mm - xy[0], xy[1], g.width_mm - xy[1]))


def _drop_lone_sightings(z: np.ndarray, tol: float) -> np.ndarray:
    """``z`` (T, n, 2) with every lone sighting off a still ball's place made NaN (:meth:`ShotFrames.stack`)."""
    if tol <= 0:
        return z
    for i in range(z.shape[1]):
        ks = np.flatnonzero(np.isfinite(z[:, i, 0]))
        if len(ks) < 5:
            continue
        zk = z[ks, i]
        around = np.stack([zk[:-4], zk[1:-3], zk[3:-1], zk[4:]], axis=1)  # the two before and the two after each
        place = np.median(around, axis=1)
        spread = np.linalg.norm(around - place[:, None], axis=2).max(axis=1)
        off = np.linalg.norm(zk[2:-2] - place, axis=1)
        lone = np.flatnonzero((spread <= tol) & (off > 2.0 * tol) & (ks[4:] - ks[:-4] <= 6)) + 2
        z[ks[lone], i] = np.nan
    return z


def _robust_centre(z: np.ndarray) -> np.ndarray:
    return np.median(z, axis=0)


def _motion(frames: ShotFrames, i: int, ball: str, geometry: TableGeometry, cfg: "InferConfig", dt: float) -> BallMotion:
    """The motion of ball ``i`` in the episode."""
    z = frames.z[:, i]
    meas = np.isfinite(z[:, 0])
    state = frames.state[:, i]
    on = state != TrackState.OFF
    present0 = bool(on[min(frames.k_trigger, len(on) - 1)]) if len(on) else False  # on the table when the shot began
    ks = np.flatnonzero(meas)
    m = BallMotion(i, ball, present0, None, cfg.sigma_rest_mm)
    if not present0 and len(ks) and ks[-1] < frames.k_trigger:
        # gone before the shot began (lifted away, or its sightings handed to a ball of another colour
        # when they bore that colour out): the inferer reported that between shots; it takes no part
        m.end_state = int(state[-1])
        return m
    if len(ks) == 0:
        m.end_state = int(state[-1])
        if present0:
            m.r0 = frames.xy[0, i].copy()
        return m
    m.k_last = int(ks[-1])
    m.end_state = int(state[-1])
    if not present0 and ks[0] > frames.k_trigger and len(ks) >= 3 and \
            np.linalg.norm(z[ks[:3]] - np.median(z[ks[:3]], axis=0), axis=1).max() <= cfg.move_mm:
        # first seen after the strike, standing still: it was there all along, hidden (under an arm)
        m.present0 = True
    # a measurement of a ball an occluder half covers is off by more than the noise (its visible part
    # is not centred): such samples count for less everywhere below
    doubt = np.ones(len(frames.t))
    R = geometry.R
    for k in ks:
        if frames.occluder_near(k, z[k], R) < R:
            doubt[k] = cfg.covered_doubt
    # where it rested first: the median of its first clear measurements (the pre-roll)
    clear = ks[doubt[ks] == 1.0]
    # the clear measurements just before the first motion of the shot was confirmed (three frames
    # earlier it had started): the freshest place at rest, whenever the ball was put there
    before = clear[clear <= frames.k_trigger - 3]
    if len(before) >= 3:
        head = before[-cfg.rest_samples:]
    else:
        head = (clear if len(clear) >= 3 else ks)[: max(3, min(len(ks), cfg.rest_samples))]
        # a ball first seen just before it was struck (named late, set down and played at once): only
        # its first measurements that stay together are its place at rest (the first alone, when the
        # next is already off it)
        together = np.flatnonzero(np.linalg.norm(z[head] - z[head[0]], axis=1) > cfg.move_mm)
        if len(together):
            head = head[: together[0]]
    r0 = _robust_centre(z[head])
    spread = np.linalg.norm(z[head] - r0, axis=1)
    # the median distance of 2-D Gaussian noise from its centre is 1.1774 sigma (Rayleigh)
    m.sigma0 = float(np.clip(np.median(spread) / 1.1774, 0.4, 4.0)) if len(head) >= 3 else cfg.sigma_rest_mm
    m.r0 = r0
    tol = max(cfg.move_mm, 4.0 * max(m.sigma0, 0.8))
    dist = np.linalg.norm(z[ks] - r0, axis=1)
    off = dist > tol * doubt[ks]
    # the first measurement off the rest place, confirmed by the next two (noise alone almost never
    # throws three in a row that far)
    first = None
    # (a ball that leaves the table after its last measurement needs fewer: its vanishing confirms it)
    left = state[-1] in (TrackState.OFF, TrackState.IN_POCKET)
    for j in range(len(ks)):
        rest_ok = [bool(off[k]) for k in range(j + 1, min(j + 3, len(ks)))]
        if off[j] and all(rest_ok) and (len(rest_ok) == 2 or left):
            # (never far, and back in its place for three frames running just after: vision's noise, a
            # ball beside a hand or an arm, its outline pulled by the shadow; not a start)
            back = ~off[j + 3:j + 6]
            if len(back) == 3 and back.all() and float(dist[j:j + 3].max()) <= 2.0 * tol:
                continue
            first = j
            break
    if first is not None and first + 3 < len(ks) and dist[first] <= 1.5 * tol:
        # the first sighting only just off its place, when the way the ball then went (a line through
        # the next three) puts it further from that sighting than its place does: the noise of a ball
        # still at rest, struck after it (a ball frozen to a cushion, struck into it and off it at once);
        # the line must be a straight run going away from the place, not one a cushion or a ball turned
        nxt = ks[first + 1:first + 4]
        A = np.stack([np.ones(3), frames.t[nxt] - frames.t[nxt[0]]], axis=1)
        c = np.linalg.lstsq(A, z[nxt], rcond=None)[0]
        straight = float(np.linalg.norm(A @ c - z[nxt], axis=1).max()) <= tol and float(c[1] @ (z[nxt[0]] - r0)) > 0.0
        was = c[0] + c[1] * (frames.t[ks[first]] - frames.t[nxt[0]])
        if straight and float(np.linalg.norm(z[ks[first]] - r0)) < float(np.linalg.norm(z[ks[first]] - was)):
            first += 1
    if first is None and left and ks[-1] < len(frames.t) - 1:
        # it vanished from its place at rest: struck into a pocket between two frames, or lifted
        m.nudged = True
        m.moved = True
        return m
    if first is None:
        tail = ks[-min(len(ks), cfg.rest_samples):]
        on_end = state[-1] in (TrackState.SEEN, TrackState.OCCLUDED, TrackState.MISSING)
        m.r1 = _robust_centre(z[tail]) if on_end and len(tail) >= 3 else (r0 if on_end else None)
        # nudged: a thin touch that moved it a little (less than the noise lets a single frame tell):
        # its place before and after differ by more than their medians' doubt
        if m.r1 is not None and len(head) >= 5 and len(tail) >= 5 and ks[-1] - ks[0] > 2 * cfg.rest_samples:
            doubt = 1.2533 * max(m.sigma0, 0.8) * math.sqrt(1.0 / len(head) + 1.0 / len(tail))
            if np.linalg.norm(m.r1 - r0) > max(cfg.nudge_mm, 4.0 * doubt):
                m.moved = m.nudged = True
        return m
    # where it ended: the run of last measurements that stay near the very last ones, if it is on the
    # table at the end (a ball still creeping has no such run yet)
    last_med = _robust_centre(z[ks[-3:]])
    near_end = np.linalg.norm(z[ks] - last_med, axis=1) <= tol * doubt[ks]
    run = 0
    while run < len(ks) - first - 1 and near_end[len(ks) - 1 - run]:
        run += 1
    on_table_end = state[-1] in (TrackState.SEEN, TrackState.OCCLUDED, TrackState.MISSING)
    last = len(ks) - 1
    if on_table_end and run >= 3:
        m.r1 = _robust_centre(z[ks[len(ks) - run:]])
        last = len(ks) - run  # the first still measurement closes the motion
    if last <= first:
        last = min(first + 1, len(ks) - 1)
    sel = ks[first:last + 1]
    m.moved = True
    m.k_move = int(ks[first])
    m.ts = frames.t[sel]
    m.zs = z[sel]
    speed = np.linalg.norm(np.nan_to_num(frames.v[sel, i]), axis=1)
    sigma = np.hypot(m.sigma0, cfg.blur_s * speed) * doubt[sel]
    if len(sel) >= 2:
        pen = cfg.piece_penalty + cfg.piece_penalty_log * math.log(len(sel))
        m.pieces = segment(m.ts, m.zs, sigma, pen, max_accel_mm_s2=cfg.max_accel_mm_s2)
        # the noise of a ball in motion is not known in advance (blur, vision's own doubt): measured
        # from the residuals of the longer pieces, it scales the noise, and the split is redone with it
        long = [p for p in m.pieces if p.n >= 6]
        if long:
            scale = math.sqrt(sum(p.rms ** 2 * max(2 * (p.n - 3), 1) for p in long) / sum(max(2 * (p.n - 3), 1) for p in long))
            m.noise_scale = max(scale, 1.0)
            if scale > 1.2:
                m.pieces = segment(m.ts, m.zs, sigma * scale, pen, max_accel_mm_s2=cfg.max_accel_mm_s2)
    prev_t = frames.t[ks[first - 1]] if first > 0 else m.ts[0] - dt
    if len(sel) < 2:
        # seen once on its way, then gone (struck off the table, into a pocket): it left its rest
        # place after the last frame that saw it there, at least this fast
        v = (m.zs[0] - r0) / max(float(m.ts[0] - prev_t), dt)
        m.pieces = [Piece(0, 0, float(m.ts[0]), float(m.ts[0]), float(m.ts[0]), np.array([m.zs[0, 0], v[0], 0.0]),
                          np.array([m.zs[0, 1], v[1], 0.0]), 0.0)]
    # a step to a new place at rest too small for a touch (vision's measure of a still ball shifting
    # as the light or the calibration changes), before the ball really starts: it rested there
    while len(m.pieces) > 1:
        p = m.pieces[0]
        still = m.zs[p.i0:p.i1 + 1]
        if p.t_last - p.t_first < cfg.rest_window_s or np.max(np.linalg.norm(still - np.median(still, axis=0), axis=1)) > tol \
                or float(np.linalg.norm(np.median(still, axis=0) - r0)) >= cfg.touch_min_mm:
            break
        r0 = m.r0 = np.median(still, axis=0)
        prev_t, cut = float(m.ts[p.i1]), p.n
        m.ts, m.zs, sel = m.ts[cut:], m.zs[cut:], sel[cut:]
        m.k_move = int(sel[0])
        m.pieces = [replace(q, i0=q.i0 - cut, i1=q.i1 - cut) for q in m.pieces[1:]]
    # when it left its rest place: the first piece run back to it
    p0 = m.pieces[0]
    m.t_start = _closest_time(p0, r0, prev_t - dt, m.ts[0])
    # kinks between pieces
    for k in range(len(m.pieces) - 1):
        a, b = m.pieces[k], m.pieces[k + 1]
        t = _meeting_time(a, b, dt)
        m.kinks.append(Kink(t, 0.5 * (a.at(t) + b.at(t)), a.velocity(t), b.velocity(t), k))
    if m.r1 is not None:
        pl = m.pieces[-1]
        m.t_stop = _stop_time(pl, m.ts[-1], dt)
    return m


def _closest_time(p: Piece, xy: np.ndarray, lo: float, hi: float) -> float:
    ts = np.linspace(lo, hi, 401)
    d = np.linalg.norm(p.at(ts) - xy, axis=1)
    return float(ts[int(np.argmin(d))])


def _meeting_time(a: Piece, b: Piece, dt: float) -> float:
    """Where two consecutive pieces meet: the time between a's last and b's first sample (a frame
    either side allowed) at which they come closest."""
    ts = np.linspace(a.t_last - 0.5 * dt, b.t_first + 0.5 * dt, 401)
    d = np.linalg.norm(a.at(ts) - b.at(ts), axis=1)
    return float(ts[int(np.argmin(d))])


def _stop_time(p: Piece, t_last: float, dt: float) -> float:
    """When the last piece's speed along its way reaches zero (it rolls to rest), not before its last
    sample nor more than ten frames after it."""
    c1 = np.array([p.cx[1], p.cy[1]])
    c2 = np.array([p.cx[2], p.cy[2]])
    if float(c2 @ c2) < 1e-9 or float(c1 @ c2) >= 0:
        return t_last + dt
    u = -float(c1 @ c2) / (2 * float(c2 @ c2))
    return float(np.clip(p.t0 + u, t_last - dt, t_last + 10 * dt))


def build_context(frames: ShotFrames, ids: tuple[str, ...], geometry: TableGeometry, cfg: "InferConfig",
                  camera_xyh_mm: tuple[float, float, float] | None = None) -> ShotContext:
    dts = np.diff(frames.t)
    dt = float(np.median(dts[dts > 0])) if np.any(dts > 0) else 1 / 30
    motions = [_motion(frames, i, b, geometry, cfg, dt) for i, b in enumerate(ids)]
    return ShotContext(frames, geometry, cfg, ids, motions, dt, camera_xyh_mm=camera_xyh_mm)
