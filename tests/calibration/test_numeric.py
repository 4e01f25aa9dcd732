"""calibration.numeric.median is np.median, bit for bit, on the arrays the stages give it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from calibration.numeric import clip, median

_floats = st.floats(-1e6, 1e6, width=64) | st.just(np.nan)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 150), elements=_floats))
def test_median_of_all_values_is_numpys(a):
    assert _same(median(a), np.median(a))


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 90), elements=st.floats(-1e4, 1e4, width=32)))
def test_median_keeps_float32_as_numpy_does(a):
    assert _same(median(a), np.median(a))


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 100), st.integers(1, 3)), elements=_floats))
def test_median_down_the_columns_is_numpys(a):
    assert _same(median(a, axis=0), np.median(a, axis=0))


def test_median_of_integers_and_of_nothing():
    assert _same(median(np.array([3, 1, 4, 1])), np.median(np.array([3, 1, 4, 1])))
    assert np.isnan(median(np.zeros(0)))
    assert median(np.zeros((0, 2)), axis=0).shape == (2,) and np.isnan(median(np.zeros((0, 2)), axis=0)).all()
    with pytest.raises(ValueError, match="axis must be None or 0"):
        median(np.zeros((3, 2)), axis=1)


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64]), hnp.array_shapes(max_dims=3, max_side=6),
                  elements=st.integers(-1000, 1000)),
       st.integers(-500, 0), st.integers(0, 500))
def test_clip_is_numpys(a, lo, hi):
    assert _same(clip(a, lo, hi), np.clip(a, lo, hi))
    assert _same(clip(a, float(lo), float(hi)), np.clip(a, float(lo), float(hi)))
    bound = np.full(a.shape[-1:] if a.ndim else (), hi)
    assert _same(clip(a, 0, bound), np.clip(a, 0, bound))


def test_clip_keeps_nan_and_scalars_as_numpy_does():
    a = np.array([np.nan, -2.0, 0.5, 3.0])
    assert _same(clip(a, 0.0, 1.0), np.clip(a, 0.0, 1.0))
    assert _same(clip(np.float64(2.5), 0, 1), np.clip(np.float64(2.5), 0, 1))
