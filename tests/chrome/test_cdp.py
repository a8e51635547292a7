"""The raw CDP client and the DevTools HTTP helpers, against one real browser per module."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from websockets.asyncio.server import ServerConnection, serve

from browserdeck.chrome.cdp import CDPClient, CDPError, browser_ws_url
from browserdeck.chrome.endpoint import (
    devtools_http,
    fetch_version,
    list_targets,
)
from browserdeck.chrome.process import ChromeProcess
from browserdeck.errors import ActionTimeout, Unavailable
from tests.support.net import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module")
async def cdp(shared_browser: ChromeProcess) -> AsyncIterator[CDPClient]:
    client = await CDPClient.connect(shared_browser.ws_url, headers=shared_browser.auth_headers())
    yield client
    await client.close()


async def new_page(cdp: CDPClient, url: str = "about:blank") -> tuple[str, str]:
    target = (await cdp.send("Target.createTarget", {"url": url}))["targetId"]
    attached = await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
    return target, attached["sessionId"]


async def test_send_and_receive(cdp: CDPClient) -> None:
    version = await cdp.send("Browser.getVersion")
    assert version["product"].startswith(("Chrome/", "HeadlessChrome/"))
    assert "protocolVersion" in version


async def test_sessions(cdp: CDPClient) -> None:
    target, session = await new_page(cdp)
    try:
        result = await cdp.send(
            "Runtime.evaluate", {"expression": "6 * 7", "returnByValue": True}, session_id=session
        )
        assert result["result"]["value"] == 42
    finally:
        await cdp.send("Target.closeTarget", {"targetId": target})


async def test_events_handlers_and_waiters(cdp: CDPClient) -> None:
    seen: list[tuple[str, str | None]] = []
    unsubscribe = cdp.on(
        "Target.targetCreated", lambda params, sid: seen.append((params["targetInfo"]["url"], sid))
    )
    await cdp.send("Target.setDiscoverTargets", {"discover": True})
    created = cdp.expect_event(
        "Target.targetCreated", lambda p: p["targetInfo"]["url"] == "about:blank#events"
    )
    target = (await cdp.send("Target.createTarget", {"url": "about:blank#events"}))["targetId"]
    info = await asyncio.wait_for(created, 10)
    assert info["targetInfo"]["targetId"] == target
    assert ("about:blank#events", None) in seen

    destroyed = asyncio.ensure_future(
        cdp.wait_for_event("Target.targetDestroyed", lambda p: p["targetId"] == target)
    )
    unsubscribe()
    count = len(seen)
    await cdp.send("Target.closeTarget", {"targetId": target})
    assert (await destroyed)["targetId"] == target
    second = (await cdp.send("Target.createTarget", {"url": "about:blank#quiet"}))["targetId"]
    await cdp.send("Target.closeTarget", {"targetId": second})
    await cdp.send("Target.setDiscoverTargets", {"discover": False})
    assert len(seen) == count  # unsubscribed handlers hear nothing more


async def test_session_events_carry_the_session_id(cdp: CDPClient) -> None:
    target, session = await new_page(cdp)
    try:
        sessions: list[str | None] = []
        cdp.on("Runtime.executionContextCreated", lambda _p, sid: sessions.append(sid))
        await cdp.send("Runtime.enable", session_id=session)
        assert session in sessions
    finally:
        await cdp.send("Target.closeTarget", {"targetId": target})


async def test_protocol_error(cdp: CDPClient) -> None:
    with pytest.raises(CDPError) as err:
        await cdp.send("Nope.nothing", {"a": 1})
    assert err.value.method == "Nope.nothing"
    assert err.value.cdp_code == -32601
    assert "Nope.nothing" in err.value.message
    with pytest.raises(CDPError) as bad_target:
        await cdp.send("Target.activateTarget", {"targetId": "NO-SUCH-TARGET"})
    assert "No target with given id" in bad_target.value.message
    assert not cdp.closed


async def test_timeout_leaves_the_connection_usable(cdp: CDPClient) -> None:
    target, session = await new_page(cdp)
    try:
        with pytest.raises(ActionTimeout) as err:
            await cdp.send(
                "Runtime.evaluate",
                {"expression": "new Promise(() => {})", "awaitPromise": True},
                session_id=session,
                timeout=0.2,
            )
        assert "Runtime.evaluate" in err.value.message
        with pytest.raises(ActionTimeout):
            await cdp.wait_for_event("Never.happens", timeout=0.05)
        result = await cdp.send(
            "Runtime.evaluate", {"expression": "1 + 1", "returnByValue": True}, session_id=session
        )
        assert result["result"]["value"] == 2
    finally:
        await cdp.send("Target.closeTarget", {"targetId": target})


async def test_close_fails_pending_calls_and_is_idempotent(shared_browser: ChromeProcess) -> None:
    client = await CDPClient.connect(shared_browser.ws_url, headers=shared_browser.auth_headers())
    target, session = await new_page(client)
    pending = asyncio.ensure_future(
        client.send(
            "Runtime.evaluate",
            {"expression": "new Promise(() => {})", "awaitPromise": True},
            session_id=session,
            timeout=60,
        )
    )
    waiter = client.expect_event("Never.happens")
    await asyncio.sleep(0)  # let the call go out
    await client.close()
    with pytest.raises(Unavailable):
        await pending
    with pytest.raises(Unavailable):
        await waiter
    with pytest.raises(Unavailable) as err:
        await client.send("Browser.getVersion")
    assert err.value.code == "cdp_closed"
    assert client.closed
    await client.close()
    async with await CDPClient.connect(shared_browser.cdp_url, headers=shared_browser.auth_headers()) as other:  # http URL works too
        await other.send("Target.closeTarget", {"targetId": target})


async def test_a_dropped_connection_fails_pending_calls_at_once() -> None:
    """A server that drops the TCP connection mid-call (the browser side of a crash)."""
    received = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        await ws.recv()
        received.set()
        ws.transport.abort()  # no close frame: what a killed process looks like

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        client = await CDPClient.connect(f"ws://127.0.0.1:{port}/devtools/browser/x")
        event = client.expect_event("Page.loadEventFired")
        with pytest.raises(Unavailable) as err:
            await asyncio.wait_for(client.send("Browser.getVersion", timeout=60), 10)
        assert received.is_set()
        assert err.value.code == "cdp_closed"
        assert "dropped" in err.value.message
        with pytest.raises(Unavailable):
            await event
        assert client.closed
        await client.close()


async def test_connect_errors() -> None:
    port = free_port()
    with pytest.raises(Unavailable) as err:
        await CDPClient.connect(f"ws://127.0.0.1:{port}/devtools/browser/x", timeout=2)
    assert err.value.code == "cdp_unreachable"
    with pytest.raises(Unavailable) as err:
        await CDPClient.connect(f"http://127.0.0.1:{port}", timeout=2)
    assert err.value.code == "cdp_unreachable"


# -- DevTools HTTP -------------------------------------------------------------------


async def test_http_helpers(shared_browser: ChromeProcess) -> None:
    auth = shared_browser.auth_headers()
    version = await fetch_version(shared_browser.cdp_url, headers=auth)
    assert await browser_ws_url(shared_browser.cdp_url, headers=auth) == version[
        "webSocketDebuggerUrl"
    ]
    assert await browser_ws_url(shared_browser.ws_url) == shared_browser.ws_url
    targets = await list_targets(shared_browser.cdp_url + "/", headers=auth)
    assert any(t["type"] == "page" for t in targets)
    status, body = await devtools_http(
        shared_browser.cdp_url, "/json/new?about:blank", method="PUT", headers=auth
    )
    assert status == 200
    created = json.loads(body)
    status, body = await devtools_http(
        shared_browser.cdp_url, f"/json/close/{created['id']}", headers=auth
    )
    assert status == 200


async def test_http_errors() -> None:
    port = free_port()
    with pytest.raises(Unavailable) as err:
        await fetch_version(f"http://127.0.0.1:{port}")
    assert err.value.code == "cdp_unreachable"
    assert f"127.0.0.1:{port}/json/version" in err.value.message

    async def not_devtools(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot here!")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(not_devtools, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(Unavailable) as err:
            await fetch_version(f"http://127.0.0.1:{port}")
    assert err.value.code == "cdp_bad_response"
    assert "HTTP 404" in err.value.message and "not here!" in err.value.message
