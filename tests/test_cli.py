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
        (["simulate", "samples", "--only", "ficha/nope", "--out", "/nonexistent"], "unknown sample(s) ficha/nope"),
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


def test_referee_calibrates_a_sample_then_says_which_stage_is_missing(short_miss, tmp_path):
    from cueref.pipeline import missing_stages

    r = cueref("referee", str(short_miss), "--game", "ficha", "--out", str(tmp_path))
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
    assert not (tmp_path / "out").exists()  # a run that fails before any result leaves no folder behind


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


# ---- bad input refused, outputs never written onto an input or lost --------------------------------

FICHA_LOG = ROOT / "sample_videos" / "ficha" / "frame.events.jsonl"


def test_judge_refuses_to_write_the_decisions_onto_the_log(tmp_path):
    log = tmp_path / "frame.events.jsonl"
    log.write_bytes(FICHA_LOG.read_bytes())
    r = cueref("judge", str(log), "--json", str(log))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"--json {log} is the event log this command reads" in r.stderr
    assert log.read_bytes() == FICHA_LOG.read_bytes()
    r = cueref("judge", str(log), "--json", str(tmp_path / "." / log.name))  # the same file by another name
    assert r.returncode == 1 and log.read_bytes() == FICHA_LOG.read_bytes()


def test_judge_writes_json_only_when_the_replay_ends(tmp_path):
    """A replay that fails half-way leaves an existing OUT as it was (and no temporary file behind)."""
    bad = tmp_path / "after-the-end.jsonl"
    bad.write_text(FICHA_LOG.read_text() + '{"kind":"shot_start","t_s":99.0,"ball":"cue"}\n{"kind":"at_rest","t_s":101.0}\n')
    out = tmp_path / "decisions.jsonl"
    out.write_text("yesterday's decisions\n")
    r = cueref("judge", str(bad), "--json", str(out))
    assert r.returncode == 1 and "after the match ended" in r.stderr
    assert out.read_text() == "yesterday's decisions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["after-the-end.jsonl", "decisions.jsonl"]
    r = cueref("judge", str(FICHA_LOG), "--json", str(out))
    assert r.returncode == 0 and len(out.read_text().splitlines()) == 8


@pytest.mark.parametrize("text, says", [
    ("", "the log holds no event at all"),
    ('{"kind":"header","version":1,"game":"ficha"}\n', "the log holds no event at all"),
    ('{"kind":"nomination","t_s":1.0,"ball":"red","pocket":"TL"}\n{"kind":"at_rest","t_s":2.0}\n',
     "the log holds 2 event(s), none a shot_start"),
])
def test_judge_says_when_there_is_no_shot_to_judge(tmp_path, text, says):
    log = tmp_path / "log.jsonl"
    log.write_text(text)
    r = cueref("judge", str(log), "--game", "ficha")
    assert r.returncode == 1 and r.stdout == ""
    assert f"{log}: nothing to judge: {says}" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_calls_file_holds_operator_inputs_only(tmp_path):
    r = cueref("judge", str(FICHA_LOG), "--calls", str(FICHA_LOG), "--json", str(tmp_path / "d.jsonl"))
    assert r.returncode == 1 and "a calls file holds operator inputs only" in r.stderr
    assert not (tmp_path / "d.jsonl").exists()


MISS = ROOT / "sample_videos" / "ficha" / "miss.mp4"


@pytest.fixture(scope="module")
def short_miss(tmp_path_factory):
    """The ficha sample's first 12 frames (the table at rest, before the shot), as ``miss.mp4``: what
    these tests check (the run folder, the calibration) needs no shot, and a whole run of the sample
    costs seconds each time."""
    from cueref.video import VideoReader, VideoWriter

    path = tmp_path_factory.mktemp("short") / "miss.mp4"
    with VideoReader(MISS) as reader, VideoWriter(path, fps=30) as w:
        for frame, _ in zip(reader, range(12)):
            w.write(frame.image)
    return path


def test_referee_never_replaces_an_earlier_runs_results(short_miss, tmp_path, capsys):
    out = tmp_path / "run"
    main(["referee", str(short_miss), "--game", "ficha", "--out", str(out)])
    assert (out / "calibration.json").exists()
    first = (out / "calibration.json").read_bytes()
    capsys.readouterr()
    assert main(["referee", str(short_miss), "--game", "ficha", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"--out {out} already holds a run's results (calibration.json" in err and "--overwrite" in err
    assert (out / "calibration.json").read_bytes() == first
    main(["referee", str(short_miss), "--game", "ficha", "--out", str(out), "--overwrite"])
    assert "already holds" not in capsys.readouterr().err


def test_referee_picks_a_new_default_folder_beside_an_earlier_run(short_miss, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for folder in ("miss", "miss-2"):
        main(["referee", str(short_miss), "--game", "ficha"])
        assert f"-> cueref-out/{folder}/calibration.json" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "cueref-out").iterdir()) == ["miss", "miss-2"]


@pytest.fixture(scope="module")
def ficha_cal(tmp_path_factory):
    """A CAL.json of the ficha table from the sample's first frame."""
    out = tmp_path_factory.mktemp("cal") / "ficha.json"
    assert main(["calibrate", str(MISS), "--table", "ficha", "--frames", "1", "--out", str(out)]) == 0
    return out


def test_referee_refuses_a_calibration_of_another_table(ficha_cal, tmp_path):
    r = cueref("referee", str(MISS), "--game", "bar-billiards", "--calibration", str(ficha_cal), "--out", str(tmp_path / "o"))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert (f"{ficha_cal} was made for the ficha table (1420 x 810 mm), not the bar-billiards table" in r.stderr
            and "cueref calibrate" in r.stderr)
    assert not (tmp_path / "o").exists()


def test_referee_refuses_a_calibration_of_another_image_size(ficha_cal, tmp_path):
    import numpy as np

    from cueref.video import VideoReader, VideoWriter

    small = tmp_path / "small.mp4"
    with VideoReader(MISS) as reader, VideoWriter(small, fps=30) as w:
        for frame, _ in zip(reader, range(3)):
            w.write(np.ascontiguousarray(frame.image[::2, ::2]))
    r = cueref("referee", str(small), "--game", "ficha", "--calibration", str(ficha_cal), "--out", str(tmp_path / "o"))
    assert r.returncode == 1
    assert f"{ficha_cal} was made for 1280x720 images, the video is 640x360" in r.stderr


def test_referee_refuses_an_output_that_is_an_input(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    calls = out / "events.jsonl"
    calls.write_text('{"kind":"nomination","t_s":1.0,"ball":"red","pocket":"TL"}\n')
    r = cueref("referee", str(MISS), "--game", "ficha", "--calls", str(calls), "--out", str(out), "--overwrite")
    assert r.returncode == 1 and f"the output {calls} is the --calls file this command reads" in r.stderr
    assert calls.read_text().startswith('{"kind":"nomination"')
