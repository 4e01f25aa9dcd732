"""Operator calls recorded apart from the camera's log (a calls file: the nominations of a Sinuca
Brasileira match, a concession, answers to the referee's questions), in the event-log format, and
their place among the camera's events: by time, a call before the camera's events of the same time
(a nomination precedes its shot)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from cueref.errors import UserError
from tracking.events import Event, OperatorInput, read_events

__all__ = ["read_calls", "merge_by_time", "merge_key"]


def read_calls(paths: Sequence[Path]) -> list[list[OperatorInput]]:
    """Each calls file's operator inputs; a camera event in a calls file is refused (the camera's log
    is the main argument, not a ``--calls`` file)."""
    out = []
    for path in paths:
        _, events = read_events(path)
        camera = [e for e in events if not isinstance(e, OperatorInput)]
        if camera:
            raise UserError(
                f"{path}: a calls file holds operator inputs only, but this one has {len(camera)} camera event(s) "
                f"(the first: {camera[0].kind} at {camera[0].t_s:g} s): give the camera's log as the main argument")
        out.append(events)
    return out


def merge_key(event: Event, stream: int, n: int) -> tuple[float, int, int, int]:
    """The order of the merged log: time, then operator inputs before camera events, then the stream
    (camera first, calls files in order), then the event's place in its stream."""
    return (event.t_s, 0 if isinstance(event, OperatorInput) else 1, stream, n)


def merge_by_time(camera: Sequence[Event], calls: Iterable[Sequence[Event]]) -> list[Event]:
    """Merge logs by time; at equal times operator inputs come first (a nomination precedes its shot),
    and otherwise each log keeps its own order."""
    keyed = [(merge_key(e, i, n), e) for i, stream in enumerate([camera, *calls]) for n, e in enumerate(stream)]
    return [e for _, e in sorted(keyed, key=lambda item: item[0])]
