"""The detector's cheap ways of computing things give what the plain computations give, bit for bit,
on synthetic inputs: the cloth's median colour from histograms, the median filter over a box only,
uncovered cloth absorbed over a box only, the outline's longest gap without a loop, the masked
median and the circle fits without ``take_along_axis``, the edges without ``np.pad``, where a ball can rest over
every cushion at once."""

import copy

import cv2
import numpy as np
import pytest

from vision.background import ClothBackground, brightness_and_hue, change_score
from vision.balls import _CORE_UNIT, _longest_gap
from vision.config import DetectorConfig
from vision.fit import RaySamples, find_edges, fit_circles, masked_median, ray_directions


def _background(rng, h, w, r_low):
    roi = np.zeros((h, w), bool)
    roi[3:-3, 4:-4] = True
    cloth = np.zeros((h, w), bool)
    cloth[8:-8, 9:-9] = True
    return ClothBackground(DetectorConfig(), roi, r_low, cloth)


def _frame(rng, h, w):
    low = rng.normal((60, 140, 40), 6, (h, w, 3)).clip(0, 255).astype(np.uint8)
    for _ in range(4):  # a few balls and a dark marking
        y, x = rng.integers(0, h), rng.integers(0, w)
        cv2.circle(low, (int(x), int(y)), int(rng.integers(2, 6)), tuple(int(v) for v in rng.integers(0, 256, 3)), -1)
    return low


@pytest.mark.parametrize("seed", range(6))
def test_cloth_median_and_median_over_a_box(seed):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(40, 140, 2))
    bg = _background(rng, h, w, float(rng.uniform(2, 6)))
    low = _frame(rng, h, w)
    if seed % 2:  # an even count split between two neighbouring values: np.median's mean, truncated
        low[..., 1] = np.where(rng.random((h, w)) < 0.5, 100, 101)
    plain = np.median(low[bg.cloth], axis=0).astype(np.uint8)
    assert np.array_equal(bg.cloth_median(low), plain)
    src = low.copy()
    src[~bg.cloth] = plain
    k = int(2 * round(3.0 * bg.r_low) + 1)
    whole = cv2.medianBlur(src, max(5, min(k, 255))).astype(np.float32)
    assert np.array_equal(bg.median_estimate(low), whole)
    for y0, x0 in ((0, 0), (int(rng.integers(0, h - 3)), int(rng.integers(0, w - 3)))):
        box = (slice(y0, int(rng.integers(y0 + 1, h + 1))), slice(x0, int(rng.integers(x0 + 1, w + 1))))
        assert np.array_equal(bg.median_estimate(low, box=box), whole[box])


def _absorb_plain(bg, low, score, protect):
    """Uncovered cloth absorbed the plain way: the whole frame filtered and compared."""
    src = low.copy()
    src[~bg.cloth] = np.median(low[bg.cloth], axis=0).astype(np.uint8)
    med = cv2.medianBlur(src, max(5, min(int(2 * round(3.0 * bg.r_low) + 1), 255))).astype(np.float32)
    s_med = change_score(*brightness_and_hue(low, med), bg.tolerance, bg.cfg)
    s_med[~bg.roi] = 0.0
    take = (score >= 1.0) & (s_med < 0.5) & ~protect & bg.roi
    bg.bg[take] = low.astype(np.float32)[take] / max(bg.gain, 1e-3)
    bb = cv2.transform(cv2.multiply(bg.bg, bg.bg), np.ones((1, 3), np.float32))
    return int(take.sum()), bb


@pytest.mark.parametrize("seed", range(4))
def test_absorb_uncovered_over_a_box_takes_what_the_whole_frame_would(seed):
    rng = np.random.default_rng(10 + seed)
    h, w = 90, 130
    bg = _background(rng, h, w, 3.0)
    start = _frame(rng, h, w)
    start[30:50, 40:70] = (200, 60, 60)  # an arm lying on the cloth when the video started
    bg.start(start)
    low = start.copy()
    low[30:50, 40:70] = rng.normal((60, 140, 40), 6, (20, 30, 3)).clip(0, 255).astype(np.uint8)  # now cloth
    if seed % 2:
        low[60:70, 90:100] = (250, 250, 250)  # and something new, not cloth
    score = bg.score(low)
    protect = np.zeros((h, w), bool)
    protect[35:40, 45:50] = True
    plain = copy.deepcopy(bg)
    n_plain, bb_plain = _absorb_plain(plain, low, score, protect)
    assert n_plain > 0
    assert bg.absorb_uncovered(low, score, protect) == n_plain
    assert np.array_equal(bg.bg, plain.bg)
    assert np.array_equal(bg._bb, bb_plain)
    assert bg.absorb_uncovered(low, np.zeros_like(score), protect) == 0  # nothing foreground: nothing to do


