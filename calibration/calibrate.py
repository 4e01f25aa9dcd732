"""Calibration from a picture of the table: automatic and manual.

Automatic, :func:`calibrate_image`:

1. the cloth is found by its colour around the middle of the picture and bounded by a quadrilateral
   (:func:`calibration.detect.find_cloth`); its long sides are the table's length, the head is on the
   left (or top) unless told otherwise;
2. on ~90 profiles across each side, the cushion nose is the first strong edge met coming from the
   cloth (sub-pixel); pocket mouths are skipped using the profile's pocket sizes;
3. radial distortion (k1, k2) is fitted so the four sets of edge points are straight; robust lines are
   fitted to the undistorted points and intersected into the four playing-surface corners; a second,
   narrow search on dense averaged profiles follows, then the homography, k1, k2 and the principal
   point are fitted together to all edge points (:func:`_joint_lens`);
4. the homography corners (undistorted px) -> corners (mm) follows; the focal length is estimated from
   it when the view has enough perspective (else given, or a default), then from the outlines of
   lone resting balls when there are enough of them (:mod:`calibration.balls`), and
   ``cv2.solvePnP`` places the camera (its height, for parallax);
5. quality: the side lines' scatter, the seen aspect ratio against the profile's, and the pockets (or
   bed holes) found near where the profile puts them; a calibration that fails a check raises
   :class:`CalibrationError` saying what was seen and what to do.

Manual, :func:`calibrate_manual`: four or more named landmarks (``corner:TL``, ``pocket:TM``,
``hole:h200``, ``pin:red``, ``spot:centre``) given in pixels.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import Iterable, Mapping

import cv2
import numpy as np
from scipy.optimize import brentq, least_squares

from calibration import detect
from calibration.balls import ball_outlines, focal_from_outlines
from calibration.camera import (Calibration, camera_pose, default_camera_matrix, distort_px, focal_from_homography,
                                undistort_points, undistort_px)
from calibration.homography import CalibrationError, Homography, as_points
from calibration.table import TableProfile

__all__ = [
    "CalibrationConfig",
    "calibrate_image",
    "calibrate_frames",
    "calibrate_manual",
    "landmarks_mm",
    "find_landmarks",
    "find_pins",
    "intrinsics_from_chessboard",
]

log = logging.getLogger(__name__)

CORNERS = ("TL", "TR", "BR", "BL")


@dataclass(frozen=True, slots=True)
class CalibrationConfig:
    """Thresholds of the automatic calibration and its checks."""

    band_fraction: float = 0.10  # search depth for the cushion nose, share of the cloth's short side; raise for wide cushions
    max_line_rms_px: float = 2.0  # scatter of edge points about a fitted cushion line; raise for soft, blurry video
    min_inlier_fraction: float = 0.4  # share of a side's edge points on its line; lower when much is hidden (arms, balls)
    max_aspect_error: float = 0.10  # seen length/width against the profile's; the profile is refused beyond this
    max_landmark_mm: float = 50.0  # median pocket/hole residual beyond which the profile's layout is refused (real pockets differ from a spec's)
    min_focal_per_width: float = 0.35  # estimated focal lengths outside [min, max] x image width are not trusted
    max_focal_per_width: float = 4.0
    estimate_distortion: bool = True  # fit k1, k2 from the cushion lines' straightness
    refine_with_landmarks: bool = True  # let pockets/holes found near their place refine the homography
    refine_max_mm: float = 8.0  # only landmarks found this close to the profile's place take part
    refine_profiles: int = 300  # profiles across each side in the second, narrow search
    across_px: int = 1  # each profile of the second search averages 2 * across_px + 1 parallel ones
    joint_lens: bool = True  # refine homography, k1, k2 and the principal point together from the cushion edge points
    principal_sigma: float = 0.005  # prior on the principal point's offset from the picture's centre, share of the width
    principal_weight: float = 0.2  # an offset of principal_sigma costs as much as every edge point this far (mm) from its side
    focal_from_balls: bool = True  # measure the focal length on lone resting balls' outlines (calibration.balls)
    min_focal_balls: int = 4  # outlines, away from the picture's middle, needed for that; fewer say too little
    max_focal_balls_error: float = 0.08  # its jackknife standard error, share of the focal length, above which the table's perspective is kept
    max_focal_balls_error_over_default: float = 0.2  # the same where the only other focal length is the default guess


def landmarks_mm(profile: TableProfile) -> dict[str, tuple[float, float]]:
    """Every named point of a profile a user can click on: ``corner:TL`` .. ``corner:BL``,
    ``pocket:<id>`` (drop centres), ``hole:<id>``, ``pin:<id>`` and ``spot:<name>``."""
    out: dict[str, tuple[float, float]] = {f"corner:{c}": xy for c, xy in zip(CORNERS, profile.corners_mm)}
    out.update({f"pocket:{p.id}": p.xy_mm for p in profile.pockets})
    out.update({f"hole:{h.id}": h.xy_mm for h in profile.holes})
    out.update({f"pin:{p.id}": p.xy_mm for p in profile.pins})
    out.update({f"spot:{k}": v for k, v in profile.spots.items()})
    return out


def _skip_zones(profile: TableProfile) -> dict[str, list[tuple[float, float]]]:
    """Stretches of each side (fractions from its first corner, clockwise) with no cushion nose."""
    L, W = profile.length_mm, profile.width_mm
    if profile.kind != "six_pocket":
        return {}
    corner = max((p.mouth_mm for p in profile.pockets if p.kind == "corner"), default=0.0) / math.sqrt(2) + 0.08 * W
    middle = max((p.mouth_mm for p in profile.pockets if p.kind == "middle"), default=0.0) / 2 + 0.04 * W
    long_skip = [(0.0, corner / L), (0.5 - middle / L, 0.5 + middle / L), (1 - corner / L, 1.0)]
    short_skip = [(0.0, corner / W), (1 - corner / W, 1.0)]
    return {"top": long_skip, "bottom": long_skip, "left": short_skip, "right": short_skip}


def _lines(sides: list[detect.SideEdges], k: np.ndarray, dist: np.ndarray, cfg: CalibrationConfig
           ) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, float], list[np.ndarray]]:
    """Robust lines through each side's undistorted edge points; their RMS (px) and inlier points."""
    lines, rms, inliers = [], {}, []
    for s in sides:
        if len(s.points_px) < 12:
            raise CalibrationError(
                f"only {len(s.points_px)} edge points found along the {s.side} cushion",
                "make sure the whole table is in view, evenly lit and not covered, or give the corners by hand (--corners)",
            )
        u = undistort_px(s.points_px, k, dist)
        c, d, keep = detect.fit_line(u)
        frac = float(keep.mean())
        if frac < cfg.min_inlier_fraction:
            raise CalibrationError(
                f"the {s.side} cushion is not straight in the picture: only {100 * frac:.0f}% of its edge points lie on one line",
                "clear the cushions (arms, cues, objects) and try another frame, or give the corners by hand (--corners)",
            )
        r = float(np.sqrt(np.mean(((u[keep] - c) @ np.array([-d[1], d[0]])) ** 2)))
        lines.append((c, d))
        rms[s.side] = r
        inliers.append(s.points_px[keep])
    return lines, rms, inliers


