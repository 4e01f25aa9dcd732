"""Ball tracks: the per-frame positions the tracker reports, as ``tracks.csv`` and packed per shot.

``tracks.csv`` (what ``cueref track`` and ``cueref referee`` write) has exactly the columns
``frame, t_s, ball, class, x_mm, y_mm, state, confidence``: one row per ball per video frame.
:class:`Tracks` holds such rows as columns (NumPy arrays); :func:`read_tracks_csv` and
:func:`write_tracks_csv` convert.

The store keeps tracks per shot only (from the strike to the moment everything stopped), packed by
:func:`pack_tracks` into one compressed blob in the shot's row, so that the shot and its tracks are
written in the same transaction and the store grows with shots, not with frames. Positions are kept
as float32 (a quarter of a micrometre at three metres: far below what any camera measures); frames,
times, ids, classes, states and confidences are kept exactly.
"""

from __future__ import annotations

import csv
import json
import math
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

import numpy as np

__all__ = ["TRACK_COLUMNS", "TrackPoint", "Tracks", "TracksError", "read_tracks_csv", "write_tracks_csv", "pack_tracks", "unpack_tracks"]

TRACK_COLUMNS = ("frame", "t_s", "ball", "class", "x_mm", "y_mm", "state", "confidence")
_MAGIC = b"CRT1"


class TracksError(ValueError):
    """A tracks file or blob that cannot be read: the message says where and why."""


class TrackPoint(NamedTuple):
    """One row of ``tracks.csv``: where one ball was in one video frame."""

    frame: int
    t_s: float
    ball: str
    cls: str  # the colour class the tracker gave the ball ("cue", "red", ...)
    x_mm: float
    y_mm: float
    state: str  # the tracker's word: "moving", "at_rest", "lost" ...
    confidence: float


