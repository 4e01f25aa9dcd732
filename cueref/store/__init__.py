"""The match store: matches, players, frames, shots, events, calls and tracks in SQLite (a file, the
default) or PostgreSQL (a URL), behind a small data layer (SQLAlchemy 2, schema migrations by
Alembic run on open). See ``docs/store.md``.

    store = MatchStore("cueref-out/matches.sqlite")          # or "postgresql://user@host/league"
    with MatchRecorder.open(store, video=..., game=..., profile=..., players=...) as rec: ...
"""

from cueref.store.db import DEFAULT_STORE, StoreError, store_url
from cueref.store.frames import FrameBook
from cueref.store.recorder import MatchRecorder, RecordResult, StoppingReferee, frames_of, record_log
from cueref.store.store import MatchInfo, MatchStore, MatchSummary, StoredDecision, StoredEvent, StoredFrame, StoredShot, video_digest
from cueref.store.tracks import TRACK_COLUMNS, TrackPoint, Tracks, TracksError, read_tracks_csv, write_tracks_csv

__all__ = [
    "DEFAULT_STORE", "StoreError", "store_url", "MatchStore", "MatchInfo", "MatchSummary", "StoredDecision", "StoredEvent",
    "StoredFrame", "StoredShot", "MatchRecorder", "FrameBook", "RecordResult", "StoppingReferee", "frames_of", "record_log", "video_digest",
    "TRACK_COLUMNS", "TrackPoint", "Tracks", "TracksError", "read_tracks_csv", "write_tracks_csv",
]
