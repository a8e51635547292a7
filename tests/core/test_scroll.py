"""The scroll act on every way in: the API, the CLI (over the API's socket) and MCP.

An infinite-scroll page (tests/support/asyncsite.py, /scroll.html: 30 rows, and 10 more
fetched when the page is scrolled to its end, the answer coming after 400 ms): the
answer to the scroll comes once the page has loaded them, so the very next snapshot
shows row 40. Scrolling an element scrolls its own box, not the page.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.mcp.harness import call, http_client
from tests.support.asyncsite import AsyncSite, ref_in, start_async_site
from tests.support.service import running_service

FEED = (
    "data:text/html,<title>Feed</title><ul role=list aria-label=Feed "
    "style='height:120px;overflow:auto'>"
    + "".join(f"<li>Post {i}</li>" for i in range(60))
    + "</ul><p style='height:3000px'>below</p>"
)


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    site = start_async_site()
    yield site
    site.close()


async def _open(client: httpx.AsyncClient, url: str) -> str:
    opened = await client.post("/tabs/open", json={"url": url})
    assert opened.status_code == 200, opened.text
    return str(opened.json()["targetId"])


async def _snapshot(client: httpx.AsyncClient, target: str) -> str:
    answer = await client.get("/snapshot", params={"targetId": target})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["snapshot"])


async def test_scrolling_to_the_end_loads_more_rows_before_it_answers(asite: AsyncSite) -> None:
    async with running_service() as (_service, client):
        target = await _open(client, asite.url("/scroll.html"))
        before = await _snapshot(client, target)
        assert "Row 30" in before and "Row 31" not in before
        done = await client.post(
            "/act", json={"kind": "scroll", "deltaY": 20_000, "targetId": target}
        )
        assert done.status_code == 200, done.text
        assert done.json()["kind"] == "scroll"
        assert "Row 40" in await _snapshot(client, target)
        # Nothing to scroll by is refused before anything moves, saying what is needed.
        still = await client.post("/act", json={"kind": "scroll", "targetId": target})
        assert still.status_code == 400
        assert "deltaX or deltaY" in still.json()["error"]["message"]


async def test_scrolling_an_element_scrolls_its_box_not_the_page() -> None:
    async with running_service() as (_service, client):
        target = await _open(client, FEED)
        feed = ref_in(await _snapshot(client, target), 'list "Feed"')
        done = await client.post(
            "/act", json={"kind": "scroll", "ref": feed, "deltaY": 300, "targetId": target}
        )
        assert done.status_code == 200, done.text
        assert done.json()["ref"] == feed
        where = await client.post(
            "/act",
            json={
                "kind": "evaluate",
                "fn": "() => [document.querySelector('ul').scrollTop, scrollY]",
                "targetId": target,
            },
        )
        box, page = where.json()["result"]
        assert box > 0 and page == 0, (box, page)


async def test_the_cli_scrolls_over_the_api_socket(asite: AsyncSite, bd_home: Path) -> None:
    async with running_service() as (_service, client):
        target = await _open(client, asite.url("/scroll.html"))
        await _snapshot(client, target)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "browserdeck", "scroll", "--dy", "20000", "--target", target,
            env=dict(os.environ, BROWSERDECK_HOME=str(bd_home)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()
        assert out.decode().startswith("scrolled the page by 0,20000"), out.decode()
        assert "Row 40" in await _snapshot(client, target)


async def test_browser_scroll_loads_what_the_next_snapshot_shows(asite: AsyncSite) -> None:
    async with (
        running_service() as (service, _client),
        http_client(f"{service.url}/mcp?tools=all", service.api_token) as mcp,
    ):
        await call(mcp, "browser_navigate", {"url": asite.url("/scroll.html")})
        assert "Row 31" not in await call(mcp, "browser_snapshot")
        said = await call(mcp, "browser_scroll", {"deltaY": 20_000})
        assert said.startswith("scrolled the page by 0,20000"), said
        assert "Row 40" in await call(mcp, "browser_snapshot")
