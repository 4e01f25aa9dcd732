"""The cue found among a frame's occluder outlines, when a ball or an arm cuts it into pieces."""

import numpy as np
import pytest

from tests.tracking._scripted import rect
from tracking.geometry import cue_sticks

R = 26.0


def test_a_cue_a_ball_cuts_in_two_is_one_cue_with_its_tip_at_the_front():
    # the cue lies along y = 400 from the rail (x = 1500) to its tip at x = 700; a ball at x = 1100
    # hides it from 1100 - R - 10 to 1100 + R + 10
    back = rect(1100.0 + R + 10.0, 392.0, 1500.0, 408.0)
    front = rect(700.0, 393.0, 1100.0 - R - 10.0, 407.0)
    (stick,) = cue_sticks([back, front], 250.0, 50.0, 2 * R + 25.0)
    ends = sorted([stick[0][0], stick[1][0]])
    assert ends == pytest.approx([700.0, 1500.0], abs=5.0)


def test_a_cue_piece_merged_into_an_arm_across_it_is_followed_through_the_arm():
    back = rect(1100.0 + R + 10.0, 392.0, 1500.0, 408.0)
    # the piece in front of the ball joined to an arm lying across the cue: one wide outline
    arm_and_cue = np.concatenate([rect(800.0, 393.0, 1100.0 - R - 10.0, 407.0)[:2],
                                  [[1000.0, 407.0], [1000.0, 700.0], [900.0, 700.0], [900.0, 407.0]],
                                  rect(800.0, 393.0, 1100.0 - R - 10.0, 407.0)[3:]])
    sticks = cue_sticks([back, arm_and_cue], 250.0, 50.0, 2 * R + 25.0)
    assert len(sticks) == 1
    assert min(sticks[0][0][0], sticks[0][1][0]) == pytest.approx(800.0, abs=5.0)


def test_pieces_on_different_lines_or_far_apart_stay_apart():
    a = rect(1000.0, 392.0, 1500.0, 408.0)
    beside = rect(400.0, 452.0, 900.0, 468.0)  # parallel, 60 mm aside
    beyond = rect(200.0, 392.0, 800.0, 408.0)  # on the line, 200 mm ahead
    for other in (beside, beyond):
        sticks = cue_sticks([a, other], 250.0, 50.0, 2 * R + 25.0)
        assert len(sticks) == 2


def test_a_short_wide_blob_is_no_cue():
    assert cue_sticks([rect(0.0, 0.0, 300.0, 120.0)], 250.0, 50.0, 2 * R + 25.0) == []
