"""Bar-billiards pins: standing on their spot, standing elsewhere (moved), or down.

The pins stand on their spots when the video starts (a frame of bar billiards begins so), so the
first frame shows what each standing pin looks like from this camera: a short blob from its base to
its head, the head further from the camera's foot by the pin's parallax. That picture, small and at
full resolution, is kept as the pin's template; its footprint is the capsule the calibration
predicts from the base to the head.

Each frame, the footprint is compared with the template (the same shadow-tolerant test as the
cloth background, with the frame's brightness divided out):

* the footprint looks as it did: **standing** on the spot;
* it does not: the pin has fallen, moved, or is hidden. Round the spot the foreground against the
  cloth background (which does not know the pin: it learnt the pin's spot as the pin) is cut into
  blobs. A blob as long as the pin is tall, lying on the cloth, is a **fallen** pin (``xy_mm`` its
  middle); a short blob of a standing pin's size beside the spot is a pin **moved** there (``xy_mm``
  from its blob, offset as the template's blob is from the spot); nothing: the pin keeps the state it
  had (a hand over it, or a fallen pin the background has since absorbed).

A new state must hold for a few frames before it is reported: a hit pin wobbles, its head swinging
a couple of centimetres, and a ball rolling past covers the footprint for a frame or two.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.table import TableProfile
from vision.geometry import TableView
from vision.types import PinDetections, PinState

__all__ = ["PinWatcher", "MOVED_MM"]

MOVED_MM = 5.0  # a standing pin whose base is this far from its spot has moved (a push of a few mm is not seen reliably)
_CONFIRM = {PinState.STANDING: 3, PinState.MOVED: 6, PinState.DOWN: 3}  # frames a new state must hold
_MATCH = 0.88  # normalised correlation with the standing template above which the pin stands (fallen: ~0.7-0.8)
_NEAR_PX = 4  # a standing pin's template is first looked for this far (px) round its spot's corner


def _near(grey: np.ndarray, tmpl: np.ndarray, mask: np.ndarray, at: np.ndarray) -> tuple[float, tuple[int, int]] | None:
    """The best masked normalised correlation of ``tmpl`` within ``_NEAR_PX`` of the corner ``at``
    (px of ``grey``) and where, when that best is inside the window (None when it lies on its edge:
    the peak is further off)."""
    th, tw = tmpl.shape
    cx, cy = (int(v) for v in np.round(at))
    x0, y0 = max(0, cx - _NEAR_PX), max(0, cy - _NEAR_PX)
    x1, y1 = min(grey.shape[1], cx + _NEAR_PX + tw), min(grey.shape[0], cy + _NEAR_PX + th)
    if x1 - x0 < tw or y1 - y0 < th:
        return None
    best, (bx, by) = _correlate(grey[y0:y1, x0:x1], tmpl, mask)
    on_edge = (bx == 0 and x0 > 0) or (by == 0 and y0 > 0) or \
        (bx == x1 - x0 - tw and x1 < grey.shape[1]) or (by == y1 - y0 - th and y1 < grey.shape[0])
    return None if on_edge else (best, (x0 + bx, y0 + by))


def _correlate(grey: np.ndarray, tmpl: np.ndarray, mask: np.ndarray) -> tuple[float, tuple[int, int]]:
    """The best masked normalised correlation of ``tmpl`` in ``grey`` and where (its corner)."""
    found = cv2.matchTemplate(grey, tmpl, cv2.TM_CCOEFF_NORMED, mask=mask)
    _, best, _, loc = cv2.minMaxLoc(np.nan_to_num(found, nan=-1.0, posinf=-1.0, neginf=-1.0))
    return best, loc


class PinWatcher:
    """Finds the state of every pin of ``profile`` in each frame."""

    def __init__(self, profile: TableProfile, view: TableView, scale: int):
        self.profile, self.view, self.scale = profile, view, scale
        self.ids = tuple(p.id for p in profile.pins)
        n = len(self.ids)
        cal = view.cal
        w, h = cal.image_size
        self._spot = np.array([p.xy_mm for p in profile.pins], dtype=np.float64).reshape(n, 2)
        self._box, self._footprint = [], []
        for i, p in enumerate(profile.pins):
            reach = p.height_mm + 3 * p.radius_mm + 10.0
            a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            ring = cal.to_image_px(np.asarray(p.xy_mm) + reach * np.stack([np.cos(a), np.sin(a)], -1))
            x0, y0 = np.maximum(np.floor(ring.min(axis=0)).astype(int), 0)
            x1, y1 = np.minimum(np.ceil(ring.max(axis=0)).astype(int) + 1, (w, h))
            self._box.append((int(x0), int(y0), int(x1), int(y1)))
            base = cal.to_image_px(np.array([p.xy_mm]))[0]
            head = cal.to_image_px(np.array([p.xy_mm]), h_mm=p.height_mm)[0]
            r_px = p.radius_mm * view.radius_at_px(base[None])[0] / view.r_mm
            mask = np.zeros((max(1, y1 - y0), max(1, x1 - x0)), np.uint8)
            cv2.line(mask, tuple(np.round(base - (x0, y0)).astype(int)), tuple(np.round(head - (x0, y0)).astype(int)), 1,
                     max(1, int(round(1.4 * r_px))))
            self._footprint.append(mask.astype(bool))
        # grey patch, its corner from the anchor, the pin's pixels in it
        self._template: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * n
        self._anchor = np.array([cal.to_image_px(np.array([p.xy_mm]), h_mm=p.height_mm / 2)[0] for p in profile.pins]).reshape(n, 2)
        self._started = False
        self._last_match: list[tuple | None] = [None] * n  # per pin: template, picture, mask and answer of its last match
        self._blob_offset = np.zeros((n, 2))
        self._state = np.full(n, PinState.STANDING, np.uint8)
        self._xy = self._spot.copy()
        self._score = np.full(n, 0.5, np.float32)
        self._pending = np.full(n, PinState.STANDING, np.uint8)
        self._pending_count = np.zeros(n, int)

    def start(self, image: np.ndarray) -> None:
        """Keep what each standing pin without a template looks like in this frame (a pin not
        standing gets none: it can only be found fallen until one is kept)."""
        for i, (x0, y0, x1, y1) in enumerate(self._box):
            ys, xs = np.nonzero(self._footprint[i])
            if self._template[i] is not None or self._state[i] != PinState.STANDING or len(ys) == 0:
                continue
            m = 4
            ty0, tx0 = max(0, ys.min() - m), max(0, xs.min() - m)
            grey = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
            self._template[i] = (grey[ty0:ys.max() + m + 1, tx0:xs.max() + m + 1].copy(),
                                 np.array([x0 + tx0, y0 + ty0], dtype=np.float64) - self._anchor[i],
                                 cv2.dilate(self._footprint[i].astype(np.uint8), np.ones((5, 5), np.uint8))[
                                     ty0:ys.max() + m + 1, tx0:xs.max() + m + 1])
        self._started = True

    def inherit(self, old: "PinWatcher") -> None:
        """Carry the pins' states and looks over from the watcher of the camera's previous view (a
        small move: the pins look the same, only elsewhere in the picture)."""
        self._state, self._xy, self._score = old._state.copy(), old._xy.copy(), old._score.copy()
        self._template = list(old._template)

    def detect(self, image: np.ndarray, score: np.ndarray, balls_px: np.ndarray, balls_r: np.ndarray,
               changed: np.ndarray | None = None) -> PinDetections:
        """Pin states from the frame (full resolution), its foreground score against the cloth
        background (shrunk picture) and the balls found (centres (n, 2), radii (n,), px: a ball
        against a pin hides part of it). ``changed`` (bool, the shrunk picture): where the picture
        changed since it was last examined; a pin with no change round it, and no new state waiting
        to be confirmed, stands as it was (its template match, a few milliseconds, is not made)."""
        if not self._started:
            self.start(image)
        for i, pin in enumerate(self.profile.pins):
            x0, y0, x1, y1 = self._box[i]
            if changed is not None and not self._pending_count[i]:
                s = self.scale
                if not changed[y0 // s:y1 // s + 1, x0 // s:x1 // s + 1].any():
                    continue
            if self._template[i] is None:
                self._observe(i, PinState.DOWN, self._fallen_at(i, pin, score), 0.5)
                continue
            tmpl, offset, fp = self._template[i]
            corner = self._anchor[i] + offset  # the template's corner when the pin stands on its spot
            mask = fp.astype(np.float32)
            for (bx, by), br in zip(balls_px, balls_r):  # a ball against the pin hides part of it
                cv2.circle(mask, (int(round(bx - corner[0])), int(round(by - corner[1]))), int(round(br * 1.15)), 0.0, -1)
            if mask.sum() < 0.6 * fp.sum():
                continue  # too much of it is behind a ball to tell
            grey = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
            if grey.shape[0] < tmpl.shape[0] or grey.shape[1] < tmpl.shape[1]:
                continue
            best, (bx, by) = self._match(i, grey, tmpl, mask, corner - (x0, y0))
            if best >= _MATCH:
                shift_px = np.array([x0 + bx, y0 + by], dtype=np.float64) - corner
                centre_px = corner + (tmpl.shape[1] / 2, tmpl.shape[0] / 2)
                mm_per_px = self.view.r_mm / float(self.view.radius_at_px(centre_px[None])[0])
                moved_mm = float(np.linalg.norm(shift_px)) * mm_per_px
                xy = self.view.cal.to_table_mm((centre_px + shift_px)[None], pin.height_mm / 2)[0] - (
                    self.view.cal.to_table_mm(centre_px[None], pin.height_mm / 2)[0] - self._spot[i])
                state = PinState.MOVED if moved_mm > MOVED_MM else PinState.STANDING
                self._observe(i, state, xy if state == PinState.MOVED else self._spot[i], float(best))
            else:
                self._observe(i, PinState.DOWN, self._fallen_at(i, pin, score), float(1.0 - best))
        return PinDetections(self.ids, self._xy.copy(), self._state.copy(), self._score.copy())

    def _match(self, i: int, grey: np.ndarray, tmpl: np.ndarray, mask: np.ndarray, at: np.ndarray) -> tuple[float, tuple[int, int]]:
        """The best normalised correlation of pin ``i``'s template ``tmpl`` (its pixels ``mask``) in
        ``grey``, and where (the corner, px of ``grey``); ``at``: the corner where the pin standing
        on its spot would put it (px of ``grey``). A masked correlation's cost grows with the places
        it is made at (about 1.6 ms for the 22 000 of a pin's box at 1080p): it is first made only
        within ``_NEAR_PX`` of ``at`` (a pin that stands, as pins mostly do, peaks there); when that
        peak is too weak or on the window's edge (the pin is further off, or down), the whole box is
        searched at half size and the best place found there is looked at again at full size (the
        whole box at full size only when neither window has its peak inside). When the picture and
        the mask are those of the pin's last match, bit for bit (a still picture: video codecs repeat
        what does not move), the last answer is given again."""
        last = self._last_match[i]
        if last is not None and last[0] is tmpl and np.array_equal(last[1], grey) and np.array_equal(last[2], mask):
            return last[3]
        answer = _near(grey, tmpl, mask, at)
        if answer is None or answer[0] < _MATCH:  # not standing on its spot: anywhere round it, half size first
            half = (cv2.pyrDown(tmpl), cv2.resize(mask, ((tmpl.shape[1] + 1) // 2, (tmpl.shape[0] + 1) // 2), interpolation=cv2.INTER_AREA))
            _, loc = _correlate(cv2.pyrDown(grey), *half)
            there = _near(grey, tmpl, mask, 2 * np.asarray(loc, dtype=np.float64))
            if there is not None and (answer is None or there[0] > answer[0]):
                answer = there
            if answer is None:
                answer = _correlate(grey, tmpl, mask)
        self._last_match[i] = (tmpl, grey, mask, answer)
        return answer

    def _fallen_at(self, i: int, pin, score: np.ndarray) -> np.ndarray:
        """Where a fallen pin lies: the middle of the foreground blob nearest its spot (on the
        cloth, a pin's radius up), or its spot when nothing is seen."""
        cal, s = self.view.cal, self.scale
        x0, y0, x1, y1 = (v // s for v in self._box[i])
        fg = (score[y0:y1 + 1, x0:x1 + 1] >= 1.0).astype(np.uint8)
        m, lab, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
        if m <= 1:
            return self._spot[i].copy()
        spot_px = (cal.to_image_px(self._spot[i][None])[0] + 0.5) / s - 0.5 - (x0, y0)
        best = 1 + int(np.argmin(np.linalg.norm(cents[1:] - spot_px, axis=1)))
        return cal.to_table_mm(((cents[best] + (x0, y0) + 0.5) * s - 0.5)[None], pin.radius_mm)[0]

    def pending(self) -> bool:
        """Whether a pin's new state is waiting to be confirmed by more frames."""
        return bool((self._pending_count > 0).any())

    def _observe(self, i: int, state: PinState, xy: np.ndarray, confidence: float) -> None:
        """One frame's reading of pin ``i``; a new state is taken once it has held for its
        confirmation frames."""
        if state == self._state[i]:
            self._pending_count[i] = 0
            self._xy[i] = xy
            self._score[i] = confidence
            return
        if state != self._pending[i]:
            self._pending[i], self._pending_count[i] = state, 0
        self._pending_count[i] += 1
        if self._pending_count[i] >= _CONFIRM[PinState(state)]:
            self._state[i], self._xy[i], self._score[i] = state, xy, confidence
            self._pending_count[i] = 0
