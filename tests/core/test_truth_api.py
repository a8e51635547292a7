"""Issue 9 through the real control API (real service, real headless Chromium).

The default tab, unescaped titles, the URL policy's outcome (a failed navigation is an
error, an HTTP error page a success with its status), and an action that waits for its
consequences, seen by a client calling over HTTP.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.asyncsite import AsyncSite, start_async_site
from tests.support.asyncsite import ref_in as _ref
from tests.support.net import free_port
from tests.support.service import running_service


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    s = start_async_site()
    yield s
    s.close()


async def _snap(client: httpx.AsyncClient, **headers: str) -> dict[str, Any]:
    resp = await client.get("/snapshot", headers=headers)
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def test_the_default_tab_is_the_clients_last_not_chromes_first(asite: AsyncSite) -> None:
    events: list[dict[str, Any]] = []
    async with running_service() as (service, client):
        service.events.agent_tab.connect(lambda **kw: events.append(kw))
        await client.post("/start")
        a = (await client.post("/tabs/open", json={"url": asite.url("/static.html")})).json()
        b = (await client.post("/tabs/open", json={"url": asite.url("/popup.html")})).json()
        assert b["status"] == 200
        # Chrome lists tabs by last activity: bring A to the front, so Chrome's first is A.
        await client.post("/tabs/focus", json={"targetId": a["targetId"]})
        for _ in range(3):
            assert (await _snap(client))["targetId"] == b["targetId"]  # the last one opened
        # A caller naming itself has its own history; with none it gets the profile's
        # most recently used tab (B), then the one it opens.
        alice = {"X-Browserdeck-Client": "alice"}
        assert (await _snap(client, **alice))["targetId"] == b["targetId"]
        c = (await client.post("/tabs/open", json={"url": "about:blank"}, headers=alice)).json()
        assert (await _snap(client, **alice))["targetId"] == c["targetId"]
        assert (await _snap(client))["targetId"] == b["targetId"]  # unnamed: unchanged
        # Acting on a tab by id makes it the caller's default.
        await client.get("/snapshot", params={"targetId": a["targetId"]})
        assert (await _snap(client))["targetId"] == a["targetId"]
        # "The tab the agent last acted on", for the panel's "follow agent".
        assert events[-1]["target_id"] == a["targetId"] and events[-1]["profile"] == "agent"
        assert {"target_id": c["targetId"], "profile": "agent", "client": "alice"} in events
        # A closed default falls back to the one this caller opened last, then to the
        # profile's most recently used tab.
        await client.delete(f"/tabs/{a['targetId']}")
        assert (await _snap(client))["targetId"] == b["targetId"]
        await client.delete(f"/tabs/{b['targetId']}")
        assert (await _snap(client))["targetId"] == c["targetId"]


async def test_titles_are_unescaped_and_open_says_what_happened(asite: AsyncSite) -> None:
    async with running_service() as (_service, client):
        await client.post("/start")
        opened = await client.post(
            "/tabs/open", json={"url": "data:text/html,<title>Finance &amp; Operations</title>"}
        )
        assert opened.json()["title"] == "Finance & Operations"
        tabs = (await client.get("/tabs")).json()["tabs"]
        assert "Finance & Operations" in [t["title"] for t in tabs]
        # A bare 127.0.0.1:port is http (the one URL policy), and an HTTP error page is a
        # success that carries its status.
        port = asite.base.rsplit(":", 1)[1]
        missing = await client.post("/tabs/open", json={"url": f"127.0.0.1:{port}/nope"})
        assert missing.status_code == 200 and missing.json()["status"] == 404
        assert missing.json()["url"].startswith("http://127.0.0.1:")
        # Nothing listening: an error, and no tab left behind on Chrome's error page.
        before = len((await client.get("/tabs")).json()["tabs"])
        refused = await client.post("/tabs/open", json={"url": f"127.0.0.1:{free_port()}/"})
        assert refused.status_code >= 400, refused.text
        assert "ERR_CONNECTION_REFUSED" in refused.text
        assert len((await client.get("/tabs")).json()["tabs"]) == before


async def test_a_click_over_the_api_waits_for_its_response(asite: AsyncSite) -> None:
    async with running_service() as (_service, client):
        await client.post("/start")
        tab = (await client.post("/tabs/open", json={"url": asite.url("/fetch.html")})).json()
        ref = _ref((await _snap(client))["snapshot"], 'button "Load"')
        out = (await client.post("/act", json={"kind": "click", "ref": ref})).json()
        assert "1 request finished" in out["outcome"], out
        after = await _snap(client)
        assert after["targetId"] == tab["targetId"] and "Loaded: 42" in after["snapshot"]


async def test_the_action_wait_setting_bounds_the_wait(asite: AsyncSite) -> None:
    async with running_service(tweak=lambda c: setattr(c, "action_wait_ms", 0)) as (
        _service,
        client,
    ):
        await client.post("/start")
        await client.post("/tabs/open", json={"url": asite.url("/fetch.html", d=1500)})
        ref = _ref((await _snap(client))["snapshot"], 'button "Load"')
        out = (await client.post("/act", json={"kind": "click", "ref": ref})).json()
        assert "outcome" not in out  # 0: the setting turned waiting off
        assert "Loaded: 42" not in (await _snap(client))["snapshot"]
        out = (await client.post("/act", json={"kind": "click", "ref": ref, "waitMs": 5000})).json()
        assert "request" in out["outcome"]  # per call, it waits again


def test_cli_open_of_an_unreachable_address_exits_non_zero() -> None:
    async def main() -> None:
        async with running_service() as (service, client):
            await client.post("/start")
            env = dict(os.environ, BROWSERDECK_URL=service.url)
            result = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "browserdeck", "open", f"127.0.0.1:{free_port()}/x"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert result.returncode != 0, result
            assert "ERR_CONNECTION_REFUSED" in result.stderr + result.stdout

    asyncio.run(main())

