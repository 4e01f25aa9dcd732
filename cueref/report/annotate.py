"""The annotated video: the match as the camera saw it, with the referee's view burnt in.

:class:`AnnotatedVideo` is a consumer of the referee's per-frame results: give it each frame's
image, the tracks of that frame and the latest call, and it writes an H.264 MP4 that browsers play
(``cueref.video.VideoWriter``: yuv420p, faststart) with

* every tracked ball circled in its colour with its id, and a short trail of where it was;
* the score line at the top and the current call at the bottom (a pending question in orange).

Frames are scaled down to ``max_height`` first (720 by default): the annotated video is for review
in a browser, and a smaller picture keeps the encoder's share of a live run small.
"""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any, Mapping

import cv2
import numpy as np

from calibration.camera import Calibration
from calibration.table import TableProfile
from cueref.report.calls import call_text, score_line
from cueref.store.tracks import Tracks
from cueref.video import VideoWriter

__all__ = ["AnnotatedVideo"]

FONT = cv2.FONT_HERSHEY_SIMPLEX
PENDING_BGR = (0, 140, 255)
TEXT_BGR = (255, 255, 255)


def _wrap(text: str, width_px: int, scale: float, thickness: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        trial = f"{line} {w}".strip()
        if cv2.getTextSize(trial, FONT, scale, thickness)[0][0] > width_px and line:
            lines.append(line)
            line = w
        else:
            line = trial
    return lines + ([line] if line else [])


class AnnotatedVideo:
    """Writes the annotated video (module docstring). Use as a context manager, or call
    :meth:`close` (or :meth:`abort` to drop a partial file)."""

    def __init__(self, path: str | Path, *, fps: float, profile: TableProfile, game: str, calibration: Calibration | None,
                 max_height: int = 720, trail_s: float = 0.6, crf: int = 26):
        self.path = Path(path)
        self.profile, self.game, self.calibration = profile, game, calibration
        self.max_height, self.trail_s = max_height, trail_s
        self._writer = VideoWriter(self.path, fps, crf=crf)
        self._trails: dict[str, deque[tuple[float, np.ndarray]]] = {}
        self._scale: float | None = None
        self._colours = {b.id: tuple(int(c) for c in b.rgb[::-1]) for b in profile.balls}
        self.frames = 0

    def __enter__(self) -> "AnnotatedVideo":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _project(self, xy_mm: np.ndarray) -> np.ndarray:
        assert self.calibration is not None and self._scale is not None
        return self.calibration.to_image_px(xy_mm, self.profile.ball_radius_mm) * self._scale

    def frame(self, image: np.ndarray, t_s: float, tracks: Tracks | None = None, call: Mapping[str, Any] | None = None) -> None:
        """Draw and write one frame. ``tracks``: the balls of this frame; ``call``: the latest call
        (``Decision.to_dict()``), shown until the next one."""
        h, w = image.shape[:2]
        if self._scale is None:
            self._scale = min(1.0, self.max_height / h)
        if self._scale < 1.0:
            out = cv2.resize(image, (int(round(w * self._scale / 2)) * 2, int(round(h * self._scale / 2)) * 2), interpolation=cv2.INTER_AREA)
        else:
            out = image.copy()
        if tracks is not None and len(tracks) and self.calibration is not None:
            self._draw_balls(out, t_s, tracks)
        self._draw_text(out, call)
        self._writer.write(out, t_s)
        self.frames += 1

    def _draw_balls(self, out: np.ndarray, t_s: float, tracks: Tracks) -> None:
        ok = np.isfinite(tracks.xy_mm).all(axis=1)
        if not ok.any():
            return
        px = self._project(tracks.xy_mm[ok])
        edge = self._project(tracks.xy_mm[ok] + [self.profile.ball_radius_mm, 0.0])
        radii = np.maximum(np.hypot(*(edge - px).T), 3.0)
        thick = max(1, int(round(out.shape[0] / 360)))
        for ball, p, r in zip(tracks.ball[ok], px, radii):
            trail = self._trails.setdefault(str(ball), deque())
            trail.append((t_s, p))
            while trail and trail[0][0] < t_s - self.trail_s:
                trail.popleft()
        for ball, trail in list(self._trails.items()):
            if trail and trail[-1][0] < t_s - self.trail_s:
                del self._trails[ball]
                continue
            pts = np.array([p for _, p in trail], dtype=np.float64)
            if len(pts) > 1:
                cv2.polylines(out, [np.round(pts * 4).astype(np.int32)], False, self._colours.get(ball, TEXT_BGR), thick, cv2.LINE_AA, shift=2)
        font = 0.45 * out.shape[0] / 720
        for ball, p, r in zip(tracks.ball[ok], px, radii):
            colour = self._colours.get(str(ball), TEXT_BGR)
            centre = (int(round(p[0])), int(round(p[1])))
            cv2.circle(out, centre, int(math.ceil(r + thick)), (0, 0, 0), thick + 1, cv2.LINE_AA)
            cv2.circle(out, centre, int(math.ceil(r + thick)), colour, thick, cv2.LINE_AA)
            at = (centre[0] + int(r) + 2, centre[1] - int(r) - 2)
            cv2.putText(out, str(ball), at, FONT, font, (0, 0, 0), thick + 2, cv2.LINE_AA)
            cv2.putText(out, str(ball), at, FONT, font, TEXT_BGR, thick, cv2.LINE_AA)

    def _banner(self, out: np.ndarray, lines: list[str], top: bool, colour: tuple[int, int, int], scale: float, thick: int) -> None:
        if not lines:
            return
        h, w = out.shape[:2]
        line_h = int(cv2.getTextSize("Ag", FONT, scale, thick)[0][1] * 1.9)
        box_h = line_h * len(lines) + line_h // 2
        y0 = 0 if top else h - box_h
        roi = out[y0:y0 + box_h]
        cv2.convertScaleAbs(roi, dst=roi, alpha=0.35)  # darken under the text
        for i, line in enumerate(lines):
            cv2.putText(out, line, (line_h // 2, y0 + line_h * (i + 1)), FONT, scale, colour, thick, cv2.LINE_AA)

    def _draw_text(self, out: np.ndarray, call: Mapping[str, Any] | None) -> None:
        h, w = out.shape[:2]
        scale, thick = 0.6 * h / 720, max(1, int(round(h / 540)))
        score = score_line(self.game, call)
        self._banner(out, [score] if score else [], True, TEXT_BGR, scale, thick)
        if call:
            head = f"shot {call['shot']} {call.get('player') or ''}: " if call.get("shot") is not None else ""
            lines = _wrap(head + call_text(call), w - 40, scale, thick)[:3]
            self._banner(out, lines, False, PENDING_BGR if call.get("pending") else TEXT_BGR, scale, thick)

    def close(self) -> Path:
        self._writer.close()
        return self.path

    def abort(self) -> None:
        self._writer.abort()
