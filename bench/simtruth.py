"""Ground truth for the tracking bench, frame by frame, without rendering a pixel.

A :class:`TruthClip` holds what a clip's camera would have seen at each frame time: every ball's
table position, height, status and speed, how much of it the occluders hide, the occluders
themselves, the pins, and the true events with their exact times. It comes from

* a played match (:func:`from_run`): the simulator's timeline and the clip choreography (cue strokes,
  bridge arms, hands placing, lifting and nudging balls) sampled at the frame times exactly as
  :func:`simulator.clip.make_clip` samples them (its centre sample of each exposure), but with no
  rendering; the hidden fraction is computed from the occluders' outlines on the table plane;
* or a ``.truth.json`` file beside a rendered clip (:func:`from_truth_file`), whose hidden fractions
  are the renderer's own.

The matches themselves come from ``bench/corpora.py`` (whole frames of the automatic player, and
staged corpora of near misses, jumps, touched balls and double hits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from calibration.table import TableProfile, resolve_profile
from tracking.events import Event, event_from_dict

__all__ = ["TruthClip", "Occ", "from_run", "from_truth_file", "occluder_polygons", "hidden_fractions"]

STATUS = {"on_table": "T", "airborne": "A", "in_hand": "H", "pocketed": "P", "off_table": "O", "in_trough": "Q"}


@dataclass(frozen=True, slots=True)
class Occ:
    """An occluder as the truth describes it (kind and outline parameters, table mm)."""

    kind: str
    tip: tuple[float, float] = (0.0, 0.0)
    butt: tuple[float, float] = (0.0, 0.0)
    points: tuple[tuple[float, float], ...] = ()
    width: float = 0.0


@dataclass(frozen=True, slots=True, eq=False)
class TruthClip:
    """Per-frame truth of one clip; arrays are (frames, balls) or (frames, pins)."""

    name: str
    game: str
    profile: TableProfile
    profile_ref: str
    fps: float
    t_s: np.ndarray  # (T,)
    ball_ids: tuple[str, ...]
    xy: np.ndarray  # (T, n, 2) NaN when the ball is not drawn
    h: np.ndarray  # (T, n) bottom of the ball above the cloth
    status: np.ndarray  # (T, n) one-character codes: T A H P O Q, '-' absent
    speed: np.ndarray  # (T, n) mm/s
    hidden: np.ndarray  # (T, n) fraction of the ball the occluders cover
    occluders: tuple[tuple[Occ, ...], ...]  # per frame
    pin_ids: tuple[str, ...]
    pin_xy: np.ndarray  # (T, p, 2)
    pin_standing: np.ndarray  # (T, p) bool
    pin_tilt: np.ndarray  # (T, p) rad
    events: tuple[Event, ...]
    expected: tuple[dict, ...]
    players: tuple[str, ...]
    options: dict = field(default_factory=dict)
    invalid: tuple[tuple[float, float], ...] = ()  # time spans the camera was bumped (frames unreadable)
    seed: int = 0

    @property
    def n_frames(self) -> int:
        return len(self.t_s)

    @property
    def shots(self) -> int:
        return sum(1 for e in self.events if e.kind == "shot_start")


# ---- occluder outlines -----------------------------------------------------------------------------

def _quad(a: np.ndarray, b: np.ndarray, wa: float, wb: float) -> np.ndarray:
    d = b - a
    n = np.linalg.norm(d)
    if n < 1e-9:
        d = np.array([1.0, 0.0])
    else:
        d = d / n
    s = np.array([-d[1], d[0]])
    return np.array([a + s * wa / 2, b + s * wb / 2, b - s * wb / 2, a - s * wa / 2])


def occluder_polygons(occ: Occ) -> list[np.ndarray]:
    """Outlines (table mm) of what an occluder hides, as the renderer draws it seen from straight
    above: a cue tapering from 12 to 30 mm, an arm of its width with the hand beyond the first
    point, a hand from the wrist to the finger tips, 85 mm wide."""
    if occ.kind == "cue":
        return [_quad(np.array(occ.tip), np.array(occ.butt), 12.0, 30.0)]
    if occ.kind == "arm":
        pts = np.array(occ.points, dtype=np.float64)
        w = occ.width or 90.0
        polys = [_quad(pts[i], pts[i + 1], w * 1.1, w * 1.1) for i in range(len(pts) - 1)]
        d = pts[0] - pts[1]
        d /= max(np.linalg.norm(d), 1e-9)
        polys.append(_quad(pts[0], pts[0] + d * w * 0.9, w * 1.15, w * 1.15))
        return polys
    if occ.kind == "hand":
        c, wrist = np.array(occ.tip), np.array(occ.butt)
        d = c - wrist
        n = np.linalg.norm(d)
        d = d / n if n > 1 else np.array([0.0, 1.0])
        return [_quad(wrist, c + d * 78.0, 80.0, 85.0)]
    raise ValueError(f"unknown occluder kind {occ.kind!r}")


_DISC = None


def _disc_points(r: float) -> np.ndarray:
    global _DISC
    if _DISC is None:
        rings = [(0.0, 1)] + [(f, k) for f, k in ((0.35, 8), (0.65, 12), (0.92, 16))]
        pts = []
        for f, k in rings:
            for j in range(k):
                a = 2 * math.pi * j / k
                pts.append((f * math.cos(a), f * math.sin(a)))
        _DISC = np.array(pts)
    return _DISC * r


def _inside_convex(poly: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """(m,) whether points lie in a convex polygon (either winding)."""
    e = np.roll(poly, -1, axis=0) - poly
    rel = pts[:, None, :] - poly[None, :, :]
    cross = e[None, :, 0] * rel[:, :, 1] - e[None, :, 1] * rel[:, :, 0]
    return np.all(cross >= 0, axis=1) | np.all(cross <= 0, axis=1)


def hidden_fractions(xy: np.ndarray, r: float, polys: Sequence[np.ndarray]) -> np.ndarray:
    """(n,) the fraction of each ball's disc (centre ``xy``, radius ``r``) that the polygons cover."""
    out = np.zeros(len(xy))
    if not polys:
        return out
    disc = _disc_points(r)
    for i, c in enumerate(xy):
        if not np.isfinite(c[0]):
            continue
        pts = disc + c
        cov = np.zeros(len(pts), dtype=bool)
        for p in polys:
            lo, hi = p.min(0), p.max(0)
            if c[0] + r < lo[0] or c[0] - r > hi[0] or c[1] + r < lo[1] or c[1] - r > hi[1]:
                continue
            cov |= _inside_convex(p, pts)
        out[i] = cov.mean()
    return out


