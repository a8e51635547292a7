"""The Playwright connection: reuse, retries, headers for a relay, and rebuild after loss."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from browserdeck.engine import Engine, connection, options
from browserdeck.errors import Unavailable
from tests.support.browsers import RawChromium, launch_raw_chromium
from tests.support.net import free_port

TOKEN = "relay-secret"


class AuthProxy:
    """A stand-in for the extension relay's CDP side: /json/version and the WebSocket
    upgrade both need ``Authorization: Bearer <token>``; frames go to a real Chromium."""

    def __init__(self, upstream: RawChromium) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.seen_auth: list[str | None] = []

    def _check(self, conn: ServerConnection, request: Request) -> Response | None:
        auth = request.headers.get("Authorization")
        self.seen_auth.append(auth)
        if auth != f"Bearer {TOKEN}":
            return conn.respond(HTTPStatus.UNAUTHORIZED, "token needed\n")
        if request.path.startswith("/json/version"):
            body = json.dumps(
                {
                    "Browser": "Proxy",
                    "Protocol-Version": "1.3",
                    "webSocketDebuggerUrl": f"ws://127.0.0.1:{self.port}/cdp",
                }
            )
            return Response(200, "OK", Headers({"Content-Type": "application/json"}), body.encode())
        return None  # the WebSocket upgrade, authorised

    async def _pipe(self, client: ServerConnection) -> None:
        async with connect(self.upstream.ws_url, max_size=None) as upstream:

            async def up() -> None:
                async for msg in client:
                    await upstream.send(msg)

            async def down() -> None:
                async for msg in upstream:
                    await client.send(msg)

            tasks = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()

    async def __aenter__(self) -> AuthProxy:
        self._server = await serve(
            self._pipe, "127.0.0.1", self.port, process_request=self._check, max_size=None
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()


def _target(cdp_url: str) -> str:
    with urllib.request.urlopen(f"{cdp_url}/json/list", timeout=5) as resp:
        return str(next(t["id"] for t in json.load(resp) if t["type"] == "page"))


def _devtools(cdp_url: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(f"{cdp_url}/json/{path}", method=method)
    with urllib.request.urlopen(request, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body.startswith(b"{") else body


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = Engine()
    await eng.start()
    try:
        yield eng
    finally:
        await eng.stop()


async def test_one_connection_is_reused_and_headers_reach_a_relay(
    engine: Engine, chromium: RawChromium
) -> None:
    target = _target(chromium.cdp_url)
    async with AuthProxy(chromium) as proxy:
        with pytest.raises(Unavailable, match="after 3 tries"):
            await engine.snapshot(proxy.url, target, None, options.SnapshotOptions())
        headers = {"Authorization": f"Bearer {TOKEN}"}
        first = await engine.snapshot(proxy.url, target, headers, options.SnapshotOptions())
        assert first.target_id == target
        conn = engine.pool._conns[proxy.url]
        await engine.act(
            proxy.url, target, headers, options.ResizeAct(kind="resize", width=500, height=400)
        )
        assert engine.pool._conns[proxy.url] is conn  # reused, not reconnected
        # Both the /json/version fetch and the WebSocket upgrade carried the token.
        authorised = [a for a in proxy.seen_auth if a == f"Bearer {TOKEN}"]
        assert len(authorised) >= 2


async def test_unreachable_browser_is_unavailable_after_retries(engine: Engine) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unavailable, match="after 3 tries") as err:
        await engine.snapshot(url, "0" * 32, None, options.SnapshotOptions())
    assert "POST /start" in (err.value.hint or "")


async def test_connection_is_rebuilt_after_the_browser_restarts(
    engine: Engine, chromium_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await launch_raw_chromium(chromium_path, tmp_path / "one")
    port = first.port
    target = _target(first.cdp_url)
    await engine.snapshot(first.cdp_url, target, None, options.SnapshotOptions())
    conn = engine.pool._conns[first.cdp_url]
    await first.close()
    await asyncio.wait_for(conn.gone.wait(), 10)
    assert conn.lost and first.cdp_url not in engine.pool._conns
    # A new browser on the same port (what a restarted managed profile looks like).
    import tests.support.browsers as browsers

    monkeypatch.setattr(browsers, "free_port", lambda: port)
    second = await launch_raw_chromium(chromium_path, tmp_path / "two")
    try:
        target2 = _target(second.cdp_url)
        out = await engine.snapshot(second.cdp_url, target2, None, options.SnapshotOptions())
        assert out.target_id == target2
        assert engine.pool._conns[second.cdp_url] is not conn
    finally:
        await second.close()


async def test_drop_disconnects_without_closing_the_browser(
    engine: Engine, chromium: RawChromium
) -> None:
    target = _target(chromium.cdp_url)
    await engine.snapshot(chromium.cdp_url, target, None, options.SnapshotOptions())
    await engine.drop(chromium.cdp_url)
    assert chromium.proc.poll() is None
    assert _target(chromium.cdp_url) == target
    again = await engine.snapshot(chromium.cdp_url, target, None, options.SnapshotOptions())
    assert again.target_id == target


async def _past_forget_timer() -> None:
    """Until a ``CLOSED_TAB_FORGET_AFTER`` timer set before now has fired: the loop runs
    timers of the same delay in the order they were set."""
    fired = asyncio.Event()
    asyncio.get_running_loop().call_later(connection.CLOSED_TAB_FORGET_AFTER, fired.set)
    await fired.wait()


async def test_a_closed_tab_is_forgotten_and_a_tab_whose_connection_dropped_is_not(
    engine: Engine, chromium: RawChromium, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tab's memory (its ref table, the last build's text and rows) stayed in the LRU
    after the tab closed, up to 50 tabs. It goes once the tab is closed; but Playwright
    also closes every Page of a connection that drops (the relay went away) before it
    says so, and that tab is still open: its memory, with its ref numbering, stays."""
    # Shorter than the 2 s it is, but not so short that a loaded machine's delay between
    # Playwright closing the dropped connection's Pages and reporting the drop exceeds it
    # (0.05 s failed once at load 4).
    monkeypatch.setattr(connection, "CLOSED_TAB_FORGET_AFTER", 0.5)
    memories = engine.memories._items
    target = _target(chromium.cdp_url)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with AuthProxy(chromium) as proxy:
        await engine.snapshot(proxy.url, target, headers, options.SnapshotOptions())
        dropping = engine.pool._conns[proxy.url]
        assert f"{proxy.url}::{target}" in memories
    await asyncio.wait_for(dropping.gone.wait(), 10)  # the proxy closed its connections
    await _past_forget_timer()
    assert f"{proxy.url}::{target}" in memories, "a tab still open was forgotten"

    closing = _devtools(chromium.cdp_url, "new?about:blank", "PUT")["id"]
    await engine.snapshot(chromium.cdp_url, closing, None, options.SnapshotOptions())
    conn = engine.pool._conns[chromium.cdp_url]
    assert f"{chromium.cdp_url}::{closing}" in memories
    _devtools(chromium.cdp_url, f"close/{closing}")
    for _ in range(200):  # "no hang": up to 10 s for Playwright to close the Page
        if closing not in conn.pages:
            break
        await asyncio.sleep(0.05)
    await _past_forget_timer()
    assert f"{chromium.cdp_url}::{closing}" not in memories
    assert f"{chromium.cdp_url}::{target}" in memories  # the other tab's is kept


async def test_calls_during_and_after_the_engine_stops_say_it_is_shutting_down(
    chromium: RawChromium,
) -> None:
    """A call running when the engine stops, and one arriving after, are told browserdeck is
    shutting down: not "the engine is restarting", nor "a browserdeck bug"."""
    eng = Engine()
    await eng.start()
    target = _target(chromium.cdp_url)
    try:
        await eng.snapshot(chromium.cdp_url, target, None, options.SnapshotOptions())
        running = asyncio.create_task(
            eng.act(
                chromium.cdp_url,
                target,
                None,
                options.EvaluateAct(kind="evaluate", fn="() => new Promise(() => {})"),
            )
        )
        await asyncio.sleep(0.3)  # the evaluate is in the page
        assert not running.done()
    finally:
        await eng.stop()
    with pytest.raises(Unavailable) as during:
        await asyncio.wait_for(running, 10)  # "no hang"
    assert "shutting down" in during.value.message, during.value.message
    with pytest.raises(Unavailable) as after:
        await eng.snapshot(chromium.cdp_url, target, None, options.SnapshotOptions())
    assert "shutting down" in after.value.message, after.value.message
    assert "bug" not in (after.value.hint or "")
