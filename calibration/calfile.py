"""CAL.json: a calibration on disk. The format is documented in docs/calibration.md.

:func:`save` writes a :class:`~calibration.camera.Calibration`; :func:`load` reads and validates one
(a pydantic model declares every field: shapes, finite numbers, unknown fields refused), raising
:class:`~calibration.homography.CalibrationError` that names the file and the field on one line.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError

from calibration.camera import Calibration
from calibration.homography import CalibrationError, Homography
from calibration.validation import STRICT, JsonData, Number, one_line, pair, problem

__all__ = ["FORMAT", "VERSION", "to_dict", "from_dict", "dumps", "save", "load"]

FORMAT = "cueref-calibration"
VERSION = 1
CORNER_IDS = ("TL", "TR", "BR", "BL")
CONSISTENCY_MM = 1.0  # corners_px must map onto the table's corners within this (catches hand edits)


def _clean(value: Any) -> Any:
    """JSON-safe copy: numpy scalars and arrays to Python, NaN to None."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_clean(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def to_dict(cal: Calibration, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The CAL.json mapping of a calibration; ``source`` (path, frame time ...) is kept as given."""
    return _clean({
        "format": FORMAT,
        "version": VERSION,
        "image_size": list(cal.image_size),
        "camera_matrix": cal.camera_matrix,
        "dist_coeffs": cal.dist_coeffs,
        "homography_px_to_mm": cal.homography.matrix,
        "corners_px": {c: cal.corners_px[i] for i, c in enumerate(CORNER_IDS)},
        "camera_xyh_mm": list(cal.camera_xyh_mm),
        "table": {"profile": cal.profile_name, "length_mm": cal.length_mm, "width_mm": cal.width_mm,
                  "ball_radius_mm": cal.ball_radius_mm},
        "method": cal.method,
        "residuals": dict(cal.residuals),
        "source": dict(source or {}),
    })


def _array(*shape: int) -> Any:
    """The type of a vector or matrix of finite numbers of ``shape``, read as a float64 array."""

    def check(value: Any) -> np.ndarray:
        try:
            a = np.asarray(value, dtype=np.float64)
        except ValueError:  # rows of different lengths
            raise problem(f"must be numbers of shape {shape}, got rows of different lengths") from None
        if a.shape != shape:
            raise problem(f"must be numbers of shape {shape}, got shape {a.shape}")
        return a

    inner: Any = Number
    for _ in shape:
        inner = list[inner]
    return Annotated[inner, AfterValidator(check)]


def _positive_focal(k: np.ndarray) -> np.ndarray:
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise problem(f"has a focal length that is not positive (fx {k[0, 0]:g}, fy {k[1, 1]:g})")
    return k


def _above_the_cloth(c: np.ndarray) -> np.ndarray:
    if c[2] <= 0:
        raise problem(f"puts the camera {c[2]:g} mm above the cloth; it must be above")
    return c


Px = pair("[x_px, y_px]")
Mm = Annotated[float, Strict(), Field(gt=0)]


class _Corners(BaseModel):
    model_config = STRICT
    TL: Px
    TR: Px
    BR: Px
    BL: Px


class _Table(BaseModel):
    model_config = STRICT
    profile: Annotated[str, Strict()] = ""
    length_mm: Mm
    width_mm: Mm
    ball_radius_mm: Mm


class _CalFile(BaseModel):
    """The fields of CAL.json (docs/calibration.md)."""

    model_config = ConfigDict(**STRICT, arbitrary_types_allowed=True)
    format: Literal["cueref-calibration"]
    version: Literal[1]
    image_size: tuple[Annotated[int, Strict(), Field(gt=0)], Annotated[int, Strict(), Field(gt=0)]]
    camera_matrix: Annotated[_array(3, 3), AfterValidator(_positive_focal)]
    dist_coeffs: _array(5)
    homography_px_to_mm: _array(3, 3)
    corners_px: _Corners
    camera_xyh_mm: Annotated[_array(3), AfterValidator(_above_the_cloth)]
    table: _Table
    method: Literal["automatic", "manual"]
    residuals: dict[str, JsonData] = {}
    source: dict[str, JsonData] = {}


def from_dict(d: Any, where: str = "<calibration>") -> Calibration:
    """Validate a CAL.json mapping and build the calibration."""
    if not isinstance(d, Mapping):
        raise CalibrationError(f"{where}: a calibration file must hold a JSON object")
    if d.get("format") != FORMAT:
        raise CalibrationError(f"{where}: not a cueref calibration (field 'format' is {d.get('format')!r}, "
                               f"expected {FORMAT!r})")
    if d.get("version") != VERSION:
        raise CalibrationError(f"{where}: calibration format version {d.get('version')!r} is not supported "
                               f"(this cueref reads version {VERSION})", "recalibrate with this version of cueref")
    try:
        f = _CalFile.model_validate(d)
    except ValidationError as e:
        raise CalibrationError(f"{where}: {one_line(e)}", "recalibrate (cueref calibrate) to write a valid file") from None
    try:
        hom = Homography(f.homography_px_to_mm)
    except CalibrationError as e:
        raise CalibrationError(f"{where}: field 'homography_px_to_mm': {e.reason}") from None
    corners_px = np.array([getattr(f.corners_px, c) for c in CORNER_IDS], dtype=np.float64)
    centre = f.camera_xyh_mm
    cal = Calibration(
        image_size=f.image_size, camera_matrix=f.camera_matrix, dist_coeffs=f.dist_coeffs, homography=hom,
        camera_xyh_mm=(float(centre[0]), float(centre[1]), float(centre[2])), corners_px=corners_px,
        length_mm=f.table.length_mm, width_mm=f.table.width_mm, ball_radius_mm=f.table.ball_radius_mm,
        profile_name=f.table.profile, method=f.method, residuals=f.residuals,
    )
    want = np.array([[0, 0], [cal.length_mm, 0], [cal.length_mm, cal.width_mm], [0, cal.width_mm]], float)
    off = np.linalg.norm(cal.to_table_mm(corners_px) - want, axis=1)
    if off.max() > CONSISTENCY_MM:
        raise CalibrationError(
            f"{where}: the homography and corners_px disagree (corner {CORNER_IDS[int(off.argmax())]} maps "
            f"{off.max():.1f} mm from the table's corner)", "the file was edited by hand: recalibrate")
    return cal


_NUMBER_LIST = re.compile(r"\[\s*(-?[0-9.eE+-]+(?:,\s*-?[0-9.eE+-]+)*)\s*\]")


def dumps(data: Mapping[str, Any]) -> str:
    """JSON text with one line per vector (matrices stay readable)."""
    text = json.dumps(data, indent=2)
    for _ in range(2):
        text = _NUMBER_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)
    return text


def save(cal: Calibration, path: str | os.PathLike, source: Mapping[str, Any] | None = None) -> Path:
    """Write CAL.json atomically (a temporary file renamed over the target)."""
    path = Path(path)
    text = dumps(to_dict(cal, source))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: str | os.PathLike) -> Calibration:
    """Read and validate CAL.json."""
    path = Path(path)
    if not path.exists():
        raise CalibrationError(f"calibration file {str(path)!r} does not exist", "run cueref calibrate to make one")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:  # not JSON, or an integer of thousands of digits
        raise CalibrationError(f"{path}: not a JSON file ({e})") from None
    except RecursionError:
        raise CalibrationError(f"{path}: not a JSON file (a value is nested too deeply)") from None
    return from_dict(data, str(path))
