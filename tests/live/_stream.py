"""A sample clip served as a live camera would serve it: an MPEG-TS stream over HTTP, paced in real time,
each client starting at the next keyframe from the live position, with a stall on request (the network
goes silent: the connection stays open, nothing arrives, and what the camera shot meanwhile is lost).

Used by the live tests and the latency bench to play the samples as live sources without a camera.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import av

__all__ = ["LiveStream"]


@dataclass(frozen=True)
class _Packet:
    t_s: float  # from the clip's first frame
    pts: int
    dts: int
    key: bool
    data: bytes


class _Sink(io.RawIOBase):
    """A write-only file for PyAV's muxer; the bytes are taken after each packet."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.buf += bytes(b)
        return len(b)


class LiveStream:
    """``video`` served at ``url`` (``http://127.0.0.1:PORT/live.ts``) from :meth:`start`: the frame at
    clip time ``t`` is sent at ``start + t``. :meth:`stall` silences the stream from clip time ``at_s``
    for ``for_s`` seconds: open connections get nothing meanwhile, new ones wait for the stream to come
    back, and every client resumes at the first keyframe after it."""

    def __init__(self, video: str | Path):
        with av.open(str(video)) as c:
            s = c.streams.video[0]
            self.time_base = Fraction(s.time_base)
            start = s.start_time or 0
            self._template = av.open(str(video))
            packets = [p for p in c.demux(s) if p.dts is not None and p.size]
            self.packets = [_Packet(float((p.pts - start) * self.time_base), p.pts, p.dts, p.is_keyframe, bytes(p))
                            for p in packets]
        self.packets.sort(key=lambda p: p.dts)
        self.duration_s = max(p.t_s for p in self.packets)
        self.stalls: list[tuple[float, float]] = []
        self.started: float | None = None
        self.connections = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/live.ts"
        self._thread = threading.Thread(target=self._server.serve_forever, name="live-stream", daemon=True)
        self._thread.start()

    def stall(self, at_s: float, for_s: float) -> None:
        self.stalls.append((at_s, at_s + for_s))

    def start(self) -> float:
        """Start the clock: returns the monotonic time of the clip's time 0."""
        self.started = time.monotonic()
        return self.started

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._template.close()

    def __enter__(self) -> "LiveStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- serving

    def _now_s(self) -> float:
        return -1.0 if self.started is None else time.monotonic() - self.started

    def _silent(self, t_s: float) -> bool:
        return any(a <= t_s < b for a, b in self.stalls)

    def _wait_until(self, t_s: float) -> None:
        while (delay := t_s - self._now_s()) > 0 or self.started is None:
            time.sleep(min(max(delay, 0.005), 0.05))

    def _handler(self):
        stream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                stream.connections += 1
                self.send_response(200)
                self.send_header("Content-Type", "video/mp2t")
                self.end_headers()
                try:
                    stream._serve(self.wfile)
                except (BrokenPipeError, ConnectionResetError, socket.timeout):
                    pass

        return Handler

    def _serve(self, wfile) -> None:
        sink = _Sink()
        out = av.open(sink, "w", format="mpegts")
        ost = out.add_stream_from_template(self._template.streams.video[0])
        now = self._now_s()
        i = next((k for k, p in enumerate(self.packets) if p.t_s >= now), len(self.packets))
        need_key = True
        try:
            for p in self.packets[i:]:
                self._wait_until(p.t_s)
                if self._silent(p.t_s):
                    need_key = True  # what the camera shot meanwhile is lost
                    continue
                if need_key and not p.key:
                    continue
                need_key = False
                pkt = av.Packet(p.data)
                pkt.pts, pkt.dts, pkt.time_base, pkt.stream = p.pts, p.dts, self.time_base, ost
                if p.key:
                    pkt.is_keyframe = True
                out.mux(pkt)
                if sink.buf:
                    wfile.write(bytes(sink.buf))
                    wfile.flush()
                    sink.buf.clear()
            out.close()
            if sink.buf:
                wfile.write(bytes(sink.buf))
        finally:
            try:
                out.close()
            except Exception:
                pass
