"""The table as tracking sees it: the lines a ball's centre bounces off, pockets, holes, pins, and the
shapes over the table (occluders), all in table millimetres (:mod:`calibration.table`).

A ball touches a cushion when its centre reaches the line one radius inside the cushion nose; it
touches a jaw point when its centre comes within one radius of it. Pocket drop circles, bed holes
and pins come from the profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import cv2
import numpy as np

from calibration.table import TableProfile

__all__ = ["CentreLine", "TableGeometry", "Outlines", "polygon_distance", "elongated", "outline_width", "cue_sticks"]


@dataclass(frozen=True, slots=True)
class CentreLine:
    """Where a ball's centre touches cushion ``id``: ``coord[axis] == at_mm`` for the other coordinate
    between ``lo_mm`` and ``hi_mm``; ``inward`` is +1 when the table lies at larger coordinates."""

    id: str
    axis: int  # 0: a line of constant x (head, foot, scoreboard); 1: of constant y (the sides)
    at_mm: float
    lo_mm: float
    hi_mm: float
    inward: int
    nose: tuple[tuple[float, float], tuple[float, float]]  # the cushion nose's end points

    def distance(self, xy: np.ndarray) -> np.ndarray:
        """Signed distance (mm) of centres from the line, positive on the table's side."""
        return self.inward * (np.asarray(xy)[..., self.axis] - self.at_mm)

    def spans(self, xy: np.ndarray, margin_mm: float = 0.0) -> np.ndarray:
        """Whether centres lie alongside the cushion (not in a pocket mouth beyond it)."""
        u = np.asarray(xy)[..., 1 - self.axis]
        return (u >= self.lo_mm - margin_mm) & (u <= self.hi_mm + margin_mm)

    def contact_point(self, xy: np.ndarray) -> tuple[float, float]:
        """The point on the nose a ball centred at ``xy`` touches."""
        p = [float(xy[0]), float(xy[1])]
        p[self.axis] = self.nose[0][self.axis]
        return (p[0], p[1])


