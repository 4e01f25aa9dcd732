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
import numba
import numpy as np

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
    v = np.ascontiguousarray(rs.values, dtype=np.float32)
    n, k = v.shape[:2]
    exp = np.ascontiguousarray(np.broadcast_to(np.asarray(expected, dtype=np.float64).reshape(n, -1), (n, k)))
    dist, contrast = _edges_kernel(v, np.ascontiguousarray(rs.t_px, dtype=np.float64), exp, np.float32(min_share))
    points = rs.centres[:, None, :] + rs.unit[None, :, :] * dist[..., None]
    return points, dist, contrast


@numba.njit(cache=True, nogil=True)
def _edges_kernel(v, t_px, expected, min_share):  # pragma: no cover (compiled)
    """:func:`find_edges` ray by ray: each edge's distance from the centre and its contrast (float32
    arithmetic on the picture's values, as NumPy does on them)."""
    n, k, m, _ = v.shape
    dist = np.empty((n, k))
    contrast = np.empty((n, k), np.float32)
    g = np.empty(m - 2, np.float32)
    for a in range(n):
        step = t_px[a, 1] - t_px[a, 0]
        d = max(1, int(np.round(1.5 / step)))
        for b in range(k):
            top = np.float32(0.0)
            for j in range(m - 2):  # the colour's gradient: its peak at sample j + 1
                x, y, z = v[a, b, j + 2, 0] - v[a, b, j, 0], v[a, b, j + 2, 1] - v[a, b, j, 1], v[a, b, j + 2, 2] - v[a, b, j, 2]
                g[j] = np.sqrt(x * x + y * y + z * z)
                top = max(top, g[j])
            floor = min_share * top
            best, best_off = 0, np.inf
            for j in range(m - 2):  # of the peaks strong enough, the one nearest the expected distance
                if g[j] < floor or (j > 0 and g[j] < g[j - 1]) or (j < m - 3 and g[j] < g[j + 1]):
                    continue
                off = abs(t_px[a, j + 1] - expected[a, b])
                if off < best_off:
                    best, best_off = j, off
            gi, gl, gr = g[best], g[max(best - 1, 0)], g[min(best + 1, m - 3)]
            denom = gl - np.float32(2.0) * gi + gr
            off32 = np.float32(0.0)
            if denom < -1e-6:
                off32 = min(max(np.float32(0.5) * (gl - gr) / denom, np.float32(-0.5)), np.float32(0.5))
            dist[a, b] = t_px[a, 0] + (best + 1 + np.float64(off32)) * step
            lo, hi = min(max(best + 1 - d, 0), m - 1), min(max(best + 1 + d, 0), m - 1)
            x, y, z = v[a, b, lo, 0] - v[a, b, hi, 0], v[a, b, lo, 1] - v[a, b, hi, 1], v[a, b, lo, 2] - v[a, b, hi, 2]
            contrast[a, b] = np.sqrt(x * x + y * y + z * z)
    return dist, contrast


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
    2 x 2 (or 3 x 3) per ball and solved in closed form (for an ellipse, with the circle's derivative
    in the centre: the fixed point is the same); the iterations stop when no ball's fit moves by a
    thousandth of a pixel. Compiled (:func:`_fit_circles_kernel`): a few balls' fit is a few hundred
    array operations on arrays of a few dozen numbers, where NumPy's cost per call, not the
    arithmetic, is the time (about 0.4 ms a call in NumPy, 10-30 us compiled)."""
    c = np.array(centres, dtype=np.float64).reshape(-1, 2)
    r = np.array(radii, dtype=np.float64).reshape(-1)
    pts = np.asarray(points, dtype=np.float64)
    w0 = np.ascontiguousarray(weights, dtype=np.float64)
    has_shape = shape is not None
    a = np.ascontiguousarray(shape, dtype=np.float64) if has_shape else np.zeros((1, 2, 2))
    return _fit_circles_kernel(np.ascontiguousarray(pts[..., 0]), np.ascontiguousarray(pts[..., 1]), w0, c, r,
                               bool(free_radius), int(iterations), float(min_scale_px), a, has_shape)


@numba.njit(cache=True, nogil=True)
def _outline_residuals(px, py, c, r, shape, has_shape, i, ux, uy, e, res):  # pragma: no cover (compiled)
    """Row ``i`` of the residuals ``res`` of the points from ball ``i``'s outline, with the unit
    directions ``ux``, ``uy`` from its centre and the outline's reach ``e`` that way
    (:func:`outline_stretch`)."""
    for j in range(px.shape[1]):
        dx, dy = px[i, j] - c[i, 0], py[i, j] - c[i, 1]
        dist = np.sqrt(dx * dx + dy * dy)
        inv = 1.0 / max(dist, 1e-9)
        ux[j], uy[j] = dx * inv, dy * inv
        e[j] = 1.0
        if has_shape:
            q = shape[i, 0, 0] * ux[j] * ux[j] + 2.0 * shape[i, 0, 1] * ux[j] * uy[j] + shape[i, 1, 1] * uy[j] * uy[j]
            e[j] = 1.0 / np.sqrt(max(q, 1e-6))
        res[i, j] = dist - r[i] * e[j]


@numba.njit(cache=True, nogil=True)
def _fit_circles_kernel(px, py, w0, c, r, free_radius, iterations, min_scale_px, shape, has_shape):  # pragma: no cover (compiled)
    """:func:`fit_circles` ball by ball and point by point; ``c`` and ``r`` are updated in place."""
    n, k = px.shape
    w = w0.copy()
    res = np.zeros((n, k))
    ux, uy, e, buf = np.empty(k), np.empty(k), np.empty(k), np.empty(k)
    for it in range(iterations):
        moved = 0.0
        for i in range(n):
            _outline_residuals(px, py, c, r, shape, has_shape, i, ux, uy, e, res)
            if it > 0:  # Tukey's biweight, scaled by 1.4826 median absolute residuals of the points kept a priori
                m = 0
                for j in range(k):
                    if w0[i, j] > 0:
                        buf[m] = abs(res[i, j])
                        m += 1
                med = min_scale_px
                if m > 0:
                    srt = np.sort(buf[:m])
                    med = 0.5 * (srt[(m - 1) // 2] + srt[m // 2])
                cut = 4.685 * max(1.4826 * med, min_scale_px)
                for j in range(k):
                    z = res[i, j] / cut
                    w[i, j] = w0[i, j] * (1.0 - z * z) ** 2 if abs(z) < 1.0 else 0.0
            # Gauss-Newton: residual(c + dc, r + dr) ~ res - u . dc - e dr
            s00 = s01 = s11 = s02 = s12 = s22 = b0 = b1 = b2 = 0.0
            for j in range(k):
                wx, wy = w[i, j] * ux[j], w[i, j] * uy[j]
                s00 += wx * ux[j]
                s01 += wx * uy[j]
                s11 += wy * uy[j]
                b0 += wx * res[i, j]
                b1 += wy * res[i, j]
                if free_radius:
                    we = w[i, j] * e[j]
                    s02 += we * ux[j]
                    s12 += we * uy[j]
                    s22 += we * e[j]
                    b2 += we * res[i, j]
            if free_radius:  # Cramer's rule on the symmetric 3 x 3
                m0, m1, m2 = s11 * s22 - s12 * s12, s01 * s22 - s12 * s02, s01 * s12 - s11 * s02
                det = s00 * m0 - s01 * m1 + s02 * m2
                if abs(det) > 1e-6:
                    d0 = (b0 * m0 - s01 * (b1 * s22 - s12 * b2) + s02 * (b1 * s12 - s11 * b2)) / det
                    d1 = (s00 * (b1 * s22 - s12 * b2) - b0 * m1 + s02 * (s01 * b2 - b1 * s02)) / det
                    d2 = (s00 * (s11 * b2 - b1 * s12) - s01 * (s01 * b2 - b1 * s02) + b0 * m2) / det
                    c[i, 0] += d0
                    c[i, 1] += d1
                    r[i] += d2
                    moved = max(moved, abs(d0), abs(d1), abs(d2))
            else:
                det = s00 * s11 - s01 * s01
                if det > 1e-6:
                    d0, d1 = (s11 * b0 - s01 * b1) / det, (s00 * b1 - s01 * b0) / det
                    c[i, 0] += d0
                    c[i, 1] += d1
                    moved = max(moved, abs(d0), abs(d1))
        if moved < 1e-3:
            break
    for i in range(n):  # the residuals of the final fit
        _outline_residuals(px, py, c, r, shape, has_shape, i, ux, uy, e, res)
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
