"""The operator's console and the scoreboard, served to a browser with aiohttp (HTTP and a WebSocket).

Pages (plain HTML, CSS and JavaScript from ``cueref/live/static/``, no build step):

``/``                 the operator's console: the table, the call, questions, inputs, undo
``/scoreboard``       the scoreboard (``?transparent=1`` for streaming software)
``/ws``               a WebSocket: the match's fixed picture once (``setup``), then the live ``state``
``/api/state``        the same as JSON (``setup`` and ``state``)
``/api/input``        POST an operator input (JSON in the event-log format, without ``t_s``)
``/api/undo``         POST ``{"reason": ...}``: take the referee's last call back

Who may connect:

* bound to **localhost** (the default), only this machine: the ``Host`` header must name the loopback
  address and port, which keeps out a web page that rebinds its own name to 127.0.0.1;
* bound **elsewhere** only with ``allow_remote``, and then every request carries the **token** printed at
  start (``?token=`` on the first page, then a cookie; or an ``Authorization: Bearer`` header);
* always: a request whose ``Origin`` is not this server (another web page's script) is refused, and a
  POST must be JSON (a plain HTML form from elsewhere cannot send that).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import secrets
import threading
from importlib import resources
from typing import Any

from aiohttp import WSMsgType, web

from cueref.errors import UserError
from cueref.live.session import InputError, LiveSession

__all__ = ["LiveServer", "is_loopback", "check_host"]

log = logging.getLogger(__name__)

COOKIE = "cueref_token"
PAGES = {"/": "console.html", "/scoreboard": "scoreboard.html"}
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml"}
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """Refuse to serve the console off this machine unless asked to."""
    if not is_loopback(host) and not allow_remote:
        raise UserError(f"--host {host} would serve the console to the network, where anyone could give the referee "
                        "inputs: add --allow-remote to mean it (every request then needs the token printed at start), "
                        "or leave --host out to serve this machine only")


def _static(name: str) -> bytes | None:
    """A file of the package's static folder (names only: no folders, nothing outside it)."""
    if "/" in name or "\\" in name or name.startswith("."):
        return None
    path = resources.files("cueref.live").joinpath("static", name)
    return path.read_bytes() if path.is_file() else None


