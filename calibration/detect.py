"""Finding the table in an image: the cloth, the four cushion noses (sub-pixel edge points and robust
line fits), the lens distortion that makes them straight, and dark landmarks (pockets, bed holes).

Everything here works on one BGR image (``(H, W, 3)`` uint8) and returns pixels of that image.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np
from scipy.optimize import least_squares

from calibration.camera import undistort_px
from calibration.homography import CalibrationError

__all__ = [
    "ClothRegion",
    "SideEdges",
    "find_cloth",
    "order_quad",
    "side_edges",
    "fit_line",
    "bowed_inliers",
    "intersect",
    "estimate_distortion",
    "dark_blob_outline",
    "fit_circle",
]

log = logging.getLogger(__name__)

WORK_WIDTH_PX = 480  # the cloth is segmented on a copy this wide: enough for a quad, cheap
MIN_CLOTH_FRACTION = 0.08  # the cloth must cover at least this share of the picture
CHROMA_FLOOR = 4.0  # least chromaticity difference (sum of b, g, r share differences, percent) that separates cloth


@dataclass(frozen=True, slots=True, eq=False)
class ClothRegion:
    """The cloth (playing surface plus cushion tops) as one region of the image."""

    quad_px: np.ndarray  # (4, 2) outer corners of the cloth, clockwise from the top-left one
    cloth_chroma: tuple[float, float, float]  # the cloth's b, g, r shares (percent of their sum)
    cloth_level: float  # the cloth's mean grey level in the middle of the picture (0-255)
    area_fraction: float  # share of the picture the region covers
    mask: np.ndarray  # (h, w) uint8 at the working scale
    scale: float  # working-scale pixels per image pixel


def _chromaticity(bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brightness-free colour (b, g, r shares of the sum, times 100) and the sum itself."""
    total = bgr.sum(axis=-1, keepdims=True) + 1.0
    return 100.0 * bgr / total, total[..., 0]


def find_cloth(image: np.ndarray) -> ClothRegion:
    """Find the cloth around the middle of the picture and the quadrilateral that bounds it.

    The cloth colour is the median chromaticity of the central part of the picture (no colour is
    assumed: green, blue and red cloths all work; brightness does not count, so lamp fall-off and
    shaded cushions stay in); pixels close to it form the region, holes (balls,
    markings) are filled and four lines are fitted to the outline's sides."""
    if image is None or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise CalibrationError("the image must be an (H, W, 3) uint8 BGR picture")
    h, w = image.shape[:2]
    scale = WORK_WIDTH_PX / w
    small = cv2.resize(image, (WORK_WIDTH_PX, max(8, int(round(h * scale)))), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (5, 5), 0)
    chroma, total = _chromaticity(small.astype(np.float32))
    sh, sw = total.shape
    sl = (slice(int(sh * 0.3), int(sh * 0.7)), slice(int(sw * 0.3), int(sw * 0.7)))
    ref = np.median(chroma[sl].reshape(-1, 3), axis=0)
    ref_total = float(np.median(total[sl]))
    strength = float(np.abs(ref - 100.0 / 3).sum())
    if ref_total < 3 * 10 or strength < 4.0:
        raise CalibrationError(
            f"no cloth in the middle of the picture (its centre is {'black' if ref_total < 30 else 'grey'}: "
            f"mean level {ref_total / 3:.0f} of 255, colour strength {strength:.1f})",
            "point the camera at the table so the cloth fills the middle of the picture, with light on it",
        )
    dist = np.abs(chroma - ref).sum(axis=-1)
    spread = float(np.percentile(dist[sl], 90))
    thresh = max(CHROMA_FLOOR, 2.5 * spread, 0.35 * strength)
    # Cushion tops are the same cloth in shadow: brightness may fall to a fifth of the centre's.
    mask = ((dist < thresh) & (total > 0.2 * ref_total)).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    core = labels[int(sh * 0.4): int(sh * 0.6), int(sw * 0.4): int(sw * 0.6)]
    counts = np.bincount(core.ravel(), minlength=n)
    counts[0] = 0
    best = int(np.argmax(counts))
    if counts[best] == 0:
        raise CalibrationError("no cloth-coloured region covers the middle of the picture",
                               "point the camera at the table so the cloth fills the middle of the picture")
    region = (labels == best).astype(np.uint8) * 255
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = max(contours, key=cv2.contourArea)
    filled = np.zeros_like(region)
    cv2.drawContours(filled, [outline], -1, 255, -1)
    fraction = float(cv2.contourArea(outline)) / (sh * sw)
    if fraction < MIN_CLOTH_FRACTION:
        raise CalibrationError(
            f"the cloth-coloured region in the middle of the picture covers only {100 * fraction:.1f}% of it",
            "frame the camera so the whole table fills most of the picture",
        )
    hull = cv2.convexHull(outline)
    # A rotated rectangle first (pockets cut the corners, so a polygon fit can miss them), then each
    # side is pulled onto the outline near its middle, which also follows perspective.
    quad = _clockwise(cv2.boxPoints(cv2.minAreaRect(outline)).astype(np.float64))
    for _ in range(3):
        quad = _refine_quad(quad, outline.reshape(-1, 2).astype(np.float64))
    quad = quad / scale
    hull_area = float(cv2.contourArea(hull)) / (scale * scale)
    quad_area = float(cv2.contourArea(quad.astype(np.float32)))
    if quad_area <= 0 or hull_area / quad_area < 0.85:
        raise CalibrationError(
            f"the cloth-coloured region is not a quadrilateral (it fills {100 * hull_area / max(quad_area, 1):.0f}% of "
            "the four-sided shape around it)",
            "make sure the whole table is in view and nothing cloth-coloured touches it, or give the corners by hand",
        )
    return ClothRegion(quad, (float(ref[0]), float(ref[1]), float(ref[2])), ref_total / 3, fraction, filled, scale)


