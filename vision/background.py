"""The cloth background: what the table looks like with nothing on it, kept at low resolution.

A pixel is *foreground* when it is not the cloth, a marking, or a shadow on them. A shadow darkens the
cloth without changing its hue, so the test splits the difference between the frame ``F`` and the
background ``B`` into a brightness ratio ``k = F.B / B.B`` and the colour left over, ``|F - k B| /
|B|``: a pixel is foreground when the colour left over exceeds a tolerance (at least a few times the
cloth's measured noise), or when it is brighter than the cloth by a margin, or darker than any
shadow. The frame's overall brightness (a lamp's mains flicker) is measured on the cloth and divided
out first.

The background follows the room's light: pixels that look like cloth move towards the frame at a
fixed rate, and nothing else does, so a ball that stands still for minutes is never absorbed.
Something else that stands still (a patch of cloth uncovered after an arm lay on the table when the
video started, chalk) is absorbed after ``absorb_after_s``; cloth uncovered beside what is
certainly cloth is absorbed as soon as it is seen (a periodic check against a median-filtered
frame, which no ball survives).
"""

from __future__ import annotations

import numpy as np
import cv2

from calibration.numeric import clip, median
from vision.config import DetectorConfig

__all__ = ["ClothBackground", "brightness_and_hue", "change_score", "channel_sum"]

_DARK = 20.0  # grey levels: below this a background colour's hue and brightness ratio are noise


def channel_sum(img: np.ndarray) -> np.ndarray:
    """Sum of the three channels of a uint8 picture (h, w, 3), saturating at 255: the same sums as
    ``cv2.transform`` with a row of ones gives, by two saturating adds (that call's uint8 path is the
    slow one)."""
    b, g, r = cv2.split(img)
    return cv2.add(cv2.add(b, g), r)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel dot product of two (h, w, 3) float32 pictures."""
    return cv2.transform(cv2.multiply(a, b), np.ones((1, 3), np.float32))


def brightness_and_hue(frame: np.ndarray, ref: np.ndarray, ref_sq: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How a picture (h, w, 3) differs from a reference (h, w, 3, float32): the brightness ratio
    ``k = F.B / B.B`` and the colour left over, ``|F - k B| / |B|`` (both (h, w) float32). A dark
    reference (a pocket) has no reliable hue or ratio: both are pulled towards "the same".
    ``ref_sq`` is ``B.B`` when already known."""
    f = frame.astype(np.float32)
    bb = _dot(ref, ref) if ref_sq is None else ref_sq
    fb = _dot(f, ref)
    ff = _dot(f, f)
    reg = bb + _DARK**2
    k = fb + _DARK**2
    k /= reg
    left = fb * fb  # the same sums as written out in the docstring, in place: no picture-sized temporaries
    left /= np.maximum(bb, 1.0)
    np.subtract(ff, left, out=left)
    np.maximum(left, 0.0, out=left)
    left /= reg
    return k, cv2.sqrt(left)


def change_score(k: np.ndarray, chroma: np.ndarray, tolerance: float, cfg: DetectorConfig) -> np.ndarray:
    """Foreground score from :func:`brightness_and_hue` (the ratio already divided by the frame's
    gain): above 1 when the hue strays beyond ``tolerance``, or the pixel is brighter than the cloth
    by a margin, or darker than any shadow."""
    s = chroma * (1.0 / tolerance)
    np.maximum(s, (k - 1.0) * (1.0 / (cfg.brighter_than_cloth - 1.0)), out=s)
    np.maximum(s, (1.0 - k) * (1.0 / (1.0 - cfg.shadow_darkest)), out=s)
    return s


