"""The data layer of the match store: plain values in, plain values out (no ORM object leaves it).

:class:`MatchStore` opens a store (``cueref.store.db.connect``: SQLite file or PostgreSQL URL,
schema upgraded on open) and offers

* ``begin_match(info)``: the match of a video, found by the video's content hash or made; a re-run
  on the same video finds the same match (and takes the new game settings, if they changed);
* ``write(match_id, chunk)``: one transaction with the events, calls, shots and frames a shot (or
  an operator input) completed. Rows are keyed by their place in the log, and a row equal to the
  stored one is left alone, so writing the same chunk twice (a re-run after a crash) changes nothing
  and a changed one is updated, never duplicated;
* ``finish(match_id, ...)``: the run is over: rows beyond its end (left by an older, longer run)
  are removed and the match is marked complete;
* reading: ``matches``, ``match``, ``events``, ``decisions``, ``shots``, ``frames``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from cueref.store.db import StoreError, connect
from cueref.store.models import Correction, DecisionRow, EventRow, GameFrame, Match, MatchPlayer, Player, ShotRow, utcnow
from cueref.store.tracks import Tracks, pack_tracks, unpack_tracks
from tracking.events import Event, event_from_dict, event_to_dict

__all__ = [
    "MatchInfo", "MatchSummary", "StoredEvent", "StoredDecision", "StoredShot", "StoredFrame", "StoredCorrection", "Chunk", "MatchStore",
    "video_digest", "plain_json",
]


def video_digest(path: str | os.PathLike[str], progress: Callable[[int, int], None] | None = None) -> str:
    """The SHA-256 of a video file's content: what identifies a match (a renamed copy is the same
    match). ``progress(done_bytes, total_bytes)`` is called as it reads."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"{path}: no such video file (a match is identified by its video's content)")
    total, done, h = path.stat().st_size, 0, hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(8 << 20):
            h.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return h.hexdigest()


def plain_json(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples become lists...), so that what is compared with a
    stored row is what the database returns."""
    return json.loads(json.dumps(value))


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a match is when recording starts: its video and how it is played."""

    video_sha256: str
    video_path: str
    game: str
    profile: str
    players: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    played_at: datetime | None = None  # None: the video file's modification time


@dataclass(frozen=True, slots=True)
class MatchSummary:
    id: int
    video_sha256: str
    video_path: str
    game: str
    profile: str
    options: Mapping[str, Any]
    players: tuple[str, ...]
    status: str
    played_at: datetime
    annotated_video: str | None
    shots: int
    revision: int  # the revision of the calls that is current (0: as refereed, no correction)

    @property
    def title(self) -> str:
        return f"match {self.id}: {Path(self.video_path).name}, {self.game}, {' v '.join(self.players)}"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    seq: int
    shot: int | None
    event: Event


@dataclass(frozen=True, slots=True)
class StoredDecision:
    seq: int
    shot: int | None
    t_s: float
    player: str | None
    pending: bool
    summary: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True, eq=False)
class StoredShot:
    number: int
    frame_number: int
    player: str | None
    struck: str
    t_start_s: float
    t_end_s: float | None
    first_seq: int
    last_seq: int
    tracks: Tracks | None = None


@dataclass(frozen=True, slots=True)
class StoredFrame:
    number: int
    first_shot: int
    last_shot: int
    t_start_s: float
    t_end_s: float
    breaker: str | None
    winner: str | None


@dataclass(frozen=True, slots=True)
class StoredCorrection:
    id: int
    shot: int
    event: Event  # the operator input put into the log after the shot
    reason: str
    author: str | None
    created_at: datetime
    revision: int
    automatic: Mapping[str, Any]  # the shot's call before the correction
    corrected: Mapping[str, Any]  # and after it


@dataclass(slots=True)
class Chunk:
    """What one transaction writes: usually one shot with its events and calls."""

    events: list[StoredEvent] = field(default_factory=list)
    decisions: list[StoredDecision] = field(default_factory=list)
    shots: list[StoredShot] = field(default_factory=list)
    frames: list[StoredFrame] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.events or self.decisions or self.shots or self.frames)


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def _shot_digest(s: StoredShot, blob: bytes | None) -> str:
    h = hashlib.sha256(json.dumps([s.frame_number, s.player, s.struck, s.t_start_s, s.t_end_s, s.first_seq, s.last_seq]).encode())
    h.update(blob or b"")
    return h.hexdigest()


