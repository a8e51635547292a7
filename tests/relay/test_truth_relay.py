"""Issue 9 on an extension profile: the engine through the relay and the real extension.

A shared tab in the user's Chrome is usually a background tab (Chrome pauses its
animation frames and throttles its timers); actions there must still wait for what they
caused, and the next snapshot must show it. The tab's visibility is checked through
Chromium's own DevTools port, not the relay.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from browserdeck.engine import Engine
from browserdeck.engine.options import ClickAct, SnapshotOptions
from browserdeck.relay.server import RelayServer
from tests.relay.harness import ExtBrowser
from tests.relay.test_e2e_playwright import direct_eval
from tests.support.asyncsite import AsyncSite, start_async_site

NO_HANG = 20.0


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    s = start_async_site()
    yield s
    s.close()


@pytest_asyncio.fixture
async def engine() -> AsyncIterator[Engine]:
    eng = Engine()
    await eng.start()
    try:
        yield eng
    finally:
        await eng.stop()


def _ref(snapshot: str, needle: str) -> str:
    for line in snapshot.splitlines():
        if needle in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise AssertionError(f"{needle!r} not in {snapshot}")


async def test_actions_on_a_background_shared_tab_wait_for_their_consequences(
    ext: ExtBrowser, relay: RelayServer, engine: Engine, asite: AsyncSite
) -> None:
    _, fetch_tab = await ext.open_shared(asite.url("/fetch.html"))
    _, link_tab = await ext.open_shared(asite.url("/link.html"))
    _, live_tab = await ext.open_shared(asite.url("/live.html"))
    # The last one opened is in front: the other two are background tabs.
    assert await direct_eval(ext, fetch_tab, "document.visibilityState") == "hidden"
    assert await direct_eval(ext, link_tab, "document.visibilityState") == "hidden"
    headers = relay.auth_headers()

    async def snap(target: str) -> dict[str, Any]:
        return await engine.snapshot(relay.cdp_url, target, headers, SnapshotOptions())

    async def click(target: str, needle: str) -> dict[str, Any]:
        ref = _ref((await snap(target))["snapshot"], needle)
        act = ClickAct(kind="click", ref=ref)
        return await asyncio.wait_for(engine.act(relay.cdp_url, target, headers, act), NO_HANG)

    out = await click(fetch_tab, 'button "Load"')
    assert "1 request finished" in out["outcome"], out
    assert "Loaded: 42" in (await snap(fetch_tab))["snapshot"]

    out = await click(link_tab, 'link "Go slow"')
    assert "navigated to" in out["outcome"] and "/slow-page" in out["outcome"], out
    assert 'heading "Arrived"' in (await snap(link_tab))["snapshot"]

    out = await click(live_tab, 'button "Load"')
    assert "waitBoundHit" not in out and "1 request finished" in out["outcome"], out
    assert "Loaded: 42" in (await snap(live_tab))["snapshot"]
