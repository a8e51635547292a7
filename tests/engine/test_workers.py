"""Console messages of workers and service workers, tagged by context; offline emulation.

workers.html starts a dedicated worker and registers a service worker (127.0.0.1 is a
secure context); both log. The service worker answers /via-sw/<path> with its own
fetch(), so offline mode is checked where a PWA needs it too. Fetches are made over the
test's own raw CDP connection (``Tab.js``), not through the engine.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from browserdeck.engine import options
from browserdeck.engine.errors import NavigationFailed
from browserdeck.results import ConsoleEntry
from tests.engine.conftest import Tab, _http
from tests.support.answers import fields_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def console(tab: Tab, **kw: Any) -> dict[str, Any]:
    answer = await tab.engine.console(tab.cdp_url, tab.target_id, None, options.ConsoleOptions(**kw))
    return fields_of(answer)


async def messages_until(
    tab: Tab, done: Callable[[list[ConsoleEntry]], bool], timeout: float = 10.0
) -> list[ConsoleEntry]:
    """Console messages once ``done`` holds: worker messages reach us asynchronously."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        got = (await console(tab))["messages"]
        if done(got) or loop.time() > deadline:
            return got
        await asyncio.sleep(0.05)


def texts(messages: list[ConsoleEntry], context: str) -> list[str]:
    return [m.text for m in messages if m.context == context]


async def open_workers_page(tab: Tab) -> str:
    await tab.goto("workers.html")
    # Active, and in control of this page (clients.claim), before the test goes on.
    script = await tab.js("window.pingServiceWorker('ready')")
    await tab.js(
        "navigator.serviceWorker.controller ? true : new Promise((ok) => "
        "navigator.serviceWorker.addEventListener('controllerchange', () => ok(true)))"
    )
    return str(script)


def fetch(path: str) -> str:
    return (
        f"fetch({json.dumps(path)}, {{cache: 'no-store'}})"
        ".then((r) => 'status ' + r.status, (e) => 'failed: ' + e.name)"
    )


async def test_console_is_tagged_page_worker_and_service_worker(tab: Tab) -> None:
    script = await open_workers_page(tab)
    assert script == tab.site.url("sw.js")
    await tab.js("window.pingServiceWorker('ping')")
    await tab.js("worker.postMessage('ping')")
    got = await messages_until(
        tab,
        lambda m: (
            "service worker got ping" in texts(m, "service-worker")
            and "worker got ping" in texts(m, "worker")
        ),
    )
    assert "page hello" in texts(got, "page")
    assert {"worker got start", "worker got ping"} <= set(texts(got, "worker"))
    assert "service worker got ping" in texts(got, "service-worker")
    by_text = {m.text: m for m in got}
    assert by_text["worker got ping"].worker_url == tab.site.url("worker.js")
    sw = by_text["service worker got ping"]
    assert sw.worker_url == tab.site.url("sw.js") and sw.type == "warning"
    assert "workerUrl" not in by_text["page hello"].wire()
    # Each message once: the page's listener does not repeat the service worker's.
    assert [m.text for m in got].count("service worker got ping") == 1
    # level applies to every context.
    warnings = (await console(tab, level="warning"))["messages"]
    assert "service worker got ping" in texts(warnings, "service-worker")
    assert {m.type for m in warnings} <= {"warning", "error"}, warnings


async def test_service_worker_messages_reach_tabs_of_its_origin_only(
    tab: Tab, engine: Any, browser: Any, site: Any
) -> None:
    await open_workers_page(tab)
    info = _http(f"{browser.cdp_url}/json/new?about:blank", method="PUT")
    other = Tab(engine, browser, site, info["id"])
    try:
        await other.goto(site.origin2 + "/console.html")  # another origin
        await console(other, clear=True)
        await tab.js("window.pingServiceWorker('origin check')")
        await messages_until(
            tab, lambda m: "service worker got origin check" in texts(m, "service-worker")
        )
        assert "service worker got origin check" not in [
            m.text for m in (await console(other))["messages"]
        ]
    finally:
        _http(f"{browser.cdp_url}/json/close/{info['id']}")


