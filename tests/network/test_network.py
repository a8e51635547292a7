"""The agent's network end to end: routes, offline, HAR, origin rules, on real pages.

One real service for the module with its managed headless Chromium and a second
Chromium with the real extension paired with the service's relay; every test runs on
both (``way``), through the HTTP API as an agent session (``X-Browserdeck-Session``)
working in a tab of its own. What the page shows is read from its snapshot; whether a
refused request left the browser is read from the test server's own log
(``NetSite.hits``, ``ws_connections``), never from browserdeck.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from browserdeck.config import Config
from browserdeck.secrets import vault
from browserdeck.session import CLIENT_ENDED
from tests.network.conftest import Deck
from tests.network.site import SECRET, NetSite

pytestmark = pytest.mark.asyncio(loop_scope="module")

WAYS = ["managed", "extension"]
SETTLE = 10.0  # seconds: a bound for what the page shows, not a speed assertion


@dataclass
class Agent:
    """An agent session working in a tab of its own, through the API."""

    deck: Deck
    session: str
    profile: str
    target: str
    notes: list[str] = field(default_factory=list)  # every answer's note, in order

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Browserdeck-Session": self.session}

    @property
    def params(self) -> dict[str, str]:
        return {"profile": self.profile, "targetId": self.target}

    async def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return await self.deck.client.request(
            method, path, params={**self.params, **kw.pop("params", {})}, headers=self.headers, **kw
        )

    async def ok(self, method: str, path: str, **kw: Any) -> Any:
        resp = await self.call(method, path, **kw)
        assert resp.status_code == 200, resp.text
        data = resp.json()
        if data.get("note"):
            self.notes.append(data["note"])
        return data

    async def goto(self, url: str) -> Any:
        return await self.ok("POST", "/navigate", json={"url": url})

    async def snapshot(self) -> str:
        return str((await self.ok("GET", "/snapshot"))["snapshot"])

    async def shows(self, text: str) -> str:
        """The snapshot once it shows ``text`` (the page's effects arrive late)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE
        while True:
            snap = await self.snapshot()
            if text in snap or loop.time() > deadline:
                assert text in snap, snap
                return snap
            await asyncio.sleep(0.1)

    async def click(self, needle: str) -> Any:
        snap = await self.snapshot()
        line = next(x for x in snap.splitlines() if needle in x and "[ref=" in x)
        ref = re.search(r"\[ref=([^\]]+)\]", line)
        assert ref is not None
        return await self.ok("POST", "/act", json={"kind": "click", "ref": ref.group(1)})

    async def requests(self, **filters: Any) -> list[dict[str, Any]]:
        return list((await self.ok("GET", "/network/requests", params=filters))["requests"])

    async def tabs(self) -> list[str]:
        data = (await self.deck.client.get("/tabs", params={"profile": self.profile})).json()
        return [t["targetId"] for t in data["tabs"]]


_counter = iter(range(1, 10_000))


async def new_agent(deck: Deck, way: str, *, own_tab: bool = True) -> Agent:
    """An agent session in a tab of its own: one it opened (``own_tab``; it closes with
    the session), else one the user opened (given back when the session ends); on the
    extension profile always a tab the user shared."""
    session = f"agent-{next(_counter)}"
    if way == "managed":
        opener = {"X-Browserdeck-Session": session} if own_tab else {}
        resp = await deck.client.post("/tabs/open", json={"url": "about:blank"}, headers=opener)
        assert resp.status_code == 200, resp.text
        return Agent(deck, session, "agent", resp.json()["targetId"])
    _, target = await deck.ext.open_shared("about:blank")
    return Agent(deck, session, "chrome", target)


async def end(deck: Deck, *agents: Agent) -> None:
    """End the agents' sessions, as their clients would (sessions.py)."""
    for agent in agents:
        await deck.service.sessions.end(agent.session, CLIENT_ENDED)


@pytest_asyncio.fixture(params=WAYS, loop_scope="module")
async def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture(loop_scope="module")
async def agent(deck: Deck, way: str) -> AsyncIterator[Agent]:
    a = await new_agent(deck, way)
    yield a
    await end(deck, a)


@contextlib.asynccontextmanager
async def settings(deck: Deck, **values: Any) -> AsyncIterator[None]:
    """The global settings changed for the block, then back."""
    before = {k: getattr(deck.service.config, k) for k in values}

    def change(c: Config) -> None:
        for key, value in values.items():
            setattr(c, key, value)

    await deck.service.update_settings(change)
    try:
        yield
    finally:

        def back(c: Config) -> None:
            for key, value in before.items():
                setattr(c, key, value)

        await deck.service.update_settings(back)


# --- routes ----------------------------------------------------------------------


async def test_a_mocked_json_api_is_shown_by_the_page(agent: Agent, site: NetSite) -> None:
    added = await agent.ok(
        "POST",
        "/network/routes",
        json={
            "pattern": "**/api/user",
            "body": '{"name": "Mocked"}',
            "contentType": "application/json",
            "headers": ["X-Mocked-By: browserdeck"],
        },
    )
    assert added["added"]["action"] == "fulfill"
    site.hits.clear()
    await agent.goto(site.url("/app.html"))
    await agent.shows("User: Mocked")
    assert "/api/user" not in [path for _, path, _ in site.hits]  # answered by the route
    listed = await agent.ok("GET", "/network/routes")
    assert [r["pattern"] for r in listed["routes"]] == ["**/api/user"]
    assert listed["routes"][0]["hits"] == 1
    mocked = (await agent.requests(filter="/api/user"))[-1]
    detail = await agent.ok("GET", f"/network/requests/{mocked['index']}", params={"part": "response-headers"})
    answered = {h["name"].lower(): h["value"] for h in detail["responseHeaders"]}
    assert answered["x-mocked-by"] == "browserdeck" and answered["content-type"] == "application/json"


async def test_a_route_adds_and_removes_request_headers(agent: Agent, site: NetSite) -> None:
    await agent.ok(
        "POST",
        "/network/routes",
        json={"pattern": "**/api/user", "headers": ["X-Test: yes"], "removeHeaders": "x-client"},
    )
    site.hits.clear()
    await agent.goto(site.url("/app.html"))
    await agent.shows("User: Real")  # went on to the server
    sent = next(h for _, path, h in site.hits if path == "/api/user")
    names = {k.lower(): v for k, v in sent.items()}
    assert names.get("x-test") == "yes"
    assert "x-client" not in names


async def test_a_blocked_script_does_not_run(agent: Agent, site: NetSite) -> None:
    await agent.goto(site.url("/script.html"))
    await agent.shows("script ran")  # it does, unrouted
    await agent.ok("POST", "/network/routes", json={"pattern": "**/*.js", "abort": True, "resourceType": "script"})
    await agent.goto(site.url("/script.html"))
    await asyncio.sleep(0.3)
    assert "no script" in await agent.snapshot()
    failed = await agent.requests(resourceType="script", failed=True)
    assert failed and failed[-1]["url"].endswith("/lib.js"), failed


async def test_an_aborted_image_is_listed_as_failed(agent: Agent, site: NetSite) -> None:
    await agent.ok("POST", "/network/routes", json={"pattern": "**/pic.png", "abort": True})
    await agent.goto(site.url("/image.html"))
    await agent.shows("image failed")
    images = await agent.requests(resourceType="image")
    assert images[-1]["url"].endswith("/pic.png")
    assert "ERR_FAILED" in images[-1]["failure"] and "aborted by route **/pic.png" in images[-1]["failure"]
    # Removed, it loads again.
    removed = await agent.ok("DELETE", "/network/routes", params={"pattern": "**/pic.png"})
    assert removed["removed"] == 1 and removed["routes"] == []
    await agent.goto(site.url("/image.html"))
    await agent.shows("image loaded")


async def test_a_route_reaches_what_the_browser_had_cached(agent: Agent, site: NetSite) -> None:
    await agent.goto(site.url("/cached.html"))
    await agent.shows("image loaded")  # and kept in the browser's cache
    await agent.ok("POST", "/network/routes", json={"pattern": "**/cached.png", "abort": True})
    await agent.goto(site.url("/cached.html"))
    await agent.shows("image failed")
    await agent.ok("DELETE", "/network/routes")
    await agent.goto(site.url("/cached.html"))
    await agent.shows("image loaded")


async def test_a_regex_route(agent: Agent, site: NetSite) -> None:
    await agent.ok("POST", "/network/routes", json={"pattern": r"/pic\.(png|gif)$", "regex": True, "abort": True})
    await agent.goto(site.url("/image.html"))
    await agent.shows("image failed")
    await agent.goto(site.url("/app.html"))  # the rest of the tab's requests go on
    await agent.shows("User: Real")


async def test_offline_then_online(agent: Agent, site: NetSite) -> None:
    await agent.goto(site.url("/online.html"))
    await agent.ok("POST", "/network/state", json={"state": "offline"})
    await agent.click('button "Ping"')
    await agent.shows("Offline")
    await agent.ok("POST", "/network/state", json={"state": "online"})
    await agent.click('button "Ping"')
    await agent.shows("Online")


async def test_two_agents_one_route_each_neither_sees_the_others(
    deck: Deck, way: str, site: NetSite
) -> None:
    a, b = await new_agent(deck, way), await new_agent(deck, way)
    try:
        for who, name in ((a, "Ann"), (b, "Bob")):
            await who.ok("POST", "/network/routes", json={"pattern": "**/api/user", "body": json.dumps({"name": name})})
        await a.goto(site.url("/app.html"))
        await b.goto(site.url("/app.html"))
        await a.shows("User: Ann")
        await b.shows("User: Bob")
        for who in (a, b):
            listed = (await who.ok("GET", "/network/routes"))["routes"]
            assert len(listed) == 1, listed
        assert "Ann" in (await a.ok("GET", "/network/routes"))["routes"][0]["said"]
        # A third session, unrouted, sees the real thing on a tab of its own.
        c = await new_agent(deck, way)
        await c.goto(site.url("/app.html"))
        await c.shows("User: Real")
        await end(deck, c)
    finally:
        await end(deck, a, b)


async def test_a_popup_takes_its_openers_routes(deck: Deck, way: str, site: NetSite) -> None:
    a = await new_agent(deck, way)
    try:
        await a.ok("POST", "/network/routes", json={"pattern": "**/api/user", "body": '{"name": "Ann"}'})
        await a.goto(site.url("/opener.html"))
        before = set(await a.tabs())
        await a.click('button "Open"')
        for _ in range(100):
            popups = set(await a.tabs()) - before
            if popups:
                break
            await asyncio.sleep(0.1)
        assert len(popups) == 1
        # Looked at by a session with no routes of its own: the opener's hold there.
        observer = Agent(deck, f"{a.session}-observer", a.profile, popups.pop())
        await observer.shows("User: Ann")
    finally:
        await end(deck, a)


async def test_routes_end_with_their_session(deck: Deck, way: str, site: NetSite) -> None:
    a = await new_agent(deck, way, own_tab=False)  # the tab stays when the session ends
    await a.ok("POST", "/network/routes", json={"pattern": "**/api/user", "body": '{"name": "Ann"}'})
    await a.goto(site.url("/app.html"))
    await a.shows("User: Ann")
    await end(deck, a)
    # The same tab, looked at by another session: on the network as it is.
    b = Agent(deck, f"{a.session}-after", a.profile, a.target)
    assert (await b.ok("GET", "/network/routes"))["routes"] == []
    await b.goto(site.url("/app.html"))
    await b.shows("User: Real")
    await end(deck, b)


async def test_a_profile_wide_route_reaches_every_agents_tab(
    deck: Deck, way: str, site: NetSite
) -> None:
    a, b = await new_agent(deck, way), await new_agent(deck, way)
    try:
        await a.ok(
            "POST",
            "/network/routes",
            json={"pattern": "**/api/user", "body": '{"name": "Everyone"}', "scope": "profile"},
        )
        await b.goto(site.url("/app.html"))
        await b.shows("User: Everyone")
        assert (await b.ok("GET", "/network/routes"))["routes"][0]["scope"] == "profile"
        await b.ok("DELETE", "/network/routes", params={"scope": "profile"})
        await b.goto(site.url("/app.html"))
        await b.shows("User: Real")
    finally:
        await end(deck, a, b)


# --- HAR -------------------------------------------------------------------------


async def test_a_har_of_a_page_with_a_delayed_fetch(agent: Agent, site: NetSite) -> None:
    started = await agent.ok("POST", "/network/har/start")
    assert started["recording"] is True and started["scope"] == "tab"
    await agent.goto(site.url("/delayed.html"))
    await agent.shows("Got: yes")
    stopped = await agent.ok("POST", "/network/har/stop")
    path = Path(stopped["path"])
    assert path.is_absolute() and path.suffix == ".har"
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and "token-42" not in text
    har = json.loads(text)["log"]
    slow = [e for e in har["entries"] if "/api/slow" in e["request"]["url"]]
    assert len(slow) == 1, [e["request"]["url"] for e in har["entries"]]
    entry = slow[0]
    assert entry["response"]["status"] == 200
    assert json.loads(entry["response"]["content"]["text"]) == {"slow": "yes"}
    assert entry["timings"]["wait"] >= 250  # the server held it 300 ms
    assert entry["time"] >= entry["timings"]["wait"]
    auth = [h for h in entry["request"]["headers"] if h["name"].lower() == "authorization"]
    assert auth == [{"name": "Authorization", "value": "[redacted]"}]
    assert stopped["entries"] == len(har["entries"]) and har["pages"][0]["id"] == entry["pageref"]


async def test_a_har_holds_no_value_of_the_vault(agent: Agent, site: NetSite) -> None:
    """A value of the user's vault that a response carries is its placeholder in the HAR."""
    vault.shared().set("username", [site.url("/").rstrip("/")], "Real")
    try:
        await agent.ok("POST", "/network/har/start")
        await agent.goto(site.url("/app.html"))
        await agent.shows("User: ••••")  # the snapshot masks it too
        stopped = await agent.ok("POST", "/network/har/stop")
    finally:  # the module's service (and its vault) outlives this test
        vault.shared().remove("username")
    text = Path(stopped["path"]).read_text(encoding="utf-8")
    assert "<secret>username</secret>" in text
    assert '\\"Real\\"' not in text and "User: Real" not in text


async def test_a_session_har_holds_every_tab_it_works_in(deck: Deck, way: str, site: NetSite) -> None:
    a = await new_agent(deck, way)
    other = await new_agent(deck, way)
    second = Agent(deck, a.session, other.profile, other.target)  # a's, in another tab
    try:
        started = await a.ok("POST", "/network/har/start", json={"session": True, "content": "omit"})
        assert started["scope"] == "session"
        running = await a.call("POST", "/network/har/start")
        assert running.status_code == 409 and running.json()["error"]["code"] == "har_running"
        await a.goto(site.url("/app.html"))
        await second.goto(site.url("/image.html"))
        await a.shows("User: Real")
        await second.shows("image loaded")
        stopped = await a.ok("POST", "/network/har/stop")
        har = json.loads(Path(stopped["path"]).read_text(encoding="utf-8"))["log"]
        assert stopped["pages"] == 2 and len(har["pages"]) == 2
        urls = {e["request"]["url"] for e in har["entries"]}
        assert {site.url("/api/user"), site.url("/pic.png")} <= urls
        assert all("text" not in e["response"]["content"] for e in har["entries"])  # omit
    finally:
        await end(deck, a, other)


async def test_har_stop_without_a_recording_says_so(agent: Agent) -> None:
    resp = await agent.call("POST", "/network/har/stop")
    assert resp.status_code == 404, resp.text
    assert resp.json()["error"]["code"] == "har_not_running"
    assert "POST /network/har/start" in resp.json()["error"]["hint"]


async def test_request_details_are_bounded_and_redacted(agent: Agent, site: NetSite) -> None:
    await agent.goto(site.url("/delayed.html"))
    await agent.shows("Got: yes")
    slow = (await agent.requests(filter="/api/slow"))[-1]
    detail = await agent.ok("GET", f"/network/requests/{slow['index']}")
    auth = [h for h in detail["requestHeaders"] if h["name"].lower() == "authorization"]
    assert auth == [{"name": "Authorization", "value": "[redacted]"}]
    assert json.loads(detail["responseBody"]) == {"slow": "yes"}
    page = (await agent.requests(resourceType="document"))[-1]
    cut = await agent.ok(
        "GET", f"/network/requests/{page['index']}", params={"part": "response-body", "maxChars": 100}
    )
    assert len(cut["responseBody"]) == 100 and "maxChars" in cut["bodyNote"]
    assert "requestHeaders" not in cut
    missing = await agent.call("GET", "/network/requests/99999")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "request_not_found"


async def test_requests_filter_by_type_method_and_status(agent: Agent, site: NetSite) -> None:
    await agent.goto(site.url("/app.html"))
    await agent.shows("User: Real")
    for _ in range(50):  # the page has the answer; the engine hears "finished" a moment later
        fetches = await agent.requests(resourceType="fetch", method="get", status=200)
        if fetches:
            break
        await asyncio.sleep(0.1)
    assert [r["url"] for r in fetches] == [site.url("/api/user")]
    assert await agent.requests(status=404) == []
    assert [r["url"] for r in await agent.requests(filter="APP.HTML")] == [site.url("/app.html")]


# --- where an agent may go ----------------------------------------------------------


async def test_a_navigation_to_a_blocked_origin_is_refused(deck: Deck, agent: Agent, site: NetSite) -> None:
    async with settings(deck, blocked_origins=["localhost"]):
        site.hits.clear()
        resp = await agent.call("POST", "/navigate", json={"url": site.other + "/page.html"})
        assert resp.status_code == 403, resp.text
        error = resp.json()["error"]
        assert error["code"] == "origin_refused"
        assert "blockedOrigins rule 'localhost'" in error["message"]
        # Refused at the front door: the tab never even tried.
        assert await agent.requests(filter="/page.html") == []
        # A redirect to it is refused in the browser (the door saw an allowed URL).
        resp = await agent.call(
            "POST", "/navigate", json={"url": site.url("/redirect?to=" + site.other + "/page.html")}
        )
        assert resp.status_code == 403, resp.text
        assert "blockedOrigins rule 'localhost'" in resp.json()["error"]["message"]
        # A link the page follows itself is refused too.
        await agent.goto(site.origins_page())
        await agent.click('link "Other site"')
        snap = await agent.snapshot()
        assert 'heading "Origins"' in snap
        assert "localhost" not in site.hosts()
        # A new tab to it is refused before it opens.
        before = await agent.tabs()
        resp = await deck.client.post(
            "/tabs/open", params={"profile": agent.profile}, json={"url": site.other + "/page.html"},
            headers=agent.headers,
        )
        assert resp.status_code == 403 and resp.json()["error"]["code"] == "origin_refused"
        assert await agent.tabs() == before
    assert not [h for h in site.hosts() if h.startswith("localhost")]


async def test_a_popup_to_a_blocked_origin_is_refused(deck: Deck, agent: Agent, site: NetSite) -> None:
    async with settings(deck, blocked_origins=["localhost"]):
        await agent.goto(site.origins_page())
        before = await agent.tabs()
        site.hits.clear()
        await agent.click('button "Popup"')
        await agent.shows("popup: refused")
        # Said once, in the click's answer or (the page tells it a moment later) the next.
        said = [n for n in agent.notes if "refused a popup" in n]
        assert len(said) == 1 and "blockedOrigins rule 'localhost'" in said[0], agent.notes
        await agent.click('link "Other tab"')  # target=_blank
        await asyncio.sleep(0.5)
        assert await agent.tabs() == before
        assert not [h for h in site.hosts() if h.startswith("localhost")]
        refused = await agent.requests(failed=True, filter="/page.html")
        assert refused and "blockedOrigins rule 'localhost'" in refused[-1]["failure"]


async def test_a_websocket_to_a_blocked_origin_is_refused(deck: Deck, agent: Agent, site: NetSite) -> None:
    async with settings(deck, blocked_origins=["localhost"]):
        # An allowed one opens (the same server, by its other name).
        await agent.goto(site.origins_page(ws_host="127.0.0.1"))
        await agent.click('button "Socket"')
        await agent.shows("ws: open")
        site.ws_connections.clear()
        await agent.goto(site.origins_page(ws_host="localhost"))
        await agent.click('button "Socket"')
        await agent.shows("ws: refused")
        await asyncio.sleep(0.3)
        assert site.ws_connections == []
        listed = await agent.requests(resourceType="websocket")
        assert listed and "blockedOrigins rule 'localhost'" in listed[-1]["failure"]


async def test_refused_subresources_and_event_streams_are_listed(
    deck: Deck, agent: Agent, site: NetSite
) -> None:
    async with settings(deck, allowed_origins=["127.0.0.1"], blocked_origins=[]):
        site.hits.clear()
        await agent.goto(site.origins_page())
        await agent.click('button "Stream"')
        await agent.shows("es: error")
        refused = await agent.requests(failed=True)
        by_type = {r["resourceType"]: r for r in refused}
        assert "not in allowedOrigins" in by_type["image"]["failure"]
        assert "not in allowedOrigins" in by_type["eventsource"]["failure"]
        assert not [h for h in site.hosts() if h.startswith("localhost")]


async def test_the_rules_lift_when_the_setting_is_emptied(deck: Deck, agent: Agent, site: NetSite) -> None:
    async with settings(deck, blocked_origins=["localhost"]):
        await agent.goto(site.origins_page())
    site.hits.clear()
    await agent.goto(site.origins_page())
    await agent.click('button "Popup"')
    await agent.shows("popup: opened")
    assert "localhost" in " ".join(site.hosts("/pic.png"))
