"""Sub-pixel ball outlines: edges found along rays, and circles fitted to them.

For each ball candidate, ``n_rays`` rays leave its estimated centre; along each the picture is read
(one ``cv2.remap`` for every ray of every ball) from inside the ball to beyond its edge. The edge on a
ray is where the colour changes fastest near where the edge is expected (the silhouette is sharp, a
shadow's penumbra and a ball's shading are soft), located to a fraction of a pixel by a parabola
through the gradient's peak. A
circle is then fitted to the edge points by iteratively reweighted Gauss-Newton, with the radius the
calibration predicts held fixed (three points of a short arc cannot pin a free radius down; a fixed
one can) or left free (a jumping ball looks larger), Tukey's biweight discarding edges that belong to a
touching ball, a cue or a hand.

Everything is vectorised over balls and rays: the cost is a remap of a few thousand pixels and
array arithmetic, whatever the number of balls. (A hand-written Gauss-Newton, not
``scipy.optimize.least_squares``: the latter costs about a millisecond per call, per ball.)
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.numeric import clip

__all__ = ["RaySamples", "sample_rays", "chroma_offsets", "find_edges", "fit_circles", "outline_stretch", "masked_median", "ray_directions"]


@dataclass(frozen=True, slots=True, eq=False)
class RaySamples:
    """The picture read along rays: ``values`` (N, K, M, 3) float32 at distances ``t_px`` (N, M)
    from the centres (N, 2) along directions ``unit`` (K, 2)."""

    centres: np.ndarray
    unit: np.ndarray
    t_px: np.ndarray
    values: np.ndarray


def ray_directions(n_rays: int) -> np.ndarray:
    a = (np.arange(n_rays) + 0.5) * (2 * np.pi / n_rays)
    return np.stack([np.cos(a), np.sin(a)], -1)


def sample_rays(image: np.ndarray, centres: np.ndarray, r_in: np.ndarray, r_out: np.ndarray,
                n_rays: int, n_samples: int, chroma_shift: np.ndarray | None = None) -> RaySamples:
    """Read ``image`` (H, W, 3) along ``n_rays`` rays from each centre (N, 2), at ``n_samples``
    evenly spaced distances from ``r_in`` (N,) to ``r_out`` (N,) px (bilinear, border replicated).

    ``chroma_shift`` (2,) px: where the picture's colour (as against its brightness) of a point
    really is, relative to the point: a 4:2:0 video's colour planes have half the resolution, and an
    encoder and a decoder that site them differently shift every colour edge by up to half a pixel
    against the brightness edges (:func:`chroma_offsets` measures it). The brightness is read at the
    point and the colour at the point plus the shift."""
    n = len(centres)
    unit = ray_directions(n_rays)
    frac = np.linspace(0.0, 1.0, n_samples)
    t = r_in[:, None] + (r_out - r_in)[:, None] * frac[None, :]  # (N, M)
    c = np.asarray(centres, dtype=np.float64)
    # the points (N, K, M) centre + unit * t, one coordinate at a time
    mx = (c[:, 0, None, None] + unit[None, :, 0, None] * t[:, None, :]).reshape(n * n_rays, n_samples).astype(np.float32)
    my = (c[:, 1, None, None] + unit[None, :, 1, None] * t[:, None, :]).reshape(n * n_rays, n_samples).astype(np.float32)
    vals = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    if chroma_shift is not None and np.any(chroma_shift):
        moved = cv2.remap(image, mx + np.float32(chroma_shift[0]), my + np.float32(chroma_shift[1]), cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        # a colour's brightness adds equally to B, G and R (the YCbCr transform): the colour read at the
        # shifted point, with its brightness replaced by the point's own
        vals = moved + (vals @ _LUMA - moved @ _LUMA)[..., None]
    vals = vals.reshape(n, n_rays, n_samples, -1)
    return RaySamples(np.asarray(centres, dtype=np.float64), unit, t, vals)


_LUMA = np.array([0.114, 0.587, 0.299], np.float32)  # BGR -> brightness (ITU-R BT.601, as 4:2:0 video is coded)


def chroma_offsets(rs: RaySamples, expected: np.ndarray, min_contrast: float) -> tuple[np.ndarray, np.ndarray]:
    """How far the colour edges of balls lie from their brightness edges along each ray: the edges
    of ``rs`` (read with no chroma shift) found on the brightness alone and on the colour alone.
    Returns ``diff`` (n, K) px, the colour edge's distance from the centre less the brightness
    edge's, and ``ok`` (n, K), where both steps are at least ``min_contrast`` grey levels and the two
    edges are within two pixels of each other (the same edge)."""
    luma = rs.values @ _LUMA
    grey = np.repeat(luma[..., None], 3, axis=-1)
    _, d_luma, c_luma = find_edges(RaySamples(rs.centres, rs.unit, rs.t_px, grey), expected)
    _, d_col, c_col = find_edges(RaySamples(rs.centres, rs.unit, rs.t_px, rs.values - grey), expected)
    diff = d_col - d_luma
    return diff, (c_luma >= min_contrast) & (c_col >= min_contrast) & (np.abs(diff) <= 2.0)


def find_edges(rs: RaySamples, expected: np.ndarray, min_share: float = 0.4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ball's edge on each ray: of the colour steps (peaks of the colour gradient) at least
    ``min_share`` as strong as the ray's strongest, the one nearest the ``expected`` distance (n,) px
    (or (n, K), one per ray: an outline that is an ellipse).
    The strongest alone would not do: a lamp's highlight, or the step from a green ball's lit face
    to its dark limb, can be stronger than the silhouette against the cloth; a projected ring outside
    a ball is a step too. The peak is located to a fraction of a sample by a parabola.

    Returns ``points`` (n, K, 2) edge positions in the picture, ``dist`` (n, K) their distance from
    the centre and ``contrast`` (n, K) the colour step across the edge (grey levels: the norm of the
    difference of the colours 1.5 px inside and outside it)."""
    v = rs.values
    n, k, m, _ = v.shape
    step = rs.t_px[:, 1] - rs.t_px[:, 0]
    g = _norm3(v[:, :, 2:, :] - v[:, :, :-2, :])  # (n, K, m-2): peak at sample i + 1
    peak = g >= min_share * g.max(axis=2, keepdims=True)
    peak[:, :, 1:] &= g[:, :, 1:] >= g[:, :, :-1]  # no lower than either neighbour (the ends have one)
    peak[:, :, :-1] &= g[:, :, :-1] >= g[:, :, 1:]
    if expected.ndim == 1:
        off_expected = np.abs(rs.t_px[:, 1:-1] - expected[:, None])[:, None, :]  # (n, 1, m-2)
    else:
        off_expected = np.abs(rs.t_px[:, None, 1:-1] - expected[:, :, None])  # (n, K, m-2)
    i = np.argmin(np.where(peak, off_expected, np.inf), axis=2)
    nn, kk = np.arange(n)[:, None], np.arange(k)[None, :]
    gi = g[nn, kk, i]
    gl = g[nn, kk, np.maximum(i - 1, 0)]
    gr = g[nn, kk, np.minimum(i + 1, m - 3)]
    denom = gl - 2 * gi + gr
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.where(denom < -1e-6, 0.5 * (gl - gr) / denom, 0.0)
    off = clip(off, -0.5, 0.5)
    dist = rs.t_px[:, :1] + (i + 1 + off) * step[:, None]
    points = rs.centres[:, None, :] + rs.unit[None, :, :] * dist[..., None]
    d = np.maximum(1, np.round(1.5 / step)).astype(int)[:, None]
    lo = clip(i + 1 - d, 0, m - 1)
    hi = clip(i + 1 + d, 0, m - 1)
    return points, dist, _norm3(v[nn, kk, lo] - v[nn, kk, hi])


