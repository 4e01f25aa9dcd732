"""The hardest benchmark views (its acceptance figures): 720p through a very wide lens whose principal
point is off the picture's centre, one in low light, on the 2.84 m table (about 3 mm per pixel at
the corners). The dense, averaged edge profiles and the joint lens fit keep every corner under 4 mm."""

from functools import lru_cache

import numpy as np
import pytest

from calibration.calibrate import calibrate_image
from calibration.table import resolve_profile
from simulator.camera import mount_camera
from simulator.render import RenderOptions, Renderer

from ._views import corner_errors_mm, scene_for, View


@lru_cache(maxsize=None)
def _bench_view(seed: int) -> View:
    """The benchmark's frame ``seed`` of brasileira (same random camera as bench/calibration_bench.py)."""
    p = resolve_profile("brasileira")
    rng = np.random.default_rng([seed, 7])
    cam = mount_camera(p, resolution=(1280, 720), rng=rng)
    image = Renderer(p, cam, seed=seed, options=RenderOptions(low_light=seed % 3 == 2)).render(scene_for(p, rng, 2))
    return View(image, cam, p)


@lru_cache(maxsize=None)
def _calibrated(seed: int):
    v = _bench_view(seed)
    return v, calibrate_image(v.image, v.profile)


@pytest.mark.parametrize("seed", [14, 26])
def test_wide_lens_720p_corners_under_4mm(seed):
    v, cal = _calibrated(seed)
    assert corner_errors_mm(cal, v).max() < 4.0


def test_principal_point_row_is_found_off_centre():
    """Frame 14's principal point is (2.5, -6.9) px off the centre; the joint fit finds the row
    (the long cushions bend unevenly) within 2 px. The column is weakly fixed by the two short
    cushions and stays within the prior (known limit, not asserted)."""
    v, cal = _calibrated(14)
    centre_row = (v.camera.height - 1) / 2
    assert abs(v.camera.cy - centre_row) > 5.0
    assert abs(cal.camera_matrix[1, 2] - v.camera.cy) < 2.0
