"""The statistics of ``docs/store.md`` computed from a generated frame's physics, not from its log.

Independent of the product's code path: positions, velocities and ball states come from the
simulator's motion (``Timeline.ball_pose``); the geometry is a separate, brute-force implementation
(a ray marched in small steps). Three things come from the truth's event list, which is exact: which
ball the cue struck and when, which ball it touched first and when, and when each ball's next event
happened. Who played, the fouls and the points come from the calls the rules engine made while the
frame was generated (``GeneratedFrame.decisions``), the same engine the store replays: for those
figures the test checks the store's bookkeeping, not the rules.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from calibration.table import TableProfile
from simulator.scene import BallStatus
from tracking.events import AtRest, BallBall, BallCushion, Jump, OffTable, PinDown, PinMoved, Pot, ShotStart

STEP_MM = 0.25
DROPPED = (BallStatus.POCKETED, BallStatus.IN_TROUGH)
EPS_S = 1e-7


@dataclass
class TruthFigures:
    shots: int = 0
    attempted: int = 0
    made: int = 0
    by_distance: Counter = field(default_factory=Counter)  # (bin, made) -> n
    by_cut: Counter = field(default_factory=Counter)
    safeties: int = 0
    fouls: Counter = field(default_factory=Counter)
    speeds: list = field(default_factory=list)
    rests: list = field(default_factory=list)
    pots_by_pocket: Counter = field(default_factory=Counter)
    frames: set = field(default_factory=set)
    targets: list = field(default_factory=list)  # (shot, pocket or hole attempted, or None): says which shot differs


def _march(profile: TableProfile, start, direction):
    """Walk a ray: the first hole whose centre the ball's centre passes within its radius, else the
    pocket whose jaws the ray leaves the cloth between (docs/store.md), else None."""
    d = np.asarray(direction, float)
    d /= np.linalg.norm(d)
    p = np.asarray(start, float)
    L, W = profile.length_mm, profile.width_mm
    for k in range(int(10 * (L + W) / STEP_MM)):
        q = p + k * STEP_MM * d
        for h in profile.holes:
            if math.dist(q, h.xy_mm) <= h.radius_mm:
                return h.id
        if not (0 <= q[0] <= L and 0 <= q[1] <= W):
            for pk in profile.pockets:
                if math.dist(q, pk.xy_mm) <= min(math.dist(pk.xy_mm, j) for j in pk.jaws_mm) + STEP_MM:
                    return pk.id
            return None
    return None


def _bin(edges, v):
    return next(i for i in range(len(edges) - 1) if v < edges[i + 1] or i == len(edges) - 2)


def _place(profile, target):
    return profile.pocket(target).xy_mm if profile.pockets else profile.hole(target).xy_mm


def _nearest_hole(profile, xy):
    places = [(p.id, p.xy_mm) for p in profile.pockets] or [(h.id, h.xy_mm) for h in profile.holes]
    return min(places, key=lambda p: math.dist(p[1], xy))[0]


def truth_figures(gf, profile: TableProfile, distance_bins, cut_bins) -> dict[str, TruthFigures]:
    """Per player figures of one generated frame."""
    tl = gf.run.timeline
    events = list(gf.run.events)
    starts = [i for i, e in enumerate(events) if isinstance(e, ShotStart)]
    out: dict[str, TruthFigures] = defaultdict(TruthFigures)
    for k, i in enumerate(starts):
        call = gf.decisions[k]
        end_i = next(j for j in range(i, len(events)) if isinstance(events[j], AtRest))
        shot = events[i:end_i + 1]
        t0, t1 = shot[0].t_s, shot[-1].t_s
        struck = shot[0].ball
        fig = out[call.player]
        fig.shots += 1
        fig.frames.add(0)
        fouls = tuple(str(getattr(f, "value", f)) for f in call.fouls)
        fig.fouls.update(fouls)
        fig.fouls.update(str(getattr(f, "value", f)) for prior in getattr(call, "prior", ()) for f in prior.fouls)

        def pos(b, t):
            return tl.ball_pose(b, t).xy_mm

        def next_event_t(ball, after_t, skip=None):
            for e in shot[1:]:
                if e is skip or e.t_s < after_t:
                    continue
                names = (e.a, e.b) if isinstance(e, BallBall) else (getattr(e, "ball", None),)
                if isinstance(e, (BallBall, BallCushion, Pot, OffTable, Jump)) and ball in names:
                    return e.t_s
            return None

        pin_times = [e.t_s for e in shot if isinstance(e, (PinDown, PinMoved))]
        # cue-ball speed over its first leg, from the motion (not measured when a pin is hit first)
        t_leg = next_event_t(struck, t0)
        if t_leg is not None and t_leg > t0 and not any(t < t_leg for t in pin_times):
            fig.speeds.append(math.dist(pos(struck, t_leg), pos(struck, t0)) / (t_leg - t0))
        # the first contact and the object ball
        first = next((e for e in shot[1:] if isinstance(e, BallBall) and struck in (e.a, e.b)), None)
        obj = None if first is None else (first.b if first.a == struck else first.a)
        target = None
        made = False
        cut = None
        o0 = None
        if obj is not None:
            tc = first.t_s
            o0 = pos(obj, t0)
            direct = not any(isinstance(e, BallCushion) and e.ball == struck and e.t_s < tc for e in shot) and not any(
                t < tc for t in pin_times)
            if direct:
                v = np.asarray(tl.ball_pose(struck, tc - EPS_S).velocity_mm_s)
                n = np.subtract(pos(obj, tc), pos(struck, tc))
                cut = math.degrees(math.acos(min(1.0, abs(v @ n) / (np.linalg.norm(v) * np.linalg.norm(n)))))
            if tl.ball_pose(obj, t1).status in DROPPED:
                made = True
                last_on = next(t for t in np.arange(t1, tc, -0.001) if tl.ball_pose(obj, t).status is BallStatus.ON_TABLE)
                target = _nearest_hole(profile, pos(obj, last_on))
            else:
                # its direction right after the contact; when a pin falls or moves before its next event,
                # the line of centres at the contact (docs/store.md: the pin may have bent the path)
                t_next = next_event_t(obj, tc, skip=first)
                if any(tc < t < (t_next if t_next is not None else t1) for t in pin_times):
                    vo = tuple(np.subtract(pos(obj, tc), pos(struck, tc)))
                else:
                    vo = tl.ball_pose(obj, tc + EPS_S).velocity_mm_s
                if math.hypot(*vo) > 0:
                    target = _march(profile, o0, vo)
        attempted = target is not None
        fig.targets.append((k, target))
        if attempted:
            fig.attempted += 1
            fig.made += made
            fig.by_distance[(_bin(distance_bins, math.dist(o0, _place(profile, target))), made)] += 1
            if cut is not None:
                fig.by_cut[(_bin(cut_bins, cut), made)] += 1
        fig.safeties += obj is not None and not attempted and not fouls
        if tl.ball_pose(struck, t1).status is BallStatus.ON_TABLE:
            fig.rests.append(pos(struck, t1))
        for b in profile.ball_ids:
            if tl.ball_pose(b, t0).status is not BallStatus.ON_TABLE or tl.ball_pose(b, t1).status not in DROPPED:
                continue
            last_on = next(t for t in np.arange(t1, t0, -0.001) if tl.ball_pose(b, t).status is BallStatus.ON_TABLE)
            fig.pots_by_pocket[_nearest_hole(profile, pos(b, last_on))] += 1
    return out
