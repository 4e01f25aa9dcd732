"""Which frame (rack) of the game each shot belongs to, and who broke and won each frame, from the
calls in the order the engine made them: live as a match is recorded (:class:`FrameBook`) and again
for a corrected set of calls (:func:`regroup`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from cueref.store.store import StoredDecision, StoredFrame, StoredShot

__all__ = ["FrameBook", "regroup"]


class FrameBook:
    """Which frame (rack) each shot belongs to, from the calls in the order they were made.

    A call with ``frame_over`` (and no pending question) ends the current frame; the next shot opens
    the next one. A later call on the same shot (an answer, an override) may change its winner or
    undo the end."""

    def __init__(self) -> None:
        self.number = 1
        self._frames: dict[int, StoredFrame] = {}
        self._closed_by: int | None = None  # the shot whose call ended the last frame
        self._changed: set[int] = set()

    def shot(self, number: int, player: str | None, t_start_s: float, t_end_s: float | None) -> int:
        """Put a shot in the current frame; returns the frame's number."""
        f = self._frames.get(self.number)
        end = t_end_s if t_end_s is not None else t_start_s
        if f is None:
            f = StoredFrame(self.number, number, number, t_start_s, end, player, None)
        else:
            f = replace(f, last_shot=number, t_end_s=max(f.t_end_s, end))
        self._frames[self.number] = f
        self._changed.add(self.number)
        return self.number

    def call(self, d: Mapping[str, Any]) -> None:
        """Take one call (``Decision.to_dict()``)."""
        if d.get("pending"):
            return
        shot, over = d.get("shot"), bool(d.get("frame_over"))
        recall = shot is not None and shot == self._closed_by
        if recall and not over:  # the last call ended the frame; this one (an override) does not
            self.number -= 1
            self._frames[self.number] = replace(self._frames[self.number], winner=None)
            self._changed.add(self.number)
            self._closed_by = None
        elif over:
            if recall:
                self.number -= 1
            f = self._frames.get(self.number)
            if f is None:  # a frame ended before any shot (a concession at once)
                return
            self._frames[self.number] = replace(f, winner=d.get("winner"), t_end_s=max(f.t_end_s, float(d.get("t_s") or 0.0)))
            self._changed.add(self.number)
            self._closed_by = shot
            self.number += 1

    def changed(self) -> list[StoredFrame]:
        """The frames changed since the last call of this method."""
        out = [self._frames[n] for n in sorted(self._changed)]
        self._changed.clear()
        return out

    @property
    def count(self) -> int:
        return len(self._frames)

    def all(self) -> list[StoredFrame]:
        return [self._frames[n] for n in sorted(self._frames)]


def regroup(shots: Sequence[StoredShot], decisions: Sequence[StoredDecision]) -> tuple[list[StoredShot], list[StoredFrame]]:
    """Each shot's player and frame (rack) under a set of calls, and the frames."""
    book, placed = FrameBook(), {}
    by_number = {s.number: s for s in shots}
    for d in decisions:
        s = by_number.get(d.shot) if d.shot is not None else None
        if s is not None and s.number not in placed:
            placed[s.number] = replace(s, player=d.player, frame_number=book.shot(s.number, d.player, s.t_start_s, s.t_end_s))
        book.call(d.data)
    for s in shots:  # shots no call was made on (after an impossible moment of the log)
        if s.number not in placed:
            placed[s.number] = replace(s, player=None, frame_number=book.shot(s.number, None, s.t_start_s, s.t_end_s))
    return [placed[s.number] for s in shots], book.all()
