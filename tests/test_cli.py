"""The command line: --help lists every command, and user errors give one clear line, no traceback."""

import subprocess
import sys
from pathlib import Path

import pytest

from cueref.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def cueref(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "cueref", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_help_lists_every_command():
    r = cueref("--help")
    assert r.returncode == 0
    for name, _, _ in COMMANDS:
        assert name in r.stdout


def test_console_script_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'cueref = "cueref.cli:main"' in text


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: cueref" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["judge", "no-such-log.jsonl", "--game", "ficha"], "no-such-log.jsonl: the file does not exist"),
        (["profile", "show", "snooker-12ft"], "unknown table profile 'snooker-12ft'"),
        (["events", "check", "no-such-log.jsonl"], "does not exist"),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, message):
    r = cueref(*args)
    assert r.returncode != 0
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_log_names_its_line(tmp_path):
    log = tmp_path / "bad.jsonl"
    log.write_text('{"kind":"at_rest","t_s":1}\n{"kind":"pot","t_s":2,"ball":"r1"}\n')
    r = cueref("events", "check", str(log))
    assert r.returncode == 1
    assert f"{log}, line 2: pot: missing field 'pocket'" in r.stderr


def test_profile_list_and_show():
    r = cueref("profile", "list")
    assert r.returncode == 0 and "ficha" in r.stdout and "bar-billiards" in r.stdout
    r = cueref("profile", "show", "1800x900,ball=50,groups=orange+blue")
    assert r.returncode == 0 and "o1 (orange, orange)" in r.stdout and "pocket TL" in r.stdout


def test_events_check_the_documented_example():
    r = cueref("events", "check", "docs/examples/ficha-two-shots.jsonl")
    assert r.returncode == 0 and "valid, 9 events" in r.stdout


def test_referee_calibrates_a_sample_then_says_which_stage_is_missing(tmp_path):
    from cueref.commands.referee import missing_stages

    r = cueref("referee", "sample_videos/ficha/miss.mp4", "--game", "ficha", "--out", str(tmp_path))
    assert "Traceback" not in r.stderr
    assert "found the ficha table automatically" in r.stdout
    assert (tmp_path / "calibration.json").exists()
    if missing_stages():
        assert r.returncode == 2
        assert "opens and decodes (1280x720)" in r.stdout and "cueref judge" in r.stdout


def test_referee_on_a_video_with_no_table_says_so(tmp_path):
    import numpy as np

    from cueref.video import VideoWriter

    clip = tmp_path / "black.mp4"
    with VideoWriter(clip, fps=30) as w:
        for _ in range(3):
            w.write(np.zeros((120, 160, 3), np.uint8))
    r = cueref("referee", str(clip), "--game", "ficha", "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "cueref referee: error:" in r.stderr


@pytest.mark.parametrize("content, message", [(b"", "not a video"), (b"hello, not a video", "not a video")])
def test_referee_refuses_a_file_that_is_not_a_video(tmp_path, content, message):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(content)
    r = cueref("referee", str(bad), "--game", "ficha")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert str(bad) in r.stderr


def test_referee_checks_options_before_reading_video(tmp_path):
    r = cueref("referee", str(tmp_path / "x.mp4"), "--game", "ficha", "--option", "no_such_option=1")
    assert r.returncode == 1 and "unknown option(s) no_such_option" in r.stderr
