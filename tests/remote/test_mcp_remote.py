"""MCP agents on a pooled Browserless profile: each MCP session gets a browser of its own.

Real parts: the official MCP client over streamable HTTP to the service's /mcp, a real
Browserless from npm, real Chromium (one per session, started by Browserless).
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from pathlib import Path

from PIL import Image

from browserdeck.config import Config, ProfileConfig
from browserdeck.drivers import leases as remote
from tests.mcp.harness import call, http_client, ref_of
from tests.remote.browserless import Browserless
from tests.remote.test_browserless import remote_config
from tests.support.service import running_service

SESSIONS = 10


def pooled(server: Browserless) -> Config:
    cfg = remote_config()
    cfg.profiles["farm"] = ProfileConfig(
        name="farm", driver="remote", color="#3F51B5", cdp_url=server.ws_url(token=False), pool=True
    )
    cfg.default_profile = "farm"
    remote.store_token("farm", server.token)
    return cfg


async def wait_running(server: Browserless, count: int, within: float = 15.0) -> int:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        running = int(server.pressure()["running"])  # type: ignore[call-overload]
        if running == count or loop.time() > deadline:
            return running
        await asyncio.sleep(0.2)


async def test_mcp_navigate_snapshot_click_labelled_screenshot(
    browserless: Browserless, site: str, bd_home: Path
) -> None:
    async with running_service(pooled(browserless)) as (service, _client):
        async with http_client(f"{service.url}/mcp", service.api_token) as client:
            await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
            snap = await call(client, "browser_snapshot")
            assert "Featured products" in snap
            add = ref_of(snap, "button", "Add to cart")
            await call(client, "browser_click", {"ref": add})
            assert "1 item" in await call(client, "browser_snapshot")
            result = await client.call_tool("browser_take_screenshot", {"labels": True})
            assert not result.is_error
            images = [c for c in result.content if c.type == "image"]
            assert len(images) == 1
            Image.open(io.BytesIO(base64.b64decode(images[0].data))).verify()
            labels = "\n".join(c.text for c in result.content if c.type == "text")
            assert f"{add}: " in labels
            status = await service.profile("farm").status()
            assert len(status["remote"]["sessions"]) == 1
        # The MCP session ended (the client closed it): its browser went back to the service.
        assert await wait_running(browserless, 0) == 0
        assert not (await service.profile("farm").status())["remote"]["sessions"]


async def test_ten_mcp_sessions_each_on_its_own_browser(
    browserless: Browserless, site: str, bd_home: Path
) -> None:
    async with running_service(pooled(browserless)) as (service, _client):
        url = f"{service.url}/mcp"
        entered = asyncio.Barrier(SESSIONS + 1)
        done = asyncio.Event()
        seen: dict[int, tuple[str, str]] = {}

        async def agent(i: int) -> None:
            async with http_client(url, service.api_token) as client:
                await call(client, "browser_navigate", {"url": f"{site}/shop.html"})
                snap = await call(client, "browser_snapshot")
                search = ref_of(snap, "searchbox", "Search")
                await call(client, "browser_type", {"ref": search, "text": f"agent-{i}"})
                await entered.wait()  # every session holds its browser at the same time
                value = await call(
                    client,
                    "browser_evaluate",
                    {"function": "() => document.querySelector('input').value"},
                )
                seen[i] = (value, await call(client, "browser_tabs", {"action": "list"}))
                await done.wait()

        tasks = [asyncio.create_task(agent(i)) for i in range(SESSIONS)]
        try:
            await asyncio.wait_for(entered.wait(), 120)
            # Ten browsers at the service, one per session.
            assert await wait_running(browserless, SESSIONS) == SESSIONS
            sessions = (await service.profile("farm").status())["remote"]["sessions"]
            assert len({s["session"] for s in sessions}) == SESSIONS
            for _ in range(100):
                if len(seen) == SESSIONS:
                    break
                await asyncio.sleep(0.1)
        finally:
            done.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 60)
        for i, (value, tabs) in seen.items():
            assert f"agent-{i}" in value
            # No cross-talk: nobody sees another session's text, and each browser has
            # exactly one tab (its own), none of the other nine.
            others = {f"agent-{j}" for j in range(SESSIONS) if j != i}
            assert not any(re.search(rf"\b{o}\b", value) for o in others), value
            assert len(re.findall(r"^\d+\. ", tabs, re.M)) == 1, tabs
        assert await wait_running(browserless, 0) == 0