def _norm3(a: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(a, axis=-1)`` of (..., 3) vectors, bit for bit (the squares summed in the
    same order), without its reduction's overhead."""
    x, y, z = a[..., 0], a[..., 1], a[..., 2]
    return np.sqrt(x * x + y * y + z * z)


def outline_stretch(shape: np.ndarray | None, ux: np.ndarray, uy: np.ndarray) -> np.ndarray | float:
    """How far an outline of shape ``shape`` (N, 2, 2) (:meth:`vision.geometry.TableView.shape_at_px`)
    reaches in the directions ``(ux, uy)`` (N, K), in mean radii: ``1 / sqrt(u^T A u)``; 1 for
    circles (``shape`` None)."""
    if shape is None:
        return 1.0
    a00, a01, a11 = shape[:, 0, 0, None], shape[:, 0, 1, None], shape[:, 1, 1, None]
    return 1.0 / np.sqrt(np.maximum(a00 * ux * ux + 2.0 * a01 * ux * uy + a11 * uy * uy, 1e-6))


def fit_circles(points: np.ndarray, weights: np.ndarray, centres: np.ndarray, radii: np.ndarray,
                free_radius: bool = False, iterations: int = 5, min_scale_px: float = 0.35,
                shape: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Robust circle fits, one per ball: edge ``points`` (N, K, 2) with prior ``weights`` (N, K)
    (0 drops a point), starting from ``centres`` (N, 2); the radius stays at ``radii`` (N,) unless
    ``free_radius``. With ``shape`` (N, 2, 2), the outlines are the ellipses of that shape and mean
    radius ``radii`` (:func:`outline_stretch`; a ball's off the camera's axis), their centres fitted
    and (``free_radius``) their size.

    Returns ``centres`` (N, 2), ``radii`` (N,), ``residual`` (N, K) signed distances of the points
    from the fitted outlines, and ``w`` (N, K) the final weights (prior times Tukey's biweight with a
    scale of 4.7 robust standard deviations, at least ``min_scale_px``). The normal equations are
    2 x 2 (or 3 x 3) per ball, their sums one batched product of the rows (u_x, u_y[, e], residual)
    with themselves, and solved in closed form, all balls at once (for an ellipse, with the circle's
    derivative in the centre: the fixed point is the same). A few balls at a time is the usual case,
    where numpy's per-call overhead is the cost: hence one product for all the sums."""
    c = np.asarray(centres, dtype=np.float64).copy()
    r = np.asarray(radii, dtype=np.float64).copy()
    w0 = np.asarray(weights, dtype=np.float64)
    n, k = w0.shape
    w = w0
    px, py = points[..., 0], points[..., 1]
    scale = _RobustScale(w0 > 0, min_scale_px)
    rows = np.empty((n, 4 if free_radius else 3, k))  # per ball: u_x, u_y, (e,) residual
    ux, uy, res = rows[:, 0], rows[:, 1], rows[:, -1]
    e = rows[:, 2] if free_radius else None
    for it in range(iterations):
        dx, dy = px - c[:, :1], py - c[:, 1:]
        dist = np.sqrt(dx * dx + dy * dy)
        inv = 1.0 / np.maximum(dist, 1e-9)
        np.multiply(dx, inv, out=ux)
        np.multiply(dy, inv, out=uy)
        stretch = outline_stretch(shape, ux, uy)
        if free_radius:
            e[:] = stretch
        np.subtract(dist, r[:, None] * stretch, out=res)
        if it > 0:
            z = res / (4.685 * scale(res))[:, None]
            z *= z
            np.subtract(1.0, z, out=z)
            np.maximum(z, 0.0, out=z)
            z *= z
            w = w0 * z  # Tukey's biweight
        g = np.matmul(rows * w[:, None, :], rows.transpose(0, 2, 1))  # (N, R, R): the weighted sums
        if free_radius:
            # unknowns (dcx, dcy, dr): residual(c + dc, r + dr) ~ res - u . dc - e dr; Cramer's rule
            m00, m01, m02, m11, m12, m22 = g[:, 0, 0], g[:, 0, 1], g[:, 0, 2], g[:, 1, 1], g[:, 1, 2], g[:, 2, 2]
            b0, b1, b2 = g[:, 0, 3], g[:, 1, 3], g[:, 2, 3]
            c00, c01, c02 = m11 * m22 - m12 * m12, m02 * m12 - m01 * m22, m01 * m12 - m02 * m11  # cofactors
            c11, c12, c22 = m00 * m22 - m02 * m02, m01 * m02 - m00 * m12, m00 * m11 - m01 * m01
            det = m00 * c00 + m01 * c01 + m02 * c02
            ok = np.abs(det) > 1e-6
            delta = np.empty((n, 3))
            delta[:, 0] = c00 * b0 + c01 * b1 + c02 * b2
            delta[:, 1] = c01 * b0 + c11 * b1 + c12 * b2
            delta[:, 2] = c02 * b0 + c12 * b1 + c22 * b2
            delta /= np.where(ok, det, 1.0)[:, None]
            delta[~ok] = 0.0
            r += delta[:, 2]
            c += delta[:, :2]
            moved = np.abs(delta).max(initial=0.0)
        else:
            a_00, a_01, a_11, b0, b1 = g[:, 0, 0], g[:, 0, 1], g[:, 1, 1], g[:, 0, 2], g[:, 1, 2]
            det = a_00 * a_11 - a_01 * a_01
            ok = det > 1e-6
            d = np.empty((n, 2))
            d[:, 0] = a_11 * b0 - a_01 * b1
            d[:, 1] = a_00 * b1 - a_01 * b0
            d /= np.where(ok, det, 1.0)[:, None]
            d[~ok] = 0.0
            c += d
            moved = np.abs(d).max(initial=0.0)
        if moved < 1e-3:
            break
    dx, dy = px - c[:, :1], py - c[:, 1:]
    dist = np.sqrt(dx * dx + dy * dy)
    inv = 1.0 / np.maximum(dist, 1e-9)
    res = dist - r[:, None] * outline_stretch(shape, dx * inv, dy * inv)
    return c, r, res, w


def masked_median(values: np.ndarray, mask: np.ndarray, default: float = 0.0) -> np.ndarray:
    """Median of each row of ``values`` (n, K) over the entries where ``mask`` is True (``default``
    for a row with none). Sorting K ~ 32 values per row is far cheaper than ``np.nanmedian``."""
    return _MaskedMedian(mask)(values, default)


class _MaskedMedian:
    """:func:`masked_median` over one mask, for many arrays of values: where the middle entries of
    each row's sorted values lie is worked out once."""

    def __init__(self, mask: np.ndarray):
        self.mask = mask
        count = mask.sum(axis=1)
        self.some = count > 0
        self.rows = np.arange(len(mask))
        self.lo = np.maximum((count - 1) // 2, 0)
        self.hi = np.maximum(count // 2, 0)

    def __call__(self, values: np.ndarray, default: float) -> np.ndarray:
        a = np.where(self.mask, values, np.inf)
        a.sort(axis=1)
        return np.where(self.some, 0.5 * (a[self.rows, self.lo] + a[self.rows, self.hi]), default)


class _RobustScale:
    """1.4826 times the median absolute residual of the points with weight (``mask`` (n, K)), per
    ball, at least ``floor``."""

    def __init__(self, mask: np.ndarray, floor: float):
        self.median, self.floor = _MaskedMedian(mask), floor

    def __call__(self, res: np.ndarray) -> np.ndarray:
        return np.maximum(1.4826 * self.median(np.abs(res), self.floor), self.floor)
