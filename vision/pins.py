"""Bar-billiards pins: standing on their spot, standing elsewhere (moved), or down.

Seen from above, a standing pin is a short blob from its base to its head (the head lies outwards of
the base by the pin's parallax); a fallen pin lies on the cloth, a blob as long as the pin is tall.
Around each pin's spot the foreground (against the cloth background, at full resolution in a small
window) is cut into blobs; the blob nearest the spot is the pin. Its length along its main axis,
measured on the table, tells standing from down; for a standing pin, the point of the blob that is
nearest the camera's foot (the base: the head is seen further out) tells where it stands.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.table import TableProfile
from vision.geometry import TableView
from vision.types import PinDetections, PinState

__all__ = ["PinWatcher"]

MOVED_MM = 5.0  # a standing pin whose base is this far from its spot has moved (a push of a few mm is not seen reliably)


class PinWatcher:
    """Finds the state of every pin of ``profile`` in each frame."""

    def __init__(self, profile: TableProfile, view: TableView, scale: int):
        self.profile, self.view, self.scale = profile, view, scale
        self.ids = tuple(p.id for p in profile.pins)
        cal = view.cal
        self._win = []
        for p in profile.pins:
            reach = p.height_mm + 3 * p.radius_mm + 10.0
            a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            ring = np.asarray(p.xy_mm) + reach * np.stack([np.cos(a), np.sin(a)], -1)
            px = cal.to_image_px(ring)
            x0, y0 = np.floor(px.min(axis=0)).astype(int)
            x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 1
            w, h = cal.image_size
            box = (max(0, x0), max(0, y0), min(w, x1), min(h, y1))
            base = cal.to_image_px(np.array([p.xy_mm]))[0]
            head = cal.to_image_px(np.array([p.xy_mm]), h_mm=p.height_mm)[0]
            standing_len = float(np.linalg.norm(cal.to_table_mm(head[None]) - cal.to_table_mm(base[None]))) + 2 * p.radius_mm
            self._win.append((box, standing_len))

    def detect(self, image: np.ndarray, score: np.ndarray, low: np.ndarray) -> PinDetections:
        """Pin states from the frame (full resolution) and its foreground score (low resolution)."""
        n = len(self.ids)
        xy = np.full((n, 2), np.nan)
        state = np.full(n, PinState.DOWN, np.uint8)
        conf = np.zeros(n, np.float32)
        cal = self.view.cal
        s = self.scale
        for i, pin in enumerate(self.profile.pins):
            (x0, y0, x1, y1), standing_len = self._win[i]
            if x1 - x0 < 4 or y1 - y0 < 4:
                continue
            lx0, ly0 = x0 // s, y0 // s
            lx1, ly1 = min(score.shape[1], -(-x1 // s)), min(score.shape[0], -(-y1 // s))
            sub = score[ly0:ly1, lx0:lx1]
            if sub.size == 0:
                continue
            # the low-res score, read back at full resolution over the window
            fg = cv2.resize(sub, ((lx1 - lx0) * s, (ly1 - ly0) * s), interpolation=cv2.INTER_LINEAR)
            fg = fg[y0 - ly0 * s: y1 - ly0 * s, x0 - lx0 * s: x1 - lx0 * s] >= 1.0
            m, lab, stats, cents = cv2.connectedComponentsWithStats(fg.astype(np.uint8), connectivity=8)
            if m <= 1:
                conf[i] = 0.6  # nothing there: the pin is down and gone from view, or off its spot
                continue
            spot = cal.to_image_px(np.array([pin.xy_mm]), h_mm=pin.height_mm / 2)[0] - (x0, y0)
            d = np.linalg.norm(cents[1:] - spot, axis=1)
            k = 1 + int(np.argmin(d))
            ys, xs = np.nonzero(lab == k)
            pts_mm = cal.to_table_mm(np.c_[xs + x0, ys + y0].astype(np.float64), pin.radius_mm)
            centre = pts_mm.mean(axis=0)
            if len(pts_mm) >= 3:
                _, vecs = np.linalg.eigh(np.cov((pts_mm - centre).T))
                along = (pts_mm - centre) @ vecs[:, -1]
                length = float(along.max() - along.min())
            else:
                length = 0.0
            down_len = pin.height_mm + 1.6 * pin.radius_mm
            cut = 0.5 * (standing_len + down_len)
            if length >= cut:
                state[i] = PinState.DOWN
                xy[i] = centre
                conf[i] = float(min(1.0, (length - cut) / max(down_len - cut, 1.0) * 0.5 + 0.5))
                continue
            # standing: the base is the blob's end nearest the camera's foot
            foot = np.asarray(cal.camera_xyh_mm[:2])
            towards = foot - centre
            towards /= max(float(np.linalg.norm(towards)), 1e-9)
            proj = (pts_mm - centre) @ towards
            base = centre + towards * (float(np.percentile(proj, 95)) - pin.radius_mm)
            xy[i] = base
            moved = float(np.linalg.norm(base - np.asarray(pin.xy_mm))) > MOVED_MM
            state[i] = PinState.MOVED if moved else PinState.STANDING
            conf[i] = float(min(1.0, 0.5 + (cut - length) / max(cut, 1.0)))
        return PinDetections(self.ids, xy, state, conf)
