"""Exports of a stored match, for other tools and other people.

* ``events.jsonl``: the event log as recorded (with its header), ready for ``cueref judge``; when
  the match was corrected, also ``events-corrected.jsonl``: the log with the reviewers' overrides and
  answers in place, from which ``cueref judge`` reproduces the calls that stand;
* ``decisions.jsonl``: the calls that stand (``Decision.to_dict()``, one per line); when corrected,
  also ``decisions-automatic.jsonl``: the calls the referee made;
* ``tracks.csv``: the tracks of every shot (``frame, t_s, ball, class, x_mm, y_mm, state, confidence``);
* ``stats.csv``: the match's statistics per player, and ``shots.csv``: every shot's facts
  (``docs/store.md`` defines them);
* ``clips/shot-NNN.mp4``: a clip per shot on request, cut from the annotated video (or the source),
  from a little before the strike to a little after everything stopped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable, Sequence

from cueref.stats import match_facts, summarise
from cueref.stats.output import write_csv, write_shots_csv
from cueref.store import MatchStore, StoreError, Tracks, write_tracks_csv
from cueref.store.corrections import corrected_log
from cueref.video import VideoReader, VideoWriter
from tracking.events import LogHeader, write_events

__all__ = ["DATA", "export_data", "export_clips"]

DATA = ("events", "decisions", "tracks", "stats")


def _atomic_text(path: Path, write: Callable) -> Path:
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        write(fh)
    tmp.replace(path)
    return path


def export_data(store: MatchStore, match: int | str, out_dir: str | os.PathLike[str], what: Sequence[str] = DATA) -> list[Path]:
    """Write the data exports named in ``what`` (module docstring); returns the files written."""
    unknown = sorted(set(what) - set(DATA))
    if unknown:
        raise StoreError(f"unknown export(s) {', '.join(unknown)}: choose from {', '.join(DATA)}")
    m = store.match(match)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    header = LogHeader(game=m.game, profile=m.profile, players=m.players, options=dict(m.options), source=Path(m.video_path).name)
    corrections = store.corrections(m.id)
    if "events" in what:
        events = store.events(m.id)
        write_events(out / "events.jsonl", [e.event for e in events], header)
        written.append(out / "events.jsonl")
        if corrections:
            shots = {s.number: s for s in store.shots(m.id)}
            write_events(out / "events-corrected.jsonl", corrected_log(events, shots, [(c.shot, c.event) for c in corrections]), header)
            written.append(out / "events-corrected.jsonl")
    if "decisions" in what:
        for name, revision in (("decisions.jsonl", None), ("decisions-automatic.jsonl", 0)):
            if revision == 0 and not corrections:
                continue
            rows = [json.dumps(d.data) + "\n" for d in store.decisions(m.id, revision)]
            written.append(_atomic_text(out / name, lambda fh: fh.writelines(rows)))
    if "tracks" in what:
        parts = [s.tracks for s in store.shots(m.id, tracks=True) if s.tracks is not None]
        if parts:
            written.append(write_tracks_csv(out / "tracks.csv", Tracks.concat(parts)))
    if "stats" in what:
        facts = match_facts(store, m)
        written.append(_atomic_text(out / "stats.csv", lambda fh: write_csv(summarise([facts]), fh)))
        written.append(_atomic_text(out / "shots.csv", lambda fh: write_shots_csv(facts.facts, fh)))
    return written


def export_clips(store: MatchStore, match: int | str, out_dir: str | os.PathLike[str], shots: Iterable[int] | None = None, *,
                 pad_s: float = 1.0, source: bool = False, progress: Callable[[int], None] | None = None) -> list[Path]:
    """One MP4 per shot (all when ``shots`` is None), cut from the annotated video, or from the
    source video when ``source`` (or when there is no annotated video). ``progress(n)`` is called
    after each clip."""
    m = store.match(match)
    video = m.video_path if source or not m.annotated_video else m.annotated_video
    if not Path(video).is_file():
        raise StoreError(f"{m.title}: its video {video} is not there any more: the clips are cut from it")
    wanted = store.shots(m.id, numbers=None if shots is None else list(shots))
    if shots is not None:
        missing = sorted(set(shots) - {s.number for s in wanted})
        if missing:
            raise StoreError(f"{m.title} has no shot {missing[0]} (its shots: 0 to {m.shots - 1})")
    clips = Path(out_dir) / "clips"
    clips.mkdir(parents=True, exist_ok=True)
    written = []
    with VideoReader(video) as reader:
        for s in wanted:
            t0, t1 = max(0.0, s.t_start_s - pad_s), (s.t_end_s if s.t_end_s is not None else s.t_start_s) + pad_s
            reader.seek(t0)
            path = clips / f"shot-{s.number:03d}.mp4"
            with VideoWriter(path, reader.fps or 30.0) as writer:
                while (frame := reader.read()) is not None and frame.t_s <= t1:
                    if frame.t_s >= t0 - 1e-6:
                        writer.write(frame)
            written.append(path)
            if progress:
                progress(1)
    return written