def _joint_lens(sides: list[detect.SideEdges], k: np.ndarray, dist: np.ndarray, hom: Homography,
                corners_mm: np.ndarray, cfg: CalibrationConfig) -> tuple[np.ndarray, np.ndarray, Homography]:
    """Homography, k1, k2 and the principal point fitted together so that every
    cushion edge point (the inliers of its side's line) maps onto its side of the playing surface
    (residuals in mm, soft-L1), with a prior keeping the principal point near the picture's centre
    (``cfg.principal_sigma`` of the width): a lens whose centre is off bends the four sides unevenly,
    which the straightness fit alone, centred on the picture, cannot follow. The focal length stays
    fixed (it only rescales k1, k2 here). Sides with too few points leave the lens as it was."""
    L, W = corners_mm[2]
    pts, axis, target = [], [], []
    for s, (ax, val) in zip(sides, ((1, 0.0), (0, L), (1, W), (0, 0.0))):
        if len(s.points_px) < 12:
            return k, dist, hom
        u = undistort_px(s.points_px, k, dist)
        _, _, keep = detect.fit_line(u)
        pts.append(s.points_px[keep])
        axis.append(np.full(keep.sum(), ax))
        target.append(np.full(keep.sum(), val))
    p = np.concatenate(pts)
    ax = np.concatenate(axis)
    tgt = np.concatenate(target)
    rows = np.arange(len(p))
    m0 = hom.matrix / hom.matrix[2, 2]
    c0 = np.array([k[0, 2], k[1, 2]])
    sigma_px = cfg.principal_sigma * 2 * c0[0]
    # Normalise pixels so the homography's parameters are of similar size.
    t = np.array([[1 / c0[0], 0, -1.0], [0, 1 / c0[0], -c0[1] / c0[0]], [0, 0, 1.0]])
    s_mm = np.diag([1 / L, 1 / L, 1.0])
    g0 = s_mm @ m0 @ np.linalg.inv(t)
    g0 = g0 / g0[2, 2]

    def unpack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        kk = k.copy()
        kk[0, 2], kk[1, 2] = c0 + x[10:12] * sigma_px
        dd = dist.copy()
        dd[0], dd[1] = x[8], x[9]
        g = np.r_[x[:8], 1.0].reshape(3, 3)
        return kk, dd, np.linalg.inv(s_mm) @ g @ t

    def resid(x: np.ndarray) -> np.ndarray:
        kk, dd, m = unpack(x)
        u = undistort_points(p.reshape(-1, 1, 2), kk, dd, kk, (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-6)).reshape(-1, 2)
        q = np.c_[u, np.ones(len(u))] @ m.T
        mm = q[:, :2] / q[:, 2:3]
        return np.r_[mm[rows, ax] - tgt, x[10:12] * prior_weight]

    prior_weight = cfg.principal_weight * np.sqrt(len(p))
    x0 = np.r_[g0.ravel()[:8], dist[0], dist[1], 0.0, 0.0]
    sol = least_squares(resid, x0, loss="soft_l1", f_scale=1.0, x_scale="jac")
    kk, dd, m = unpack(sol.x)
    log.debug("joint lens fit: principal point %s, k1 k2 %s, cost %.3g", kk[:2, 2], dd[:2], sol.cost)
    return kk, dd, Homography(m)


