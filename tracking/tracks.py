"""What the tracker hands to event inference: every profile ball in one frame, as a frozen snapshot.

:class:`Tracks` has one row per ball of the table profile, always in profile order (``ids``), so a
shot's history stacks into ``(frames, balls)`` arrays without any bookkeeping. A row says where
the ball is (the filtered estimate ``xy_mm`` and this frame's measurement ``z_mm``), how it moves,
and what the camera could see of it (``state``). Positions are table millimetres in the frame of
:mod:`calibration.table`.

:class:`TracksCsvWriter` writes snapshots as ``tracks.csv`` with exactly the columns
``frame, t_s, ball, class, x_mm, y_mm, state, confidence`` (one row per ball on the table).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TextIO

import numpy as np

from vision.types import PinDetections

__all__ = ["TrackState", "Tracks", "TracksCsvWriter", "CSV_COLUMNS", "ON_TABLE_STATES"]

CSV_COLUMNS = ("frame", "t_s", "ball", "class", "x_mm", "y_mm", "state", "confidence")


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


class TracksCsvWriter:
    """Writes snapshots to ``tracks.csv``: one row per ball on the table (or seen in a pocket) per frame.

    ``state`` is the lower-case :class:`TrackState` name; ``x_mm``/``y_mm`` the filtered position to
    0.1 mm; ``confidence`` to 0.01. Repeated frames are written too (with the same values), so the
    file has a row for every frame that had a ball. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, dest: str | Path | TextIO):
        if isinstance(dest, (str, Path)):
            self._fh: TextIO = open(dest, "w", encoding="utf-8", newline="")
            self._own = True
        else:
            self._fh, self._own = dest, False
        self._csv = csv.writer(self._fh, lineterminator="\n")
        self._csv.writerow(CSV_COLUMNS)
        self.rows = 0

    def write(self, tracks: Tracks) -> None:
        keep = np.flatnonzero(tracks.state != TrackState.OFF)
        for i in keep:
            x, y = tracks.xy_mm[i]
            self._csv.writerow((
                tracks.frame, f"{tracks.t_s:.6f}", tracks.ids[i], tracks.classes[i],
                "" if not np.isfinite(x) else f"{x:.1f}", "" if not np.isfinite(y) else f"{y:.1f}",
                _STATE_NAMES[TrackState(int(tracks.state[i]))], f"{float(tracks.confidence[i]):.2f}",
            ))
        self.rows += len(keep)
        self._fh.flush()  # a crash loses at most the frame being written

    def close(self) -> None:
        if self._own:
            self._fh.close()
        else:
            self._fh.flush()

    def __enter__(self) -> "TracksCsvWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
