"""Placing ball candidates to a fraction of a pixel, in two passes, all candidates at once.

1. **Coarse**, on the low-resolution foreground score: rays from the candidate's centre outwards; on
   each the ball's edge, to within a low-res pixel, is the crossing from foreground to cloth nearest
   the predicted radius among the outermost one and those followed by clear cloth before more
   foreground (a projected ring round the ball, its far side within the rays' reach, must not pull
   the circle). Rays that end in foreground (a touching ball, a cue) or see none are dropped; a
   circle of the predicted radius is fitted to the rest.
2. **Fine**, on the full picture around the coarse centre: rays across the expected edge only
   (``R +- w``); the edge on a ray is the strongest colour step, weighted towards the expected
   radius (a lamp's highlight inside the ball and a projected ring outside it are steps too). Rays
   whose far end is not cloth, or whose step is weak, are dropped; circles are fitted with the
   predicted radius fixed (the centre) and free (the size: a jumping ball looks larger).

Off the camera's axis an outline is an ellipse (a third longer than wide at the edge of a low, wide
camera's picture): given its predicted ``shape``, both passes expect and fit that ellipse.

The core's colour is read in the same ``cv2.remap`` as the fine rays.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.numeric import clip
from vision.fit import find_edges, fit_circles, masked_median, outline_stretch, ray_directions, sample_rays

__all__ = ["BallFits", "fit_balls", "fine_band", "sample_core", "CORE_RINGS"]

_CLEAR = 0.5  # a foreground score under this is clear cloth (1: the foreground threshold)
CORE_RINGS = ((0.0, 1), (0.3, 6), (0.6, 12))  # (radius as a share of the ball's, samples): the core's colour
_CORE_UNIT = np.concatenate([share * np.stack([np.cos(a), np.sin(a)], -1)
                             for share, count in CORE_RINGS
                             for a in [(np.arange(count) + 0.5) * 2 * np.pi / count]])  # (S, 2), in radii


def sample_core(image: np.ndarray, centres: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """The picture's colours (n, S, 3) float32 at the core points of balls at ``centres`` (n, 2) of
    ``radius`` (n,) px."""
    cp = centres[:, None, :] + _CORE_UNIT[None, :, :] * np.asarray(radius, dtype=np.float64)[:, None, None]
    return cv2.remap(image, cp[..., 0].astype(np.float32), cp[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).astype(np.float32)


@dataclass(frozen=True, slots=True, eq=False)
class BallFits:
    """Fitted outlines of n candidates (arrays of length n)."""

    centre: np.ndarray  # (n, 2) outline centre, px
    radius: np.ndarray  # (n,) outline radius fitted freely, px
    radius_pred: np.ndarray  # (n,) the radius the calibration predicts there, px
    visible: np.ndarray  # (n,) share of the outline found
    gap: np.ndarray  # (n,) the longest stretch of outline not found, as a share of the whole
    contrast: np.ndarray  # (n,) median colour step at the edge, grey levels
    rms: np.ndarray  # (n,) RMS distance of the edges kept from the fitted circle, px
    stretch: np.ndarray  # (n,) how elongated the outline is: its second angular harmonic, px (motion blur)
    core: np.ndarray  # (n, S, 3) float32 colours sampled in the core
    core_score: np.ndarray  # (n,) median foreground score of the core
    min_contrast: np.ndarray  # (n,) the colour step an edge needed to count (grey levels)


def _sample_low(score: np.ndarray, pts_full: np.ndarray, scale: int) -> np.ndarray:
    """Bilinear read of a low-res map at full-resolution points (..., 2)."""
    return _sample_low_xy(score, pts_full[..., 0], pts_full[..., 1], scale)


def _sample_low_xy(score: np.ndarray, x: np.ndarray, y: np.ndarray, scale: int) -> np.ndarray:
    """Bilinear read of a low-res map at full-resolution points given by their coordinates ``x`` and
    ``y`` (two arrays of one shape, at least 2-D)."""
    shape = x.shape
    # remap wants rows and columns under 32767
    mx = ((x + 0.5) / scale - 0.5).reshape(-1, shape[-1]).astype(np.float32)
    my = ((y + 0.5) / scale - 0.5).reshape(-1, shape[-1]).astype(np.float32)
    out = cv2.remap(score, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)
    return out.reshape(shape)


def _longest_gap(kept: np.ndarray) -> np.ndarray:
    """Per row of ``kept`` (n, K) bool, around the circle: the longest run of False, as a share of K."""
    n, k = kept.shape
    if k == 0:
        return np.ones(n)
    twice = np.concatenate([kept, kept], axis=1)  # twice round, so a run through the start is counted whole
    j = np.arange(2 * k)
    last = np.maximum.accumulate(np.where(twice, j, -1), axis=1)  # the latest True at or before each place
    return np.minimum((j - last).max(axis=1), k) / k


def _coarse(score: np.ndarray, scale: int, centres: np.ndarray, radius: np.ndarray, n_rays: int,
            shape: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pass 1: centres (n, 2) from a crossing from foreground to cloth on each ray: the outermost one,
    or one nearer the expected radius that is followed by clear cloth (two samples running under
    ``_CLEAR``: one is noise on dim cloth) before more foreground (beyond clear cloth lies no part of
    the ball but a projected ring round it); and the share of rays that found one."""
    n = len(centres)
    m = 28
    unit = ray_directions(n_rays)
    frac = np.linspace(0.15, 1.9, m)
    t = radius[:, None] * frac[None, :]  # (n, m)
    s = _sample_low_xy(score, centres[:, 0, None, None] + unit[None, :, 0, None] * t[:, None, :],
                       centres[:, 1, None, None] + unit[None, :, 1, None] * t[:, None, :], scale)  # (n, K, m)
    fg = s >= 1.0
    next_fg = _next(fg)  # (n, K, m): the first foreground sample at or after each one (m: none)
    calm = s < _CLEAR
    calm[:, :, :-1] &= calm[:, :, 1:]
    cross = fg[:, :, :-1] & ~fg[:, :, 1:]  # (n, K, m - 1)
    cross &= (next_fg[:, :, 1:] == m) | (_next(calm)[:, :, 1:] < next_fg[:, :, 1:])
    has = cross.any(axis=2) & ~fg[:, :, -1]
    j = np.argmin(np.where(cross, np.abs(frac[:-1] + 0.5 * (frac[1] - frac[0]) - 1.0), np.inf), axis=2)
    nn, kk = np.arange(n)[:, None], np.arange(n_rays)[None, :]
    s0, s1 = s[nn, kk, j], s[nn, kk, j + 1]
    a = clip((s0 - 1.0) / np.maximum(s0 - s1, 1e-6), 0.0, 1.0)
    d = (frac[j] + a * (frac[1] - frac[0])) * radius[:, None]
    edge = centres[:, None, :] + unit[None, :, :] * d[..., None]
    w = has.astype(np.float64)
    c, _, _, wf = fit_circles(edge, w, centres, radius, iterations=5, min_scale_px=0.5 * scale, shape=shape)
    ok = w.sum(axis=1) >= 3
    c = np.where(ok[:, None], c, centres)
    return c, (wf > 0.2).mean(axis=1)


