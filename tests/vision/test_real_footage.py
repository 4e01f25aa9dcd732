"""The detector on the hand-labelled frames of the real clips (``tests/data/realdata_labels.json``,
labelled by hand without the detector), scored as ``bench/realdata.py`` scores them: each clip run
from its first frame, calibrated as a user would, every labelled frame compared with the labels.

The floors below are regression guards, not independent targets: each is the figure the detector
reached on 2026-11-29 (``python bench/realdata.py``) less a small margin, so that a change which
makes real footage worse fails here even where the rendered corpora do not show it. The issue's
targets are the benchmark's business. The clips are not part of the repository: without them these
tests skip and name the source."""

from __future__ import annotations

import pytest

from bench.realdata import clips, score_clip, summarise
from tests._realdata import need_source


def _scored(source: str, only: set[str] | None = None) -> dict:
    need_source(source)
    results = [score_clip(source, clip, frames) for (_, clip), frames in clips([source], only).items()]
    assert results, f"no labelled clip of {source} was scored"
    return summarise(results)[source]


def test_a_hand_held_camera_over_a_full_rack_and_its_break():
    """james-ecd-pool: a pool table filmed by hand (the calibration keeper follows the drift), a rack
    of fifteen on red cloth, the break and the balls spread after it: 160 labelled balls in 10 frames.
    Measured: recall 94.4 %, precision 88.8 %, centre error median 0.93 px, class 98.6 %."""
    s = _scored("james-ecd-pool")
    assert s["balls"] == 160
    assert s["recall"] >= 0.92, s
    assert s["precision"] >= 0.86, s
    assert s["err_median_px"] <= 1.2, s
    assert s["class_acc"] >= 0.96, s


@pytest.mark.parametrize("clip", ["null_grad_stoss_1_0003_0009.mp4", "simulation_vs_reality_1_0028_0032.mp4",
                                  "video_13_0030_0034.mp4"])
def test_a_fixed_camera_over_a_projected_table_sees_every_ball_and_nothing_else(clip):
    """billiard-ai-bfh: a fixed camera over a carom-sized table with lines and circles projected on
    the cloth; in these clips every labelled ball is found and nothing else is taken for one."""
    s = _scored("billiard-ai-bfh", {clip})
    assert s["found"] == s["balls"], s
    assert s["false"] == 0, s


@pytest.mark.xfail(strict=True, reason="a ball standing when the video starts whose outline the first frame's fit "
                                       "refuses is taken into the cloth background and not seen until it moves")
def test_a_red_standing_in_a_pockets_jaws_when_the_video_starts_is_seen():
    """billiard-ai-bfh video_9_0056_0101: the red stands in the jaws of the top right pocket from the
    first frame until the white pots it (1.8 s). Its outline, partly against the jaw, is a little
    rougher at the predicted radius than the detector accepts."""
    need_source("billiard-ai-bfh")
    (frames,) = clips(["billiard-ai-bfh"], {"video_9_0056_0101.mp4"}).values()
    r = score_clip("billiard-ai-bfh", "video_9_0056_0101.mp4", frames)
    assert not [m for m in r["misses"] if m[2] == "red" and m[3] == "on_table"], r["misses"]