def _refine_quad(quad: np.ndarray, outline: np.ndarray) -> np.ndarray:
    """Straighten a rough quad's sides onto the outline: each side becomes the line fitted to the
    outline points near the middle of that side (``cv2.approxPolyN`` can put a vertex off a corner
    when the sides bow, as under barrel distortion)."""
    short = min(np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1))
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        n = np.array([-d[1], d[0]])
        t = (outline - a) @ d / np.linalg.norm(b - a)
        near = (np.abs((outline - a) @ n) < 0.08 * short) & (t > 0.2) & (t < 0.8)
        if near.sum() < 5:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(outline[near].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    try:
        return np.array([intersect(*lines[i - 1], *lines[i]) for i in range(4)])
    except CalibrationError:
        return quad


def _clockwise(quad: np.ndarray) -> np.ndarray:
    """Four points in clockwise order on the picture (rows grow downwards), from the top-left one."""
    c = quad.mean(axis=0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(ang)]
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, axis=0)


HEAD_DIRECTIONS = {"left": (1.0, 0.0), "right": (-1.0, 0.0), "top": (0.0, 1.0), "bottom": (0.0, -1.0)}


def order_quad(quad_px: np.ndarray, head: str | None = None) -> tuple[np.ndarray, str]:
    """Reorder a clockwise quad as the table corners TL, TR, BR, BL.

    The long sides are the table's length. ``head`` says where the head cushion is in the picture
    (``left``, ``right``, ``top``, ``bottom``); by default ``left`` for a landscape-looking table and
    ``top`` for a portrait one. Returns the ordered quad and the head used."""
    q = _clockwise(np.asarray(quad_px, dtype=np.float64))
    sides = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    long_first = sides[0] + sides[2] >= sides[1] + sides[3]
    if head is None:
        along = (q[1] - q[0]) if long_first else (q[2] - q[1])
        head = "left" if abs(along[0]) >= abs(along[1]) else "top"
    if head not in HEAD_DIRECTIONS:
        raise CalibrationError(f"unknown head position {head!r}", f"use one of {', '.join(HEAD_DIRECTIONS)}")
    want = np.array(HEAD_DIRECTIONS[head])
    best, best_dot = 0, -np.inf
    for i in (0, 2) if long_first else (1, 3):
        d = q[(i + 1) % 4] - q[i]
        dot = float(d @ want) / (np.linalg.norm(d) + 1e-12)
        if dot > best_dot:
            best, best_dot = i, dot
    return np.roll(q, -best, axis=0), head