def _corners_from_lines(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    top, right, bottom, left = lines
    return np.array([
        detect.intersect(*left, *top), detect.intersect(*top, *right),
        detect.intersect(*right, *bottom), detect.intersect(*bottom, *left),
    ])


def _steady_focal(corners_und: np.ndarray, corners_mm: np.ndarray, principal_point: tuple[float, float],
                  jitter_px: float = 0.5, spread_limit: float = 0.2) -> float | None:
    """The focal length the corners' perspective implies (``corners_mm`` where they lie on the
    table), or None when half a pixel of noise on the corners moves it by more than
    ``spread_limit`` (a view too square-on to tell)."""
    corners_mm = np.asarray(corners_mm, float)
    f0 = focal_from_homography(Homography.from_correspondences(corners_mm, corners_und).matrix, principal_point)
    if f0 is None:
        return None
    rng = np.random.default_rng(0)
    fs = []
    for _ in range(8):
        noisy = corners_und + rng.normal(0.0, jitter_px, corners_und.shape)
        f = focal_from_homography(Homography.from_correspondences(corners_mm, noisy).matrix, principal_point)
        if f is None:
            return None
        fs.append(f)
    spread = (max(fs) - min(fs)) / f0
    return f0 if spread <= spread_limit else None


def _with_focal(k: np.ndarray, dist: np.ndarray, f: float) -> tuple[np.ndarray, np.ndarray]:
    """The camera matrix with focal length ``f`` and the radial terms rescaled so that the lens maps
    pixels exactly as before (k1 scales with f^2, k2 with f^4): undistorted pixels do not move."""
    s = f / k[0, 0]
    k2 = k.copy()
    k2[0, 0] = k2[1, 1] = f
    d = np.asarray(dist, dtype=np.float64).copy()
    d[0] *= s ** 2
    d[1] *= s ** 4
    if len(d) > 4:
        d[4] *= s ** 6
    return k2, d


def _focal_for_height(h: Homography, image_size: tuple[int, int], profile: TableProfile, height_mm: float) -> float:
    """The focal length (px) at which the camera pose from the corners has the given height."""
    w = image_size[0]

    def gap(f: float) -> float:
        _, _, c = camera_pose(h, default_camera_matrix(image_size, f), profile.length_mm, profile.width_mm)
        return c[2] - height_mm

    lo, hi = 0.1 * w, 20.0 * w
    try:
        return float(brentq(gap, lo, hi, xtol=1e-3))
    except ValueError:
        raise CalibrationError(
            f"no focal length puts the camera {height_mm:g} mm above the table for this picture",
            "check --camera-height-mm (millimetres from the cloth to the lens)",
        ) from None


def find_landmarks(image: np.ndarray, cal: Calibration, profile: TableProfile) -> dict[str, tuple[np.ndarray, float]]:
    """Pockets (six-pocket) or bed holes (bar billiards) found near where the calibration puts them:
    ``{"pocket:TL": (centre_mm found, residual_mm)}``.

    The dark blob's outline is mapped to the table and a circle fitted to it there (the table plane
    is metric, so the circle stays a circle); for a pocket only the outline beyond the line between
    its jaws counts (the cloth runs up to that line and hides the rest of the drop)."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    gray = cv2.GaussianBlur(gray, (3, 3), 0)
    items = [(f"pocket:{p.id}", p.xy_mm, p.radius_mm, p.jaws_mm) for p in profile.pockets]
    items += [(f"hole:{h.id}", h.xy_mm, h.radius_mm, None) for h in profile.holes]
    out: dict[str, tuple[np.ndarray, float]] = {}
    for name, xy, r_mm, jaws in items:
        c_px = cal.to_image_px(np.array([xy]))[0]
        edge_px = cal.to_image_px(np.array([[xy[0] + r_mm, xy[1]]]))[0]
        r_px = float(np.linalg.norm(edge_px - c_px))
        # Bed holes get a wider search: a layout measured a few centimetres off is still found.
        outline = detect.dark_blob_outline(gray, c_px, (1.6 if jaws is not None else 2.6) * r_px)
        if outline is None:
            continue
        pts = cal.to_table_mm(outline)
        if jaws is not None:
            a, b = np.asarray(jaws[0]), np.asarray(jaws[1])
            n = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
            if n @ (np.array([profile.length_mm / 2, profile.width_mm / 2]) - a) > 0:
                n = -n  # n points out of the table
            pts = pts[(pts - a) @ n > 4.0]
        if len(pts) < 8:
            continue
        centre, radius = detect.fit_circle(pts)
        for _ in range(2):  # drop outline points of whatever touches the blob (a pin, a ball, a jaw)
            off = np.abs(np.linalg.norm(pts - centre, axis=1) - radius)
            keep = off <= max(1.5, 3.0 * 1.4826 * float(np.median(off)))
            if keep.sum() < 8:
                break
            pts = pts[keep]
            centre, radius = detect.fit_circle(pts)
        if not 0.5 * r_mm <= radius <= 1.6 * r_mm:
            continue
        out[name] = (centre, float(np.linalg.norm(centre - np.asarray(xy))))
    return out


def find_pins(image: np.ndarray, cal: Calibration, profile: TableProfile) -> dict[str, tuple[np.ndarray, float]]:
    """Bar-billiards pins found near where the profile stands them:
    ``{"pin:red": (xy_mm found, residual_mm)}``.

    A standing pin is seen from above as a blob of its colour running from its base outwards to its
    head; the blob of the pin's colour nearest the expected place is taken and its centre mapped at
    half the pin's height. White pins are bright and colourless, red ones red, black ones dark; a
    pin whose colour cannot be told from the cloth (a red pin on red cloth) is not looked for."""
    if not profile.pins:
        return {}
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    h, w = image.shape[:2]
    cloth_hue = int(np.median(hsv[h * 2 // 5: h * 3 // 5, w * 2 // 5: w * 3 // 5, 0]))
    out: dict[str, tuple[np.ndarray, float]] = {}
    for pin in profile.pins:
        mid_px = cal.to_image_px(np.array([pin.xy_mm]), h_mm=pin.height_mm / 2)[0]
        reach_mm = pin.height_mm * 0.5 * 900.0 / cal.camera_height_mm + 2 * pin.radius_mm + 40.0  # a layout a few cm off
        edge_px = cal.to_image_px(np.array([[pin.xy_mm[0] + reach_mm, pin.xy_mm[1]]]), h_mm=pin.height_mm / 2)[0]
        r = int(math.ceil(np.linalg.norm(edge_px - mid_px)))
        x0, y0 = int(round(mid_px[0])) - r, int(round(mid_px[1])) - r
        xa, ya, xb, yb = max(0, x0), max(0, y0), min(w, x0 + 2 * r + 1), min(h, y0 + 2 * r + 1)
        if xb - xa < 5 or yb - ya < 5:
            continue
        win = hsv[ya:yb, xa:xb].astype(np.int32)
        hue, sat, val = win[..., 0], win[..., 1], win[..., 2]
        level = float(np.percentile(val, 50))
        if pin.colour == "white":
            mask = (sat < 60) & (val > max(1.4 * level, 120))
        elif pin.colour == "red":
            if min(cloth_hue, 180 - cloth_hue) < 15:
                continue
            mask = ((hue < 10) | (hue > 170)) & (sat > 100) & (val > 0.5 * level)
        elif pin.colour == "black":
            mask = val < 0.4 * level
        else:
            continue
        n, labels, stats, cents = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
        local = mid_px - (xa, ya)
        cands = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 6]
        if not cands:
            continue
        best = min(cands, key=lambda i: float(np.linalg.norm(cents[i] - local)))
        centre_px = cents[best] + (xa, ya)
        xy = cal.to_table_mm(centre_px[None, :], h_mm=pin.height_mm / 2)[0]
        out[f"pin:{pin.id}"] = (xy, float(np.linalg.norm(xy - np.asarray(pin.xy_mm))))
    return out


def calibrate_image(image: np.ndarray, profile: TableProfile, *, head: str | None = None,
                    focal_px: float | None = None, camera_height_mm: float | None = None,
                    camera_matrix: np.ndarray | None = None, dist_coeffs: np.ndarray | None = None,
                    config: CalibrationConfig = CalibrationConfig()) -> Calibration:
    """Automatic calibration from one BGR image (see the module docstring). Raises
    :class:`CalibrationError` with what was seen and what to do when it cannot be trusted."""
    h_img, w_img = image.shape[:2]
    size = (w_img, h_img)
    cloth = detect.find_cloth(image)
    quad, head = detect.order_quad(cloth.quad_px, head)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    skip = _skip_zones(profile)
    sides = detect.side_edges(gray, quad, config.band_fraction, skip, n=120, segments=8)
    focal_source = "given" if (focal_px or camera_matrix is not None) else "default"
    k = np.asarray(camera_matrix, float) if camera_matrix is not None else default_camera_matrix(size, focal_px)
    dist = np.zeros(5) if dist_coeffs is None else np.asarray(dist_coeffs, float).ravel()
    straight = (float("nan"), float("nan"))
    for attempt in range(2):
        if dist_coeffs is None and config.estimate_distortion:
            inl = [s.points_px[detect.bowed_inliers(s.points_px)] for s in sides if len(s.points_px) >= 12]
            dist, *straight = detect.estimate_distortion(inl, k)
        lines, rms, _ = _lines(sides, k, dist, config)
        corners_und = _corners_from_lines(lines)
        if attempt == 0:
            # Second pass: search again in a narrow band around the nose lines found.
            k_, dist_ = k, dist
            sides = detect.side_edges(gray, corners_und, 0.04, skip, outside_fraction=0.03, segments=2,
                                      warp=lambda p: distort_px(p, k_, dist_), n=config.refine_profiles,
                                      across_px=config.across_px)
    seen_mm = _seen_surface(corners_und, profile, config)
    hom = Homography.from_correspondences(corners_und, seen_mm)
    if config.joint_lens and dist_coeffs is None and camera_matrix is None and config.estimate_distortion:
        k, dist, hom = _joint_lens(sides, k, dist, hom, seen_mm, config)
        lines, rms, _ = _lines(sides, k, dist, config)
        corners_und = hom.inverse(seen_mm)
    if focal_source == "default" and not camera_height_mm:
        f_est = _steady_focal(corners_und, seen_mm, (k[0, 2], k[1, 2]))
        if f_est is not None and config.min_focal_per_width * w_img <= f_est <= config.max_focal_per_width * w_img:
            k, dist = _with_focal(k, dist, f_est)
            focal_source = "estimated"
    if camera_height_mm and focal_source == "default":
        k, dist = _with_focal(k, dist, _focal_for_height(hom, size, profile, camera_height_mm))
        focal_source = "from camera height"
    from_balls = None
    if focal_source in ("default", "estimated") and config.focal_from_balls:
        provisional = _build(size, k, dist, hom, profile, None, "automatic", focal_source, head)
        from_balls = focal_from_outlines(ball_outlines(image, provisional, profile), w_img)
        limit = config.max_focal_balls_error if focal_source == "estimated" else config.max_focal_balls_error_over_default
        if (from_balls is not None and from_balls[2] >= config.min_focal_balls and from_balls[1] <= limit * from_balls[0]
                and config.min_focal_per_width * w_img <= from_balls[0] <= config.max_focal_per_width * w_img):
            # A sphere's outline measures the angle off the axis directly; the table's perspective
            # tells it only as well as the lens model is right and the view is tilted.
            k, dist = _with_focal(k, dist, from_balls[0])
            focal_source = "balls"
    worst = max(rms, key=rms.get)
    if rms[worst] > config.max_line_rms_px:
        raise CalibrationError(
            f"the {worst} cushion's edge points scatter by {rms[worst]:.2f} px about their line (limit {config.max_line_rms_px} px)",
            "use a sharper frame with the cushions clear, or give the corners by hand (--corners)",
        )
    cal = _build(size, k, dist, hom, profile, camera_height_mm, "automatic", focal_source, head)
    found = find_landmarks(image, cal, profile)
    covered = not np.allclose(seen_mm, profile.corners_mm)
    # Under a folded scoreboard the far line is its front edge, which stands above the cloth (its
    # height is not in the profile): only the head corners fix the map then, and the holes found on the
    # open part of the table take part however far (within their search) from where the edge put them.
    fixed = slice(0, 4) if not covered else [0, 3]
    if config.refine_with_landmarks or covered:
        known = landmarks_mm(profile)
        for _ in range(2 if covered else 1):
            close = {n: xy for n, (xy, r) in found.items()
                     if (known[n][0] < seen_mm[1][0] if covered else r <= config.refine_max_mm)}
            if len(close) < 4:
                if covered:
                    raise CalibrationError(
                        f"the scoreboard is down and only {len(close)} bed holes were found on the open part of the table",
                        "calibrate from a frame with the scoreboard up (cueref calibrate) and pass it with --calibration",
                    )
                break
            # The lines fix the corners; the pockets (or holes) found near where they belong pull the
            # map where the lines had to be extrapolated (near the corners, under the pockets).
            src = np.r_[np.tile(corners_und[fixed], (3, 1)), hom.inverse(np.array(list(close.values())))]
            dst = np.r_[np.tile(seen_mm[fixed], (3, 1)), np.array([known[n] for n in close])]
            hom = Homography.from_correspondences(src, dst)
            cal = _build(size, k, dist, hom, profile, camera_height_mm, "automatic", focal_source, head)
            found = find_landmarks(image, cal, profile)
    lm = {name: round(r, 3) for name, (_, r) in found.items()}
    pins = find_pins(image, cal, profile)
    if lm and float(np.median(list(lm.values()))) > config.max_landmark_mm:
        raise CalibrationError(
            f"the {'pockets' if profile.pockets else 'holes'} found lie a median {float(np.median(list(lm.values()))):.0f} mm "
            f"from where profile {profile.name!r} puts them",
            "check the profile (table size, pocket openings, hole layout) against the real table",
        )
    return cal.with_residuals(
        landmarks_found_mm={name: [round(float(c[0]), 2), round(float(c[1]), 2)] for name, (c, _) in {**found, **pins}.items()},
        pins_mm={name: round(r, 3) for name, (_, r) in pins.items()},
        line_rms_px={side: round(v, 4) for side, v in rms.items()},
        straightness_rms_px={"before": round(straight[0], 4), "after": round(straight[1], 4)},
        landmarks_mm=lm, landmark_rms_mm=round(float(np.sqrt(np.mean(np.square(list(lm.values()))))), 3) if lm else None,
        focal_balls=None if from_balls is None else
        {"focal_px": round(from_balls[0], 1), "error_px": round(from_balls[1], 1), "balls": from_balls[2]},
    )


def _seen_surface(corners_und: np.ndarray, profile: TableProfile, config: CalibrationConfig) -> np.ndarray:
    """The table corners (mm, TL TR BR BL) the four lines found bound: the playing surface's, or, on a
    bar-billiards table in its endgame, those of the open part in front of the folded scoreboard (the
    far line is then the scoreboard's front edge, 2i), whichever shape is nearer the one seen.
    Refuses a shape that is neither (:func:`_check_aspect`)."""
    if profile.scoreboard_x_mm is not None:
        open_part = replace(profile, length_mm=profile.scoreboard_x_mm)
        seen = _aspect(corners_und)
        if abs(seen * open_part.width_mm / open_part.length_mm - 1) < abs(seen * profile.width_mm / profile.length_mm - 1):
            try:
                _check_aspect(corners_und, open_part, config)
                return np.array(open_part.corners_mm, float)
            except CalibrationError:
                pass
    _check_aspect(corners_und, profile, config)
    return np.array(profile.corners_mm, float)


def _aspect(corners_und: np.ndarray) -> float:
    c = np.asarray(corners_und)
    return float((np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3]))
                 / (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])))


def _check_aspect(corners_und: np.ndarray, profile: TableProfile, config: CalibrationConfig) -> float:
    """Refuse a profile whose length/width ratio is not the one seen; returns the seen ratio."""
    seen = _aspect(corners_und)
    want = profile.length_mm / profile.width_mm
    if abs(seen / want - 1) > config.max_aspect_error:
        raise CalibrationError(
            f"the table seen is {seen:.2f} times as long as it is wide, but profile {profile.name!r} "
            f"({profile.length_mm:g} x {profile.width_mm:g} mm) is {want:.2f}",
            "check the table size (--table LENGTHxWIDTH, the playing surface between the cushion noses, in mm)",
        )
    return seen


def _build(size: tuple[int, int], k: np.ndarray, dist: np.ndarray, hom: Homography, profile: TableProfile,
           camera_height_mm: float | None, method: str, focal_source: str, head: str | None) -> Calibration:
    """The Calibration object: camera pose by solvePnP (a given camera height wins over the pose's)."""
    _, _, centre = camera_pose(hom, k, profile.length_mm, profile.width_mm)
    if camera_height_mm:
        centre = np.array([centre[0], centre[1], float(camera_height_mm)])
    corners_und = hom.inverse(np.array(profile.corners_mm))
    return Calibration(
        image_size=size, camera_matrix=k, dist_coeffs=dist, homography=hom,
        camera_xyh_mm=(float(centre[0]), float(centre[1]), float(centre[2])),
        corners_px=distort_px(corners_und, k, dist), length_mm=profile.length_mm, width_mm=profile.width_mm,
        ball_radius_mm=profile.ball_radius_mm, profile_name=profile.name, method=method,
        residuals={"focal_source": focal_source, "head": head,
                   "aspect_profile": round(profile.length_mm / profile.width_mm, 4)},
    )


def calibrate_manual(points_px: Mapping[str, object], profile: TableProfile, image_size: tuple[int, int], *,
                     focal_px: float | None = None, camera_height_mm: float | None = None,
                     camera_matrix: np.ndarray | None = None, dist_coeffs: np.ndarray | None = None,
                     config: CalibrationConfig = CalibrationConfig()) -> Calibration:
    """Calibration from four or more named landmarks clicked or typed in pixels.

    ``points_px`` maps names of :func:`landmarks_mm` (``corner:TL``, ``pocket:TM``, ``hole:h200``,
    ``pin:red``, ``spot:centre``; a bare ``TL`` means the corner) to ``(x, y)`` pixels of the image.
    With more than four points the homography is a least-squares fit and each point's residual (mm)
    is reported; the lens is ideal unless ``camera_matrix``/``dist_coeffs`` are given."""
    known = landmarks_mm(profile)
    names, px, mm = [], [], []
    for name, xy in points_px.items():
        key = f"corner:{name}" if name in CORNERS else name
        if key not in known:
            raise CalibrationError(f"unknown landmark {name!r} for profile {profile.name!r}",
                                   f"use one of {', '.join(known)}")
        names.append(key)
        px.append(as_points(xy, f"landmark {name!r}")[0])
        mm.append(known[key])
    if len(names) < 4:
        raise CalibrationError(f"{len(names)} landmarks given; four or more are needed",
                               "give the four playing-surface corners (--corners) or more named points (--point)")
    size = (int(image_size[0]), int(image_size[1]))
    px_a, mm_a = np.array(px), np.array(mm)
    inside = (px_a[:, 0] >= -0.5) & (px_a[:, 0] <= size[0] - 0.5) & (px_a[:, 1] >= -0.5) & (px_a[:, 1] <= size[1] - 0.5)
    if not inside.all():
        bad = [n for n, ok in zip(names, inside) if not ok]
        raise CalibrationError(f"landmark(s) {', '.join(bad)} lie outside the {size[0]}x{size[1]} picture",
                               "give pixel coordinates (x = column, y = row) inside the picture")
    focal_source = "given" if (focal_px or camera_matrix is not None) else "default"
    k = np.asarray(camera_matrix, float) if camera_matrix is not None else default_camera_matrix(size, focal_px)
    dist = np.zeros(5) if dist_coeffs is None else np.asarray(dist_coeffs, float).ravel()
    und = undistort_px(px_a, k, dist)
    hom = Homography.from_correspondences(und, mm_a)
    if not hom.preserves_orientation(und.mean(axis=0)):
        raise CalibrationError("the landmarks map the table mirrored",
                               "give the corners in the order TL, TR, BR, BL (clockwise, starting at the head end's top)")
    corners_und = hom.inverse(np.array(profile.corners_mm))
    _check_aspect(corners_und, profile, config)
    if focal_source == "default" and not camera_height_mm:
        f_est = _steady_focal(corners_und, np.array(profile.corners_mm), (k[0, 2], k[1, 2]))
        if f_est is not None and config.min_focal_per_width * size[0] <= f_est <= config.max_focal_per_width * size[0]:
            k, dist = _with_focal(k, dist, f_est)
            focal_source = "estimated"
    if camera_height_mm and focal_source == "default":
        k, dist = _with_focal(k, dist, _focal_for_height(hom, size, profile, camera_height_mm))
        focal_source = "from camera height"
    cal = _build(size, k, dist, hom, profile, camera_height_mm, "manual", focal_source, None)
    res = hom.residuals(und, mm_a)
    return cal.with_residuals(
        landmarks_mm={n: round(float(r), 3) for n, r in zip(names, res)},
        landmark_rms_mm=round(float(np.sqrt(np.mean(res ** 2))), 3),
    )


def calibrate_frames(frames: Iterable[np.ndarray], profile: TableProfile, **kwargs: object) -> Calibration:
    """Automatic calibration from several frames of one fixed camera: each frame is calibrated and
    the calibration whose corners lie nearest the per-corner median is kept (a frame with an arm
    over a cushion does not spoil the result). Raises the most common refusal when none succeeds."""
    good: list[Calibration] = []
    errors: list[CalibrationError] = []
    for image in frames:
        try:
            good.append(calibrate_image(image, profile, **kwargs))
        except CalibrationError as e:
            errors.append(e)
            log.info("frame refused: %s", e)
    if not good:
        if not errors:
            raise CalibrationError("the source gave no frames", "check that the video or camera can be read")
        reasons = [e.reason for e in errors]
        raise max(errors, key=lambda e: reasons.count(e.reason))
    corners = np.array([c.corners_px for c in good])
    med = np.median(corners, axis=0)
    best = int(np.argmin(np.linalg.norm(corners - med, axis=2).max(axis=1)))
    spread = float(np.linalg.norm(corners - med, axis=2).max()) if len(good) > 1 else 0.0
    return good[best].with_residuals(frames_used=len(good), frames_refused=len(errors), corner_spread_px=round(spread, 3))


def intrinsics_from_chessboard(frames: Iterable[np.ndarray], pattern: tuple[int, int], square_mm: float = 25.0,
                               max_views: int = 40) -> tuple[np.ndarray, np.ndarray, float]:
    """Camera matrix and distortion from views of a chessboard (``pattern`` = inner corners per row
    and column) by ``cv2.calibrateCamera``: the alternative to fitting the lens from the cushions.
    Returns ``(camera_matrix, dist_coeffs (5,), rms_px)``."""
    obj = np.zeros((pattern[0] * pattern[1], 3), np.float32)
    obj[:, :2] = np.mgrid[0: pattern[0], 0: pattern[1]].T.reshape(-1, 2) * square_mm
    obj_pts, img_pts, size = [], [], None
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)
    for image in frames:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        size = gray.shape[::-1]
        ok, corners = cv2.findChessboardCorners(gray, pattern, None)
        if not ok:
            continue
        corners = cv2.cornerSubPix(gray, corners, (5, 5), (-1, -1), crit)
        obj_pts.append(obj)
        img_pts.append(corners)
        if len(obj_pts) >= max_views:
            break
    if len(obj_pts) < 3 or size is None:
        raise CalibrationError(f"the chessboard ({pattern[0]}x{pattern[1]} inner corners) was found in {len(obj_pts)} views",
                               "film the board from several angles, whole and sharp, in at least three frames")
    rms, k, dist, _, _ = cv2.calibrateCamera(obj_pts, img_pts, size, None, None)
    return k, np.asarray(dist, float).ravel()[:5], float(rms)