class MatchStore:
    """A match store (see the module docstring). Use as a context manager or call :meth:`close`."""

    def __init__(self, location: str | os.PathLike[str] | None = None):
        self.engine = connect(location)
        self._session = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def url(self) -> str:
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "MatchStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- matches ---------------------------------------------------------------------------------

    def _player_ids(self, s: Session, names: Sequence[str]) -> list[int]:
        ids = []
        for name in names:
            pid = s.scalar(select(Player.id).where(Player.name == name))
            if pid is None:
                pid = s.scalar(insert(Player).values(name=name).returning(Player.id))
            ids.append(pid)
        return ids

    def begin_match(self, info: MatchInfo) -> int:
        """The id of the match of ``info.video_sha256``, made if new; its settings are set to
        ``info``'s and its status to ``recording``."""
        played_at = info.played_at
        if played_at is None:
            try:
                played_at = datetime.fromtimestamp(Path(info.video_path).stat().st_mtime, timezone.utc)
            except OSError:
                played_at = utcnow()
        with self._session.begin() as s:
            m = s.scalar(select(Match).where(Match.video_sha256 == info.video_sha256))
            if m is None:
                m = Match(video_sha256=info.video_sha256, created_at=utcnow())
                s.add(m)
            m.video_path, m.game, m.profile = str(info.video_path), info.game, info.profile
            m.options, m.status, m.played_at, m.updated_at = plain_json(dict(info.options)), "recording", _aware(played_at), utcnow()
            s.flush()
            ids = self._player_ids(s, info.players)
            if [seat.player_id for seat in m.seats] != ids:
                m.seats.clear()
                s.flush()
                m.seats.extend(MatchPlayer(seat=i, player_id=pid) for i, pid in enumerate(ids))
            return m.id

    def _summary(self, s: Session, m: Match) -> MatchSummary:
        n = s.scalar(select(func.count()).select_from(ShotRow).where(ShotRow.match_id == m.id)) or 0
        return MatchSummary(m.id, m.video_sha256, m.video_path, m.game, m.profile, dict(m.options or {}), tuple(m.players), m.status,
                            _aware(m.played_at), m.annotated_video, int(n), m.revision)

    def matches(self, *, game: str | None = None, player: str | None = None, since: date | None = None,
                until: date | None = None) -> list[MatchSummary]:
        """Every match, oldest first, filtered by game, a player's name and the day played (inclusive)."""
        q = select(Match).order_by(Match.played_at, Match.id)
        if game:
            q = q.where(Match.game == game)
        if player:
            q = q.where(Match.id.in_(select(MatchPlayer.match_id).join(Player).where(Player.name == player)))
        if since:
            q = q.where(Match.played_at >= datetime.combine(since, time.min, timezone.utc))
        if until:
            q = q.where(Match.played_at <= datetime.combine(until, time.max, timezone.utc))
        with self._session() as s:
            return [self._summary(s, m) for m in s.scalars(q).unique()]

    def match(self, ref: int | str) -> MatchSummary:
        """A match by its id, the start of its video hash, or the path of its video (hashed)."""
        with self._session() as s:
            m = None
            text = str(ref)
            if text.isdigit():
                m = s.get(Match, int(text))
            elif len(text) >= 6 and all(c in "0123456789abcdef" for c in text.lower()):
                found = s.scalars(select(Match).where(Match.video_sha256.startswith(text.lower()))).all()
                if len(found) > 1:
                    raise StoreError(f"{text!r} starts the video hash of {len(found)} matches: give more of it, or the match id")
                m = found[0] if found else None
            elif Path(text).is_file():
                m = s.scalar(select(Match).where(Match.video_sha256 == video_digest(text)))
            if m is None:
                raise StoreError(f"no match {text!r} in the store {self.url}: `cueref review --store STORE` lists the matches "
                                 "(by id; a video's path or hash works too)")
            return self._summary(s, m)

    def set_annotated_video(self, match_id: int, path: str | os.PathLike[str] | None) -> None:
        with self._session.begin() as s:
            s.execute(update(Match).where(Match.id == match_id).values(annotated_video=None if path is None else str(path)))

    # ---- writing -------------------------------------------------------------------------------------

    def write(self, match_id: int, chunk: Chunk, revision: int = 0) -> None:
        """Write ``chunk`` in one transaction (see the module docstring: equal rows are left alone)."""
        if not chunk:
            return
        with self.engine.begin() as s:  # Core, not the ORM session: this runs once per call, live
            self._sync(s, EventRow, match_id, ("seq",), [
                {"seq": e.seq, "shot": e.shot, "t_s": e.event.t_s, "kind": e.event.kind, "data": plain_json(event_to_dict(e.event))}
                for e in chunk.events])
            self._sync(s, DecisionRow, match_id, ("revision", "seq"), [
                {"revision": revision, "seq": d.seq, "shot": d.shot, "t_s": d.t_s, "player": d.player, "pending": d.pending,
                 "summary": d.summary, "data": plain_json(dict(d.data))} for d in chunk.decisions])
            shots = []
            for sh in chunk.shots:
                blob = pack_tracks(sh.tracks) if sh.tracks is not None and len(sh.tracks) else None
                shots.append({"number": sh.number, "frame_number": sh.frame_number, "player": sh.player, "struck": sh.struck,
                              "t_start_s": sh.t_start_s, "t_end_s": sh.t_end_s, "first_seq": sh.first_seq, "last_seq": sh.last_seq,
                              "digest": _shot_digest(sh, blob), "tracks": blob})
            self._sync(s, ShotRow, match_id, ("number",), shots, compare=("digest",))
            self._sync(s, GameFrame, match_id, ("number",), [
                {"number": f.number, "first_shot": f.first_shot, "last_shot": f.last_shot, "t_start_s": f.t_start_s,
                 "t_end_s": f.t_end_s, "breaker": f.breaker, "winner": f.winner} for f in chunk.frames])
            s.execute(update(Match).where(Match.id == match_id).values(updated_at=utcnow()))

    @staticmethod
    def _sync(s: Session | Connection, table: type, match_id: int, keys: tuple[str, ...], rows: list[dict[str, Any]],
              compare: tuple[str, ...] | None = None) -> None:
        """Insert rows that are new, update those that differ from the stored ones, leave equal ones."""
        if not rows:
            return
        compare = compare or tuple(k for k in rows[0] if k not in keys)
        cols = [getattr(table, k) for k in keys + compare]
        last = getattr(table, keys[-1])
        q = select(*cols).where(table.match_id == match_id, last.in_([r[keys[-1]] for r in rows]))
        for k in keys[:-1]:
            q = q.where(getattr(table, k) == rows[0][k])
        stored = {tuple(r[:len(keys)]): tuple(r[len(keys):]) for r in s.execute(q)}
        new = []
        for r in rows:
            key = tuple(r[k] for k in keys)
            if key not in stored:
                new.append({"match_id": match_id, **r})
            elif stored[key] != tuple(r[c] for c in compare):
                where = [table.match_id == match_id] + [getattr(table, k) == r[k] for k in keys]
                s.execute(update(table).where(*where).values(**{k: v for k, v in r.items() if k not in keys}))
        if new:
            s.execute(insert(table), new)

    def finish(self, match_id: int, *, events: int, decisions: int, shots: int, frames: int, revision: int = 0) -> None:
        """The run wrote ``events`` events, ``decisions`` calls (of ``revision``), ``shots`` shots and
        ``frames`` frames: drop rows beyond those (an older, longer run's) and mark the match complete."""
        with self._session.begin() as s:
            s.execute(delete(EventRow).where(EventRow.match_id == match_id, EventRow.seq >= events))
            s.execute(delete(DecisionRow).where(DecisionRow.match_id == match_id, DecisionRow.revision == revision,
                                                DecisionRow.seq >= decisions))
            s.execute(delete(ShotRow).where(ShotRow.match_id == match_id, ShotRow.number >= shots))
            s.execute(delete(GameFrame).where(GameFrame.match_id == match_id, GameFrame.number > frames))
            s.execute(update(Match).where(Match.id == match_id).values(status="complete", updated_at=utcnow()))

    def write_revision(self, match_id: int, revision: int, decisions: Sequence[StoredDecision], shots: Sequence[StoredShot],
                       frames: Sequence[StoredFrame], correction: Mapping[str, Any] | None = None) -> None:
        """Make ``revision`` the match's current calls, in one transaction: its calls (the revisions
        between 0 and it are dropped), each shot's player and frame under it, the frames, and the
        correction that made it (``Correction``'s fields)."""
        with self._session.begin() as s:
            s.execute(delete(DecisionRow).where(DecisionRow.match_id == match_id, DecisionRow.revision.notin_([0, revision])))
            s.execute(delete(DecisionRow).where(DecisionRow.match_id == match_id, DecisionRow.revision == revision,
                                                DecisionRow.seq >= len(decisions)))
            self._sync(s, DecisionRow, match_id, ("revision", "seq"), [
                {"revision": revision, "seq": d.seq, "shot": d.shot, "t_s": d.t_s, "player": d.player, "pending": d.pending,
                 "summary": d.summary, "data": plain_json(dict(d.data))} for d in decisions])
            for sh in shots:
                s.execute(update(ShotRow).where(ShotRow.match_id == match_id, ShotRow.number == sh.number)
                          .values(player=sh.player, frame_number=sh.frame_number))
            s.execute(delete(GameFrame).where(GameFrame.match_id == match_id, GameFrame.number > len(frames)))
            self._sync(s, GameFrame, match_id, ("number",), [
                {"number": f.number, "first_shot": f.first_shot, "last_shot": f.last_shot, "t_start_s": f.t_start_s,
                 "t_end_s": f.t_end_s, "breaker": f.breaker, "winner": f.winner} for f in frames])
            if correction is not None:
                s.add(Correction(match_id=match_id, revision=revision, created_at=utcnow(), **{k: plain_json(v) if k in (
                    "event", "automatic", "corrected") else v for k, v in correction.items()}))
            s.execute(update(Match).where(Match.id == match_id).values(revision=revision, updated_at=utcnow()))

    def update_correction(self, correction_id: int, *, revision: int, automatic: Mapping[str, Any], corrected: Mapping[str, Any]) -> None:
        """A correction applied again (after the match was refereed again)."""
        with self._session.begin() as s:
            s.execute(update(Correction).where(Correction.id == correction_id).values(
                revision=revision, automatic=plain_json(dict(automatic)), corrected=plain_json(dict(corrected))))

    # ---- reading -------------------------------------------------------------------------------------

    def corrections(self, match_id: int) -> list[StoredCorrection]:
        """The match's corrections in the order they were made."""
        with self._session() as s:
            rows = s.scalars(select(Correction).where(Correction.match_id == match_id).order_by(Correction.id))
            return [StoredCorrection(c.id, c.shot, event_from_dict(c.event), c.reason, c.author, _aware(c.created_at), c.revision,
                                     c.automatic, c.corrected) for c in rows]

    def events(self, match_id: int) -> list[StoredEvent]:
        """The match's event log in order."""
        with self._session() as s:
            rows = s.execute(select(EventRow.seq, EventRow.shot, EventRow.data).where(EventRow.match_id == match_id).order_by(EventRow.seq))
            return [StoredEvent(seq, shot, event_from_dict(data)) for seq, shot, data in rows]

    def decisions(self, match_id: int, revision: int | None = None) -> list[StoredDecision]:
        """The calls of one revision of the match (default: the current one; 0: the automatic calls of
        the referee's run), in the order they were made."""
        with self._session() as s:
            if revision is None:
                revision = s.scalar(select(Match.revision).where(Match.id == match_id)) or 0
            rows = s.scalars(select(DecisionRow).where(DecisionRow.match_id == match_id, DecisionRow.revision == revision)
                             .order_by(DecisionRow.seq))
            return [StoredDecision(r.seq, r.shot, r.t_s, r.player, r.pending, r.summary, r.data) for r in rows]

    def shots(self, match_id: int, *, tracks: bool = False, numbers: Iterable[int] | None = None) -> list[StoredShot]:
        """The match's shots in order (with their tracks unpacked when ``tracks``)."""
        cols = [ShotRow.number, ShotRow.frame_number, ShotRow.player, ShotRow.struck, ShotRow.t_start_s, ShotRow.t_end_s,
                ShotRow.first_seq, ShotRow.last_seq]
        q = select(*cols, *( [ShotRow.tracks] if tracks else [])).where(ShotRow.match_id == match_id).order_by(ShotRow.number)
        if numbers is not None:
            q = q.where(ShotRow.number.in_(list(numbers)))
        with self._session() as s:
            out = []
            for r in s.execute(q):
                blob = r[8] if tracks else None
                out.append(StoredShot(*r[:8], tracks=unpack_tracks(blob) if blob else None))
            return out

    def frames(self, match_id: int) -> list[StoredFrame]:
        with self._session() as s:
            rows = s.scalars(select(GameFrame).where(GameFrame.match_id == match_id).order_by(GameFrame.number))
            return [StoredFrame(f.number, f.first_shot, f.last_shot, f.t_start_s, f.t_end_s, f.breaker, f.winner) for f in rows]

