"""Match store, review report and annotated video: sizes and speeds, measured on this machine.

    python bench/report_bench.py                 # everything (a few minutes)
    python bench/report_bench.py --docs          # and refresh docs/images/report-*.png

1. a two-hour match: a sample frame's log and truth-derived tracks played 75 times (600 shots) is
   recorded into a SQLite store, one transaction per call: time per shot, store size per shot;
2. its report is written and loaded in headless Chromium (median of 3 loads): DOM ready, first
   paint, load, and the time to open a shot;
3. the annotated video of a sample clip with truth-derived tracks, against decoding alone, side by
   side in one run (frames per second);
4. ``--docs``: the report of a sample frame (one call corrected, one question left pending) as a
   screenshot, and the statistics plots of a generated corpus of whole frames (no rendering).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration.calibrate import calibrate_image  # noqa: E402
from calibration.table import resolve_profile  # noqa: E402
from cueref.report.annotate import AnnotatedVideo  # noqa: E402
from cueref.report.page import write_report  # noqa: E402
from cueref.stats import player_stats  # noqa: E402
from cueref.stats.plots import all_plots  # noqa: E402
from cueref.store import MatchStore, frames_of, record_log  # noqa: E402
from cueref.store.corrections import correct  # noqa: E402
from cueref.video import VideoReader  # noqa: E402
from rules import get_engine  # noqa: E402
from tests.report import _browser  # noqa: E402
from tests.report._long import long_match  # noqa: E402
from tests.store._truth import truth_tracks  # noqa: E402

FRAME = ROOT / "sample_videos" / "ficha" / "frame"
CORPUS_SEEDS = {"ficha": range(401, 411), "brasileira": range(501, 504), "bar-billiards": range(601, 604)}


def store_and_page(tmp: Path, copies: int) -> Path:
    header, events, tracks = long_match(FRAME, copies)
    with MatchStore(tmp / "long.sqlite") as store:
        t0 = time.perf_counter()
        r = record_log(store, video=FRAME.with_suffix(".mp4"), engine=get_engine("ficha"), game="ficha", profile="ficha",
                       players=list(header.players), options=dict(header.options), events=events, tracks=tracks, video_sha256="0" * 64)
        rec_s = time.perf_counter() - t0
        n = len(r.decisions)
        size = sum(p.stat().st_size for p in tmp.glob("long.sqlite*"))
        print(f"store: {n} shots ({len(events)} events, {len(tracks)} track rows over {tracks.frame.max() + 1} video frames) recorded in "
              f"{rec_s:.1f} s, {1000 * rec_s / n:.0f} ms per shot (one transaction per call, SQLite, synchronous=FULL)")
        print(f"store: {size / 1e6:.2f} MB, {size / n / 1e3:.1f} kB per shot (tracks of the shots only, packed)")
        t0 = time.perf_counter()
        page = write_report(store, r.match_id, tmp / "out", video=FRAME.with_suffix(".mp4"))
        print(f"report: {n} shots written in {time.perf_counter() - t0:.1f} s, {page.stat().st_size / 1e6:.1f} MB of HTML")
    return page


def load_page(page: Path, runs: int = 3) -> None:
    why = _browser.missing()
    if why:
        print(f"browser: skipped ({why})")
        return
    dom, paint, load, opened = [], [], [], []
    for _ in range(runs):
        with _browser.page() as (pg, errors):
            pg.goto(page.as_uri())
            pg.wait_for_load_state("load")
            t = pg.evaluate(_browser.TIMING_JS)
            dom.append(t["dom_ms"]), paint.append(t["paint_ms"]), load.append(t["load_ms"])
            n = t["rows"]
            opened += [pg.evaluate(_browser.OPEN_SHOT_JS, k)["ms"] for k in (0, n // 2, n - 1)]
            if errors:
                print("browser errors:", errors)
    med = statistics.median
    print(f"Chromium, {n} shots, median of {runs} loads: DOM ready {med(dom):.0f} ms, first paint {med(paint):.0f} ms, "
          f"load {med(load):.0f} ms; opening a shot (video seek + diagram): median {med(opened):.0f} ms, worst {max(opened):.0f} ms")


def annotate_speed(tmp: Path) -> None:
    profile = resolve_profile("ficha")
    tracks = truth_tracks(FRAME.with_suffix(".truth.json"))
    by_frame = {f: rows for f, _, rows in frames_of(tracks)}
    t0 = time.perf_counter()
    with VideoReader(FRAME.with_suffix(".mp4")) as r:
        n = sum(1 for _ in r)
    decode_fps = n / (time.perf_counter() - t0)
    with VideoReader(FRAME.with_suffix(".mp4")) as r:
        first = r.read()
        cal = calibrate_image(first.image, profile)
        t0 = time.perf_counter()
        with AnnotatedVideo(tmp / "annotated.mp4", fps=r.fps, profile=profile, game="ficha", calibration=cal) as out:
            frame = first
            while frame is not None:
                out.frame(frame.image, frame.t_s, by_frame.get(frame.index), {"shot": 0, "player": "A", "explanation": "ficha 2.4: legal shot"})
                frame = r.read()
        ann_fps = n / (time.perf_counter() - t0)
    print(f"annotated video, {FRAME.with_suffix('.mp4').name} ({n} frames, {first.image.shape[1]}x{first.image.shape[0]}): "
          f"decode only {decode_fps:.0f} frames/s; decode + draw + H.264 encode {ann_fps:.0f} frames/s")


def docs_images(tmp: Path) -> None:
    from simulator.player import generate_frame

    images = ROOT / "docs" / "images"
    # the report of a sample frame with tracks, one call corrected and one question pending
    from cueref.cli import main
    from cueref.store import write_tracks_csv

    csv = write_tracks_csv(tmp / "tracks.csv", truth_tracks(FRAME.with_suffix(".truth.json")))
    main(["-q", "report", "--events", str(FRAME.with_suffix(".events.jsonl")), "--video", str(FRAME.with_suffix(".mp4")),
          "--tracks", str(csv), "--store", str(tmp / "docs.sqlite"), "--out", str(tmp / "docs")])
    with MatchStore(tmp / "docs.sqlite") as store:
        correct(store, 1, 3, field="fouls", value="miss", reason="the cue ball never reached y2 (replay)", author="Referee")
        write_report(store, 1, tmp / "docs")
    if not _browser.missing():
        with _browser.page(1400, 1000) as (pg, errors):
            pg.goto((tmp / "docs" / "report.html").as_uri())
            pg.wait_for_load_state("load")
            pg.evaluate(_browser.OPEN_SHOT_JS, 3)
            pg.evaluate("document.getElementById('video').pause()")
            time.sleep(1.0)
            pg.screenshot(path=str(images / "report-ficha.png"))
        print(f"docs: {images / 'report-ficha.png'}")
    # the plots of a generated corpus of whole frames
    with MatchStore(tmp / "corpus.sqlite") as store:
        for game, seeds in CORPUS_SEEDS.items():
            for seed in seeds:
                gf = generate_frame(game, seed=seed, max_shots=30)
                record_log(store, video=f"{game}-{seed}.mp4", engine=get_engine(game), game=game, profile=game, players=list(gf.run.players),
                           options=dict(gf.run.options), events=list(gf.run.events), video_sha256=hashlib.sha256(f"{game}-{seed}".encode()).hexdigest())
        print(f"docs: plots of a generated corpus, seeds {dict((g, list(s)) for g, s in CORPUS_SEEDS.items())}")
        for game in ("ficha", "bar-billiards"):
            for name, png in all_plots(player_stats(store, game=game), resolve_profile(game)).items():
                path = images / f"report-{game}-{name}.png"
                path.write_bytes(png)
                print(f"docs: {path}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=75, help="copies of the sample frame (8 shots each; default 75: 600 shots)")
    p.add_argument("--docs", action="store_true", help="also write docs/images/report-*.png")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="cueref-report-bench-") as d:
        tmp = Path(d)
        load_page(store_and_page(tmp, args.copies))
        annotate_speed(tmp)
        if args.docs:
            docs_images(tmp)


if __name__ == "__main__":
    main()
