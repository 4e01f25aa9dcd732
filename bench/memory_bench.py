"""Peak memory of a two-hour match, and what grows with it: the event log and the store grow with the
shots, not with the frames.

The match is a real video file: the sample frame of Sinuca de Ficha (``ficha/frame``: 45 s, 8 shots)
played again and again, a 6 s still table between copies (re-racking) and, half-way, a 20-minute still
table (a break in the match) -- copied packet by packet with shifted timestamps (no re-encoding), so
decoding costs what the sample costs. :func:`cueref.referee_run.referee_video` referees it exactly as
``cueref referee --no-video`` would (the decoding thread, the calibration keeper, the stages, the rules,
events.jsonl, decisions.jsonl, tracks.csv, the store and the report), in this process; every 5 minutes
of video (``--check-minutes``) it prints the resident memory and the size of each output, and at the end the peak.

The stages are the installed vision, tracking and inference (``--stages real``, the default); with
``--stages standin`` they are the tests' stand-ins (``tests/pipeline/_standins.py``: the clip's ground
truth as detections, tracks and events, mapped onto each copy), for a match whose events are known.
The keeper, the rules and every output are the real ones either way. With the real stages the
re-racked table between copies is seen as it is (balls vanishing and appearing), so the calls after
the first copy need not be a ficha frame's; what is measured here is memory and the outputs' growth.

Run: ``python bench/memory_bench.py [--minutes 120] [--stages real|standin] [--keep DIR]`` (with ``--stages standin`` about 25
minutes for 120 on two cores; with the real stages as long as ``cueref referee --no-video`` takes on two hours
of 720p video; ``--annotate`` adds the annotated video, which takes three times as long).
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import dataclasses
import os
import resource
import sqlite3
import sys
import tempfile
from collections import deque
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLIP = "ficha/frame"
RERACK_S = 6.0  # the still table between two copies


@dataclasses.dataclass(frozen=True)
class Segment:
    start_frame: int
    start_s: float
    n_frames: int
    copy: int | None  # the copy of the clip, or None for a still table


def timeline(minutes: float, break_s: float, clip_frames: int, fps: int) -> list[Segment]:
    """Copies of the clip with a still table after each, a long one (``break_s``) half-way."""
    clip_s = clip_frames / fps
    segments, frame, t, copy, broke = [], 0, 0.0, 0, False
    while t < minutes * 60:
        segments.append(Segment(frame, t, clip_frames, copy))
        frame, t, copy = frame + clip_frames, t + clip_s, copy + 1
        still = break_s if not broke and t >= minutes * 30 else RERACK_S
        broke = broke or still == break_s
        n = int(round(still * fps))
        segments.append(Segment(frame, t, n, None))
        frame, t = frame + n, t + n / fps
    return segments


def make_video(dst: Path, segments: list[Segment]) -> Path:
    """The long match: the clip's packets for each copy, a still table's for each pause (encoded once)."""
    import av
    import numpy as np

    if dst.exists():
        return dst
    src_path = ROOT / "sample_videos" / f"{CLIP}.mp4"
    with av.open(str(src_path)) as src:
        sin = src.streams.video[0]
        tb, rate = sin.time_base, sin.average_rate
        packets = [(bytes(p), p.pts, p.dts, p.is_keyframe) for p in src.demux(sin) if p.size]
    with av.open(str(src_path)) as src:
        for frame in src.decode(video=0):
            last = frame.to_ndarray(format="rgb24")
    step = int(round(1 / (rate * tb)))  # pts per frame
    still_path = dst.with_name("still.mp4")
    with av.open(str(still_path), "w") as out:  # a still table, 6 s: one keyframe then frames that change nothing
        s = out.add_stream("libx264", rate=rate)
        s.width, s.height, s.pix_fmt, s.time_base = last.shape[1], last.shape[0], "yuv420p", tb
        s.options = {"preset": "veryfast", "bf": "0", "g": str(int(RERACK_S * rate))}
        for i in range(int(RERACK_S * rate)):
            f = av.VideoFrame.from_ndarray(np.ascontiguousarray(last), format="rgb24").reformat(format="yuv420p")
            f.pts, f.time_base = i * step, tb
            out.mux(s.encode(f))
        out.mux(s.encode(None))
    with av.open(str(still_path)) as still_in:
        sst = still_in.streams.video[0]
        still = [(bytes(p), int(p.pts * sst.time_base / tb), int(p.dts * sst.time_base / tb), p.is_keyframe) for p in still_in.demux(sst) if p.size]
    part = dst.with_suffix(".part.mp4")
    with av.open(str(src_path)) as src, av.open(str(part), "w") as out:
        ost = out.add_stream_from_template(src.streams.video[0])
        ost.time_base = tb
        for seg in segments:
            base = seg.start_frame * step
            if seg.copy is not None:
                parts = [packets]
            else:
                parts = [still] * (seg.n_frames // len(still))
            for k, chunk in enumerate(parts):
                for data, pts, dts, key in chunk:
                    p = av.Packet(data)
                    off = base + k * len(still) * step
                    p.pts, p.dts, p.is_keyframe, p.stream, p.time_base = pts + off, dts + off, key, ost, tb
                    out.mux(p)
    part.replace(dst)
    still_path.unlink()
    return dst


class LoopedStandIns:
    """Vision, tracking and inference as the clip's ground truth, mapped onto each copy (a still table
    between copies: the clip's last frame, no event). Prints the checkpoints as the video passes them."""

    def __init__(self, clip, segments: list[Segment], checkpoint):
        from tests.pipeline._standins import TruthDetector, TruthTracker

        self.clip, self.segments, self.checkpoint = clip, segments, checkpoint
        self.starts = [s.start_frame for s in segments]
        self.detector, self.tracker = TruthDetector(clip), TruthTracker(clip)
        self.pending: deque = deque()
        self.queued_copy = -1
        self.last_local = clip.truth.n_frames - 1

    def _local(self, frame: int) -> tuple[Segment, int]:
        seg = self.segments[bisect.bisect_right(self.starts, frame) - 1]
        return seg, (frame - seg.start_frame if seg.copy is not None else self.last_local)

    def detect(self, image, frame, t_s):
        self.checkpoint(frame, t_s)
        seg, local = self._local(frame)
        if seg.copy is not None and seg.copy > self.queued_copy:  # the copy's events, at its times
            shift = seg.start_s
            self.pending.extend(dataclasses.replace(e, t_s=e.t_s + shift) for e in self.clip.camera_events)
            self.queued_copy = seg.copy
        d = self.detector.detect(image, local, float(self.clip.truth.t_s[local]))
        return dataclasses.replace(d, frame=frame, t_s=t_s, balls=dataclasses.replace(d.balls, frame=frame, t_s=t_s))

    def recalibrate(self, calibration):
        pass

    def update(self, dets):
        _, local = self._local(dets.frame)
        tracks = self.tracker.update(dataclasses.replace(dets, frame=local))
        return dataclasses.replace(tracks, frame=dets.frame, t_s=dets.t_s)

    def step(self, tracks, latency_s: float = 0.4):
        ready = []
        while self.pending and self.pending[0].t_s <= tracks.t_s - latency_s:
            ready.append(self.pending.popleft())
        return ready

    def finish(self):
        ready, self.pending = list(self.pending), deque()
        return ready


