"""Inputs every video command checks the same way before any long work: a CAL.json must have been made
for this table and this camera's image size."""

from __future__ import annotations

from pathlib import Path

from calibration import calfile
from calibration.camera import Calibration
from calibration.table import TableProfile
from cueref.errors import UserError

__all__ = ["load_calibration", "SIZE_TOLERANCE_MM"]

SIZE_TOLERANCE_MM = 1.0  # a table measured again differs by a millimetre or so; a different table by far more


def load_calibration(path: str | Path, profile: TableProfile, image_size: tuple[int, int]) -> Calibration:
    """Read a CAL.json and refuse it when it was made for another table (its playing surface or ball
    size differs from ``profile``'s) or for another image size (``(width, height)`` px of the video)."""
    cal = calfile.load(path)
    made = f"{path} was made for"
    redo = f"calibrate this video's table with: cueref calibrate VIDEO --table {profile.name} --out CAL.json (or leave --calibration out)"
    table = (cal.length_mm, cal.width_mm)
    if max(abs(cal.length_mm - profile.length_mm), abs(cal.width_mm - profile.width_mm)) > SIZE_TOLERANCE_MM:
        raise UserError(f"{made} the {cal.profile_name or 'unnamed'} table ({table[0]:g} x {table[1]:g} mm), not the "
                        f"{profile.name} table ({profile.length_mm:g} x {profile.width_mm:g} mm): {redo}")
    if abs(cal.ball_radius_mm - profile.ball_radius_mm) > 0.5:
        raise UserError(f"{made} balls of {2 * cal.ball_radius_mm:g} mm, the {profile.name} table's are "
                        f"{profile.ball_diameter_mm:g} mm: {redo}")
    if tuple(cal.image_size) != tuple(image_size):
        raise UserError(f"{made} {cal.image_size[0]}x{cal.image_size[1]} images, the video is "
                        f"{image_size[0]}x{image_size[1]}: {redo}")
    return cal