class TableGeometry:
    """Cushion lines, jaws, pockets, holes and pins of one profile, as arrays ready for vector tests."""

    def __init__(self, profile: TableProfile):
        self.profile = profile
        self.R = profile.ball_radius_mm
        self.length_mm, self.width_mm = profile.length_mm, profile.width_mm
        lines = []
        for c in profile.cushions:
            lines.append(self._line(c.id, c.a_mm, c.b_mm, c.normal))
        if profile.scoreboard_x_mm is not None:
            # bar billiards 2i: the folded-down scoreboard is a cushion in the endgame; a ball only
            # bounces there when it is down, so a bounce on this line is the evidence
            x = profile.scoreboard_x_mm
            lines.append(self._line("scoreboard", (x, 0.0), (x, profile.width_mm), (-1.0, 0.0)))
        self.lines: tuple[CentreLine, ...] = tuple(lines)
        jaws = []
        for p in profile.pockets:
            for jaw in p.jaws_mm:
                owner = min(profile.cushions, key=lambda c: min(math.dist(c.a_mm, jaw), math.dist(c.b_mm, jaw)))
                jaws.append((owner.id, jaw))
        self.jaw_ids: tuple[str, ...] = tuple(j[0] for j in jaws)
        self.jaw_xy = np.array([j[1] for j in jaws], dtype=np.float64).reshape(-1, 2)
        self.pocket_ids: tuple[str, ...] = tuple(p.id for p in profile.pockets) + tuple(h.id for h in profile.holes)
        self.pocket_xy = np.array([p.xy_mm for p in profile.pockets] + [h.xy_mm for h in profile.holes], dtype=np.float64).reshape(-1, 2)
        self.pocket_r = np.array([p.radius_mm for p in profile.pockets] + [h.radius_mm for h in profile.holes], dtype=np.float64)
        self.is_hole = np.array([False] * len(profile.pockets) + [True] * len(profile.holes))
        self.pin_ids: tuple[str, ...] = tuple(p.id for p in profile.pins)
        self.pin_xy = np.array([p.xy_mm for p in profile.pins], dtype=np.float64).reshape(-1, 2)
        self.pin_r = np.array([p.radius_mm for p in profile.pins], dtype=np.float64)

    def _line(self, cid: str, a: tuple[float, float], b: tuple[float, float], normal: tuple[float, float]) -> CentreLine:
        axis = 0 if abs(normal[0]) > abs(normal[1]) else 1
        inward = 1 if normal[axis] > 0 else -1
        at = a[axis] + inward * self.R
        lo, hi = sorted((a[1 - axis], b[1 - axis]))
        return CentreLine(cid, axis, at, lo, hi, inward, (a, b))

    @cached_property
    def main_lines(self) -> tuple[CentreLine, ...]:
        """The cushions a ball always bounces off (the scoreboard only in the endgame)."""
        return tuple(c for c in self.lines if c.id != "scoreboard")

    def on_table(self, xy: np.ndarray, margin_mm: float = 0.0) -> np.ndarray:
        """Whether centres lie on the playing surface grown by ``margin_mm`` (negative: shrunk)."""
        xy = np.asarray(xy)
        return ((xy[..., 0] >= -margin_mm) & (xy[..., 0] <= self.length_mm + margin_mm)
                & (xy[..., 1] >= -margin_mm) & (xy[..., 1] <= self.width_mm + margin_mm))

    def nearest_pocket(self, xy: np.ndarray) -> tuple[int, float]:
        """Index (into ``pocket_ids``) of the pocket or hole nearest ``xy`` and the distance from its
        drop circle's edge (negative inside)."""
        if len(self.pocket_xy) == 0:
            return -1, math.inf
        d = np.hypot(*(self.pocket_xy - np.asarray(xy, dtype=np.float64)).T) - self.pocket_r
        k = int(np.argmin(d))
        return k, float(d[k])

    def pocket_mouth_distance(self, xy: np.ndarray) -> np.ndarray:
        """(m,) distance of each centre from the nearest pocket's drop circle (holes excluded)."""
        n = len(self.profile.pockets)
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        if n == 0:
            return np.full(len(xy), np.inf)
        d = np.linalg.norm(xy[:, None, :] - self.pocket_xy[None, :n], axis=2) - self.pocket_r[None, :n]
        return d.min(axis=1)

    def bounce(self, xy: np.ndarray, v: np.ndarray) -> list[tuple[int, float]]:
        """The cushion reflections a centre moving from ``xy`` to ``xy + v`` (one step) makes:
        ``(axis, line)`` pairs, for lines crossed alongside their cushion (not in a pocket mouth)."""
        out = []
        end = xy + v
        for c in self.main_lines:
            if c.distance(end) < 0 <= c.distance(xy) + 1e-9:
                # where the path crosses the line must lie alongside the cushion
                d0, d1 = c.distance(xy), c.distance(end)
                cross = xy + v * (d0 / (d0 - d1)) if d0 != d1 else end
                if c.spans(cross):
                    out.append((c.axis, c.at_mm))
        return out