def rss_mb() -> tuple[float, float]:
    """(resident now, peak resident) in MB, from /proc/self/status."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=120.0, help="the match's length in minutes of video (default 120)")
    ap.add_argument("--break-minutes", type=float, default=20.0, help="the still table half-way (default 20 minutes)")
    ap.add_argument("--annotate", action="store_true", help="write the annotated video too (as cueref referee does by default)")
    ap.add_argument("--check-minutes", type=float, default=5.0,
                    help="print the memory (now and peak so far) and the outputs' sizes every this many minutes of video (default 5)")
    ap.add_argument("--keep", type=Path, help="keep the long video in this folder (and reuse it)")
    ap.add_argument("--stages", choices=("real", "standin"), default="real",
                    help="real: the installed vision, tracking and inference (default); standin: the clip's truth mapped onto each copy")
    args = ap.parse_args()

    import cv2

    from calibration.monitor import CalibrationKeeper
    from cueref.pipeline import Stages, load_stages, missing_stages
    from cueref.referee_run import RefereeJob, referee_video
    from tests.pipeline._standins import load_clip
    from tracking.events import ShotStart

    cv2.setNumThreads(1)
    clip = load_clip(CLIP)
    fps = int(round(1 / float(clip.truth.t_s[1] - clip.truth.t_s[0])))
    break_s = round(args.break_minutes * 60 / RERACK_S) * RERACK_S  # made of whole re-racking stills
    segments = timeline(args.minutes, break_s, clip.truth.n_frames, fps)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="cueref-memory-"))
    folder.mkdir(parents=True, exist_ok=True)
    copies = sum(s.copy is not None for s in segments)
    video = make_video(folder / f"long-{args.minutes:g}min.mp4", segments)
    total_frames = segments[-1].start_frame + segments[-1].n_frames
    missing = missing_stages()
    print(f"memory bench, {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, {len(os.sched_getaffinity(0))} cores, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"match: {video.name}, {total_frames / fps / 60:.1f} min, {total_frames} frames: {copies} copies of {CLIP} "
          f"({clip.truth.n_frames} frames, {len([e for e in clip.camera_events if isinstance(e, ShotStart)])} shots each), "
          f"{RERACK_S:g} s still between copies, {break_s / 60:g} min still half-way; {video.stat().st_size / 1e6:.0f} MB")
    real = args.stages == "real" and not missing
    what = ("the installed vision, tracking and inference" if real else
            "STAND-INS for " + " and ".join(missing) + " (the clip truth mapped onto each copy)" if missing else
            "STAND-INS (the clip truth), for a match whose events are known")
    print(f"stages: {what}; "
          f"the calibration keeper, the rules and every output are the real ones; annotated video {'on' if args.annotate else 'off'}")

    out = folder / "run"
    store = folder / "m.sqlite"
    for leftover in (out / "events.jsonl", store):
        leftover.unlink(missing_ok=True)
    sizes: list[tuple] = []
    shots = [0]

    def size(p: Path) -> int:
        return p.stat().st_size if p.exists() else 0

    def store_bytes() -> int:
        """The database's size as its pages (those still in the write-ahead log included)."""
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            return db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]

    idle = [s for s in segments if s.copy is None and s.n_frames > RERACK_S * fps]  # the long still table
    checks = {*range(0, total_frames, max(1, int(args.check_minutes * 60 * fps))), total_frames - 1,
              *(f for s in idle for f in (s.start_frame, s.start_frame + s.n_frames - 1))}

    def checkpoint(frame: int, t_s: float) -> None:
        if frame not in checks:
            return
        now, peak = rss_mb()
        row = (frame, t_s, shots[0], size(out / "events.jsonl"), store_bytes(), size(out / "tracks.csv"), now, peak,
               size(store.with_name(store.name + "-wal")))
        sizes.append(row)
        print(f"at {t_s / 60:6.1f} min (frame {frame:6d}, {shots[0]:4d} shots): resident {now:5.0f} MB (peak {peak:5.0f} MB); "
              f"events.jsonl {row[3] / 1e3:7.0f} kB, store {row[4] / 1e3:7.0f} kB (write-ahead log file {row[8] / 1e3:5.0f} kB), "
              f"tracks.csv {row[5] / 1e6:6.1f} MB", flush=True)

    looped = LoopedStandIns(clip, segments, checkpoint)
    step = looped.step

    def counting_step(tracks):
        ready = step(tracks)
        shots[0] += sum(isinstance(e, ShotStart) for e in ready)
        return ready

    looped.step = counting_step

    def load(video_path, profile, calibration, referee, first_image):
        if not real:
            return Stages(looped, looped, looped, referee, CalibrationKeeper(calibration, profile, first_image))
        stages = load_stages(profile, calibration, referee, first_image)
        detect, infer = stages.detector.detect, stages.inferer.step

        def checked_detect(image, frame, t_s):
            checkpoint(frame, t_s)
            return detect(image, frame, t_s)

        def counted_step(tracks):
            ready = infer(tracks)
            shots[0] += sum(isinstance(e, ShotStart) for e in ready)
            return ready

        stages.detector.detect, stages.inferer.step = checked_detect, counted_step
        return stages

    options = {**clip.options, "frames": 2 * copies + 1, "next_break": "winner"}  # one player breaks and wins every copy
    job = RefereeJob(video=str(video), game=clip.game, players=clip.players, options=options, out=str(out), overwrite=True,
                     store=str(store), annotate=args.annotate)
    done = referee_video(job, stages=load, say=lambda line: None, shots=None, progress=None)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    first, last = sizes[0], sizes[-1]
    print(f"refereed {done.frames} frames in {done.seconds / 60:.1f} min ({done.frames / done.seconds:.0f} frames/s), "
          f"{done.shots} shots called, {done.events} events, {done.decisions} calls")
    print(f"peak resident memory: {peak_mb:.0f} MB (getrusage ru_maxrss of the whole process; target < 500 MB)")
    print(f"events.jsonl: {(last[3] - first[3]) / max(last[2] - first[2], 1) / 1e3:.2f} kB per shot "
          f"({last[3] / 1e6:.2f} MB for {last[2]} shots)")
    print(f"store: {(last[4] - first[4]) / max(last[2] - first[2], 1) / 1e3:.2f} kB per shot ({last[4] / 1e6:.2f} MB for "
          f"{last[2]} shots: the SQLite database's pages; its write-ahead log file, folded back every 1000 pages, is "
          f"{last[8] / 1e6:.1f} MB at the end)")
    if idle:
        a = next(r for r in sizes if r[0] == idle[0].start_frame)
        b = next(r for r in sizes if r[0] == idle[0].start_frame + idle[0].n_frames - 1)
        print(f"over the {break_s / 60:g}-minute still table ({b[0] - a[0]} frames, {b[2] - a[2]} shots): events.jsonl grew "
              f"{b[3] - a[3]} B, the store {b[4] - a[4]} B, tracks.csv {(b[5] - a[5]) / 1e6:.1f} MB (one row per ball per frame, "
              f"by design), resident memory {b[6] - a[6]:+.0f} MB")
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