async def test_clear_returns_then_forgets(tab: Tab) -> None:
    await open_workers_page(tab)
    await tab.js("worker.postMessage('before clear')")
    await messages_until(tab, lambda m: "worker got before clear" in texts(m, "worker"))
    read = await console(tab, clear=True)
    assert "worker got before clear" in [m.text for m in read["messages"]]
    after = await console(tab)
    assert after["messages"] == [] and after["requests"] == [] and after["counts"].messages == 0
    await tab.js("worker.postMessage('after clear')")
    got = await messages_until(tab, lambda m: bool(m))
    assert [m.text for m in got] == ["worker got after clear"]


async def test_offline_fails_fetches_of_the_tab_and_its_service_worker_then_recovers(
    tab: Tab, engine: Any, browser: Any, site: Any
) -> None:
    await open_workers_page(tab)
    assert await tab.js(fetch("/status/200")) == "status 200"
    assert await tab.js(fetch("/via-sw/status/200")) == "status 200"
    info = _http(f"{browser.cdp_url}/json/new?about:blank", method="PUT")
    other = Tab(engine, browser, site, info["id"])
    try:
        await other.goto(site.origin2 + "/console.html")
        off = await engine.set_offline(
            tab.cdp_url, tab.target_id, None, options.OfflineOptions(offline=True)
        )
        assert off.offline is True and off.service_workers == [site.url("sw.js")]
        assert await tab.js(fetch("/status/200")) == "failed: TypeError"
        assert await tab.js(fetch("/via-sw/status/200")) == "failed: TypeError"
        # Only this tab: another tab (another origin) is still online.
        assert await other.js(fetch("/status/200")) == "status 200"

        on = await engine.set_offline(
            tab.cdp_url, tab.target_id, None, options.OfflineOptions(offline=False)
        )
        assert on.offline is False and on.service_workers == []
        assert await tab.js(fetch("/status/200")) == "status 200"
        assert await tab.js(fetch("/via-sw/status/200")) == "status 200"
    finally:
        _http(f"{browser.cdp_url}/json/close/{info['id']}")


async def test_offline_survives_navigation(tab: Tab) -> None:
    await tab.goto("form.html")
    await tab.engine.set_offline(
        tab.cdp_url, tab.target_id, None, options.OfflineOptions(offline=True)
    )
    nav = await tab.goto("about:blank")
    assert nav["url"] == "about:blank"
    with pytest.raises(NavigationFailed, match="INTERNET_DISCONNECTED") as caught:
        await tab.goto("hover.html")
    assert "offline" in (caught.value.hint or "")
    await tab.engine.set_offline(
        tab.cdp_url, tab.target_id, None, options.OfflineOptions(offline=False)
    )
    assert (await tab.goto("hover.html"))["status"] == 200


async def test_closing_an_offline_tab_brings_its_service_workers_back(
    tab: Tab, engine: Any, browser: Any, site: Any
) -> None:
    info = _http(f"{browser.cdp_url}/json/new?about:blank", method="PUT")
    first = Tab(engine, browser, site, info["id"])
    await open_workers_page(first)
    await open_workers_page(tab)
    await engine.set_offline(
        first.cdp_url, first.target_id, None, options.OfflineOptions(offline=True)
    )
    # The service worker is shared by the tabs of its origin (documented).
    assert await tab.js(fetch("/via-sw/status/200")) == "failed: TypeError"
    assert await tab.js(fetch("/status/200")) == "status 200"
    _http(f"{browser.cdp_url}/json/close/{info['id']}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while (result := await tab.js(fetch("/via-sw/status/200"))) != "status 200":
        assert loop.time() < deadline, result
        await asyncio.sleep(0.05)