class ClothBackground:
    """The background model of the low-resolution picture inside ``roi`` (bool (h, w))."""

    def __init__(self, config: DetectorConfig, roi: np.ndarray, ball_radius_low: float, cloth: np.ndarray | None = None):
        self.cfg = config
        self.roi = roi
        self.cloth = roi if cloth is None else cloth  # the playing surface alone (bool), for the median estimate
        self._cloth_u8 = self.cloth.astype(np.uint8)
        self._cloth_count = int(np.count_nonzero(self.cloth))
        self.roi_u8 = roi.astype(np.uint8)
        self.roi_count = int(roi.sum())
        self.r_low = float(ball_radius_low)
        self.bg: np.ndarray | None = None  # (h, w, 3) float32
        self._bb: np.ndarray | None = None  # (h, w) its squared norm
        self._light: np.ndarray | None = None  # (h, w) the cloth's brightness, smoothed (made when asked)
        self._ratio: np.ndarray | None = None  # (h, w) the last frame's brightness against it
        self.gain = 1.0
        self.noise = 0.02  # median relative chroma deviation of the cloth (smoothed over frames)
        self.still = np.zeros(roi.shape, np.uint16)  # frames a foreground, non-ball pixel has not changed
        self._prev: np.ndarray | None = None
        ys, xs = np.nonzero(roi)
        step = max(1, len(ys) // 6000)
        self._sample = (ys[::step], xs[::step])  # pixels where the gain and the noise are measured

    @property
    def ready(self) -> bool:
        return self.bg is not None

    def median_estimate(self, low: np.ndarray, balls_wide: float = 3.0, box: tuple[slice, slice] | None = None) -> np.ndarray:
        """The frame with anything smaller than ``balls_wide`` ball diameters filtered out (float32).
        Beyond the playing surface the frame is first replaced by the cloth's median colour, so that
        a dark cushion does not bleed into the estimate of the cloth beside it.

        With ``box`` (row and column slices of ``low``), only that part of the estimate is made (the
        same values as the whole one's there): the filter reads the picture round the box as far as
        its half-width, and no further."""
        k = max(5, min(int(2 * round(balls_wide * self.r_low) + 1), 255))
        h, w = low.shape[:2]
        (y0, y1), (x0, x1) = ((0, h), (0, w)) if box is None else (box[0].indices(h)[:2], box[1].indices(w)[:2])
        r = k // 2
        ry0, rx0 = max(0, y0 - r), max(0, x0 - r)
        read = (slice(ry0, min(h, y1 + r)), slice(rx0, min(w, x1 + r)))
        src = low[read].copy()
        if self._cloth_count:
            src[~self.cloth[read]] = self.cloth_median(low)
        return cv2.medianBlur(src, k)[y0 - ry0:y1 - ry0, x0 - rx0:x1 - rx0].astype(np.float32)

    def cloth_median(self, low: np.ndarray) -> np.ndarray:
        """The median colour (3,) uint8 of the playing surface in ``low``: ``np.median`` over its
        pixels, truncated to whole grey levels, read off each channel's histogram (a sort of every
        pixel would cost ten times more)."""
        out = np.empty(3, np.uint8)
        n = self._cloth_count
        for c in range(3):
            cum = np.cumsum(cv2.calcHist([low], [c], self._cloth_u8, [256], [0, 256]).ravel())
            lo = int(np.searchsorted(cum, (n - 1) // 2, side="right"))  # the ((n - 1) // 2)-th value, from 0
            hi = int(np.searchsorted(cum, n // 2, side="right"))
            out[c] = (lo + hi) // 2  # np.median's mean of the two middle values, truncated by astype(uint8)
        return out

    def start(self, low: np.ndarray, hide: np.ndarray | None = None, cloth: np.ndarray | None = None) -> None:
        """Begin from ``low`` (uint8), with the pixels of ``hide`` (bool: balls found by the caller)
        replaced by ``cloth`` (float32, the frame with the balls filtered out)."""
        f = low.astype(np.float32)
        if hide is not None and hide.any():
            f[hide] = (self.median_estimate(low) if cloth is None else cloth)[hide]
        self._set(f)
        self.gain = 1.0
        self.still[:] = 0
        self._prev = low.copy()

    def _set(self, bg: np.ndarray) -> None:
        self.bg = bg
        self._bb = _dot(bg, bg)
        self._light = None

    def light(self, yx: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """How brightly the cloth is lit at low-res pixels ``yx`` (rows, cols): the background's
        brightness averaged over the cloth within a few balls (a pocket, a marking or a cushion
        beside a ball does not count), in grey levels."""
        f = max(1, int(self.r_low))  # the light varies over several balls: a coarse map will do
        if self._light is None:
            h, w = self.cloth.shape
            small = (max(1, w // f), max(1, h // f))
            m = cv2.resize(self.cloth.astype(np.float32), small, interpolation=cv2.INTER_AREA)
            num = cv2.resize(np.sqrt(self._bb) * self.cloth, small, interpolation=cv2.INTER_AREA)
            sigma = 3.0 * self.r_low / f
            self._light = cv2.GaussianBlur(num, (0, 0), sigma) / np.maximum(cv2.GaussianBlur(m, (0, 0), sigma), 1e-3)
        ys = clip(np.asarray(yx[0]) // f, 0, self._light.shape[0] - 1)
        xs = clip(np.asarray(yx[1]) // f, 0, self._light.shape[1] - 1)
        return self._light[ys, xs] * self.gain

    @property
    def tolerance(self) -> float:
        """The colour change (relative to the cloth's brightness) beyond which a pixel is foreground."""
        return max(self.cfg.chroma_tolerance, self.cfg.noise_factor * self.noise)

    def score(self, low: np.ndarray, against: np.ndarray | None = None, measure: bool = True,
              window: tuple[slice, slice] | None = None) -> np.ndarray:
        """Foreground score (h, w) float32 of the frame ``low``: above 1 is foreground (of the
        ``window`` of it only, when given).

        ``against`` replaces the background (e.g. a median estimate); ``measure`` updates the gain
        and noise estimates from the cloth pixels (only for the model's own background)."""
        own = against is None
        win = window or (slice(None), slice(None))
        b = self.bg if own else against
        k, chroma = brightness_and_hue(low[win], b[win], self._bb[win] if own else None)
        if measure and own:
            ys, xs = self._sample
            inside = np.ones(len(ys), bool)
            if window is not None:
                (y0, y1), (x0, x1) = (window[0].indices(self.roi.shape[0])[:2], window[1].indices(self.roi.shape[1])[:2])
                inside = (ys >= y0) & (ys < y1) & (xs >= x0) & (xs < x1)
                ys, xs = ys[inside] - y0, xs[inside] - x0
            ks = k[ys, xs]
            ok = (ks > 0.6) & (ks < 1.4)
            if ok.sum() > 50:
                self.gain = float(median(ks[ok]))
            quiet = chroma[ys, xs][ok & (np.abs(ks / max(self.gain, 1e-3) - 1.0) < 0.15)]
            if len(quiet) > 50:
                self.noise = 0.9 * self.noise + 0.1 * float(median(quiet))
        if own:
            k *= 1.0 / max(self.gain, 1e-3)
            self._ratio = k
        s = change_score(k, chroma, self.tolerance, self.cfg)
        cv2.multiply(s, self.roi[win].view(np.uint8), dst=s, dtype=cv2.CV_32F)  # 0 beyond the table
        return s

    def update(self, low: np.ndarray, score: np.ndarray, protect: np.ndarray, dt_s: float,
               window: tuple[slice, slice] | None = None) -> None:
        """Let the cloth pixels follow the light; absorb what has stood still long enough and is not
        protected (``protect``: round the balls, known or remembered, and their shadows). With
        ``window``, only there (``protect`` is then the window's; the brightness ratio is the last
        :meth:`score`'s, of the same window)."""
        win = window or (slice(None), slice(None))
        lw, sw, roi = low[win], score[win], self.roi[win]
        # lit cloth only: a shadow (an arm's, a cue's) learnt would leave a bright ghost when it goes
        cloth = ((sw < 0.5) & (self._ratio > 0.85) & (self._ratio < 1.15) & ~protect & roi).astype(np.uint8)
        f = lw.astype(np.float32)
        bgw = self.bg[win]
        if self.gain > 0:
            cv2.accumulateWeighted(f * (1.0 / self.gain), bgw, self.cfg.cloth_rate, cloth)
        moved = channel_sum(cv2.absdiff(lw, self._prev[win])) > 24
        candidate = (sw >= 1.0) & ~protect & roi & ~moved
        still = self.still[win]
        np.add(still, 1, out=still, where=candidate)  # frames it has stood still, up to 65000; 0 when not
        np.minimum(still, 65000, out=still)
        still *= candidate
        frames = max(1, int(round(self.cfg.absorb_after_s / max(dt_s, 1e-3))))
        ripe = still >= frames
        if ripe.any():
            bgw[ripe] = f[ripe] / max(self.gain, 1e-3)
            still[ripe] = 0
        self._bb[win] = _dot(bgw, bgw)  # the light map (:meth:`light`) is refreshed by absorb_uncovered
        self._prev[win] = lw

    def absorb_uncovered(self, low: np.ndarray, score: np.ndarray, protect: np.ndarray) -> int:
        """Cloth that the background does not know (uncovered since the start) but that matches the
        median-filtered frame: take it now. Returns the number of pixels absorbed.

        Only foreground that nothing protects can be taken: the median-filtered frame is made and
        compared over the box round those pixels alone (what it reads is the same as a whole frame's
        filter reads there, so the pixels taken are the same)."""
        cand = ((score >= 1.0) & ~protect & self.roi).astype(np.uint8)
        x, y, w, h = cv2.boundingRect(cand)
        self._light = None  # the light map follows what :meth:`update` learnt since
        if w == 0:
            return 0
        box = (slice(y, y + h), slice(x, x + w))
        med = self.median_estimate(low, box=box)
        s_med = change_score(*brightness_and_hue(low[box], med), self.tolerance, self.cfg)
        take = cand[box].astype(bool) & (s_med < 0.5)
        n = int(np.count_nonzero(take))
        if n:
            bgw = self.bg[box]
            bgw[take] = low[box][take].astype(np.float32) / max(self.gain, 1e-3)
            self._bb[box] = _dot(bgw, bgw)
        return n

    def warp(self, matrix: np.ndarray) -> None:
        """Follow a camera that moved a little: ``matrix`` (3, 3) maps old low-res pixels to new."""
        if self.bg is None:
            return
        h, w = self.roi.shape
        self._set(cv2.warpPerspective(self.bg, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE))
        self.still[:] = 0
        self._prev = cv2.warpPerspective(self._prev, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
