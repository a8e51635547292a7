"""Transports, sessions and tab ownership: stdio and HTTP, one agent and several.

Real parts throughout: `python -m browserdeck mcp` spawned and driven by the
official MCP client, a real service with its API socket, real Chromium.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from browserdeck import config
from browserdeck.chrome.procs import pid_alive
from browserdeck.events import ActivityEntry
from browserdeck.master import build_service
from browserdeck.mcpserver import http as mcp_http
from browserdeck.mcpserver.claims import read_claims
from browserdeck.util import uds
from mcp import MCPError
from tests.mcp.harness import call, call_error, http_client, mcp_config, ref_of, stdio_client
from tests.support.net import free_port
from tests.support.service import instance_file_of
from tests.support.sessions import SessionEnds


def tab_ids(listing: str) -> dict[str, str]:
    """targetId prefix -> its mark ([current, yours], [free], [held by ...])."""
    return {
        m.group(1): m.group(2) for m in re.finditer(r"^\d+\. (\w+) \[([^\]]+)\]", listing, re.M)
    }


async def test_stdio_lists_tools(
    bd_home: Path, chromium_path: str
) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path) as client:
        core = (await client.list_tools()).tools
    async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
        everything = (await client.list_tools()).tools
    core_names = {t.name for t in core}
    assert {
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_tabs",
        "browser_take_screenshot",
        "browser_profiles",
    } <= core_names
    assert core_names < {t.name for t in everything}
    size = len(
        json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in core])
    )
    # Playwright MCP 0.0.83's is 21,332; the target is <= 0.6x. 9,888 when the schemas were
    # hand-written; derived from the engine's models (issue 13) they carry the models'
    # descriptions and defaults: 10,384, at most 5% over the hand-written ones. With the
    # network tools in core (routes, HAR, requests: docs/network.md) 13,816; Playwright MCP
    # with the same tools (--caps=network) is 23,804: still under 0.6x of it.
    assert size < 14_300
    # The tools came from the service that `browserdeck mcp` started (issue 14): it is
    # still up for the next client, by design (docs/mcp.md).
    assert instance_file_of(bd_home)


async def test_stdio_in_process_fallback_tabs_and_profiles(
    bd_home: Path, chromium_path: str
) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path) as client:
        listing = await call(client, "browser_tabs", {"action": "list"})  # starts the browser
        assert "profile agent" in listing
        opened = await call(client, "browser_tabs", {"action": "new", "url": "about:blank"})
        new_id = re.search(r"opened tab (\w+)", opened).group(1)  # type: ignore[union-attr]
        marks = tab_ids(await call(client, "browser_tabs", {"action": "list"}))
        assert marks[new_id] == "current, yours"
        profiles = await call(client, "browser_profiles", {"action": "list"})
        assert "* agent (managed, running" in profiles
        closed = await call(client, "browser_close")
        assert f"closed tab {new_id}" in closed
        # DELETE /tabs answers before Chromium drops the target from /json/list, so the tab
        # may still be listed for a moment; it is no longer this session's in any case.
        marks = tab_ids(await call(client, "browser_tabs", {"action": "list"}))
        assert marks.get(new_id, "free") == "free"
        error = await call_error(client, "browser_profiles", {"action": "use", "name": "nope"})
        assert "profile 'nope' does not exist" in error
        error = await call_error(client, "browser_query_dom", {"selector": "a"})
        assert "--tools all" in error


async def test_http_needs_the_token_and_a_loopback_host(bd_home: Path, site: str) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    try:
        url = f"{service.url}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(trust_env=False) as raw:
            resp = await raw.post(url, json=body, headers=headers)
            assert resp.status_code == 401
            resp = await raw.post(
                url, json=body, headers={**headers, "Authorization": "Bearer wrong"}
            )
            assert resp.status_code == 401
            resp = await raw.post(
                url,
                json=body,
                headers={
                    **headers,
                    "Authorization": f"Bearer {service.api_token}",
                    "Host": "evil.example:80",
                },
            )
            assert resp.status_code == 403
            resp = await raw.post(
                url,
                json=body,
                headers={
                    **headers,
                    "Authorization": f"Bearer {service.api_token}",
                    "Origin": "http://evil.example",
                },
            )
            assert resp.status_code == 403
        async with http_client(url, service.api_token) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "browser_navigate" in tools and "browser_query_dom" not in tools
        async with http_client(url + "?tools=all", service.api_token, mode="auto") as client:
            assert "browser_query_dom" in {t.name for t in (await client.list_tools()).tools}
            # The tools work over HTTP as over stdio: navigate, snapshot, click, screenshot.
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            snap = await call(client, "browser_snapshot")
            await call(client, "browser_click", {"ref": ref_of(snap, "button", "Add to cart")})
            assert "1 item" in await call(client, "browser_find", {"text": "1 item"})
            shot = await client.call_tool("browser_take_screenshot", {})
            assert [c.type for c in shot.content] == ["text", "image"]
    finally:
        await service.stop()


async def test_two_http_sessions_keep_their_own_tabs(bd_home: Path) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    url = f"{service.url}/mcp"
    try:
        ends = SessionEnds(service)
        async with (
            http_client(url, service.api_token) as a,
            http_client(url, service.api_token) as b,
        ):
            opened_a = await call(a, "browser_tabs", {"action": "new"})
            tab_a = re.search(r"opened tab (\w+)", opened_a).group(1)  # type: ignore[union-attr]
            opened_b = await call(b, "browser_tabs", {"action": "new"})
            tab_b = re.search(r"opened tab (\w+)", opened_b).group(1)  # type: ignore[union-attr]
            marks = tab_ids(await call(b, "browser_tabs", {"action": "list"}))
            assert marks[tab_b] == "current, yours"
            assert marks[tab_a].startswith("held by")
            refused = await call_error(b, "browser_tabs", {"action": "select", "targetId": tab_a})
            assert "belongs to another agent" in refused and "force" in refused
            refused = await call_error(b, "browser_tabs", {"action": "close", "targetId": tab_a})
            assert "belongs to another agent" in refused
            taken = await call(
                b, "browser_tabs", {"action": "select", "targetId": tab_a, "force": True}
            )
            assert f"current tab is now {tab_a}" in taken
            assert tab_ids(await call(a, "browser_tabs", {"action": "list"}))[tab_a].startswith(
                "held by"
            )
        # Both sessions ended (DELETE): the tabs each opened closed with it. B's end gave
        # A's tab, which B had taken over, back to A; A's end then closed it.
        await ends.wait(count=2)
        async with http_client(url, service.api_token) as c:
            marks = tab_ids(await call(c, "browser_tabs", {"action": "list"}))
            assert tab_a not in marks and tab_b not in marks, marks
            # The stop path ends open sessions first (ApiServer.stop should call this).
            assert service.api is not None
            await mcp_http.shutdown(service.api._server.config.app)  # type: ignore[union-attr]
            with pytest.raises(MCPError):
                await c.call_tool("browser_tabs", {"action": "list"})
        async with httpx.AsyncClient(trust_env=False) as raw:
            resp = await raw.post(
                url, json={}, headers={"Authorization": f"Bearer {service.api_token}"}
            )
            assert resp.status_code == 503 and resp.json()["error"]["code"] == "stopping"
    finally:
        await service.stop()


async def test_two_stdio_agents_on_one_running_service(bd_home: Path, chromium_path: str) -> None:
    """Two `browserdeck mcp` processes find the running service and do not share tabs."""
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    try:
        ends = SessionEnds(service)
        async with (
            stdio_client(bd_home, chromium_path) as a,
            stdio_client(bd_home, chromium_path) as b,
        ):
            listing_a, listing_b = await asyncio.gather(
                call(a, "browser_tabs", {"action": "list"}),
                call(b, "browser_tabs", {"action": "list"}),
            )
            opened = await call(a, "browser_tabs", {"action": "new"})
            tab_a = re.search(r"opened tab (\w+)", opened).group(1)  # type: ignore[union-attr]
            marks = tab_ids(await call(b, "browser_tabs", {"action": "list"}))
            assert marks[tab_a].startswith("held by") and "stdio" in marks[tab_a]
            refused = await call_error(b, "browser_tabs", {"action": "select", "targetId": tab_a})
            assert "belongs to another agent" in refused
        assert "profile agent" in listing_a and "profile agent" in listing_b
        # The agents went away (their bridges deleted their sessions): the tab A opened
        # closed with it, and nobody holds a tab any more.
        await ends.wait(lambda e: e.kind == "mcp", count=2)
        tabs = await service.profile("agent").list_tabs()
        assert not any(t.target_id.startswith(tab_a) for t in tabs)
        assert read_claims("agent") == []
    finally:
        await service.stop()


def test_the_service_started_for_mcp_closes_its_idle_browser(bd_home: Path) -> None:
    """What `browserdeck mcp` starts when no service runs (`serve --headless --idle-exit`):
    its browser is up for the first tool call, and once no MCP client has used it for
    the idle limit the service exits and takes its browser with it."""
    mcp_config(bd_home)
    env = {**os.environ, "BROWSERDECK_HOME": str(bd_home)}
    serve = subprocess.Popen(
        [sys.executable, "-m", "browserdeck", "serve", "--headless", "--idle-exit", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    browser_pid = None
    try:
        sock = str(bd_home / "run" / "api.sock")
        deadline = time.monotonic() + 60
        while browser_pid is None and time.monotonic() < deadline and serve.poll() is None:
            try:
                _, _, body = uds.request(sock, "GET", "/?profile=agent")
                browser_pid = json.loads(body).get("pid")
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        assert browser_pid is not None and pid_alive(browser_pid)
        assert serve.wait(30) == 0  # idle: it stops by itself, cleanly
        deadline = time.monotonic() + 10
        while pid_alive(browser_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(browser_pid), "the idle service left its browser running"
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
        if browser_pid is not None and pid_alive(browser_pid):
            os.kill(browser_pid, signal.SIGKILL)


async def test_a_closed_tab_is_reported_and_navigate_opens_a_new_one(
    bd_home: Path, site: str
) -> None:
    cfg = mcp_config(bd_home)
    cfg.profiles["work"] = config.ProfileConfig("work", "managed", "#0066CC", cdp_port=free_port())
    config.save(cfg)
    service = build_service(force_headless=True)
    await service.start()
    url = f"{service.url}/mcp"
    try:
        async with http_client(url, service.api_token) as client:
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            mine = next(iter(tab_ids(await call(client, "browser_tabs", {"action": "list"}))))
            await service.profile("agent").close_tab(mine)  # closed behind the agent's back
            gone = await call_error(client, "browser_snapshot")
            assert "is gone" in gone and "browser_navigate" in gone
            nav = await call(client, "browser_navigate", {"url": f"{site}/next.html"})
            assert "Next page" in nav
            # Another profile for this session only.
            used = await call(client, "browser_profiles", {"action": "use", "name": "work"})
            assert "now uses profile work" in used
            await call(client, "browser_navigate", {"url": f"{site}/form.html"})
            assert "profile work" in await call(client, "browser_tabs", {"action": "list"})
            listing = await call(client, "browser_profiles", {"action": "list"})
            assert "* work (managed, running" in listing
            stopped = await call(client, "browser_profiles", {"action": "stop", "name": "work"})
            assert "profile work: stopped" in stopped
    finally:
        await service.stop()


async def test_stop_all_agents_ends_every_mcp_session(bd_home: Path, chromium_path: str) -> None:
    """The tray's Stop all agents ends each /mcp session for real: the client's next call
    is refused (its session is gone, per the MCP spec a 404), not served in a fresh
    session as if nothing happened; the tabs the sessions opened are closed; a new
    session works."""
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    url = f"{service.url}/mcp"
    try:
        async with (
            http_client(url, service.api_token) as a,
            http_client(url, service.api_token) as b,
            stdio_client(bd_home, chromium_path) as bridged,  # `browserdeck mcp`: a bridge
        ):
            opened = await call(a, "browser_tabs", {"action": "new"})
            tab_a = re.search(r"opened tab (\w+)", opened).group(1)  # type: ignore[union-attr]
            await call(b, "browser_tabs", {"action": "list"})
            await call(bridged, "browser_tabs", {"action": "list"})
            summary = await service.stop_all_agents()
            assert summary["sessions"] == 3, summary
            for client in (a, b, bridged):
                with pytest.raises(MCPError) as ended:
                    await asyncio.wait_for(client.call_tool("browser_tabs", {"action": "list"}), 10)
                assert "session" in str(ended.value).lower(), ended.value
        left = {t.target_id for t in await service.contexts["agent"].list_tabs()}
        assert tab_a not in left, "the tab an MCP session opened is still open"
        async with http_client(url, service.api_token) as c:
            await call(c, "browser_tabs", {"action": "list"})
    finally:
        await service.stop()


@pytest.mark.parametrize("via", ["http", "bridge"])
async def test_mcp_cancelled_notification_cancels_the_engine_work(
    bd_home: Path, chromium_path: str, via: str
) -> None:
    """A client that gives up on a call sends `notifications/cancelled` (the SDK client does
    when the caller is cancelled): the tool's API call and its engine work end at once,
    not after their own 8 s, and the session's next call runs without waiting for them."""
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    ended: list[ActivityEntry] = []
    service.events.api_call.connect(lambda entry: ended.append(entry))
    url = f"{service.url}/mcp"
    try:
        client_cm = (
            http_client(url, service.api_token)
            if via == "http"
            else stdio_client(bd_home, chromium_path)
        )
        async with client_cm as client:
            await call(client, "browser_navigate", {"url": "data:text/html,<title>w</title>"})
            ended.clear()
            started = asyncio.get_running_loop().time()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("browser_wait_for", {"time": 8}), 1.0)
            while not any(e.call == "act" for e in ended):
                elapsed = asyncio.get_running_loop().time() - started
                assert elapsed < 5, "the engine work went on after the client cancelled"
                await asyncio.sleep(0.05)
            # The session is free again at once (its calls run one at a time).
            await asyncio.wait_for(call(client, "browser_tabs", {"action": "list"}), 5)
    finally:
        await service.stop()
