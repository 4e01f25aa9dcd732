"""Scoring an inferred event log against a simulated clip's true events, shot by shot.

Shots are paired by their strike times (within ``SHOT_MATCH_S``). Inside a pair, the tracker's ball
ids are mapped to the truth's by the strike's positions (the nearest ball of the same colour): balls
of one colour look alike, and the ids the tracker gives them follow the rack layout or the order
they were seen in (bar-billiards whites come from the trough in any order); identity switches are
counted apart, from the tracks, by :class:`IdentityCounter`.

Per kind (:class:`Tally`): first contact of the struck ball correct (a miss counts as a contact
with nobody; contacts at the same instant are all right answers), pots matched by ball and pocket
(precision, recall, and the drop order of the shots with several pots), cushion contacts by ball
and cushion within two frame periods, ball-ball contacts by pair, the time error of matched
contacts and cushions, and recall and false calls of jumps, balls off the table, pins down and
moved, touched balls and double hits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from tracking.events import (AtRest, BallBall, BallCushion, BallTouched, CueContact, Event, Jump, OffTable,
                             PinDown, PinMoved, Pot, ShotStart, event_from_dict, event_to_dict)
from tracking.tracks import Tracks, TrackState

__all__ = ["Tally", "score_clip", "IdentityCounter", "split_shots"]

SHOT_MATCH_S = 0.5
SIMPLE_KINDS = {"jump": Jump, "off_table": OffTable, "pin_down": PinDown, "pin_moved": PinMoved,
                "touched": BallTouched, "double_hit": CueContact}


@dataclass
class Tally:
    shots: int = 0  # true shots
    shots_found: int = 0  # paired with an inferred shot
    shots_spurious: int = 0  # inferred shots with no true one
    first_ok: int = 0
    first_wrong: list = field(default_factory=list)
    pots_true: int = 0
    pots_found: int = 0
    pots_inferred: int = 0
    pot_order_shots: int = 0
    pot_order_ok: int = 0
    cushions_true: int = 0
    cushions_found: int = 0
    cushions_inferred: int = 0
    contacts_true: int = 0
    contacts_found: int = 0
    contacts_inferred: int = 0
    time_errors_s: list = field(default_factory=list)  # |dt| of matched contacts and cushions
    frame_periods_s: list = field(default_factory=list)
    kinds: dict = field(default_factory=lambda: {k: [0, 0, 0] for k in SIMPLE_KINDS})  # true, found, false
    identity_switches: int = 0
    ball_frames: int = 0
    notes: list = field(default_factory=list)
    misses: list = field(default_factory=list)  # (kind, t_s, true ball or pin, inferred id) of true events not found, and of false calls (kind + ' (false)')

    def add(self, other: "Tally") -> None:
        for f in self.__dataclass_fields__:
            a, b = getattr(self, f), getattr(other, f)
            if isinstance(a, list):
                a.extend(b)
            elif isinstance(a, dict):
                for k, v in b.items():
                    a[k] = [x + y for x, y in zip(a[k], v)]
            else:
                setattr(self, f, a + b)


def split_shots(events: Sequence[Event]) -> list[list[Event]]:
    """Camera events grouped by shot (from a ``shot_start`` to its ``at_rest`` or the next strike)."""
    shots: list[list[Event]] = []
    cur: list[Event] | None = None
    for e in events:
        if isinstance(e, ShotStart):
            cur = [e]
            shots.append(cur)
        elif cur is not None:
            cur.append(e)
            if isinstance(e, AtRest):
                cur = None
    return shots


def _colour(profile, ball: str) -> str:
    return profile.ball(ball).colour


def _id_map(profile, truth: ShotStart, inferred: ShotStart) -> dict[str, str]:
    """Inferred id -> true id, by the strike's positions, colour by colour."""
    out: dict[str, str] = {}
    tpos, ipos = dict(truth.positions), dict(inferred.positions)
    colours = {_colour(profile, b) for b in list(tpos) + list(ipos)}
    for c in colours:
        tb = [b for b in tpos if _colour(profile, b) == c]
        ib = [b for b in ipos if _colour(profile, b) == c]
        if not tb or not ib:
            continue
        cost = np.array([[math.dist(ipos[i], tpos[t]) for t in tb] for i in ib])
        rows, cols = linear_sum_assignment(cost)
        for r, k in zip(rows, cols):
            if cost[r, k] < 4 * profile.ball_radius_mm:
                out[ib[r]] = tb[k]
    return out