# ---- from a played match -----------------------------------------------------------------------------

def from_run(run: Any, profile: TableProfile, name: str, fps: float, seed: int, game: str, profile_ref: str | None = None,
             arm_probability: float = 0.35, bump_at_s: float | None = None, tail_s: float = 0.5) -> TruthClip:
    """The truth a clip of ``run`` at ``fps`` would record (same choreography as ``make_clip`` with
    ``seed``), sampled at the frame times with no rendering."""
    from simulator.clip import ClipOptions, Choreography, frame_times

    options = ClipOptions(arm_probability=arm_probability, bump_at_s=bump_at_s, tail_s=tail_s)
    events = tuple(run.events)
    choreo = Choreography(profile, run.timeline, events, np.random.default_rng([int(seed), 7]), options)
    times = frame_times(choreo.t_end_s + options.tail_s, fps)
    ids = tuple(b.id for b in run.timeline.at(run.timeline.t_end_s).balls)
    pin_ids = tuple(p.id for p in run.timeline.at(run.timeline.t_end_s).pins)
    T, n, p = len(times), len(ids), len(pin_ids)
    xy = np.full((T, n, 2), np.nan)
    h = np.zeros((T, n))
    status = np.full((T, n), "-", dtype="<U1")
    speed = np.zeros((T, n))
    hidden = np.zeros((T, n))
    pin_xy = np.full((T, p, 2), np.nan)
    pin_up = np.zeros((T, p), dtype=bool)
    pin_tilt = np.zeros((T, p))
    occs: list[tuple[Occ, ...]] = []
    col = {b: i for i, b in enumerate(ids)}
    pcol = {q: i for i, q in enumerate(pin_ids)}
    R = profile.ball_radius_mm
    for k, t in enumerate(times):
        sc = choreo.scene(float(t))
        for b in sc.balls:
            i = col.get(b.id)
            if i is None:
                continue
            code = STATUS[str(b.status.value)]
            status[k, i] = code
            if code in "TAH":
                xy[k, i] = b.xy_mm
                h[k, i] = b.h_mm
                speed[k, i] = math.hypot(*b.velocity_mm_s)
        for q in sc.pins:
            j = pcol[q.id]
            pin_xy[k, j] = q.xy_mm
            pin_up[k, j] = q.standing
            pin_tilt[k, j] = q.tilt_rad
        frame_occ = tuple(
            Occ(o.kind, tuple(o.tip_xy_mm), tuple(o.butt_xy_mm), tuple(tuple(pt) for pt in o.points_mm), o.width_mm)
            for o in sc.occluders
        )
        occs.append(frame_occ)
        if frame_occ:
            polys = [poly for o in frame_occ for poly in occluder_polygons(o)]
            hidden[k] = hidden_fractions(xy[k], R, polys)
    invalid = ((bump_at_s, bump_at_s + 0.15),) if bump_at_s is not None else ()
    expected = tuple(e.to_dict() if hasattr(e, "to_dict") else dict(e) for e in run.expected)
    return TruthClip(name, game, profile, profile_ref or profile.name, float(fps), np.asarray(times), ids, xy, h, status,
                     speed, hidden, tuple(occs), pin_ids, pin_xy, pin_up, pin_tilt, events, expected,
                     tuple(run.players), dict(run.options), invalid, int(seed))