@dataclass(frozen=True, slots=True, eq=False)
class SideEdges:
    """Sub-pixel edge points found along one side of the table (image pixels)."""

    side: str  # "top" | "right" | "bottom" | "left" (table sides: y=0, x=L, y=W, x=0)
    points_px: np.ndarray  # (n, 2)
    strength: np.ndarray  # (n,) gradient magnitude at each point (grey levels per pixel)


def _profiles_along(gray: np.ndarray, starts: np.ndarray, steps: np.ndarray, n_steps: int) -> np.ndarray:
    """Sample ``gray`` along straight profiles, one (unit) step vector each: (n_profiles, n_steps), bilinear."""
    k = np.arange(n_steps, dtype=np.float32)
    xs = (starts[:, 0:1] + steps[:, 0:1] * k[None, :]).astype(np.float32)
    ys = (starts[:, 1:2] + steps[:, 1:2] * k[None, :]).astype(np.float32)
    return cv2.remap(gray, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _aligned(g: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Each row of ``g`` shifted by ``shifts`` (n,) samples (linear interpolation)."""
    n, steps = g.shape
    mx = (np.arange(steps, dtype=np.float32)[None, :] + shifts[:, None].astype(np.float32))
    my = np.repeat(np.arange(n, dtype=np.float32)[:, None], steps, axis=1)
    return cv2.remap(g, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def coherent_edge(profiles: np.ndarray, min_strength: float, window_px: float = 4.0,
                  rel: float = 0.15, near: float | None = None, along_px: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """The innermost edge that runs along the whole stretch, and its sub-pixel position on each profile.

    ``profiles`` (n, steps) are grey levels sampled from inside the cloth outwards, at ``along_px``
    (n,) along the side. The signed gradient is averaged (median) over the profiles: an edge along
    the side (a cushion nose) keeps its sign and adds up, the cloth's texture cancels out. The edge
    may run at a slant to the profiles' base line (perspective, lens bending, a rough first quad):
    the profiles are first aligned along the slant that makes the strongest edge sharpest. The first
    peak of the average (scanning from the inside) above ``rel`` of the largest one and well above
    the average's noise is the nose (or, with ``near``, the qualifying peak nearest that position:
    refining a line already found); on each profile the strongest gradient of the same sign within
    ``window_px`` of it is taken, with a parabola through its neighbours for the sub-pixel position.

    Returns ``(positions (n,), strengths (n,), mean_offset)``; positions are NaN where the edge is
    not seen (a ball or an arm over the cushion)."""
    p = cv2.GaussianBlur(profiles, (0, 0), sigmaX=1.0, sigmaY=0.01)
    g = np.zeros_like(p)
    g[:, 1:-1] = (p[:, 2:] - p[:, :-2]) / 2.0
    n, steps = g.shape
    rel_along = np.zeros(n) if along_px is None else np.asarray(along_px, float) - float(np.mean(along_px))

    def average(slope: float) -> np.ndarray:
        m = np.median(_aligned(g, slope * rel_along), axis=0)
        return cv2.GaussianBlur(m[None, :], (0, 0), sigmaX=0.7, sigmaY=0.01)[0]

    slope = 0.0
    if along_px is not None and n >= 3:
        for grid in (np.linspace(-0.3, 0.3, 13), None):
            if grid is None:
                grid = slope + np.linspace(-0.05, 0.05, 11)
            slope = float(max(grid, key=lambda s_: float(np.abs(average(s_)).max())))
    mean_g = average(slope)
    shifts = slope * rel_along
    a = np.abs(mean_g)
    floor = float(np.median(a)) + 1e-6
    thr = max(rel * float(a.max()), 4.0 * floor, 0.5 * min_strength)
    peaks = [i for i in range(1, steps - 1) if a[i] >= thr and a[i] >= a[i - 1] and a[i] >= a[i + 1]]
    pos = np.full(n, np.nan)
    strength = np.zeros(n)
    if not peaks:
        return pos, strength, float("nan")
    centre = peaks[0] if near is None else min(peaks, key=lambda i: abs(i - near))
    sign = 1.0 if mean_g[centre] > 0 else -1.0
    for r in range(n):
        c = centre + shifts[r]
        lo, hi = max(1, int(math.floor(c - window_px))), min(steps - 2, int(math.ceil(c + window_px)))
        if hi - lo < 2:
            continue
        i = lo + int(np.argmax(sign * g[r, lo: hi + 1]))
        b = sign * g[r, i]
        if b < min_strength or b < 0.3 * a[centre] or not lo < i < hi:
            continue
        a_, c_ = sign * g[r, i - 1], sign * g[r, i + 1]
        den = a_ - 2 * b + c_
        off = 0.5 * (a_ - c_) / den if den < 0 else 0.0
        pos[r] = i + float(np.clip(off, -0.5, 0.5))
        strength[r] = b
    return pos, strength, float(centre)


def side_edges(gray: np.ndarray, quad_px: np.ndarray, band_fraction: float = 0.10,
               skip: dict[str, list[tuple[float, float]]] | None = None, n: int = 90,
               min_strength: float = 1.0, outside_fraction: float = 0.05, segments: int = 4,
               warp: Callable[[np.ndarray], np.ndarray] | None = None, across_px: int = 0) -> list[SideEdges]:
    """Edge points of the cushion noses: on ``n`` profiles across each side of a quad (ordered TL,
    TR, BR, BL), scanning from the inside outwards, the innermost edge that runs along the side
    (:func:`coherent_edge`).

    ``band_fraction`` of the quad's short side is searched inwards from the quad (and
    ``outside_fraction`` outwards); ``skip`` lists, per side, (from, to) fractions along the side
    with no cushion (pocket mouths); each of ``segments`` stretches of a side is searched alone.
    With ``warp`` (undistorted -> image pixels), the quad is in undistorted pixels, the sides are
    followed as the lens bends them, and the edge nearest the quad's side is taken (a refinement).
    Each profile is the mean of ``2 * across_px + 1`` parallel ones a pixel apart along the side (less
    noise in dim light)."""
    q = np.asarray(quad_px, dtype=np.float64)
    short = min(np.linalg.norm(q[1] - q[2]), np.linalg.norm(q[3] - q[0]), np.linalg.norm(q[0] - q[1]))
    band = band_fraction * short
    outside = outside_fraction * short
    n_steps = int(math.ceil(band + outside)) + 1
    names = ("top", "right", "bottom", "left")
    centre = q.mean(axis=0)
    out: list[SideEdges] = []
    for i, name in enumerate(names):
        a, b = q[i], q[(i + 1) % 4]
        t = np.linspace(0.03, 0.97, n)
        keep = np.ones(n, bool)
        for lo, hi in (skip or {}).get(name, []):
            keep &= ~((t >= lo) & (t <= hi))
        t = t[keep]
        base = a[None, :] + (b - a)[None, :] * t[:, None]
        d = (b - a) / np.linalg.norm(b - a)
        normal_in = np.array([-d[1], d[0]])
        if normal_in @ (centre - a) < 0:
            normal_in = -normal_in
        normals = np.repeat(normal_in[None, :], len(t), axis=0)
        if warp is not None:
            step = 1.0
            p0, pn = warp(base), warp(base + normal_in * step)
            normals = (pn - p0) / np.linalg.norm(pn - p0, axis=1, keepdims=True)
            base = p0
        along = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(base, axis=0), axis=1))]
        starts = base + normals * band  # scan from inside the cloth outwards
        tangent = np.c_[normals[:, 1], -normals[:, 0]]
        prof = np.mean([_profiles_along(gray, starts + j * tangent, -normals, n_steps)
                        for j in range(-across_px, across_px + 1)], axis=0)
        pos, strength = np.full(len(t), np.nan), np.zeros(len(t))
        # Each stretch of the side finds its own edge, so a quad side a few pixels askew still works.
        for part in np.array_split(np.arange(len(t)), segments):
            if len(part):
                pos[part], strength[part], _ = coherent_edge(prof[part], min_strength,
                                                             near=band if warp is not None else None,
                                                             along_px=along[part])
        good = np.isfinite(pos)
        pts = starts[good] - normals[good] * pos[good, None]
        out.append(SideEdges(name, pts, strength[good]))
    return out


def fit_line(points: np.ndarray, iterations: int = 3, tolerance_px: float = 1.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Robust straight line through (n, 2) points.

    First the line through two of the points that has the most points within ``tolerance_px``
    (a RANSAC search over pairs: up to half the points may be on another edge, such as a rail seen
    where the cushion nose was hidden); then ``cv2.fitLine`` (Huber) on those, points further than 3
    robust sigmas (at least ``tolerance_px``) dropped and the line refitted.

    Returns ``(point, unit_direction, inlier_mask)``."""
    p = np.asarray(points, dtype=np.float64)
    if len(p) < 5:
        raise CalibrationError(f"only {len(p)} edge points found along a cushion",
                               "make sure every cushion is in view and lit, or give the corners by hand")
    rng = np.random.default_rng(len(p))
    pairs = rng.integers(0, len(p), (min(300, len(p) * (len(p) - 1) // 2), 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    a, b = p[pairs[:, 0]], p[pairs[:, 1]]
    d = b - a
    n = np.c_[-d[:, 1], d[:, 0]] / (np.linalg.norm(d, axis=1, keepdims=True) + 1e-12)
    dist = np.abs((p[None, :, :] - a[:, None, :]) @ n[:, :, None])[..., 0]  # (pairs, points)
    keep = dist[int(np.argmax((dist <= tolerance_px).sum(axis=1)))] <= tolerance_px
    if keep.sum() < 5:
        keep = np.ones(len(p), bool)
    c, d = p[keep].mean(axis=0), np.array([1.0, 0.0])
    for _ in range(iterations):
        vx, vy, x0, y0 = cv2.fitLine(p[keep].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        d = np.array([vx, vy], float)
        c = np.array([x0, y0], float)
        dist_all = np.abs((p - c) @ np.array([-d[1], d[0]]))
        sigma = 1.4826 * np.median(dist_all[keep]) + 1e-9
        new = dist_all <= max(3 * sigma, tolerance_px)
        if new.sum() < 5 or np.array_equal(new, keep):
            break
        keep = new
    # Final least-squares line through the inliers (SVD: the exact total-least-squares fit).
    sel = p[keep]
    c = sel.mean(axis=0)
    _, _, vt = np.linalg.svd(sel - c, full_matrices=False)  # U (n x n) is never used
    return c, vt[0], keep


def bowed_inliers(points: np.ndarray, tolerance_px: float = 1.5) -> np.ndarray:
    """Inlier mask of edge points along one cushion *before* the lens is known: the points may bow
    (barrel distortion), so a parabola across the side's direction is fitted robustly (first a wide
    RANSAC line to drop another edge's points, then least squares with 3-sigma trimming)."""
    p = np.asarray(points, dtype=np.float64)
    c = p.mean(axis=0)
    _, _, vt = np.linalg.svd(p - c, full_matrices=False)
    x, y = (p - c) @ vt[0], (p - c) @ vt[1]
    span = float(np.ptp(x)) + 1e-9
    _, _, keep = fit_line(p, iterations=0, tolerance_px=max(tolerance_px, 0.02 * span))
    for _ in range(4):
        if keep.sum() < 5:
            break
        coef = np.polyfit(x[keep], y[keep], 2)
        res = np.abs(y - np.polyval(coef, x))
        sigma = 1.4826 * float(np.median(res[keep])) + 1e-9
        new = res <= max(3 * sigma, tolerance_px)
        if np.array_equal(new, keep):
            break
        keep = new
    return keep


def intersect(p1: np.ndarray, d1: np.ndarray, p2: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """Intersection of two lines given as point + direction."""
    a = np.array([d1, -d2]).T
    if abs(np.linalg.det(a)) < 1e-9:
        raise CalibrationError("two cushion lines are parallel", "give the corners by hand")
    s = np.linalg.solve(a, p2 - p1)
    return p1 + s[0] * d1


def _straightness(sides_px: list[np.ndarray], k: np.ndarray, dist: np.ndarray) -> np.ndarray:
    res = []
    for pts in sides_px:
        u = undistort_px(pts, k, dist)
        c = u.mean(axis=0)
        _, _, vt = np.linalg.svd(u - c, full_matrices=False)
        res.append((u - c) @ vt[1])
    return np.concatenate(res)


def estimate_distortion(sides_px: list[np.ndarray], camera_matrix: np.ndarray, k2_prior_px: float = 3.0
                        ) -> tuple[np.ndarray, float, float]:
    """Radial distortion (k1, k2) that makes the cushion lines straight.

    ``sides_px``: inlier edge points of each cushion. The two terms are fitted as the relative
    displacements they cause at the farthest edge point (``k1 r^2``, ``k2 r^4``), so the fit does
    not depend on how well the focal length is known; the second term carries a weak prior
    (``k2_prior_px`` px of straightness per unit) since four lines fix mainly one radial term.
    Returns ``(dist_coeffs (5,), rms_before_px, rms_after_px)``."""
    pts = [np.asarray(s, dtype=np.float64) for s in sides_px if len(s) >= 5]
    if len(pts) < 3:
        return np.zeros(5), float("nan"), float("nan")
    k = np.asarray(camera_matrix, dtype=np.float64)
    allp = np.concatenate(pts)
    r2 = float(np.max(((allp[:, 0] - k[0, 2]) / k[0, 0]) ** 2 + ((allp[:, 1] - k[1, 2]) / k[1, 1]) ** 2))

    def coeffs(u: np.ndarray) -> np.ndarray:
        return np.array([u[0] / r2, u[1] / r2 ** 2, 0.0, 0.0, 0.0])

    def resid(u: np.ndarray) -> np.ndarray:
        return np.r_[_straightness(pts, k, coeffs(u)), k2_prior_px * u[1]]

    before = float(np.sqrt(np.mean(_straightness(pts, k, np.zeros(5)) ** 2)))
    sol = least_squares(resid, np.zeros(2), bounds=([-0.6, -0.4], [0.4, 0.4]), loss="soft_l1", f_scale=1.0)
    dist = coeffs(sol.x)
    after = float(np.sqrt(np.mean(_straightness(pts, k, dist) ** 2)))
    if after > before * 0.98:  # no real bending: keep the lens ideal
        return np.zeros(5), before, before
    return dist, before, after


def dark_blob_outline(gray: np.ndarray, centre_px: np.ndarray, radius_px: float, dark_fraction: float = 0.35
                      ) -> np.ndarray | None:
    """Outline (n, 2) in pixels of the dark blob (a pocket's drop or a bed hole) nearest
    ``centre_px`` within ``radius_px``, or None.

    Dark means below ``dark_fraction`` of the window's 80th-percentile grey level (the cloth, the
    cushions and the rail around it), so lamp fall-off does not matter."""
    h, w = gray.shape[:2]
    r = int(math.ceil(radius_px))
    x0, y0 = int(round(centre_px[0])) - r, int(round(centre_px[1])) - r
    xa, ya, xb, yb = max(0, x0), max(0, y0), min(w, x0 + 2 * r + 1), min(h, y0 + 2 * r + 1)
    if xb - xa < 7 or yb - ya < 7:
        return None
    win = gray[ya:yb, xa:xb]
    level = float(np.percentile(win, 80))
    dark = (win < dark_fraction * level).astype(np.uint8)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(dark, connectivity=8)
    local = np.asarray(centre_px, float) - (xa, ya)
    best, best_d = None, np.inf
    for lab in range(1, n):
        if stats[lab, cv2.CC_STAT_AREA] < 12:
            continue
        d = float(np.linalg.norm(cents[lab] - local))
        if d < best_d:
            best, best_d = lab, d
    if best is None:
        return None
    blob = (labels == best).astype(np.uint8)
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = max(contours, key=len).reshape(-1, 2).astype(np.float64)
    # Contour pixels are the blob's own border pixels: their boundary lies half a pixel outwards.
    c = outline.mean(axis=0)
    out = outline + 0.5 * (outline - c) / (np.linalg.norm(outline - c, axis=1, keepdims=True) + 1e-9)
    return out + (xa, ya)


def fit_circle(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares circle through (n, 2) points (algebraic fit): ``(centre, radius)``."""
    p = np.asarray(points, dtype=np.float64)
    a = np.c_[2 * p, np.ones(len(p))]
    b = (p ** 2).sum(axis=1)
    sol, *_ = np.linalg.lstsq(a, b, rcond=None)
    centre = sol[:2]
    return centre, float(np.sqrt(max(sol[2] + centre @ centre, 0.0)))
