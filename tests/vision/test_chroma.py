"""A 4:2:0 video's colour planes sited off its brightness: the shift is measured on a ball's colour
and brightness edges, and a ball read with it is placed where it is (made-up picture: a yellow ball on
green cloth whose colour is moved half a pixel to the right)."""

import cv2
import numpy as np

from vision.fit import chroma_offsets, find_edges, fit_circles, sample_rays

CENTRE = np.array([[100.3, 99.6]])
RADIUS = 15.0


def _ball_picture(chroma_dx: float) -> np.ndarray:
    """A yellow ball on green cloth, antialiased (4 x 4 samples a pixel), its colour planes moved
    ``chroma_dx`` px to the right."""
    sub = 4
    ys, xs = np.mgrid[0:200 * sub, 0:200 * sub]
    inside = np.hypot((xs + 0.5) / sub - 0.5 - CENTRE[0, 0], (ys + 0.5) / sub - 0.5 - CENTRE[0, 1]) <= RADIUS
    cover = inside.reshape(200, sub, 200, sub).mean(axis=(1, 3))[..., None]
    img = cover * np.array([30.0, 200.0, 220.0]) + (1 - cover) * np.array([40.0, 120.0, 40.0])
    ycc = cv2.cvtColor(img.astype(np.float32), cv2.COLOR_BGR2YCrCb)
    shift = np.float32([[1, 0, chroma_dx], [0, 1, 0]])
    ycc[..., 1:] = cv2.warpAffine(ycc[..., 1:], shift, (200, 200), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.clip(cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR), 0, 255).round().astype(np.uint8)


def _placed(image: np.ndarray, shift) -> np.ndarray:
    rs = sample_rays(image, CENTRE, np.array([RADIUS - 5]), np.array([RADIUS + 5]), 32, 15, shift)
    pts, _, _ = find_edges(rs, np.array([RADIUS]))
    return fit_circles(pts, np.ones((1, 32)), CENTRE + 0.7, np.array([RADIUS]))[0][0]


def test_the_chroma_shift_is_measured_and_undone():
    image = _ball_picture(0.5)
    rs = sample_rays(image, CENTRE, np.array([RADIUS - 5]), np.array([RADIUS + 5]), 32, 15)
    diff, ok = chroma_offsets(rs, np.array([RADIUS]), 12.0)
    assert ok.mean() > 0.9
    d, u = diff[0][ok[0]] - diff[0][ok[0]].mean(), rs.unit[ok[0]]
    measured = np.linalg.solve(u.T @ u, u.T @ d)
    assert abs(measured[0] - 0.5) < 0.15 and abs(measured[1]) < 0.1
    off = _placed(image, None) - CENTRE[0]
    assert off[0] > 0.08  # the colour's shift pulls the outline with it
    assert np.linalg.norm(_placed(image, measured) - CENTRE[0]) < 0.5 * np.linalg.norm(off)
    assert np.linalg.norm(_placed(_ball_picture(0.0), None) - CENTRE[0]) < 0.1  # nothing to undo
