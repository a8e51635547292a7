"""Issue 9 through MCP: the official MCP client drives `browserdeck mcp` over stdio.

After each async action, the very next browser_snapshot shows the outcome; the tool's
reply says in one line what happened. Pages: tests/support/asyncsite.py (400 ms late).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.harness import call, stdio_client
from tests.support.asyncsite import AsyncSite, start_async_site
from tests.support.asyncsite import ref_in as _ref


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    s = start_async_site()
    yield s
    s.close()


async def test_async_pages_through_mcp(bd_home: Path, chromium_path: str, asite: AsyncSite) -> None:
    async with stdio_client(bd_home, chromium_path) as client:

        async def click(needle: str) -> str:
            snap = await call(client, "browser_snapshot")
            return await call(client, "browser_click", {"ref": _ref(snap, needle)})

        await call(client, "browser_navigate", {"url": asite.url("/fetch.html")})
        reply = await click('button "Load"')
        assert "1 request finished" in reply, reply
        assert "Loaded: 42" in await call(client, "browser_snapshot")

        await call(client, "browser_navigate", {"url": asite.url("/link.html")})
        reply = await click('link "Go slow"')
        assert "navigated to" in reply and "/slow-page" in reply, reply
        assert 'heading "Arrived"' in await call(client, "browser_snapshot")

        await call(client, "browser_navigate", {"url": asite.url("/spa.html")})
        reply = await click('button "Items"')
        assert "Items: 3" in await call(client, "browser_snapshot"), reply

        await call(client, "browser_navigate", {"url": asite.url("/live.html")})
        reply = await click('button "Load"')
        assert "wait bound" not in reply and "Loaded: 42" in await call(
            client, "browser_snapshot"
        )

        # A CSS animation and transition reveal text 300 ms after load, with no DOM change.
        await call(client, "browser_navigate", {"url": asite.url("/reveal.html")})
        await asyncio.sleep(1.0)  # the agent reading the reply; the page moves on
        snap = await call(client, "browser_snapshot")
        assert "Revealed by animation" in snap and "Revealed by transition" in snap, snap

        await call(client, "browser_navigate", {"url": asite.url("/popup.html")})
        reply = await click('button "Open"')
        assert "a popup or new tab opened" in reply and "target.html" in reply, reply
