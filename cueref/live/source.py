"""A live frame source: a camera, a stream URL, or a file played at real speed, read in its own thread
and handed to the referee as a camera would hand it: the newest frames, never a growing backlog.

::

    with LiveSource("rtsp://cam.local/stream") as source:     # or 0 (a camera), or a file
        first = source.first                                   # read at open: calibrate from it
        for item in source:                                    # Frame(index, t_s, image) or SourceGap
            ...

What a live source survives, and how the referee hears of it:

* **a stalled stream** (no frame for ``stall_s``): the connection is given up and the source reopened
  (again every ``retry_s`` while it cannot be); a stream or camera that ends or fails is reopened the
  same way. A file that ends is the end.
* **a gap** (two frames further apart than ``max_gap_s``: a stall, frames the source lost, or frames
  dropped because the referee fell behind): a :class:`~cueref.pipeline.SourceGap` is yielded between
  the two frames; the pipeline logs it as an ``unobserved`` span and infers nothing across it.

The session's clock: the first connection keeps the source's own frame times (a file's timestamps, so
a file played live is timed exactly as when refereed offline). A later connection's clock starts where
the wall clock says: its first frame comes the time the source was silent after the last frame, and the
connection's own timestamps run on from there. Frame indices continue the same way.
"""

from __future__ import annotations

import itertools
import logging
import queue
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from cueref.pipeline import SourceGap
from cueref.video import Frame, VideoError, VideoReader
from cueref.video.frame import VideoInfo

__all__ = ["SourceConfig", "LiveSource", "source_kind"]

log = logging.getLogger(__name__)

_POLL_S = 0.05  # how often the reading side checks for a stall or a close


@dataclass(frozen=True, slots=True)
class SourceConfig:
    stall_s: float = 2.0  # a camera or stream silent this long has stalled: reopen it (longer: fewer false alarms)
    max_gap_s: float = 0.2  # frames further apart are a gap, logged unobserved (a few lost frames the tracker bridges)
    queue_frames: int = 4  # frames waiting for the referee; when full, a live source drops the oldest
    retry_s: float = 1.0  # wait between attempts to reopen a source that cannot be opened
    timeout_s: float = 10.0  # network timeout for a stream URL (open and read)


def source_kind(source: str | int) -> str:
    """``camera`` (an index: 0, 1 ...), ``url`` (anything with ``://``) or ``file``."""
    text = str(source).strip()
    if text.isdigit():
        return "camera"
    return "url" if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*://", text) else "file"


@dataclass(frozen=True, slots=True)
class _Item:
    connection: int
    frame: Frame | None  # None: the file ended
    arrival_s: float  # monotonic time it was read
    error: BaseException | None = None


