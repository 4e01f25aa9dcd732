"""Edges in a dim room: the step an edge needs follows the cloth's light down (a black ball on dark
cloth differs from it by about half the cloth's brightness), never below the noise's floor."""

import cv2
import numpy as np

from tests.vision._scenes import table
from vision.balls import fit_balls
from vision.config import DetectorConfig


def _dark_disc(step_bgr, r=12.0, size=120):
    """A ball of radius ``r`` px at the picture's centre, ``step_bgr`` darker than dim green cloth,
    anti-aliased (drawn 8 times larger and shrunk)."""
    cloth = np.array([11.0, 26.0, 7.0])
    big = np.zeros((size * 8, size * 8), np.uint8)
    cv2.circle(big, (size * 4, size * 4), int(r * 8), 255, -1)
    cover = cv2.resize(big, (size, size), interpolation=cv2.INTER_AREA).astype(np.float64)[..., None] / 255.0
    image = cloth - cover * np.asarray(step_bgr, dtype=np.float64)
    return np.clip(image + 0.5, 0, 255).astype(np.uint8), np.array([[size / 2 - 0.5, size / 2 - 0.5]])


def _fit(image, centre, need, r=12.0):
    score = np.full((image.shape[0] // 2, image.shape[1] // 2), 0.0, np.float32)  # cloth all round
    y, x = np.mgrid[: score.shape[0], : score.shape[1]]
    score[np.hypot(x - score.shape[1] / 2, y - score.shape[0] / 2) <= r / 2] = 2.0  # the ball is foreground
    return fit_balls(image, score, 2, centre, np.array([r]), 32, need)


def test_a_dim_balls_edge_counts_with_the_threshold_the_light_allows():
    image, centre = _dark_disc([5.0, 9.0, 1.0])  # a step of 10.3 grey levels
    fixed = _fit(image, centre, 12.0)
    dim = _fit(image, centre, np.array([7.8]))  # 0.3 of a cloth of 26 grey levels
    assert fixed.visible[0] < 0.1  # no edge strong enough: not a ball
    assert dim.visible[0] > 0.9 and np.linalg.norm(dim.centre[0] - centre[0]) < 0.3
    assert dim.min_contrast[0] == 7.8 and fixed.min_contrast[0] == 12.0


def test_the_threshold_follows_the_cloths_light_between_its_bounds():
    cfg = DetectorConfig()
    for low_light in (False, True):
        t = table("brasileira", low_light=low_light)
        det = t.detector()
        frame = t.render(())
        det.detect(frame, 0, 0.0)
        h, w = frame.shape[:2]
        ys, xs = np.mgrid[h // 5: 4 * h // 5: 30, w // 8: 7 * w // 8: 30]  # on the cloth
        pts = np.c_[xs.ravel(), ys.ravel()].astype(np.float64)
        need = det._edge_contrast(pts)
        light = det._bg.light(tuple(det._low_px(pts)[:, ::-1].T))
        assert np.all(need <= cfg.min_edge_contrast) and np.all(need >= cfg.min_edge_contrast_dim)
        assert np.allclose(need, np.clip(cfg.edge_contrast_of_light * light, cfg.min_edge_contrast_dim, cfg.min_edge_contrast))
        if low_light:
            assert (need < cfg.min_edge_contrast).mean() > 0.1  # a dim room: its darker cloth lowers it
        else:
            assert np.all(need == cfg.min_edge_contrast)  # a lit table: the fixed threshold everywhere