@dataclass(frozen=True, slots=True, eq=False)
class Tracks:
    """Track rows as columns; every array has length n, rows in the order given."""

    frame: np.ndarray  # (n,) int64
    t_s: np.ndarray  # (n,) float64
    ball: np.ndarray  # (n,) str
    cls: np.ndarray  # (n,) str
    xy_mm: np.ndarray  # (n, 2) float64, NaN where the tracker gave no position
    state: np.ndarray  # (n,) str
    confidence: np.ndarray  # (n,) float64

    def __post_init__(self) -> None:
        n = len(self.frame)
        for name in ("t_s", "ball", "cls", "state", "confidence"):
            if len(getattr(self, name)) != n:
                raise TracksError(f"tracks: column {name} has {len(getattr(self, name))} rows, frame has {n}")
        if self.xy_mm.shape != (n, 2):
            raise TracksError(f"tracks: xy_mm must be ({n}, 2), got {self.xy_mm.shape}")

    def __len__(self) -> int:
        return len(self.frame)

    @classmethod
    def empty(cls) -> "Tracks":
        return cls.from_points(())

    @classmethod
    def from_points(cls, points: Iterable[TrackPoint]) -> "Tracks":
        rows = list(points)
        return cls(
            frame=np.array([p.frame for p in rows], dtype=np.int64),
            t_s=np.array([p.t_s for p in rows], dtype=np.float64),
            ball=np.array([p.ball for p in rows], dtype=str),
            cls=np.array([p.cls for p in rows], dtype=str),
            xy_mm=np.array([(p.x_mm, p.y_mm) for p in rows], dtype=np.float64).reshape(len(rows), 2),
            state=np.array([p.state for p in rows], dtype=str),
            confidence=np.array([p.confidence for p in rows], dtype=np.float64),
        )

    @classmethod
    def concat(cls, parts: Sequence["Tracks"]) -> "Tracks":
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("frame", "t_s", "ball", "cls", "xy_mm", "state", "confidence")))

    def __getitem__(self, mask: np.ndarray | slice) -> "Tracks":
        """Rows selected by a boolean mask, an index array or a slice."""
        return Tracks(self.frame[mask], self.t_s[mask], self.ball[mask], self.cls[mask], self.xy_mm[mask], self.state[mask],
                      self.confidence[mask])

    def between(self, t0_s: float, t1_s: float) -> "Tracks":
        """Rows with ``t0_s <= t_s <= t1_s``."""
        return self[(self.t_s >= t0_s) & (self.t_s <= t1_s)]

    def points(self) -> Iterator[TrackPoint]:
        for i in range(len(self)):
            yield TrackPoint(int(self.frame[i]), float(self.t_s[i]), str(self.ball[i]), str(self.cls[i]),
                             float(self.xy_mm[i, 0]), float(self.xy_mm[i, 1]), str(self.state[i]), float(self.confidence[i]))

    def paths(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each ball's ``(t_s (k,), xy_mm (k, 2))`` in time order, positions the tracker gave only."""
        out = {}
        for ball in dict.fromkeys(self.ball.tolist()):
            m = (self.ball == ball) & np.isfinite(self.xy_mm).all(axis=1)
            order = np.argsort(self.t_s[m], kind="stable")
            out[ball] = (self.t_s[m][order], self.xy_mm[m][order])
        return out


def _float(text: str, what: str, where: str) -> float:
    if text.strip() == "":
        return math.nan
    try:
        return float(text)
    except ValueError:
        raise TracksError(f"{where}: {what} must be a number, got {text!r}") from None


def read_tracks_csv(path: str | Path) -> Tracks:
    """Read ``tracks.csv``; the header must name the columns of :data:`TRACK_COLUMNS`. An empty
    ``x_mm``/``y_mm`` (a ball the tracker lost) reads as NaN."""
    path = Path(path)
    if not path.exists():
        raise TracksError(f"{path}: the tracks file does not exist")
    points = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != TRACK_COLUMNS:
            raise TracksError(f"{path}, line 1: the header must be {','.join(TRACK_COLUMNS)}, got {','.join(header or [])!r}")
        for n, row in enumerate(reader, start=2):
            if not row:
                continue
            where = f"{path}, line {n}"
            if len(row) != len(TRACK_COLUMNS):
                raise TracksError(f"{where}: {len(row)} values, expected {len(TRACK_COLUMNS)} ({','.join(TRACK_COLUMNS)})")
            try:
                frame = int(row[0])
            except ValueError:
                raise TracksError(f"{where}: frame must be an integer, got {row[0]!r}") from None
            points.append(TrackPoint(frame, _float(row[1], "t_s", where), row[2], row[3], _float(row[4], "x_mm", where),
                                     _float(row[5], "y_mm", where), row[6], _float(row[7], "confidence", where)))
    return Tracks.from_points(points)


def write_tracks_csv(path: str | Path, tracks: Tracks) -> Path:
    """Write ``tracks.csv`` (atomically: a temporary file, then a rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(TRACK_COLUMNS)
        for p in tracks.points():
            w.writerow([p.frame, f"{p.t_s:.6f}", p.ball, p.cls, "" if math.isnan(p.x_mm) else f"{p.x_mm:.3f}",
                        "" if math.isnan(p.y_mm) else f"{p.y_mm:.3f}", p.state, f"{p.confidence:.4g}"])
    tmp.replace(path)
    return path


def _codes(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    vocab, codes = np.unique(values, return_inverse=True)
    return vocab.tolist(), codes.astype(np.uint16)


def pack_tracks(tracks: Tracks) -> bytes:
    """One compressed blob of a shot's tracks: a JSON header (the ids, classes and states named once)
    and the columns, zlib-compressed."""
    balls, ball_code = _codes(tracks.ball)
    classes, cls_code = _codes(tracks.cls)
    states, state_code = _codes(tracks.state)
    columns = (tracks.frame.astype(np.int64), tracks.t_s.astype(np.float64), ball_code, cls_code,
               tracks.xy_mm.astype(np.float32), state_code, tracks.confidence.astype(np.float32))
    header = json.dumps({"n": len(tracks), "balls": balls, "classes": classes, "states": states}).encode()
    payload = zlib.compress(b"".join(np.ascontiguousarray(c).tobytes() for c in columns), 6)
    return _MAGIC + struct.pack("<I", len(header)) + header + payload


def unpack_tracks(blob: bytes) -> Tracks:
    """The tracks :func:`pack_tracks` packed."""
    if not blob.startswith(_MAGIC):
        raise TracksError("packed tracks: not a cueref tracks blob (bad magic)")
    (hlen,) = struct.unpack_from("<I", blob, len(_MAGIC))
    start = len(_MAGIC) + 4
    header = json.loads(blob[start:start + hlen])
    raw = zlib.decompress(blob[start + hlen:])
    n = header["n"]
    out, offset = [], 0
    for dtype, shape in ((np.int64, (n,)), (np.float64, (n,)), (np.uint16, (n,)), (np.uint16, (n,)), (np.float32, (n, 2)),
                         (np.uint16, (n,)), (np.float32, (n,))):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        out.append(np.frombuffer(raw, dtype=dtype, count=int(np.prod(shape)), offset=offset).reshape(shape))
        offset += size
    frame, t_s, ball_code, cls_code, xy, state_code, conf = out
    vocab = lambda names, codes: np.array(names, dtype=str)[codes] if n else np.array([], dtype=str)  # noqa: E731
    return Tracks(frame.copy(), t_s.copy(), vocab(header["balls"], ball_code), vocab(header["classes"], cls_code),
                  xy.astype(np.float64), vocab(header["states"], state_code), conf.astype(np.float64))
