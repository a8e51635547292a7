"""The engine taking in the prelaunched browser ahead of the first call (issue 14).

A service started for MCP (``serve --idle-exit``) launches its default browser beside the
Playwright driver and connects the engine to it as soon as both run, so the first page
call finds the connection made and the blank tab held. Only a browser the service
launched itself, never the user's; checked again once connected; a page call that joined
that connect and saw it fail connects itself.

Real service, real Chromium, real sockets. The one fake, in the two tests that need it:
the connect made ahead is held at a gate (a connect cannot be made slow on demand), so
that the browser can be stopped or replaced while it is under way; the real connect runs
once the gate opens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator

from browserdeck import config
from browserdeck.engine import connection
from browserdeck.engine.connection import BrowserPool, Connection
from browserdeck.master import build_service
from browserdeck.profiles import ProfileContext
from browserdeck.service import Service
from tests.support.browsers import launch_raw_chromium
from tests.support.service import api_client, service_config


def _gate_connect_made_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[asyncio.Event, asyncio.Event]:
    """(entered, gate): the connect made ahead (one try) waits for ``gate``."""
    entered, gate = asyncio.Event(), asyncio.Event()
    real = BrowserPool._connect

    async def gated(
        self: BrowserPool, cdp_url: str, headers: dict[str, str] | None, *, tries: int | None = None
    ) -> Connection:
        if tries == 1:  # BrowserPool.attach: the connect made ahead of any call
            entered.set()
            await gate.wait()
        return await real(self, cdp_url, headers, tries=tries)

    monkeypatch.setattr(BrowserPool, "_connect", gated)
    return entered, gate


async def _started_for_mcp() -> Service:
    service = build_service(force_headless=True, prelaunch=True)  # as `serve --idle-exit`
    await service.start()
    return service


async def _assert_nothing_taken_in(service: Service, agent: ProfileContext, why: str) -> None:
    """Once the attach made ahead has ended, the engine holds no connection to the
    profile's browser and none of its tabs."""
    assert service.early_attach is not None
    await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
    engine = service.engine
    assert engine is not None
    tabs = [t.target_id for t in await agent.read_tabs()]
    assert tabs
    assert engine.pool.gone_event(agent.cdp_url) is None, why
    assert not any(engine.holds(agent.cdp_url, t) for t in tabs)


async def _warm_up_ran_on_the_blank_tab(counted: list[str]) -> None:
    """Start a service as for MCP; once its early attach has ended, the warm-up's count
    ran once, on the blank tab."""
    service = await _started_for_mcp()
    try:
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        assert counted == ["about:blank"]
    finally:
        await service.stop()


async def test_the_engine_takes_in_the_prelaunched_blank_tab_before_a_call() -> None:
    config.save(service_config())
    service = await _started_for_mcp()
    try:
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        agent = service.contexts["agent"]
        engine = service.engine
        assert engine is not None
        tabs = [t.target_id for t in await agent.read_tabs()]
        assert tabs, "the prelaunched browser showed no tab"
        assert all(engine.holds(agent.cdp_url, t) for t in tabs), "no tab taken in before a call"
    finally:
        await service.stop()


async def test_an_attach_only_profile_is_never_taken_in_ahead_of_a_call(
    chromium_path: str, tmp_path: Path
) -> None:
    """The prelaunch "starts" an attachOnly profile by finding the user's browser on its
    port: its tabs are the user's, and no agent has asked for them."""
    users = await launch_raw_chromium(chromium_path, tmp_path / "users-chrome")
    try:
        cfg = service_config()
        cfg.profiles["agent"].cdp_port = users.port
        cfg.profiles["agent"].attach_only = True
        config.save(cfg)
        service = await _started_for_mcp()
        try:
            agent = service.contexts["agent"]
            assert agent.state == "running"  # it found the user's browser
            await _assert_nothing_taken_in(service, agent, "connected to the user's browser")
        finally:
            await service.stop()
    finally:
        await users.close()


