"""Drawing what the detector saw on a frame: outlines, classes, states, occluders and pins."""

from __future__ import annotations

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.table import NAMED_COLOURS
from vision.types import UNCERTAIN, BallState, FrameDetections, PinState

__all__ = ["draw_detections"]

_SHIFT = 4
_ONE = 1 << _SHIFT
_STATE_TAG = {BallState.VISIBLE: "", BallState.OCCLUDED: " (hidden)", BallState.AIRBORNE: " (air {h:.0f} mm)",
              BallState.IN_POCKET: " (in pocket)"}
_AROUND = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1), (-1, 1), (1, -1))
_PIN_TAG = {PinState.STANDING: "up", PinState.MOVED: "moved", PinState.DOWN: "DOWN"}


def _bgr(name: str) -> tuple[int, int, int]:
    rgb = NAMED_COLOURS.get(name, (255, 0, 255))
    return (rgb[2], rgb[1], rgb[0])


def _fx(p: np.ndarray) -> tuple[int, int]:
    return int(round(float(p[0]) * _ONE)), int(round(float(p[1]) * _ONE))


def _text(img: np.ndarray, text: str, org: tuple[int, int], scale: float, colour: tuple[int, int, int]) -> None:
    # the black outline is the text drawn thin one pixel off in eight directions: cv2.putText spaces
    # the letters by the stroke's thickness, so a thick outline drifts away from the thin text
    for dx, dy in _AROUND:
        cv2.putText(img, text, (org[0] + dx, org[1] + dy), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv2.LINE_AA)


def draw_detections(image: np.ndarray, dets: FrameDetections, calibration: Calibration | None = None,
                    pin_spots_mm: np.ndarray | None = None) -> np.ndarray:
    """A copy of ``image`` with the detections drawn: each ball's outline in its class's colour
    (magenta when uncertain) with its label, dashed when occluded; occluders hatched in orange; pins
    with their state; a frame marked unreadable in red."""
    out = image.copy()
    h, w = out.shape[:2]
    scale = max(0.35, min(1.0, w / 2400))
    if calibration is not None and dets.occluders:
        over = out.copy()
        polys = [np.round(calibration.to_image_px(p, calibration.ball_radius_mm) * _ONE).astype(np.int32) for p in dets.occluders]
        cv2.fillPoly(over, polys, (0, 140, 255), cv2.LINE_AA, _SHIFT)
        cv2.addWeighted(over, 0.35, out, 0.65, 0, out)
        cv2.polylines(out, polys, True, (0, 140, 255), 1, cv2.LINE_AA, _SHIFT)
    b = dets.balls
    for i in range(len(b)):
        label = str(b.label[i])
        colour = _bgr(label) if label != UNCERTAIN else (255, 0, 255)
        c, r = b.xy_px[i], float(b.radius_px[i])
        state = BallState(int(b.state[i]))
        thick = 1 if state == BallState.OCCLUDED else 2
        cv2.circle(out, _fx(c), int(round(r * _ONE)), (0, 0, 0), thick + 2, cv2.LINE_AA, _SHIFT)
        cv2.circle(out, _fx(c), int(round(r * _ONE)), colour, thick, cv2.LINE_AA, _SHIFT)
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), colour, cv2.MARKER_CROSS, max(3, int(r * 0.3)), 1)
        name = label if label != UNCERTAIN else "?"
        tag = _STATE_TAG[state].format(h=float(b.height_mm[i]))
        _text(out, f"{name}{tag}", (int(c[0] + r + 2), int(c[1] - r * 0.3)), 0.5 * scale + 0.15, colour)
    if calibration is not None and len(dets.pins):
        p = dets.pins
        for i, pid in enumerate(p.ids):
            state = PinState(int(p.state[i]))
            where = p.xy_mm[i] if np.all(np.isfinite(p.xy_mm[i])) else (pin_spots_mm[i] if pin_spots_mm is not None else None)
            if where is None:
                continue
            px = calibration.to_image_px(np.asarray(where, dtype=np.float64)[None])[0]
            col = (0, 0, 255) if state == PinState.DOWN else ((0, 200, 255) if state == PinState.MOVED else (255, 255, 0))
            cv2.drawMarker(out, (int(round(px[0])), int(round(px[1]))), col, cv2.MARKER_DIAMOND, 12, 2)
            _text(out, f"pin {pid} {_PIN_TAG[state]}", (int(px[0]) + 8, int(px[1]) + 14), 0.45 * scale + 0.15, col)
    if not dets.valid:
        _text(out, "table not readable (camera moved or hidden)", (20, 40), 0.9 * scale + 0.3, (0, 0, 255))
    _text(out, f"frame {dets.frame}  {dets.t_s:.3f} s  {int(np.sum(b.state != BallState.OCCLUDED))} balls"
          + ("  (repeat)" if dets.repeated else ""), (10, h - 12), 0.5 * scale + 0.2, (255, 255, 255))
    return out
