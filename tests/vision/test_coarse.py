"""The coarse pass of the outline fit (``vision.balls._coarse``) on made-up foreground scores: a ball
inside a projected ring (the real billiard-ai-bfh table projects one round every ball) is placed by
its own edge, not pulled towards the ring where the ring comes within the rays' reach (the outermost
crossing from foreground to cloth on each ray, as the pass read it before, puts it 2.4 px aside)."""

import numpy as np

from vision.balls import _coarse

R = 8.0  # the ball's radius in the low-resolution picture, px


def _score(centre, ring_centre, ring_in, ring_out, shape=(80, 80)):
    """Foreground score (float32, 1 = the threshold): a ball of radius R at ``centre`` and a ring
    from ``ring_in`` to ``ring_out`` px round ``ring_centre``, on clear cloth (0.2)."""
    yy, xx = np.mgrid[: shape[0], : shape[1]].astype(np.float64)
    s = np.full(shape, 0.2, np.float32)
    s[np.hypot(xx - centre[0], yy - centre[1]) <= R] = 3.0
    d = np.hypot(xx - ring_centre[0], yy - ring_centre[1])
    s[(d >= ring_in) & (d <= ring_out)] = 2.0
    return s


def test_a_ball_inside_a_projected_ring_off_its_centre_is_placed_by_its_own_edge():
    centre = np.array([40.0, 40.0])
    # the ring 1.55-1.75 radii round a point 0.3 radii aside: on one side within the rays' reach
    # (1.9 radii), on the other beyond it
    score = _score(centre, centre + (0.3 * R, 0.0), 1.55 * R, 1.75 * R)
    for start in ([41.0, 41.0], [38.5, 40.5], [40.0, 38.0]):
        c, share = _coarse(score, 1, np.array([start]), np.array([R]), 32)
        assert np.linalg.norm(c[0] - centre) < 0.1 * R, (start, c[0])
        assert share[0] > 0.6  # (rays ending on the ring are dropped)


def test_without_a_ring_the_ball_is_placed_by_its_edge():
    centre = np.array([40.0, 40.0])
    score = _score(centre, centre, 100.0, 101.0)  # the ring beyond the picture
    c, share = _coarse(score, 1, np.array([[41.5, 39.0]]), np.array([R]), 32)
    assert np.linalg.norm(c[0] - centre) < 0.1 * R
    assert share[0] > 0.9
