"""Homography: the scikit-image style transform (STYLE.md 4) and its refusals."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from calibration.homography import CalibrationError, Homography

CORNERS_MM = np.array([[0.0, 0.0], [1420.0, 0.0], [1420.0, 810.0], [0.0, 810.0]])


def random_view(rng: np.random.Generator) -> np.ndarray:
    """Image corners of the table seen from above with a random moderate perspective."""
    base = np.array([[200.0, 100.0], [1080.0, 100.0], [1080.0, 600.0], [200.0, 600.0]])
    return base + rng.uniform(-60, 60, base.shape)


def test_maps_correspondences_exactly():
    px = random_view(np.random.default_rng(1))
    h = Homography.from_correspondences(px, CORNERS_MM)
    assert np.allclose(h(px), CORNERS_MM, atol=1e-3)
    assert np.allclose(h.inverse(CORNERS_MM), px, atol=1e-3)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pts=st.lists(st.tuples(st.floats(-200, 1600), st.floats(-200, 1000)), min_size=1, max_size=20))
def test_round_trip_both_ways(seed, pts):
    h = Homography.from_correspondences(random_view(np.random.default_rng(seed)), CORNERS_MM)
    mm = np.array(pts, dtype=float)
    assert np.allclose(h(h.inverse(mm)), mm, atol=1e-6)
    px = h.inverse(mm)
    assert np.allclose(h.inverse(h(px)), px, atol=1e-6)


def test_shapes_in_and_out():
    h = Homography.from_correspondences(random_view(np.random.default_rng(2)), CORNERS_MM)
    assert h(np.zeros((0, 2))).shape == (0, 2)
    assert h([640.0, 360.0]).shape == (1, 2)
    assert h(np.ones((7, 2))).shape == (7, 2)
    with pytest.raises(ValueError):
        h(np.ones((3, 3)))


def test_least_squares_with_more_points_and_residuals():
    rng = np.random.default_rng(3)
    truth = Homography.from_correspondences(random_view(rng), CORNERS_MM)
    mm = rng.uniform([0, 0], [1420, 810], (12, 2))
    px = truth.inverse(mm) + rng.normal(0, 0.2, (12, 2))
    fit = Homography.from_correspondences(px, mm)
    assert fit.residuals(px, mm).max() < 2.0
    assert np.abs(fit(px) - truth(px)).max() < 2.0


@pytest.mark.parametrize("px, why", [
    pytest.param(np.array([[0, 0], [10, 0], [10, 10]]), "at least 4", id="three points"),
    pytest.param(np.array([[0, 0], [10, 0], [20, 0], [30, 0]]), "one line", id="collinear"),
    pytest.param(np.array([[0, 0], [10, 0], [20, 0], [30, 40]]), "three of the four", id="three collinear"),
    pytest.param(np.array([[0, 0], [0, 0], [10, 10], [0, 10]]), "three of the four", id="duplicate"),
    pytest.param(np.array([[0, 0], [np.nan, 0], [10, 10], [0, 10]]), "NaN", id="nan"),
])
def test_degenerate_input_is_refused_with_a_reason(px, why):
    with pytest.raises(CalibrationError, match=why) as e:
        Homography.from_correspondences(px, CORNERS_MM[: len(px)])
    assert isinstance(e.value, ValueError) and e.value.hint


def test_mismatched_counts():
    with pytest.raises(CalibrationError, match="source points but"):
        Homography.from_correspondences(random_view(np.random.default_rng(4)), CORNERS_MM[:3])


def test_mirrored_order_is_detectable():
    px = random_view(np.random.default_rng(5))
    assert Homography.from_correspondences(px, CORNERS_MM).preserves_orientation(px.mean(axis=0))
    assert not Homography.from_correspondences(px[[1, 0, 3, 2]], CORNERS_MM).preserves_orientation(px.mean(axis=0))
