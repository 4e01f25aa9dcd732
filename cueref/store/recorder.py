"""Recording a match into the store as it is refereed: a consumer of the referee's results.

:class:`MatchRecorder` takes, in the order the pipeline makes them, each video frame's tracks
(:meth:`~MatchRecorder.frame`), each event of the log (:meth:`~MatchRecorder.event`) and each call
the rules engine makes (:meth:`~MatchRecorder.decision`). It writes one transaction each time a call
is made: the call, every event since the last write, the shot it closes with that shot's tracks, and
the frame (rack) it belongs to. A crash or a kill therefore loses at most the shot in progress, and a
re-run on the same video rewrites the same rows (equal rows are left alone: nothing is duplicated)::

    with MatchRecorder.open(store, video="match.mp4", game="ficha", profile="ficha", players=["Ana", "Bia"]) as rec:
        referee = Referee(engine, players, options)
        for result in pipeline:                       # per-frame results, in order
            rec.frame(result.frame.index, result.frame.t_s, result.tracks)
            for event in result.events:
                rec.event(event)
                for step in referee.feed(event):
                    rec.decision(step.decision)
        for step in referee.finish():
            rec.decision(step.decision)
    # leaving the block normally calls finish(): the match is complete

:func:`record_log` does the same for a whole event log (and optional tracks) at once: what
``cueref report`` does with a referee's output folder or a sample clip's log.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from cueref.store.corrections import reapply
from cueref.store.frames import FrameBook
from cueref.store.store import Chunk, MatchInfo, MatchStore, StoredDecision, StoredEvent, StoredShot, video_digest
from cueref.store.tracks import TrackPoint, Tracks
from rules.base import Decision, Referee, RulesError
from tracking.events import AtRest, Event, ShotStart

__all__ = ["MatchRecorder", "RecordResult", "StoppingReferee", "record_log", "frames_of"]

log = logging.getLogger(__name__)

#: tracks kept while no shot is open (the strike's event may come a little after its frames)
IDLE_TRACKS_S = 5.0


@dataclass(slots=True)
class _Shot:
    number: int
    struck: str
    t_start_s: float
    first_seq: int
    t_end_s: float | None = None
    last_seq: int = -1


class MatchRecorder:
    """Writes a match into a :class:`MatchStore` as it is refereed (see the module docstring)."""

    def __init__(self, store: MatchStore, match_id: int, *, keep_tracks: bool = True):
        self.store, self.match_id, self.keep_tracks = store, match_id, keep_tracks
        self._events: list[StoredEvent] = []
        self._decisions: list[StoredDecision] = []
        self._seq = 0
        self._dseq = 0
        self._shots = 0  # shots seen (the next shot's number)
        self._open: _Shot | None = None
        self._closed: dict[int, _Shot] = {}  # closed shots whose row is not written yet
        self._ready: list[StoredShot] = []
        self._tracks: list[Tracks] = []
        self._last_frame_t = -np.inf
        self.frames = FrameBook()
        self._finished = False
        self.warning: str | None = None  # set by finish() when earlier corrections no longer apply

    @classmethod
    def open(cls, store: MatchStore, *, video: str | os.PathLike[str], game: str, profile: str, players: Sequence[str],
             options: Mapping[str, Any] | None = None, video_sha256: str | None = None, played_at: datetime | None = None,
             keep_tracks: bool = True) -> "MatchRecorder":
        """A recorder for the match of ``video`` (found by its content hash, or made)."""
        info = MatchInfo(video_sha256 or video_digest(video), str(Path(video).resolve()), game, profile, tuple(players),
                         dict(options or {}), played_at)
        return cls(store, store.begin_match(info), keep_tracks=keep_tracks)

    def __enter__(self) -> "MatchRecorder":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.finish()
        else:
            self.flush()  # what was decided stays; the match stays "recording"

    # ---- input -----------------------------------------------------------------------------------

    def frame(self, frame_index: int, t_s: float, tracks: Tracks | Iterable[TrackPoint]) -> None:
        """The tracks of one video frame (every ball the tracker follows)."""
        if not self.keep_tracks:
            return
        if not isinstance(tracks, Tracks):
            tracks = Tracks.from_points(tracks)
        self._tracks.append(tracks)
        self._last_frame_t = t_s
        if self._open is None:  # keep only a few idle seconds: memory stays flat between shots
            while self._tracks and (not len(self._tracks[0]) or self._tracks[0].t_s.max() < t_s - IDLE_TRACKS_S):
                self._tracks.pop(0)

    def event(self, e: Event) -> None:
        """One event of the log, in log order."""
        if isinstance(e, ShotStart):
            if self._open is not None:  # a strike with no at_rest before it: the open shot ends unfinished
                self._close(None)
            self._open = _Shot(self._shots, e.ball, e.t_s, self._seq)
            self._shots += 1
        shot = self._open.number if self._open is not None else self._shots
        self._events.append(StoredEvent(self._seq, shot, e))
        self._seq += 1
        if isinstance(e, AtRest) and self._open is not None:
            self._close(e.t_s)

    def decision(self, d: Decision) -> None:
        """One call of the rules engine; writes everything it completes in one transaction."""
        data = d.to_dict()
        self._decisions.append(StoredDecision(self._dseq, d.shot, d.t_s, d.player, d.pending is not None, d.summary(), data))
        self._dseq += 1
        if d.shot is not None and d.shot in self._closed:
            self._write_shot(self._closed.pop(d.shot), d.player)
        self.frames.call(data)
        self.flush()

    # ---- output ----------------------------------------------------------------------------------

    def _close(self, t_end_s: float | None) -> None:
        s = self._open
        assert s is not None
        s.t_end_s, s.last_seq = t_end_s, self._seq - 1  # the at_rest, or the last event before the next strike
        self._closed[s.number] = s
        self._open = None

    def _write_shot(self, s: _Shot, player: str | None) -> None:
        tracks = None
        if self._tracks:
            end = s.t_end_s if s.t_end_s is not None else self._last_frame_t
            everything = Tracks.concat(self._tracks)
            tracks = everything.between(s.t_start_s, end)
            self._tracks = [everything[everything.t_s >= end]]
        frame = self.frames.shot(s.number, player, s.t_start_s, s.t_end_s)
        self._ready.append(StoredShot(s.number, frame, player, s.struck, s.t_start_s, s.t_end_s, s.first_seq, s.last_seq, tracks))

    def flush(self) -> None:
        """Write everything received so far (events of the shot in progress included) in one transaction."""
        chunk = Chunk(self._events, self._decisions, self._ready, self.frames.changed())
        if chunk:
            self.store.write(self.match_id, chunk)
        self._events, self._decisions, self._ready = [], [], []

    def finish(self) -> None:
        """The run is over: a shot still open is written unfinished, and the match is marked complete."""
        if self._finished:
            return
        if self._open is not None:
            self._close(None)
        for s in list(self._closed.values()):
            self._write_shot(s, None)
        self._closed.clear()
        self.flush()
        self.store.finish(self.match_id, events=self._seq, decisions=self._dseq, shots=self._shots, frames=self.frames.count)
        self._finished = True
        self.warning = reapply(self.store, self.match_id)  # a reviewer's corrections, made on an earlier run

    @property
    def events_seen(self) -> int:
        return self._seq


@dataclass(frozen=True, slots=True)
class RecordResult:
    match_id: int
    events: int
    decisions: list[Decision]
    error: str | None = None  # the rules could not judge the log past a point: why
    warning: str | None = None  # earlier corrections no longer apply: why


def frames_of(tracks: Tracks) -> Iterable[tuple[int, float, Tracks]]:
    """``(frame, t_s, that frame's rows)`` in time order."""
    if not len(tracks):
        return
    order = np.lexsort((tracks.frame, tracks.t_s))
    tracks = tracks[order]
    cuts = np.flatnonzero(np.diff(tracks.frame)) + 1
    for part in np.split(np.arange(len(tracks)), cuts):
        yield int(tracks.frame[part[0]]), float(tracks.t_s[part[0]]), tracks[part]


class StoppingReferee:
    """A :class:`~rules.base.Referee` that stops judging at the first event the rules refuse (an
    impossible log, a question left unanswered) instead of raising: ``error`` says why, and the
    caller goes on recording the rest of the log, which ``cueref review`` can judge once settled."""

    def __init__(self, engine: Any, players: Sequence[str], options: Mapping[str, Any] | None):
        self._referee: Referee | None = Referee(engine, players, options)
        self.error: str | None = None

    def _steps(self, make: Callable[[Referee], Iterable[Any]]) -> list[Decision]:
        if self._referee is None:
            return []
        try:
            return [s.decision for s in make(self._referee)]
        except RulesError as err:
            self._referee, self.error = None, str(err)
            log.warning("the rules cannot judge the rest of the log: %s", err)
            return []

    def feed(self, e: Event) -> list[Decision]:
        return self._steps(lambda r: r.feed(e))

    def finish(self) -> list[Decision]:
        return self._steps(lambda r: r.finish())


def record_log(store: MatchStore, *, video: str | os.PathLike[str], engine: Any, game: str, profile: str,
               players: Sequence[str], options: Mapping[str, Any] | None, events: Sequence[Event], tracks: Tracks | None = None,
               video_sha256: str | None = None, played_at: datetime | None = None,
               on_decision: Callable[[Decision], None] | None = None) -> RecordResult:
    """Referee a whole event log (with its tracks, if any) and record the match, as a live run would.

    A log the rules cannot judge to its end (an impossible log, a question left unanswered) is judged
    up to the event that failed and recorded whole (every event and track is kept, the later shots
    have no call); the result's ``error`` says why. ``cueref review`` can then answer or correct the
    call, which judges the rest."""
    rec = MatchRecorder.open(store, video=video, game=game, profile=profile, players=players, options=options,
                             video_sha256=video_sha256, played_at=played_at, keep_tracks=tracks is not None)
    referee = StoppingReferee(engine, players, options)
    frames = iter(frames_of(tracks) if tracks is not None else ())
    pending_frame = next(frames, None)
    decisions: list[Decision] = []

    def take(made: list[Decision]) -> None:
        for d in made:
            decisions.append(d)
            rec.decision(d)
            if on_decision:
                on_decision(d)

    for e in events:
        while pending_frame is not None and pending_frame[1] <= e.t_s:
            rec.frame(*pending_frame)
            pending_frame = next(frames, None)
        rec.event(e)
        take(referee.feed(e))
    take(referee.finish())
    while pending_frame is not None:
        rec.frame(*pending_frame)
        pending_frame = next(frames, None)
    rec.finish()
    return RecordResult(rec.match_id, rec.events_seen, decisions, referee.error, rec.warning)
