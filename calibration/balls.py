"""The focal length from the outlines of balls resting on the cloth.

A camera that looks straight down on a table sees it almost as a rectangle: the table's own
perspective then says little about the focal length (``calibration.calibrate._steady_focal`` gives
up, or is misled by a slightly wrong lens model), and with it goes the camera's height, which sets
the parallax of a ball's centre, 26 mm above the cloth. A sphere says it directly. Seen through a
pinhole, a ball whose centre lies at the angle ``theta`` from the optical axis has an elliptical
outline, longer along the line from the principal point than across it by ``1 / cos(theta)``, and
``tan(theta) = rho / f`` with ``rho`` its distance (undistorted pixels) from the principal point.
The opening layout of Sinuca Brasileira, with its colours spread along the table, is such a set of
spheres; a wide lens, where a wrong focal length costs the most, stretches them the most.

:func:`ball_outlines` finds lone balls on the cloth (any colour apart from the cloth's own, shadows
left out: below), measures each outline's stretch along and across its line from the principal
point (sub-pixel edge points, undistorted, an ellipse fitted), and :func:`focal_from_outlines`
fits ``f`` to the stretches, robustly, with a jackknife standard error. Nothing here knows a game's
rules or uses the vision stage: it is image geometry, as the cushion lines are.

The difference from the cloth is measured on the colour (Lab ``a``, ``b``) and on lightness only
where a thing is lighter than the cloth: a ball's shadow is darker cloth of nearly the cloth's hue,
so it stays out of the blob whose outline is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.table import TableProfile

__all__ = ["Outline", "ball_outlines", "focal_from_outlines"]

_RAYS = 180


@dataclass(frozen=True, slots=True)
class Outline:
    """One lone ball's outline: its centre (undistorted px), distance ``rho_px`` from the principal
    point, ``stretch`` (its extent along the line from the principal point over its extent across
    it), mean radius and the edge points' RMS distance from the fitted ellipse (px)."""

    centre_px: tuple[float, float]
    rho_px: float
    stretch: float
    radius_px: float
    rms_px: float


