"""Colour classes: which of the profile's ball colours a ball is, with probabilities.

A ball's colour is the median of its core (the centre and two rings inside 0.6 of its radius, less
the brightest fifth: the lamps' highlights), divided by the local light (the cloth's brightness
beside it against the table's median), in log space, where a lamp's brightness or a camera's white
balance is a shift. Each class is a Gaussian there.

It starts from the profile's colours seen through this table's light: the observed cloth against the
profile's cloth colour gives a per-channel gain (a neutral gain when the profile's cloth colour is
plainly not this table's), with a broad spread in brightness and a narrower one in hue. Then it learns from the balls seen clearly (whole
outline, at rest): each class keeps the count, mean and scatter of the balls it was given, blended
with its prior as two pseudo-balls, so a class with no ball yet keeps its broad prior while a class
seen a few times becomes as sharp as its balls are. The first frame with most of the set in view
(the "opening layout") assigns those balls by EM with the profile's class counts as priors; after
that, balls seen confidently as a class join it, and old ones fade (``colour_memory`` balls), so the
model follows the room's light.

An uncertain ball is reported as such: its label is "" when no class reaches ``min_class_prob`` or
its colour is far from every class (an 8-ball on a ficha table).
"""

from __future__ import annotations

import numpy as np

from calibration.numeric import clip
from calibration.table import TableProfile
from vision.config import DetectorConfig

__all__ = ["ColourModel", "summarise_colours", "FAR", "FOREIGN"]

_OFFSET = 20.0  # grey levels added before the log: a dark channel (ambient light, a bounce off the cloth) keeps a bounded spread
_GREY = np.ones(3) / np.sqrt(3.0)


def _spread(light_sd: float, hue_sd: float) -> np.ndarray:
    """A covariance (3, 3) in log colour: ``light_sd`` along grey (all channels alike: how bright),
    ``hue_sd`` across it."""
    return hue_sd**2 * np.eye(3) + (light_sd**2 - hue_sd**2) * np.outer(_GREY, _GREY)


_PRIOR_COV = _spread(0.25, 0.08)  # the profile's colours: brightness a guess, hue known better (the cloth's white balance)
_MIN_COV = _spread(0.12, 0.03)  # added to a learnt class: the light on a ball varies over the table more than a few balls show
_PRIOR_COUNT = 2.0  # the prior's spread weighs as much as this many balls
_PRIOR_MEAN_COUNT = 0.25  # its colour, less: a ball seen is better evidence of a class's colour than the profile
FAR = 30.0  # squared Mahalanobis distance (3 dof) beyond which a colour belongs to no class: label uncertain
FOREIGN = 60.0  # beyond this, part of an outline is not taken for a ball at all (skin, a sleeve)


