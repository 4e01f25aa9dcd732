"""``cueref calibrate``: automatic and manual runs write CAL.json; bad inputs are one line, exit 1."""

import cv2
import numpy as np
import pytest

from calibration import calfile
from cueref.cli import main
from tests.calibration._views import corner_errors_mm, project, view


@pytest.fixture(scope="module")
def frame_png(tmp_path_factory):
    v = view("ficha", seed=6)
    path = tmp_path_factory.mktemp("cal") / "frame.png"
    cv2.imwrite(str(path), v.image)
    return v, path


def test_automatic_from_an_image(frame_png, tmp_path, capsys):
    v, png = frame_png
    out, drawn = tmp_path / "CAL.json", tmp_path / "drawn.png"
    assert main(["calibrate", str(png), "--table", "ficha", "--out", str(out), "--draw", str(drawn)]) == 0
    cal = calfile.load(out)
    assert corner_errors_mm(cal, v).max() < 2.0
    assert cv2.imread(str(drawn)).shape == v.image.shape
    assert "automatic" in capsys.readouterr().out


def test_manual_corners(frame_png, tmp_path):
    v, png = frame_png
    c = project(v.camera, v.profile.corners_mm)
    text = " ".join(f"{x:.3f},{y:.3f}" for x, y in c)
    out = tmp_path / "CAL.json"
    assert main(["calibrate", str(png), "--table", "ficha", "--out", str(out), "--corners", text]) == 0
    cal = calfile.load(out)
    assert cal.method == "manual" and corner_errors_mm(cal, v).max() < 0.05


@pytest.mark.parametrize("make, table, extra, message", [
    pytest.param(lambda: np.zeros((720, 1280, 3), np.uint8), "ficha", [], "black", id="black frame"),
    pytest.param(lambda: np.full((720, 1280, 3), (60, 60, 200), np.uint8), "ficha", [], "", id="red wall, no table"),
    pytest.param(None, "2000x1000", [], "times as long as it is wide", id="wrong aspect"),
    pytest.param(None, "ficha", ["--corners", "1,2 3"], "four 'x,y' pairs", id="bad corners"),
    pytest.param(None, "no-such-table", [], "unknown table profile", id="bad profile"),
])
def test_bad_inputs_exit_1_with_one_line(frame_png, tmp_path, capsys, make, table, extra, message):
    _, png = frame_png
    if make is not None:
        png = tmp_path / "in.png"
        cv2.imwrite(str(png), make())
    code = main(["calibrate", str(png), "--table", table, "--out", str(tmp_path / "CAL.json"), *extra])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("cueref calibrate: error:") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "CAL.json").exists()


@pytest.mark.parametrize("extra, message", [
    pytest.param(["--focal-px", "-1"], "--focal-px -1 must be a positive number of pixels", id="negative focal"),
    pytest.param(["--focal-px", "0"], "--focal-px 0 must be a positive number of pixels", id="zero focal"),
    pytest.param(["--camera-height-mm", "-1500"], "--camera-height-mm -1500 must be a positive number", id="camera under the cloth"),
    pytest.param(["--chessboard", "VIDEO", "--board", "0x0"], "--board 0x0 has too few inner corners", id="board 0x0"),
    pytest.param(["--chessboard", "VIDEO", "--board", "nine"], "--board 'nine' is not COLSxROWS", id="board not a size"),
    pytest.param(["--draw", "OUT/drawn.txt"], "is not an image file name", id="draw to a non-image"),
    pytest.param(["--out", "OUT/missing/CAL.json"], "the folder", id="out into a missing folder"),
    pytest.param(["--out", "PNG"], "is the source this command reads", id="out onto the source"),
])
def test_bad_arguments_are_refused_before_any_work(frame_png, tmp_path, capsys, monkeypatch, extra, message):
    """Each refusal is one line, exit 1, and happens before the calibration: nothing is written."""
    _, png = frame_png
    extra = [a.replace("VIDEO", str(png)).replace("OUT", str(tmp_path)).replace("PNG", str(png)) for a in extra]
    out = ["--out", str(tmp_path / "CAL.json")] if "--out" not in extra else []
    calibrated = []
    monkeypatch.setattr("cueref.commands.calibrate.calibrate_frames", lambda *a, **k: calibrated.append(1))
    code = main(["calibrate", str(png), "--table", "ficha", *out, *extra])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("cueref calibrate: error:") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not calibrated and sorted(p.name for p in tmp_path.iterdir()) == []
    assert "/.CAL.json." not in err  # never a temporary file's name


@pytest.mark.parametrize("display", [None, ":97"], ids=["no DISPLAY", "a display nobody serves"])
def test_interactive_without_a_display_is_refused_with_what_to_do(frame_png, tmp_path, capsys, monkeypatch, display):
    """OpenCV's GUI would abort the process; cueref says what to do instead."""
    _, png = frame_png
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if display is None:
        monkeypatch.delenv("DISPLAY", raising=False)
    else:
        monkeypatch.setenv("DISPLAY", display)
    code = main(["calibrate", str(png), "--table", "ficha", "--out", str(tmp_path / "CAL.json"), "--interactive"])
    err = capsys.readouterr().err
    assert code == 1 and "--interactive needs a window" in err and "--corners" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "CAL.json").exists()
