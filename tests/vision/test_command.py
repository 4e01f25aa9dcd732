"""``cueref detect``: the CSV of every ball in every frame, the annotated video, clear refusals."""

import csv
from pathlib import Path

import pytest

from cueref.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_videos" / "ficha" / "miss.mp4"


def test_detect_writes_the_csv_and_the_annotated_video(tmp_path, capsys):
    out = tmp_path / "det"
    assert main(["detect", str(SAMPLE), "--game", "ficha", "--out", str(out), "--max-frames", "12"]) == 0
    rows = list(csv.DictReader(open(out / "detections.csv", encoding="utf-8")))
    assert list(rows[0]) == ["frame", "t_s", "x_mm", "y_mm", "x_px", "y_px", "radius_px", "class", "score", "state"]
    frames = {int(r["frame"]) for r in rows}
    assert frames == set(range(12))
    first = [r for r in rows if r["frame"] == "0"]
    assert len(first) == 9  # a ficha set: the cue ball and two groups of four
    assert {r["class"] for r in first} == {"white", "red", "yellow"}
    assert all(0 <= float(r["x_mm"]) <= 1420 and 0 <= float(r["y_mm"]) <= 810 for r in first)
    assert (out / "detections.mp4").stat().st_size > 10_000
    assert (out / "calibration.json").exists()
    assert "12 frames" in capsys.readouterr().out


def test_detect_refuses_a_calibration_of_another_picture_size(tmp_path, capsys):
    cal = ROOT / "sample_videos" / "ficha" / "off-table.mp4"  # 1080p: calibrate it, then use it on a 720p clip
    assert main(["calibrate", str(cal), "--table", "ficha", "--out", str(tmp_path / "cal.json"), "--frames", "1"]) == 0
    assert main(["detect", str(SAMPLE), "--game", "ficha", "--calibration", str(tmp_path / "cal.json"),
                 "--out", str(tmp_path / "o"), "--no-video", "--max-frames", "2"]) == 1
    assert "1920x1080" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["--max-frames", "0"], "at least 1"),
    (["--table", "nonsense-table"], "unknown table profile"),
])
def test_detect_bad_arguments(tmp_path, capsys, argv, says):
    assert main(["detect", str(SAMPLE), "--game", "ficha", "--out", str(tmp_path / "o")] + argv) == 1
    assert says in capsys.readouterr().err
