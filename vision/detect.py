"""The detector: every ball (and pin) in every frame, named by colour and placed in table millimetres.

Per frame (:meth:`Detector.detect`):

1. the picture is shrunk so that a ball's radius is about ``search_radius_px`` (one ``cv2.resize``);
   an exact repeat of the previous frame is reported as such, with no new work;
2. the shrunk picture is compared with the one the current detections were made on: where nothing
   has changed, the balls found there stand as they were (a ball at rest costs nothing); if nothing
   changed at all, the frame costs the resize and the comparison;
3. where something changed, the cloth background gives a foreground score (:mod:`vision.background`)
   and ball candidates are the peaks of a centre-surround response on it (a ball-sized box mostly
   foreground, its surround mostly not: a cue or an arm is foreground all round), plus the balls that
   were there;
4. each candidate's outline is fitted in two passes (:mod:`vision.balls`); a candidate is a ball when
   enough of its outline is found, at the predicted radius, round a foreground core;
5. the outline's centre becomes table millimetres through the calibration, with the outline's small
   outward offset removed (:mod:`vision.geometry`); a larger than predicted outline means a ball in
   the air, and how high;
6. colour classes (:mod:`vision.colour`), pins (:mod:`vision.pins`), occluders (foreground left over
   once the balls are taken out), balls that were there and are now under an occluder
   (``OCCLUDED``), balls in a pocket's net (``IN_POCKET``);
7. the background learns the cloth where nothing is.

Every few seconds the whole table is examined afresh, whatever changed.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import deque
from dataclasses import replace

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.numeric import clip, median
from calibration.table import TableProfile
from vision.background import ClothBackground, channel_sum
from vision.balls import BallFits, fine_band, fit_balls, sample_core
from vision.colour import FAR, FOREIGN, ColourModel, summarise_colours
from vision.config import DetectorConfig
from vision.fit import chroma_offsets, ray_directions, sample_rays
from vision.geometry import TableView
from vision.pins import PinWatcher
from vision.types import BallDetections, BallState, FrameDetections, PinDetections, PinState

__all__ = ["Detector"]

log = logging.getLogger(__name__)

_REFRESH_S = 2.0  # seconds between examinations of the whole table
_UNSETTLED_FRAMES = 5  # after a recalibration, frames in which no streak is looked for
_RECENT_S = 0.5  # how long a ball's passing keeps a pocket's mouth open to partial outlines (_by_pockets)
_MAINTAIN_S = 0.5  # seconds between checks for uncovered cloth
_CHANGE_GREY = 30  # grey levels (summed over the channels, shrunk picture) that count as a change, well above noise


class Detector:
    """Finds the balls and pins of ``profile``'s table in frames seen through ``calibration``.

    Call :meth:`detect` on every frame, in order (it keeps the cloth background, the colour classes
    and the balls it saw); call :meth:`recalibrate` when the camera has moved."""

    def __init__(self, profile: TableProfile, calibration: Calibration, config: DetectorConfig | None = None):
        self.profile = profile
        self.cfg = config or DetectorConfig()
        self.colours = ColourModel(profile, self.cfg)
        self.classes = self.colours.classes
        self.radius_scale = 1.0  # found / predicted outline radius, learnt on resting balls
        self._class_scale = np.ones(len(self.classes))  # the same, per colour class
        self._class_seen = np.zeros(len(self.classes))  # frames each class's scale was learnt from
        self._scale_seen = 0  # frames the overall scale was learnt from
        self.chroma_shift = np.zeros(2)  # where the video's colour lies off its brightness, px (measured on the balls)
        self._chroma_sums = (np.zeros((2, 2)), np.zeros(2))  # its least squares, until enough balls are measured
        self._chroma_seen = 0  # balls it was measured on
        self._chroma_looks = 0  # balls looked at for it (it is given up after ten times as many as it needs)
        self._cal = calibration
        self._view: TableView | None = None
        self._bg: ClothBackground | None = None
        self._pins: PinWatcher | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self._prev: FrameDetections | None = None
        self._prev_low: np.ndarray | None = None
        self._ref_low: np.ndarray | None = None  # the picture the standing detections were made on
        self._still = np.zeros(0, bool)  # per ball of the previous frame: seen at rest (in the same place twice)
        self._new_still = np.zeros(0, bool)
        self._soft = np.zeros(0, bool)  # per ball of the previous frame: found as a blob, not by its outline
        self._rest = np.zeros((0, 2))  # per ball of the previous frame: how many outline fits its place averages; 1 if it stood unchanged
        self._last_t: float | None = None
        self._last_full_t = -math.inf
        self._last_maintain_t = -math.inf
        self._occ: list[tuple[np.ndarray, tuple[int, int, int, int]]] = []  # occluders, with their boxes
        self._moved: deque[tuple[float, np.ndarray]] = deque()  # (t_s, full px (n, 2)): balls looked at again lately
        self._unsettled = 0  # frames left after a camera move in which a smeared ball is not taken for a fast one

    # ---- set-up ------------------------------------------------------------------------------
    @property
    def calibration(self) -> Calibration:
        return self._cal

    def recalibrate(self, calibration: Calibration) -> None:
        """The camera moved (``calibration.monitor.CalibrationKeeper`` found the table again): follow
        it with the background and the balls when the move is small, start afresh when it is not."""
        old_view, old_bg, prev, old_pins = self._view, self._bg, self._prev, self._pins
        self._cal = calibration
        if old_view is None or old_bg is None or not old_bg.ready:
            self._view = None
            return
        shift = float(np.abs(np.asarray(calibration.corners_px) - np.asarray(old_view.cal.corners_px)).max())
        self._setup(calibration)
        if old_pins is not None and self._pins is not None:
            self._pins.inherit(old_pins)
        small = shift <= 0.05 * max(calibration.image_size) and calibration.image_size == old_view.cal.image_size
        self._unsettled = _UNSETTLED_FRAMES
        if not small:
            self._reset_state()
            return
        s = self._scale
        corners_mm = np.array(self.profile.corners_mm, dtype=np.float64)
        old_px = (old_view.cal.to_image_px(corners_mm) + 0.5) / s - 0.5
        new_px = (calibration.to_image_px(corners_mm) + 0.5) / s - 0.5
        old_bg.warp(cv2.getPerspectiveTransform(old_px.astype(np.float32), new_px.astype(np.float32)))
        old_bg.roi, old_bg.roi_u8 = self._bg.roi, self._bg.roi_u8
        self._bg = old_bg
        if prev is not None and len(prev.balls):
    
            sil, _, rad = self._view.outline(prev.balls.xy_mm, prev.balls.height_mm)
            self._prev = replace(prev, balls=replace(prev.balls, xy_px=sil, radius_px=rad * self.radius_scale))
        self._ref_low = None  # examine the whole table on the next frame

    def _setup(self, cal: Calibration) -> None:
        view = TableView(cal, self.profile)
        w, h = cal.image_size
        r = self.profile.ball_radius_mm
        L, W = self.profile.length_mm, self.profile.width_mm
        probe = np.array([[r, r], [L - r, r], [L - r, W - r], [r, W - r], [L / 2, W / 2]])
        _, _, rad = view.outline(probe)
        r_min = float(rad.min())
        self._scale = max(1, int(r_min // self.cfg.search_radius_px))
        s = self._scale
        self._low_size = (max(1, w // s), max(1, h // s))
        # bilinear shrinking by an odd whole factor reads one pixel per output pixel, the one nearest-exact
        # takes, at half the cost (bit for bit the same picture); by an even factor it averages four
        self._shrink = cv2.INTER_NEAREST_EXACT if s % 2 and w % s == 0 and h % s == 0 else cv2.INTER_LINEAR
        self._r_low = r_min / s
        k = 2 * int(round(1.1 * self._r_low)) + 1  # peaks closer than ~1.1 radii are one ball
        self._nms_disc = np.ones((k, k), np.uint8)  # a square: separable, so cheap
        k = 2 * int(math.ceil(2.5 * self._r_low)) + 1  # a change reaches this far: the ball's shadow and neighbours
        self._grow = np.ones((k, k), np.uint8)
        self._ties = (np.random.default_rng(0).random((self._low_size[1], self._low_size[0])) * 1e-4).astype(np.float32)
        self._view = view
        roi = self._roi(view, self._low_size, s)
        self._bg = ClothBackground(self.cfg, roi, self._r_low, self._roi(view, self._low_size, s, cloth_only=True))
        self._roi_edge = roi & ~cv2.erode(roi.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
        self._pins = PinWatcher(self.profile, view, s) if self.profile.pins else None
        self._fixtures = self._fixture_discs(view, self._low_size, s)
        self._pocket_zone = self._pocket_mouths(view, self._low_size, s)
        log.debug("detector: %dx%d, search picture 1/%d (%dx%d), ball radius %.1f-%.1f px", w, h, s,
                  *self._low_size, r_min, float(rad.max()))

    def _roi(self, view: TableView, size: tuple[int, int], s: int, cloth_only: bool = False) -> np.ndarray:
        """Where a ball can be seen: the playing surface and the rails round it (a ball leaving the
        table flies over them) and the pockets (or, with ``cloth_only``, the playing surface alone,
        seen at the cloth's height)."""
        p = self.profile
        r = p.ball_radius_mm
        m = 0.0 if cloth_only else max(1.3 * r, p.rail_width_mm)
        L, W = p.length_mm, p.width_mm
        n = 24
        edge = np.concatenate([
            np.c_[np.linspace(-m, L + m, n), np.full(n, -m)],
            np.c_[np.full(n, L + m), np.linspace(-m, W + m, n)],
            np.c_[np.linspace(L + m, -m, n), np.full(n, W + m)],
            np.c_[np.full(n, -m), np.linspace(W + m, -m, n)],
        ])
        h = 0.0 if cloth_only else r
        mask = np.zeros((size[1], size[0]), np.uint8)
        _fill_table_polygon(mask, view, edge, h, s)
        _fill_discs(mask, view, [(q.xy_mm, q.radius_mm + r, h) for q in (() if cloth_only else p.pockets)], s)
        return mask.astype(bool)

    def _fixture_discs(self, view: TableView, size: tuple[int, int], s: int) -> np.ndarray | None:
        """Where only the table's own fixtures and what happens to them can be seen (bool, the shrunk
        picture): a ball dropping into a pocket or a bed hole (within a ball's radius of each drop
        circle, up to a ball's height) and a pin, standing or knocked down (within its height of its
        base, up to its top); None on a table with neither."""
        p = self.profile
        r = p.ball_radius_mm
        discs = [(h.xy_mm, h.radius_mm + r, r) for h in p.holes] + [(q.xy_mm, q.radius_mm + r, r) for q in p.pockets]
        discs += [(q.xy_mm, q.height_mm + q.radius_mm, q.height_mm) for q in p.pins]
        if not discs:
            return None
        mask = np.zeros((size[1], size[0]), np.uint8)
        _fill_discs(mask, view, [(xy, radius, h) for xy, radius, top in discs for h in (0.0, top)], s)
        return mask.astype(bool)

    def _pocket_mouths(self, view: TableView, size: tuple[int, int], s: int) -> np.ndarray:
        """Within two ball radii of a pocket's mouth, seen at a resting ball's centre height (bool, the
        shrunk picture)."""
        r = self.profile.ball_radius_mm
        mask = np.zeros((size[1], size[0]), np.uint8)
        _fill_discs(mask, view, [(q.xy_mm, q.radius_mm + 2 * r, r) for q in self.profile.pockets], s)
        return mask.astype(bool)

    # ---- per frame -------------------------------------------------------------------------------
    def detect(self, image: np.ndarray, frame: int, t_s: float) -> FrameDetections:
        """The balls, pins and occluders of one frame (a BGR uint8 picture of the calibrated size)."""
        self._check_image(image)
        if self._view is None:
            self._setup(self._cal)
        t_s = float(t_s)
        s, bg, prev = self._scale, self._bg, self._prev
        low = cv2.resize(image, self._low_size, interpolation=self._shrink) if s > 1 else image.copy()
        if prev is not None and self._prev_low is not None and cv2.norm(low, self._prev_low, cv2.NORM_INF) == 0:  # an exact repeat
            return FrameDetections(frame, t_s, prev.balls.at(frame, t_s), prev.pins, prev.occluders, prev.valid, repeated=True)
        self._prev_low = low
        dt = 1.0 / 30.0 if self._last_t is None else max(1e-3, t_s - self._last_t)
        self._last_t = t_s
        if not bg.ready:
            self._start_background(image, low)
        full = self._ref_low is None or prev is None or not prev.valid or t_s - self._last_full_t >= _REFRESH_S
        if full:
            win = _Window.whole(bg.roi.shape)
            region = bg.roi
        else:
            changed = cv2.bitwise_and(cv2.compare(channel_sum(cv2.absdiff(low, self._ref_low)), _CHANGE_GREY, cv2.CMP_GT), bg.roi_u8)
            # a ball in the air cannot hover: where it was is looked at again, changed or not
            air = prev.balls.state == BallState.AIRBORNE
            if air.any():
                q = self._low_px(prev.balls.xy_px[air])
                rr = int(np.ceil(prev.balls.radius_px[air].max() / s)) + 1
                for x, y in q:
                    changed[max(0, y - rr):y + rr + 1, max(0, x - rr):x + rr + 1] = 255
                cv2.bitwise_and(changed, bg.roi_u8, dst=changed)
            box = cv2.boundingRect(changed)
            if box[2] == 0:
                pins = prev.pins
                if self._pins is not None and self._pins.pending():  # a pin's new state is being confirmed
                    pins = self._pins.detect(image, self._last_score, prev.balls.xy_px, prev.balls.radius_px)
                self._still = np.ones(len(prev.balls), bool)  # nothing moved: every ball stood still
                if len(self._rest) == len(prev.balls):
                    self._rest[:, 1] = 1.0
                balls = self._off_fallen_pins(prev.balls.at(frame, t_s), pins)
                self._prev = FrameDetections(frame, t_s, balls, pins, prev.occluders)
                return self._prev
            # work only where the picture changed, and round it as far as a change can matter
            win = _Window.around(box, self._grow.shape[0], bg.roi.shape)
            region = np.zeros(bg.roi.shape, bool)
            region[win.slices] = cv2.dilate(changed[win.slices], self._grow).astype(bool) & bg.roi[win.slices]
        score = np.zeros(bg.roi.shape, np.float32)
        score[win.slices] = bg.score(low, window=win.slices)
        fg = score >= 1.0
        share = float(np.count_nonzero(fg[win.slices])) / max(1, bg.roi_count)
        if share > self.cfg.max_foreground:
            log.debug("frame %d: %.0f %% of the table is foreground: not readable", frame, 100 * share)
            self._prev = FrameDetections(frame, t_s, BallDetections.empty(frame, t_s, self.classes), valid=False)
            self._ref_low = None
            return self._prev
        if full:
            self._last_full_t = t_s
        old = prev.balls if prev is not None and prev.valid else BallDetections.empty(frame, t_s, self.classes)
        old_still = self._still if len(self._still) == len(old) else np.zeros(len(old), bool)
        old_soft = self._soft if len(self._soft) == len(old) else np.zeros(len(old), bool)
        old_rest = self._rest if len(self._rest) == len(old) else np.zeros((len(old), 2))
        # a ball where nothing changed stands as it was; not one in the air (it cannot hover: look again)
        stays = ~self._in_region(old.xy_px, region) & (old.state != BallState.AIRBORNE)
        again = ~stays
        cand = self._candidates(fg[win.slices], region[win.slices], win)
        cand = _join(cand, old.xy_px[again & (old.state != BallState.OCCLUDED)], 0.6 * self._r_low * s)
        self._moved.append((t_s, old.xy_px[again]))
        while self._moved and self._moved[0][0] < t_s - _RECENT_S:
            self._moved.popleft()
        by_pocket = self._by_pockets(cand)
        fits = fit_balls(image, score, s, cand, self._radius_px(cand) * self.radius_scale,
                         self.cfg.n_rays, self._edge_contrast(cand), chroma_shift=self.chroma_shift, shape=self._shape_px(cand),
                         retry=~by_pocket)
        keep = self._accept(fits, by_pocket)
        stays |= self._rough_in_place(fits, keep, old, again & old_still & (old.state == BallState.VISIBLE))
        strength = fits.visible + fits.contrast / 1000.0
        kept = np.nonzero(keep)[0]
        kept = kept[_nms(fits.centre[kept], strength[kept], 1.2 * fits.radius_pred[kept])]
        if self._chroma_seen < self.cfg.chroma_balls and self._chroma_looks < 10 * self.cfg.chroma_balls:
            self._measure_chroma(image, fits, kept)
        carried = old[stays].at(frame, t_s)
        if len(carried) and len(kept):  # a refitted ball that is one standing already is that one
            d = np.linalg.norm(fits.centre[kept][:, None] - carried.xy_px[None], axis=2)
            kept = kept[d.min(axis=1) > carried.radius_px.min() * 1.2]
        new, new_f, new_clear = self._ball_detections(fits, kept, frame, t_s,
                                                      surround=(image, np.concatenate([fits.centre[kept], carried.xy_px])))
        # Nothing moves as the video starts; a camera that moves smears every ball and its last places
        # are carried over only roughly: streaks are looked for once it has settled.
        still = old[old_still] if prev is not None and self._unsettled == 0 else None
        self._unsettled = max(0, self._unsettled - 1)
        # the two ends of a fast ball's streak, each fitted as a ball: the ball was half way between them
        # in the middle of the exposure (the frame's time); their discs are no one else's
        ends, middles, middle_f = self._streak_middles(image, new, still, old)
        smeared = new[ends]
        if ends.any():
            keep_rows = ~ends
            new = BallDetections.concat([new[keep_rows], middles])
            new_f = np.concatenate([new_f[keep_rows], middle_f])
            new_clear = np.concatenate([new_clear[keep_rows], np.zeros(len(middles), bool)])
        # one end fitted and the rest of the streak a stadium of foreground beyond it, or both fitted
        xy_px, drop, far_ends = self._stadium_middles(new, fg, win, still, carried, old)
        if len(far_ends):
            new_clear = new_clear & np.all(xy_px == new.xy_px, axis=1)  # a smeared colour teaches nothing
            new = replace(new, xy_px=xy_px, xy_mm=self._view.balls_to_table(xy_px))
            new, new_f, new_clear = new[~drop], new_f[~drop], new_clear[~drop]
            smeared = BallDetections.concat([smeared, far_ends])
        left = (fg[win.slices] & ~self._discs(BallDetections.concat([carried, new, smeared]), 1.25, win)).astype(np.uint8)
        if self._r_low >= 3:
            left = cv2.morphologyEx(left, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        parts = _Parts(left, win)
        packed, packed_f, packed_clear = self._clusters(image, score, parts, region, frame, t_s,
                                                        np.concatenate([carried.xy_px, new.xy_px]), old[old_still].xy_px)
        ends, middles, middle_f = self._streak_middles(image, packed, still, old)  # a short streak taken for two touching balls
        if ends.any():
            packed = BallDetections.concat([packed[~ends], middles])
            packed_f = np.concatenate([packed_f[~ends], middle_f])
            packed_clear = np.concatenate([packed_clear[~ends], np.zeros(len(middles), bool)])
        blobs, blob_f, blob_round = self._blobs(image, parts, region, frame, t_s,
                                                np.concatenate([carried.xy_px, new.xy_px, packed.xy_px]))
        stand = self._standing(parts, old, again & old_still & (old.state == BallState.VISIBLE))
        held = old[stand].at(frame, t_s)
        occ_mask = self._occluder_mask(parts, self._discs(BallDetections.concat([carried, held, new]), 2.2, win))
        new = BallDetections.concat([new, packed, blobs])
        new_f = np.concatenate([new_f, packed_f, blob_f])
        clear = np.concatenate([new_clear, packed_clear, blob_round])
        new = self._learn_colours(new, new_f, clear, old)
        new, new_rest = _settle(new, len(new) - len(blobs), clear, old[~old_soft], old_rest[~old_soft], self.cfg)
        seen = BallDetections.concat([carried, held, new])
        hidden = self._hidden(old[again & old_still & (old.state != BallState.IN_POCKET)], seen, occ_mask, win, frame, t_s)
        balls = BallDetections.concat([seen, hidden])
        self._still = np.concatenate([np.ones(len(carried) + len(held), bool), self._new_still, np.ones(len(hidden), bool)])
        self._soft = np.concatenate([old_soft[stays], old_soft[stand], np.zeros(len(new) - len(blobs), bool), np.ones(len(blobs), bool),
                                     np.zeros(len(hidden), bool)])
        self._rest = np.concatenate([np.c_[old_rest[stays, :1], np.ones(int(stays.sum()))],
                                     np.c_[old_rest[stand, :1], np.ones(int(stand.sum()))], new_rest, np.zeros((len(hidden), 2))])
        self._occ = [o for o in self._occ if not win.overlaps(o[1])] + self._occluders(occ_mask, win)
        pins = (self._pins.detect(image, score, balls.xy_px, balls.radius_px, changed=None if full else region)
                if self._pins is not None else PinDetections.empty())
        balls = self._off_fallen_pins(balls, pins)
        self._last_score = score
        # the balls and their shadows are never learnt as cloth; not a ball found only as a blob: what is
        # cloth-like there (a patch uncovered, cloth taken for a green ball) must be learnt again
        firm = balls[~self._soft]
        protect = self._discs(firm, 2.2, win)
        bg.update(low, score, protect, dt, window=win.slices)
        if t_s - self._last_maintain_t >= _MAINTAIN_S:
            self._last_maintain_t = t_s
            bg.absorb_uncovered(low, score, self._discs(firm, 2.2))
        # the reference picture moves on where it was examined (what was missed there is looked for
        # again when it changes, or at the next examination of the whole table)
        if self._ref_low is None:
            self._ref_low = low.copy()
        cv2.copyTo(low[win.slices], region[win.slices].view(np.uint8), self._ref_low[win.slices])  # in place, where examined
        self._prev = FrameDetections(frame, t_s, balls, pins, tuple(o[0] for o in self._occ))
        return self._prev

    def _measure_chroma(self, image: np.ndarray, fits: BallFits, idx: np.ndarray) -> None:
        """Learn :attr:`chroma_shift` from the balls ``idx`` of ``fits`` seen whole: a 4:2:0 video codes
        its colour at half the resolution, and an encoder and a decoder that place those samples
        differently shift every colour edge against the brightness edges by up to half a pixel, the
        same way all over the picture (a coloured ball's outline, found on its colour as much as its
        brightness, is then placed that much off). Along each ray the colour edge's distance from the
        centre less the brightness edge's, less its mean round the ball (a colour edge may lie a
        little inside or outside all round), is the shift's component along the ray; the shift is
        their least-squares solution once ``chroma_balls`` balls with enough such rays are measured
        (none on a table whose balls show no colour against the cloth: no shift then)."""
        whole = idx[(fits.visible[idx] >= 0.9) & (fits.gap[idx] <= 0.1)]
        if len(whole) == 0:
            return
        self._chroma_looks += len(whole)
        c, r = fits.centre[whole], fits.radius_pred[whole]
        w = fine_band(r, self._scale)
        m = int(clip(np.ceil(2 * w.max() / 0.75), 8, 40)) | 1
        rs = sample_rays(image, c, r - w, r + w, self.cfg.n_rays, m)
        diff, ok = chroma_offsets(rs, r, self.cfg.min_edge_contrast)
        a, b = self._chroma_sums
        for d, o in zip(diff, ok):
            if o.sum() < 0.5 * len(o):
                continue
            u = rs.unit[o]
            a += u.T @ u
            b += u.T @ (d[o] - d[o].mean())
            self._chroma_seen += 1
        if self._chroma_seen >= self.cfg.chroma_balls:
            self.chroma_shift = clip(np.linalg.solve(a, b), -1.0, 1.0)
            log.debug("detector: the video's colour lies (%+.2f, %+.2f) px off its brightness", *self.chroma_shift)

    def _learn_colours(self, new: BallDetections, f: np.ndarray, clear: np.ndarray, old: BallDetections) -> BallDetections:
        """The colour classes learn from the balls just found: on the opening layout (most of the set
        seen clearly at once) by EM, then from each ball seen clearly and at rest (in the same place
        as a ball of the previous frame). Returns ``new`` with its classes read again after an
        opening."""

        self._new_still = _near(new.xy_px, old.xy_px[old.state != BallState.OCCLUDED], 0.25 * new.radius_px)
        if not self.colours.opened and clear.sum() >= max(2, 0.75 * len(self.profile.balls)):
            self.colours.open_layout(f[clear])
            prob, label, _ = self.colours.classify(f)
            new = replace(new, class_prob=prob, label=label)
        learn = clear & self._new_still
        self.colours.learn(f[learn], new.class_prob[learn])
        return new

    def _check_image(self, image: np.ndarray) -> None:
        if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            got = f"{image.dtype} array of shape {image.shape}" if isinstance(image, np.ndarray) else type(image).__name__
            raise ValueError(f"the detector needs a BGR uint8 picture (h, w, 3), got a {got}")
        w, h = self._cal.image_size
        if image.shape[1] != w or image.shape[0] != h:
            raise ValueError(f"the picture is {image.shape[1]}x{image.shape[0]} but the calibration was made for {w}x{h}: "
                             "calibrate this video (cueref calibrate VIDEO --table ... --out CAL.json) and pass that")

    def _edge_contrast(self, centres: np.ndarray) -> np.ndarray:
        """The colour step (grey levels) an edge needs to count as the outline of a ball at ``centres``
        (n, 2) full-res px: ``min_edge_contrast``, less where the cloth is dimly lit (a share of its
        brightness there, at least ``min_edge_contrast_dim``)."""
        cfg = self.cfg
        if not len(centres):
            return np.zeros(0)
        q = self._low_px(centres)
        light = self._bg.light((q[:, 1], q[:, 0]))
        return clip(cfg.edge_contrast_of_light * light, cfg.min_edge_contrast_dim, cfg.min_edge_contrast)

    def _radius_px(self, centres: np.ndarray) -> np.ndarray:
        return self._view.radius_at_px(centres) if len(centres) else np.zeros(0)

    def _by_pockets(self, centres: np.ndarray) -> np.ndarray:
        """Which picture points (n, 2) lie within two ball radii of a pocket's mouth, with no ball that
        moved there lately (within ten radii, in the last half second): a ball dropping into the
        pocket, part hidden by its jaws, is seen there; one found there out of nothing is doubted."""
        q = self._low_px(centres)
        if not len(q):
            return np.zeros(0, bool)
        zone = self._pocket_zone[q[:, 1], q[:, 0]]
        if zone.any() and self._moved:
            zone &= ~_near(centres, np.concatenate([m for _, m in self._moved]), 10.0 * self._r_low * self._scale)
        return zone

    def _shape_px(self, centres: np.ndarray) -> np.ndarray:
        """The outline's shape (n, 2, 2) of resting balls at ``centres`` (an ellipse off the camera's axis)."""
        return self._view.shape_at_px(centres) if len(centres) else np.zeros((0, 2, 2))

    def _low_px(self, xy_px: np.ndarray) -> np.ndarray:
        """Full-resolution pixels (n, 2) -> integer pixels of the shrunk picture (n, 2), clipped."""
        q = np.round((np.asarray(xy_px, dtype=np.float64).reshape(-1, 2) + 0.5) / self._scale - 0.5).astype(int)
        return clip(q, 0, np.array(self._low_size) - 1)

    def _in_region(self, xy_px: np.ndarray, region: np.ndarray) -> np.ndarray:
        q = self._low_px(xy_px)
        return region[q[:, 1], q[:, 0]] if len(q) else np.zeros(0, bool)

    def _discs(self, balls: BallDetections, grow: float, win: "_Window | None" = None) -> np.ndarray:
        """The shrunk picture's pixels (bool) within ``grow`` radii of the balls' centres (in ``win``
        only, when given)."""
        return self._disc_mask(balls.xy_px, balls.radius_px, grow, win)

    def _disc_mask(self, centres_px: np.ndarray, radii_px: np.ndarray, grow: float, win: "_Window | None" = None) -> np.ndarray:
        win = win or _Window.whole(self._bg.roi.shape)
        m = np.zeros(win.shape, np.uint8)
        for (x, y), r in zip(self._low_px(centres_px) - win.origin, radii_px):
            cv2.circle(m, (int(x), int(y)), int(math.ceil(grow * r / self._scale)), 1, -1)
        return m.astype(bool)

    def _start_background(self, image: np.ndarray, low: np.ndarray) -> None:
        """The first background: the frame itself, with the balls found against a median-filtered
        frame (the filter is wide enough that no ball, nor a rack of them, survives it) replaced by
        the cloth around them. Only what fits a ball's outline, packed or alone, or is a ball-sized
        blob of a ball's colour, is replaced: pockets, markings and cushion edges stay as they are."""
        bg = self._bg
        med = bg.median_estimate(low, balls_wide=10.0)
        cloth = med[bg.cloth]
        self.colours.start(np.median(cloth, axis=0) if len(cloth) else med.reshape(-1, 3).mean(axis=0))
        s0 = bg.score(low, against=med, measure=False)
        fg = s0 >= 1.0
        bg.start(low)  # provisional, for the cloth's light round the balls below
        whole = _Window.whole(bg.roi.shape)
        # a ball the background takes in now is not seen until it moves: here, more candidates are
        # worth their cost (once): circles found by their edges anywhere on the table, as well
        cand = np.concatenate([self._candidates(fg, bg.roi, whole), self._circles(image, bg.roi)])
        by_pocket = self._by_pockets(cand)
        fits = fit_balls(image, s0, self._scale, cand, self._radius_px(cand), self.cfg.n_rays, self._edge_contrast(cand),
                         shape=self._shape_px(cand), retry=~by_pocket)
        ok = self._accept(fits, by_pocket) & self._inside(self._view.balls_to_table(fits.centre), 0.6)
        ok[ok] &= np.isin(np.arange(ok.sum()), _nms(fits.centre[ok], fits.visible[ok], 1.2 * fits.radius_pred[ok]))
        found = [(fits.centre[ok], fits.radius_pred[ok])]
        parts = _Parts((fg & ~self._disc_mask(fits.centre[ok], fits.radius_pred[ok], 1.25)).astype(np.uint8), whole)
        packed = self._clusters(image, s0, parts, bg.roi, 0, 0.0, fits.centre[ok])[0]
        blobs = self._blobs(image, parts, bg.roi, 0, 0.0)[0]
        found += [(packed.xy_px, packed.radius_px), (blobs.xy_px, blobs.radius_px)]
        hide = np.zeros(bg.roi.shape, bool)
        for centres, radii in found:
            hide |= self._disc_mask(centres, radii, 2.2)
        bg.start(low, hide & bg.cloth, med)  # cushions stay as they are

    def _circles(self, image: np.ndarray, roi: np.ndarray) -> np.ndarray:
        """Ball-sized circles (n, 2) full-res px found by their edges (``cv2.HoughCircles``) in the
        part of the picture that ``roi`` (shrunk picture) covers."""
        x, y, w, h = cv2.boundingRect(roi.astype(np.uint8))
        s = self._scale
        x0, y0, x1, y1 = x * s, y * s, min(image.shape[1], (x + w) * s), min(image.shape[0], (y + h) * s)
        r = self._r_low * s
        circles = cv2.HoughCircles(cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY), cv2.HOUGH_GRADIENT, dp=1,
                                   minDist=1.5 * r, param1=80, param2=max(8.0, 0.8 * r), minRadius=int(0.8 * r),
                                   maxRadius=int(math.ceil(1.4 * r)))
        return np.zeros((0, 2)) if circles is None else circles[0][:, :2].astype(np.float64) + (x0, y0)

    def _candidates(self, fg: np.ndarray, region: np.ndarray, win: "_Window") -> np.ndarray:
        """Centres (n, 2), full-res px, of ball-sized foreground with a mostly clear surround, in
        ``region`` of the shrunk picture (``fg`` and ``region`` are the window ``win`` of it)."""
        r = self._r_low
        f = fg.astype(np.float32)
        k1 = 2 * int(round(0.7 * r)) + 1
        k2 = 2 * int(round(1.1 * r)) + 1
        k3 = 2 * int(round(1.6 * r)) + 1
        inner = cv2.boxFilter(f, -1, (k1, k1))
        mid = cv2.boxFilter(f, -1, (k2, k2), normalize=False)
        outer = cv2.boxFilter(f, -1, (k3, k3), normalize=False)
        ring = np.subtract(outer, mid, out=outer)  # the surround's count, then its share (half weighted), in place
        ring *= 0.5 / float(k3 * k3 - k2 * k2)
        resp = inner - ring
        resp += self._ties[win.slices]  # ties broken: one peak per plateau
        peak = region & (inner >= self.cfg.min_cover) & (resp >= 0.8 * self.cfg.min_cover) & (resp >= cv2.dilate(resp, self._nms_disc))
        ys, xs = np.nonzero(peak)
        return (np.c_[xs, ys].astype(np.float64) + win.origin + 0.5) * self._scale - 0.5

    def _accept(self, fits: BallFits, by_pocket: np.ndarray | bool = False) -> np.ndarray:
        """Which fitted outlines are balls: enough of a round outline at the predicted size, round a
        foreground core (more of it ``by_pocket``, (n,) bool). A ball seen all round may have a rougher
        outline and look a little smaller: motion blur softens its edge along its path."""
        cfg = self.cfg
        by_pocket = by_pocket & ((fits.visible < cfg.min_visible_by_pocket) | (fits.gap > 1 / 3))
        ratio = fits.radius / np.maximum(fits.radius_pred, 1e-6)
        base = (fits.core_score >= 1.0) & (fits.contrast >= fits.min_contrast)  # a ring (a projected circle) is cloth inside
        sharp = ((fits.visible >= cfg.min_visible) & (fits.gap <= 0.5) & (np.abs(ratio - 1.0) <= cfg.radius_tolerance)
                 & (fits.rms <= cfg.max_edge_rms * fits.radius_pred + 0.4))
        blurred = ((fits.visible >= 0.8) & (fits.gap <= 0.25) & (ratio >= 1.0 - 1.5 * cfg.radius_tolerance)
                   & (ratio <= 1.0 + cfg.radius_tolerance) & (fits.rms <= 2.5 * cfg.max_edge_rms * fits.radius_pred + 0.4))
        return base & (sharp | blurred) & ~by_pocket

    def _ball_detections(self, fits: BallFits, idx: np.ndarray, frame: int, t_s: float, packed: bool = False,
                         surround: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[BallDetections, np.ndarray, np.ndarray]:
        """Detections from the accepted fits ``idx``, with each one's colour features (n, 3) and
        whether it was seen clearly (whole outline, on the cloth) for the colour classes to learn.
        ``packed`` balls (in a cluster: their outlines meet their neighbours') are never airborne and
        teach nothing about a ball's size. ``surround``: the picture and the centres (m, 2) px of
        the balls round them, to tell a fingertip by what surrounds it."""
        view, cfg = self._view, self.cfg
        centre, radius, visible = fits.centre[idx], fits.radius[idx], fits.visible[idx]
        q = self._low_px(centre)
        colour = summarise_colours(fits.core[idx])
        f = self.colours.features(colour, self._bg.light((q[:, 1], q[:, 0])))
        prob, label, far = self.colours.classify(f)
        # part of an outline, in a colour that is no class's: a fingertip, a knuckle, a sleeve's edge
        ok = (far <= FOREIGN) | (visible >= 0.8)
        if surround is not None:  # an outline amid its own colour: a fingertip among its fingers
            ok &= ~self._unlike_cloth(colour, q) | (_continued(surround[0], centre, fits.radius_pred[idx], colour, surround[1],
                                                             self._same_colour(colour)) < cfg.max_continued)
        idx, centre, radius, visible, f, prob, label = (a[ok] for a in (idx, centre, radius, visible, f, prob, label))
        # the size a resting ball of this class shows here: the edge found depends a little on the
        # ball's colour against the cloth (a black ball's dark edge meets its shadow), so it is learnt
        k = np.argmax(prob, axis=1) if len(prob) else np.zeros(0, int)
        own = (label != "") & (self._class_seen[k] >= 3)
        scale = np.where(own, self._class_scale[k], self.radius_scale)
        # and what the outline's radius can tell: its noise in px, as a height; a lift must stand well clear of it
        lift, lift_noisy = view.lift_from_radius(centre, np.stack([radius / scale, (radius + cfg.radius_noise_px) / scale]))
        noise = np.abs(lift_noisy - lift)
        # (twice that until this class's own resting size is known: nothing flies at the start of a clip, and
        # the size of balls of other colours is not enough: a dark ball's edge meets its shadow, a few per
        # cent wider); and the outline must be round: motion blur stretches it, and its edges come out wider
        round_ = ((fits.stretch[idx] <= 0.02 * fits.radius_pred[idx] + 0.1)
                  & (fits.rms[idx] <= 0.7 * (cfg.max_edge_rms * fits.radius_pred[idx] + 0.4)))
        airborne = ((lift > np.maximum(cfg.airborne_mm, 4.0 * noise) * np.where(own, 1.0, 2.0)) & (visible >= 0.6) & round_
                    & (not packed))
        lift = np.where(airborne, lift, 0.0)
        xy_mm = view.balls_to_table(centre, lift)
        # in a pocket's mouth or net only with its whole outline seen: a part of the pocket's own dark drop
        # is round too
        whole = (visible >= 0.8) & (fits.gap[idx] <= 0.2)
        in_pocket = self._in_pocket(xy_mm) & whole
        # a resting ball's centre is a radius from the cushion: nearer the edge is a cushion's or pocket's edge
        inside_mouths, inside = self._inside_both(xy_mm, 0.6)
        keep = (inside | (inside_mouths & whole)) | in_pocket | airborne
        idx, centre, radius, visible, lift, airborne, xy_mm, in_pocket, f, prob, label, k = (
            a[keep] for a in (idx, centre, radius, visible, lift, airborne, xy_mm, in_pocket, f, prob, label, k))
        if len(idx) == 0:
            return BallDetections.empty(frame, t_s, self.classes), np.zeros((0, 3)), np.zeros(0, bool)
        ratio = radius / fits.radius_pred[idx]
        good = (visible >= 0.7) & ~airborne & (fits.stretch[idx] <= 0.03 * fits.radius_pred[idx] + 0.15) & (not packed)
        if good.any():
            rate = max(0.05, 1.0 / (1.0 + self._scale_seen))
            self.radius_scale = float(clip(self.radius_scale + rate * (median(ratio[good]) - self.radius_scale), 0.7, 1.4))
            self._scale_seen += 1
        for c in np.unique(k[good & (label != "")]):
            r_c = float(median(ratio[good & (label != "") & (k == c)]))
            rate = max(0.05, 1.0 / (1.0 + self._class_seen[c]))
            self._class_scale[c] = float(clip(self._class_scale[c] + rate * (r_c - self._class_scale[c]), 0.7, 1.4))
            self._class_seen[c] += 1
        clear = (visible >= 0.8) & ~airborne & ~in_pocket
        state = np.where(airborne, BallState.AIRBORNE, BallState.VISIBLE).astype(np.uint8)
        state[in_pocket] = BallState.IN_POCKET
        score = clip(visible * clip(fits.contrast[idx] / (3 * fits.min_contrast[idx]), 0, 1), 0, 1)
        return BallDetections(frame=frame, t_s=t_s, classes=self.classes, xy_mm=xy_mm, xy_px=centre,
                              radius_px=radius, height_mm=lift, label=label, class_prob=prob,
                              score=score.astype(np.float32), state=state), f, clear

    def _inside(self, xy_mm: np.ndarray, radii: float, mouths: bool = True) -> np.ndarray:
        """Whether ball centres lie where a ball can rest: on the playing surface or (with
        ``mouths``) in a pocket's mouth, at least ``radii`` ball radii from every cushion nose (nearer
        is the edge of a cushion or a pocket taken for a ball), and not over a bed hole (a ball there
        has dropped)."""
        with_mouths, without = self._inside_both(xy_mm, radii)
        return with_mouths if mouths else without

    def _inside_both(self, xy_mm: np.ndarray, radii: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_inside` with the pockets' mouths and without, the cushions measured once (all
        cushions, pockets and holes at once)."""
        p = self.profile
        r = p.ball_radius_mm
        x, y = xy_mm[:, 0], xy_mm[:, 1]
        on = (x >= 0) & (x <= p.length_mm) & (y >= 0) & (y <= p.width_mm)
        a, ab, ab2, pockets, reach, holes, hole_r = self._edges_mm
        mouth = on | (np.hypot(x[:, None] - pockets[:, 0], y[:, None] - pockets[:, 1]) <= reach).any(axis=1)
        # each centre's distance from each cushion's nose (a segment)
        d = xy_mm[:, None, :] - a[None]
        t = clip((d[..., 0] * ab[:, 0] + d[..., 1] * ab[:, 1]) / ab2, 0.0, 1.0)
        clear = (np.hypot(d[..., 0] - t * ab[:, 0], d[..., 1] - t * ab[:, 1]) >= radii * r).all(axis=1)
        clear &= (np.hypot(x[:, None] - holes[:, 0], y[:, None] - holes[:, 1]) > 0.9 * hole_r).all(axis=1)  # over one, a ball drops
        return mouth & clear, on & clear

    @functools.cached_property
    def _edges_mm(self) -> tuple[np.ndarray, ...]:
        """The table's cushion noses (starts (C, 2), directions (C, 2), squared lengths (C,)), pocket
        centres (P, 2) with the reach of a ball's centre into each (P,), and bed holes (H, 2) with
        their radii (H,), as arrays for :meth:`_inside_both`."""
        p = self.profile
        a = np.array([c.a_mm for c in p.cushions], dtype=np.float64).reshape(-1, 2)
        ab = np.array([c.b_mm for c in p.cushions], dtype=np.float64).reshape(-1, 2) - a
        ab2 = np.maximum(np.sum(ab * ab, axis=1), 1e-9)
        pockets = np.array([q.xy_mm for q in p.pockets], dtype=np.float64).reshape(-1, 2)
        reach = np.array([q.radius_mm for q in p.pockets], dtype=np.float64) + p.ball_radius_mm
        holes = np.array([h.xy_mm for h in p.holes], dtype=np.float64).reshape(-1, 2)
        return a, ab, ab2, pockets, reach, holes, np.array([h.radius_mm for h in p.holes], dtype=np.float64)

    def _in_pocket(self, xy_mm: np.ndarray) -> np.ndarray:
        p = self.profile
        if not p.pockets or len(xy_mm) == 0:
            return np.zeros(len(xy_mm), bool)
        x, y = xy_mm[:, 0], xy_mm[:, 1]
        beyond = np.maximum.reduce([-x, x - p.length_mm, -y, y - p.width_mm])
        centres = np.array([q.xy_mm for q in p.pockets])
        reach = np.array([q.radius_mm for q in p.pockets]) + p.ball_radius_mm
        near = (np.linalg.norm(xy_mm[:, None, :] - centres[None], axis=2) <= reach[None]).any(axis=1)
        return near & (beyond > self.cfg.in_pocket_mm * p.ball_radius_mm)

    def _clusters(self, image: np.ndarray, score: np.ndarray, parts: "_Parts", region: np.ndarray, frame: int,
                  t_s: float, known_px: np.ndarray, still_px: np.ndarray | None = None) -> tuple[BallDetections, np.ndarray, np.ndarray]:
        """Balls packed together (a rack, a cluster after a kiss): a foreground blob of several balls
        that no outline was fitted in, since no ray from a ball inside reaches cloth. Their circles
        are found by their edges (``cv2.HoughCircles`` at the predicted radius, on the blob's part
        of the full picture), then each is fitted as a packed ball and accepted as any ball is. The
        blobs a packed ball was found in are marked used in ``parts``. A blob shaped as one ball's
        streak (a stadium as wide as a ball, longer than two touching balls) where no ball stood still
        is left to the blob step: a circle found at one of its ends is not where the ball was
        (``still_px`` None: nothing moves, as when the video starts)."""
        s, r_low = self._scale, self._r_low
        cand, comp_of = [], []
        still_low = None if still_px is None else (np.asarray(still_px, dtype=np.float64).reshape(-1, 2) + 0.5) / s - 0.5
        for i in parts.ids():
            x0, y0, w, h = parts.box(i)
            if parts.area(i) < 1.6 * math.pi * r_low**2 or not region[parts.centre_yx(i)] or parts.touches(i, self._roi_edge):
                continue  # too small, not where anything changed, or coming in from beyond the table (a cue, an arm)
            if still_low is not None and _half_path(parts.area(i), r_low) >= 1.2 * r_low:  # longer than two touching balls
                inside = ((still_low[:, 0] >= x0) & (still_low[:, 0] < x0 + w) & (still_low[:, 1] >= y0) & (still_low[:, 1] < y0 + h))
                if _streak_shaped(*_spread(parts.mask(i))[:2], r_low) and not inside.any():
                    continue
            r = float(self._view.radius_at_px(((parts.centre(i)[None] + 0.5) * s - 0.5))[0]) * self.radius_scale
            pad = int(math.ceil(r))
            fx0, fy0 = max(0, x0 * s - pad), max(0, y0 * s - pad)
            fx1, fy1 = min(image.shape[1], (x0 + w) * s + pad), min(image.shape[0], (y0 + h) * s + pad)
            grey = cv2.cvtColor(image[fy0:fy1, fx0:fx1], cv2.COLOR_BGR2GRAY)
            circles = cv2.HoughCircles(grey, cv2.HOUGH_GRADIENT, dp=1, minDist=1.5 * r, param1=80,
                                       param2=max(8.0, 0.8 * r), minRadius=int(0.85 * r), maxRadius=int(math.ceil(1.15 * r)))
            if circles is not None:
                cand += [(x + fx0, y + fy0) for x, y, _ in circles[0]]
                comp_of += [i] * len(circles[0])
        if not cand:
            return BallDetections.empty(frame, t_s, self.classes), np.zeros((0, 3)), np.zeros(0, bool)
        c = np.array(cand, dtype=np.float64)
        fits = fit_balls(image, score, s, c, self._radius_px(c) * self.radius_scale, self.cfg.n_rays,
                         self._edge_contrast(c), packed=True, chroma_shift=self.chroma_shift, shape=self._shape_px(c))
        kept = np.nonzero(self._accept(fits))[0]
        kept = kept[_nms(fits.centre[kept], fits.visible[kept], 1.5 * fits.radius_pred[kept])]
        kept = kept[~_near(fits.centre[kept], known_px, 1.5 * fits.radius_pred[kept])]  # a ball already found
        # every edge counts in a cluster, so the outline vouches less: a ball there must not be amid its own
        # colour either (a knuckle among the others, a hand's blob holding round circles), its neighbours
        # in the cluster left out
        out = self._ball_detections(fits, kept, frame, t_s, packed=True,
                                    surround=(image, np.concatenate([np.reshape(known_px, (-1, 2)), fits.centre[kept]])))
        took = _near(fits.centre[kept], out[0].xy_px, 0.5)
        parts.use(np.asarray(comp_of)[kept[took]])
        return out

    def _blobs(self, image: np.ndarray, parts: "_Parts", region: np.ndarray, frame: int, t_s: float,
               known_px: np.ndarray | None = None) -> tuple[BallDetections, np.ndarray, np.ndarray]:
        """Balls whose outline could not be fitted, found among the blobs of foreground left once the
        fitted balls are taken out (``parts``); returns them, their colour features and which are
        round (not streaks), and marks their blobs used.

        * A ball too fast to keep a round outline: the exposure smears it into a stadium as wide as
          the ball and longer by the distance travelled while the shutter was open. Its centre is
          the blob's, where the ball was at mid-exposure (the frame's time); its colour is the ball's
          mixed with the cloth's, and is unmixed (the ball covers a pixel on the streak's axis for
          radius / smear of the exposure).
        * A ball whose edge is too soft to fit (a green ball on green cloth: its dark limb is the
          cloth's colour): a round blob, smaller than the ball, of a colour some class has.

        Blobs in a colour no class has are left alone (they are occluders, or nothing)."""
        s = self._scale
        found = []
        for i in parts.ids():
            cx, cy = parts.centre(i)
            if not region[parts.centre_yx(i)]:
                continue
            r = float(self._view.radius_at_px(((np.array([[cx, cy]]) + 0.5) * s - 0.5))[0]) * self.radius_scale / s
            area = float(parts.area(i))
            if not 0.35 * math.pi * r * r <= area <= math.pi * r * r + 20 * r * r:
                continue
            smear = max(0.0, _half_path(area, r))
            minor, major, axes = _spread(parts.mask(i))
            # a soft ball's blob is a smaller disc; a streak must be longer than it is wide
            streak = smear >= 0.3 * r
            if streak and not _streak_shaped(minor, major, r):
                continue
            if not streak and not (0.35 * r <= minor and major <= 1.3 * minor):
                continue
            if parts.touches(i, self._roi_edge) or parts.beside_large(i, int(math.ceil(r)), 2.0 * math.pi * r * r):
                continue  # it comes in from beyond the table, or it is a piece of an arm or a hand cut off by a cue
            found.append((i, (cx + 0.5) * s - 0.5, (cy + 0.5) * s - 0.5, r * s, max(smear / r, 1.0), *(axes[:, 1] * streak)))
        empty = BallDetections.empty(frame, t_s, self.classes), np.zeros((0, 3)), np.zeros(0, bool)
        if not found:
            return empty
        a = np.array(found)
        comp, centre, radius, smear, axis = a[:, 0].astype(int), a[:, 1:3], a[:, 3], a[:, 4], a[:, 5:7]
        xy_mm = self._view.balls_to_table(centre)
        q = self._low_px(centre)
        core, f, prob, label, far = self._smeared_colour(image, centre, radius, smear)
        streak = smear > 1.0
        # no outline vouches for a blob: its colour must (a streak's may be too mixed to name), and it
        # must stand out from the cloth round it now (a ghost in the background model is cloth); a round
        # blob by a pocket's mouth is the pocket's dark drop as often as a ball (a streak there is a pot)
        keep = (self._inside(xy_mm, 0.6, mouths=False) & (far <= FOREIGN) & (streak | ((label != "") & ~self._by_pockets(centre)))
                & _stands_out(image, centre, radius, core, smear, self.cfg.min_edge_contrast))
        if known_px is not None:  # a blob amid its own colour, beside a streak's path too: between or on fingers
            keep &= ~self._unlike_cloth(core, q) | (_continued(image, centre, radius, core, np.concatenate([known_px, centre]),
                                                              self._same_colour(core), axis) < self.cfg.max_continued)
        if not keep.any():
            return empty
        k = int(keep.sum())
        balls = BallDetections(frame=frame, t_s=t_s, classes=self.classes, xy_mm=xy_mm[keep], xy_px=centre[keep],
                               radius_px=radius[keep], height_mm=np.zeros(k), label=label[keep], class_prob=prob[keep],
                               score=np.full(k, 0.5, np.float32), state=np.full(k, BallState.VISIBLE, np.uint8))
        parts.use(comp[keep])
        return balls, f[keep], smear[keep] <= 1.0

    def _unlike_cloth(self, colour: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Whether colours (n, 3) seen at shrunk-picture pixels ``q`` (n, 2) are unlike the cloth
        there and all its shadows (its colour from full down to ``shadow_darkest`` brightness) by
        twice :meth:`_same_colour`: only such a colour can be looked for round a ball (a black ball on
        dark cloth is as dark as its own shadow; a green ball on green cloth is the cloth's colour)."""
        cloth = (self._bg.bg[q[:, 1], q[:, 0]] * self._bg.gain).astype(np.float64)
        c = np.asarray(colour, dtype=np.float64)
        k = clip((c * cloth).sum(axis=1) / np.maximum((cloth * cloth).sum(axis=1), 1.0), self.cfg.shadow_darkest, 1.0)
        return np.linalg.norm(c - k[:, None] * cloth, axis=1) > 2.0 * self._same_colour(c)

    def _same_colour(self, colour: np.ndarray) -> np.ndarray:
        """How near (grey levels, (n,)) a colour must be to the colours (n, 3) to be theirs: the edge
        contrast a ball needs, and a tenth of the colour's brightness (shading, texture)."""
        return 1.5 * self.cfg.min_edge_contrast + 0.1 * np.linalg.norm(colour, axis=1)

    def _smeared_colour(self, image: np.ndarray, centre: np.ndarray, radius: np.ndarray, smear: np.ndarray) -> tuple:
        """The colour of balls smeared over ``smear`` (n,) times their width along their path: the
        core's colour unmixed from the cloth's (on the path's axis, the ball covers a pixel for
        1 / smear of the exposure). Returns the core's colours, the features, the class
        probabilities, labels and distances (:meth:`ColourModel.classify`)."""
        q = self._low_px(centre)
        cloth = self._bg.bg[q[:, 1], q[:, 0]] * self._bg.gain
        alpha = (1.0 / np.maximum(smear, 1.0))[:, None]
        core = summarise_colours(sample_core(image, centre, radius * 0.5))
        f = self.colours.features(clip((core - (1 - alpha) * cloth) / alpha, 0, 255), self._bg.light((q[:, 1], q[:, 0])))
        return (core, f, *self.colours.classify(f))

    def _streak_middles(self, image: np.ndarray, new: BallDetections, still: BallDetections | None,
                        before: BallDetections) -> tuple[np.ndarray, BallDetections, np.ndarray]:
        """The ends of fast balls' streaks among the new outlines (:func:`_streak_pairs`, (n,) bool)
        and, for each pair, one ball half way between them, named by its colour unmixed from the
        cloth's (:meth:`_smeared_colour`), and its colour features. Not where a ball stood still
        (two touching balls of uncertain colour), nor as the video starts (``still`` None): nothing
        moves then; and only where a ball raced in from the previous frame (``before``, :func:`_raced`)."""
        pairs = [] if still is None else [
            (a, b) for a, b in _streak_pairs(new)
            if not _near(new.xy_px[[a, b]], still.xy_px, 0.5 * new.radius_px[[a, b]]).any()
            and _raced(0.5 * (new.xy_px[a] + new.xy_px[b]), 0.5 * float(np.linalg.norm(new.xy_px[a] - new.xy_px[b])),
                       float(new.radius_px[a]), before.xy_px)]
        ends = np.zeros(len(new), bool)
        if not pairs:
            return ends, BallDetections.empty(new.frame, new.t_s, self.classes), np.zeros((0, 3))
        a, b = np.array(pairs).T
        ends[a] = ends[b] = True
        xy_px = 0.5 * (new.xy_px[a] + new.xy_px[b])
        radius = 0.5 * (new.radius_px[a] + new.radius_px[b])
        half_path = 0.5 * np.linalg.norm(new.xy_px[a] - new.xy_px[b], axis=1)
        _, f, prob, label, _ = self._smeared_colour(image, xy_px, radius, half_path / radius)
        k = len(pairs)
        middles = BallDetections(frame=new.frame, t_s=new.t_s, classes=self.classes, xy_mm=self._view.balls_to_table(xy_px),
                                 xy_px=xy_px, radius_px=radius, height_mm=np.zeros(k), label=label,
                                 class_prob=prob.astype(np.float32), score=np.minimum(new.score[a], new.score[b]),
                                 state=np.full(k, BallState.VISIBLE, np.uint8))
        return ends, middles, f

    def _stadium_middles(self, new: BallDetections, fg: np.ndarray, win: "_Window", still: BallDetections | None,
                         carried: BallDetections, before: BallDetections) -> tuple[np.ndarray, np.ndarray, BallDetections]:
        """A fast ball smears into a stadium over the exposure; an outline fitted at one of its round
        ends puts the ball up to half its path from where it was in the middle of the exposure (the
        frame's time). New balls that no ball stood at a frame ago, whose outlines are the ends of a
        foreground stadium (as wide as a ball, longer by at least a radius) that holds no other ball,
        are one ball in the stadium's middle: one end fitted, the ball is moved there; both ends fitted
        (a white ball keeps its colour however smeared), they are one ball half way between them, if
        the stadium is as wide there as at its ends (two touching balls pinch in between). A streak
        continues a ball of the previous frame (``before``) no further than a frame's travel away: a
        ball put down by a hand, whose blob the hand's leaving stretches, is not moved.

        Returns the new balls' places (n, 2) px, which rows are dropped (the second end of a pair)
        and, as balls, the streaks' ends (their discs are this ball's, no other's)."""
        xy_px = new.xy_px.copy()
        drop = np.zeros(len(new), bool)
        none = BallDetections.empty(new.frame, new.t_s, self.classes)
        if not len(new) or still is None:
            return xy_px, drop, none
        # where a ball was a frame ago, one is not racing through
        moving = ~_near(new.xy_px, before.xy_px, 0.5 * new.radius_px) & (new.state == BallState.VISIBLE)
        if not moving.any():
            return xy_px, drop, none
        s = self._scale
        _, lab, stats, cents = cv2.connectedComponentsWithStats(fg[win.slices].astype(np.uint8), connectivity=8)
        h, w = lab.shape

        def comp_of(px: np.ndarray) -> np.ndarray:
            q = self._low_px(px) - win.origin
            on = (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
            return np.where(on, lab[clip(q[:, 1], 0, h - 1), clip(q[:, 0], 0, w - 1)], 0)

        comp = comp_of(new.xy_px)
        fixed = np.concatenate([comp_of(carried.xy_px), comp_of(still.xy_px)])
        moved, ends = [], []
        for i in np.unique(comp[moving & (comp > 0)]):
            mine = np.nonzero(comp == i)[0]
            if len(mine) > 2 or not moving[mine].all() or (fixed == i).any():
                continue  # another ball is in it
            r = float(new.radius_px[mine].mean()) / s
            smear = _half_path(stats[i, cv2.CC_STAT_AREA], r)
            if smear < 0.5 * r:
                continue
            bx, by, bw, bh = (int(v) for v in stats[i, :4])
            minor, major, axes = _spread((lab[by:by + bh, bx:bx + bw] == i).astype(np.uint8))
            if not _streak_shaped(minor, major, r):
                continue  # not a stadium: the ball and an arm, a cue, another ball
            at = (new.xy_px[mine] + 0.5) / s - 0.5
            mid = at.mean(axis=0) if len(mine) == 2 else cents[i] + win.origin
            if len(mine) == 1 and abs(float((mid - at[0]) @ axes[:, 1])) < 0.5 * smear:
                continue  # the outline was fitted near the middle already
            # a ball's streak is as wide as the ball all along: two touching balls pinch in between,
            # a cue's shaft against the ball it strikes is narrower
            along = axes[:, 1] * np.sign(float((mid - at[0]) @ axes[:, 1]) or 1.0)
            across = np.array([-along[1], along[0]])
            probes = [mid] if len(mine) == 2 else [mid, mid + 0.5 * (mid - at[0])]
            line = np.concatenate([p + np.outer(np.linspace(-0.7 * r, 0.7 * r, 9), across) for p in probes])
            qx = clip(np.round(line[:, 0] - win.origin[0]).astype(int), 0, w - 1)
            qy = clip(np.round(line[:, 1] - win.origin[1]).astype(int), 0, h - 1)
            if (lab[qy, qx] == i).mean() < 0.8:
                continue
            centre = (mid + 0.5) * s - 0.5
            if not _raced(centre, smear * s, r * s, before.xy_px):
                continue
            ends.append(new[mine])
            if len(mine) == 1:
                ends.append(replace(new[mine], xy_px=2.0 * centre[None] - new.xy_px[mine]))
            xy_px[mine[0]] = centre
            drop[mine[1:]] = True
            moved.append(mine[0])
        if not moved:
            return xy_px, drop, none
        return xy_px, drop, BallDetections.concat(ends)

    def _rough_in_place(self, fits: BallFits, keep: np.ndarray, old: BallDetections, look: np.ndarray) -> np.ndarray:
        """Which of the previous frame's balls (``look``: those that stood still and were looked at
        again) stand where they were though their refit was refused: no accepted outline lies near the
        place, but a refused one, round a foreground core with most of its outline seen, lies within
        ``rest_hold`` radii of it. A ball passing close by lays its shadow on a dark ball's edge, and
        the outline read there is rough for a few frames; dropped, a still ball that the foreground
        then shows only in part would not be found again until it moved."""
        hold = np.zeros(len(old), bool)
        idx = np.nonzero(look)[0]
        cfg = self.cfg
        refused = np.nonzero(~keep & (fits.visible >= cfg.min_visible) & (fits.core_score >= 1.0)
                             & (fits.contrast >= fits.min_contrast))[0]
        if not len(idx) or not len(refused):
            return hold
        place, r = old.xy_px[idx], old.radius_px[idx]
        near = np.linalg.norm(place[:, None] - fits.centre[refused][None], axis=2).min(axis=1) <= cfg.rest_hold * r
        accepted = fits.centre[keep]
        if len(accepted):
            near &= np.linalg.norm(place[:, None] - accepted[None], axis=2).min(axis=1) > 0.8 * r
        hold[idx[near]] = True
        return hold

    def _standing(self, parts: "_Parts", old: BallDetections, look: np.ndarray) -> np.ndarray:
        """Which of the previous frame's balls (``look``: those that stood still and were looked at again)
        still stand where they were though no outline was fitted: a round, ball-sized blob of the
        leftover foreground is centred on the place (``standing_shift``), or lies within a radius of it
        and covers most of the ball's disc there (the ball with its shadow's side). Such a blob is the ball (a
        dark ball whose edge merges with its shadow, at a look over the whole table); taken for an
        occluder, it would report its own ball hidden under itself. Marks the blobs used."""
        stand = np.zeros(len(old), bool)
        idx = np.nonzero(look)[0]
        ids = parts.ids()
        if not len(idx) or not ids:
            return stand
        r = self._r_low
        cents = np.array([parts.centre(i) for i in ids])
        at = (old.xy_px[idx] + 0.5) / self._scale - 0.5  # in the shrunk picture, as the blobs' centres
        d = np.linalg.norm(cents[None] - at[:, None], axis=2)
        q = self._low_px(old.xy_px[idx])
        by_mouth = self._pocket_zone[q[:, 1], q[:, 0]]
        for row, k in enumerate(idx):
            j = int(np.argmin(d[row]))
            i = ids[j]
            if parts.used[i] or d[row, j] > r:
                continue
            if not 0.35 * math.pi * r * r <= parts.area(i) <= 2.2 * math.pi * r * r:  # with its shadow or halo
                continue
            # centred on the place, or covering the ball's disc there with its shadow's side beside it
            # (not by a pocket's mouth: there a longer blob is a ball on its way into the pocket)
            covers = not by_mouth[row] and parts.covers(i, at[row], 0.7 * r) >= 0.8
            if d[row, j] > self.cfg.standing_shift * r and not covers:
                continue
            minor, major, _ = _spread(parts.mask(i))
            # roundish (a disc's spread is r/2 each way; the shadow's side may stay with the ball, and
            # lengthen it a little more where it covers the disc), not a cue's shaft or a finger across
            # the place
            if 0.3 * r <= minor and major <= (2.0 if covers else 1.6) * minor:
                stand[k] = True
                parts.use([i])
        return stand

    def _hidden(self, old: BallDetections, seen: BallDetections, occ_mask: np.ndarray, win: "_Window", frame: int,
                t_s: float) -> BallDetections:
        """Balls of the previous frame that stood still, are not seen now and whose place an occluder
        covers: ``OCCLUDED``, where they were last seen (a moving ball's place is not known: the
        tracker predicts it)."""
        look = old.state != BallState.IN_POCKET
        if len(seen) and look.any():
            d = np.linalg.norm(old.xy_px[:, None, :] - seen.xy_px[None, :, :], axis=2)
            look &= d.min(axis=1) > 0.8 * old.radius_px
        covered = np.zeros(len(old), bool)
        h, w = occ_mask.shape
        for i in np.nonzero(look)[0]:
            (x, y), rr = self._low_px(old.xy_px[i])[0] - win.origin, max(1, int(round(old.radius_px[i] / self._scale)))
            under = occ_mask[max(0, y - rr):min(h, y + rr + 1), max(0, x - rr):min(w, x + rr + 1)]
            covered[i] = under.size > 0 and under.mean() >= 0.3

        sub = old[covered]
        return replace(sub, frame=frame, t_s=t_s, state=np.full(len(sub), BallState.OCCLUDED, np.uint8),
                       score=np.minimum(sub.score, 0.5).astype(np.float32))

    def _off_fallen_pins(self, balls: BallDetections, pins: PinDetections) -> BallDetections:
        """``balls`` without those found only as blobs within a knocked-down pin's length of its spot:
        the pin's white or red body lying on the cloth looks like a ball's blob."""
        lying = np.zeros(len(balls), bool)
        for pin_id, state in zip(pins.ids, pins.state):
            if state == PinState.DOWN:
                pin = self.profile.pin(pin_id)
                lying |= np.linalg.norm(balls.xy_mm - np.asarray(pin.xy_mm), axis=1) <= pin.height_mm + pin.radius_mm
        lying &= self._soft
        if lying.any():
            balls, self._still, self._soft, self._rest = balls[~lying], self._still[~lying], self._soft[~lying], self._rest[~lying]
        return balls

    def _occluder_mask(self, parts: "_Parts", near_balls: np.ndarray) -> np.ndarray:
        """The foreground no ball explains (the window of the shrunk picture, uint8), specks dropped:
        occluders. What lies wholly among the table's fixtures (a ball dropping into a pocket or a bed
        hole, a pin falling) or hugs a ball seen (``near_balls``, bool of the window: the cloth round a
        ball, never learnt while it stands there) could hide no ball."""
        mask = parts.rest(0.6 * math.pi * self._r_low**2)
        if not mask.any():
            return mask
        harmless = near_balls if self._fixtures is None else near_balls | self._fixtures[parts.win.slices]
        _, lab = cv2.connectedComponents(mask, connectivity=8)
        outside = np.unique(lab[(mask > 0) & ~harmless])
        return np.isin(lab, outside[outside > 0]).astype(np.uint8)

    def _occluders(self, mask: np.ndarray, win: "_Window") -> list[tuple[np.ndarray, tuple[int, int, int, int]]]:
        """Outlines of the occluders in table mm, at a ball centre's height (a ball whose centre is
        inside one is hidden), each with its box in the shrunk picture (x0, y0, x1, y1)."""
        if not mask.any():
            return []
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        out = []
        for c in contours:
            c = cv2.approxPolyDP(c, 1.0, True).reshape(-1, 2).astype(np.float64) + win.origin
            if len(c) >= 3:
                box = (int(c[:, 0].min()), int(c[:, 1].min()), int(c[:, 0].max()) + 1, int(c[:, 1].max()) + 1)
                out.append((self._cal.to_table_mm((c + 0.5) * self._scale - 0.5, self.profile.ball_radius_mm), box))
        return out


def _half_path(area: float, r: float) -> float:
    """Half the distance a ball of radius ``r`` travelled while the shutter was open, from the area of
    the stadium it smeared into (a disc of radius r, and a band 2r wide along the path)."""
    return (float(area) - math.pi * r * r) / (4.0 * r)


def _streak_shaped(minor: float, major: float, r: float) -> bool:
    """Whether a blob's spread across and along its axis (:func:`_spread`) is a ball's streak: across
    a stadium 2r wide it lies between a disc's (r/2) and a band's (r/sqrt(3)), and it is longer than
    it is wide."""
    return 0.35 * r <= minor <= 0.75 * r and major >= 1.15 * minor


def _spread(mask: np.ndarray) -> tuple[float, float, np.ndarray]:
    """A blob's spread (px, one standard deviation) across and along its main axis, and the axes
    (columns, the main one last), from its second moments."""
    m = cv2.moments(mask, binaryImage=True)
    c = np.array([[m["mu20"], m["mu11"]], [m["mu11"], m["mu02"]]]) / max(m["m00"], 1.0)
    spread, axes = np.linalg.eigh(c)
    minor, major = np.sqrt(np.maximum(spread, 0.0))
    return float(minor), float(major), axes


def _fill_table_polygon(mask: np.ndarray, view: TableView, poly_mm: np.ndarray, h_mm: float, s: int) -> None:
    """Fill (with 1) in ``mask``, the picture shrunk ``s`` times, the polygon (n, 2) of table mm seen
    ``h_mm`` above the cloth."""
    px = view.project(np.c_[poly_mm, np.full(len(poly_mm), h_mm)])
    cv2.fillPoly(mask, [np.round(((px + 0.5) / s - 0.5) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)


_DISC_ANGLES = np.linspace(0, 2 * np.pi, 24, endpoint=False)
_DISC = np.stack([np.cos(_DISC_ANGLES), np.sin(_DISC_ANGLES)], -1)  # a disc's outline as a 24-gon, unit radius


def _fill_discs(mask: np.ndarray, view: TableView, discs: list, s: int) -> None:
    """Fill in ``mask`` (the picture shrunk ``s`` times) table discs ``(centre_mm, radius_mm, h_mm)``,
    each seen ``h_mm`` above the cloth (24-gons)."""
    for xy, radius, h in discs:
        _fill_table_polygon(mask, view, np.asarray(xy) + radius * _DISC, h, s)


def _nms(pts: np.ndarray, strength: np.ndarray, min_dist: np.ndarray) -> np.ndarray:
    """Indices of points kept by greedy non-maximum suppression (strongest first)."""
    order = np.argsort(-strength, kind="stable")
    kept: list[int] = []
    for i in order:
        if all(np.hypot(*(pts[i] - pts[j])) >= min(min_dist[i], min_dist[j]) for j in kept):
            kept.append(int(i))
    return np.array(kept, dtype=int)


def _settle(new: BallDetections, n_fitted: int, whole: np.ndarray, old: BallDetections, old_rest: np.ndarray,
            cfg: DetectorConfig) -> tuple[BallDetections, np.ndarray]:
    """A ball at rest is placed by the mean of its outline fits, not by the last one alone: each fit
    errs by a few tenths of a pixel (the picture's noise, a video codec's blocks, the shading of the
    ball's limb), and fits made seconds apart err independently.

    The first ``n_fitted`` of ``new`` were found by their outlines (the rest as blobs: never averaged).
    A new fit within ``cfg.rest_gate`` radii of a visible ball of ``old`` that stood unchanged in the
    previous frame (its picture had not changed since it was placed: it was at rest) is that ball,
    still at rest: its place becomes the running mean of at most ``cfg.rest_fits`` fits; a fit of part
    of its outline (not ``whole`` (n,)) within ``cfg.rest_hold`` radii leaves it where it was. A ball
    refitted frame after frame (something moves round it, or it creeps) is placed by its last fit.
    ``old_rest`` (m, 2): per ball of ``old``, the number of fits its place averages and whether it
    stood unchanged. Returns ``new`` and its rows of ``old_rest`` for the next frame."""
    from dataclasses import replace

    rest = np.c_[np.ones(len(new)), np.zeros(len(new))]
    fitted = (np.arange(len(new)) < n_fitted) & (new.state == BallState.VISIBLE)
    cand = np.nonzero((old.state == BallState.VISIBLE) & (old_rest[:, 1] > 0))[0]
    if not fitted.any() or len(cand) == 0:
        return new, rest
    d = np.linalg.norm(new.xy_px[:, None] - old.xy_px[cand][None], axis=2)
    j = np.argmin(d, axis=1)
    dj = d[np.arange(len(new)), j]
    hold = fitted & ~whole & (dj <= cfg.rest_hold * new.radius_px)
    same = fitted & (dj <= cfg.rest_gate * new.radius_px) & ~hold
    if not (same | hold).any():
        return new, rest
    o = cand[j]
    m = np.minimum(old_rest[o, 0], cfg.rest_fits - 1)[:, None]
    w = np.where(hold[:, None], 1.0, np.where(same[:, None], m / (m + 1.0), 0.0))
    rest[:, 0] = np.where(hold, old_rest[o, 0], np.where(same, m[:, 0] + 1.0, 1.0))
    return replace(new, xy_px=w * old.xy_px[o] + (1 - w) * new.xy_px, xy_mm=w * old.xy_mm[o] + (1 - w) * new.xy_mm), rest


_RING = ray_directions(16)  # the directions of a blob's surround


def _stands_out(image: np.ndarray, centre: np.ndarray, radius: np.ndarray, core: np.ndarray, smear: np.ndarray,
                min_contrast: float) -> np.ndarray:
    """Whether blobs (centres (n, 2) px, radii (n,) px, core colours (n, 3), smear ratios (n,): 1 for a
    round blob) differ from the picture's cloth round them (the median of a ring two radii out; a
    streak's own ends cross it in few of its points) by at least ``min_contrast`` grey levels, the
    core unmixed from the cloth a streak spreads it over. A patch of bare cloth that the background
    model holds wrong (where a ball stood when the video began, a shadow that has gone) is foreground
    against the model but not against the cloth beside it: no ball."""
    if len(centre) == 0:
        return np.zeros(0, bool)
    pts = centre[:, None, :] + 2.0 * radius[:, None, None] * _RING[None]
    ring = cv2.remap(image, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    cloth = np.median(ring, axis=1)
    return np.linalg.norm(core - cloth, axis=1) * np.maximum(smear, 1.0) >= min_contrast


_SURROUND = np.concatenate([share * ray_directions(24) for share in (1.6, 2.1)])  # two rings, in radii


def _continued(image: np.ndarray, centre: np.ndarray, radius: np.ndarray, core: np.ndarray, others: np.ndarray,
               tolerance: np.ndarray, axis: np.ndarray | None = None) -> np.ndarray:
    """For outlines (centres (n, 2) px, radii (n,) px, core colours (n, 3)): the share of two rings
    round each (1.6 and 2.1 radii out) in the core's own colour (within ``tolerance`` (n,) grey levels),
    leaving out what lies on another ball (centres ``others`` (m, 2) px, within 1.1 radii: a
    touching ball of the same colour), and, for a streak (``axis`` (n, 2): the unit vector along
    it, zero for a round blob), what lies on its path (within 1.1 radii of its axis). A ball is
    surrounded by cloth, its shadow, other balls or things of other colours; a fingertip by its own
    finger and the next ones."""
    if len(centre) == 0:
        return np.zeros(0)
    pts = centre[:, None, :] + radius[:, None, None] * _SURROUND[None]
    ring = cv2.remap(image, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    same = np.linalg.norm(ring - core[:, None, :], axis=2) <= np.asarray(tolerance)[:, None]
    if len(others):
        d = np.linalg.norm(pts[:, :, None, :] - others[None, None, :, :], axis=3)  # (n, S, m)
        same &= ~(d <= 1.1 * radius[:, None, None]).any(axis=2)
    if axis is not None:
        rel = pts - centre[:, None, :]
        across = np.abs(rel[..., 0] * axis[:, None, 1] - rel[..., 1] * axis[:, None, 0])
        same &= ~((across <= 1.1 * radius[:, None]) & (np.abs(axis).sum(axis=1) > 0)[:, None])
    return same.mean(axis=1)


def _raced(centre: np.ndarray, half_path: float, radius: float, before: np.ndarray) -> bool:
    """Whether a streak centred at ``centre`` (2,) px, ``half_path`` px half long, continues a ball
    of the previous frame (``before`` (m, 2) px): the nearest lies at least a half path away (a
    frame's travel is the path over the shutter's share of the frame, a half path or more), and no
    further than four half paths and a ball's width. A ball carried by a hand, its blob stretched
    by the hand, was about where it is a frame ago."""
    if len(before) == 0:
        return False
    d = float(np.linalg.norm(before - centre, axis=1).min())
    return half_path <= d <= 4.0 * half_path + 2.0 * radius


def _streak_pairs(balls: BallDetections) -> list[tuple[int, int]]:
    """Detections that are the two ends of one smeared ball: pairs, each the other's nearest, nearer
    than three radii, whose colours are both uncertain (the ball is mixed with the cloth along a
    streak; two touching balls show their colours)."""
    unsure = np.nonzero(balls.label == "")[0]
    if len(unsure) < 2:
        return []
    p = balls.xy_px[unsure]
    d = np.linalg.norm(p[:, None] - p[None], axis=2)
    np.fill_diagonal(d, np.inf)
    nearest = np.argmin(d, axis=1)
    rows = np.arange(len(unsure))
    mutual = (nearest[nearest] == rows) & (d[rows, nearest] < 3.0 * balls.radius_px[unsure]) & (rows < nearest)
    return [(int(unsure[a]), int(unsure[nearest[a]])) for a in np.nonzero(mutual)[0]]


def _near(pts: np.ndarray, others: np.ndarray, within: np.ndarray) -> np.ndarray:
    """For each point (n, 2): is one of ``others`` (m, 2) within ``within`` (n,) of it?"""
    if len(pts) == 0 or len(others) == 0:
        return np.zeros(len(pts), bool)
    return np.linalg.norm(pts[:, None, :] - others[None, :, :], axis=2).min(axis=1) <= within


def _join(cand: np.ndarray, more: np.ndarray, min_dist: float) -> np.ndarray:
    """``cand`` (n, 2) plus the points of ``more`` (m, 2) not within ``min_dist`` of one of them."""
    if len(more) == 0:
        return cand
    if len(cand) == 0:
        return more.copy()
    d = np.linalg.norm(more[:, None, :] - cand[None, :, :], axis=2)
    return np.concatenate([cand, more[d.min(axis=1) > min_dist]])


class _Window:
    """A rectangle of the shrunk picture: where a frame's work is done."""

    def __init__(self, y0: int, y1: int, x0: int, x1: int):
        self.y0, self.y1, self.x0, self.x1 = y0, y1, x0, x1
        self.slices = (slice(y0, y1), slice(x0, x1))
        self.origin = np.array([x0, y0])
        self.shape = (y1 - y0, x1 - x0)

    @classmethod
    def whole(cls, shape: tuple[int, int]) -> "_Window":
        return cls(0, shape[0], 0, shape[1])

    @classmethod
    def around(cls, box: tuple[int, int, int, int], margin: int, shape: tuple[int, int]) -> "_Window":
        """The box (x, y, w, h) grown by ``margin`` pixels, within the picture."""
        x, y, w, h = box
        return cls(max(0, y - margin), min(shape[0], y + h + margin), max(0, x - margin), min(shape[1], x + w + margin))

    def overlaps(self, box: tuple[int, int, int, int]) -> bool:
        x0, y0, x1, y1 = box
        return x0 < self.x1 and self.x0 < x1 and y0 < self.y1 and self.y0 < y1


class _Parts:
    """The connected blobs of a window's leftover foreground, found once and shared by the cluster,
    blob and occluder steps; each blob a step explains is marked used."""

    def __init__(self, mask: np.ndarray, win: _Window):
        self.n, self.lab, self.stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
        self.win = win
        self.cents = cents + win.origin  # in the shrunk picture
        self.used = np.zeros(self.n, bool)
        self.used[0] = True

    def ids(self) -> list[int]:
        return [i for i in range(1, self.n) if not self.used[i]]

    def area(self, i: int) -> int:
        return int(self.stats[i, cv2.CC_STAT_AREA])

    def box(self, i: int) -> tuple[int, int, int, int]:
        """(x, y, w, h) in the shrunk picture."""
        x, y, w, h = (int(v) for v in self.stats[i, :4])
        return x + self.win.x0, y + self.win.y0, w, h

    def centre(self, i: int) -> np.ndarray:
        return self.cents[i]

    def centre_yx(self, i: int) -> tuple[int, int]:
        return int(round(self.cents[i][1])), int(round(self.cents[i][0]))

    def mask(self, i: int) -> np.ndarray:
        x, y, w, h = (int(v) for v in self.stats[i, :4])
        return (self.lab[y:y + h, x:x + w] == i).astype(np.uint8)

    def touches(self, i: int, edge: np.ndarray) -> bool:
        """Whether blob ``i`` reaches ``edge`` (bool, the whole shrunk picture)."""
        x, y, w, h = (int(v) for v in self.stats[i, :4])
        e = edge[self.win.y0 + y:self.win.y0 + y + h, self.win.x0 + x:self.win.x0 + x + w]
        return bool((e & (self.lab[y:y + h, x:x + w] == i)).any())

    def beside_large(self, i: int, reach: int, area: float) -> bool:
        """Whether another blob of at least ``area`` pixels lies within ``reach`` pixels of blob ``i``."""
        big = np.nonzero(self.stats[:, cv2.CC_STAT_AREA] >= area)[0]
        big = big[(big != i) & (big != 0)]
        if len(big) == 0:
            return False
        x, y, w, h = (int(v) for v in self.stats[i, :4])
        y0, x0 = max(0, y - reach), max(0, x - reach)
        y1, x1 = min(self.lab.shape[0], y + h + reach), min(self.lab.shape[1], x + w + reach)
        near = cv2.dilate((self.lab[y0:y1, x0:x1] == i).astype(np.uint8), np.ones((2 * reach + 1, 2 * reach + 1), np.uint8))
        return bool(np.isin(self.lab[y0:y1, x0:x1][near.astype(bool)], big).any())

    def covers(self, i: int, centre: np.ndarray, radius: float) -> float:
        """The share of the disc of ``radius`` round ``centre`` (the shrunk picture's px) that blob ``i``
        covers."""
        x0, y0 = self.win.x0, self.win.y0
        h, w = self.lab.shape
        r = int(np.ceil(radius))
        cx, cy = int(round(centre[0])) - x0, int(round(centre[1])) - y0
        ys, xs = np.mgrid[cy - r:cy + r + 1, cx - r:cx + r + 1]
        disc = (xs - (centre[0] - x0)) ** 2 + (ys - (centre[1] - y0)) ** 2 <= radius * radius
        inside = disc & (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        if not disc.any():
            return 0.0
        return float(np.count_nonzero(self.lab[ys[inside], xs[inside]] == i)) / float(np.count_nonzero(disc))

    def use(self, ids) -> None:
        self.used[np.asarray(ids, dtype=int)] = True

    def rest(self, min_area: float) -> np.ndarray:
        """The blobs no step used, at least ``min_area`` pixels (uint8 mask of the window)."""
        keep = ~self.used & (self.stats[:, cv2.CC_STAT_AREA] >= min_area)
        return keep[self.lab].astype(np.uint8)