def polygon_distance(polygon: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """(m,) signed distance (mm) of points from a polygon's outline: negative inside."""
    contour = np.asarray(polygon, dtype=np.float32).reshape(-1, 1, 2)
    pts = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    return np.array([-cv2.pointPolygonTest(contour, (float(x), float(y)), True) for x, y in pts])


class Outlines:
    """One frame's occluder outlines, made ready for many distance queries (each outline's box first:
    an outline whose box is further than asked cannot be nearer)."""

    def __init__(self, polygons: Sequence[np.ndarray]):
        self.contours = [np.asarray(p, dtype=np.float32).reshape(-1, 1, 2) for p in polygons]
        self.boxes = [(float(c[:, 0, 0].min()), float(c[:, 0, 1].min()), float(c[:, 0, 0].max()), float(c[:, 0, 1].max()))
                      for c in self.contours]

    def nearest(self, xy: np.ndarray, within: float) -> float:
        """The signed distance (mm, negative inside) from ``xy`` to the nearest outline, as
        :func:`polygon_distance` gives it, when one comes within ``within`` of it; else inf."""
        x, y = float(xy[0]), float(xy[1])
        r = within + 1.0  # (a margin for the outlines' float32)
        best = math.inf
        for c, (x0, y0, x1, y1) in zip(self.contours, self.boxes):
            if x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r:
                best = min(best, -cv2.pointPolygonTest(c, (x, y), True))
        return best if best <= within else math.inf


def elongated(polygon: np.ndarray, min_length_mm: float, max_width_mm: float) -> tuple[bool, np.ndarray, np.ndarray]:
    """Whether a polygon is stick-shaped (a cue): its minimum-area rectangle at least
    ``min_length_mm`` long and at most ``max_width_mm`` wide. Also returns the two ends of its long
    axis (each (2,)), so the caller can find the tip."""
    pts = np.asarray(polygon, dtype=np.float32).reshape(-1, 2)
    if len(pts) < 3:
        return False, pts[0].astype(np.float64), pts[-1].astype(np.float64)
    (cx, cy), (w, h), angle = cv2.minAreaRect(pts)
    length, width = max(w, h), min(w, h)
    a = math.radians(angle if w >= h else angle + 90.0)
    d = np.array([math.cos(a), math.sin(a)]) * length / 2
    c = np.array([cx, cy], dtype=np.float64)
    return (length >= min_length_mm and width <= max_width_mm), c - d, c + d


def outline_width(polygon: np.ndarray) -> float:
    """The short side of a polygon's minimum-area rectangle (mm): the widest thing it can cover."""
    pts = np.asarray(polygon, dtype=np.float32).reshape(-1, 2)
    if len(pts) < 3:
        return 0.0
    return float(min(cv2.minAreaRect(pts)[1]))


def cue_sticks(polygons: Sequence[np.ndarray], min_length_mm: float, max_width_mm: float,
               gap_mm: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """The cues among one frame's occluder outlines, as the two ends of each (``(2,)`` arrays).

    A ball the cue passes over, an arm across it or a lamp's glare cut one cue into several outlines,
    or merge a piece of it into an arm's: each narrow outline (at most ``max_width_mm`` wide) is
    followed along its long axis, through any outline and across gaps shorter than ``gap_mm``, to
    where the cue really ends. Without that, the piece behind a ball the cue passes over ends at that
    ball and looks like a tip there. A cue is at least ``min_length_mm`` long in all; two narrow
    outlines followed to the same ends are one cue."""
    polys = [np.asarray(p, dtype=np.float32).reshape(-1, 1, 2) for p in polygons]
    polys = [p for p in polys if len(p) >= 3]
    outlines = [_outline_points(p.reshape(-1, 2).astype(np.float64), 8.0) for p in polys]  # (once: every piece follows through all)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for p in polys:
        narrow, a, b = elongated(p, 0.0, max_width_mm)
        if not narrow or float(np.linalg.norm(b - a)) < 1e-6:
            continue
        u = (b - a) / float(np.linalg.norm(b - a))
        a, b = _follow(outlines, a, -u, gap_mm, max_width_mm / 2), _follow(outlines, b, u, gap_mm, max_width_mm / 2)
        if float(np.linalg.norm(b - a)) < min_length_mm:
            continue
        if any(min(np.linalg.norm(a - c) + np.linalg.norm(b - d), np.linalg.norm(a - d) + np.linalg.norm(b - c)) < max_width_mm
               for c, d in out):
            continue  # another piece of a cue already found
        out.append((a, b))
    return out


def _outline_points(pts: np.ndarray, step_mm: float) -> np.ndarray:
    """Points along a closed outline, at most ``step_mm`` apart (its corners included)."""
    edge = np.roll(pts, -1, axis=0) - pts
    length = np.linalg.norm(edge, axis=1)
    # each edge: its corner, then a point every step_mm short of the next corner
    n = np.maximum(np.ceil(length / step_mm).astype(int) - 1, 0)
    i = np.repeat(np.arange(len(pts)), n)
    k = np.arange(len(i)) - np.repeat(np.cumsum(n) - n, n) + 1
    f = k * step_mm / np.maximum(length[i], 1e-9)
    return np.concatenate([pts, pts[i] + f[:, None] * edge[i]])


def _follow(outlines: list[np.ndarray], end: np.ndarray, u: np.ndarray, gap_mm: float, aside_mm: float) -> np.ndarray:
    """How far a cue ending at ``end`` goes on along ``u``: through every outline (its points,
    :func:`_outline_points`) with points within ``aside_mm`` of the line (a piece's axis is known to a
    few degrees) that starts less than ``gap_mm`` past the furthest point reached so far."""
    n = np.array([-u[1], u[0]])
    spans = []
    for pts in outlines:
        rel = pts - end
        on_line = np.abs(rel @ n) <= aside_mm
        if np.any(on_line):
            along = rel[on_line] @ u
            spans.append((float(along.min()), float(along.max())))
    reach = 0.0
    for lo, hi in sorted(spans):
        if lo > reach + gap_mm:
            break
        reach = max(reach, hi)
    return end + reach * u
