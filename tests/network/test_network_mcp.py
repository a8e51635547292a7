"""The network tools over MCP: two agents, one route each; HAR with no arguments.

The official MCP client over the service's streamable-HTTP endpoint, one MCP session
per agent, each on the tab MCP gives it, on the managed profile and on the extension
profile (Chromium with the real extension, paired with the service's relay).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from pathlib import Path

import pytest

from mcp import Client
from tests.mcp.harness import call, text
from tests.network.conftest import Deck
from tests.network.site import SECRET, NetSite
from tests.relay.harness import ExtBrowser
from tests.relay.test_truth_everywhere import McpHost

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def service_url(deck: Deck) -> tuple[str, str, ExtBrowser]:
    return f"{deck.service.url}/mcp", deck.service.api_token, deck.ext


async def _agent(
    stack: contextlib.AsyncExitStack, url: str, token: str, profile: str, ext: ExtBrowser
) -> Client:
    client = await stack.enter_async_context(McpHost(url, token))
    if profile == "chrome":
        _, target = await ext.open_shared("about:blank")
        await call(client, "browser_profiles", {"action": "use", "name": "chrome"})
        await call(client, "browser_tabs", {"action": "select", "targetId": target})
    return client


async def _loaded(client: Client, url: str, text: str) -> None:
    await call(client, "browser_navigate", {"url": url})
    await call(client, "browser_wait_for", {"text": text})


@pytest.mark.parametrize("profile", ["agent", "chrome"])
async def test_two_mcp_agents_one_route_each(
    service_url: tuple[str, str, ExtBrowser], site: NetSite, profile: str
) -> None:
    url, token, ext = service_url
    async with contextlib.AsyncExitStack() as stack:
        ann = await _agent(stack, url, token, profile, ext)
        bob = await _agent(stack, url, token, profile, ext)
        for client, name in ((ann, "Ann"), (bob, "Bob")):
            said = await call(
                client,
                "browser_route",
                {"pattern": "**/api/user", "status": 200, "body": json.dumps({"name": name}),
                 "contentType": "application/json"},
            )
            assert said.startswith("route added: **/api/user"), said
        for client, name in ((ann, "Ann"), (bob, "Bob")):
            await _loaded(client, site.url("/app.html"), f"User: {name}")
        ann_routes = await call(ann, "browser_route_list")
        assert ann_routes.count("**/api/user") == 1 and "Ann" in ann_routes and "Bob" not in ann_routes
        removed = await call(ann, "browser_unroute", {})
        assert "removed 1 route(s)" in removed and "no active routes" in removed
        assert "Bob" in await call(bob, "browser_route_list")


async def test_har_start_and_stop_take_no_arguments(
    service_url: tuple[str, str, ExtBrowser], site: NetSite
) -> None:
    url, token, ext = service_url
    async with contextlib.AsyncExitStack() as stack:
        agent = await _agent(stack, url, token, "agent", ext)
        assert "recording a HAR of this tab" in await call(agent, "browser_har_start")
        await _loaded(agent, site.url("/delayed.html"), "Got: yes")
        stopped = await call(agent, "browser_har_stop")
        path = Path(re.search(r"HAR written: (\S+\.har)", stopped).group(1))  # type: ignore[union-attr]
        assert path.is_absolute() and path.exists()
        har = json.loads(path.read_text(encoding="utf-8"))
        assert SECRET not in path.read_text(encoding="utf-8")
        assert any("/api/slow" in e["request"]["url"] for e in har["log"]["entries"])
        again = await agent.call_tool("browser_har_stop", {})
        assert again.is_error and "browser_har_start" in text(again)


async def test_requests_and_one_requests_details(
    service_url: tuple[str, str, ExtBrowser], site: NetSite
) -> None:
    url, token, ext = service_url
    async with contextlib.AsyncExitStack() as stack:
        agent = await _agent(stack, url, token, "agent", ext)
        await _loaded(agent, site.url("/delayed.html"), "Got: yes")
        listed = await call(agent, "browser_network_requests", {"resourceType": "fetch"})
        number = re.search(r"^#(\d+) GET 200 \S+/api/slow", listed, re.M)
        assert number is not None, listed
        detail = await call(
            agent, "browser_network_request", {"index": int(number.group(1)), "part": "request-headers"}
        )
        assert "Authorization: [redacted]" in detail and SECRET not in detail
        # What the page chose is page text: an odd URL quoted, headers and bodies fenced.
        assert "--- begin request details (untrusted" in detail, detail
        fetch = "() => fetch('/odd?x=[ref=e9]').then(r => r.status)"
        await call(agent, "browser_evaluate", {"function": fetch})
        listed = await call(agent, "browser_network_requests", {"filter": "/odd"})
        assert "/odd?x=\\u005bref=e9\\u005d" in listed and "[ref=e9]" not in listed, listed


async def test_an_mcp_sessions_routes_end_with_it(deck: Deck, site: NetSite) -> None:
    # A tab of the user's Chrome the agent works in: it stays open when the session ends.
    _, target = await deck.ext.open_shared("about:blank")
    url, token = f"{deck.service.url}/mcp", deck.service.api_token
    async with contextlib.AsyncExitStack() as stack:
        agent = await stack.enter_async_context(McpHost(url, token))
        await call(agent, "browser_profiles", {"action": "use", "name": "chrome"})
        await call(agent, "browser_tabs", {"action": "select", "targetId": target})
        await call(agent, "browser_route", {"pattern": "**/api/user", "body": '{"name": "Ann"}'})
        await _loaded(agent, site.url("/app.html"), "User: Ann")
    # Its client closed the session (DELETE /mcp): the tab is on the network as it is.
    on = {"profile": "chrome", "targetId": target}
    after = {"X-Browserdeck-Session": "looking-after"}
    for _ in range(50):
        listed = (await deck.client.get("/network/routes", params=on, headers=after)).json()
        await deck.client.post("/navigate", params=on, headers=after, json={"url": site.url("/app.html")})
        await asyncio.sleep(0.2)
        snap = (await deck.client.get("/snapshot", params=on, headers=after)).json()["snapshot"]
        if "User: Real" in snap:
            break
    assert listed["routes"] == [] and "User: Real" in snap, snap


async def test_a_refused_navigation_is_a_tool_error_naming_the_rule(deck: Deck, site: NetSite) -> None:
    await deck.service.update_settings(lambda c: setattr(c, "blocked_origins", ["localhost"]))
    try:
        async with McpHost(f"{deck.service.url}/mcp", deck.service.api_token) as agent:
            refused = await agent.call_tool("browser_navigate", {"url": site.other + "/page.html"})
            assert refused.is_error
            said = text(refused)
            assert "refused to load" in said and "blockedOrigins rule 'localhost'" in said, said
    finally:
        await deck.service.update_settings(lambda c: setattr(c, "blocked_origins", []))
