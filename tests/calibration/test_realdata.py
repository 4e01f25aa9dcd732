"""Real footage (the shared real-footage folder, not part of the repository): automatic calibration with only the
table's size given, and the monitor following a hand-held camera's drift (the acceptance figures).

The expected corners were checked by eye on the drawn frames (docs/calibration-*.png)."""

from pathlib import Path

import numpy as np
import pytest

from calibration.calibrate import calibrate_frames, calibrate_image
from calibration.monitor import CalibrationKeeper
from calibration.table import profile_from_spec
from tests._realdata import REALDATA

BFH = REALDATA / "billiard-ai-bfh" / "null_grad_stoss_1_0003_0009.mp4"
JAMES = REALDATA / "james-ecd-pool" / "video-1531832402.mp4"


def frames_of(path: Path, n: int | None = None) -> list[np.ndarray]:
    from cueref.video import VideoReader

    out = []
    with VideoReader(str(path)) as reader:
        for frame in reader:
            out.append(np.ascontiguousarray(frame.image))
            if n is not None and len(out) >= n:
                break
    return out


@pytest.mark.skipif(not BFH.exists(), reason="real clip from LukasSeglias/billiard-ai (billiard-ai-bfh) not present in $CUEREF_REALDATA or shared/realdata beside the repository")
def test_fixed_overhead_camera_calibrates_with_the_size_only():
    cal = calibrate_frames(frames_of(BFH, 3), profile_from_spec("1800x900"))
    seen_by_eye = np.array([[69, 87], [1172, 90], [1170, 627], [76, 637]], float)
    assert np.abs(cal.corners_px - seen_by_eye).max() < 6.0
    assert max(cal.residuals["line_rms_px"].values()) < 1.0


@pytest.mark.skipif(not JAMES.exists(), reason="real clip from james-ecd/pool-ball-tracker (james-ecd-pool) not present in $CUEREF_REALDATA or shared/realdata beside the repository")
def test_hand_held_camera_is_followed():
    profile = profile_from_spec("1830x915")
    frames = frames_of(JAMES)
    start = calibrate_image(frames[0], profile)
    keeper = CalibrationKeeper(start, profile, frames[0])
    states = [keeper.update(img, i / 25.0) for i, img in enumerate(frames)]
    assert sum(s.valid for s in states) >= 0.9 * len(states)
    end = calibrate_frames(frames[-5:], profile)
    drift = np.linalg.norm(start.corners_px - end.corners_px, axis=1)
    kept = np.linalg.norm(keeper.calibration.corners_px - end.corners_px, axis=1)
    assert drift.max() > 30.0  # the camera really moved
    assert kept.max() < 12.0, kept  # and the kept calibration moved with it


IPI = REALDATA / "ipi-final-br" / "Pool1.avi"


@pytest.mark.skipif(not IPI.exists(), reason="real clip from frapsMatheus/IPI_FINAl (ipi-final-br) not present in $CUEREF_REALDATA or shared/realdata beside the repository")
def test_a_table_partly_out_of_view_is_refused_not_guessed():
    from calibration.homography import CalibrationError

    with pytest.raises(CalibrationError):
        calibrate_frames(frames_of(IPI, 3), profile_from_spec("1420x810"))