def summarise_colours(samples: np.ndarray, drop_brightest: float = 0.2) -> np.ndarray:
    """Robust colour of each ball from core samples (N, S, 3): per channel median of the samples left
    after dropping the brightest ``drop_brightest`` share (by their sum)."""
    n, s, _ = samples.shape
    if s == 0:
        return np.zeros((n, 3), np.float32)
    keep = max(1, int(round(s * (1 - drop_brightest))))
    order = np.argsort(samples.sum(axis=2), axis=1)[:, :keep]
    kept = np.sort(samples[np.arange(n)[:, None], order], axis=1)  # (n, keep, 3), each channel sorted
    if keep % 2:
        return kept[:, keep // 2]  # np.median's, read off the sorted samples
    return 0.5 * (kept[:, keep // 2 - 1] + kept[:, keep // 2])


class ColourModel:
    """Gaussian colour classes of one table's balls."""

    def __init__(self, profile: TableProfile, config: DetectorConfig):
        self.cfg = config
        names: list[str] = []
        rgb: list[tuple[int, int, int]] = []
        counts: list[int] = []
        for b in profile.balls:
            if b.colour in names:
                counts[names.index(b.colour)] += 1
            else:
                names.append(b.colour)
                rgb.append(b.rgb)
                counts.append(1)
        self.classes = tuple(names)
        k = len(names)
        self.counts = np.array(counts, dtype=np.float64)
        self.log_prior = np.log(self.counts / self.counts.sum())
        self.profile_bgr = np.array([[c[2], c[1], c[0]] for c in rgb], dtype=np.float64)
        self.cloth_bgr = np.array(profile.cloth_rgb[::-1], dtype=np.float64)
        self.prior_mean = np.zeros((k, 3))
        self.n = np.zeros(k)  # balls learnt per class (fading)
        self.sum = np.zeros((k, 3))
        self.sum2 = np.zeros((k, 3, 3))
        self.mean = np.zeros((k, 3))
        self.cov = np.tile(_PRIOR_COV, (k, 1, 1))
        self.ref_brightness = 1.0
        self.ready = False
        self.opened = False  # the opening layout has been learnt

    def start(self, cloth_bgr: np.ndarray) -> None:
        """The prior classes: the profile's colours seen through this table's light, judged from the
        cloth's observed colour ``cloth_bgr`` (3,)."""
        cloth = np.maximum(np.asarray(cloth_bgr, dtype=np.float64), 1.0)
        gain = cloth / np.maximum(self.cloth_bgr, 1.0)
        if gain.max() / gain.min() > 2.0:  # the profile's cloth is not this cloth: trust only the brightness
            gain = np.full(3, cloth.sum() / max(self.cloth_bgr.sum(), 1.0))
        self.ref_brightness = float(np.linalg.norm(cloth))
        self.prior_mean = np.log(clip(self.profile_bgr * gain, 0, 255) + _OFFSET)
        self.n[:] = 0
        self.sum[:] = 0
        self.sum2[:] = 0
        self._update_classes()
        self.ready = True
        self.opened = False

    def features(self, colours: np.ndarray, cloth_light: np.ndarray) -> np.ndarray:
        """Log colours (N, 3) of ball colours (N, 3) corrected for the local light (how bright the
        cloth is round each ball (N,), grey levels)."""
        light = clip(np.asarray(cloth_light, dtype=np.float64) / self.ref_brightness, 0.2, 5.0)
        return np.log(np.maximum(np.asarray(colours, dtype=np.float64) / light[:, None], 0) + _OFFSET)

    def _update_classes(self) -> None:
        n0 = _PRIOR_COUNT
        tot = n0 + self.n
        self.mean = (_PRIOR_MEAN_COUNT * self.prior_mean + self.sum) / (_PRIOR_MEAN_COUNT + self.n)[:, None]
        # scatter about the class mean, from the running sums, plus the prior's spread as pseudo-balls
        scatter = self.sum2 - self.sum[:, :, None] * self.sum[:, None, :] / np.maximum(self.n, 1e-9)[:, None, None]
        scatter = np.where(self.n[:, None, None] > 0, scatter, 0.0)
        self.cov = (n0 * _PRIOR_COV[None] + scatter) / tot[:, None, None] + _MIN_COV[None]

    def _log_likelihood(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = f[:, None, :] - self.mean[None, :, :]  # (N, K, 3)
        m2 = np.einsum("nki,kij,nkj->nk", d, np.linalg.inv(self.cov), d)
        return -0.5 * (m2 + np.linalg.slogdet(self.cov)[1][None, :]), m2

    def posterior(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities (N, K) and squared Mahalanobis distances (N, K) of log colours (N, 3)."""
        ll, m2 = self._log_likelihood(f)
        post = ll + self.log_prior[None, :]
        post -= post.max(axis=1, keepdims=True)
        p = np.exp(post)
        return p / p.sum(axis=1, keepdims=True), m2

    def classify(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Class probabilities (N, K) float32, labels (N,) object ("" when uncertain) and how far
        each colour is from its nearest class (N,): the squared Mahalanobis distance."""
        n = len(f)
        if n == 0:
            return np.zeros((0, len(self.classes)), np.float32), np.zeros(0, dtype=object), np.zeros(0)
        p, m2 = self.posterior(f)
        best = np.argmax(p, axis=1)
        rows = np.arange(n)
        sure = (p[rows, best] >= self.cfg.min_class_prob) & (m2[rows, best] <= FAR)
        labels = np.array([self.classes[k] if ok else "" for k, ok in zip(best, sure)], dtype=object)
        return p.astype(np.float32), labels, m2.min(axis=1)

    def open_layout(self, f: np.ndarray) -> None:
        """The opening layout: balls seen clearly, ``f`` (N, 3), most of the set. Each is given a
        class by an assignment that respects the profile's counts (a ficha set has one white ball,
        so at most about one ball in nine is white), at the least total cost under the prior classes
        (``scipy.optimize.linear_sum_assignment``), and the classes learn from their balls. The
        counts, not the profile's colours, decide when a camera shows colours far from them (pale
        yellows under glare are nearer the profile's white than its yellow)."""
        from scipy.optimize import linear_sum_assignment

        n = len(f)
        if n == 0:
            return
        ll, _ = self._log_likelihood(f)
        slots = np.maximum(1, np.round(self.counts * n / self.counts.sum())).astype(int)
        cls = np.repeat(np.arange(len(self.classes)), slots)
        rows, cols = linear_sum_assignment(-ll[:, cls])
        self._add(f[rows], cls[cols])  # balls beyond the profile's counts teach nothing yet
        self.opened = True

    def learn(self, f: np.ndarray, prob: np.ndarray) -> None:
        """Balls seen clearly, ``f`` (N, 3) with their probabilities (N, K): those confidently of one
        class join it (the oldest fade once a class holds ``colour_memory`` balls)."""
        if len(f) == 0:
            return
        best = np.argmax(prob, axis=1)
        sure = prob[np.arange(len(f)), best] >= max(self.cfg.min_class_prob, 0.97)
        if sure.any():
            self._add(f[sure], best[sure])

    def _add(self, f: np.ndarray, k: np.ndarray) -> None:
        cap = float(self.cfg.colour_memory)
        for c in np.unique(k):
            x = f[k == c]
            keep = min(1.0, max(cap - len(x), 0.0) / max(self.n[c], 1e-9)) if self.n[c] + len(x) > cap else 1.0
            self.n[c] = self.n[c] * keep + len(x)
            self.sum[c] = self.sum[c] * keep + x.sum(axis=0)
            self.sum2[c] = self.sum2[c] * keep + x.T @ x
        self._update_classes()
