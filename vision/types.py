"""What vision hands to tracking: the balls and pins seen in one frame, as struct-of-arrays values.

This module is the contract between ``vision/`` (which fills it) and ``tracking/`` (which reads it).
It imports NumPy only. Positions are table millimetres in the frame of :mod:`calibration.table`;
a ball's ``xy_mm`` is its centre projected straight down onto the cloth (read on the ball-centre
plane, so parallax is already removed). Pixel values are in the *distorted* camera image, ``(x, y) =
(col, row)``, origin top-left.

Vision reports *classes* (a colour name from the table profile: ``white``, ``red``, ``yellow``,
...), never ball ids: naming balls is the tracker's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

__all__ = ["BallState", "PinState", "BallDetections", "PinDetections", "FrameDetections", "UNCERTAIN"]

UNCERTAIN = ""  # the label of a ball whose class vision cannot tell with confidence


class BallState(IntEnum):
    """What vision could see of a ball (stored as uint8 in :attr:`BallDetections.state`)."""

    VISIBLE = 0  # on the cloth, seen
    OCCLUDED = 1  # under a cue, hand, arm or head: position is where it was last seen
    AIRBORNE = 2  # off the cloth (a jump): ``height_mm`` says how high its centre is above resting
    IN_POCKET = 3  # seen inside a pocket's net or a hole: not on the table


class PinState(IntEnum):
    """A bar-billiards pin (stored as uint8 in :attr:`PinDetections.state`)."""

    STANDING = 0  # on its spot
    MOVED = 1  # standing, but off its spot
    DOWN = 2  # knocked over


_ROW_FIELDS = ("xy_mm", "xy_px", "radius_px", "height_mm", "label", "class_prob", "score", "state")


def _check_len(name: str, a: np.ndarray, n: int, tail: tuple[int, ...] = ()) -> None:
    if a.shape != (n, *tail):
        raise ValueError(f"{name} must have shape {(n, *tail)}, got {a.shape}")


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: ndarray fields break dataclass ==
class BallDetections:
    """Ball candidates in one frame; every array has length n (rows are balls, in no special order).

    ``classes`` names the columns of ``class_prob`` (the game's colour classes, from the profile);
    ``label`` is the most probable class, or :data:`UNCERTAIN` when vision cannot tell.
    """

    frame: int
    t_s: float
    classes: tuple[str, ...]
    xy_mm: np.ndarray  # (n, 2) float64: centre on the table, mm
    xy_px: np.ndarray  # (n, 2) float64: centre in the image, px
    radius_px: np.ndarray  # (n,) float64: apparent radius, px
    height_mm: np.ndarray  # (n,) float64: centre height above a resting ball's centre (0 on the cloth)
    label: np.ndarray  # (n,) str (object): a class name, or "" if uncertain
    class_prob: np.ndarray  # (n, k) float32: probability of each of ``classes``; rows sum to 1
    score: np.ndarray  # (n,) float32 in [0, 1]: how sure vision is that this is a ball at all
    state: np.ndarray  # (n,) uint8: a BallState

    def __post_init__(self) -> None:
        n = len(self.xy_mm)
        # one comparison of every shape first (vision makes tens of these a frame); the culprit is named after
        one, pair = (n,), (n, 2)
        if (self.xy_mm.shape != pair or self.xy_px.shape != pair or self.radius_px.shape != one or self.height_mm.shape != one
                or self.label.shape != one or self.score.shape != one or self.state.shape != one
                or self.class_prob.shape != (n, len(self.classes))):
            _check_len("xy_mm", self.xy_mm, n, (2,))
            _check_len("xy_px", self.xy_px, n, (2,))
            for name in ("radius_px", "height_mm", "label", "score", "state"):
                _check_len(name, getattr(self, name), n)
            _check_len("class_prob", self.class_prob, n, (len(self.classes),))

    def __len__(self) -> int:
        return len(self.xy_mm)

    def __getitem__(self, index: np.ndarray | slice) -> "BallDetections":
        """A subset: boolean mask or index array over the rows."""
        return BallDetections(self.frame, self.t_s, self.classes, self.xy_mm[index], self.xy_px[index], self.radius_px[index],
                              self.height_mm[index], self.label[index], self.class_prob[index], self.score[index],
                              self.state[index])

    @classmethod
    def concat(cls, parts: "list[BallDetections]") -> "BallDetections":
        """The rows of several detections of one frame (the first part's frame, time and classes)."""
        a = parts[0]
        if len(parts) == 1:
            return a
        return cls(
            frame=a.frame, t_s=a.t_s, classes=a.classes,
            **{name: np.concatenate([getattr(p, name) for p in parts]) for name in _ROW_FIELDS},
        )

    def at(self, frame: int, t_s: float) -> "BallDetections":
        """The same rows, stamped with another frame and time."""
        return BallDetections(frame, t_s, self.classes, self.xy_mm, self.xy_px, self.radius_px, self.height_mm, self.label,
                              self.class_prob, self.score, self.state)

    @classmethod
    def empty(cls, frame: int, t_s: float, classes: tuple[str, ...]) -> "BallDetections":
        return cls(
            frame=frame, t_s=t_s, classes=tuple(classes),
            xy_mm=np.zeros((0, 2)), xy_px=np.zeros((0, 2)), radius_px=np.zeros(0), height_mm=np.zeros(0),
            label=np.zeros(0, dtype=object), class_prob=np.zeros((0, len(classes)), dtype=np.float32),
            score=np.zeros(0, dtype=np.float32), state=np.zeros(0, dtype=np.uint8),
        )


@dataclass(frozen=True, slots=True, eq=False)
class PinDetections:
    """The pins of a bar-billiards table in one frame; arrays of length n (one row per profile pin)."""

    ids: tuple[str, ...]  # profile pin ids
    xy_mm: np.ndarray  # (n, 2) float64: where the pin's base is (NaN when down and not found)
    state: np.ndarray  # (n,) uint8: a PinState
    score: np.ndarray  # (n,) float32 in [0, 1]: how sure vision is of the state

    def __post_init__(self) -> None:
        n = len(self.ids)
        _check_len("xy_mm", self.xy_mm, n, (2,))
        _check_len("state", self.state, n)
        _check_len("score", self.score, n)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls) -> "PinDetections":
        return cls(ids=(), xy_mm=np.zeros((0, 2)), state=np.zeros(0, dtype=np.uint8), score=np.zeros(0, dtype=np.float32))


@dataclass(frozen=True, slots=True, eq=False)
class FrameDetections:
    """Everything vision saw in one frame.

    ``occluders`` are the regions of the table hidden by a cue, a hand, an arm or a head, each a
    polygon (m, 2) in table mm; tracking treats a ball predicted inside one as unobserved, not gone.
    ``valid`` is False when the frame could not be read against the table (camera bumped and not yet
    recalibrated, table hidden): nothing in it may be inferred from.
    """

    frame: int
    t_s: float
    balls: BallDetections
    pins: PinDetections = field(default_factory=PinDetections.empty)
    occluders: tuple[np.ndarray, ...] = ()
    valid: bool = True
    repeated: bool = False  # the image is identical to the previous frame's (15 fps stored as 30): no new measurement
