"""What the renderer draws at one instant: the contract between the physics and the renderer.

The physics produces a timeline that can be sampled at any time (``timeline.at(t_s) -> Scene``); the
renderer turns a Scene (or several, spread over the exposure time, for motion blur) into an image.
Positions are table millimetres in the frame of :mod:`calibration.table`; heights are millimetres up
from the cloth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class BallStatus(StrEnum):
    ON_TABLE = "on_table"      # on the cloth (rolling, sliding, spinning or still)
    AIRBORNE = "airborne"      # jumped: h_mm > 0 (drawn larger, its shadow separated)
    IN_HAND = "in_hand"        # held by a hand over the table (being placed or lifted): drawn at h_mm
    POCKETED = "pocketed"      # dropped into a pocket or a bed hole: not drawn
    OFF_TABLE = "off_table"    # left the table: not drawn (or drawn at xy_mm on the rail, if on_rail)
    IN_TROUGH = "in_trough"    # bar billiards: waiting in the trough, not drawn


@dataclass(frozen=True, slots=True)
class BallPose:
    """One ball at one instant. ``h_mm`` is the height of the ball's *bottom* above the cloth (0 when
    on the cloth); ``spin_angle_rad``/``spin_axis`` orient the ball for drawing a marking, if any."""

    id: str
    xy_mm: tuple[float, float]
    status: BallStatus = BallStatus.ON_TABLE
    h_mm: float = 0.0
    velocity_mm_s: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True, slots=True)
class PinPose:
    """A pin: standing at ``xy_mm`` (possibly wobbling by ``tilt_rad`` towards ``lean_dir_rad``), or
    fallen, lying on its side from ``xy_mm`` in direction ``lean_dir_rad``."""

    id: str
    xy_mm: tuple[float, float]
    standing: bool = True
    tilt_rad: float = 0.0
    lean_dir_rad: float = 0.0


@dataclass(frozen=True, slots=True)
class Occluder:
    """Something over the table that hides what is under it.

    ``kind``: ``"cue"`` (a cue stick: ``tip_xy_mm``, ``butt_xy_mm``, ``h_mm`` of the tip, widths from
    tip 12 mm to butt 30 mm), ``"arm"`` (a forearm and hand: a thick polyline ``points_mm`` of width
    ``width_mm`` at height ``h_mm``), ``"hand"`` (a hand holding a ball: centre ``tip_xy_mm``)."""

    kind: str
    tip_xy_mm: tuple[float, float] = (0.0, 0.0)
    butt_xy_mm: tuple[float, float] = (0.0, 0.0)
    points_mm: tuple[tuple[float, float], ...] = ()
    width_mm: float = 0.0
    h_mm: float = 0.0


@dataclass(frozen=True, slots=True)
class Scene:
    """Everything drawn at time ``t_s``."""

    t_s: float
    balls: tuple[BallPose, ...] = ()
    pins: tuple[PinPose, ...] = ()
    occluders: tuple[Occluder, ...] = field(default_factory=tuple)
    scoreboard_down: bool = False  # bar billiards endgame: the scoreboard covers the back row
