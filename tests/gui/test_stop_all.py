"""Item 7 of issue 15: the tray's one-click "Stop all agents"."""

from __future__ import annotations

import os
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for

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
        action = app.tray.stop_agents_action
        assert action.text() == "Stop all agents" and action.isEnabled()
        action.trigger()
        await wait_for(
            lambda: any(t == "All agents stopped" for _, _, t, _ in app.notices),
            what="the confirmation notice",
        )
        left = {t.target_id for t in await ctx.list_tabs()}
        assert opened not in left, "the agent's tab is still open"
        assert held.target_id not in left, "the tab an MCP agent held is still open"
        assert mine.target_id in left, "the user's own tab was closed"
        message = next(m for _, _, t, m in app.notices if t == "All agents stopped")
        assert "closed" in message
        assert claims.read_claims("agent") == []
