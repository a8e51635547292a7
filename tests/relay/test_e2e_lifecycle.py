"""Connections coming and going: relay restarts, worker restarts, second browsers,
no extension at all, client arbitration, the service's tab management, pairing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Playwright

from browserdeck import errors
from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.events import ServiceEvents
from browserdeck.relay import pairing
from browserdeck.relay.extension_id import EXTENSION_ID
from browserdeck.relay.protocol import NO_EXTENSION_MESSAGE
from browserdeck.relay.server import RelayServer
from browserdeck.relay.slot import wait_for_client_slot
from browserdeck.secrets.tokens import new_token
from tests.relay.harness import ExtBrowser, ProbeCounter, Site, launch_ext_browser, wait_until


async def test_extension_reconnects_after_the_relay_restarts(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    await ext.open_shared(site.url("/page?title=Survivor"))
    port, token = relay.port, relay.auth_headers()["Authorization"].split(" ", 1)[1]
    await relay.stop()
    assert not relay.extension_connected
    replacement = RelayServer(port=port, token=token, profile="chrome")
    await replacement.start()
    try:
        await replacement.wait_for_extension(20)  # the extension probes once a second
        await wait_until(lambda: replacement.status()["tabs"] == 1, what="the shared tab again")
        browser = await pw.chromium.connect_over_cdp(
            replacement.cdp_url, headers=replacement.auth_headers()
        )
        try:
            page = browser.contexts[0].pages[0]
            assert await page.title() == "Survivor"
            await page.click("#b")
            assert await page.text_content("#b") == "clicked 1"
        finally:
            await browser.close()
    finally:
        await replacement.stop()


async def test_worker_stopped_and_restarted_reannounces_tabs(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    events = ServiceEvents()
    seen: list[bool] = []
    events.extension.connect(lambda **kw: seen.append(kw["connected"]))
    relay._events = events  # the service passes its bus at construction; same object here

    await ext.open_shared(site.url("/page?title=Sticky"))
    browser = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=relay.auth_headers())
    try:
        context = browser.contexts[0]
        page = context.pages[0]
        assert await page.title() == "Sticky"
        closed = asyncio.Event()
        page.on("close", lambda _p: closed.set())

        # Chrome stops idle MV3 workers; do it on purpose through Chromium's own port.
        worker = await ext.worker_target()
        await ext.detach_worker()
        await ext.cdp.send("Target.closeTarget", {"targetId": worker})
        await asyncio.wait_for(closed.wait(), 10)  # the relay told Playwright the tab went
        await wait_until(lambda: not relay.extension_connected, what="the extension to drop")

        # Something wakes the worker (here: the popup, as when the user clicks the icon);
        # it rehydrates its shared tabs from chrome.storage.session and re-announces them.
        async with context.expect_page(timeout=20000) as back_info:
            await ext.cdp.send(
                "Target.createTarget", {"url": f"chrome-extension://{EXTENSION_ID}/popup.html"}
            )
        back = await back_info.value
        assert await back.title() == "Sticky"
        await back.click("#b")
        assert await back.text_content("#b") == "clicked 1"
        assert seen[:1] == [False] and seen[-1] is True
    finally:
        await browser.close()


async def test_a_second_browser_is_refused(
    ext: ExtBrowser, relay: RelayServer, chromium_path: str, tmp_path: Path
) -> None:
    other = await launch_ext_browser(chromium_path, tmp_path / "second-chromium", relay)
    try:
        await other.pair()
        state: dict[str, object] = {}
        for _ in range(200):
            state = await other.sw_eval("browserdeck.snapshot()")
            if state["status"] == "error" and "could not prove" in str(state["detail"]):
                break
            await asyncio.sleep(0.05)
        assert state["status"] == "error", state
        assert "Another browser" in str(state["detail"])
        # The first browser keeps the relay.
        assert relay.extension_connected
        first = await ext.sw_eval("browserdeck.snapshot()")
        assert first["status"] == "connected"
    finally:
        await other.close()


async def test_without_the_extension(relay: RelayServer, pw: Playwright) -> None:
    async with httpx.AsyncClient() as http:
        version = await http.get(f"{relay.cdp_url}/json/version", headers=relay.auth_headers())
        assert version.status_code == 200
        body = version.json()
        assert body["webSocketDebuggerUrl"] == f"ws://127.0.0.1:{relay.port}/cdp"
        assert "extension=disconnected" in body["Browserdeck-Relay"]
        assert (
            await http.get(f"{relay.cdp_url}/json/list", headers=relay.auth_headers())
        ).json() == []
    assert relay.status()["extensionConnected"] is False

    browser = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=relay.auth_headers())
    try:
        assert browser.contexts[0].pages == []
        with pytest.raises(PlaywrightError, match="connect the browserdeck extension"):
            await browser.contexts[0].new_page()
    finally:
        await browser.close()

    cdp = await CDPClient.connect(f"ws://127.0.0.1:{relay.port}/cdp", headers=relay.auth_headers())
    try:
        for method, params in (
            ("Target.createTarget", {"url": "about:blank"}),
            ("Target.activateTarget", {"targetId": "A" * 32}),
            ("Target.attachToTarget", {"targetId": "A" * 32, "flatten": True}),
        ):
            with pytest.raises(CDPError) as failure:
                await cdp.send(method, params)
            assert NO_EXTENSION_MESSAGE in str(failure.value), method
    finally:
        await cdp.close()


async def test_single_active_slot(
    ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site
) -> None:
    _, target = await ext.open_shared(site.url("/page?title=Slot"))
    plain = relay.token_headers()
    holder = await pw.chromium.connect_over_cdp(
        relay.cdp_url, headers={**plain, "X-Browserdeck-Client": "pytest-holder"}
    )
    try:
        assert await holder.contexts[0].pages[0].title() == "Slot"
        # A second ordinary client is refused at connect, naming the holder.
        with pytest.raises(PlaywrightError, match="409"):
            await pw.chromium.connect_over_cdp(relay.cdp_url, headers=plain, timeout=5000)
        async with httpx.AsyncClient() as http:
            slot = (await http.get(f"{relay.cdp_url}/client-slot", headers=plain)).json()
        assert slot["busy"] is True and slot["holder"]["label"] == "pytest-holder"
        assert relay.status()["slot"]["label"] == "pytest-holder"

        # The service's own socket (lazy slot) still manages tabs meanwhile...
        admin = await CDPClient.connect(
            f"ws://127.0.0.1:{relay.port}/cdp", headers=relay.auth_headers()
        )
        try:
            created = await admin.send(
                "Target.createTarget", {"url": site.url("/page?title=Admin")}
            )
            await admin.send("Target.activateTarget", {"targetId": created["targetId"]})
            await admin.send("Target.closeTarget", {"targetId": created["targetId"]})
            # ...but cannot attach while someone else holds the slot.
            with pytest.raises(CDPError, match="is in use by pytest-holder"):
                await admin.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        finally:
            await admin.close()

        with pytest.raises(errors.Conflict, match="pytest-holder"):
            await wait_for_client_slot(relay.cdp_url, relay.auth_headers(), wait=0.5)
        waiter = asyncio.create_task(
            wait_for_client_slot(relay.cdp_url, relay.auth_headers(), wait=20)
        )
        await asyncio.sleep(0.3)
        assert not waiter.done()
    finally:
        await holder.close()
    await asyncio.wait_for(waiter, 20)
    # Free again: the next client gets in.
    again = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=plain)
    await again.close()


async def test_service_tab_management_over_raw_cdp_and_http(
    ext: ExtBrowser, relay: RelayServer, site: Site
) -> None:
    """What the service does for every driver: /json/list, and Target.* on the browser socket."""
    events = ServiceEvents()
    changes: list[str] = []
    events.tabs_changed.connect(lambda **kw: changes.append(kw["profile"]))
    relay._events = events
    async with httpx.AsyncClient() as http:
        version = (
            await http.get(f"{relay.cdp_url}/json/version", headers=relay.auth_headers())
        ).json()
        assert version["Browser"].startswith("Chrome/")  # as Chrome says, even headless
        cdp = await CDPClient.connect(version["webSocketDebuggerUrl"], headers=relay.auth_headers())
        try:
            created = await cdp.send("Target.createTarget", {"url": site.url("/page?title=Opened")})
            target = created["targetId"]
            listed = (
                await http.get(f"{relay.cdp_url}/json/list", headers=relay.auth_headers())
            ).json()
            assert [t["id"] for t in listed] == [target]
            infos = (await cdp.send("Target.getTargets"))["targetInfos"]
            assert [i["targetId"] for i in infos] == [target]
            assert infos[0]["browserContextId"]
            await cdp.send("Target.activateTarget", {"targetId": target})
            assert (await cdp.send("Target.closeTarget", {"targetId": target}))["success"] is True
            assert (
                await http.get(f"{relay.cdp_url}/json/list", headers=relay.auth_headers())
            ).json() == []
            with pytest.raises(CDPError, match="No target with given id"):
                await cdp.send("Target.activateTarget", {"targetId": target})
        finally:
            await cdp.close()

        # Chrome's HTTP forms too: /json/new (PUT), /json/activate/<id>, /json/close/<id>.
        new = await http.put(
            f"{relay.cdp_url}/json/new?{site.url('/page?title=Http')}", headers=relay.auth_headers()
        )
        assert new.status_code == 200, new.text
        target = new.json()["id"]
        activate = await http.get(
            f"{relay.cdp_url}/json/activate/{target}", headers=relay.auth_headers()
        )
        assert activate.status_code == 200
        close = await http.get(f"{relay.cdp_url}/json/close/{target}", headers=relay.auth_headers())
        assert close.status_code == 200
        missing = await http.get(
            f"{relay.cdp_url}/json/close/{target}", headers=relay.auth_headers()
        )
        assert missing.status_code == 404
    targets = await ext.browser_targets()
    assert not any("title=Http" in t["url"] or "title=Opened" in t["url"] for t in targets)
    assert changes and set(changes) == {"chrome"}


async def test_per_page_websocket_endpoint(ext: ExtBrowser, relay: RelayServer, site: Site) -> None:
    _, target = await ext.open_shared(site.url("/page?title=Direct"))
    async with httpx.AsyncClient() as http:
        listed = (await http.get(f"{relay.cdp_url}/json/list", headers=relay.auth_headers())).json()
    cdp = await CDPClient.connect(listed[0]["webSocketDebuggerUrl"], headers=relay.auth_headers())
    try:
        reply = await cdp.send(
            "Runtime.evaluate", {"expression": "document.title", "returnByValue": True}
        )
        assert reply["result"]["value"] == "Direct"
        loaded = cdp.expect_event("Page.loadEventFired")
        await cdp.send("Page.enable")
        await cdp.send("Page.navigate", {"url": site.url("/page?title=Moved")})
        await asyncio.wait_for(loaded, 10)
        reply = await cdp.send(
            "Runtime.evaluate", {"expression": "document.title", "returnByValue": True}
        )
        assert reply["result"]["value"] == "Moved"
    finally:
        await cdp.close()
    assert target


async def test_pairing_url_hands_the_token_to_the_options_page(
    chromium_path: str, tmp_path: Path, site: Site
) -> None:
    # Not the default profile: the pairing link's profile goes into the token proof.
    relay = RelayServer(port=0, token=new_token(), profile="work")
    await relay.start()
    browser = await launch_ext_browser(chromium_path, tmp_path / "pair-chromium", relay)
    try:
        token = relay.token_headers()["Authorization"].split(" ", 1)[1]
        url = pairing.pairing_url(relay.port, token, profile="work")
        assert url.startswith(f"chrome-extension://{EXTENSION_ID}/options.html#")
        created = await browser.cdp.send("Target.createTarget", {"url": url})
        await relay.wait_for_extension(15)
        # The options page wiped the token from its address.
        attached = await browser.cdp.send(
            "Target.attachToTarget", {"targetId": created["targetId"], "flatten": True}
        )
        for _ in range(100):
            reply = await browser.cdp.send(
                "Runtime.evaluate",
                {
                    "expression": "[location.href, document.getElementById('notice').textContent]",
                    "returnByValue": True,
                },
                session_id=attached["sessionId"],
            )
            href, notice = reply["result"]["value"]
            if "Paired" in notice:
                break
            await asyncio.sleep(0.05)
        assert "#" not in href and token not in href
        assert f"port {relay.port} (profile work)" in notice
        stored = await browser.sw_eval(
            "chrome.storage.local.get(['relayPort', 'relayProfile', 'relayToken'])"
        )
        assert stored == {"relayPort": relay.port, "relayProfile": "work", "relayToken": token}
    finally:
        await browser.close()
        await relay.stop()


async def test_wrong_token_stops_retrying_and_says_so(
    chromium_path: str, tmp_path: Path, relay: RelayServer
) -> None:
    browser = await launch_ext_browser(chromium_path, tmp_path / "bad-token-chromium", relay)
    try:
        await browser.pair(token=new_token())
        state: dict[str, object] = {}
        for _ in range(200):
            state = await browser.sw_eval("browserdeck.snapshot()")
            if state["status"] == "error" and "could not prove" in str(state["detail"]):
                break
            await asyncio.sleep(0.05)
        # The relay's proof does not match the extension's token: the extension cannot tell
        # an out-of-date token from a stranger on the port, says both, and sends nothing.
        assert state["status"] == "error" and "could not prove" in str(state["detail"]), state
        assert "browserdeck pair" in str(state["detail"])
        assert json.loads(json.dumps(state))["connected"] is False
        assert not relay.extension_connected
        # Fixing the token (as the options page does) connects right away.
        await browser.pair()
        await relay.wait_for_extension(10)
    finally:
        await browser.close()


async def test_engine_waits_for_the_slot_then_names_the_holder(
    ext: ExtBrowser,
    relay: RelayServer,
    pw: Playwright,
    site: Site,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from browserdeck.engine import Engine
    from browserdeck.engine import connection as engine_connection
    from browserdeck.engine.options import SnapshotOptions

    _, target = await ext.open_shared(site.url("/page?title=Waiting"))
    holder = await pw.chromium.connect_over_cdp(
        relay.cdp_url, headers={**relay.token_headers(), "X-Browserdeck-Client": "someone-else"}
    )
    engine = Engine()
    await engine.start()
    try:
        # Held past the wait: a Conflict that names who holds the relay.
        monkeypatch.setattr(engine_connection, "RELAY_SLOT_WAIT", 0.5)
        with pytest.raises(errors.Conflict, match="someone-else"):
            await engine.snapshot(relay.cdp_url, target, relay.auth_headers(), SnapshotOptions())
        # Freed while waiting: the engine gets in and works.
        monkeypatch.setattr(engine_connection, "RELAY_SLOT_WAIT", 20.0)
        snap = asyncio.create_task(
            engine.snapshot(relay.cdp_url, target, relay.auth_headers(), SnapshotOptions())
        )
        await asyncio.sleep(0.5)
        assert not snap.done()
        await holder.close()
        result = await asyncio.wait_for(snap, 30)
        assert "Waiting" in str(result.title)
    finally:
        with contextlib.suppress(Exception):
            await holder.close()
        await engine.stop()


async def test_probes_once_a_second_then_only_on_the_alarm(
    ext: ExtBrowser, relay: RelayServer, site: Site
) -> None:
    """Issue 12.5: while no relay listens, the worker probes about once a second for the
    first 25 s of the outage and then not at all until the alarm (counted on a listener
    that accepts and drops every connection, so the extension still sees no relay)."""
    await ext.open_shared(site.url("/page?title=Probe"))
    port = relay.port
    await relay.stop()
    counter = ProbeCounter()
    await counter.start(port)
    try:
        await asyncio.sleep(4.2)
        early = len(counter.times)
        assert 3 <= early <= 6, counter.times  # ~1/s, not a tight loop, not a backoff
        # 26 s into the outage (as if): the fast window is over.
        await ext.sw_eval("browserdeck.state.downSince = Date.now() - 26000; true")
        await asyncio.sleep(1.2)  # a probe already scheduled may still come
        before = len(counter.times)
        await asyncio.sleep(4)
        assert len(counter.times) == before, counter.times
        state = await ext.sw_eval("browserdeck.snapshot()")
        assert state["connected"] is False and "not running" in str(state["detail"])
    finally:
        await counter.stop()
    # The alarm (or the user) brings it back: the popup's reconnect starts a new window.
    fresh = RelayServer(port=port, token=relay.token_headers()["Authorization"][7:])
    await fresh.start()
    try:
        await ext.sw_eval("browserdeck.reconnect().then(() => true)")
        await fresh.wait_for_extension(10)
        await wait_until(lambda: fresh.status()["tabs"] == 1, what="the shared tab again")
    finally:
        await fresh.stop()