# ---- from a rendered clip's truth file ------------------------------------------------------------------

def from_truth_file(path: str | Path) -> TruthClip:
    """The truth beside a rendered clip (``NAME.truth.json``), with the renderer's hidden fractions."""
    from simulator.groundtruth import read_truth

    path = Path(path)
    tr = read_truth(path)
    raw = tr.raw
    profile = resolve_profile(raw["profile"])
    ids = tuple(b["id"] for b in raw["balls"])
    T = tr.n_frames
    t = tr.t_s
    xy = np.stack([tr.xy_mm[b] for b in ids], axis=1)
    h = np.nan_to_num(np.stack([tr.h_mm[b] for b in ids], axis=1))
    codes = {v: k for k, v in STATUS.items()}
    status = np.full((T, len(ids)), "-", dtype="<U1")
    for i, b in enumerate(ids):
        for k, s in enumerate(tr.status[b]):
            status[k, i] = "-" if s is None else STATUS[str(s.value)]
    del codes
    speed = np.zeros((T, len(ids)))
    dxy = np.diff(xy, axis=0)
    v = np.linalg.norm(dxy, axis=2) / np.diff(t)[:, None]
    speed[1:] = np.nan_to_num(v)
    hidden = np.stack([tr.hidden[b] for b in ids], axis=1)
    occs: list[list[Occ]] = [[] for _ in range(T)]
    for o in raw["occluders"]:
        if o["kind"] == "arm":
            occ = Occ("arm", points=tuple(tuple(p) for p in o["points_mm"]), width=o["width_mm"])
        else:
            occ = Occ(o["kind"], tuple(o["tip_xy_mm"]), tuple(o["butt_xy_mm"]))
        occs[o["frame"]].append(occ)
    pin_ids = tuple(q["id"] for q in raw["pins"])
    P = len(pin_ids)
    pin_xy = np.full((T, P, 2), np.nan)
    pin_up = np.zeros((T, P), dtype=bool)
    pin_tilt = np.zeros((T, P))
    for j, q in enumerate(raw["pins"]):
        pin_xy[:, j, 0] = [np.nan if x is None else x for x in q["x_mm"]]
        pin_xy[:, j, 1] = [np.nan if y is None else y for y in q["y_mm"]]
        pin_up[:, j] = [bool(s) for s in tr.pins_standing[q["id"]]]
        pin_tilt[:, j] = [0.0 if a is None else a for a in q["tilt_rad"]]
    invalid = tuple((c["t_s"], c["t_s"] + 0.15) for c in raw["cameras"][1:])
    events = tuple(event_from_dict(e) for e in raw["events"])
    fps = float(raw["video"]["fps_float"])
    return TruthClip(path.name.replace(".truth.json", ""), raw["game"], profile, raw["profile"], fps, t, ids, xy, h, status,
                     speed, hidden, tuple(tuple(o) for o in occs), pin_ids, pin_xy, pin_up, pin_tilt, events,
                     tuple(raw["expected_decisions"]), tuple(raw["players"]), dict(raw["options"]), invalid, int(raw["seed"]))