def _first_contact(shot: list[Event], striker: str) -> set:
    contacts = [e for e in shot if isinstance(e, BallBall) and striker in (e.a, e.b)]
    if not contacts:
        return {None}
    t0 = contacts[0].t_s
    return {(e.b if e.a == striker else e.a) for e in contacts if e.t_s - t0 < 1e-6}


def _match(truth: list, inferred: list, key, tol_s: float) -> list[tuple]:
    """One-to-one pairs of equal ``key`` within ``tol_s``, nearest in time first."""
    pairs = []
    used = set()
    cand = sorted(((abs(a.t_s - b.t_s), i, j) for i, a in enumerate(truth) for j, b in enumerate(inferred)
                   if key(a) == key(b) and abs(a.t_s - b.t_s) <= tol_s), key=lambda x: x[0])
    took = set()
    for _, i, j in cand:
        if i in took or j in used:
            continue
        took.add(i)
        used.add(j)
        pairs.append((truth[i], inferred[j]))
    return pairs


def _rename(e: Event, m: dict[str, str]) -> Event:
    d = event_to_dict(e)
    for f in ("ball", "a", "b"):
        if f in d:
            d[f] = m.get(d[f], d[f])
    if "positions" in d:
        d["positions"] = {m.get(k, k): v for k, v in d["positions"].items()}
    return event_from_dict(d)


def score_clip(profile, truth_events: Sequence[Event], inferred: Sequence[Event], fps: float) -> Tally:
    tally = Tally()
    period = 1.0 / fps
    tshots = split_shots(truth_events)
    ishots = split_shots(inferred)
    tally.shots = len(tshots)
    used: set[int] = set()
    pairs = []
    for ts in tshots:
        best = None
        for j, s in enumerate(ishots):
            if j in used:
                continue
            d = abs(s[0].t_s - ts[0].t_s)
            if d <= SHOT_MATCH_S and (best is None or d < best[0]):
                best = (d, j)
        if best is not None:
            used.add(best[1])
            pairs.append((ts, ishots[best[1]]))
        else:
            pairs.append((ts, None))
    tally.shots_spurious = len(ishots) - len(used)
    # events outside shots (touched balls between shots)
    t_between = [e for e in truth_events if isinstance(e, BallTouched)]
    i_between = [e for e in inferred if isinstance(e, BallTouched)]
    for ts, ish in pairs:
        start = ts[0]
        for k, cls in SIMPLE_KINDS.items():
            if cls is BallTouched:
                continue
            tally.kinds[k][0] += sum(1 for e in ts if type(e) is cls)
        tally.pots_true += sum(1 for e in ts if isinstance(e, Pot))
        tally.cushions_true += sum(1 for e in ts if isinstance(e, BallCushion))
        tally.contacts_true += sum(1 for e in ts if isinstance(e, BallBall))
        if ish is None:
            tally.first_wrong.append((start.t_s, "shot not found"))
            continue
        tally.shots_found += 1
        idm = _id_map(profile, start, ish[0])
        ish = [_rename(e, idm) for e in ish]
        striker = start.ball
        fc_true = _first_contact(ts, striker)
        fc_inf = _first_contact(ish, striker) if ish[0].ball == striker else {"wrong striker"}
        if fc_inf & fc_true and len(fc_inf) == 1 or fc_inf == fc_true:
            tally.first_ok += 1
        else:
            tally.first_wrong.append((round(start.t_s, 3), sorted(map(str, fc_true)), sorted(map(str, fc_inf))))
        # pots
        tp = [e for e in ts if isinstance(e, Pot)]
        ip = [e for e in ish if isinstance(e, Pot)]
        tally.pots_inferred += len(ip)
        mp = _match(tp, ip, lambda e: (e.ball, e.pocket), 1.0)
        tally.pots_found += len(mp)
        if len(tp) >= 2:
            tally.pot_order_shots += 1
            if [e.ball for e in tp] == [e.ball for e in ip]:
                tally.pot_order_ok += 1
        # cushions and contacts
        tc = [e for e in ts if isinstance(e, BallCushion)]
        ic = [e for e in ish if isinstance(e, BallCushion)]
        tally.cushions_inferred += len(ic)
        mc = _match(tc, ic, lambda e: (e.ball, e.cushion), 2 * period + 1e-6)
        tally.cushions_found += len(mc)
        back = {v: k for k, v in idm.items()}
        tally.misses += [("cushion " + e.cushion, round(e.t_s, 3), e.ball, back.get(e.ball, e.ball))
                         for e in tc if not any(a is e for a, _ in mc)]
        tally.misses += [("cushion " + e.cushion + " (false)", round(e.t_s, 3), e.ball, e.ball) for e in ic if not any(b is e for _, b in mc)]
        tb = [e for e in ts if isinstance(e, BallBall)]
        ib = [e for e in ish if isinstance(e, BallBall)]
        tally.contacts_inferred += len(ib)
        mb = _match(tb, ib, lambda e: frozenset((e.a, e.b)), 2 * period + 1e-6)
        tally.contacts_found += len(mb)
        for a, b in mc + mb:
            tally.time_errors_s.append(abs(a.t_s - b.t_s))
            tally.frame_periods_s.append(period)
        for k, cls in SIMPLE_KINDS.items():
            if cls is BallTouched:
                continue
            key = (lambda e: e.pin) if cls in (PinDown, PinMoved) else (lambda e: e.ball)
            te = [e for e in ts if type(e) is cls]
            ie = [e for e in ish if type(e) is cls]
            m = _match(te, ie, key, 0.3)
            tally.kinds[k][1] += len(m)
            tally.kinds[k][2] += len(ie) - len(m)
            tally.misses += [(k, round(e.t_s, 3), key(e), back.get(key(e), key(e))) for e in te if not any(a is e for a, _ in m)]
            tally.misses += [(k + " (false)", round(e.t_s, 3), key(e), key(e)) for e in ie if not any(b is e for _, b in m)]
    # touched balls are matched over the whole clip (they happen between shots), their ids mapped by
    # the positions of the shot after them (else before them)
    maps = [(ts[0].t_s, _id_map(profile, ts[0], ish[0])) for ts, ish in pairs if ish is not None]

    def nearest_map(t: float) -> dict[str, str]:
        after = [m for t0, m in maps if t0 >= t]
        before = [m for t0, m in maps if t0 < t]
        return after[0] if after else (before[-1] if before else {})

    i_between = [_rename(e, nearest_map(e.t_s)) for e in i_between]
    m = _match(t_between, i_between, lambda e: e.ball, 0.5)
    tally.kinds["touched"][0] += len(t_between)
    tally.kinds["touched"][1] += len(m)
    tally.kinds["touched"][2] += len(i_between) - len(m)
    tally.misses += [("touched", round(e.t_s, 3), e.ball, e.ball) for e in t_between if not any(a is e for a, _ in m)]
    tally.misses += [("touched (false)", round(e.t_s, 3), e.ball, e.ball) for e in i_between if not any(b is e for _, b in m)]
    return tally


