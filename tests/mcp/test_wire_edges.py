"""``/mcp`` on the wire at its edges: text no UTF-8 carries, requests racing their
session's end, the session cap, duplicate ids, and calls the service must stop.

Raw HTTP to a real service, as in test_wire.py. Two races cannot be timed over a
socket (a message and a disconnect in one wakeup, the server dropping a request); those
drive the real endpoint through an ASGI channel of the test's own, and say so.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from browserdeck.mcpserver import http as mcp_http
from browserdeck.mcpserver import protocol
from browserdeck.mcpserver import server as server_module
from browserdeck.mcpserver.server import McpApp
from tests.mcp.test_wire import (
    META,
    events,
    mcp_service,
    modern_headers,
    open_session,
    rpc,
)

# A script puts lone surrogates into the page's text and title: valid in JavaScript's
# UTF-16 strings, impossible in UTF-8.
SURROGATE_PAGE = (
    "data:text/html,<p id=x>p</p><script>x.textContent='a\\uD800b';"
    "document.title='t\\uDC00'</script>"
)
JSON_TYPE = {"Content-Type": "application/json"}


def endpoint_of(service: Any) -> mcp_http.McpHttpEndpoint:
    endpoint = mcp_http.endpoint_of(service.api.app)
    assert endpoint is not None
    return endpoint


async def until(predicate: Any, what: str) -> None:
    """Poll a cheap in-process condition the endpoint has no event for."""
    deadline = asyncio.get_running_loop().time() + 10
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def tool_text(answer: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in answer["result"]["content"] if c["type"] == "text")


async def test_page_text_no_utf8_carries_reaches_every_client_as_u_fffd(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (_, client):
        sid = await open_session(client)
        session = {"Mcp-Session-Id": sid}
        navigate = rpc("tools/call", 2, name="browser_navigate", arguments={"url": SURROGATE_PAGE})
        # Before: the event stream closed without an answer (the client waited its timeout).
        resp = await asyncio.wait_for(client.post("/mcp", json=navigate, headers=session), 30)
        assert resp.status_code == 200
        assert 'page: "t\ufffd"' in tool_text(events(resp.text)[0])
        snapshot = rpc("tools/call", 3, name="browser_snapshot", arguments={})
        resp = await client.post("/mcp", json=snapshot, headers=session)
        assert "a\ufffdb" in tool_text(events(resp.text)[0])

        # The modern era (before: a plain 500 with a traceback).
        called = rpc("tools/call", 4, name="browser_navigate", arguments={"url": SURROGATE_PAGE})
        called["params"]["_meta"] = META
        resp = await client.post(
            "/mcp", json=called, headers=modern_headers("tools/call", "browser_navigate")
        )
        assert resp.status_code == 200 and 'page: "t\ufffd"' in tool_text(resp.json())

        # The REST API (and the CLI, which reads it) answers the same page.
        tabs = (await client.get("/tabs")).json()["tabs"]
        target = next(t["targetId"] for t in tabs if t["url"].startswith("data:"))
        resp = await client.get("/snapshot", params={"targetId": target})
        assert resp.status_code == 200, resp.text
        assert resp.json()["title"] == "t\ufffd"
        assert "a\ufffdb" in resp.json()["snapshot"]

        # An error quoting page text (before: a bare 500 from the encode in the handler),
        # and a result whose key is page text.
        thrown = "() => { throw new Error('a' + String.fromCharCode(0xD800)) }"
        resp = await client.post(
            "/act", json={"kind": "evaluate", "fn": thrown, "targetId": target}
        )
        assert 400 <= resp.status_code < 500, resp.text
        assert "a\ufffd" in resp.json()["error"]["message"]
        keyed = "() => ({[x.textContent]: 1})"
        resp = await client.post("/act", json={"kind": "evaluate", "fn": keyed, "targetId": target})
        assert resp.status_code == 200, resp.text
        assert resp.json()["result"] == {"a\ufffdb": 1}


async def test_a_request_echoing_text_no_utf8_carries_is_answered(bd_home: Path) -> None:
    """What reaches the wire without passing the front door (a request's own text in an
    error) is encoded the same way: one encoder for every answer."""
    async with mcp_service(bd_home) as (_, client):
        sid = await open_session(client)
        # JSON's escape is a lone surrogate once parsed; the answer names the method.
        body = b'{"jsonrpc":"2.0","id":5,"method":"x\\ud800"}'
        resp = await asyncio.wait_for(
            client.post("/mcp", content=body, headers={"Mcp-Session-Id": sid, **JSON_TYPE}), 10
        )
        assert events(resp.text)[0]["error"]["data"] == "x\ufffd"
        # A long name is echoed cut, not whole.
        long = rpc("x" * 100_000, 7)
        resp = await client.post("/mcp", json=long, headers={"Mcp-Session-Id": sid})
        assert events(resp.text)[0]["error"]["data"] == "x" * protocol.SHOWN_METHOD + "…"

        called = rpc("tools/call", 6, name="browser_navigate", arguments={"url": "http://x/"})
        called["params"]["_meta"] = META
        raw = json.dumps(called).replace("http://x/", "http://x\\ud800/").encode()
        resp = await client.post(
            "/mcp",
            content=raw,
            headers={**modern_headers("tools/call", "browser_navigate"), **JSON_TYPE},
        )
        assert resp.status_code == 200, resp.text
        assert "http://x\ufffd/" in tool_text(resp.json())


async def test_a_post_whose_body_comes_after_its_session_ended_is_not_run(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        release = asyncio.Event()

        head = b'{"jsonrpc":"2.0","id":8,'
        tail = b'"method":"tools/call","params":{"name":"browser_tabs","arguments":{}}}'

        async def slow_body() -> AsyncIterator[bytes]:
            yield head
            await release.wait()
            yield tail

        # A declared length: the API's guard hands such a body on unread (a chunked one
        # it reads whole before the endpoint sees the request).
        length = {"Content-Length": str(len(head + tail))}
        post = asyncio.ensure_future(
            client.post(
                "/mcp", content=slow_body(), headers={"Mcp-Session-Id": sid, **JSON_TYPE, **length}
            )
        )
        # Its headers arrived: the session is held while the body is awaited.
        await until(lambda: endpoint.sessions[sid].busy, "the POST to hold its session")
        assert (await client.delete("/mcp", headers={"Mcp-Session-Id": sid})).status_code == 200
        release.set()
        resp = await asyncio.wait_for(post, 10)
        assert resp.status_code == 404 and resp.json()["error"]["message"] == "Session not found"
        # Nothing ran for it: its agent session stays ended.
        assert endpoint.tools().sessions.get(sid) is None


async def test_a_session_lives_while_in_use_whatever_happened_during_its_initialize(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request of a new session that ends while its initialize still runs leaves no
    timer behind to end the session later, in use or not."""
    monkeypatch.setattr(mcp_http, "SESSION_TTL", 0.3)
    # initialize answers at once; holding it open needs a seam in its answer.
    initializing = asyncio.Event()
    answer = protocol.answer

    async def slow_initialize(tools: Any, method: str, *args: Any) -> dict[str, Any]:
        if method == "initialize":
            await initializing.wait()
        return await answer(tools, method, *args)

    monkeypatch.setattr(protocol, "answer", slow_initialize)
    async with mcp_service(bd_home) as (service, client):
        init = rpc(
            "initialize",
            1,
            protocolVersion="2025-11-25",
            capabilities={},
            clientInfo={"name": "x", "version": "0"},
        )
        async with client.stream("POST", "/mcp", json=init) as opening:
            sid = opening.headers["mcp-session-id"]
            ping = await client.post("/mcp", json=rpc("ping"), headers={"Mcp-Session-Id": sid})
            assert ping.status_code == 200
            initializing.set()
            await opening.aread()
        async with client.stream("GET", "/mcp", headers={"Mcp-Session-Id": sid}) as stream:
            assert stream.status_code == 200
            await asyncio.sleep(0.6)  # twice the TTL, with the session's stream open
            assert sid in endpoint_of(service).sessions
            ping = await client.post("/mcp", json=rpc("ping"), headers={"Mcp-Session-Id": sid})
            assert ping.status_code == 200


