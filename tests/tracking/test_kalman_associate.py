"""The ball filter (F and H written out, real time steps, the cushion mirror) and the association."""

import numpy as np
import pytest

from tracking.associate import associate
from tracking.kalman import H, ball_filter, process_noise, reflect, transition


def test_h_measures_position_not_velocity():
    # filterpy's kinematic_kf(dim=2, order=1, dim_z=2) measures x and vx: ours measures x and y
    x = np.array([10.0, 99.0, 20.0, -77.0])
    assert np.allclose(H @ x, [10.0, 20.0])


@pytest.mark.parametrize("dt_s", [1 / 30, 1 / 60, 0.1])
def test_prediction_moves_by_velocity_times_the_real_step(dt_s):
    kf = ball_filter(np.array([100.0, 200.0]), 1.0, np.array([3000.0, -1500.0]))
    kf.predict(F=transition(dt_s), Q=process_noise(dt_s, 100.0))
    assert np.allclose(kf.x[[0, 2]], [100.0 + 3000.0 * dt_s, 200.0 - 1500.0 * dt_s])
    assert np.allclose(kf.x[[1, 3]], [3000.0, -1500.0])


def test_update_pulls_towards_the_measurement_and_shrinks_doubt():
    kf = ball_filter(np.array([0.0, 0.0]), 2.0)
    p0 = kf.P[0, 0]
    kf.predict(F=transition(1 / 30), Q=process_noise(1 / 30, 10.0))
    kf.update(np.array([1.0, -1.0]))
    assert 0 < kf.x[0] < 1 and -1 < kf.x[2] < 0
    assert kf.P[0, 0] < p0


def test_reflect_mirrors_position_and_damps_the_normal_speed():
    kf = ball_filter(np.array([20.0, 300.0]), 1.0, np.array([-2000.0, 500.0]))
    reflect(kf, axis=0, line_mm=26.0, restitution=0.8)
    assert np.allclose(kf.x, [32.0, 1600.0, 300.0, 500.0])
    assert np.allclose(kf.P, kf.P.T)


def test_associate_three_way_result_with_gating():
    cost = np.array([[1.0, 9.0, 50.0], [8.0, 2.0, 60.0]])
    res = associate(cost, max_cost=10.0)
    assert res.matches.tolist() == [[0, 0], [1, 1]]
    assert res.unmatched_tracks.tolist() == []
    assert res.unmatched_detections.tolist() == [2]


def test_associate_leaves_pairs_over_the_gate_unmatched():
    cost = np.array([[1.0, np.inf], [np.inf, 30.0]])
    res = associate(cost, max_cost=np.array([5.0, 5.0]))
    assert res.matches.tolist() == [[0, 0]]
    assert res.unmatched_tracks.tolist() == [1]
    assert res.unmatched_detections.tolist() == [1]


def test_associate_prefers_more_matches_over_a_cheaper_single_one():
    # track 0 could take detection 0 cheaply, but then track 1 would have nothing
    cost = np.array([[1.0, 4.0], [3.0, np.inf]])
    res = associate(cost, max_cost=10.0)
    assert sorted(res.matches.tolist()) == [[0, 1], [1, 0]]


def test_associate_empty():
    res = associate(np.zeros((0, 3)), 1.0)
    assert res.matches.shape == (0, 2) and res.unmatched_detections.tolist() == [0, 1, 2]