class IdentityCounter:
    """Identity switches from the tracks: each truth ball on the cloth and in view is paired with the
    nearest named track within one ball width; a switch is the paired id changing while the truth ball
    stays on the table (a ball leaving and coming back, a bar-billiards white from the trough, may be
    named anew)."""

    def __init__(self, truth_ids: Sequence[str], startup_s: float = 0.5):
        self.ids = tuple(truth_ids)
        self.last: dict[int, str] = {}
        self.switches = 0
        self.ball_frames = 0
        self.startup_s = startup_s
        self.log: list[tuple] = []

    def update(self, frame: int, t_s: float, truth_xy: np.ndarray, truth_status: np.ndarray, hidden: np.ndarray,
               tracks: Tracks, radius_mm: float) -> None:
        on = np.isin(tracks.state, [TrackState.SEEN, TrackState.OCCLUDED, TrackState.MISSING, TrackState.AIRBORNE])
        for i in range(len(self.ids)):
            if truth_status[i] not in ("T", "A"):
                self.last.pop(i, None)
                continue
            if t_s < self.startup_s or hidden[i] > 0.5:
                continue
            self.ball_frames += 1
            d = np.linalg.norm(tracks.xy_mm - truth_xy[i], axis=1)
            d[~on | ~np.isfinite(d)] = np.inf
            j = int(np.argmin(d))
            if d[j] > 2 * radius_mm:
                continue
            name = tracks.ids[j]
            if i in self.last and self.last[i] != name:
                self.switches += 1
                self.log.append((frame, self.ids[i], self.last[i], name))
            self.last[i] = name

