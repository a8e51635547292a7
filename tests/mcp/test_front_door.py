"""MCP at /mcp calls the service's front door in-process, not its own API.

Each tool call passes the API's guard once (the /mcp request), and the activity log
gets one entry per call at the front door, with what it did (the element it clicked),
and none for the /mcp request that carried it. The core's typed errors reach the tool
as raised, with hints in the MCP client's words.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from browserdeck.events import ActivityEntry
from browserdeck.master import build_service
from tests.mcp.harness import call, call_error, http_client, mcp_config, ref_of


async def test_one_activity_entry_per_call_and_none_for_the_transport(
    bd_home: Path, site: str
) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    entries: list[ActivityEntry] = []

    def record(*, entry: ActivityEntry, **_: Any) -> None:
        entries.append(entry)

    service.events.api_call.connect(record)
    await service.start()
    try:
        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            snap = await call(client, "browser_snapshot")
            entries.clear()
            await call(client, "browser_tabs", {"action": "list"})
            # The listing is the one call at the front door: no entry for the /mcp request.
            assert [e.call for e in entries] == ["tabs"], entries
            entries.clear()
            button = ref_of(snap, "button", "Add to cart")
            await call(client, "browser_click", {"ref": button})
            assert all(isinstance(e, ActivityEntry) for e in entries), entries
            assert len(entries) == 1, entries
            acted = entries[0]
            assert acted.call == "act" and acted.detail.kind == "click"
            assert acted.detail.ref == button
            assert "Add to cart" in (acted.detail.element or "")
            assert acted.status == 200 and acted.client.endswith("via MCP")
            assert acted.error is None
        entries.clear()
        # Protocol noise (a request without its session) is the transport's, not a call.
        async with httpx.AsyncClient(trust_env=False) as http:
            noise = await http.post(
                f"{service.url}/mcp",
                headers={
                    "Authorization": f"Bearer {service.api_token}",
                    "Accept": "application/json, text/event-stream",
                },
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
        assert noise.status_code == 400 and "Missing session ID" in noise.text
        assert entries == []
    finally:
        await service.stop()


async def test_a_stopped_browser_is_said_in_mcp_words(bd_home: Path, site: str) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    try:
        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            # An evaluate that never ends, known to be running once the page calls us.
            started = asyncio.Event()

            async def on_connect(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                started.set()
                writer.close()

            server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            fn = f"() => {{ fetch('http://127.0.0.1:{port}/'); return new Promise(() => {{}}); }}"
            waiting = asyncio.create_task(call_error(client, "browser_evaluate", {"function": fn}))
            try:
                await asyncio.wait_for(started.wait(), 30)
            finally:
                server.close()
            await service.profile(None).stop()
            error = await asyncio.wait_for(waiting, 30)
            assert "was stopped" in error, error
            # What to do next names a tool the agent has, not an HTTP route.
            assert "browser_profiles action=start" in error and "POST /start" not in error
    finally:
        await service.stop()


async def test_hints_name_tools_to_mcp_clients(bd_home: Path, site: str) -> None:
    mcp_config(bd_home)
    service = build_service(force_headless=True)
    await service.start()
    try:
        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            ghost = await call_error(client, "browser_profiles", {"action": "start", "name": "ghost"})
            assert "does not exist" in ghost, ghost
            assert "browser_profiles action=list" in ghost and "GET /profiles" not in ghost
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            await call(client, "browser_snapshot")
            stale = await call_error(client, "browser_click", {"ref": "e9999"})
            assert "browser_snapshot" in stale and "GET /snapshot" not in stale, stale
    finally:
        await service.stop()
