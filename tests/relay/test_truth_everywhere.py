"""Issue 9 end to end: through the API and through MCP, on a managed and an extension profile.

One real service (its API socket, its MCP endpoint, its relay), its managed headless
Chromium, and a second Chromium with the real extension loaded (``--load-extension``)
and paired with the service's relay: two browsers for the whole module. Four ways in:

* ``api-managed``: HTTP calls on a tab of the managed profile;
* ``api-extension``: HTTP calls on a tab shared from the extension's Chromium that is
  a **background** tab (not the active tab of its window; before the engine attaches,
  Chrome reports it hidden, pauses its animation frames and throttles its timers);
* ``mcp-managed`` / ``mcp-extension``: the official MCP client over the service's
  streamable-HTTP endpoint, one session per profile; the extension session selects a
  background shared tab with ``browser_tabs``.

Every scenario acts and takes the next observation at once, with no sleep between:
the observation must show the outcome (pages: tests/support/asyncsite.py).

Found while writing this: once Playwright attaches (through the relay), it turns on
``Emulation.setFocusEmulationEnabled`` for every page it initialises, and from then on a
background tab reports ``visible`` and runs its animation frames (checked with a raw CDP
session: nothing else in its set-up does that). So "background" is asserted here the way
the user sees it: the tab is not the active tab of its window, before and after.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
import pytest_asyncio

from browserdeck.relay.server import RelayServer
from browserdeck.service import Service
from mcp import Client
from tests.mcp.harness import call, http_client
from tests.relay.harness import ExtBrowser, launch_ext_browser
from tests.relay.test_e2e_playwright import direct_eval
from tests.support.asyncsite import AsyncSite, start_async_site
from tests.support.asyncsite import ref_in as _ref
from tests.support.service import module_home, running_service, service_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_HANG = 30.0  # seconds: a generous bound, not a speed assertion
WAYS = ["api-managed", "api-extension", "mcp-managed", "mcp-extension"]


@pytest.fixture(scope="module", autouse=True)
def bd_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One BROWSERDECK_HOME for the module: its service outlives single tests."""
    with module_home(tmp_path_factory) as home:
        yield home


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    s = start_async_site()
    yield s
    s.close()


class Way(Protocol):
    """One way of driving one tab: the outcome line of each action, the snapshot text."""

    name: str

    async def goto(self, url: str) -> None: ...
    async def snapshot(self) -> str: ...
    async def act(self, kind: str, **fields: Any) -> str: ...
    async def labels(self) -> tuple[list[str], str]: ...


@dataclass
class ApiWay:
    name: str
    client: httpx.AsyncClient
    profile: str
    target: str

    @property
    def params(self) -> dict[str, str]:
        return {"profile": self.profile, "targetId": self.target}

    async def goto(self, url: str) -> None:
        resp = await self.client.post("/navigate", params=self.params, json={"url": url})
        assert resp.status_code == 200, resp.text

    async def snapshot(self) -> str:
        resp = await self.client.get("/snapshot", params=self.params)
        assert resp.status_code == 200, resp.text
        return str(resp.json()["snapshot"])

    async def act(self, kind: str, **fields: Any) -> str:
        resp = await self.client.post("/act", params=self.params, json={"kind": kind, **fields})
        assert resp.status_code == 200, resp.text
        return str(resp.json().get("outcome", ""))

    async def labels(self) -> tuple[list[str], str]:
        resp = await self.client.post(
            "/screenshot", params=self.params, json={"labels": True, "inline": True}
        )
        assert resp.status_code == 200, resp.text
        data = resp.json()
        return [label["ref"] for label in data["labels"]], str(data.get("note", ""))


# MCP tool and argument names for each engine action kind.
_TOOLS = {"click": "browser_click", "type": "browser_type", "press": "browser_press_key"}


@dataclass
class McpWay:
    name: str
    client: Client

    async def goto(self, url: str) -> None:
        await call(self.client, "browser_navigate", {"url": url})

    async def snapshot(self) -> str:
        return await call(self.client, "browser_snapshot")

    async def act(self, kind: str, **fields: Any) -> str:
        if kind == "wait":
            return await call(self.client, "browser_wait_for", fields)
        return await call(self.client, _TOOLS[kind], fields)

    async def labels(self) -> tuple[list[str], str]:
        text = await call(self.client, "browser_take_screenshot", {"labels": True})
        return re.findall(r"^(e\d+): ", text, re.M), text


