"""A truncated or corrupt recording in a batch: decoded up to the damage, the place it broke reported,
and every call made before it kept (in the run folder and in the store, whose match stays
``recording``); the other videos are refereed as usual."""

from __future__ import annotations

import json
import re

import pytest

from cueref.store import MatchStore
from tests.batch._standins import batch, sample_list
from tests.pipeline._standins import ROOT
from tests.robustness._reference import reference


def damaged_copy(folder, how):
    """ficha/frame (45 s, 8 shots) cut at 55 % of its bytes, or with 20 kB zeroed in its middle."""
    data = bytearray((ROOT / "sample_videos" / "ficha" / "frame.mp4").read_bytes())
    if how == "truncated":
        data = data[: int(len(data) * 0.55)]
    else:
        middle = len(data) // 2
        data[middle:middle + 20_000] = bytes(20_000)
    path = folder / "ficha" / "frame.mp4"  # the stand-ins find the clip's truth by the path's last two parts
    path.parent.mkdir(parents=True)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how, says", [("truncated", "video file is truncated"), ("corrupt", "video file is corrupt")])
def test_a_damaged_video_keeps_every_call_before_the_damage(tmp_path, capsys, how, says):
    video = damaged_copy(tmp_path / "videos", how)
    listed = sample_list(tmp_path, ["ficha/frame", "ficha/suicide"], videos=tmp_path / "videos")
    (tmp_path / "videos" / "ficha" / "suicide.mp4").write_bytes((ROOT / "sample_videos" / "ficha" / "suicide.mp4").read_bytes())
    store = tmp_path / "m.sqlite"
    assert batch([listed, "--out", tmp_path / "out", "--store", store, "--jobs", 1, "--no-video"]) == 1
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("  frame: damaged: ")]
    assert str(video) in line and says in line
    broke = re.search(r"last good frame: index (\d+) at t=([\d.]+) s", line)
    assert broke, line
    last_t_s = float(broke.group(2))
    assert re.search(r"^suicide +refereed", out, re.M)

    _, full = reference("ficha/frame")
    before = [c for c in full if c["t_s"] < last_t_s]
    assert len(before) >= 3
    with MatchStore(store) as st:
        (m,) = [m for m in st.matches() if m.video_path == str(video)]
        assert m.status == "recording"  # not complete: a later batch tries it again
        kept = [d.data for d in st.decisions(m.id)]
    assert kept[:len(before)] == before
    written = [json.loads(x) for x in (tmp_path / "out" / "frame" / "decisions.jsonl").read_text().splitlines()]
    assert written[:len(before)] == before