def test_longest_gap_matches_a_walk_round_the_circle():
    rng = np.random.default_rng(0)
    for p in (0.0, 0.1, 0.5, 0.9, 1.0):
        kept = rng.random((40, 32)) < p
        run, best = np.zeros(40, int), np.zeros(40, int)
        for j in range(64):
            run = np.where(kept[:, j % 32], 0, run + 1)
            best = np.maximum(best, run)
        assert np.array_equal(_longest_gap(kept), np.minimum(best, 32) / 32)


def test_masked_median_matches_nanmedian():
    rng = np.random.default_rng(1)
    values = rng.normal(0, 3, (50, 31))
    mask = rng.random((50, 31)) < rng.random((50, 1))
    mask[0] = False
    got = masked_median(values, mask, default=7.0)
    plain = np.array([np.median(v[m]) if m.any() else 7.0 for v, m in zip(values, mask)])
    assert np.array_equal(got, plain)
    assert len(_CORE_UNIT) % 2 == 1  # the core's score is read as the middle of its sorted samples


def _fit_plain(points, weights, centres, radii, free_radius=False, iterations=5, min_scale_px=0.35):
    """The circle fit written plainly (stacked normal equations, nanmedian-free masked median)."""
    c, r = centres.astype(np.float64).copy(), radii.astype(np.float64).copy()
    w0 = weights.astype(np.float64)
    w = w0
    px, py = points[..., 0], points[..., 1]
    for it in range(iterations):
        dx, dy = px - c[:, :1], py - c[:, 1:]
        dist = np.sqrt(dx * dx + dy * dy)
        inv = 1.0 / np.maximum(dist, 1e-9)
        ux, uy = dx * inv, dy * inv
        res = dist - r[:, None]
        if it > 0:
            a = np.sort(np.where(w0 > 0, np.abs(res), np.inf), axis=1)
            count = (w0 > 0).sum(axis=1)
            lo = np.take_along_axis(a, np.maximum((count - 1) // 2, 0)[:, None], 1)[:, 0]
            hi = np.take_along_axis(a, np.maximum(count // 2, 0)[:, None], 1)[:, 0]
            scale = np.maximum(1.4826 * np.where(count > 0, 0.5 * (lo + hi), min_scale_px), min_scale_px)
            z = res / (4.685 * scale)[:, None]
            w = w0 * np.where(np.abs(z) < 1, (1 - z * z) ** 2, 0.0)
        wx, wy = w * ux, w * uy
        a00, a01, a11 = (wx * ux).sum(1), (wx * uy).sum(1), (wy * uy).sum(1)
        b0, b1 = (wx * res).sum(1), (wy * res).sum(1)
        if free_radius:
            a02, a12, a22, b2 = wx.sum(1), wy.sum(1), w.sum(1), (w * res).sum(1)
            m = np.stack([np.stack([a00, a01, a02], -1), np.stack([a01, a11, a12], -1), np.stack([a02, a12, a22], -1)], -2)
            ok = np.abs(np.linalg.det(m)) > 1e-6
            delta = np.zeros((len(c), 3))
            if ok.any():
                delta[ok] = np.linalg.solve(m[ok], np.stack([b0, b1, b2], -1)[ok][..., None])[..., 0]
            r += delta[:, 2]
        else:
            det = a00 * a11 - a01 * a01
            ok = det > 1e-6
            det = np.where(ok, det, 1.0)
            delta = np.where(ok[:, None], np.stack([(a11 * b0 - a01 * b1) / det, (a00 * b1 - a01 * b0) / det], -1), 0.0)
        c += delta[:, :2]
        if np.abs(delta).max(initial=0.0) < 1e-3:
            break
    dx, dy = px - c[:, :1], py - c[:, 1:]
    return c, r, np.sqrt(dx * dx + dy * dy) - r[:, None], w


@pytest.mark.parametrize("free_radius", [False, True])
def test_circle_fit_matches_the_plain_one(free_radius):
    rng = np.random.default_rng(2)
    n, k = 12, 32
    true_c = rng.uniform(50, 500, (n, 2))
    radius = rng.uniform(8, 20, n)
    unit = ray_directions(k)
    pts = true_c[:, None, :] + unit[None] * (radius[:, None] + rng.normal(0, 0.3, (n, k)))[..., None]
    pts[:, :5] += rng.normal(0, 6, (n, 5, 2))  # a touching ball's edge: outliers
    weights = (rng.random((n, k)) < 0.8) * rng.uniform(0.25, 1.0, (n, k))
    weights[0] = 0.0  # a candidate with no edge at all
    start = true_c + rng.normal(0, 1.5, (n, 2))
    for got, plain in zip(fit_circles(pts, weights, start, radius, free_radius=free_radius),
                          _fit_plain(pts, weights, start, radius, free_radius=free_radius)):
        assert np.array_equal(got, plain)


def test_edges_match_the_plain_search():
    rng = np.random.default_rng(3)
    n, k, m = 7, 32, 21
    centres = rng.uniform(50, 500, (n, 2))
    t = np.linspace(5, 15, m)[None, :] + rng.uniform(0, 2, (n, 1))
    values = rng.normal(100, 20, (n, k, m, 3)).astype(np.float32)
    values[:, :, m // 2:] += 60  # an edge half way, amid noise
    rs = RaySamples(centres, ray_directions(k), t, values)
    expected = t[:, m // 2]
    points, dist, contrast = find_edges(rs, expected)
    # the plain search
    g = np.linalg.norm(values[:, :, 2:] - values[:, :, :-2], axis=-1)
    gp = np.pad(g, ((0, 0), (0, 0), (1, 1)), constant_values=-1.0)
    peak = (g >= gp[:, :, :-2]) & (g >= gp[:, :, 2:]) & (g >= 0.4 * g.max(axis=2, keepdims=True))
    i = np.argmin(np.where(peak, np.abs(t[:, 1:-1] - expected[:, None])[:, None, :], np.inf), axis=2)
    gi, gl, gr = (np.take_along_axis(g, j[..., None], 2)[..., 0] for j in (i, np.maximum(i - 1, 0), np.minimum(i + 1, m - 3)))
    denom = gl - 2 * gi + gr
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.clip(np.where(denom < -1e-6, 0.5 * (gl - gr) / denom, 0.0), -0.5, 0.5)
    step = t[:, 1] - t[:, 0]
    plain_dist = t[:, :1] + (i + 1 + off) * step[:, None]
    d = np.maximum(1, np.round(1.5 / step)).astype(int)[:, None]
    inside = np.take_along_axis(values, np.clip(i + 1 - d, 0, m - 1)[..., None, None], 2)[:, :, 0]
    outside = np.take_along_axis(values, np.clip(i + 1 + d, 0, m - 1)[..., None, None], 2)[:, :, 0]
    assert np.array_equal(dist, plain_dist)
    assert np.array_equal(points, centres[:, None, :] + rs.unit[None] * plain_dist[..., None])
    assert np.array_equal(contrast, np.linalg.norm(inside - outside, axis=-1))


@pytest.mark.parametrize("samples", [1, 2, 5, 19, 20])
def test_core_colour_is_the_median_of_the_darker_samples(samples):
    from vision.colour import summarise_colours

    rng = np.random.default_rng(samples)
    for dtype in (np.float32, np.float64):
        x = (rng.random((9, samples, 3)) * 255).astype(dtype)
        keep = max(1, int(round(samples * 0.8)))
        darker = np.take_along_axis(x, np.argsort(x.sum(axis=2), axis=1)[:, :keep, None], axis=1)
        got, plain = summarise_colours(x), np.median(darker, axis=1)
        assert got.dtype == plain.dtype and np.array_equal(got, plain)


def _inside_plain(p, xy_mm, radii):
    """Where a ball can rest, one cushion, pocket and hole at a time."""
    r = p.ball_radius_mm
    x, y = xy_mm[:, 0], xy_mm[:, 1]
    on = (x >= 0) & (x <= p.length_mm) & (y >= 0) & (y <= p.width_mm)
    mouth = on.copy()
    for pocket in p.pockets:
        mouth |= np.hypot(x - pocket.xy_mm[0], y - pocket.xy_mm[1]) <= pocket.radius_mm + r
    clear = np.ones(len(xy_mm), bool)
    for c in p.cushions:
        a, b = np.asarray(c.a_mm), np.asarray(c.b_mm)
        ab = b - a
        t = np.clip(((xy_mm - a) @ ab) / max(float(ab @ ab), 1e-9), 0.0, 1.0)
        clear &= np.linalg.norm(xy_mm - (a + t[:, None] * ab), axis=1) >= radii * r
    for hole in p.holes:
        clear &= np.hypot(x - hole.xy_mm[0], y - hole.xy_mm[1]) > 0.9 * hole.radius_mm
    return mouth & clear, on & clear


@pytest.mark.parametrize("name", ["ficha", "brasileira", "bar-billiards"])
def test_where_a_ball_can_rest_over_every_cushion_at_once(name):
    from calibration.table import resolve_profile
    from vision.detect import Detector

    p = resolve_profile(name)
    det = Detector.__new__(Detector)  # the test needs the profile only
    det.profile = p
    rng = np.random.default_rng(3)
    xy = np.c_[rng.uniform(-100, p.length_mm + 100, 20000), rng.uniform(-100, p.width_mm + 100, 20000)]
    for radii in (0.6, 1.0):
        got, want = det._inside_both(xy, radii), _inside_plain(p, xy, radii)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
