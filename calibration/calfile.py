"""CAL.json: a calibration on disk (issue 4 item 3). The format is documented in docs/calibration.md.

:func:`save` writes a :class:`~calibration.camera.Calibration`; :func:`load` reads and validates one,
raising :class:`~calibration.homography.CalibrationError` that names the file and the field.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from calibration.camera import Calibration
from calibration.homography import CalibrationError, Homography

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


def _matrix(d: Mapping[str, Any], key: str, shape: tuple[int, ...], where: str) -> np.ndarray:
    if key not in d:
        raise CalibrationError(f"{where}: field {key!r} is missing", "recalibrate (cueref calibrate) to write a complete file")
    try:
        a = np.asarray(d[key], dtype=np.float64)
    except (TypeError, ValueError):
        raise CalibrationError(f"{where}: field {key!r} must be numbers, got {d[key]!r}") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise CalibrationError(f"{where}: field {key!r} must be finite numbers of shape {shape}, got shape {a.shape}")
    return a


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
    size = _matrix(d, "image_size", (2,), where)
    if np.any(size < 1) or np.any(size != np.round(size)):
        raise CalibrationError(f"{where}: field 'image_size' must be two positive whole numbers, got {d['image_size']!r}")
    k = _matrix(d, "camera_matrix", (3, 3), where)
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise CalibrationError(f"{where}: field 'camera_matrix' has a focal length that is not positive")
    dist = _matrix(d, "dist_coeffs", (5,), where)
    h = _matrix(d, "homography_px_to_mm", (3, 3), where)
    centre = _matrix(d, "camera_xyh_mm", (3,), where)
    if centre[2] <= 0:
        raise CalibrationError(f"{where}: field 'camera_xyh_mm' puts the camera {centre[2]:g} mm above the cloth; it must be above")
    corners = d.get("corners_px")
    if not isinstance(corners, Mapping) or set(corners) != set(CORNER_IDS):
        raise CalibrationError(f"{where}: field 'corners_px' must map {', '.join(CORNER_IDS)} to [x, y] pixels")
    corners_px = np.array([_matrix(corners, c, (2,), f"{where}: corners_px") for c in CORNER_IDS])
    table = d.get("table")
    if not isinstance(table, Mapping):
        raise CalibrationError(f"{where}: field 'table' is missing or not an object")
    dims = [_matrix(table, key, (), f"{where}: table") for key in ("length_mm", "width_mm", "ball_radius_mm")]
    if min(dims) <= 0:
        raise CalibrationError(f"{where}: table sizes must be positive, got {[float(x) for x in dims]}")
    residuals = d.get("residuals", {})
    if not isinstance(residuals, Mapping):
        raise CalibrationError(f"{where}: field 'residuals' must be an object")
    method = d.get("method")
    if method not in ("automatic", "manual"):
        raise CalibrationError(f"{where}: field 'method' must be 'automatic' or 'manual', got {method!r}")
    try:
        hom = Homography(h)
    except CalibrationError as e:
        raise CalibrationError(f"{where}: field 'homography_px_to_mm': {e.reason}") from None
    cal = Calibration(
        image_size=(int(size[0]), int(size[1])), camera_matrix=k, dist_coeffs=dist, homography=hom,
        camera_xyh_mm=(float(centre[0]), float(centre[1]), float(centre[2])), corners_px=corners_px,
        length_mm=float(dims[0]), width_mm=float(dims[1]), ball_radius_mm=float(dims[2]),
        profile_name=str(table.get("profile", "")), method=method, residuals=residuals,
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
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{path}: not a JSON file ({e})") from None
    return from_dict(data, str(path))