def _difference_from_cloth(image: np.ndarray, radius_px: float) -> np.ndarray:
    """Per pixel, how far the colour is from the cloth around it (Lab units): the chroma difference,
    and the lightness only where lighter (a shadow is not a ball). The cloth is a median over a
    window four balls wide on a picture an eighth the size, so the lamp's fall-off does not count."""
    h, w = image.shape[:2]
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (3, 3), 0), cv2.COLOR_BGR2LAB)
    small = cv2.resize(lab, (max(w // 8, 1), max(h // 8, 1)), interpolation=cv2.INTER_AREA)
    k = 2 * max(int(4 * radius_px / 8), 1) + 1
    cloth = cv2.resize(cv2.medianBlur(small, k), (w, h), interpolation=cv2.INTER_LINEAR)
    diff = lab.astype(np.float32) - cloth.astype(np.float32)
    return np.sqrt(diff[..., 1] ** 2 + diff[..., 2] ** 2 + np.maximum(diff[..., 0], 0.0) ** 2)


def _open_cloth(cal: Calibration, profile: TableProfile, size: tuple[int, int]) -> np.ndarray:
    """Mask of the cloth where a lone resting ball's outline can be read whole: 2.5 ball radii
    inside the cushions, away from holes and pins (dark discs of a ball's size in the bed)."""
    w, h = size
    r = profile.ball_radius_mm
    m = 2.5 * r
    inner = np.array([[m, m], [profile.length_mm - m, m], [profile.length_mm - m, profile.width_mm - m],
                      [m, profile.width_mm - m]])
    mask = np.zeros((h, w), np.uint8)
    cv2.fillPoly(mask, [np.round(cal.to_image_px(inner)).astype(np.int32)], 255)
    scale = np.linalg.norm(cal.to_image_px([[0.0, 0.0], [100.0, 0.0]])[1] - cal.to_image_px([[0.0, 0.0]])[0]) / 100.0
    for xy, rad in [(h_.xy_mm, h_.radius_mm) for h_ in profile.holes] + [(p.xy_mm, r) for p in profile.pins]:
        c = cal.to_image_px([xy])[0]
        cv2.circle(mask, (int(round(c[0])), int(round(c[1]))), int(np.ceil((rad + 3 * r) * scale)), 0, -1)
    return mask


def ball_outlines(image: np.ndarray, cal: Calibration, profile: TableProfile,
                  min_contrast: float = 20.0) -> list[Outline]:
    """The outlines of the lone balls resting in the open on the cloth of ``image`` (BGR), seen
    through ``cal`` (its homography and lens; its focal length is not used). Balls touching others,
    by a cushion or hardly apart from the cloth in colour are left out."""
    h, w = image.shape[:2]
    r_mm = profile.ball_radius_mm
    mask = _open_cloth(cal, profile, (w, h))
    if not mask.any():
        return []
    mid = cal.to_image_px([[profile.length_mm / 2, profile.width_mm / 2]], r_mm)[0]
    rim = cal.to_image_px([[profile.length_mm / 2 + r_mm, profile.width_mm / 2]], r_mm)[0]
    r_mid = float(np.linalg.norm(rim - mid))
    d = _difference_from_cloth(image, r_mid)
    on = d[mask > 0]
    med = float(np.median(on))
    # well above the cloth's own scatter and a shadow's change of hue; lines drawn on the cloth
    # (thinner than half a ball) are opened away
    thr = max(min_contrast, 2.5 * (med + 8.0 * float(np.median(np.abs(on - med)))))
    size = max(3, int(round(0.5 * r_mid)) | 1)
    blobs = cv2.morphologyEx(((d > thr) & (mask > 0)).astype(np.uint8), cv2.MORPH_OPEN,
                             cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size)))
    n, _, stats, centroids = cv2.connectedComponentsWithStats(blobs)
    ang = np.linspace(0.0, 2.0 * np.pi, _RAYS, endpoint=False)
    u = np.c_[np.cos(ang), np.sin(ang)]
    pp = cal.camera_matrix[:2, 2]
    found: list[Outline] = []
    for i in range(1, n):
        c = centroids[i]
        on_table = cal.to_table_mm([c], r_mm)[0]
        ring = cal.to_image_px(on_table + r_mm * np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]), r_mm)
        r0 = float(np.linalg.norm(ring - c, axis=1).mean())
        if r0 < 4.0 or not 0.5 * np.pi * r0 ** 2 < stats[i, cv2.CC_STAT_AREA] < 1.6 * np.pi * r0 ** 2:
            continue  # a speck, or balls touching
        t = np.arange(0.3 * r0, 1.8 * r0, 0.2)
        mx = (c[0] + u[:, :1] * t).astype(np.float32)
        my = (c[1] + u[:, 1:] * t).astype(np.float32)
        v = cv2.remap(d, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        inside = float(np.median(v[:, t < 0.6 * r0]))
        if inside < thr:
            continue
        # Each ray's own level outside the ball (a shadow's change of hue, another ball, a line):
        # the edge is where the ray falls halfway from the ball's level to that, so a ball's
        # shadow does not push its edge outwards on one side. Rays with no clear fall are dropped.
        outside = np.median(v[:, (t > 1.25 * r0) & (t < 1.7 * r0)], axis=1)
        half = 0.5 * (inside + outside)[:, None]
        above = v > half
        # the first fall below half way, going out from the middle, sub-pixel
        falls = above[:, :-1] & ~above[:, 1:]
        has = falls.any(axis=1) & (outside < 0.5 * inside)
        if has.sum() < 0.8 * _RAYS:
            continue
        j = np.argmax(falls[has], axis=1)
        vk = v[has]
        rows = np.arange(len(vk))
        frac = (vk[rows, j] - half[has, 0]) / np.maximum(vk[rows, j] - vk[rows, j + 1], 1e-6)
        tt = t[j] + frac * (t[1] - t[0])
        pts = cal.undistort_px(c + u[has] * tt[:, None]).astype(np.float32)
        fit = _ellipse(pts)
        if fit is None:
            continue
        centre, q, rms = fit
        mean_r = float(np.mean(1.0 / np.sqrt(np.linalg.eigvalsh(q))))
        if not 0.8 * r0 < mean_r < 1.25 * r0 or rms > 0.05 * r0 + 0.3:
            continue
        off = centre - pp
        rho = float(np.hypot(*off))
        ur = off / rho if rho > 1e-9 else np.array([1.0, 0.0])
        ut = np.array([-ur[1], ur[0]])
        stretch = float(np.sqrt((ut @ q @ ut) / (ur @ q @ ur)))
        found.append(Outline((float(centre[0]), float(centre[1])), rho, stretch, mean_r, rms))
    return found


def _ellipse(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """An ellipse fitted to edge points (K, 2), points far from it dropped and the fit repeated:
    its centre, its shape ``Q`` (``x^T Q x = 1`` about the centre) and the kept points' RMS
    distance from it (px)."""
    for _ in range(3):
        if len(pts) < 20:
            return None
        (ex, ey), (d1, d2), angle = cv2.fitEllipse(pts)
        if min(d1, d2) <= 0:
            return None
        th = np.deg2rad(angle)
        rot = np.array([[np.cos(th), np.sin(th)], [-np.sin(th), np.cos(th)]])
        q = rot.T @ np.diag([4.0 / d1 ** 2, 4.0 / d2 ** 2]) @ rot
        rel = pts - np.array([ex, ey])
        rr = np.sqrt(np.einsum("ki,ij,kj->k", rel, q, rel))
        res = (rr - 1.0) * (d1 + d2) / 4.0
        keep = np.abs(res) < max(0.5, 3.0 * float(np.median(np.abs(res))))
        if keep.all():
            break
        pts = pts[keep]
    return np.array([ex, ey]), q, float(np.sqrt(np.mean(res[keep] ** 2)))


def focal_from_outlines(outlines: list[Outline], image_width: int, min_rho_fraction: float = 0.1,
                        scale: float = 0.02) -> tuple[float, float, int] | None:
    """The focal length (px) that best explains the outlines' stretches (``1 / cos(theta)``,
    ``tan(theta) = rho / f``), its jackknife standard error (px) and how many outlines took part:
    those at least ``min_rho_fraction`` of the picture's width from the principal point (nearer,
    the stretch hardly depends on ``f``). Huber's loss with ``scale`` (stretch units) keeps a
    misread ball from pulling the fit; the focal length is searched on a log grid over
    0.25-6 picture widths. None with fewer than three such outlines."""
    rho = np.array([o.rho_px for o in outlines])
    e = np.array([o.stretch for o in outlines])
    use = rho > min_rho_fraction * image_width
    n = int(use.sum())
    if n < 3:
        return None
    rho, e = rho[use], e[use]
    fs = np.exp(np.linspace(np.log(0.25 * image_width), np.log(6.0 * image_width), 600))
    r = np.abs(e[None, :] - np.sqrt(1.0 + (rho[None, :] / fs[:, None]) ** 2))
    loss = np.where(r < scale, r * r, 2.0 * scale * r - scale * scale)
    total = loss.sum(axis=1)
    best = float(fs[int(np.argmin(total))])
    leave_out = fs[np.argmin(total[:, None] - loss, axis=0)]
    se = float(np.sqrt((n - 1) / n * np.sum((leave_out - leave_out.mean()) ** 2)))
    return best, se, n
