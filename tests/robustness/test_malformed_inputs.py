"""Malformed inputs on the command line: a damaged event log, calls file, calibration file, table
profile or batch list is refused before any long work with one line that names the file, the place
(line or field) and the reason, and a non-zero exit; no run folder is left behind.

The loaders' own checks are tested beside them (``tests/test_events.py``, ``tests/calibration/
test_calfile.py``, ``tests/test_profiles.py``); these are the commands a user runs."""

from __future__ import annotations

import json
import shutil

import pytest

from calibration.calibrate import calibrate_image
from calibration import calfile
from calibration.table import resolve_profile
from cueref.cli import main
from cueref.video import VideoReader
from tests.pipeline._standins import ROOT

VIDEO = ROOT / "sample_videos" / "ficha" / "suicide.mp4"
LOG = ROOT / "sample_videos" / "ficha" / "suicide.events.jsonl"


@pytest.fixture(scope="module")
def good_cal(tmp_path_factory):
    with VideoReader(VIDEO) as reader:
        first = reader.read()
    return calfile.to_dict(calibrate_image(first.image, resolve_profile("ficha")))


def cut_log(tmp_path):
    lines = LOG.read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:3] + [lines[3][: len(lines[3]) // 2]]) + "\n")  # a line cut mid-way, as by a crash
    return path, "cut.jsonl, line 4"


def nan_log(tmp_path):
    path = tmp_path / "nan.jsonl"
    path.write_text('{"kind":"shot_start","t_s":1.0,"ball":"cue"}\n{"kind":"at_rest","t_s":NaN}\n')
    return path, "nan.jsonl, line 2: at_rest: field 't_s' must be a finite number, got nan"


def camera_in_calls(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_text('{"kind":"concession","t_s":2.0,"player":"A"}\n{"kind":"pot","t_s":3.0,"ball":"r1","pocket":"TL"}\n')
    return path, "calls.jsonl: a calls file holds operator inputs only, but this one has 1 camera event(s)"


def bad_calls(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_text('{"kind":"concession","t_s":2.0}\n')
    return path, "calls.jsonl, line 1: concession: missing field 'player'"


def bad_profile(tmp_path):
    text = (ROOT / "calibration" / "profiles" / "ficha.yaml").read_text().replace("length_mm: 1420", "length_mm: .nan")
    path = tmp_path / "table.yaml"
    path.write_text(text)
    return path, "table.yaml: field 'length_mm' must be a finite number, got nan"


def cal_not_json(tmp_path, good):
    path = tmp_path / "CAL.json"
    path.write_text(json.dumps(good)[:200])
    return path, "CAL.json: not a JSON"


def cal_missing_field(tmp_path, good):
    path = tmp_path / "CAL.json"
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "homography_px_to_mm"}))
    return path, "homography_px_to_mm"


@pytest.mark.parametrize("make", [cut_log, nan_log])
def test_judge_refuses_a_damaged_event_log_with_its_line(tmp_path, capsys, make):
    path, says = make(tmp_path)
    assert main(["judge", str(path), "--game", "ficha"]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("make", [bad_calls, camera_in_calls, nan_log])
@pytest.mark.parametrize("command", ["referee", "judge"])
def test_a_bad_calls_file_is_refused_with_its_line(tmp_path, capsys, make, command):
    path, says = make(tmp_path)
    target = [str(VIDEO), "--out", str(tmp_path / "out")] if command == "referee" else [str(LOG)]
    assert main([command, *target, "--game", "ficha", "--calls", str(path)]) == 1
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["referee", "batch"])
def test_a_bad_table_profile_is_refused_naming_the_field(tmp_path, capsys, command):
    path, says = bad_profile(tmp_path)
    assert main([command, str(VIDEO if command == "referee" else VIDEO.parent), "--game", "ficha", "--table", str(path),
                 "--out", str(tmp_path / "out"), "--store", str(tmp_path / "m.sqlite")]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("make", [cal_not_json, cal_missing_field])
def test_referee_refuses_a_damaged_calibration_file_naming_what_is_wrong(tmp_path, capsys, good_cal, make):
    path, says = make(tmp_path, good_cal)
    assert main(["referee", str(VIDEO), "--game", "ficha", "--calibration", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and says in err and err.count("\n") == 1


def test_batch_refuses_a_list_lines_damaged_calibration_file_with_the_line(tmp_path, capsys, good_cal):
    path, says = cal_not_json(tmp_path, good_cal)
    listed = tmp_path / "night.txt"
    shutil.copy(VIDEO, tmp_path / "table-3.mp4")
    listed.write_text(f"# table 3\ntable-3.mp4 --game ficha --calibration {path.name}\n")
    assert main(["batch", str(listed), "--out", str(tmp_path / "out"), "--store", str(tmp_path / "m.sqlite")]) == 1
    err = capsys.readouterr().err
    assert f"night.txt, line 2: {tmp_path / 'table-3.mp4'}: " in err and says in err
    assert not (tmp_path / "out").exists()


def test_batch_refuses_a_list_that_is_not_text(tmp_path, capsys):
    listed = tmp_path / "night.txt"
    listed.write_bytes(b"\xff\xfe\x00binary")
    assert main(["batch", str(listed), "--game", "ficha"]) == 1
    assert "night.txt: not a text file: a list file names one video a line" in capsys.readouterr().err
