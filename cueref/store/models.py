"""The match store's tables, as SQLAlchemy 2 ORM classes (the schema is made and upgraded by the
Alembic migrations in ``cueref/store/migrations``, never by ``create_all``).

A match is one video (identified by the SHA-256 of the file's content, so a renamed copy is the same
match) refereed under one game, table and set of players. Its record grows with shots, not with video
frames:

* ``events``: the event log, one row per event in log order (``seq``), each tagged with the shot it
  belongs to (hand events and operator inputs between two shots belong to the next one, as in
  ``rules.base.split_log``);
* ``shots``: one row per shot with its times, player, the ball struck and the tracks of the balls
  while it ran, packed (``cueref.store.tracks``);
* ``decisions``: every call in the order the engine made it. ``revision`` 0 holds the calls of the
  referee's run (the automatic calls); a review that corrects a call replays the corrected log and
  writes the whole new set of calls as the match's next revision, which becomes current (the
  revisions between are dropped: the store keeps the automatic calls and the current ones);
* ``corrections``: what a reviewer changed (an override or an answer), why, and the call before and
  after it;
* ``frames``: the games' frames (racks), who broke, who won and when.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["Base", "Player", "Match", "MatchPlayer", "GameFrame", "ShotRow", "EventRow", "DecisionRow", "Correction", "utcnow"]

# JSON columns: JSONB on PostgreSQL (indexable, compact), JSON text elsewhere
Json = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class Player(Base):
    """A player (or a team's name) known to the store, shared by every match they play."""

    __tablename__ = "players"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)


class Match(Base):
    """One refereed video."""

    __tablename__ = "matches"
    id: Mapped[int] = mapped_column(primary_key=True)
    video_sha256: Mapped[str] = mapped_column(String(64), unique=True)  # the content hash identifies the match
    video_path: Mapped[str] = mapped_column(Text)  # where the video was when last refereed
    game: Mapped[str] = mapped_column(String(40))
    profile: Mapped[str] = mapped_column(String(200))
    options: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    status: Mapped[str] = mapped_column(String(20), default="recording")  # "recording" | "complete"
    played_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))  # the date filters use
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    revision: Mapped[int] = mapped_column(Integer, default=0)  # the revision of decisions that is current
    annotated_video: Mapped[str | None] = mapped_column(Text, nullable=True)  # the annotated video's path, if written

    seats: Mapped[list["MatchPlayer"]] = relationship(order_by="MatchPlayer.seat", cascade="all, delete-orphan")

    @property
    def players(self) -> list[str]:
        return [s.player.name for s in self.seats]


class MatchPlayer(Base):
    """Who played a match, in break order (``seat`` 0 breaks first)."""

    __tablename__ = "match_players"
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    player: Mapped[Player] = relationship(lazy="joined")


class GameFrame(Base):
    """A frame of the game (a rack, not a video frame): its first and last shot and its result."""

    __tablename__ = "frames"
    __table_args__ = (UniqueConstraint("match_id", "number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)  # 1, 2, ...
    first_shot: Mapped[int] = mapped_column(Integer)
    last_shot: Mapped[int] = mapped_column(Integer)
    t_start_s: Mapped[float] = mapped_column(Float)
    t_end_s: Mapped[float] = mapped_column(Float)
    breaker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    winner: Mapped[str | None] = mapped_column(String(200), nullable=True)  # None while it is being played


class ShotRow(Base):
    """One shot: from the strike to the moment everything stopped."""

    __tablename__ = "shots"
    __table_args__ = (UniqueConstraint("match_id", "number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)  # the engine's shot index (0, 1, ...)
    frame_number: Mapped[int] = mapped_column(Integer)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)
    struck: Mapped[str] = mapped_column(String(40))
    t_start_s: Mapped[float] = mapped_column(Float)
    t_end_s: Mapped[float | None] = mapped_column(Float, nullable=True)  # None: the shot never came to rest
    first_seq: Mapped[int] = mapped_column(Integer)  # the shot's events are seq first_seq..last_seq
    last_seq: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str] = mapped_column(String(64))  # of everything written with the shot: a re-run skips equal shots
    tracks: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # cueref.store.tracks.pack_tracks


class EventRow(Base):
    """One event of the log (``tracking.events``), as its JSON form."""

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("match_id", "seq"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # position in the log
    shot: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the shot it belongs to
    t_s: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(40), index=True)
    data: Mapped[dict[str, Any]] = mapped_column(Json)  # tracking.events.event_to_dict


class DecisionRow(Base):
    """One call of the rules engine (``Decision.to_dict()``)."""

    __tablename__ = "decisions"
    __table_args__ = (UniqueConstraint("match_id", "revision", "seq"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    revision: Mapped[int] = mapped_column(Integer)  # 0: the referee's run; n: after the n-th correction
    seq: Mapped[int] = mapped_column(Integer)  # order in which the engine made the calls
    shot: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: the call on an operator input
    t_s: Mapped[float] = mapped_column(Float)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)
    pending: Mapped[bool] = mapped_column(default=False)  # a question waits for the operator
    summary: Mapped[str] = mapped_column(Text)  # Decision.summary(): one line for a terminal
    data: Mapped[dict[str, Any]] = mapped_column(Json)


class Correction(Base):
    """A reviewer's change to a call: an ``override`` of a field or an ``answer`` to a pending question,
    put into the log right after the shot, with the reason; ``automatic`` and ``corrected`` are the
    shot's call before and after (``Decision.to_dict()``)."""

    __tablename__ = "corrections"
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    shot: Mapped[int] = mapped_column(Integer)
    event: Mapped[dict[str, Any]] = mapped_column(Json)  # the operator input put into the log
    reason: Mapped[str] = mapped_column(Text)
    author: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revision: Mapped[int] = mapped_column(Integer)  # the decisions revision it produced
    automatic: Mapped[dict[str, Any]] = mapped_column(Json)
    corrected: Mapped[dict[str, Any]] = mapped_column(Json)