async def test_sessions_past_the_cap_are_refused_in_plain_words(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_http, "MAX_SESSIONS", 2)
    async with mcp_service(bd_home) as (_, client):
        first = await open_session(client)
        await open_session(client)
        init = rpc(
            "initialize",
            1,
            protocolVersion="2025-11-25",
            capabilities={},
            clientInfo={"name": "x", "version": "0"},
        )
        resp = await client.post("/mcp", json=init)
        assert resp.status_code == 503
        message = resp.json()["error"]["message"]
        assert "Too many open sessions" in message and "at most 2" in message
        assert "DELETE /mcp" in message
        # Ending one makes room.
        await client.delete("/mcp", headers={"Mcp-Session-Id": first})
        assert (await client.post("/mcp", json=init)).status_code == 200


async def start_long_modern_call(client: Any, endpoint: mcp_http.McpHttpEndpoint) -> Any:
    # The browser up first: its start is not what the tests wait for.
    tabs = rpc("tools/call", 8, name="browser_tabs", arguments={"action": "list"}, _meta=META)
    resp = await client.post(
        "/mcp", json=tabs, headers=modern_headers("tools/call", "browser_tabs")
    )
    assert resp.status_code == 200, resp.text
    wait = rpc("tools/call", 9, name="browser_wait_for", arguments={"time": 30}, _meta=META)
    post = asyncio.ensure_future(
        client.post("/mcp", json=wait, headers=modern_headers("tools/call", "browser_wait_for"))
    )
    await until(lambda: endpoint._modern_calls, "the modern call to start")
    return post