async def test_a_browser_replaced_during_the_connect_is_not_taken_in(
    chromium_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while the engine connected ahead, and the user's own browser took the port:
    the connection is dropped once made, and none of that browser's tabs is taken in."""
    entered, gate = _gate_connect_made_ahead(monkeypatch)
    cfg = service_config()
    config.save(cfg)
    service = await _started_for_mcp()
    users = None
    try:
        await asyncio.wait_for(entered.wait(), 30)
        agent = service.contexts["agent"]
        await agent.stop()
        port = cfg.profiles["agent"].cdp_port
        users = await launch_raw_chromium(chromium_path, tmp_path / "users-chrome", port=port)
        gate.set()
        await _assert_nothing_taken_in(service, agent, "kept a connection to it")
    finally:
        gate.set()
        await service.stop()
        if users is not None:
            await users.close()


async def test_a_page_call_that_joined_a_failed_connect_made_ahead_connects_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The browser was restarted while the engine connected ahead, and a page call joined
    that connect: it is dropped (not the browser it was for), and the call connects anew
    instead of answering with that failure."""
    entered, gate = _gate_connect_made_ahead(monkeypatch)
    config.save(service_config())
    service = await _started_for_mcp()
    try:
        await asyncio.wait_for(entered.wait(), 30)
        agent = service.contexts["agent"]
        await agent.stop()
        engine = service.engine
        assert engine is not None
        async with api_client(service) as client:
            navigated = asyncio.create_task(
                client.post("/navigate", json={"url": "data:text/html,<title>after</title>"})
            )
            for _ in range(600):  # "no hang": up to 30 s for the relaunch and the call
                pending = engine.pool._connecting.get(agent.cdp_url)
                if (pending is not None and pending.waiters) or navigated.done():
                    break
                await asyncio.sleep(0.05)
            assert not navigated.done(), navigated.result().text
            gate.set()
            resp = await navigated
        assert resp.status_code == 200, resp.text
        assert resp.json()["title"] == "after"
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
    finally:
        gate.set()
        await service.stop()


def _watch_warm_up(
    monkeypatch: pytest.MonkeyPatch, *, hold: asyncio.Event | None = None
) -> list[str]:
    """The URLs of the pages the warm-up counted on; with ``hold``, each count waits for it
    (a slow warm-up cannot be produced on demand)."""
    counted: list[str] = []
    real = Locator.count

    async def watched(self: Locator) -> int:
        counted.append(self.page.url)
        if hold is not None:
            await hold.wait()
        return await real(self)

    monkeypatch.setattr(Locator, "count", watched)
    return counted


async def test_the_warm_up_runs_on_the_blank_tab_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = _watch_warm_up(monkeypatch)
    config.save(service_config())
    await _warm_up_ran_on_the_blank_tab(counted)


async def test_no_warm_up_once_a_page_call_came(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that came while the engine connected ahead: the warm-up is left out."""
    entered, gate = _gate_connect_made_ahead(monkeypatch)
    counted = _watch_warm_up(monkeypatch)
    config.save(service_config())
    service = await _started_for_mcp()
    try:
        await asyncio.wait_for(entered.wait(), 30)
        async with api_client(service) as client:
            navigated = asyncio.create_task(
                client.post("/navigate", json={"url": "data:text/html,<title>first</title>"})
            )
            engine = service.engine
            assert engine is not None
            for _ in range(600):  # "no hang": up to 30 s for the call to reach the engine
                if engine.pool.page_calls or navigated.done():
                    break
                await asyncio.sleep(0.05)
            gate.set()
            resp = await navigated
        assert resp.status_code == 200, resp.text
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        assert counted == []
    finally:
        gate.set()
        await service.stop()


async def test_a_call_during_the_warm_up_does_not_wait_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up runs on the blank tab the agent is about to navigate: the navigate and
    its snapshot go ahead while the warm-up is still under way, and the warm-up, landing
    in the new document after them, changes nothing there: the snapshot's refs still act
    (Playwright resolves them against the latest snapshot of the document)."""
    hold = asyncio.Event()
    counted = _watch_warm_up(monkeypatch, hold=hold)
    config.save(service_config())
    service = await _started_for_mcp()
    try:
        for _ in range(600):  # "no hang": up to 30 s for the warm-up to begin
            if counted:
                break
            await asyncio.sleep(0.05)
        assert counted == ["about:blank"]
        page = (
            "data:text/html,<title>mine</title>"
            "<button onclick=\"document.title='clicked'\">Go</button>"
        )
        async with api_client(service) as client:
            resp = await client.post("/navigate", json={"url": page, "prepareSnapshot": "wait"})
            assert resp.status_code == 200, resp.text
            assert resp.json()["title"] == "mine"
            snap = await client.get("/snapshot")
            assert snap.status_code == 200, snap.text
            assert service.early_attach is not None and not service.early_attach.done()
            ref = _ref_of(snap.json()["snapshot"], 'button "Go"')
            hold.set()  # the warm-up now runs, in the new document
            await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
            clicked = await client.post("/act", json={"kind": "click", "ref": ref})
            assert clicked.status_code == 200, clicked.text
            after = await client.get("/snapshot")
            assert after.status_code == 200, after.text
            assert after.json()["title"] == "clicked"
    finally:
        hold.set()
        await service.stop()


async def test_a_warm_up_that_hangs_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dialog or a busy page can keep the warm-up's count from answering: the early
    attach ends anyway instead of staying pending until the service stops."""
    counted = _watch_warm_up(monkeypatch, hold=asyncio.Event())  # never answers
    monkeypatch.setattr(connection, "WARM_UP_TIMEOUT", 0.5)
    config.save(service_config())
    await _warm_up_ran_on_the_blank_tab(counted)


async def test_a_connection_dropped_while_its_tabs_are_taken_in_holds_none(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The browser's connection went while the engine took in its tabs: the engine says
    it holds none (it took in nothing usable) and does not warm a dead tab."""
    held: list[int] = []
    real_map, real_attach = BrowserPool._map_pages, BrowserPool.attach

    async def dropped_meanwhile(self: BrowserPool, conn: Connection, target_id: str) -> Any:
        state = await real_map(self, conn, target_id)
        await self.drop(conn.cdp_url)  # as a disconnect at this point would
        return state

    async def attach(self: BrowserPool, *args: Any, **kw: Any) -> int:
        held.append(await real_attach(self, *args, **kw))
        return held[-1]

    monkeypatch.setattr(BrowserPool, "_map_pages", dropped_meanwhile)
    monkeypatch.setattr(BrowserPool, "attach", attach)
    counted = _watch_warm_up(monkeypatch)
    config.save(service_config())
    caplog.set_level("INFO", logger="browserdeck.engine.connection")
    service = await _started_for_mcp()
    try:
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        assert held == [0] and counted == []
        assert "engine took in" not in caplog.text
    finally:
        await service.stop()


def _ref_of(snapshot: str, line_start: str) -> str:
    for line in snapshot.splitlines():
        if line.strip().startswith(f"- {line_start}") and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise AssertionError(f"no {line_start} with a ref in:\n{snapshot}")


async def test_a_first_tab_that_appears_after_the_connect_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The browser had no tab yet when the engine connected: the attach waits for the
    first one instead of taking in nothing."""
    entered, gate = _gate_connect_made_ahead(monkeypatch)
    config.save(service_config())
    service = await _started_for_mcp()
    try:
        await asyncio.wait_for(entered.wait(), 30)
        agent = service.contexts["agent"]
        for tab in await agent.read_tabs():
            await agent.close_tab(tab.target_id)
        assert await agent.read_tabs() == []
        engine = service.engine
        assert engine is not None
        gate.set()
        for _ in range(600):  # "no hang": up to 30 s for the connect
            if engine.pool.gone_event(agent.cdp_url) is not None:
                break
            await asyncio.sleep(0.05)
        assert service.early_attach is not None and not service.early_attach.done()
        opened = await agent.open_tab()  # about:blank: no page call
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        assert engine.pool.page_calls == 0
        assert engine.holds(agent.cdp_url, opened.target_id)
    finally:
        gate.set()
        await service.stop()
