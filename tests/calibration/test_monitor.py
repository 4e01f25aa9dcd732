"""Keeping calibration true: the per-frame cushion check, following a drift, a bump."""

import time

import numpy as np
import pytest

from calibration.calibrate import calibrate_image
from calibration.monitor import CalibrationKeeper, CushionCheck
from calibration.table import resolve_profile
from simulator.camera import mount_camera
from simulator.render import Renderer
from simulator.scene import Scene
from tests.calibration._views import corner_errors_mm, View

FICHA = resolve_profile("ficha")
FPS = 30.0


@pytest.fixture(scope="module")
def bumped_clip():
    """2 s at 30 fps: the camera is bumped (turned 0.8 degrees, moved 15 mm) at 1.0 s."""
    cam = mount_camera(FICHA, height_mm=1500.0, tilt_deg=4.0, tilt_dir_deg=60.0, yaw_deg=1.0, k1=-0.12, k2=0.0)
    moved = cam.moved(drot_deg=(0.8, -0.5, 0.3), dshift_mm=(15.0, -10.0, 0.0))
    still = Renderer(FICHA, cam, seed=3)
    after = still.with_camera(moved)
    frames = [(i / FPS, (still if i < 30 else after).render(Scene(i / FPS))) for i in range(60)]
    return cam, moved, frames


def test_a_still_camera_stays_ok(bumped_clip):
    cam, _, frames = bumped_clip
    cal = calibrate_image(frames[0][1], FICHA)
    keeper = CalibrationKeeper(cal, FICHA, frames[0][1])
    states = [keeper.update(img, t) for t, img in frames[:30]]
    assert all(s.valid for s in states)
    assert not [e for e in keeper.events if e.kind in ("lost", "recalibrated")]
    assert corner_errors_mm(keeper.calibration, View(frames[29][1], cam, FICHA)).max() < 2.0


def test_a_bump_is_found_within_a_second_and_recalibrated(bumped_clip):
    _, moved, frames = bumped_clip
    cal = calibrate_image(frames[0][1], FICHA)
    keeper = CalibrationKeeper(cal, FICHA, frames[0][1])
    states = [keeper.update(img, t) for t, img in frames]
    lost = [e for e in keeper.events if e.kind == "lost"]
    redone = [e for e in keeper.events if e.kind == "recalibrated"]
    assert lost and 1.0 <= lost[0].t_s < 2.0 - 1e-9 and lost[0].t_s - 1.0 <= 1.0
    assert redone and redone[0].t_s >= lost[0].t_s
    # No frame from the bump until the new calibration is valid.
    for t, s in ((t, s) for (t, _), s in zip(frames, states)):
        if 1.0 <= t < redone[0].t_s:
            assert not s.valid
    assert corner_errors_mm(keeper.calibration, View(frames[-1][1], moved, FICHA)).max() < 2.0


def test_the_check_is_cheap(bumped_clip):
    _, _, frames = bumped_clip
    cal = calibrate_image(frames[0][1], FICHA)
    check = CushionCheck(cal, FICHA, frames[0][1])
    check.check(frames[1][1])
    t0 = time.thread_time()  # this thread's CPU: other jobs on a busy test machine do not count
    for _, img in frames[:20]:
        check.check(img)
    per_frame_ms = (time.thread_time() - t0) / 20 * 1000
    assert per_frame_ms < 8.0  # about half a millisecond at 720p


def _scripted_keeper(frame, shifts_px):
    """A keeper whose cushion check reads the given shift (px, all four sides) on each frame in turn, whose
    refit keeps the calibration, and which counts its full calibrations."""
    from calibration.monitor import CheckResult, SideReading

    cal = calibrate_image(frame, FICHA)
    full = []
    keeper = CalibrationKeeper(cal, FICHA, frame, recalibrate=lambda image: full.append(1) or cal)
    readings = iter(shifts_px)

    def check(image, t_s=0.0):
        v = next(readings)
        return CheckResult(t_s, tuple(SideReading(side, v, 1.0, np.zeros((24, 2))) for side in ("top", "right", "bottom", "left")))

    keeper.checker.check = check
    keeper._refit = lambda res: cal
    keeper._set = lambda c, image: setattr(keeper, "calibration", c)
    return keeper, full


def test_one_noisy_frame_is_not_followed_and_sparse_follows_are_no_drift(bumped_clip):
    frame = bumped_clip[2][0][1]
    # sensor noise: one frame a little past 0.8 px now and then, never twice in a row
    shifts = [0.3, 0.9, 0.2, 0.4, -0.95, 0.1] * 20
    keeper, full = _scripted_keeper(frame, shifts)
    states = [keeper.update(frame, i / FPS) for i in range(len(shifts))]
    assert all(s.valid and s.status == "ok" for s in states)
    assert not keeper.events and not full
    # ... nor two such frames in a row
    keeper, full = _scripted_keeper(frame, [0.3, 0.9, 1.0, 0.2, -0.95, -0.9, 0.1] * 15)
    assert all(keeper.update(frame, i / FPS).status == "ok" for i in range(105))
    assert not keeper.events and not full
    # a real drift stays: followed from its third frame, and refreshed by a full calibration once a second
    drift = [1.0] * 75
    keeper, full = _scripted_keeper(frame, drift)
    states = [keeper.update(frame, i / FPS) for i in range(len(drift))]
    assert states[0].status == states[1].status == "ok" and states[2].status == "followed"
    assert len(full) == 2  # at 1.0 s and 2.0 s of following
    # a jump past 1.6 px is followed at once; follows seconds apart are separate nudges, never refreshed
    nudges = ([2.0] + [0.1] * 44) * 4
    keeper, full = _scripted_keeper(frame, nudges)
    states = [keeper.update(frame, i / FPS) for i in range(len(nudges))]
    assert [i for i, s in enumerate(states) if s.status == "followed"] == [0, 45, 90, 135]
    assert not full