class McpHost:
    """An MCP client session held open by a task of its own (the SDK's task groups must
    be entered and left by the same task; module fixtures set up and tear down in two)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.client: Client | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Client:
        self._task = asyncio.create_task(self._run())
        ready = asyncio.create_task(self._ready.wait())
        await asyncio.wait({self._task, ready}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if self.client is None:
            self._task.cancel()
            raise AssertionError(f"the MCP client did not connect: {self._task}")
        return self.client

    async def _run(self) -> None:
        async with http_client(self.url, self.token) as client:
            self.client = client
            self._ready.set()
            await self._stop.wait()

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 30)


@dataclass
class Deck:
    service: Service
    client: httpx.AsyncClient
    ext: ExtBrowser
    ways: dict[str, Way]
    background: list[int]  # the extension tabs (tabIds) that must stay in the background


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deck(
    chromium_path: str, tmp_path_factory: pytest.TempPathFactory, asite: AsyncSite
) -> AsyncIterator[Deck]:
    cfg = service_config()
    # What the answers say, not approval: the extension profile would ask before the form's
    # "Send" (its driver's default, docs/approval.md), and no one is there to answer.
    cfg.profiles["chrome"].approval = "off"
    async with running_service(cfg) as (service, client), contextlib.AsyncExitStack() as stack:
        assert (await client.post("/start")).status_code == 200
        relay: RelayServer | None = service.contexts["chrome"].impl.relay
        assert relay is not None
        ext = await launch_ext_browser(
            chromium_path, tmp_path_factory.mktemp("ext-chromium"), relay
        )
        stack.push_async_callback(ext.close)
        await ext.pair()
        await relay.wait_for_extension(15)
        # Two shared tabs, then a third in front: the first two are background tabs.
        api_id, api_tab = await ext.open_shared(asite.url("/static.html"))
        mcp_id, mcp_tab = await ext.open_shared(asite.url("/static.html"))
        await ext.open_shared(asite.url("/target.html"))
        for target in (api_tab, mcp_tab):  # no engine attached yet: Chrome's own view
            assert await direct_eval(ext, target, "document.visibilityState") == "hidden"
        managed = (await client.post("/tabs/open", json={"url": "about:blank"})).json()
        mcp_url = f"{service.url}/mcp"
        mcp_managed = await stack.enter_async_context(McpHost(mcp_url, service.api_token))
        mcp_ext = await stack.enter_async_context(McpHost(mcp_url, service.api_token))
        await call(mcp_ext, "browser_profiles", {"action": "use", "name": "chrome"})
        await call(mcp_ext, "browser_tabs", {"action": "select", "targetId": mcp_tab})
        ways: dict[str, Way] = {
            "api-managed": ApiWay("api-managed", client, "agent", managed["targetId"]),
            "api-extension": ApiWay("api-extension", client, "chrome", api_tab),
            "mcp-managed": McpWay("mcp-managed", mcp_managed),
            "mcp-extension": McpWay("mcp-extension", mcp_ext),
        }
        yield Deck(service, client, ext, ways, [api_id, mcp_id])


@pytest_asyncio.fixture(params=WAYS, loop_scope="module")
async def way(request: pytest.FixtureRequest, deck: Deck) -> AsyncIterator[Way]:
    yield deck.ways[request.param]
    # Nothing brought the shared tabs to the front (asked of Chrome through the
    # extension's own service worker, not the relay).
    if request.param.endswith("extension"):
        for tab_id in deck.background:
            active = await deck.ext.sw_eval(f"chrome.tabs.get({tab_id}).then((t) => t.active)")
            assert active is False, f"tab {tab_id} came to the front"


async def _click(way: Way, needle: str, **fields: Any) -> str:
    ref = _ref(await way.snapshot(), needle)
    return await asyncio.wait_for(way.act("click", ref=ref, **fields), NO_HANG)


async def test_a_click_whose_effect_arrives_through_a_fetch(way: Way, asite: AsyncSite) -> None:
    await way.goto(asite.url("/fetch.html"))
    out = await _click(way, 'button "Load"')
    assert "1 request finished" in out, out
    assert "Loaded: 42" in await way.snapshot()


async def test_a_link_to_a_page_served_late(way: Way, asite: AsyncSite) -> None:
    await way.goto(asite.url("/link.html"))
    out = await _click(way, 'link "Go slow"')
    assert "navigated to" in out and "/slow-page" in out, out
    assert 'heading "Arrived"' in await way.snapshot()


async def test_a_form_post_and_its_redirect(way: Way, asite: AsyncSite) -> None:
    await way.goto(asite.url("/form.html"))
    ref = _ref(await way.snapshot(), 'textbox "Name"')
    out = await asyncio.wait_for(way.act("type", ref=ref, text="Ann", submit=True), NO_HANG)
    assert "navigated to" in out and "/done" in out, out
    assert "Thanks, Ann" in await way.snapshot()


async def test_a_pushstate_route_that_renders_late(way: Way, asite: AsyncSite) -> None:
    await way.goto(asite.url("/spa.html"))
    out = await _click(way, 'button "Items"')
    assert "(same document)" in out and "1 request finished" in out, out
    assert "Items: 3" in await way.snapshot()


async def test_websocket_and_eventsource_do_not_stall_a_click(
    way: Way, asite: AsyncSite
) -> None:
    await way.goto(asite.url("/live.html"))
    await way.act("wait", text="sse: tick")  # the stream is open
    out = await _click(way, 'button "Load"')
    assert "wait bound" not in out and "1 request finished" in out, out
    assert "Loaded: 42" in await way.snapshot()


async def test_what_css_revealed_after_load_is_in_the_snapshot(
    way: Way, asite: AsyncSite
) -> None:
    await way.goto(asite.url("/reveal.html"))
    await asyncio.sleep(1.0)  # the agent thinking; a CSS animation and transition ran meanwhile
    snap = await way.snapshot()
    assert "Revealed by animation" in snap and "Revealed by transition" in snap, snap


@pytest.mark.parametrize("until", ["text", "networkQuiet"])
async def test_a_debounced_search_then_a_wait(way: Way, asite: AsyncSite, until: str) -> None:
    # The fetch starts 300 ms after typing (the page's debounce): not the action's own
    # consequence. The wait (for the text, or for the network to go quiet) returns once
    # the result is there; no fixed sleep anywhere.
    await way.goto(asite.url("/search.html"))
    await way.act("wait", text="Search")  # the heading: the page is up
    ref = _ref(await way.snapshot(), 'textbox "Search"')
    await way.act("type", ref=ref, text="owls")
    condition: dict[str, Any] = (
        {"text": "Result for owls"} if until == "text" else {"networkQuiet": True}
    )
    await asyncio.wait_for(way.act("wait", **condition), NO_HANG)
    assert "Result for owls" in await way.snapshot()


async def test_wait_ms_per_call_turns_the_wait_off(way: Way, asite: AsyncSite) -> None:
    # The control for the scenarios above, and the per-call bound on every way in.
    await way.goto(asite.url("/fetch.html", d=1500))
    out = await _click(way, 'button "Load"', waitMs=0)
    assert "request" not in out, out
    assert "Loaded: 42" not in await way.snapshot()


# Managed only: Chrome produces no frame to capture for a tab that is not in front, so
# any screenshot of a background shared tab ends at its timeout (a separate matter); the
# labels' refs come from the same code on every profile (engine/screenshot.py).
@pytest.mark.parametrize("way", ["api-managed", "mcp-managed"], indirect=True)
async def test_labels_after_a_navigation_come_from_the_new_document(
    way: Way, asite: AsyncSite
) -> None:
    # Snapshot, then an action navigates: the latest refs belong to the old document.
    await way.goto(asite.url("/link.html", d=50))
    await _click(way, 'link "Go slow"')
    refs, note = await way.labels()
    assert refs, note  # the new page's button "Stay" is labelled
    assert "took one" in note, note
    assert _ref(await way.snapshot(), 'button "Stay"') in refs
