"""CAL.json: round trip and validation."""

import json

import numpy as np
import pytest

from calibration import calfile
from calibration.calibrate import calibrate_manual
from calibration.homography import CalibrationError
from calibration.table import resolve_profile

FICHA = resolve_profile("ficha")
CORNERS = {"TL": (212.3, 101.7), "TR": (1071.9, 96.2), "BR": (1090.4, 600.8), "BL": (196.1, 590.3)}


@pytest.fixture()
def cal():
    k = np.array([[1000.0, 0, 639.5], [0, 1000.0, 359.5], [0, 0, 1]])
    return calibrate_manual(CORNERS, FICHA, (1280, 720), camera_matrix=k, dist_coeffs=np.array([-0.12, 0.01, 0, 0, 0]))


def test_round_trip_keeps_the_mapping(cal, tmp_path):
    path = calfile.save(cal, tmp_path / "CAL.json", {"source": "clip.mp4"})
    back = calfile.load(path)
    pts = np.random.default_rng(0).uniform([0, 0], [1280, 720], (50, 2))
    assert np.allclose(back.to_table_mm(pts), cal.to_table_mm(pts), atol=1e-9)
    assert np.allclose(back.balls_to_table_mm(pts), cal.balls_to_table_mm(pts), atol=1e-9)
    assert back.image_size == (1280, 720) and back.method == "manual" and back.profile_name == "ficha"
    data = json.loads(path.read_text())
    assert data["corners_px"]["TL"] == pytest.approx(CORNERS["TL"], abs=1e-3)
    assert data["source"] == {"source": "clip.mp4"}
    assert set(data["residuals"]["landmarks_mm"]) == {"corner:TL", "corner:TR", "corner:BR", "corner:BL"}


@pytest.mark.parametrize("edit, match", [
    pytest.param(lambda d: d.pop("homography_px_to_mm"), "missing", id="missing field"),
    pytest.param(lambda d: d.update(version=99), "version", id="future version"),
    pytest.param(lambda d: d.update(format="other"), "not a cueref calibration", id="wrong format"),
    pytest.param(lambda d: d.update(camera_matrix=[[1, 0], [0, 1]]), "shape", id="bad matrix"),
    pytest.param(lambda d: d["homography_px_to_mm"][0].__setitem__(2, 0.0), "disagree", id="edited homography"),
    pytest.param(lambda d: d.update(camera_xyh_mm=[0, 0, -5]), "above", id="camera under the table"),
    pytest.param(lambda d: d["corners_px"].pop("BL"), "corners_px", id="three corners"),
])
def test_invalid_files_are_refused_naming_the_field(cal, tmp_path, edit, match):
    data = calfile.to_dict(cal)
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=match) as e:
        calfile.load(path)
    assert str(path) in str(e.value)


def test_not_json_and_missing_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(CalibrationError, match="not a JSON"):
        calfile.load(p)
    with pytest.raises(CalibrationError, match="does not exist"):
        calfile.load(tmp_path / "none.json")


@pytest.mark.parametrize("edit, match", [
    pytest.param(lambda d: d["homography_px_to_mm"][0].__setitem__(0, float("nan")),
                 "field 'homography_px_to_mm[0][0]' must be a finite number, got nan", id="NaN in the homography"),
    pytest.param(lambda d: d["dist_coeffs"].__setitem__(0, float("inf")), "field 'dist_coeffs[0]' must be a finite number, got inf",
                 id="Infinity in the lens"),
    pytest.param(lambda d: d["corners_px"].__setitem__("TL", [float("nan"), 101.7]),
                 "field 'corners_px.TL' must be [x_px, y_px] (two finite numbers)", id="NaN corner"),
    pytest.param(lambda d: d["table"].__setitem__("length_mm", 10**400), "field 'table.length_mm' must be a number", id="400 digits"),
    pytest.param(lambda d: d["residuals"].__setitem__("landmark_rms_mm", float("nan")),
                 "field 'residuals.landmark_rms_mm' must be a finite number, got nan", id="NaN residual"),
    pytest.param(lambda d: d.update(image_size=["1280", 720]), "field 'image_size[0]' must be a whole number", id="size as text"),
    pytest.param(lambda d: d.update(method="guess"), "field 'method' must be 'automatic' or 'manual', got 'guess'", id="method"),
    pytest.param(lambda d: d.update(colour="green"), "unknown field(s) 'colour'", id="unknown field"),
    pytest.param(lambda d: d["camera_matrix"].__setitem__(0, [0, 0, 639.5]), "focal length that is not positive", id="zero focal"),
])
def test_numbers_that_are_not_finite_are_refused(cal, tmp_path, edit, match):
    data = calfile.to_dict(cal)
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))  # json writes NaN and Infinity as the bare words, which json reads back
    with pytest.raises(CalibrationError) as e:
        calfile.load(path)
    assert str(e.value).startswith(f"{path}: ") and match in str(e.value) and "\n" not in str(e.value)


def test_deeply_nested_and_huge_numbers_are_not_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"format": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(CalibrationError, match="nested too deeply"):
        calfile.load(p)
    p.write_text('{"format": ' + "9" * 5000 + "}")
    with pytest.raises(CalibrationError, match="not a JSON file"):
        calfile.load(p)
