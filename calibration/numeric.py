"""Small numeric helpers the per-frame stages share (calibration's monitor, vision, tracking).

:func:`median` is ``np.median`` for the short arrays a frame's work takes medians of (a side's two
dozen cushion profiles, a handful of balls, a few frames of one ball): the same value bit for bit,
without the generic reduction's dispatch, which costs more than the sort itself at these sizes
(``tests/calibration/test_numeric.py`` holds it to ``np.median``). :func:`clip` is ``np.clip``
the same way: the same values, without the dispatch that costs twice the work on a few values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clip", "median"]

_PARTITION_FROM = 64  # longer than this, a partial sort (as np.median does) beats a whole one


def clip(values, lo, hi):
    """``np.clip(values, lo, hi)`` (``lo`` at most ``hi``): the same values, dtype and shape, NaN
    kept, by one ``np.maximum`` and one ``np.minimum``."""
    return np.minimum(np.maximum(values, lo), hi)


def median(values: np.ndarray, axis: int | None = None) -> np.ndarray | np.floating:
    """``np.median(values, axis=axis)`` for ``axis`` None (all values) or 0 (down the columns): the
    middle value, or the mean of the two middle ones, NaN where a NaN is among them; NaN (with no
    warning) for no values."""
    a = np.asarray(values)
    if axis is None:
        a = a.ravel()
    elif axis != 0:
        raise ValueError(f"median: axis must be None or 0, not {axis}")
    n = a.shape[0]
    if n == 0:
        return np.full(a.shape[1:], np.nan) if a.ndim > 1 else np.float64(np.nan)
    lo, hi = (n - 1) // 2, n // 2
    s = np.partition(a, (lo, hi, n - 1), axis=0) if n > _PARTITION_FROM else np.sort(a, axis=0)
    mid = s[lo] if lo == hi else (s[lo] + s[hi]) / 2
    if a.dtype.kind == "f":  # sorting puts NaN last, and np.median answers NaN when there is one
        last = s[n - 1]
        if np.ndim(mid):
            mid = np.where(np.isnan(last), last, mid)
        elif np.isnan(last):
            mid = last
    return mid
