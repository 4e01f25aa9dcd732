"""A two-hour match for the report's speed: a sample frame's log (and its truth-derived tracks)
played again and again, each copy shifted in time, as a best-of-N match."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cueref.store.tracks import Tracks
from tests.store._truth import truth_tracks
from tracking.events import LogHeader, read_events

GAP_S = 6.0  # between the copies: re-racking


def long_match(base: Path, frames: int) -> tuple[LogHeader, list, Tracks]:
    """``frames`` copies of ``base``'s frame (``base`` without suffix: NAME.events.jsonl, NAME.truth.json)."""
    header, events = read_events(base.with_suffix(".events.jsonl"))
    tracks = truth_tracks(base.with_suffix(".truth.json"))
    span = events[-1].t_s + GAP_S
    n_frames = int(tracks.frame.max()) + 1 + int(round(GAP_S * 30))
    out_events, parts = [], []
    for k in range(frames):
        out_events += [dataclasses.replace(e, t_s=e.t_s + k * span) for e in events]
        parts.append(Tracks(tracks.frame + k * n_frames, tracks.t_s + k * span, tracks.ball, tracks.cls, tracks.xy_mm, tracks.state,
                            tracks.confidence))
    options = {**dict(header.options), "frames": 2 * frames + 1, "next_break": "winner"}  # the same player breaks and wins every copy; nobody wins the match
    return dataclasses.replace(header, options=options), out_events, Tracks.concat(parts)