def _next(mask: np.ndarray) -> np.ndarray:
    """Along the last axis of ``mask``: the index of the first True at or after each place (its length: none)."""
    n = mask.shape[-1]
    first = np.where(mask, np.arange(n), n)[..., ::-1]
    return np.minimum.accumulate(first, axis=-1)[..., ::-1]


def fine_band(radius: np.ndarray, scale: int) -> np.ndarray:
    """Half the width (px) of the band round the expected edge that the fine pass reads."""
    return 0.22 * np.asarray(radius, dtype=np.float64) + 0.6 * scale + 1.0


def fit_balls(image: np.ndarray, score: np.ndarray, scale: int, centres: np.ndarray, radius: np.ndarray,
              n_rays: int, min_contrast: float | np.ndarray, packed: bool = False, chroma_shift: np.ndarray | None = None,
              shape: np.ndarray | None = None, retry: np.ndarray | None = None) -> BallFits:
    """Both passes for candidates at ``centres`` (n, 2) full-res px with predicted (mean) radii
    ``radius`` and outline shapes ``shape`` (n, 2, 2; None: circles); the fine pass reads the
    picture's colour ``chroma_shift`` px off its brightness (see :func:`vision.fit.sample_rays`).
    ``retry`` (n,) bool: which rough outlines may be fitted again from starts round them (None: all;
    not in a pocket's mouth, whose dark drop holds a ball-sized round patch somewhere).
    ``min_contrast``: the colour step (grey levels) an edge needs to count, one for all or (n,) one
    per candidate (less where the cloth is dimly lit).

    ``packed``: the candidates sit in a cluster of touching balls (a rack), found by their circles'
    edges: the coarse pass is skipped (there is no cloth round them to find an edge against) and an
    edge counts whatever lies beyond it (the next ball)."""
    n = len(centres)
    if n == 0:
        z = np.zeros(0)
        return BallFits(np.zeros((0, 2)), z, z, z, z, z, z, z, np.zeros((0, 19, 3), np.float32), z, z)
    centres = np.asarray(centres, dtype=np.float64)
    min_contrast = np.broadcast_to(np.asarray(min_contrast, dtype=np.float64), (n,))
    c1 = centres if packed else _coarse(score, scale, centres, radius, n_rays, shape)[0]
    # ---- pass 2 on the full picture --------------------------------------------------------
    unit = ray_directions(n_rays)
    e = outline_stretch(shape, unit[None, :, 0], unit[None, :, 1])  # (n, K) the outline's reach per ray, in radii
    reach = np.broadcast_to(radius[:, None] * e, (n, n_rays))
    w = fine_band(radius, scale)  # wide enough for an ellipse's ends (a sixth of a radius off the mean at most)
    m = int(clip(np.ceil(2 * w.max() / 0.75), 8, 40)) | 1  # samples 0.75 px apart: the parabola does the rest

    def fine(sel: np.ndarray, c: np.ndarray) -> tuple:
        rs = sample_rays(image, c, radius[sel] - w[sel], radius[sel] + w[sel], n_rays, m, chroma_shift)
        pts, _, contrast = find_edges(rs, reach[sel] if shape is not None else radius[sel])
        beyond = c[:, None, :] + unit[None, :, :] * (reach[sel] + (w[sel] + 0.5 * scale)[:, None])[..., None]
        cloth_beyond = True if packed else _sample_low(score, beyond, scale) < 1.0
        need = min_contrast[sel, None]
        w0 = ((contrast >= need) & cloth_beyond).astype(np.float64)
        w0 *= clip(contrast / (2 * need), 0.25, 1.0)
        c2, _, res, wf = fit_circles(pts, w0, c, radius[sel], shape=None if shape is None else shape[sel])
        return pts, contrast, c2, res, wf

    def rough(res: np.ndarray, wf: np.ndarray) -> np.ndarray:
        kept = wf > 0.1
        return np.sqrt(np.sum(np.where(kept, res**2, 0.0), axis=1) / np.maximum(kept.sum(axis=1), 1))

    every = np.arange(n)
    pts, contrast, c2, res, wf = fine(every, c1)
    # the coarse pass can be pulled aside by a shadow that the foreground takes in with a dark ball (or
    # by a cue's tip at the ball), and the edges read from there fit an outline round ball and shadow
    # together: a rough outline (edges over a tenth of a radius off it) is tried again from a third of
    # a radius to each side, and the fit with the most edges within a tenth of a radius of its outline
    # is kept when it has more of them and is smoother (a rough fit's robust scale keeps edges far off
    # it: how much of its outline it "keeps" is no measure of it)
    if not packed:
        tol = 0.1 * radius + 0.4

        def near(res: np.ndarray, wf: np.ndarray, sel: np.ndarray) -> np.ndarray:
            return ((wf > 0.1) & (np.abs(res) <= tol[sel, None])).mean(axis=1)

        # the coarse pass gone far from where the candidate was found (pulled by foreground round the
        # ball: its shadow, a cue's tip, a hand): the fine pass from the candidate's place as well
        strayed = every[np.linalg.norm(c1 - centres, axis=1) > radius / 3.0]
        if len(strayed):
            trial = fine(strayed, centres[strayed])
            better = (near(trial[3], trial[4], strayed) > near(res[strayed], wf[strayed], strayed)) & \
                     (rough(trial[3], trial[4]) <= np.maximum(rough(res[strayed], wf[strayed]), tol[strayed]))
            for whole, part in zip((pts, contrast, c2, res, wf), trial):
                whole[strayed[better]] = part[better]
        err = rough(res, wf)
        vis = (wf > 0.1).mean(axis=1)
        bad = every[(err > tol) & (vis >= 0.7) & (True if retry is None else retry)]
        if len(bad):
            steps = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
            sel = np.tile(bad, len(steps))  # every start of every rough fit in one pass
            trial = fine(sel, c2[sel] + np.repeat(steps, len(bad), axis=0) * (radius[sel] / 3.0)[:, None])
            t_err = rough(trial[3], trial[4]).reshape(len(steps), len(bad))
            near_bad = near(res[bad], wf[bad], bad)
            t_near = near(trial[3], trial[4], sel).reshape(len(steps), len(bad))
            best = np.argmax(t_near - 1e-6 * t_err, axis=0)  # the most edges near it; of as many, the smoothest
            cols = np.arange(len(bad))
            better = (t_near[best, cols] > near_bad) & (t_err[best, cols] < 0.6 * err[bad])
            rows = best[better] * len(bad) + cols[better]
            for whole, part in zip((pts, contrast, c2, res, wf), trial):
                whole[bad[better]] = part[rows]
    c3, r3, _, _ = fit_circles(pts, wf, c2, radius, free_radius=True, iterations=4, shape=shape)
    r3 = np.where(np.isfinite(r3) & (r3 > 0), r3, radius)
    kept = wf > 0.1
    visible = kept.mean(axis=1)
    gap = _longest_gap(kept)
    rms = rough(res, wf)
    angle = np.arctan2(unit[:, 1], unit[:, 0])
    wk = np.where(kept, 1.0, 0.0)
    harmonic = (wk * res) @ np.exp(2j * angle)  # an ellipse's outline: r(theta) = R + a cos 2(theta - phi)
    stretch = 2.0 * np.abs(harmonic) / np.maximum(wk.sum(axis=1), 1.0)
    med_contrast = masked_median(contrast, kept)
    # ---- the core: colours for the class, foreground score to tell a ball from a ring ----
    core = sample_core(image, c2, radius)
    cp = c2[:, None, :] + _CORE_UNIT[None, :, :] * radius[:, None, None]
    core_score = np.sort(_sample_low(score, cp, scale), axis=1)[:, len(_CORE_UNIT) // 2]  # the median of an odd count
    return BallFits(c2, r3, np.asarray(radius, dtype=np.float64), visible, gap, med_contrast, rms, stretch, core, core_score,
                    np.array(min_contrast))
