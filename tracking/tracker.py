"""Multi-ball tracking: vision's detections in, a :class:`~tracking.tracks.Tracks` snapshot per frame out.

``BallTracker(profile).update(dets)`` is called once per frame (also for frames with no detection,
for repeated frames and for frames vision could not read). What it does:

1. **Predict** every track to the frame's timestamp with its Kalman filter (:mod:`tracking.kalman`,
   the real time step), mirrored at the cushion lines a ball would have reached (a 5 m/s ball moves
   three ball widths between two frames at 30 fps: without the reflection the first cushion loses
   it), and, for every pair of tracks whose paths meet within a ball's width during the step, the
   positions an elastic collision would give both (the "just collided" hypothesis).
2. **Associate** in passes with :func:`scipy.optimize.linear_sum_assignment`: named tracks first,
   gated by the Mahalanobis distance of the best hypothesis plus a colour-class cost; then the ones
   left by plain distance within the reach of a fast ball (a ball at rest struck by the cue); then
   new candidates. A ball vision calls occluded, or whose prediction lies under an occluder, is kept
   (its position held) instead of being dropped; one missed on its way over a hole in the bed (bar
   billiards) is held where it was last seen, not carried on past the hole.
3. **Name** balls: the profile's ids come from the colour classes; balls of one colour seen together
   at the start are named by the rack layout (nearest their end cushion first, then across the
   table), a ball seen later takes a free id of its colour (bar billiards: the one out of play the
   longest, as the trough feeds them back; six-pocket tables: the one lost most recently, off the
   cloth before those seen dropping into a pocket). Ids then follow the motion.

The tracker never decides events (pots, placements): a ball nobody sees for ``coast_s`` is simply
no longer on the table, and :mod:`tracking.infer` says why.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from calibration.table import TableProfile
from tracking.associate import associate
from tracking.geometry import TableGeometry, outline_width, polygon_distance
from tracking.kalman import ball_filter, process_noise, reflect, transition
from tracking.tracks import Tracks, TrackState
from vision.types import UNCERTAIN, BallState, FrameDetections

__all__ = ["TrackerConfig", "BallTracker"]


@dataclass(frozen=True, slots=True)
class TrackerConfig:
    """How the tracker weighs what vision says. Every length in mm, every time in seconds."""

    sigma_mm: float = 1.5  # vision's position noise for a ball at rest; raise it for a coarse or distant camera
    blur_s: float = 0.001  # the noise grows by this times the speed (motion blur smears fast balls: mm per mm/s)
    accel_rest_mm_s2: float = 15.0  # process noise at rest: small, so a still ball's position averages down
    accel_moving_mm_s2: float = 2500.0  # of a moving ball: cloth friction is 0.1-0.2 g; spin bends paths after contacts
    rest_speed_mm_s: float = 30.0  # slower than this a ball is filtered as at rest
    gate_chi2: float = 16.0  # Mahalanobis gate of the first pass (2 degrees of freedom: 16 keeps 99.97 % of true matches)
    miss_cost: float = 4.0  # first-pass cost added to a track missed in all of its last 8 frames (in proportion)
    robust_chi2: float = 6.0  # a measurement further out than this (Mahalanobis) is down-weighted in proportion
    max_speed_mm_s: float = 9000.0  # the fastest ball (a hard break is about 8 m/s): how far the second pass looks
    class_floor: float = 0.02  # lowest class probability in the class cost: one wrong label never forbids a match
    class_weight: float = 2.0  # class cost = weight * -log(probability of the track's class)
    jump_min_prob: float = 0.15  # a track only jumps (second pass) to a detection at least this likely of its colour
    confirm_hits: int = 3  # detections of a new ball before it is named ...
    confirm_window: int = 5  # ... within this many frames
    min_score: float = 0.3  # detections vision is less sure of than this are ignored
    name_min_score: float = 0.6  # a new ball is named only when vision's mean score of it reaches this ...
    name_steady_s: float = 0.2  # ... or when it has been seen at rest in one place, in one colour, this long (a dim ball, its edge lost in its shadow) ...
    steady_min_score: float = 0.5  # ... with a mean score above this (vision scores a ball it found only as a blob, or remembers, 0.5: a resting hand's fingertip)
    name_margin_nats: float = 1.0  # a new ball takes a colour only when its colour evidence favours it over every other colour with a free ball by this much (log-likelihood)
    coast_s: float = 0.5  # a ball missed this long with nothing over it has left the table
    bounce_unseen_s: float = 0.07  # a ball predicted off a cushion and not seen since, nothing over it, this long (or seen beyond its line, going out, and not since): it left over the cushion
    hidden_coast_s: float = 120.0  # a ball under a hand or an arm is kept this long
    startup_s: float = 0.3  # the balls seen in the first frames are named together (by the rack layout) after this
    restitution: float = 0.8  # cushion restitution for predicting a bounce
    ball_restitution: float = 0.93  # ball-ball restitution for predicting a collision
    collision_sigma_mm: float = 6.0  # extra position doubt of a collision hypothesis (throw, spin)
    rename_nats: float = 30.0  # a named ball whose colour evidence favours another colour by this much (log-likelihood) takes a free id of that colour
    reuse: str = "auto"  # which free id a newly seen ball takes: "oldest", "recent" or "auto" (oldest on bar billiards)


class _Track:
    """One ball candidate or named ball (internal, mutable)."""

    __slots__ = ("uid", "kf", "t_s", "ball", "logp", "hits", "first_t", "last_seen_t", "state", "height", "z",
                 "moving", "hyp", "score", "n_scores", "seen_xy", "left_cloth", "steady_xy", "steady_label", "steady_t",
                 "at_occluder", "under_hand", "bounced_t", "flew_t", "jumped_from", "dropped")

    def __init__(self, uid: int, kf, t_s: float, logp: np.ndarray):
        self.uid = uid
        self.kf = kf
        self.t_s = t_s
        self.ball = -1  # index into the profile's balls; -1 while a candidate
        self.logp = logp  # (k,) accumulated class log-likelihoods
        self.hits = 1  # bitmask of the last frames with a detection (bit 0: this frame)
        self.first_t = t_s
        self.last_seen_t = t_s
        self.state = TrackState.SEEN
        self.height = 0.0
        self.z = np.array([np.nan, np.nan])
        self.moving = False
        self.hyp: list[tuple[np.ndarray, float, np.ndarray]] = []  # collision hypotheses: position, extra sigma, velocity
        self.score = 0.0
        self.n_scores = 0  # sightings folded into ``score``
        self.seen_xy = kf.x[[0, 2]].copy()  # the filtered position when it was last measured
        self.left_cloth = False  # its prediction ran off the playing surface (a pocket, over a cushion)
        # where its measurements have stayed, and the colour vision has called it every time, since ``steady_t``
        self.steady_xy = self.seen_xy.copy()
        self.steady_label = ""
        self.steady_t = t_s
        self.at_occluder = False  # missed with an occluder over part of it (a cue at it may just have struck it)
        self.under_hand = False  # missed under an occluder that can cover a ball (a hand, an arm; not a cue)
        self.bounced_t: float | None = None  # its prediction came off a cushion at this time, the ball not seen since
        self.flew_t: float | None = None  # seen beyond a cushion's line going out: flying off the table since
        self.jumped_from: tuple[np.ndarray, np.ndarray, float] | None = None  # its filter's state and covariance at rest before its last jump, and its time
        self.dropped: tuple[np.ndarray, np.ndarray, float] | None = None  # missed going over a bed hole: where it was last seen, its velocity, when

    @property
    def xy(self) -> np.ndarray:
        return self.kf.x[[0, 2]]

    @property
    def v(self) -> np.ndarray:
        return self.kf.x[[1, 3]]

    def hit_count(self, window: int) -> int:
        return bin(self.hits & ((1 << window) - 1)).count("1")


class BallTracker:
    """Tracks every ball of ``profile`` from per-frame detections; see the module docstring."""

    def __init__(self, profile: TableProfile, config: TrackerConfig | None = None):
        self.profile = profile
        self.config = config or TrackerConfig()
        self.geometry = TableGeometry(profile)
        self.R = profile.ball_radius_mm
        self.ids = profile.ball_ids
        self.ball_classes = tuple(b.colour for b in profile.balls)
        self.classes = tuple(dict.fromkeys(self.ball_classes))
        self._class_of_ball = np.array([self.classes.index(c) for c in self.ball_classes])
        self._uid = itertools.count(1)  # per tracker: ids never leak between trackers
        self.tracks: list[_Track] = []
        self.lost_t = np.full(len(self.ids), -math.inf)  # when each ball was last on the table (-inf: never seen)
        self.lost_in_pocket = np.zeros(len(self.ids), dtype=bool)
        self._start_t: float | None = None
        self._prev_t: float | None = None
        self._step_s = 1.0  # the time since the previous readable frame
        self._named_start = False
        self._last: Tracks | None = None
        reuse = self.config.reuse
        if reuse == "auto":
            reuse = "oldest" if profile.kind == "bar_billiards" else "recent"
        if reuse not in ("oldest", "recent"):
            raise ValueError(f"TrackerConfig.reuse must be 'oldest', 'recent' or 'auto', got {self.config.reuse!r}")
        self._reuse = reuse

    # ---- the per-frame entry point ----------------------------------------------------------
    def update(self, dets: FrameDetections) -> Tracks:
        """Take one frame's detections; return the snapshot of every ball at ``dets.t_s``."""
        if dets.repeated and self._last is not None:
            return self._snapshot(dets, fresh=False)
        if not dets.valid:
            return self._snapshot(dets, fresh=False)
        t = float(dets.t_s)
        if self._start_t is None:
            self._start_t = t
        for tr in self.tracks:
            self._predict(tr, t)
        self._step_s = t - self._prev_t if self._prev_t is not None else 1.0
        self._collision_hypotheses(self._step_s)
        self._prev_t = t
        self._associate(dets, t)
        self._name(t)
        self._retire(t)
        return self._snapshot(dets, fresh=True)

    # ---- prediction ------------------------------------------------------------------------------
    def _accel(self, tr: _Track) -> float:
        """Process noise: small at rest; for a moving ball growing with its speed up to
        ``accel_moving_mm_s2`` at 2 m/s (a slow ball cannot change much but by a collision, which the
        hypotheses and the reach pass cover)."""
        if not tr.moving:
            return self.config.accel_rest_mm_s2
        return self.config.accel_moving_mm_s2 * (0.15 + 0.85 * min(1.0, float(np.linalg.norm(tr.v)) / 2000.0))

    def _predict(self, tr: _Track, t: float) -> None:
        dt = t - tr.t_s
        tr.hyp = []
        if dt <= 0:
            return
        before = tr.kf.x.copy()
        step = round(dt, 6)  # the same step hits the cache of F and Q
        tr.kf.predict(F=transition(step), Q=process_noise(step, self._accel(tr)))
        tr.t_s = t
        if tr.moving and tr.state != TrackState.AIRBORNE:
            # mirror the prediction at the cushions it reached (up to two: a corner); a ball in the
            # air flies over them
            start = before[[0, 2]]
            for _ in range(2):
                hits = self.geometry.bounce(start, tr.xy - start)
                if not hits:
                    break
                axis, line = hits[0]
                if tr.bounced_t is None:
                    tr.bounced_t = t
                    # or it flew over the cushion (vision reads no height off a fast ball): seen on
                    # its straight way beyond the line, it is followed there, off the table
                    tr.hyp.append((tr.xy.copy(), self.config.collision_sigma_mm, tr.v.copy()))
                reflect(tr.kf, axis, line, self.config.restitution)
                start = start.copy()
                start[axis] = line
        if tr.dropped is not None and t - tr.dropped[2] <= 3.5 * self._step_s:
            # or it ran on over the hole it was missed at (fast, or the hole covered, 2i): seen on its way
            # in the next frames (not later: carried on further, the way takes the next ball that moves)
            xy0, v0, t0 = tr.dropped
            tr.hyp.append((xy0 + v0 * (t - t0), self.config.collision_sigma_mm, v0))
        if tr.moving and not self.geometry.on_table(tr.xy, margin_mm=self.R):
            # last seen beyond a cushion's line (not in a pocket's mouth), where no ball on the cloth
            # can be: it is flying off the table over that cushion
            seen = before[[0, 2]]
            if tr.flew_t is None and any(float(c.distance(seen)) < 0 and bool(c.spans(seen)) for c in self.geometry.main_lines):
                tr.flew_t = t
            # a ball leaving the cloth where no cushion sends it back (into a pocket's mouth) is not
            # followed beyond it, and only comes back close to where it left (a rattle in the jaws);
            # (after the mirroring: a fast ball near a cushion bounces off it, it does not leave)
            # unless seen on its straight way on over the pocket's mouth: flying over it
            if self._over_pockets(tr.xy[None])[0]:
                tr.hyp.append((tr.xy.copy(), self.config.collision_sigma_mm, before[[1, 3]].copy()))
            tr.kf.x = before
            tr.kf.x[[1, 3]] = 0.0
            tr.moving = False
            tr.left_cloth = True

    def _collision_hypotheses(self, step_s: float) -> None:
        """For pairs of tracks whose centres come 2R apart during the last ``step_s`` seconds, the
        positions an elastic collision along the line of centres gives both (equal masses)."""
        live = [tr for tr in self.tracks if tr.ball >= 0 or tr.hits & 1]
        movers = [tr for tr in live if tr.moving]
        if not movers or step_s <= 0:
            return
        R2 = 2 * self.R
        e = self.config.ball_restitution
        for a in movers:
            for b in live:
                if b is a or (b.moving and b.uid < a.uid):
                    continue
                va, vb = a.v, b.v
                pa0, pb0 = a.xy - va * step_s, b.xy - vb * step_s  # where both were a step ago
                p, q = pa0 - pb0, va - vb
                qq = float(q @ q)
                c = float(p @ p) - R2 * R2
                if qq < 1e-9 or c < -R2:  # no relative motion, or already overlapping (a cluster at rest)
                    continue
                bq = float(p @ q)
                disc = bq * bq - qq * c
                if disc < 0:
                    continue
                tc = (-bq - math.sqrt(disc)) / qq
                if not -1e-6 <= tc <= step_s:
                    continue
                ca, cb = pa0 + va * tc, pb0 + vb * tc
                n = (cb - ca) / R2
                un = float((va - vb) @ n)
                if un <= 0:
                    continue
                dv = n * un * (1 + e) / 2
                rest = step_s - tc
                sigma = self.config.collision_sigma_mm + 0.1 * un * rest
                a.hyp.append((ca + (va - dv) * rest, sigma, va - dv))
                b.hyp.append((cb + (vb + dv) * rest, sigma, vb + dv))

    # ---- association -----------------------------------------------------------------------------
    def _noise(self, speed: np.ndarray | float) -> np.ndarray | float:
        return np.hypot(self.config.sigma_mm, self.config.blur_s * speed)

    def _class_cost(self, cls: np.ndarray, prob: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """(n, m) cost of giving detections (rows of ``prob``) to tracks of class index ``cls``."""
        if prob.shape[1] == 0:
            return np.zeros((len(cls), len(prob)))
        p = np.ones((len(cls), len(prob)))
        ok = columns[cls] >= 0
        p[ok] = prob[:, columns[cls[ok]]].T
        return self.config.class_weight * -np.log(np.maximum(p, self.config.class_floor))

    def _associate(self, dets: FrameDetections, t: float) -> None:
        cfg = self.config
        b = dets.balls
        keep = b.score >= cfg.min_score
        # a ball on the cloth lies on the playing surface (within the noise); one in the air may be
        # over the rail, flying off the table
        margin = np.where(b.state == BallState.AIRBORNE, self.profile.rail_width_mm, self.R)
        inside = self.geometry.on_table(b.xy_mm, 0.0) | (
            (b.xy_mm[:, 0] >= -margin) & (b.xy_mm[:, 0] <= self.profile.length_mm + margin)
            & (b.xy_mm[:, 1] >= -margin) & (b.xy_mm[:, 1] <= self.profile.width_mm + margin)) | self._over_pockets(b.xy_mm)
        meas = np.flatnonzero(keep & inside & ((b.state == BallState.VISIBLE) | (b.state == BallState.AIRBORNE)) & np.isfinite(b.xy_mm[:, 0]))
        z = b.xy_mm[meas]
        prob = np.asarray(b.class_prob[meas], dtype=np.float64)
        # vision's class columns -> our class indices
        columns = np.array([list(b.classes).index(c) if c in b.classes else -1 for c in self.classes])
        vec = self._class_vectors(prob, columns)  # each detection's class probabilities, in our classes
        # a ball seen in a pocket's net is off the table: it comes back only as a new ball, by hand
        named = [tr for tr in self.tracks if tr.ball >= 0 and tr.state != TrackState.IN_POCKET]
        cands = [tr for tr in self.tracks if tr.ball < 0]
        free = np.ones(len(meas), dtype=bool)
        in_drop = self._in_pockets(z)
        matched: dict[int, tuple[int, int]] = {}  # track -> (detection, hypothesis: 0 straight, k>0 collision k, -1 reach pass)

        def run_pass(group: list[_Track], cost: np.ndarray, hyp: np.ndarray | None) -> None:
            cols = np.flatnonzero(free)
            if not group or len(cols) == 0:
                return
            res = associate(cost[:, cols], np.inf)
            for r, c in res.matches:
                j = cols[c]
                matched[id(group[r])] = (j, int(hyp[r, j]) if hyp is not None else -1)
                free[j] = False

        for group in (named, cands):
            if not group:
                continue
            cls = np.array([self._class_of_ball[tr.ball] if tr.ball >= 0 else int(np.argmax(tr.logp)) for tr in group])
            ccost = self._class_cost(cls, prob, columns)
            # pass 1: the likelihood of the best hypothesis (Mahalanobis distance plus log det S, so a
            # track that lost its way, with a wide S, does not outbid one that knows where it is), gated
            # by the Mahalanobis distance and by how far a ball can have gone since it was last seen
            xy0 = np.array([tr.xy for tr in group])
            P = np.array([tr.kf.P[::2, ::2] for tr in group])
            speed = np.array([np.linalg.norm(tr.v) for tr in group])
            S = P + np.eye(2)[None] * (self._noise(speed) ** 2)[:, None, None]
            reach = np.array([self._reach(tr, t) for tr in group])
            # a track missed in most recent frames bids less (the score of a track that lost its ball)
            miss = cfg.miss_cost * (1.0 - np.array([tr.hit_count(8) for tr in group]) / 8.0)
            m1 = self._likelihood_cost(z, xy0, S, reach, miss)
            h1 = np.zeros((len(group), len(meas)), dtype=int)
            for r, tr in enumerate(group):
                for k, (xy, extra, _) in enumerate(tr.hyp, start=1):
                    c = self._likelihood_cost(z, xy[None], S[r:r + 1] + np.eye(2) * extra ** 2, reach[r:r + 1], miss[r:r + 1])[0]
                    better = c < m1[r]
                    m1[r, better], h1[r, better] = c[better], k
            # a track that missed its ball last frame (coasting, its prediction wide) takes no ball that
            # vision is sure is another colour when a ball of that colour, seen last frame, is near: that
            # is the ball just struck from rest (outside its own track's narrow gate, found by the second
            # pass), not the coasting one (a colour misread near a pocket's shadow, with no such ball
            # near, may still be the coasting ball)
            lost = np.array([not tr.hits & 1 for tr in group])
            other = (ccost > cfg.class_weight * -math.log(cfg.jump_min_prob)) & (b.label[meas] != UNCERTAIN)[None, :]
            seen = np.flatnonzero([tr.hits & 1 for tr in group])
            owner = (~other[seen] & (np.linalg.norm(z[None, :, :] - xy0[seen, None, :], axis=2) < 6 * self.R)).any(axis=0)
            m1[lost[:, None] & other & owner[None, :]] = np.inf
            run_pass(group, m1 + ccost, h1)
            # pass 2: whoever is left, within the reach of a ball since it was last seen
            left = [r for r, tr in enumerate(group) if id(tr) not in matched]
            if left:
                sub = [group[r] for r in left]
                reach = np.array([self._reach(tr, t) for tr in sub])
                if group is cands:
                    reach = np.minimum(reach, 6 * self.R)
                dist = np.linalg.norm(z[None, :, :] - np.array([tr.xy for tr in sub])[:, None, :], axis=2)
                cost2 = dist / self.R + ccost[left]
                # a jump is only believed of the right colour (vision's probability of the track's class)
                # (an uncertain label, as vision gives a half-hidden or blurred ball, forbids nothing)
                wrong = (ccost[left] > cfg.class_weight * -math.log(cfg.jump_min_prob)) & (b.label[meas] != UNCERTAIN)[None, :]
                # nor of a ball inside a pocket's drop circle: one that rolled there was followed there by
                # the first pass; what vision sees there otherwise is the pocket's dark mouth, or a ball
                # already down (as :meth:`_name` never names a new ball there)
                cost2[(dist > reach[:, None]) | wrong | in_drop[None, :]] = np.inf
                # a ball at rest under a hand (not a cue) jumps only to a ball that looks likeliest its
                # colour: one of unsure colour turning up beside the hand is likelier one it put down
                under = np.array([tr.under_hand and not tr.moving for tr in sub])
                cost2[under[:, None] & (np.argmax(vec, axis=1)[None, :] != cls[left][:, None]) & (dist > 2 * self.R)] = np.inf
                run_pass(sub, cost2, None)
        # update the matched tracks
        logv = np.log(np.maximum(vec, cfg.class_floor))  # each detection's class log-likelihoods
        for tr in self.tracks:
            m = matched.get(id(tr))
            tr.hits = (tr.hits << 1) & 0xFFFF
            if m is None:
                tr.z = np.array([np.nan, np.nan])
                continue
            j, hyp = m
            i = meas[j]
            zj = z[j]
            r = float(self._noise(float(np.linalg.norm(tr.v))))
            if tr.jumped_from is not None:
                # a ball at rest seen once out of its place and, in the next frames, back in it, as still
                # as before: that sighting was vision's outlier, not a strike (a struck ball does not come back)
                x0, p0, t_jump = tr.jumped_from
                tr.jumped_from = None
                back = float(np.linalg.norm(zj - x0[[0, 2]]))
                if hyp <= 0 and t - t_jump <= 2.5 * self._step_s and back <= 3.0 * math.sqrt(p0[0, 0] + p0[2, 2] + 2.0 * cfg.sigma_mm ** 2):
                    # (its place doubted a little more: a ball vision sees part of, its sightings noisier
                    # than at rest in the open, is not to be gated out by the next one)
                    tr.kf.x, tr.kf.P = x0.copy(), p0 + np.diag([1.0, 0.0, 1.0, 0.0]) * (2.0 * cfg.sigma_mm) ** 2
                    r, hyp = cfg.sigma_mm, 0
            if hyp < 0:
                # a jump no prediction covered (a struck ball, a collision nobody foresaw): restart the
                # filter at the measurement, moving from where it was last seen
                v0 = (zj - tr.seen_xy) / max(t - tr.last_seen_t, 1e-3)
                tr.jumped_from = None if tr.moving or not tr.hits & 2 else (tr.kf.x.copy(), tr.kf.P.copy(), t)
                tr.kf = ball_filter(zj, r, v0, sigma_v_mm_s=max(500.0, float(np.linalg.norm(v0))))
                tr.moving = True
            elif hyp > 0:
                # the collision it was predicted to have: restart with the velocity it left with
                v1 = tr.hyp[hyp - 1][2]
                tr.kf = ball_filter(zj, r, v1, sigma_v_mm_s=100.0 + 0.3 * float(np.linalg.norm(v1)))
                tr.moving = True
            else:
                # robust update: a measurement far out in the gate counts less (an outlier of vision
                # must not throw the velocity off)
                i0, i1 = zj - tr.xy
                s00, s01, s11 = tr.kf.P[0, 0] + r * r, tr.kf.P[0, 2], tr.kf.P[2, 2] + r * r  # S, the innovation's covariance
                d2 = float((s11 * i0 * i0 - 2.0 * s01 * i0 * i1 + s00 * i1 * i1) / (s00 * s11 - s01 * s01))
                scale = max(1.0, d2 / cfg.robust_chi2) ** 2
                tr.kf.update(zj, R=np.eye(2) * r ** 2 * scale)
                tr.moving = float(np.linalg.norm(tr.v)) > cfg.rest_speed_mm_s
            tr.t_s = t
            tr.hits |= 1
            tr.left_cloth = tr.at_occluder = tr.under_hand = False
            tr.bounced_t = tr.flew_t = tr.dropped = None
            tr.last_seen_t = t
            tr.z = zj.copy()
            tr.seen_xy = tr.xy.copy()
            if np.linalg.norm(zj - tr.steady_xy) > 4 * cfg.sigma_mm or b.label[i] != tr.steady_label:
                tr.steady_xy, tr.steady_label, tr.steady_t = zj.copy(), str(b.label[i]), t
            tr.height = float(b.height_mm[i])
            tr.state = TrackState.AIRBORNE if int(b.state[i]) == BallState.AIRBORNE else TrackState.SEEN
            # vision's mean score of it over its latest unbroken run of sightings (the last few count most)
            tr.n_scores = tr.n_scores + 1 if tr.hits & 2 else 1
            w = max(0.2, 1.0 / tr.n_scores)
            tr.score = (1.0 - w) * tr.score + w * float(b.score[i])
            if b.label[i] != UNCERTAIN:
                tr.logp = tr.logp + logv[j]
        # new candidates from what is left
        for j in np.flatnonzero(free):
            i = meas[j]
            tr = _Track(next(self._uid), ball_filter(z[j], cfg.sigma_mm), t, logv[j].copy())
            tr.z = z[j].copy()
            tr.height = float(b.height_mm[i])
            tr.score, tr.n_scores, tr.steady_label = float(b.score[i]), 1, str(b.label[i])
            self.tracks.append(tr)
        self._occlusion(dets, t, keep)

    def _likelihood_cost(self, z: np.ndarray, xy: np.ndarray, S: np.ndarray, reach: np.ndarray, miss: np.ndarray) -> np.ndarray:
        """(n, m) Mahalanobis distance plus log det S (plus ``miss``) of detections ``z`` (m, 2) from
        predictions ``xy`` (n, 2) with innovation covariances ``S`` (n, 2, 2); inf outside the gate or
        beyond ``reach`` (n,). The 2x2 inverses are written out, all pairs at once."""
        a, bb, c = S[:, 0, 0], S[:, 0, 1], S[:, 1, 1]
        det = a * c - bb * bb
        d = z[None, :, :] - xy[:, None, :]
        dx, dy = d[..., 0], d[..., 1]
        d2 = (c[:, None] * dx * dx - 2 * bb[:, None] * dx * dy + a[:, None] * dy * dy) / det[:, None]
        ok = (d2 <= self.config.gate_chi2) & (np.hypot(dx, dy) <= reach[:, None])
        return np.where(ok, d2 + np.log(det)[:, None] + miss[:, None], np.inf)

    def _reach(self, tr: _Track, t: float) -> float:
        """How far from its estimate a track's ball can be now: a ball seen in the last frame may have
        been struck (up to ``max_speed_mm_s``), and so may a ball at rest missed beside a cue since (for
        a tenth of a second) and, more slowly, one under a hand or an arm; one missed with nothing over
        it keeps its own speed (balls do not speed up by themselves)."""
        gap = max(t - tr.last_seen_t, 1e-3)
        if tr.left_cloth:
            return 3 * self.R
        if gap <= self._step_s * 1.5:
            return self.config.max_speed_mm_s * gap + 2 * self.R
        speed = float(np.linalg.norm(tr.v))
        if tr.at_occluder and tr.state != TrackState.OCCLUDED and not tr.moving:
            # a ball at rest that a cue is at (not covering it) and that vision has missed since may
            # have been struck by it: as fast as any ball (a break at 60 fps, missed two frames running)
            return self.config.max_speed_mm_s * min(gap, 0.1) + 2 * self.R
        if tr.state == TrackState.OCCLUDED or tr.at_occluder:
            return max(1.5 * speed, 1500.0) * min(gap, 0.3) + 2 * self.R
        return (1.5 * speed + 300.0) * gap + 2 * self.R

    def _class_vectors(self, prob: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Vision's class probabilities (m, vision's classes) as ours (m, our classes); a class vision
        does not report gets an even share."""
        out = np.full((len(prob), len(self.classes)), 1.0 / max(len(self.classes), 1))
        ok = columns >= 0
        out[:, ok] = prob[:, columns[ok]]
        return out

    def _occlusion(self, dets: FrameDetections, t: float, keep: np.ndarray) -> None:
        """Unmatched tracks: hidden (under an occluder, or reported occluded by vision), in a pocket's
        net, or simply missed."""
        b = dets.balls
        hidden_xy = b.xy_mm[keep & (b.state == BallState.OCCLUDED)]
        in_net = np.flatnonzero(keep & (b.state == BallState.IN_POCKET))
        pocket_xy = b.xy_mm[in_net]
        pocket_used = np.zeros(len(pocket_xy), dtype=bool)
        columns = np.array([list(b.classes).index(c) if c in b.classes else -1 for c in self.classes])

        def claim(tr: _Track, reach: float) -> bool:
            """Give ``tr`` the nearest free in-net sighting of its colour within ``reach``."""
            if not len(pocket_xy):
                return False
            d = np.linalg.norm(pocket_xy - tr.xy, axis=1)
            d[pocket_used] = np.inf
            col = columns[self._class_of_ball[tr.ball]]
            if col >= 0:
                other = (b.label[in_net] != UNCERTAIN) & (b.class_prob[in_net, col] < self.config.jump_min_prob)
                d[other] = np.inf
            k = int(np.argmin(d))
            if d[k] >= reach:
                return False
            pocket_used[k] = True
            return True

        # balls already seen in a net keep their sightings first
        for tr in self.tracks:
            if tr.ball >= 0 and tr.state == TrackState.IN_POCKET:
                claim(tr, 6 * self.R)
        for tr in self.tracks:
            if tr.hits & 1:
                continue
            xy = tr.xy
            # a ball drops moving: one missed at rest in the jaws is not in the net
            if tr.ball >= 0 and tr.moving and tr.state != TrackState.IN_POCKET:
                if claim(tr, 4 * self.R + float(np.linalg.norm(tr.v)) * max(t - tr.last_seen_t, 0.0)):
                    tr.state = TrackState.IN_POCKET
                    self.lost_t[tr.ball], self.lost_in_pocket[tr.ball] = tr.last_seen_t, True
                    continue
            if tr.state == TrackState.IN_POCKET:
                continue
            near_hidden = len(hidden_xy) > 0 and float(np.min(np.linalg.norm(hidden_xy - xy, axis=1))) < 3 * self.R
            # hidden: under an occluder that can cover a ball (a hand, an arm); a cue, or a blob smaller
            # than a ball (one dropping into a pocket), leaves it in view: vision sees it or has lost it
            # (but a ball a cue is at may just have been struck: it is looked for further)
            dist = [polygon_distance(poly, xy[None])[0] for poly in dets.occluders]
            under = any(d < self.R and outline_width(poly) >= 2 * self.R for d, poly in zip(dist, dets.occluders))
            tr.at_occluder = any(d < self.R for d in dist)
            tr.under_hand = under
            if under or near_hidden:
                tr.state = TrackState.OCCLUDED
                if not tr.moving:
                    tr.kf.x[[1, 3]] = 0.0  # a hidden ball at rest stays put: no drift of the prediction
            else:
                tr.state = TrackState.MISSING
                if tr.moving and self._over_hole(tr.seen_xy, tr.xy):
                    # bar billiards: missed on its way over a hole in the bed, it has dropped there: it is
                    # not carried on (a coasting prediction takes the next ball that moves near its way)
                    tr.dropped = (tr.seen_xy.copy(), tr.v.copy(), tr.last_seen_t)
                    tr.kf.x[[0, 2]] = tr.seen_xy
                    tr.kf.x[[1, 3]] = 0.0
                    tr.moving = False
                    tr.left_cloth = True

    # ---- naming ----------------------------------------------------------------------------------
    def _free_ids(self, cls: int) -> list[int]:
        """Free profile balls of class ``cls`` in the order a newly seen ball takes them."""
        taken = {tr.ball for tr in self.tracks if tr.ball >= 0 and tr.state != TrackState.IN_POCKET}
        free = [i for i in np.flatnonzero(self._class_of_ball == cls) if i not in taken]
        if self._reuse == "oldest":
            return sorted(free, key=lambda i: (self.lost_t[i], i))
        never = [i for i in free if not np.isfinite(self.lost_t[i])]
        seen = [i for i in free if np.isfinite(self.lost_t[i])]
        return never + sorted(seen, key=lambda i: (self.lost_in_pocket[i], -self.lost_t[i], i))

    def _give(self, tr: _Track, ball: int) -> None:
        for other in self.tracks:
            if other is not tr and other.ball == ball:  # its old track (in a pocket) hands the id over
                other.ball = -2
        tr.ball = ball

    def _name(self, t: float) -> None:
        cfg = self.config
        # a ball named from a wrong first look (a hand over the spot taken for a white ball, the ball
        # set down under it red) takes the colour its sightings since bear out, when one is free and
        # it has been seen at rest in that colour a while (a hand carrying a ball is never renamed)
        for tr in self.tracks:
            if tr.ball < 0 or not tr.hits & 1 or tr.state == TrackState.IN_POCKET:
                continue
            best, own = int(np.argmax(tr.logp)), int(self._class_of_ball[tr.ball])
            steady = tr.steady_label == self.classes[best] and t - tr.steady_t >= cfg.name_steady_s
            if best != own and steady and tr.logp[best] - tr.logp[own] > cfg.rename_nats:
                free = self._free_ids(best)
                if free:
                    self._give(tr, free[0])
        # a ball whose centre is inside a pocket's drop circle is in the pocket, not on the cloth: vision
        # seeing it there is no new ball; one whose latest sightings dispute its colour so far (a ball
        # coming out from under the hand that set it down) waits until they agree
        ready = [tr for tr in self.tracks if tr.ball == -1 and tr.hit_count(cfg.confirm_window) >= cfg.confirm_hits
                 and not self._in_pocket(tr.xy)
                 and (tr.score >= cfg.name_min_score or (tr.score > cfg.steady_min_score and tr.steady_label != UNCERTAIN
                                                          and t - tr.steady_t >= cfg.name_steady_s))
                 and tr.steady_label in (UNCERTAIN, self.classes[int(np.argmax(tr.logp))])]
        if not self._named_start:
            if self._start_t is not None and t - self._start_t < cfg.startup_s:
                return
            self._named_start = True
            for cls in range(len(self.classes)):
                group = [tr for tr in ready if int(np.argmax(tr.logp)) == cls]
                # more of a colour than the set has: the ones vision is surest of are the balls
                group = sorted(group, key=lambda tr: -tr.score)[: int(np.sum(self._class_of_ball == cls))]
                group.sort(key=self._layout_key)
                for tr, ball in zip(group, self._free_ids(cls)):
                    self._give(tr, ball)
            ready = [tr for tr in ready if tr.ball < 0]
        for tr in sorted(ready, key=lambda x: x.first_t):
            if self._merge(tr):
                continue
            # the likeliest colour with a free ball, when it is the likeliest colour of all or the second
            # and not much less likely than the first, and its sightings tell it from every other free
            # colour (a ball seen only in a hand, its colour unsure, is one of them all alike: it waits)
            free = [c for c in range(len(self.classes)) if self._free_ids(c)]
            if not free:
                continue
            ranked = sorted(free, key=lambda c: -tr.logp[c])
            cls = ranked[0]
            if cls not in np.argsort(-tr.logp)[:2] or tr.logp.max() - tr.logp[cls] > 4.0:
                continue
            if len(ranked) > 1 and tr.logp[cls] - tr.logp[ranked[1]] < cfg.name_margin_nats:
                continue
            self._give(tr, self._free_ids(cls)[0])

    def _merge(self, tr: _Track) -> bool:
        """A new ball found where a named ball of its colour is, hidden or missed: it is that ball (its
        measurements strayed out of the gate, under a hand or an arm); the named track takes over the
        candidate's filter."""
        cls = int(np.argmax(tr.logp))
        for other in self.tracks:
            if other.ball < 0 or other.hits & 1 or other.state == TrackState.IN_POCKET:
                continue
            if self._class_of_ball[other.ball] == cls and np.linalg.norm(other.xy - tr.xy) < 2 * self.R:
                other.kf, other.hits, other.z, other.state = tr.kf, tr.hits, tr.z, tr.state
                other.last_seen_t, other.seen_xy, other.moving = tr.last_seen_t, tr.seen_xy, tr.moving
                other.steady_xy, other.steady_label, other.steady_t = tr.steady_xy, tr.steady_label, tr.steady_t
                other.left_cloth = False
                tr.ball = -2  # retired with the others below
                return True
        return False

    def _in_pocket(self, xy: np.ndarray) -> bool:
        return bool(self._in_pockets(np.asarray(xy, dtype=float)[None])[0])

    def _in_pockets(self, xy: np.ndarray, grow_mm: float = 0.0) -> np.ndarray:
        """(m,) whether each of the points ``xy`` (m, 2) lies inside a pocket's drop circle (grown by
        ``grow_mm``)."""
        g = self.geometry
        n = len(self.profile.pockets)
        if n == 0 or len(xy) == 0:
            return np.zeros(len(xy), dtype=bool)
        d = np.linalg.norm(xy[:, None, :] - g.pocket_xy[None, :n], axis=2)
        return np.any(d < g.pocket_r[None, :n] + grow_mm, axis=1)

    def _over_hole(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether a ball's centre going straight from ``a`` to ``b`` passes inside a bed hole's drop circle."""
        g = self.geometry
        if not np.any(g.is_hole):
            return False
        c = g.pocket_xy[g.is_hole]
        ab = b - a
        f = np.clip(((c - a) @ ab) / max(float(ab @ ab), 1e-9), 0.0, 1.0)
        d = np.linalg.norm(a + f[:, None] * ab - c, axis=1)
        return bool(np.any(d < g.pocket_r[g.is_hole]))

    def _over_pockets(self, xy: np.ndarray) -> np.ndarray:
        """(m,) whether each of the points ``xy`` (m, 2) lies over a pocket's mouth (within its drop circle
        and a ball's radius), where vision keeps a ball it sees whole: one going in, or one flying over
        it, placed beyond the pocket's back by its height (what tells the inference it flew)."""
        return self._in_pockets(xy, self.R)

    def _layout_key(self, tr: _Track) -> tuple[float, float]:
        """Rack order: balls against an end cushion first (ficha 3.2: two at the end, then the sides),
        in bands of a ball's width from the nearer end, then across the table."""
        x, y = tr.xy
        from_end = min(x, self.profile.length_mm - x)
        return (math.floor(from_end / (2 * self.R)), y)

    # ---- retiring --------------------------------------------------------------------------------
    def _retire(self, t: float) -> None:
        cfg = self.config
        out = []
        for tr in self.tracks:
            if tr.hits & 1:
                continue
            if tr.flew_t is not None and t - tr.flew_t >= cfg.bounce_unseen_s:
                gone = True  # seen flying off over a cushion and not since
            elif tr.ball < 0:
                gone = tr.hit_count(cfg.confirm_window) == 0 or tr.ball == -2
            elif tr.state == TrackState.IN_POCKET:
                gone = t - tr.last_seen_t > cfg.hidden_coast_s
            elif tr.state == TrackState.OCCLUDED:
                gone = t - tr.last_seen_t > cfg.hidden_coast_s
            else:
                # (a ball that reached a cushion and, nothing hiding it, is not seen coming off it flew
                # over it: vision reads no height off a fast ball)
                gone = t - tr.last_seen_t > cfg.coast_s or (tr.bounced_t is not None and t - tr.bounced_t >= cfg.bounce_unseen_s)
            if gone:
                out.append(tr)
        # two named balls of one colour in one place: one of them is a stale copy (the one seen longer ago)
        named = [tr for tr in self.tracks if tr.ball >= 0 and tr.state != TrackState.IN_POCKET and tr not in out]
        for a, b in itertools.combinations(named, 2):
            if self._class_of_ball[a.ball] == self._class_of_ball[b.ball] and np.linalg.norm(a.xy - b.xy) < self.R:
                stale = a if a.last_seen_t < b.last_seen_t else b
                if stale not in out:
                    out.append(stale)
        for tr in out:
            self.tracks.remove(tr)
            if tr.ball >= 0:
                self.lost_t[tr.ball] = tr.last_seen_t
                k, d = self.geometry.nearest_pocket(tr.xy)
                self.lost_in_pocket[tr.ball] = tr.state == TrackState.IN_POCKET or d < 2 * self.R
        # a ball handed from its in-pocket track to a new one: the old track goes
        self.tracks = [tr for tr in self.tracks if tr.ball != -2]

    # ---- the snapshot ----------------------------------------------------------------------------
    def _snapshot(self, dets: FrameDetections, fresh: bool) -> Tracks:
        n = len(self.ids)
        xy = np.full((n, 2), np.nan)
        z = np.full((n, 2), np.nan)
        v = np.full((n, 2), np.nan)
        sigma = np.full(n, np.nan)
        height = np.zeros(n)
        state = np.full(n, TrackState.OFF, dtype=np.uint8)
        conf = np.zeros(n, dtype=np.float32)
        for tr in self.tracks:
            if tr.ball < 0:
                continue
            i = tr.ball
            xy[i] = tr.xy
            v[i] = tr.v if tr.moving else 0.0
            sigma[i] = math.sqrt(max(tr.kf.P[0, 0] + tr.kf.P[2, 2], 0.0) / 2)
            height[i] = tr.height
            state[i] = tr.state
            if fresh:
                z[i] = tr.z
            post = np.exp(tr.logp - tr.logp.max())
            post /= post.sum()
            presence = {TrackState.SEEN: 1.0, TrackState.AIRBORNE: 0.9, TrackState.OCCLUDED: 0.8,
                        TrackState.MISSING: 0.5, TrackState.IN_POCKET: 0.9}.get(TrackState(int(state[i])), 0.0)
            conf[i] = presence * post[self._class_of_ball[i]]
        snap = Tracks(
            frame=int(dets.frame), t_s=float(dets.t_s), ids=self.ids, classes=self.ball_classes,
            xy_mm=xy, z_mm=z, v_mm_s=v, sigma_mm=sigma, height_mm=height, state=state, confidence=conf,
            occluders=tuple(dets.occluders), pins=dets.pins, valid=bool(dets.valid), repeated=bool(dets.repeated),
        )
        if fresh:
            self._last = snap
        return snap
