"""The annotated video and the review report: made from a sample clip's log and truth-derived tracks,
corrected with cueref review, loaded in headless Chromium (no console error, the video plays, a click
on a shot seeks the video and draws the shot), and a two-hour match's page measured."""

from __future__ import annotations

import time
from pathlib import Path

import av
import numpy as np
import pytest

from cueref.cli import main
from cueref.report.diagram import shot_svg
from cueref.store import MatchStore, record_log, write_tracks_csv
from cueref.video import VideoReader
from calibration.table import resolve_profile
from rules import get_engine
from tests.report import _browser
from tests.report._long import long_match
from tests.store._truth import truth_tracks
from tracking.events import read_events
from simulator.groundtruth import read_truth
from simulator.scene import BallStatus

ROOT = Path(__file__).resolve().parents[2]
CLIP = ROOT / "sample_videos" / "ficha" / "ball-touched"  # two shots, a ball touched between them (ficha 5.6)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """cueref report from the clip's log and tracks, then a correction by cueref review, then the page again."""
    tmp = tmp_path_factory.mktemp("report")
    tracks = write_tracks_csv(tmp / "tracks.csv", truth_tracks(CLIP.with_suffix(".truth.json")))
    store, out = tmp / "m.sqlite", tmp / "out"
    assert main(["-q", "report", "--events", str(CLIP.with_suffix(".events.jsonl")), "--video", str(CLIP.with_suffix(".mp4")),
                 "--tracks", str(tracks), "--store", str(store), "--out", str(out)]) == 0
    assert main(["-q", "review", "1", "--shot", "0", "--set", "fouls=miss", "--reason", "r1 was never touched (replay)",
                 "--by", "Referee", "--store", str(store)]) == 0
    assert main(["-q", "report", "1", "--store", str(store), "--out", str(out)]) == 0
    return out


def test_the_annotated_video_is_h264_a_browser_plays_with_the_referees_view_burnt_in(report):
    source, annotated = CLIP.with_suffix(".mp4"), report / "annotated.mp4"
    with VideoReader(annotated) as r:
        info = r.info
    assert (info.codec, info.pix_fmt, info.width, info.height) == ("h264", "yuv420p", 1280, 720)
    head = annotated.read_bytes()[:1 << 16]
    assert 0 <= head.find(b"moov") < head.find(b"mdat") or head.find(b"mdat") < 0  # faststart: the index comes first
    with av.open(str(annotated)) as c:
        assert c.streams.video[0].codec_context.profile in ("High", "Main", "Constrained Baseline", "Baseline")
    with VideoReader(source) as a, VideoReader(annotated) as b:
        src, ann = list(a), list(b)
    assert len(src) == len(ann) and np.allclose([f.t_s for f in src], [f.t_s for f in ann], atol=1e-3)
    # at 6.5 s, after the first call: every ball on the table is ringed where the truth's camera sees it
    truth = read_truth(CLIP.with_suffix(".truth.json"))
    k = int(np.argmin(np.abs(truth.t_s - 6.5)))
    diff = np.abs(src[k].image.astype(int) - ann[k].image.astype(int)).sum(axis=2)
    yy, xx = np.mgrid[:720, :1280]
    far = np.ones_like(diff, dtype=bool)
    for ball, px in truth.px.items():
        if truth.status[ball][k] is not BallStatus.ON_TABLE:  # in a hand, potted: not tracked
            continue
        d = np.hypot(xx - px[k][0], yy - px[k][1])
        ring = (d > 14) & (d < 26)
        assert (diff[ring] > 150).mean() > 0.2, f"no ring around {ball} at {px[k]}"
        far &= d > 60
    assert (diff[-40:] > 150).mean() > 0.01  # the call's text at the bottom
    assert (diff[:40] > 150).mean() > 0.01  # the score line at the top
    assert np.median(diff[100:-60][far[100:-60]]) < 12  # elsewhere: the codec's noise only


