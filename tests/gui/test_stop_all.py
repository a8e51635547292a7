"""Item 7 of issue 15: the tray's one-click "Stop all agents"."""

from __future__ import annotations

import os
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for
from tests.relay.harness import launch_ext_browser, start_site
from tests.support.service import api_client

from browserdeck.mcpserver import claims
from browserdeck.mcpserver.claims import Owner, TabClaims


async def test_stop_all_agents_closes_agent_tabs_and_keeps_the_users(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        service = app.service
        ctx = service.contexts["agent"]
        mine = await ctx.open_tab("data:text/html,<title>Mine</title>")  # the user's own
        async with httpx.AsyncClient(
            base_url=service.url,
            trust_env=False,
            timeout=30,
            headers={"Authorization": f"Bearer {service.api_token}", "X-Browserdeck-Client": "bot"},
        ) as agent:
            opened = (
                await agent.post("/tabs/open", json={"url": "data:text/html,<title>Bot</title>"})
            ).json()["targetId"]
        # A tab another agent (an MCP server in its own process) holds through a claim.
        held = await ctx.open_tab("data:text/html,<title>Held</title>")
        owner = Owner("stdio-test", "claude (stdio)", os.getpid())  # a live pid: a live claim
        TabClaims().claim("agent", held.target_id, owner)
        await app.model.refresh_now()  # (the menu follows the model)
        action = app.tray.stop_agents_action
        assert action.text() == "Stop all agents" and action.isEnabled()
        action.trigger()
        await wait_for(
            lambda: any(t == "All agents stopped" for _, _, t, _ in app.notices),
            what="the confirmation notice",
        )
        left = {t.target_id for t in await ctx.list_tabs()}
        assert opened not in left, "the agent's tab is still open"
        # An agent held the user's tab without opening it: it is given back, open, and
        # the panel no longer names an agent on it.
        assert held.target_id in left, "a tab an agent only held was closed"
        assert held.target_id not in app.model.deck.tab_holders("agent")
        assert mine.target_id in left, "the user's own tab was closed"
        message = next(m for _, _, t, m in app.notices if t == "All agents stopped")
        assert "closed" in message.lower()
        assert claims.read_claims("agent") == []


async def test_stop_all_agents_unshares_every_tab_of_the_users_chrome(
    qapp: Any, saved_config: Any, chromium_path: str, tmp_path: Any
) -> None:
    """The real extension in a real Chromium, paired with the tray's own relay: after one
    click no tab is shared any more, in the extension, in the relay and in Chrome itself
    (no debugger left on the tabs), and the user's tabs stay open."""
    site = start_site()
    try:
        async with running_tray(qapp) as app:
            service = app.service
            relay = service.contexts["chrome"].impl.relay
            assert relay is not None
            ext = await launch_ext_browser(chromium_path, tmp_path / "users-chrome", relay)
            try:
                await ext.pair()
                await relay.wait_for_extension(15)
                one = await ext.open_shared(site.url("/page?title=One"))
                two = await ext.open_shared(site.url("/page?title=Two"))
                # An agent works in one of them, so Chrome has a debugger on it.
                async with httpx.AsyncClient(
                    base_url=service.url,
                    trust_env=False,
                    timeout=30,
                    headers={"Authorization": f"Bearer {service.api_token}"},
                ) as agent:
                    r = await agent.post(
                        "/act",
                        params={"profile": "chrome", "targetId": one[1]},
                        json={"kind": "evaluate", "fn": "() => document.title"},
                    )
                    assert r.status_code == 200, r.text
                    attached = await ext.sw_eval(
                        "chrome.debugger.getTargets().then(ts => ts.filter(t => t.attached)"
                        ".map(t => t.tabId))"
                    )
                    assert one[0] in attached, attached

                    await app.model.refresh_now()  # shared tabs: something to stop
                    assert app.tray.stop_agents_action.isEnabled()
                    app.tray.stop_agents_action.trigger()
                    await wait_for(
                        lambda: any(t == "All agents stopped" for _, _, t, _ in app.notices),
                        what="the confirmation notice",
                    )
                    message = next(m for _, _, t, m in app.notices if t == "All agents stopped")
                    assert message == "Stopped sharing 2 Chrome tabs of yours.", message
                    assert await ext.sw_eval("browserdeck.state.shared.size") == 0
                    assert relay.relay.shared_tabs() == []
                    attached = await ext.sw_eval(
                        "chrome.debugger.getTargets().then(ts => ts.filter(t => t.attached)"
                        ".map(t => t.tabId))"
                    )
                    assert one[0] not in attached and two[0] not in attached, attached
                    # The user's tabs are theirs: unshared, never closed.
                    pages = {p["targetId"] for p in await ext.browser_targets()}
                    assert {one[1], two[1]} <= pages
                    # And the agent is told, not handed a tab it may no longer touch.
                    r = await agent.post(
                        "/act",
                        params={"profile": "chrome", "targetId": one[1]},
                        json={"kind": "evaluate", "fn": "() => document.title"},
                    )
                    assert r.status_code >= 400, r.text
            finally:
                await ext.close()
    finally:
        site.server.shutdown()
        site.server.server_close()


async def test_stop_all_agents_is_offered_only_when_there_is_something_to_stop(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        await app.model.refresh_now()
        action = app.tray.stop_agents_action
        assert not action.isEnabled() and action.text() == "Stop all agents (none)"
        assert "nothing to stop" in action.toolTip()
        async with httpx.AsyncClient(
            base_url=app.service.url,
            trust_env=False,
            timeout=30,
            headers={"Authorization": f"Bearer {app.service.api_token}", "X-Browserdeck-Client": "bot"},
        ) as agent:
            opened = await agent.post("/tabs/open", json={"url": "about:blank"})
            assert opened.status_code == 200
        await app.model.refresh_now()
        assert action.isEnabled() and action.text() == "Stop all agents"


async def _stopped(app: Any) -> tuple[str, str]:
    """Press Stop all agents; the notice it gives (title, message)."""
    before = len(app.notices)
    app.stop_all_agents()
    await wait_for(lambda: len(app.notices) > before, what="the Stop all agents notice")
    _, _, title, message = app.notices[-1]
    return title, message


async def test_stop_all_agents_says_what_really_happened(qapp: Any, saved_config: Any) -> None:
    """The counts are what ending the sessions did (closed, given back, kept); a count
    of nothing is not said (no "0 Chrome tabs" without the extension)."""
    async with running_tray(qapp) as app:
        service = app.service
        mine = await service.contexts["agent"].open_tab("data:text/html,<title>Mine</title>")
        async with api_client(service) as agent:
            agent.headers.update({"X-Browserdeck-Client": "bot", "X-Browserdeck-Session": "run-9"})
            ids = []
            for title in ("Keep", "Drop"):
                r = await agent.post(
                    "/tabs/open", json={"url": f"data:text/html,<title>{title}</title>"}
                )
                assert r.status_code == 200, r.text
                ids.append(r.json()["targetId"])
            r = await agent.post("/tabs/keep", json={"targetId": ids[0]})
            assert r.status_code == 200, r.text
            # It acts on the user's tab: a tab it uses without having opened it.
            r = await agent.get("/snapshot", params={"targetId": mine.target_id})
            assert r.status_code == 200, r.text
        title, message = await _stopped(app)
        assert title == "All agents stopped"
        assert message == (
            "Stopped 1 agent session, closed 1 tab agents opened, left open 1 tab agents "
            "only used and kept 1 tab you marked Keep."
        ), message
        left = {t.target_id for t in await service.contexts["agent"].list_tabs()}
        assert ids[0] in left and mine.target_id in left and ids[1] not in left

        # Nothing runs now: said as such, not "Ended 0 agent sessions, closed 0 tabs".
        title, message = await _stopped(app)
        assert title == "No agents to stop", title
        assert "0" not in message and "nothing to stop" in message, message
