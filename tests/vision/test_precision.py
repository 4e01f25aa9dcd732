"""Checks of the detector's precision, on small made-up inputs: a blob with no outline is a ball
only if it stands out from the cloth round it; a ball at rest is placed by the mean of its fits, and
only while it stood unchanged; an outline amid its own colour (a fingertip) is none."""

import cv2
import numpy as np

from types import SimpleNamespace

from vision import BallState
from vision.config import DetectorConfig
from vision.balls import BallFits
from vision.detect import Detector, _continued, _settle, _stands_out
from vision.types import BallDetections

CLOTH_BGR = (40, 110, 30)


def _balls(xy_px, xy_mm=None, state=BallState.VISIBLE) -> BallDetections:
    xy_px = np.asarray(xy_px, dtype=np.float64).reshape(-1, 2)
    n = len(xy_px)
    return BallDetections(frame=0, t_s=0.0, classes=("white",), xy_mm=np.asarray(xy_mm if xy_mm is not None else xy_px * 2.5, dtype=np.float64),
                          xy_px=xy_px, radius_px=np.full(n, 10.0), height_mm=np.zeros(n), label=np.full(n, "white"),
                          class_prob=np.ones((n, 1)), score=np.ones(n, np.float32), state=np.full(n, state, np.uint8))


def test_a_blob_of_bare_cloth_is_no_ball_a_coloured_one_is():
    image = np.zeros((120, 200, 3), np.uint8)
    image[:] = CLOTH_BGR
    image[50:70, 140:160] = (30, 140, 200)  # a ball's colour, on the right
    centre = np.array([[60.0, 60.0], [150.0, 60.0]])
    core = np.array([CLOTH_BGR, (30, 140, 200)], np.float32)  # the left one is cloth: a ghost of the background model
    out = _stands_out(image, centre, np.array([10.0, 10.0]), core, np.array([1.0, 1.0]), 12.0)
    assert out.tolist() == [False, True]


def test_a_streak_is_unmixed_before_it_is_compared():
    image = np.zeros((120, 200, 3), np.uint8)
    image[:] = CLOTH_BGR
    faint = np.array(CLOTH_BGR, np.float32) + 5.0  # a ball smeared over four times its length: 5 grey levels a channel
    out = _stands_out(image, np.array([[100.0, 60.0]]), np.array([10.0]), faint[None], np.array([4.0]), 12.0)
    assert out.tolist() == [True]
    assert _stands_out(image, np.array([[100.0, 60.0]]), np.array([10.0]), faint[None], np.array([1.0]), 12.0).tolist() == [False]


def test_a_ball_that_stood_unchanged_is_placed_by_the_mean_of_its_fits():
    cfg = DetectorConfig()
    old = _balls([[100.0, 100.0], [300.0, 100.0]])
    old_rest = np.array([[3.0, 1.0], [3.0, 0.0]])  # both placed by 3 fits; the second was refitted last frame
    new = _balls([[100.4, 100.0], [300.4, 100.0]])
    settled, rest = _settle(new, 2, np.ones(2, bool), old, old_rest, cfg)
    assert np.allclose(settled.xy_px[0], (100.1, 100.0))  # (3 x 100 + 100.4) / 4
    assert np.allclose(settled.xy_mm[0], (250.25, 250.0))
    assert np.allclose(settled.xy_px[1], (300.4, 100.0))  # it may be creeping: its last fit
    assert rest.tolist() == [[4.0, 0.0], [1.0, 0.0]]


def test_a_moved_ball_or_a_blob_starts_afresh():
    cfg = DetectorConfig()
    old = _balls([[100.0, 100.0], [300.0, 100.0]])
    old_rest = np.array([[5.0, 1.0], [5.0, 1.0]])
    new = _balls([[101.5, 100.0], [300.2, 100.0]])  # the first moved 0.15 radii; the second is a blob (n_fitted=1)
    settled, rest = _settle(new, 1, np.ones(2, bool), old, old_rest, cfg)
    assert np.allclose(settled.xy_px, new.xy_px)
    assert rest[:, 0].tolist() == [1.0, 1.0]


def test_the_mean_is_capped_so_a_nudged_ball_is_followed():
    cfg = DetectorConfig()
    old = _balls([[100.0, 100.0]])
    settled, rest = _settle(_balls([[100.8, 100.0]]), 1, np.ones(1, bool), old, np.array([[50.0, 1.0]]), cfg)
    assert np.isclose(settled.xy_px[0, 0], 100.0 + 0.8 / cfg.rest_fits) and rest[0, 0] == cfg.rest_fits


