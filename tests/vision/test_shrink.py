"""The search picture: shrinking by an odd whole factor the cheap way gives the bilinear picture bit for bit."""

import cv2
import numpy as np
import pytest


@pytest.mark.parametrize("size,factor", [((1920, 1080), 3), ((1920, 1080), 5), ((1280, 720), 5)])
def test_nearest_exact_is_bilinear_at_an_odd_whole_factor(size, factor):
    image = np.random.default_rng(factor).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    low = (size[0] // factor, size[1] // factor)
    assert np.array_equal(cv2.resize(image, low, interpolation=cv2.INTER_NEAREST_EXACT),
                          cv2.resize(image, low, interpolation=cv2.INTER_LINEAR))