def test_a_shot_is_drawn_to_scale_with_its_contacts_and_pots():
    header, events = read_events(ROOT / "sample_videos" / "ficha" / "frame.events.jsonl")
    profile = resolve_profile("ficha")
    shot = events[:8]  # shot 0: the break (cue hits r3, r3 hits r1, ...) up to its at_rest
    assert shot[-1].kind == "at_rest"
    svg = shot_svg(profile, shot)
    assert 'viewBox="-54 -54 1528 918"' in svg  # millimetres: the 1420 x 810 cloth and 0.6 of the 90 mm rail around it
    assert svg.count('class="contact"') == sum(e.kind == "ball_ball" for e in shot)
    assert "stroke-dasharray" in svg and "path from the events" in svg
    tracked = shot_svg(profile, shot, truth_tracks(ROOT / "sample_videos" / "ficha" / "frame.truth.json").between(shot[0].t_s, shot[-1].t_s))
    assert "tracked path" in tracked


@pytest.mark.skipif(_browser.missing() is not None, reason=f"browser test skipped: {_browser.missing()}")
def test_the_report_renders_plays_and_a_click_on_a_shot_seeks_the_video(report, tmp_path):
    with _browser.page() as (pg, errors):
        pg.goto((report / "report.html").as_uri())
        pg.wait_for_selector("#shots li[data-t]")
        assert pg.locator("#shots li.shot").count() == 2
        assert pg.locator("#shot-0 .badge.corr").count() == 1 and "automatic call" in pg.inner_text("#shot-0")
        assert "pending question" in pg.inner_text("#shot-1") and "cueref review 1 --shot 1 --answer" in pg.inner_text("#shot-1")
        assert "rule 5.2" in pg.inner_text("#shot-0")  # the rule quoted for the foul
        played = pg.evaluate("""async () => {
            const v = document.getElementById('video');
            await v.play();
            await new Promise(r => setTimeout(r, 1200));
            return {t: v.currentTime, paused: v.paused, w: v.videoWidth, ready: v.readyState, error: v.error && v.error.code};
        }""")
        assert played["error"] is None and played["w"] == 1280 and played["t"] > 0.3 and not played["paused"], played
        opened = pg.evaluate(_browser.OPEN_SHOT_JS, 1)
        t_shot = float(pg.get_attribute("#shot-1", "data-t"))
        assert opened["svg"] and opened["t"] == pytest.approx(t_shot - 0.5, abs=0.3)
        time.sleep(0.5)
        assert pg.evaluate("document.getElementById('video').currentTime") > t_shot - 0.5  # and it plays from there
        assert "shot 1" in pg.inner_text("#diagram")
        pg.screenshot(path=str(tmp_path / "report.png"))
        assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


@pytest.mark.skipif(_browser.missing() is not None, reason=f"browser test skipped: {_browser.missing()}")
def test_a_two_hour_match_of_600_shots_loads_and_opens_a_shot_quickly(tmp_path):
    header, events, tracks = long_match(ROOT / "sample_videos" / "ficha" / "frame", 75)  # 75 frames x 8 shots
    with MatchStore(tmp_path / "long.sqlite") as store:
        result = record_log(store, video=ROOT / "sample_videos" / "ficha" / "frame.mp4", engine=get_engine("ficha"), game="ficha",
                            profile="ficha", players=list(header.players), options=dict(header.options), events=events, tracks=tracks,
                            video_sha256="0" * 64)
        assert result.error is None and len(result.decisions) == 600
        from cueref.report.page import write_report

        t0 = time.perf_counter()
        page = write_report(store, result.match_id, tmp_path / "out", video=ROOT / "sample_videos" / "ficha" / "frame.mp4")
        written_s = time.perf_counter() - t0
    with _browser.page() as (pg, errors):
        pg.goto(page.as_uri())
        pg.wait_for_load_state("load")
        timing = pg.evaluate(_browser.TIMING_JS)
        opened = [pg.evaluate(_browser.OPEN_SHOT_JS, n)["ms"] for n in (0, 300, 599)]
        assert errors == []
    print(f"600-shot report: written in {written_s:.1f} s, {page.stat().st_size / 1e6:.1f} MB; Chromium: DOM ready {timing['dom_ms']:.0f} ms, "
          f"first paint {timing['paint_ms']:.0f} ms, loaded {timing['load_ms']:.0f} ms; opening a shot {max(opened):.0f} ms at worst")
    assert timing["rows"] == 600
    assert timing["dom_ms"] < 4000 and timing["load_ms"] < 6000  # generous: the machine is shared; bench/report_bench.py measures
    assert max(opened) < 500
