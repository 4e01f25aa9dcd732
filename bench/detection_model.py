"""A documented model of what vision reports, to measure tracking and event inference on their own.

:func:`detections` turns a :class:`~bench.simtruth.TruthClip` (the exact truth of a simulated clip)
into the :class:`vision.types.FrameDetections` a detector would plausibly hand over, frame by frame.
The model is deliberately a little worse than a good detector, and every imperfection is a knob of
:class:`DetectionModel`:

* **position noise**: Gaussian, a standard deviation drawn per ball and clip between
  ``sigma_rest_mm`` (0.5 to 1.5 mm at rest), growing with speed as motion blur smears the ball
  (``blur_fraction`` of the streak the ball draws in the exposure: half a frame period, the
  renderer's 180-degree shutter) and with the part of it an occluder hides (the centroid shifts);
  now and then (``p_outlier``) an error of 5 to 15 mm;
* **misses**: a ball hidden by more than ``hide_limit`` (about half) is not found; ``p_report_hidden``
  of those are reported ``OCCLUDED`` at the place they were last seen (as a detector that keeps
  hidden balls does); others are missed at random, more often when fast (``p_miss``, ``p_miss_fast``);
* **classes**: ``class_prob`` favours the true colour; a ball is labelled uncertain (``""``) more
  often when fast or partly hidden (``p_uncertain``) and, rarely, the wrong colour (``p_confuse``);
* **false positives**: near an occluder (the cue's tip or ferrule, a hand) with ``p_false_occluder``
  per frame, and anywhere on the cloth with ``p_false_anywhere``, with a low score;
* **jumps**: a flying ball is ``AIRBORNE`` with its height (noise ``height_sigma_mm``) only when it
  is more than ``flight_min_mm`` off the cloth and its streak in the exposure is shorter than
  ``flight_max_streak_mm``; otherwise it is reported on the cloth. Vision reads a height off the
  outline's radius, which must be round (motion blur stretches it) and grown by well over its noise:
  on the rendered 720p sample ``ficha/jump`` no frame of a 65 mm jump at 2.3 m/s is read airborne, and
  vision's threshold is four times the radius noise, 25-40 mm at 1080p-720p on a bar table. A flying
  ball not read airborne is not reported beyond the playing surface (its centre less than 0.6 of a
  radius inside a cushion's nose line) outside a pocket's mouth: vision keeps no ball there. A ball
  carried by a hand, seen and more than ``airborne_min_mm`` up, is airborne;
* **parallax**: vision places a ball it reads on the cloth on the plane of a resting ball's centre, so a
  flying ball not read airborne is reported where the camera's ray through its centre meets that
  plane: pushed away from the point under the camera by its height over the camera's
  (:func:`camera_for`: a camera 1.2-2.5 m up, up to 10 degrees off the vertical, as the simulator's
  random mounts; the same place goes to the inference, as a calibration gives it);
* **pockets**: a ball in a six-pocket table's pocket is seen in the net (``IN_POCKET``, near the
  pocket) for ``p_pocket_seen`` of the pots, else not at all; a bar-billiards hole swallows it;
* **pins**: standing on the spot, moved (more than ``pin_moved_mm`` off it) or down; a wobbling pin
  is read as down for a frame with ``p_pin_wobble_down``;
* **the camera**: frames in a truth's bump spans are ``valid=False``; ``repeat_every`` = 2 repeats
  every second frame (15 fps stored as 30: ``repeated=True``), ``p_drop`` drops frames.

Occluders are handed over as the outlines :func:`bench.simtruth.occluder_polygons` draws (one per
cue, arm segment or hand; a real detector may merge touching ones into one blob).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from bench.simtruth import TruthClip, occluder_polygons
from vision.types import BallDetections, BallState, FrameDetections, PinDetections, PinState

__all__ = ["DetectionModel", "detections", "camera_for"]


@dataclass(frozen=True, slots=True)
class DetectionModel:
    sigma_rest_mm: tuple[float, float] = (0.5, 1.5)
    blur_fraction: float = 0.03
    hidden_sigma_mm: float = 3.0  # extra noise of a ball hidden up to hide_limit
    p_outlier: float = 0.002
    hide_limit: float = 0.5
    p_report_hidden: float = 0.5
    p_miss: float = 0.002
    p_miss_fast: float = 0.01  # added at 5 m/s and above
    p_uncertain: float = 0.01
    p_uncertain_fast: float = 0.05  # added at 5 m/s and above
    p_confuse: float = 0.002
    p_false_occluder: float = 0.03
    p_false_anywhere: float = 0.002
    airborne_min_mm: float = 3.0
    flight_min_mm: float = 25.0
    flight_max_streak_mm: float = 3.0
    height_sigma_mm: float = 2.0
    p_pocket_seen: float = 0.5
    pin_moved_mm: float = 2.0
    pin_sigma_mm: float = 0.7
    p_pin_wobble_down: float = 0.3
    repeat_every: int = 0
    p_drop: float = 0.0


def _classes(clip: TruthClip) -> tuple[str, ...]:
    return tuple(dict.fromkeys(b.colour for b in clip.profile.balls))


def camera_for(clip: TruthClip, seed: int) -> tuple[float, float, float]:
    """Where the camera of ``clip`` hangs, drawn from ``seed`` (its own stream: the detections' noise
    does not change with it): ``(x_mm, y_mm, height above the cloth mm)``, 1.2-2.5 m up and up to 10
    degrees off the vertical over the table's centre (:func:`simulator.camera.mount_camera`'s range)."""
    rng = np.random.default_rng([int(seed), 4321])
    height = float(rng.uniform(1200.0, 2500.0))
    off = height * math.tan(math.radians(rng.uniform(0.0, 10.0)))
    a = rng.uniform(0.0, 2 * math.pi)
    prof = clip.profile
    return (prof.length_mm / 2 + off * math.cos(a), prof.width_mm / 2 + off * math.sin(a), height)


def detections(clip: TruthClip, model: DetectionModel = DetectionModel(), seed: int = 0,
               camera_xyh_mm: tuple[float, float, float] | None = None) -> Iterator[FrameDetections]:
    """The detections of every frame of ``clip`` under ``model``, drawn from ``seed``, seen from
    ``camera_xyh_mm`` (default :func:`camera_for` the seed)."""
    cam = camera_for(clip, seed) if camera_xyh_mm is None else camera_xyh_mm
    cam_xy, cam_h = np.asarray(cam[:2], dtype=np.float64), float(cam[2])
    rng = np.random.default_rng([int(seed), 1234])
    prof = clip.profile
    classes = _classes(clip)
    k = len(classes)
    colour = {b.id: b.colour for b in prof.balls}
    cls_idx = np.array([classes.index(colour[b]) for b in clip.ball_ids])
    n = len(clip.ball_ids)
    sigma0 = rng.uniform(*model.sigma_rest_mm, size=n)
    exposure = 0.5 / clip.fps
    R = prof.ball_radius_mm
    mouths = [(np.asarray(p.xy_mm, dtype=np.float64), p.radius_mm + R) for p in prof.pockets]

    def on_surface(xy: np.ndarray) -> bool:
        """Where vision keeps a ball it sees on the cloth: the playing surface, or a pocket's mouth."""
        m = 0.6 * R
        return bool(m <= xy[0] <= prof.length_mm - m and m <= xy[1] <= prof.width_mm - m) or any(
            float(np.linalg.norm(xy - c)) <= reach for c, reach in mouths)

    last_seen = np.full((n, 2), np.nan)
    pocket_seen: dict[int, np.ndarray | None] = {}
    pocket_xy = np.array([p.xy_mm for p in prof.pockets]).reshape(-1, 2)
    spots = np.array([p.xy_mm for p in prof.pins]).reshape(-1, 2) if clip.pin_ids else np.zeros((0, 2))
    prev: FrameDetections | None = None
    L, W = prof.length_mm, prof.width_mm
    for f in range(clip.n_frames):
        t = float(clip.t_s[f])
        if model.p_drop and rng.uniform() < model.p_drop:
            continue
        if model.repeat_every and prev is not None and f % model.repeat_every == 1:
            yield FrameDetections(f, t, prev.balls, prev.pins, prev.occluders, prev.valid, repeated=True)
            continue
        valid = not any(a <= t < b for a, b in clip.invalid)
        polys = tuple(poly for o in clip.occluders[f] for poly in occluder_polygons(o))
        rows: list[tuple] = []  # (xy, height, state, class index or -1 for a false one, score, speed, hidden)
        st = clip.status[f]
        for i in range(n):
            code = st[i]
            if code in "TAH":
                xy = clip.xy[f, i]
                hid = clip.hidden[f, i]
                speed = clip.speed[f, i]
                if hid > model.hide_limit:
                    if np.isfinite(last_seen[i, 0]) and rng.uniform() < model.p_report_hidden:
                        rows.append((last_seen[i].copy(), 0.0, BallState.OCCLUDED, cls_idx[i], 0.6, 0.0, hid))
                    continue
                fast = min(speed / 5000.0, 1.0)
                if rng.uniform() < model.p_miss + model.p_miss_fast * fast:
                    continue
                sigma = math.hypot(sigma0[i], model.blur_fraction * speed * exposure) + model.hidden_sigma_mm * hid / model.hide_limit
                z = xy + rng.normal(0.0, sigma, 2)
                if rng.uniform() < model.p_outlier:
                    a = rng.uniform(0, 2 * math.pi)
                    z = z + rng.uniform(5, 15) * np.array([math.cos(a), math.sin(a)])
                height = clip.h[f, i]
                if code == "A":  # flying: read only when high and nearly still (a round outline)
                    air = height > model.flight_min_mm and speed * exposure < model.flight_max_streak_mm
                    if not air:
                        # placed on the plane of a resting ball's centre: pushed away from under the camera
                        lift = (cam_h - R) / max(cam_h - R - height, 1.0)
                        z = cam_xy + (z - cam_xy) * lift
                        if not on_surface(cam_xy + (xy - cam_xy) * lift):
                            continue
                else:
                    air = height > model.airborne_min_mm
                rows.append((z, max(height + rng.normal(0, model.height_sigma_mm), 0.0) if air else 0.0,
                             BallState.AIRBORNE if air else BallState.VISIBLE, cls_idx[i], float(rng.uniform(0.8, 1.0)), speed, hid))
                last_seen[i] = z
            elif code == "P" and len(pocket_xy):
                if i not in pocket_seen:
                    j = int(np.argmin(np.linalg.norm(pocket_xy - last_seen[i], axis=1))) if np.isfinite(last_seen[i, 0]) else 0
                    pocket_seen[i] = pocket_xy[j] + rng.normal(0, 8.0, 2) if rng.uniform() < model.p_pocket_seen else None
                if pocket_seen[i] is not None:
                    rows.append((pocket_seen[i] + rng.normal(0, 2.0, 2), 0.0, BallState.IN_POCKET, cls_idx[i], 0.7, 0.0, 0.0))
            if code != "P":
                pocket_seen.pop(i, None)
        # false positives
        if polys and rng.uniform() < model.p_false_occluder:
            anchor = polys[int(rng.integers(len(polys)))][0] + rng.normal(0, 25.0, 2)
            if 0 <= anchor[0] <= L and 0 <= anchor[1] <= W:  # vision only reports what lies on the cloth
                rows.append((anchor, 0.0, BallState.VISIBLE, -1, float(rng.uniform(0.3, 0.7)), 0.0, 0.0))
        if rng.uniform() < model.p_false_anywhere:
            rows.append((np.array([rng.uniform(0, L), rng.uniform(0, W)]), 0.0, BallState.VISIBLE, -1,
                         float(rng.uniform(0.3, 0.6)), 0.0, 0.0))
        m = len(rows)
        prob = np.zeros((m, k), dtype=np.float32)
        label = np.empty(m, dtype=object)
        for r, row in enumerate(rows):
            c, speed, hid = row[3], row[5], row[6]
            fast = min(speed / 5000.0, 1.0)
            if c < 0:
                c = int(rng.integers(k))
                p_true = float(rng.uniform(0.4, 0.7))
            elif rng.uniform() < model.p_confuse and k > 1:
                c = int((c + rng.integers(1, k)) % k)
                p_true = float(rng.uniform(0.5, 0.7))
            elif rng.uniform() < model.p_uncertain + model.p_uncertain_fast * fast + 0.2 * hid:
                p_true = float(rng.uniform(0.35, 0.55))
            else:
                p_true = float(rng.uniform(0.85, 0.99))
            rest = rng.dirichlet(np.ones(max(k - 1, 1))) * (1 - p_true) if k > 1 else np.zeros(0)
            row_p = np.insert(rest, c, p_true) if k > 1 else np.array([1.0])
            prob[r] = row_p[:k]
            label[r] = classes[c] if p_true >= 0.6 else ""
        balls = BallDetections(
            frame=f, t_s=t, classes=classes,
            xy_mm=np.array([r[0] for r in rows], dtype=np.float64).reshape(m, 2),
            xy_px=np.zeros((m, 2)), radius_px=np.full(m, 10.0),
            height_mm=np.array([r[1] for r in rows], dtype=np.float64),
            label=label, class_prob=prob,
            score=np.array([r[4] for r in rows], dtype=np.float32),
            state=np.array([int(r[2]) for r in rows], dtype=np.uint8),
        )
        pins = PinDetections.empty()
        if clip.pin_ids:
            p = len(clip.pin_ids)
            pst = np.zeros(p, dtype=np.uint8)
            pxy = np.full((p, 2), np.nan)
            for j in range(p):
                if not clip.pin_standing[f, j]:
                    pst[j] = PinState.DOWN
                    continue
                q = clip.pin_xy[f, j] + rng.normal(0, model.pin_sigma_mm, 2)
                pxy[j] = q
                moved = np.linalg.norm(clip.pin_xy[f, j] - spots[j]) > model.pin_moved_mm
                pst[j] = PinState.MOVED if moved else PinState.STANDING
                if clip.pin_tilt[f, j] > 0.15 and rng.uniform() < model.p_pin_wobble_down:
                    pst[j], pxy[j] = PinState.DOWN, np.nan
            pins = PinDetections(clip.pin_ids, pxy, pst, np.full(p, 0.9, dtype=np.float32))
        det = FrameDetections(f, t, balls, pins, polys, valid)
        prev = det
        yield det