async def test_stop_all_agents_ends_modern_era_calls(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        post = await start_long_modern_call(client, endpoint)
        await endpoint.end_all_sessions()
        resp = await asyncio.wait_for(post, 10)  # not after the 30 s wait
        error = resp.json()["error"]
        assert error["code"] == protocol.REQUEST_CANCELLED and "Stop all agents" in error["message"]


async def test_stopping_the_service_ends_modern_era_calls(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        post = await start_long_modern_call(client, endpoint)
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(service.stop(), 20)
        resp = await asyncio.wait_for(post, 10)
        assert resp.json()["error"]["code"] == protocol.REQUEST_CANCELLED
        # The stop did not wait the call out (nor uvicorn's graceful timeout for it).
        assert asyncio.get_running_loop().time() - started < 10


async def test_cancelling_with_a_malformed_request_id_is_ignored(
    bd_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with mcp_service(bd_home) as (_, client):
        sid = await open_session(client)
        session = {"Mcp-Session-Id": sid}
        for bad in ([1], {"id": 1}):
            cancelled = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": bad},
            }
            resp = await client.post("/mcp", json=cancelled, headers=session)
            assert resp.status_code == 202
        ping = await client.post("/mcp", json=rpc("ping"), headers=session)
        assert events(ping.text)[0]["result"] == {}
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


async def test_a_request_id_still_in_flight_is_refused(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        sid = await open_session(client)
        session = {"Mcp-Session-Id": sid}
        # Long enough to be running whatever the machine's load; cancelled at the end.
        wait = rpc("tools/call", 9, name="browser_wait_for", arguments={"time": 30})
        first = asyncio.ensure_future(client.post("/mcp", json=wait, headers=session))
        await until(lambda: 9 in endpoint_of(service).sessions[sid].calls, "the first call")
        again = await client.post("/mcp", json=rpc("ping", 9), headers=session)
        assert again.status_code == 400
        refused = again.json()
        assert refused["id"] == 9 and refused["error"]["code"] == -32600
        assert "already taken" in refused["error"]["message"]
        # A refused initialize changes nothing either (before: its params were adopted).
        init = rpc(
            "initialize",
            9,
            protocolVersion="2025-03-26",
            capabilities={"roots": {}},
            clientInfo={"name": "renamed", "version": "2"},
        )
        assert (await client.post("/mcp", json=init, headers=session)).status_code == 400
        held = endpoint_of(service).sessions[sid]
        assert held.client_name != "renamed" and held.version != "2025-03-26"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
        assert (await client.post("/mcp", json=cancel, headers=session)).status_code == 202
        answer = events((await asyncio.wait_for(first, 10)).text)[0]
        assert answer["id"] == 9 and answer["error"]["code"] == protocol.REQUEST_CANCELLED


async def test_an_internal_failure_is_answered_in_plain_words_and_logged(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(self: McpApp, exchange: Any) -> list[dict[str, Any]]:
        raise RuntimeError("secret internals /home/someone/.cache")

    # No tool fails this way on purpose; the seam stands in for a bug of ours.
    monkeypatch.setattr(McpApp, "list_tools", broken)
    async with mcp_service(bd_home) as (_, client):
        sid = await open_session(client)
        resp = await client.post("/mcp", json=rpc("tools/list"), headers={"Mcp-Session-Id": sid})
        error = events(resp.text)[0]["error"]
        assert error["code"] == protocol.INTERNAL_ERROR
        assert "secret" not in error["message"] and "RuntimeError" not in error["message"]
        assert "browserdeck bug" in error["message"] and "log" in error["message"]
    logged = [r for r in caplog.records if r.exc_info and "secret internals" in str(r.exc_info[1])]
    assert logged


async def test_initialize_again_updates_the_session(bd_home: Path) -> None:
    """As the SDK's server does: the second initialize's version and client become the
    session's, so its answer and what the session runs by agree."""
    async with mcp_service(bd_home) as (service, client):
        sid = await open_session(client, "2025-11-25")
        again = rpc(
            "initialize",
            2,
            protocolVersion="2025-03-26",
            capabilities={"roots": {}},
            clientInfo={"name": "renamed", "version": "2"},
        )
        resp = await client.post("/mcp", json=again, headers={"Mcp-Session-Id": sid})
        assert events(resp.text)[0]["result"]["protocolVersion"] == "2025-03-26"
        session = endpoint_of(service).sessions[sid]
        assert session.version == "2025-03-26"
        assert session.client_name == "renamed" and session.capabilities == {"roots": {}}


class Channel:
    """An ASGI channel of the test's own for races a socket cannot time: what the
    endpoint receives is scripted, what it sends is kept."""

    def __init__(self, scope: dict[str, Any], incoming: list[dict[str, Any]]) -> None:
        self.scope = scope
        self.incoming = incoming
        self.sent: list[dict[str, Any]] = []
        self.on_start: Any = None
        self.hold = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.incoming:
            return self.incoming.pop(0)
        await self.hold.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.start" and self.on_start is not None:
            self.on_start()


def scope(method: str, sid: str) -> dict[str, Any]:
    headers = [
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
        (b"mcp-session-id", sid.encode()),
    ]
    return {"type": "http", "method": method, "path": "/mcp", "headers": headers}


async def test_a_question_taken_as_its_stream_closes_goes_to_the_next_stream(
    bd_home: Path,
) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        session = endpoint.sessions[sid]
        # The disconnect is there at once, and the question is queued as the stream
        # starts: both are ready in the stream's first wakeup.
        channel = Channel(scope("GET", sid), [{"type": "http.disconnect"}])
        question = {"jsonrpc": "2.0", "id": 99, "method": "roots/list"}
        session.questions[99] = asyncio.get_running_loop().create_future()  # its asker waits
        channel.on_start = lambda: session.outbox.put_nowait(question)  # type: ignore[union-attr]
        await asyncio.wait_for(endpoint(channel.scope, channel.receive, channel.send), 5)
        async with client.stream("GET", "/mcp", headers={"Mcp-Session-Id": sid}) as stream:
            lines = stream.aiter_lines()
            data = await asyncio.wait_for(
                anext(line async for line in lines if line.startswith("data: ")), 5
            )
            assert json.loads(data[6:]) == question


async def test_a_dropped_request_stops_its_call(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        session = endpoint.sessions[sid]
        wait = rpc("tools/call", 11, name="browser_wait_for", arguments={"time": 8})
        body = {"type": "http.request", "body": json.dumps(wait).encode()}
        channel = Channel(scope("POST", sid), [body])
        # uvicorn cancels a request's task at its shutdown; the call must not run on.
        request = asyncio.ensure_future(endpoint(channel.scope, channel.receive, channel.send))
        await until(lambda: 11 in session.calls, "the call to start")
        call = session.calls[11]
        request.cancel()
        await asyncio.wait([request], timeout=5)
        await asyncio.wait([call], timeout=2)
        assert call.cancelled()
        channel.hold.set()


async def test_a_call_whose_stream_dropped_can_still_be_stopped(bd_home: Path) -> None:
    """The client went away mid-call: the call runs on (as the SDK's did), and ending its
    session still ends it (before: it was forgotten with its stream, and ran its course)."""
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        session = endpoint.sessions[sid]
        wait = rpc("tools/call", 12, name="browser_wait_for", arguments={"time": 30})
        body = {"type": "http.request", "body": json.dumps(wait).encode()}
        channel = Channel(scope("POST", sid), [body])

        def dropped() -> None:
            raise OSError("the client went away")

        channel.on_start = dropped
        await asyncio.wait_for(endpoint(channel.scope, channel.receive, channel.send), 5)
        call = session.calls[12]
        assert not call.done()
        assert (await client.delete("/mcp", headers={"Mcp-Session-Id": sid})).status_code == 200
        await asyncio.wait([call], timeout=5)
        assert call.cancelled() and 12 not in session.calls


async def test_a_modern_post_whose_body_comes_after_the_stop_is_not_run(bd_home: Path) -> None:
    """As the handshake era: the stop is checked again once the body is read (before:
    the call ran after the stop, on tools built anew that nothing would close)."""
    async with mcp_service(bd_home) as (service, _):
        endpoint = endpoint_of(service)
        built = endpoint._mcp
        called = rpc("tools/call", 13, name="browser_tabs", arguments={})
        called["params"]["_meta"] = META
        post = scope("POST", "-")
        post["headers"] += [
            (k.lower().encode(), v.encode())
            for k, v in modern_headers("tools/call", "browser_tabs").items()
        ]
        channel = Channel(post, [])
        reading = asyncio.Event()
        release = asyncio.Event()

        async def slow_body() -> dict[str, Any]:
            reading.set()
            await release.wait()
            return {"type": "http.request", "body": json.dumps(called).encode()}

        request = asyncio.ensure_future(endpoint(channel.scope, slow_body, channel.send))
        await asyncio.wait_for(reading.wait(), 5)
        await endpoint.shutdown()
        release.set()
        await asyncio.wait_for(request, 5)
        assert channel.sent[0]["status"] == 503, channel.sent
        assert b"stopping" in channel.sent[1]["body"]
        assert endpoint._mcp is built


async def test_a_new_stream_replays_only_questions_still_awaited(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        session = endpoint.sessions[sid]
        # Kept from a closed stream: one whose asker timed out, one still awaited.
        stale = {"jsonrpc": "2.0", "id": 40, "method": "roots/list"}
        live = {"jsonrpc": "2.0", "id": 41, "method": "roots/list"}
        session.questions[41] = asyncio.get_running_loop().create_future()
        session.unsent += [stale, live]
        async with client.stream("GET", "/mcp", headers={"Mcp-Session-Id": sid}) as stream:
            lines = stream.aiter_lines()
            data = await asyncio.wait_for(
                anext(line async for line in lines if line.startswith("data: ")), 5
            )
            assert json.loads(data[6:]) == live
        session.questions.pop(41).cancel()


async def test_a_stream_dropped_by_the_server_leaves_no_pending_read(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        endpoint = endpoint_of(service)
        sid = await open_session(client)
        channel = Channel(scope("GET", sid), [])
        stream = asyncio.ensure_future(endpoint(channel.scope, channel.receive, channel.send))
        await until(lambda: channel.sent, "the stream to start")
        await asyncio.sleep(0.05)
        stream.cancel()  # as uvicorn does at its shutdown
        await asyncio.wait([stream], timeout=5)
        await asyncio.sleep(0)
        left = [t for t in asyncio.all_tasks() if t.get_name() == "mcp-get-next" and not t.done()]
        assert left == []
        channel.hold.set()


async def test_agent_sessions_past_the_cap_are_refused_in_plain_words(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """X-Browserdeck-Session is the client's to choose: a new one per call stops at the cap."""
    monkeypatch.setattr(server_module, "MAX_AGENT_SESSIONS", 2)
    async with mcp_service(bd_home) as (_, client):
        answers = []
        for name in ("a", "b", "c", "a"):
            called = rpc("tools/call", 1, name="browser_tabs", arguments={})
            called["params"]["_meta"] = META
            headers = {**modern_headers("tools/call", "browser_tabs"), "X-Browserdeck-Session": name}
            answers.append((await client.post("/mcp", json=called, headers=headers)).json())
        assert all("result" in answer for answer in answers[:2]), answers
        error = answers[2]["error"]
        assert error["code"] == protocol.INTERNAL_ERROR and "Too many agent sessions" in error["message"]
        assert "result" in answers[3]  # a session already open carries on
