"""How fast the referee runs against decoding alone, side by side in one run, and where its CPU goes.

A sample clip (``ficha/frame``: 45 s, 1353 frames at 30 fps, a whole frame of Sinuca de Ficha) is
re-encoded with PyAV/libx264 at 1080p and 720p, at a low bitrate (2 Mb/s) and at an IP camera's
(12 Mb/s), with the sensor noise a camera has (Gaussian, sigma 2.5 grey levels) so that the bits are
real picture detail rather than padding; the timestamps are kept. For each clip, each measurement in
a process of its own:

* **decode**: :class:`cueref.video.VideoReader` delivering every frame (BGR), nothing else;
* **referee --no-video**: :func:`cueref.referee_run.referee_video`, what ``cueref referee`` runs: the
  decoding thread, the calibration keeper, vision, tracking, inference, the rules, and the outputs
  (events.jsonl, decisions.jsonl, tracks.csv, the store, the report);
* **referee**: the same with the annotated video (annotated.mp4, H.264).

with **both cores**, and again on **one core** (the process pinned to one CPU with
``sched_setaffinity``). The ratio of each referee rate to the decode rate of the same clip, cores and
run is the figure the batch issue sets (>= 0.7x on both cores, >= 0.4x on one, 1080p at a camera's
bitrate, no annotated video). The CPU per frame per stage is the thread CPU time spent in each stage's
calls (decode: the decode-only run's process CPU over its frames, FFmpeg's threads included).

Until vision, tracking and inference are built (``cueref.pipeline.missing_stages``), they are the
tests' stand-ins (``tests/pipeline/_standins.py``: the clip's ground truth handed out as detections,
tracks and events), and every line says so: the figures are then the pipeline's cost around those
stages, not the real stages' speed.

Run: ``python bench/throughput_bench.py [--sizes 1080p,720p] [--bitrates 2,12] [--cores 2,1] [--keep DIR]``
(about 10 minutes; ``--keep`` keeps the encoded clips for the next run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLIP = "ficha/frame"
SIZES = {"1080p": (1920, 1080), "720p": (1280, 720)}
NOISE_SIGMA = 2.5
MODES = ("decode", "referee --no-video", "referee")
STAGES = ("decode", "keeper", "vision", "tracking", "inference", "rules", "outputs")


# ---- the clips ------------------------------------------------------------------------------------------


def make_clip(dst: Path, size: tuple[int, int], mbps: float, seed: int = 1) -> Path:
    """The sample re-encoded at ``size`` and ``mbps`` with camera noise, its timestamps kept."""
    import av
    import cv2
    import numpy as np

    if dst.exists():
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    part = dst.with_suffix(".part.mp4")
    with av.open(str(ROOT / "sample_videos" / f"{CLIP}.mp4")) as src, av.open(str(part), "w") as out:
        sin = src.streams.video[0]
        fps = int(round(float(sin.average_rate)))
        s = out.add_stream("libx264", rate=sin.average_rate)
        s.width, s.height, s.pix_fmt, s.time_base = size[0], size[1], "yuv420p", sin.time_base
        bits = int(mbps * 1e6)
        s.bit_rate = bits
        # as an IP camera streams: no B-frames, a keyframe every 2 s, the rate held with a 1 s buffer
        s.options = {"preset": "veryfast", "bf": "0", "g": str(2 * fps), "maxrate": str(bits), "bufsize": str(bits)}
        noise = [rng.normal(0.0, NOISE_SIGMA, (size[1], size[0], 3)).round().astype(np.int16) for _ in range(16)]
        for k, frame in enumerate(src.decode(sin)):
            image = cv2.resize(frame.to_ndarray(format="bgr24"), size, interpolation=cv2.INTER_LINEAR)
            noisy = np.clip(image + noise[(k * 7) % len(noise)], 0, 255).astype(np.uint8)  # 16 noise fields, in turn
            f = av.VideoFrame.from_ndarray(noisy, format="bgr24").reformat(format="yuv420p")
            f.pts, f.time_base = frame.pts, frame.time_base
            out.mux(s.encode(f))
        out.mux(s.encode(None))
    part.replace(dst)
    return dst


# ---- one measurement, in its own process ---------------------------------------------------------------------


class _Timed:
    """A stage whose named methods add their thread CPU time to ``spent[stage]``."""

    def __init__(self, inner, stage: str, methods: tuple[str, ...], spent: dict):
        self._inner, self._stage, self._methods, self._spent = inner, stage, methods, spent

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name not in self._methods:
            return attr

        def timed(*a, **kw):
            t0 = time.thread_time()
            try:
                return attr(*a, **kw)
            finally:
                self._spent[self._stage] += time.thread_time() - t0

        return timed


def _timed_loader(spent: dict, real: bool):
    from cueref.pipeline import Stages

    if real:
        from cueref.referee_run import installed_stages as base
    else:
        from tests.batch._standins import truth_stages as base

    def load(video, profile, calibration, referee, first_image):
        s = base(video, profile, calibration, referee, first_image)
        return Stages(_Timed(s.detector, "vision", ("detect",), spent), _Timed(s.tracker, "tracking", ("update",), spent),
                      _Timed(s.inferer, "inference", ("step", "finish"), spent), _Timed(s.referee, "rules", ("feed", "finish"), spent),
                      _Timed(s.keeper, "keeper", ("update",), spent) if s.keeper is not None else None)

    return load


def _time_outputs(spent: dict, ends: dict) -> None:
    """The consumers' thread CPU time per frame goes to ``spent["outputs"]``; the wall time of the match's
    opening and closing (the store's match, and at the end the report) to ``ends``."""
    from cueref.console import ShotPrinter
    from cueref.outputs import RunFiles
    from cueref.report.outputs import MatchOutputs

    def wrap(cls, name, clock, into, key):
        original = getattr(cls, name)

        def timed(*a, **kw):
            t0 = clock()
            try:
                return original(*a, **kw)
            finally:
                into[key] += clock() - t0

        setattr(cls, name, classmethod(lambda c, *a, **kw: timed(*a, **kw)) if name == "open" else timed)

    for cls in (RunFiles, MatchOutputs, ShotPrinter):
        wrap(cls, "add", time.thread_time, spent, "outputs")
    wrap(MatchOutputs, "open", time.perf_counter, ends, "open")
    wrap(MatchOutputs, "close", time.perf_counter, ends, "close")


def measure(video: str, mode: str, one_core: bool, real: bool) -> dict:
    import cv2

    from cueref.video import VideoReader

    if one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    cv2.setNumThreads(1)
    if os.environ.get("CUEREF_BENCH_SWITCH"):  # --switch: the pipeline with Python's own lock hand-over interval
        import dataclasses

        import cueref.pipeline as pipeline

        calls, config, inputs = pipeline.run.__defaults__
        pipeline.run.__defaults__ = (calls, dataclasses.replace(config, switch_interval_s=None), inputs)
    if mode == "decode":
        c0, t0 = time.process_time(), time.perf_counter()
        with VideoReader(video) as reader:
            n = sum(1 for _ in reader)
        return {"frames": n, "seconds": time.perf_counter() - t0, "cpu_s": {"decode": time.process_time() - c0}}

    from cueref.referee_run import RefereeJob, referee_video
    from tests.pipeline._standins import load_clip

    clip = load_clip(CLIP)
    c0 = time.process_time()
    spent: dict = defaultdict(float)
    ends: dict = defaultdict(float)
    _time_outputs(spent, ends)
    with tempfile.TemporaryDirectory() as tmp:
        job = RefereeJob(video=video, game=clip.game, players=clip.players, options=clip.options, out=f"{tmp}/run",
                         store=f"{tmp}/m.sqlite", annotate=mode == "referee")
        done = referee_video(job, stages=_timed_loader(spent, real), say=lambda line: None, shots=None, progress=None)
    return {"frames": done.frames, "seconds": done.seconds - ends["open"] - ends["close"], "cpu_s": dict(spent),
            "shots": done.shots, "ends_s": dict(ends), "process_cpu_s": time.process_time() - c0}


# ---- the run -------------------------------------------------------------------------------------------------


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown CPU")
    import av
    import cv2

    return (f"{platform.system()} {platform.machine()}, {len(os.sched_getaffinity(0))} cores ({model}), Python "
            f"{platform.python_version()}, PyAV {av.__version__} (FFmpeg {av.library_versions['libavcodec']}), OpenCV {cv2.__version__}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1080p,720p", help="frame sizes (1080p, 720p)")
    ap.add_argument("--bitrates", default="2,12", help="bitrates in Mb/s (default 2,12: low, and an IP camera's)")
    ap.add_argument("--cores", default="2,1", help="2: the machine's cores; 1: the process pinned to one core")
    ap.add_argument("--modes", default=",".join(MODES), help=f"what to measure ({', '.join(MODES)})")
    ap.add_argument("--keep", type=Path, help="keep the encoded clips in this folder (and reuse them)")
    ap.add_argument("--pairs", type=int, default=0, help="also run this many alternating pairs of decode-only and referee "
                    "--no-video and print each pair's ratio and the median (a host whose speed drifts skews one pair less)")
    ap.add_argument("--switch", action="store_true", help="also referee --no-video with Python's own 5 ms lock hand-over "
                    "interval instead of the pipeline's (PipelineConfig.switch_interval_s), alternating, three times each")
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)  # VIDEO MODE ONE_CORE REAL: a measurement in this process
    args = ap.parse_args()
    if args.one:
        video, mode, one_core, real = args.one
        print(json.dumps(measure(video, mode, one_core == "1", real == "1")))
        return 0

    from cueref.pipeline import missing_stages

    missing = missing_stages()
    real = not missing
    stages = ("the installed vision, tracking and inference" if real else
              f"STAND-INS for {' and '.join(missing)} (this build has none): the clip's ground truth as detections, tracks "
              "and events (tests/pipeline/_standins.py); the figures are the pipeline around them, not the real stages' speed")
    modes = [m.strip() for m in args.modes.split(",")]
    print(f"throughput bench, {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, {machine()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other work on the machine slows every figure)")
    print(f"stages: {stages}")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="cueref-throughput-"))
    for size in args.sizes.split(","):
        for mbps in (float(b) for b in args.bitrates.split(",")):
            video = make_clip(folder / f"{size}-{mbps:g}M" / f"{CLIP}.mp4", SIZES[size], mbps)
            from cueref.video import VideoReader

            with VideoReader(video) as r:
                duration_s = r.info.frame_count / r.info.fps
            label = f"{size} {mbps:g} Mb/s"
            print(f"{label}: clip {video.stat().st_size * 8 / duration_s / 1e6:.1f} Mb/s achieved ({CLIP} re-encoded by "
                  f"libx264 veryfast, no B-frames, keyframe every 2 s, noise sigma {NOISE_SIGMA})")
            for cores in args.cores.split(","):
                where = "2 cores" if cores == "2" else "1 core"
                got = {}
                for mode in modes:
                    r = subprocess.run([sys.executable, __file__, "--one", str(video), mode, "1" if cores == "1" else "0", "1" if real else "0"],
                                       capture_output=True, text=True, cwd=ROOT)
                    if r.returncode:
                        print(f"{label}, {where}: {mode} FAILED: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
                        continue
                    got[mode] = m = json.loads(r.stdout.strip().splitlines()[-1])
                    fps = m["frames"] / m["seconds"]
                    if mode == "decode":
                        print(f"{label}, {where}: decode only {fps:.1f} frames/s ({m['frames']} frames through VideoReader, BGR)")
                    else:
                        ratio = fps / (got["decode"]["frames"] / got["decode"]["seconds"]) if "decode" in got else float("nan")
                        print(f"{label}, {where}: {mode} {fps:.1f} frames/s = {ratio:.2f}x decode (referee_video from the first "
                              f"frame to the last, {m['shots']} shots called{'' if real else ', stand-in stages'})")
                        print(f"{label}, {where}: {mode} {m['ends_s']['open'] + m['ends_s']['close']:.1f} s opening and closing "
                              f"the match (the store's match; the report at the end), once per video")
                        print(f"{label}, {where}: {mode} CPU {1000 * m['process_cpu_s'] / m['frames']:.2f} ms/frame in all "
                              f"(process CPU of every thread: decoding, colour conversion, the stages, the outputs; the "
                              f"match's opening and closing included)")
                for mode in (m for m in modes if m != "decode" and m in got):
                    for stage in STAGES if mode == "referee --no-video" else ("outputs",):
                        source = got.get("decode") if stage == "decode" else got[mode]
                        if source is None or stage not in source["cpu_s"]:
                            continue
                        how = ("process CPU of the decode-only run, FFmpeg's threads included" if stage == "decode" else
                               f"thread CPU in the stage's calls during {mode}" + ("" if real or stage not in ("vision", "tracking", "inference")
                                                                                    else ", a STAND-IN"))
                        print(f"{label}, {where}: CPU {stage} {1000 * source['cpu_s'][stage] / source['frames']:.2f} ms/frame ({how})")
                if args.pairs:
                    ratios = []
                    for k in range(args.pairs):
                        pair = {}
                        for mode in ("decode", "referee --no-video"):
                            r = subprocess.run([sys.executable, __file__, "--one", str(video), mode, "1" if cores == "1" else "0",
                                                "1" if real else "0"], capture_output=True, text=True, cwd=ROOT)
                            if not r.returncode:
                                m = json.loads(r.stdout.strip().splitlines()[-1])
                                pair[mode] = m["frames"] / m["seconds"]
                        if len(pair) == 2:
                            ratios.append(pair["referee --no-video"] / pair["decode"])
                            print(f"{label}, {where}: pair {k + 1}: decode only {pair['decode']:.1f}, referee --no-video "
                                  f"{pair['referee --no-video']:.1f} frames/s = {ratios[-1]:.2f}x")
                    if ratios:
                        print(f"{label}, {where}: referee --no-video against decode only, {len(ratios)} alternating pairs: "
                              f"median {sorted(ratios)[len(ratios) // 2]:.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f})")
                if args.switch and "decode" in got:
                    decode_fps = got["decode"]["frames"] / got["decode"]["seconds"]
                    rates: dict[str, list[float]] = {"pipeline's": [], "Python's 5 ms": []}
                    for _ in range(3):
                        for name, env in (("pipeline's", {}), ("Python's 5 ms", {"CUEREF_BENCH_SWITCH": "1"})):
                            r = subprocess.run([sys.executable, __file__, "--one", str(video), "referee --no-video",
                                                "1" if cores == "1" else "0", "1" if real else "0"],
                                               capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env})
                            if not r.returncode:
                                m = json.loads(r.stdout.strip().splitlines()[-1])
                                rates[name].append(m["frames"] / m["seconds"])
                    for name, got_rates in rates.items():
                        print(f"{label}, {where}: referee --no-video with the {name} lock hand-over interval: "
                              f"{' '.join(f'{x:.1f}' for x in got_rates)} frames/s (median "
                              f"{sorted(got_rates)[len(got_rates) // 2] / decode_fps:.2f}x decode; runs alternated)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
