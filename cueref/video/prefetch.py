"""Decoding in its own thread: :func:`prefetch` iterates a frame source in a background thread and
hands the frames over through a bounded queue, so that decoding the next frames overlaps the work on
this one while memory stays bounded (``maxsize`` frames at most wait in the queue)."""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

__all__ = ["prefetch"]

T = TypeVar("T")

_END = object()
_POLL_S = 0.1  # how often a producer blocked on a full queue checks whether the consumer has gone


class _Failed:
    """The producer's exception, carried to the consumer and raised there."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def prefetch(items: Iterable[T], maxsize: int = 8, name: str = "cueref-decode") -> Iterator[T]:
    """Yield ``items`` in order while a background thread produces the next ones.

    An exception raised by the source (a damaged file, say) is raised here after the items before it.
    Closing the generator (or leaving a ``with contextlib.closing(...)`` block) stops the thread and
    waits for it, so the source can be closed safely afterwards.
    """
    if maxsize < 1:
        raise ValueError(f"prefetch needs a queue of at least one item, got maxsize={maxsize}")
    q: queue.Queue = queue.Queue(maxsize)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, which raises it
            put(_Failed(e))
            return
        put(_END)

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()
