"""The exact calibration of a simulated camera (the "true calibration" of the vision benchmark and
tests): the cloth-plane homography, the camera centre and the lens of a
:class:`simulator.camera.CameraModel`, as a :class:`calibration.camera.Calibration`."""

from __future__ import annotations

import numpy as np

from calibration.camera import Calibration
from calibration.homography import Homography
from calibration.table import TableProfile


def true_calibration(camera, profile: TableProfile) -> Calibration:
    """The calibration that maps ``camera``'s pictures to ``profile``'s table exactly."""
    r = camera.R
    t = np.asarray(camera.tvec, dtype=np.float64)
    # world (x, y, z = -h) on the cloth (z = 0) -> undistorted px: K [r1 r2 t]
    to_px = camera.K @ np.c_[r[:, 0], r[:, 1], t]
    centre = camera.centre_world
    return Calibration(
        image_size=camera.size,
        camera_matrix=camera.K,
        dist_coeffs=camera.dist_coeffs,
        homography=Homography(np.linalg.inv(to_px)),
        camera_xyh_mm=(float(centre[0]), float(centre[1]), float(-centre[2])),
        corners_px=camera.table_corners_px(profile),
        length_mm=profile.length_mm,
        width_mm=profile.width_mm,
        ball_radius_mm=profile.ball_radius_mm,
        profile_name=profile.name,
        method="true",
    )
