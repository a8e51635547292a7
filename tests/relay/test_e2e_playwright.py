"""Playwright through the relay and the real extension in real Chromium.

Effects are checked through a second channel where it matters: Chromium's own
DevTools port (``ext.cdp``), never only through the relay under test.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Playwright

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.relay.server import RelayServer
from tests.relay.harness import ExtBrowser, Site, wait_until


@asynccontextmanager
async def connected(pw: Playwright, relay: RelayServer) -> AsyncIterator[Browser]:
    browser = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=relay.auth_headers())
    try:
        yield browser
    finally:
        await browser.close()


async def direct_eval(ext: ExtBrowser, target_id: str, expression: str) -> object:
    """Evaluate in a tab through Chromium's own DevTools port (not the relay)."""
    attached = await ext.cdp.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
    sid = attached["sessionId"]
    try:
        reply = await ext.cdp.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session_id=sid
        )
        return reply["result"].get("value")
    finally:
        await ext.cdp.send("Target.detachFromTarget", {"sessionId": sid})


def attached_in_chromium(targets: list[dict[str, object]], target_id: str) -> bool:
    return any(t["targetId"] == target_id and t["attached"] for t in targets)


async def test_shared_tabs_are_listed_and_attached_lazily(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    _, one = await ext.open_shared(site.url("/page?title=One"))
    _, two = await ext.open_shared(site.url("/page?title=Two"))
    _, unshared = await ext.open_tab(site.url("/page?title=Private"))
    await wait_until(lambda: relay.status()["tabs"] == 2, what="two shared tabs")

    async with httpx.AsyncClient() as http:
        listed = (await http.get(f"{relay.cdp_url}/json/list", headers=relay.auth_headers())).json()
    assert {t["id"] for t in listed} == {one, two}
    for entry in listed:
        assert entry["type"] == "page" and entry["title"] in ("One", "Two")
        assert entry["url"].startswith(site.base)
        assert (
            entry["webSocketDebuggerUrl"]
            == f"ws://127.0.0.1:{relay.port}/devtools/page/{entry['id']}"
        )

    # Sharing attaches nothing: the debugger comes with the first client command.
    targets = await ext.browser_targets()
    assert not attached_in_chromium(targets, one) and not attached_in_chromium(targets, two)

    async with connected(pw, relay) as browser:
        pages = browser.contexts[0].pages
        assert sorted([await p.title() for p in pages]) == ["One", "Two"]
        targets = await ext.browser_targets()
        assert attached_in_chromium(targets, one) and attached_in_chromium(targets, two)
        assert not attached_in_chromium(targets, unshared)
        assert relay.status()["attachedTabs"] == 2

    # The last client left: the debugger lets go of the tabs (no banner, no leftovers).
    async def detached() -> bool:
        targets = await ext.browser_targets()
        return not attached_in_chromium(targets, one) and not attached_in_chromium(targets, two)

    for _ in range(100):
        if await detached():
            break
        await asyncio.sleep(0.05)
    assert await detached()


async def test_new_page_navigate_and_close(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    async with connected(pw, relay) as browser:
        context = browser.contexts[0]
        assert context.pages == []
        page = await context.new_page()
        response = await page.goto(site.url("/page?title=Fresh"))
        assert response is not None and response.status == 200
        assert await page.title() == "Fresh"
        await page.goto(site.url("/form?title=Second"))
        await page.fill("#name", "relay")
        await page.click("#go")
        assert await page.text_content("#out") == "hello relay"

        # It is a real tab of the browser, shared, and listed by the relay.
        targets = await ext.browser_targets()
        tab = next(t for t in targets if t["url"] == site.url("/form?title=Second"))
        assert (
            await direct_eval(
                ext, str(tab["targetId"]), "document.getElementById('out').textContent"
            )
            == "hello relay"
        )
        assert relay.status()["tabs"] == 1

        await page.close()
        await wait_until(lambda: relay.status()["tabs"] == 0, what="the tab to go")
        targets = await ext.browser_targets()
        assert all(t["targetId"] != tab["targetId"] for t in targets)


async def test_snapshot_and_click_through_the_engine(
    ext: ExtBrowser, relay: RelayServer, site: Site
) -> None:
    from browserdeck.engine import Engine
    from browserdeck.engine.options import ClickAct, SnapshotOptions, TypeAct

    _, target = await ext.open_shared(site.url("/form?title=Engine"))
    engine = Engine()
    await engine.start()
    try:
        snap = await engine.snapshot(relay.cdp_url, target, relay.auth_headers(), SnapshotOptions())
        text = snap.snapshot
        name_ref = re.search(r'textbox "Name" \[ref=([^\]]+)\]', text)
        go_ref = re.search(r'button "Greet" \[ref=([^\]]+)\]', text)
        assert name_ref and go_ref, text
        await engine.act(
            relay.cdp_url,
            target,
            relay.auth_headers(),
            TypeAct(kind="type", ref=name_ref[1], text="deck"),
        )
        await engine.act(
            relay.cdp_url, target, relay.auth_headers(), ClickAct(kind="click", ref=go_ref[1])
        )
        assert (
            await direct_eval(ext, target, "document.getElementById('out').textContent")
            == "hello deck"
        )
    finally:
        await engine.stop()


async def test_aria_snapshot_refs_click(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    _, target = await ext.open_shared(site.url("/page?title=Aria"))
    async with connected(pw, relay) as browser:
        page = browser.contexts[0].pages[0]
        snapshot = await page.aria_snapshot(mode="ai")
        ref = re.search(r'button "Click me" \[ref=([^\]]+)\]', snapshot)
        assert ref, snapshot
        await page.locator(f"aria-ref={ref[1]}").click()
    assert await direct_eval(ext, target, "document.getElementById('b').textContent") == "clicked 1"


async def test_cross_origin_iframe(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    tab_id, _ = await ext.open_shared(site.url("/frames?title=Host"))
    async with connected(pw, relay) as browser:
        page = browser.contexts[0].pages[0]
        frame_url = f"{site.other}/frame?title=Inner"
        for _ in range(100):
            frame = page.frame(url=frame_url)
            if frame is not None:
                break
            await asyncio.sleep(0.05)
        assert frame is not None, [f.url for f in page.frames]
        # It really is out of process: Chrome attached it as a child session of the tab.
        tab = relay.relay.tabs[tab_id]
        assert any(c.target_info.get("type") == "iframe" for c in tab.children.values())
        assert await frame.evaluate("location.origin") == site.other
        await frame.click("#ib")
        assert await frame.text_content("#ib") == "frame clicked"
        snapshot = await page.aria_snapshot(mode="ai")
        assert 'button "frame clicked"' in snapshot


async def test_popups_are_attached_with_their_opener(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    await ext.open_shared(site.url("/opener?title=Opener"))
    async with connected(pw, relay) as browser:
        context = browser.contexts[0]
        page = context.pages[0]
        await page.bring_to_front()
        async with page.expect_popup() as popup_info:
            await page.click("#link")
        popup = await popup_info.value
        await popup.wait_for_load_state()
        assert await popup.title() == "Popup"
        assert await popup.opener() == page

        async with page.expect_popup() as second_info:
            await page.click("#wo")
        second = await second_info.value
        await second.wait_for_load_state()
        assert await second.title() == "Opened"
        await second.bring_to_front()
        await second.click("#b")
        assert await second.text_content("#b") == "clicked 1"
        assert relay.status()["tabs"] == 3


async def test_a_popup_that_loads_while_playwright_attaches_still_reaches_load(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flake of the test above, made to happen every time.

    A tab the extension shares is never paused for the debugger as Chrome pauses a new
    target, so a popup can commit and load while Playwright attaches. Playwright, seeing
    the initial empty document in ``Page.getFrameTree``, listens for lifecycle events
    only from the reply to ``Page.setLifecycleEventsEnabled`` on, and Chrome replays the
    popup's ``load`` before that reply. Here the popup's page is held on the test site
    until its frame tree has been read, then allowed to load completely (seen through
    Chromium's own port) before ``Page.setLifecycleEventsEnabled`` is passed on: the
    seam is the relay's link to the extension, everything else is real.
    """
    opener_tab, _ = await ext.open_shared(site.url("/opener?title=Opener&popup_hold=late-popup"))
    link = relay.relay.link
    assert link is not None
    forward = link.forward
    frame_tree_urls: list[str] = []
    frame_tree_read = asyncio.Event()

    async def delayed_forward(
        tab_id: int,
        session_id: str | None,
        cdp_method: str,
        params_json: str,
        handler: Any,
        *,
        reply_timeout: float | None,
    ) -> None:
        if tab_id != opener_tab and not session_id:
            if cdp_method == "Page.getFrameTree":
                inner = handler

                async def handler(body: str | None, error: dict[str, Any] | None) -> None:
                    frame_tree_urls.append(json.loads(body or "{}")["frameTree"]["frame"]["url"])
                    frame_tree_read.set()
                    await inner(body, error)

            elif cdp_method == "Page.setLifecycleEventsEnabled":
                await asyncio.wait_for(frame_tree_read.wait(), 10)
                await load_popup(relay.relay.tabs[tab_id].target_id)
        await forward(
            tab_id, session_id, cdp_method, params_json, handler, reply_timeout=reply_timeout
        )

    async def load_popup(target_id: str) -> None:
        attached = await ext.cdp.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        sid = attached["sessionId"]
        try:
            await ext.cdp.send("Page.enable", session_id=sid)
            loaded = ext.cdp.expect_event("Page.loadEventFired")
            site.gate("late-popup").set()
            await asyncio.wait_for(loaded, 10)
        finally:
            await ext.cdp.send("Target.detachFromTarget", {"sessionId": sid})

    monkeypatch.setattr(link, "forward", delayed_forward)
    async with connected(pw, relay) as browser:
        page = browser.contexts[0].pages[0]
        async with page.expect_popup() as popup_info:
            await page.click("#link")
        popup = await popup_info.value
        # The case this is about: Playwright took the popup for its initial empty page.
        assert frame_tree_urls == [""]
        await popup.wait_for_load_state(timeout=10_000)
        assert await popup.title() == "Popup"


async def test_detach_from_target_from_the_root(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    _, target = await ext.open_shared(site.url("/page?title=Detach"))
    # A raw client: auto-attach, detach the page's session from the root, attach again.
    cdp = await CDPClient.connect(f"ws://127.0.0.1:{relay.port}/cdp", headers=relay.auth_headers())
    try:
        attached = cdp.expect_event("Target.attachedToTarget")
        await cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
        )
        event = attached.result()  # already there: events come before the reply
        sid = event["sessionId"]
        assert event["targetInfo"]["targetId"] == target
        value = await cdp.send("Runtime.evaluate", {"expression": "document.title"}, session_id=sid)
        assert value["result"]["value"] == "Detach"

        detached = cdp.expect_event("Target.detachedFromTarget")
        assert await cdp.send("Target.detachFromTarget", {"sessionId": sid}) == {}
        assert (await detached)["sessionId"] == sid
        try:
            await cdp.send("Runtime.evaluate", {"expression": "1"}, session_id=sid)
            raise AssertionError("a detached session still answered")
        except Exception as exc:
            assert "Session with given id not found" in str(exc)
        # Unknown sessions: Chrome's error (the conformance suite compares it with Chrome).
        with pytest.raises(CDPError, match="No session with given id"):
            await cdp.send("Target.detachFromTarget", {"sessionId": "nope"})

        again = await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        value = await cdp.send(
            "Runtime.evaluate", {"expression": "6*7"}, session_id=again["sessionId"]
        )
        assert value["result"]["value"] == 42
    finally:
        await cdp.close()

    # Playwright's own CDP sessions (new_cdp_session → attachToBrowserTarget) detach cleanly too.
    async with connected(pw, relay) as browser:
        page = browser.contexts[0].pages[0]
        session = await browser.contexts[0].new_cdp_session(page)
        info = await session.send("Target.getTargetInfo")
        assert info["targetInfo"]["targetId"] == target
        await session.send("Runtime.enable")  # replayed contexts, no duplicates for the page
        result = await session.send(
            "Runtime.evaluate", {"expression": "document.title", "returnByValue": True}
        )
        assert result["result"]["value"] == "Detach"
        await session.detach()
        assert await page.evaluate("1 + 1") == 2
        await page.click("#b")
        assert await page.text_content("#b") == "clicked 1"


async def test_cookies_through_the_relay(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    await ext.open_shared(site.url("/page?title=Cookies"))
    async with connected(pw, relay) as browser:
        context = browser.contexts[0]
        await context.add_cookies([{"name": "bd", "value": "relay", "url": site.base}])
        page = context.pages[0]
        assert "bd=relay" in await page.evaluate("document.cookie")
        assert any(c["name"] == "bd" for c in await context.cookies(site.base))


async def test_restricted_pages_are_hidden_and_come_back(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    settings_tab, _ = await ext.open_tab("chrome://version/")
    await ext.share(settings_tab)
    _, target = await ext.open_shared(site.url("/page?title=Roaming"))
    await wait_until(lambda: relay.status()["tabs"] == 1, what="one visible tab")
    async with connected(pw, relay) as browser:
        context = browser.contexts[0]
        assert [p.url for p in context.pages] == [site.url("/page?title=Roaming")]
        page = context.pages[0]
        closed = asyncio.Event()
        page.on("close", lambda _p: closed.set())
        # The user navigates the shared tab to a browser page: agents lose sight of it...
        attached = await ext.cdp.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )
        await ext.cdp.send(
            "Page.navigate", {"url": "chrome://version/"}, session_id=attached["sessionId"]
        )
        await asyncio.wait_for(closed.wait(), 10)
        await wait_until(lambda: relay.status()["tabs"] == 0, what="the tab to be hidden")
        # ...and get it back when it returns to the web.
        async with context.expect_page() as back_info:
            await ext.cdp.send(
                "Page.navigate",
                {"url": site.url("/page?title=Back")},
                session_id=attached["sessionId"],
            )
        back = await back_info.value
        await back.wait_for_load_state()
        assert await back.title() == "Back"
        await ext.cdp.send("Target.detachFromTarget", {"sessionId": attached["sessionId"]})


async def test_two_clients_share_a_tab_in_multi_client_mode(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    relay.client_mode = "multi-client"
    await ext.open_shared(site.url("/page?title=Shared"))
    plain = {"Authorization": relay.auth_headers()["Authorization"]}
    first = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=plain)
    try:
        page1 = first.contexts[0].pages[0]
        assert await page1.evaluate("document.title") == "Shared"
        # The second client's Runtime.enable hits a tab whose Runtime is already on: the
        # relay replays the live contexts, otherwise this evaluate would hang.
        second = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=plain)
        try:
            page2 = second.contexts[0].pages[0]
            assert await page2.evaluate("document.title") == "Shared"
            await page2.click("#b")
            assert await page1.text_content("#b") == "clicked 1"
            await page1.click("#b")
            assert await page2.text_content("#b") == "clicked 2"
        finally:
            await second.close()
        # The first client is unaffected by the second leaving.
        assert await page1.evaluate("window.clicks") == 2
        await page1.reload()
        assert await page1.evaluate("window.clicks") == 0
    finally:
        await first.close()


async def test_screenshot_bigger_than_a_mebibyte(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    await ext.open_shared(site.url("/page?title=Big"))
    async with connected(pw, relay) as browser:
        page = browser.contexts[0].pages[0]
        # Incompressible noise makes a PNG of several MiB (websockets' default limit is 1 MiB).
        await page.evaluate(
            """() => { const c = document.createElement('canvas'); c.width = 1200; c.height = 800;
            const g = c.getContext('2d'); const d = g.createImageData(1200, 800);
            for (let i = 0; i < d.data.length; i++) d.data[i] = (Math.random() * 256) | 0;
            g.putImageData(d, 0, 0); document.body.prepend(c); }"""
        )
        shot = await page.screenshot(full_page=True)
        assert len(shot) > 1_500_000
        big = await page.evaluate("'x'.repeat(3 * 1024 * 1024).length")
        assert big == 3 * 1024 * 1024
        text = await page.evaluate("'y'.repeat(2 * 1024 * 1024)")
        assert len(text) == 2 * 1024 * 1024
        assert json.dumps(text)[:3] == '"yy'


async def test_cancel_in_chromes_banner_stops_sharing_every_tab(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    first, _ = await ext.open_shared(site.url("/page?title=A"))
    await ext.open_shared(site.url("/page?title=B"))
    async with connected(pw, relay) as browser:
        pages = browser.contexts[0].pages
        assert len(pages) == 2 and await pages[0].evaluate("1") == 1
        gone = [asyncio.Event(), asyncio.Event()]
        for page, event in zip(pages, gone, strict=True):
            page.on("close", lambda _p, e=event: e.set())
        # Headless Chrome has no banner to click: do what Chrome does when the user
        # presses Cancel (drop the debugger, then notify the extension).
        await ext.sw_eval(
            f"chrome.debugger.detach({{tabId: {first}}})"
            f".then(() => browserdeck.onDebuggerDetach({{tabId: {first}}}, 'canceled_by_user'))"
        )
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in gone)), 10)
        state = await ext.sw_eval("browserdeck.snapshot()")
        assert state["status"] == "paused" and state["shared"] == []
        assert relay.status()["tabs"] == 0
    targets = await ext.browser_targets()
    assert not any(t["attached"] for t in targets if t["url"].startswith(site.base))