class LiveSource:
    """Frames from ``source`` (a camera index, a stream URL or a file), read in a thread (see the module
    docstring). ``realtime`` plays a file at the speed of its timestamps, as a camera would deliver it;
    without it a file is read as fast as the referee takes it, and nothing is dropped.

    ``opener`` (tests) makes a reader: an object with ``read() -> Frame | None``, ``close()`` and ``info``.

    Raises (at construction, before anything else starts):
        VideoNotFoundError, VideoOpenError: the source cannot be opened, or holds no frame.
    """

    def __init__(self, source: str | int, *, realtime: bool = False, config: SourceConfig = SourceConfig(),
                 opener: Callable[[], object] | None = None):
        self.source, self.kind, self.config = source, source_kind(source), config
        self.realtime = realtime or self.kind != "file"  # a camera or a stream is live whatever the flag
        self._opener = opener or (lambda: VideoReader(source, timeout_s=config.timeout_s))
        self._reader = self._opener()
        self.info: VideoInfo = self._reader.info
        first = self._reader.read()
        if first is None:
            self._reader.close()
            raise VideoError(f"{source}: the source holds no frame")
        self.first: Frame = first
        self._anchor_s = time.monotonic()
        self._queue: queue.Queue[_Item] = queue.Queue(max(1, config.queue_frames))
        self._stop = threading.Event()
        self._generation = 0  # bumped to give up a stalled connection: its thread stops delivering
        self._connections = itertools.count(1)
        self._connecting = False
        self._threads: list[threading.Thread] = []
        self._started = False
        self.reopens = self.stalls = self.dropped = self.gaps = 0

    # -- reading, in a thread per connection attempt

    def _start(self, reader: object | None) -> None:
        self._generation += 1
        thread = threading.Thread(target=self._read, args=(self._generation, reader), name="cueref-live-source", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _live(self, generation: int) -> bool:
        return not self._stop.is_set() and generation == self._generation

    def _read(self, generation: int, reader: object | None) -> None:
        connection = 0
        try:
            while self._live(generation):
                if reader is None:
                    reader = self._reopen(generation)
                    if reader is None:
                        continue
                    connection = next(self._connections)
                try:
                    frame = reader.read()
                except (VideoError, OSError) as e:
                    if self.kind == "file":
                        raise
                    log.warning("%s failed (%s): reopening", self.source, e)
                    frame = None
                if frame is None:
                    if self.kind == "file":
                        self._put(_Item(connection, None, time.monotonic()), generation)
                        return
                    log.warning("%s ended: reopening", self.source)
                    reader.close()
                    reader = None
                    continue
                if self.kind == "file" and self.realtime:  # played at the speed of its timestamps
                    if (wait_s := self._anchor_s + frame.t_s - self.first.t_s - time.monotonic()) > 0:
                        self._stop.wait(wait_s)
                self._put(_Item(connection, frame, time.monotonic()), generation)
        except BaseException as e:  # noqa: BLE001 - a file's damage (or a bug) is raised by the reading side
            self._put(_Item(connection, None, time.monotonic(), e), generation)
        finally:
            if reader is not None:
                reader.close()

    def _reopen(self, generation: int) -> object | None:
        self._connecting = True
        try:
            reader = self._opener()
        except VideoError as e:
            log.warning("cannot reopen %s (%s): trying again in %g s", self.source, e, self.config.retry_s)
            self._stop.wait(self.config.retry_s)
            return None
        finally:
            self._connecting = False
        if not self._live(generation):
            reader.close()
            return None
        self.reopens += 1
        return reader

    def _put(self, item: _Item, generation: int) -> None:
        """A live source keeps the newest frames (dropping the oldest waiting); a file played as fast as
        the referee takes it waits for room."""
        while self._live(generation):
            try:
                if self.realtime:
                    self._queue.put_nowait(item)
                else:
                    self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                pass
            if self.realtime:
                try:
                    self._queue.get_nowait()
                    self.dropped += 1
                except queue.Empty:
                    pass

    # -- what the referee gets

    def __iter__(self) -> Iterator[Frame | SourceGap]:
        if self._started:
            raise RuntimeError("a LiveSource is read once")
        self._started = True
        reader, self._reader = self._reader, None
        self._anchor_s = time.monotonic()  # a file played live: its first frame is now
        self._start(reader)
        yield self.first
        last_t, last_index, last_arrival = self.first.t_s, self.first.index, self._anchor_s
        connection, t_offset, i_offset = 0, 0.0, 0
        dropped = 0
        silent_since = time.monotonic()
        while not self._stop.is_set():
            try:
                item = self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                if self.kind == "file" or self._connecting:  # a file is slow, never stalled; an opening has its timeout
                    silent_since = time.monotonic()
                elif time.monotonic() - silent_since >= self.config.stall_s:
                    self.stalls += 1
                    log.warning("no frame from %s for %g s: the stream stalled; reopening", self.source, self.config.stall_s)
                    self._start(None)
                    silent_since = time.monotonic()
                continue
            silent_since = time.monotonic()
            if item.error is not None:
                raise item.error
            if item.frame is None:
                return
            f = item.frame
            reason = None
            if item.connection != connection or f.t_s + t_offset <= last_t:  # a new connection (or clock): anchor it
                reason = ("the source stalled or failed and was reopened" if item.connection != connection
                          else "the source's clock went back")
                connection = item.connection
                t_offset = last_t + max(item.arrival_s - last_arrival, 0.0) - f.t_s
                i_offset = last_index + 1 - f.index
            t_s, index = f.t_s + t_offset, f.index + i_offset
            if self.dropped > dropped:
                reason = reason or f"{self.dropped - dropped} frame(s) dropped: the referee fell behind the source"
                dropped = self.dropped
            if t_s - last_t > self.config.max_gap_s:
                self.gaps += 1
                yield SourceGap(last_t, t_s, f"no frame from the source for {t_s - last_t:.2f} s: "
                                             f"{reason or 'frames missing from the source'}")
            last_t, last_index, last_arrival = t_s, index, item.arrival_s
            yield f if (t_offset, i_offset) == (0.0, 0) else Frame(index, t_s, f.image)

    def close(self) -> None:
        """Stop reading and release the source (a thread blocked in a network read closes its
        connection when the read times out)."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=1.0)
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> "LiveSource":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