class LiveServer:
    """Serves ``session``'s console and scoreboard on ``host:port`` (port 0: any free one) from its own
    thread and event loop: :meth:`start` returns once it listens; :meth:`stop` closes it.

    Raises :class:`~cueref.errors.UserError` for a host off this machine without ``allow_remote``."""

    def __init__(self, session: LiveSession, host: str = "127.0.0.1", port: int = 8765, *, allow_remote: bool = False,
                 token: str | None = None):
        check_host(host, allow_remote)
        self.session, self.host, self.port = session, host, port
        self.remote = not is_loopback(host)
        self.token = (token or secrets.token_urlsafe(18)) if self.remote else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._clients: set[asyncio.Event] = set()
        self._setup_text = json.dumps({"type": "setup", **session.board.setup})
        session.listeners.append(self.notify)

    # -- addresses

    @property
    def url(self) -> str:
        """The console's address, with the token when one is needed."""
        return self.url_of("/")

    def url_of(self, page: str) -> str:
        """The address of one of the pages (``/``, ``/scoreboard``), with the token when one is needed."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}{page}" + (f"?token={self.token}" if self.token else "")

    def _allowed_host(self, host: str | None) -> bool:
        if host is None:
            return False
        if self.remote:  # the token keeps strangers out; any name of this machine will do
            return True
        name, _, port = host.rpartition(":")
        return port == str(self.port) and is_loopback(name.strip("[]"))

    # -- the app

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/", self._page)
        app.router.add_get("/scoreboard", self._page)
        app.router.add_get("/static/{name}", self._asset)
        app.router.add_get("/ws", self._socket)
        app.router.add_get("/api/state", self._state)
        app.router.add_post("/api/input", self._input)
        app.router.add_post("/api/undo", self._undo)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        host = request.headers.get("Host")
        if not self._allowed_host(host):
            return _refuse(403, f"this console answers to its own address only, not to Host {host!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{host}":
            return _refuse(403, f"requests from another origin ({origin}) are refused: open the console at {self.url}")
        given = None
        if self.token is not None:
            given = request.query.get("token") or request.cookies.get(COOKIE) or _bearer(request)
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                return _refuse(401, "this console needs its token: open the address cueref live printed at start "
                                    "(it ends with ?token=...)")
        if request.method == "POST" and request.content_type != "application/json":
            return _refuse(415, "send the input as JSON (Content-Type: application/json)")
        response = await handler(request)
        if self.token is not None and request.query.get("token") and request.path in PAGES:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    async def _page(self, request: web.Request) -> web.Response:
        response = web.Response(body=_static(PAGES[request.path]), content_type="text/html", charset="utf-8")
        return _headers(response, frame_ok=request.path == "/scoreboard")

    async def _asset(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = _static(name)
        kind = next((t for ext, t in STATIC_TYPES.items() if name.endswith(ext)), None)
        if body is None or kind is None:
            raise web.HTTPNotFound(text=f"no file {name!r} here")
        return _headers(web.Response(body=body, content_type=kind))

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response({"setup": self.session.board.setup, "state": self.session.board.snapshot()})

    async def _input(self, request: web.Request) -> web.Response:
        return await self._queue(request, lambda data: self.session.submit(data).kind)

    async def _undo(self, request: web.Request) -> web.Response:
        return await self._queue(request, lambda data: self.session.undo(data.get("reason")) or "undo")

    async def _queue(self, request: web.Request, give: Any) -> web.Response:
        """One operator input from a JSON object: queued (202) or refused (400)."""
        try:
            data = await request.json()
        except ValueError:
            return _refuse(400, "the body is not valid JSON")
        if not isinstance(data, dict):
            return _refuse(400, "send one input as a JSON object")
        try:
            kind = give(data)
        except InputError as e:
            return _refuse(400, str(e))
        return web.json_response({"queued": kind}, status=202)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20.0)
        await ws.prepare(request)
        wake = asyncio.Event()
        self._clients.add(wake)
        sender = asyncio.create_task(self._send(ws, wake))
        try:
            async for msg in ws:  # the console speaks through /api/input; anything else ends the socket
                if msg.type == WSMsgType.ERROR:
                    break
        finally:
            self._clients.discard(wake)
            sender.cancel()
        return ws

    async def _send(self, ws: web.WebSocketResponse, wake: asyncio.Event) -> None:
        """The fixed picture, then the newest state each time it changes (a slow viewer skips states,
        never falls behind)."""
        try:
            await ws.send_str(self._setup_text)
            while not ws.closed:
                await ws.send_str(json.dumps(self.session.board.snapshot()))
                await wake.wait()
                wake.clear()
        except (ConnectionResetError, RuntimeError):
            pass

    def notify(self) -> None:
        """The board changed (called from the refereeing thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for wake in self._clients:
            wake.set()

    # -- running in a thread

    def start(self) -> "LiveServer":
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                self._runner = web.AppRunner(self.app(), access_log=None)
                loop.run_until_complete(self._runner.setup())
                site = web.TCPSite(self._runner, self.host, self.port)
                loop.run_until_complete(site.start())
                self.port = self._runner.addresses[0][1]
            except BaseException as e:  # noqa: BLE001 - handed to start(), which raises it
                failure.append(e)
                ready.set()
                loop.close()
                return
            self._loop = loop
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name="cueref-live-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            e = failure[0]
            if isinstance(e, OSError):
                raise UserError(f"cannot serve the console on {self.host}:{self.port}: {e.strerror or e}; "
                                "give another --port (0: any free one)") from None
            raise e
        log.debug("console at %s", self.url)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5.0)
            self._loop = None

    def __enter__(self) -> "LiveServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth[7:] if auth.startswith("Bearer ") else None


def _refuse(status: int, reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=status)


def _headers(response: web.Response, frame_ok: bool = False) -> web.Response:
    response.headers["Content-Security-Policy"] = CSP + ("" if frame_ok else "; frame-ancestors 'none'")
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response
