"""What the tracker hands to event inference: every profile ball in one frame, as a frozen snapshot.

:class:`Tracks` has one row per ball of the table profile, always in profile order (``ids``), so a
shot's history stacks into ``(frames, balls)`` arrays without any bookkeeping. A row says where
the ball is (the filtered estimate ``xy_mm`` and this frame's measurement ``z_mm``), how it moves,
and what the camera could see of it (``state``). Positions are table millimetres in the frame of
:mod:`calibration.table`.

:meth:`Tracks.rows` gives the snapshot's rows of ``tracks.csv`` (``ball, class, x_mm, y_mm, state,
confidence``, one per ball on the table or seen in a pocket); the writers in ``cueref/`` add the
frame and its time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from vision.types import PinDetections

__all__ = ["TrackState", "Tracks", "ON_TABLE_STATES"]


class TrackState(IntEnum):
    """What is known of one ball in one frame (stored as uint8 in :attr:`Tracks.state`)."""

    SEEN = 0  # measured on the cloth this frame
    OCCLUDED = 1  # not measured, under a cue, hand or arm: ``xy_mm`` is predicted (or where it was last seen)
    MISSING = 2  # not measured and nothing hides it (vision missed it, or it has just left the table)
    AIRBORNE = 3  # measured off the cloth (a jump): ``height_mm`` says how high
    IN_POCKET = 4  # seen inside a pocket's net: potted
    OFF = 5  # not on the table (not yet seen, potted, removed, off the table): ``xy_mm`` is NaN


ON_TABLE_STATES = (TrackState.SEEN, TrackState.OCCLUDED, TrackState.MISSING, TrackState.AIRBORNE)

_STATE_NAMES = {s: s.name.lower() for s in TrackState}


@dataclass(frozen=True, slots=True, eq=False)  # eq=False: ndarray fields break dataclass ==
class Tracks:
    """Every profile ball in one frame; each array has one row per ball of ``ids`` (profile order).

    ``valid`` is False for a frame vision could not read against the table (nothing in it may be
    inferred from); ``repeated`` is True for a frame identical to the previous one (no new
    measurement). ``occluders`` and ``pins`` are vision's, passed through for event inference.
    """

    frame: int
    t_s: float
    ids: tuple[str, ...]  # profile ball ids, one per row
    classes: tuple[str, ...]  # each ball's colour class (the profile's colour name)
    xy_mm: np.ndarray  # (n, 2) float64: the filtered centre on the table; NaN when OFF
    z_mm: np.ndarray  # (n, 2) float64: this frame's measured centre; NaN when not measured
    v_mm_s: np.ndarray  # (n, 2) float64: filtered velocity (0 for a ball at rest); NaN when OFF
    sigma_mm: np.ndarray  # (n,) float64: standard deviation of the position estimate
    height_mm: np.ndarray  # (n,) float64: centre height above a resting ball's centre (0 on the cloth)
    state: np.ndarray  # (n,) uint8: a TrackState
    confidence: np.ndarray  # (n,) float32 in [0, 1]: how sure the identity and the position are
    occluders: tuple[np.ndarray, ...] = ()
    pins: PinDetections | None = None
    valid: bool = True
    repeated: bool = False

    def __post_init__(self) -> None:
        n = len(self.ids)
        for name, tail in (("xy_mm", (2,)), ("z_mm", (2,)), ("v_mm_s", (2,)), ("sigma_mm", ()), ("height_mm", ()),
                           ("state", ()), ("confidence", ())):
            a = getattr(self, name)
            if a.shape != (n, *tail):
                raise ValueError(f"Tracks.{name} must have shape {(n, *tail)}, got {a.shape}")
            a.setflags(write=False)  # a snapshot: nobody changes it after the tracker made it
        if len(self.classes) != n:
            raise ValueError(f"Tracks.classes must have {n} entries, got {len(self.classes)}")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def on_table(self) -> np.ndarray:
        """(n,) bool: the balls the tracker holds on the table (seen, hidden, missed or in the air)."""
        return np.isin(self.state, [int(s) for s in ON_TABLE_STATES])

    @property
    def measured(self) -> np.ndarray:
        """(n,) bool: the balls measured this frame (on the cloth or in the air)."""
        return np.isfinite(self.z_mm[:, 0])

    def index(self, ball: str) -> int:
        return self.ids.index(ball)

    def rows(self) -> list[tuple[str, str, float, float, str, float]]:
        """``(ball, class, x_mm, y_mm, state, confidence)`` of every ball not OFF (``tracks.csv``): the
        state is the lower-case :class:`TrackState` name (``seen``, ``occluded``, ``missing``,
        ``airborne``, ``in_pocket``)."""
        return [(self.ids[i], self.classes[i], float(self.xy_mm[i, 0]), float(self.xy_mm[i, 1]),
                 _STATE_NAMES[TrackState(int(self.state[i]))], float(self.confidence[i]))
                for i in np.flatnonzero(self.state != TrackState.OFF)]
