"""cueref.live.server: who may talk to the console. Bound to localhost it answers this machine only (its
own Host name) and refuses requests from another origin; bound elsewhere it needs --allow-remote and
then the token on every request; inputs are checked before they reach the referee."""

from __future__ import annotations

import asyncio
import http.client
import json

import aiohttp
import pytest

from cueref.errors import UserError
from cueref.live.server import LiveServer
from tests.live._live import standin_session, truth_source
from tests.pipeline._standins import load_clip


@pytest.fixture(scope="module")
def session():
    clip = load_clip("brasileira/wrong-pocket")
    source, _ = truth_source(clip)
    yield standin_session(clip, source)
    source.close()


@pytest.fixture()
def server(session):
    session.inputs.take()
    with LiveServer(session, "127.0.0.1", 0) as s:
        yield s


def request(port, method, path, body=None, headers=None, host=None):
    """One HTTP request with exactly the headers given (``Host`` defaults to the server's own)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{port}")
    data = json.dumps(body).encode() if body is not None else None
    for k, v in {**({"Content-Type": "application/json"} if data else {}), **(headers or {})}.items():
        conn.putheader(k, v)
    if data:
        conn.putheader("Content-Length", str(len(data)))
    conn.endheaders(data)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response, payload


def ws_open(port, headers=None, path="/ws"):
    """Open the WebSocket and read its first two messages (or the refusal's status)."""

    async def go():
        async with aiohttp.ClientSession() as http_session:
            try:
                async with http_session.ws_connect(f"http://127.0.0.1:{port}{path}", headers=headers or {}) as ws:
                    return [json.loads((await ws.receive(timeout=5)).data) for _ in range(2)]
            except aiohttp.WSServerHandshakeError as e:
                return e.status

    return asyncio.run(go())


def test_the_pages_are_served_with_a_strict_content_policy(server):
    for path, kind in [("/", "text/html"), ("/scoreboard", "text/html"), ("/static/console.js", "text/javascript"),
                       ("/static/live.css", "text/css")]:
        response, body = request(server.port, "GET", path)
        assert response.status == 200 and response.getheader("Content-Type").startswith(kind) and body
    response, _ = request(server.port, "GET", "/")
    assert "script-src 'self'" in response.getheader("Content-Security-Policy")
    assert "frame-ancestors 'none'" in response.getheader("Content-Security-Policy")
    for path in ["/static/..%2Fserver.py", "/static/nothing.js", "/static/.hidden"]:
        assert request(server.port, "GET", path)[0].status == 404


def test_the_websocket_sends_the_table_then_the_state(server):
    setup, state = ws_open(server.port, {"Origin": f"http://127.0.0.1:{server.port}"})
    assert setup["type"] == "setup" and setup["game"] == "brasileira" and len(setup["table"]["pockets"]) == 6
    assert state["type"] == "state" and state["score"]["sides"] == ["A", "B"] and state["pending"] is None


def test_a_request_from_another_origin_is_refused(server, session):
    nomination = {"kind": "nomination", "ball": "red", "pocket": "TR"}
    response, body = request(server.port, "POST", "/api/input", nomination, {"Origin": "http://evil.example"})
    assert response.status == 403 and "another origin" in json.loads(body)["error"]
    assert session.inputs.take() == []
    assert ws_open(server.port, {"Origin": "http://evil.example"}) == 403
    response, _ = request(server.port, "POST", "/api/input", nomination, {"Origin": f"http://127.0.0.1:{server.port}"})
    assert response.status == 202 and [e.kind for e in session.inputs.take()] == ["nomination"]


def test_a_request_for_another_host_name_is_refused(server):
    """A web page that rebinds its own name to 127.0.0.1 still sends its name as Host."""
    response, body = request(server.port, "GET", "/api/state", host=f"evil.example:{server.port}")
    assert response.status == 403 and "own address" in json.loads(body)["error"]
    assert request(server.port, "GET", "/api/state", host=f"localhost:{server.port}")[0].status == 200


def test_an_input_must_be_json(server):
    response, body = request(server.port, "POST", "/api/input", None, {"Content-Type": "text/plain", "Content-Length": "0"})
    assert response.status == 415


@pytest.mark.parametrize("given, message", [
    pytest.param({"kind": "bar_dropped"}, "'bar_dropped' is not an input of brasileira", id="another game's input"),
    pytest.param({"kind": "answer", "question": "q", "answer": "red"}, "no question is pending", id="answer, nothing asked"),
    pytest.param({"kind": "nomination", "ball": "purple", "pocket": "TR"}, "not an object ball on the table", id="unknown ball"),
    pytest.param({"kind": "nomination", "ball": "red", "pocket": "XX"}, "not a pocket of this table", id="unknown pocket"),
    pytest.param({"kind": "nomination", "ball": "red"}, "missing field 'pocket'", id="missing field"),
    pytest.param({"kind": "concession", "player": "Zed"}, "'Zed' is not playing", id="unknown player"),
])
def test_a_wrong_input_is_refused_with_the_reason(server, session, given, message):
    response, body = request(server.port, "POST", "/api/input", given)
    assert response.status == 400 and message in json.loads(body)["error"]
    assert session.inputs.take() == []


@pytest.mark.parametrize("given, message", [
    pytest.param({"reason": "  "}, "give the reason", id="no reason"),
    pytest.param({"reason": "a practice stroke"}, "no call to undo yet", id="nothing to undo"),
])
def test_an_undo_needs_a_reason_and_a_call(server, session, given, message):
    response, body = request(server.port, "POST", "/api/undo", given)
    assert response.status == 400 and message in json.loads(body)["error"]
    assert session.inputs.take() == []


def test_serving_off_this_machine_needs_allow_remote(session):
    with pytest.raises(UserError, match="--allow-remote"):
        LiveServer(session, "0.0.0.0", 0)


def test_off_localhost_every_request_needs_the_token(session):
    with LiveServer(session, "0.0.0.0", 0, allow_remote=True) as remote:
        port, token = remote.port, remote.token
        assert token and remote.url.endswith(f"?token={token}")
        for path in ["/", "/scoreboard", "/api/state", "/static/console.js"]:
            response, body = request(port, "GET", path)
            assert response.status == 401 and "token" in json.loads(body)["error"]
            assert request(port, "GET", f"{path}?token=wrong{token}")[0].status == 401
        assert ws_open(port) == 401
        assert request(port, "POST", "/api/input", {"kind": "concession", "player": "A"})[0].status == 401

        response, _ = request(port, "GET", f"/?token={token}")  # the printed address: the page sets a cookie
        assert response.status == 200
        cookie = response.getheader("Set-Cookie")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        jar = {"Cookie": cookie.split(";")[0]}
        assert request(port, "GET", "/api/state", headers=jar)[0].status == 200
        assert ws_open(port, jar)[0]["type"] == "setup"
        assert request(port, "GET", "/api/state", headers={"Authorization": f"Bearer {token}"})[0].status == 200
        response, _ = request(port, "POST", "/api/input", {"kind": "concession", "player": "A"},
                              {**jar, "Origin": "http://evil.example"})
        assert response.status == 403  # the token does not let another origin in
    session.inputs.take()
