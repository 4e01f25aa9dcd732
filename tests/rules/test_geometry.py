"""rules/geometry.py: can the cue ball reach this ball or a cushion (ficha 4.4.1, 4.4.2; Sinuca
Brasileira's snooker, rules 12 and 13.4), the covered ball of ficha 4.3, and re-spotting (Sinuca
Brasileira rule 1). Every expectation is worked out by hand from the positions."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.table import resolve_profile
from rules.geometry import can_hit, can_reach_cushion, clear_ahead, covered_in_pocket, path_clear, respot_spot

FICHA = resolve_profile("ficha")
R = FICHA.ball_radius_mm
CUE = (710.0, 405.0)


@pytest.mark.parametrize("obstacle, clear", [
    pytest.param((900.0, 405.0), False, id="a ball on the line ahead blocks"),
    pytest.param((900.0, 405.0 + 2 * R + 0.5), True, id="a ball just clear of the corridor does not"),
    pytest.param((900.0, 405.0 + 2 * R - 0.5), False, id="a ball overlapping the corridor does"),
    pytest.param((710.0 - 2 * R + 3.0, 405.0), True, id="a ball touching the cue ball from behind does not"),
    pytest.param((1300.0, 405.0), True, id="a ball beyond the end does not"),
])
def test_a_ball_ahead_blocks_a_ball_behind_never_does(obstacle, clear):
    assert path_clear(CUE, (1200.0, 405.0), [obstacle], R) is clear
    assert bool(clear_ahead(CUE, np.array([[1200.0, 405.0]]), [obstacle], R)[0]) is clear


def test_clear_ahead_judges_many_rolls_at_once():
    ends = np.array([[1200.0, 405.0], [710.0, 800.0], [200.0, 405.0]])
    assert clear_ahead(CUE, ends, [(900.0, 405.0)], R).tolist() == [False, True, True]
    assert clear_ahead(CUE, ends, [], R).tolist() == [True, True, True]


SURROUND = [(710 + 53.5, 405.0), (710 - 53.5, 405.0), (710.0, 405 + 53.5), (710.0, 405 - 53.5)]


def test_can_hit_a_ball_in_plain_view_and_not_one_behind_a_wall():
    target = (1100.0, 405.0)
    assert can_hit(CUE, target, [], R)
    assert not can_hit(CUE, target, [(900.0, 405.0)], R)  # a ball of the same size halfway on the line hides it all
    assert can_hit(CUE, target, [(900.0, 405.0 + 40.0)], R)  # off the line it leaves the target's other side
    wall = [(900.0, 405.0 + dy) for dy in np.arange(-200.0, 201.0, 2 * R)]
    assert not can_hit(CUE, target, wall, R)
    assert not can_hit(CUE, target, SURROUND, R)


def test_a_touching_target_can_always_be_played_and_a_ball_behind_never_blocks():
    assert can_hit(CUE, (710 + 2 * R + 0.5, 405.0), SURROUND[1:], R, touching_mm=1.0)
    behind = (710 - 2 * R + 3.0, 405.0)  # overlaps the cue ball from behind (a tracking error)
    assert can_hit(CUE, (1100.0, 405.0), [behind], R)


def test_can_reach_a_cushion_unless_walled_in():
    assert can_reach_cushion(CUE, [], FICHA)
    assert can_reach_cushion(CUE, SURROUND[:3], FICHA)  # one side open
    assert not can_reach_cushion(CUE, SURROUND, FICHA)


def test_4_3_a_ball_in_the_jaws_covered_by_an_opponent_ball():
    pos = {"r1": (35.0, 35.0), "y1": (72.5, 72.5), "cue": (300.0, 300.0)}
    assert covered_in_pocket("r1", ["y1"], pos, "cue", FICHA, 1.0, 10.0, 2.0) == ("TL", ("y1",))
    pos["y1"] = (400.0, 72.5)  # the opponent ball away: not covered
    assert covered_in_pocket("r1", ["y1"], pos, "cue", FICHA, 1.0, 10.0, 2.0) is None
    open_table = {"r1": (700.0, 400.0), "y1": (700.0 + 2 * R, 400.0), "cue": (300.0, 300.0)}  # not near a pocket
    assert covered_in_pocket("r1", ["y1"], open_table, "cue", FICHA, 1.0, 10.0, 2.0) is None


def test_respotting_its_own_spot_then_the_next_free_spot_then_towards_the_top_cushion():
    own, other = (1000.0, 400.0), (2000.0, 400.0)
    assert respot_spot(own, [other], {}, R, 3000.0) == own
    assert respot_spot(own, [other], {"cue": own}, R, 3000.0) == other
    taken = {"cue": own, "x": other}
    assert respot_spot(own, [other], taken, R, 3000.0) == pytest.approx((1000.0 + 2 * R, 400.0))
    row = {f"b{k}": (1000.0 + 2 * R * k, 400.0) for k in range(0, 40)}  # the line to the top cushion full
    x, y = respot_spot(own, [], row, R, 1000.0 + 2 * R * 39)
    assert y == 400.0 and x == pytest.approx(1000.0 - 2 * R)
