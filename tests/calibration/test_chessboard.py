"""The lens from a chessboard video, the alternative to fitting it from the cushions."""

import cv2
import numpy as np
import pytest

from calibration.calibrate import intrinsics_from_chessboard
from calibration.homography import CalibrationError

K = np.array([[900.0, 0, 639.5], [0, 900.0, 359.5], [0, 0, 1]])
PATTERN = (9, 6)  # inner corners
SQUARE_PX = 40  # on the flat board image


def board_image() -> np.ndarray:
    cols, rows = PATTERN[0] + 1, PATTERN[1] + 1
    img = np.full(((rows + 2) * SQUARE_PX, (cols + 2) * SQUARE_PX), 255, np.uint8)
    for r in range(rows):
        for c in range(cols):
            if (r + c) % 2 == 0:
                y, x = (r + 1) * SQUARE_PX, (c + 1) * SQUARE_PX
                img[y: y + SQUARE_PX, x: x + SQUARE_PX] = 0
    return img


def view(rvec, tvec, square_mm=25.0) -> np.ndarray:
    """The board (a plane, 25 mm squares) seen by camera K from pose (rvec, tvec)."""
    r, _ = cv2.Rodrigues(np.asarray(rvec, float))
    mm_per_px = square_mm / SQUARE_PX
    # board pixel -> board mm (origin at the first inner corner) -> image
    to_mm = np.array([[mm_per_px, 0, -2 * square_mm], [0, mm_per_px, -2 * square_mm], [0, 0, 1]])
    h = K @ np.c_[r[:, 0], r[:, 1], np.asarray(tvec, float)] @ to_mm
    img = cv2.warpPerspective(board_image(), h, (1280, 720), flags=cv2.INTER_AREA, borderValue=128)
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)


def test_focal_length_recovered_from_several_views():
    rng = np.random.default_rng(0)
    frames = [view(rng.uniform(-0.35, 0.35, 3), (rng.uniform(-120, 20), rng.uniform(-80, 0), rng.uniform(450, 650)))
              for _ in range(8)]
    k, dist, rms = intrinsics_from_chessboard(frames, PATTERN, 25.0)
    assert k[0, 0] == pytest.approx(900.0, rel=0.03)
    assert rms < 1.0


def test_too_few_views_are_refused():
    with pytest.raises(CalibrationError, match="chessboard"):
        intrinsics_from_chessboard([np.zeros((720, 1280, 3), np.uint8)] * 3, PATTERN)