def test_a_fit_of_part_of_a_resting_balls_outline_leaves_it_where_it_stood():
    """Part of a still ball's outline (an arm over it, a dark ball's edge in its shadow) can be fitted a
    fifth of a radius off: the ball stays where it stood. Fitted whole that far off, it moved."""
    cfg = DetectorConfig()
    old = _balls([[100.0, 100.0], [300.0, 100.0]])
    old_rest = np.array([[6.0, 1.0], [6.0, 1.0]])
    new = _balls([[102.5, 100.0], [302.5, 100.0]])  # both 0.25 radii off; the first fitted from part of its outline
    settled, rest = _settle(new, 2, np.array([False, True]), old, old_rest, cfg)
    assert np.allclose(settled.xy_px, [[100.0, 100.0], [302.5, 100.0]])
    assert rest[:, 0].tolist() == [6.0, 1.0]
    far = _balls([[104.0, 100.0]])  # 0.4 radii: beyond what a partial fit errs by
    assert np.allclose(_settle(far, 1, np.zeros(1, bool), old[:1], old_rest[:1], cfg)[0].xy_px, far.xy_px)


def _fits(centres, visible, rms) -> BallFits:
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    n = len(c)
    one = np.ones(n)
    return BallFits(c, 10.0 * one, 10.0 * one, np.asarray(visible, float), 0.05 * one, 25.0 * one, np.asarray(rms, float),
                    np.zeros(n), np.zeros((n, 19, 3), np.float32), 2.0 * one, 12.0 * one)


def test_a_still_ball_whose_refit_is_refused_as_rough_stands_where_it_was():
    """A ball passing close by lays its shadow on a dark ball's edge: the refit near the place is
    rough and refused. The ball stands where it was; not when nothing was fitted there, when the
    rough fit lies beyond rest_hold, or when an accepted fit is the ball."""
    cfg = DetectorConfig()
    det = SimpleNamespace(cfg=cfg)
    old = _balls([[100.0, 100.0], [300.0, 100.0], [500.0, 100.0], [700.0, 100.0]])
    look = np.ones(4, bool)
    # ball 0: refused rough fit 1.1 px off; ball 1: nothing fitted; ball 2: refused 4 px off (0.4 radii);
    # ball 3: an accepted fit at its place, and a refused one beside it
    fits = _fits([[101.1, 100.0], [504.0, 100.0], [700.2, 100.0], [701.0, 100.0]], [0.97, 0.97, 0.95, 0.9], [1.98, 1.9, 0.5, 2.0])
    keep = np.array([False, False, True, False])
    hold = Detector._rough_in_place(det, fits, keep, old, look)
    assert hold.tolist() == [True, False, False, False]
    # most of the outline must have been seen, round a foreground core
    faint = _fits([[101.1, 100.0]], [0.3], [1.98])
    assert not Detector._rough_in_place(det, faint, np.array([False]), old[:1], look[:1]).any()


def test_a_fingertip_is_continued_by_its_finger_a_ball_is_not():
    skin, white = (120, 150, 200), (225, 225, 225)
    image = np.zeros((120, 300, 3), np.uint8)
    image[:] = CLOTH_BGR
    cv2.circle(image, (50, 60), 10, white, -1)  # a ball alone
    cv2.circle(image, (150, 40), 10, skin, -1)  # a fingertip, its finger below it, the next finger beside
    cv2.rectangle(image, (140, 40), (160, 119), skin, -1)
    cv2.rectangle(image, (164, 35), (184, 119), skin, -1)
    cv2.circle(image, (240, 60), 10, white, -1)  # two touching balls of one colour
    cv2.circle(image, (260, 60), 10, white, -1)
    centre = np.array([[50.0, 60.0], [150.0, 40.0], [240.0, 60.0]])
    core = np.array([white, skin, white], np.float32)
    share = _continued(image, centre, np.full(3, 10.0), core, np.array([[240.0, 60.0], [260.0, 60.0]]), np.full(3, 30.0))
    assert share[0] == 0.0 and share[2] == 0.0
    assert share[1] > 0.3
    streak = _continued(image, centre[1:2], np.array([10.0]), core[1:2], np.zeros((0, 2)), np.array([30.0]), np.array([[0.0, 1.0]]))
    assert streak[0] < share[1]  # along a streak's own path its colour is no evidence
