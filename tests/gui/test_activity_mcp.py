"""The activity log of MCP agents and the CLI: one row per call, the agent named on
every row, hints in the agent's own words, and Stop all agents said to the agent.

Real parts: the tray app (Qt offscreen) runs a real service and its headless Chromium;
the agent is the official MCP SDK client over streamable HTTP at ``/mcp``.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation
from tests.gui.conftest import running_tray, wait_for
from tests.gui.test_activity import _client, _ref, _rows
from tests.mcp.harness import call, http_client, text

from browserdeck.client import CLIENT_NAME as CLI
from browserdeck.gui.activity_pane import COLUMNS
from mcp import Client

PAGE = "data:text/html,<title>Shop</title><button>Buy</button>"
OTHER = "data:text/html,<title>Elsewhere</title><p>moved on</p>"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_mcp_agent_gets_one_named_row_per_call_and_its_own_words(
    qapp: Any, saved_config: Any, mode: str
) -> None:
    """``legacy``: the handshake era (sessions on the transport); ``auto``: the SDK finds
    the modern era (no session on the wire; each request stands on its own)."""
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        service = app.service
        me = Implementation(name="shopping-agent", version="1")
        async with http_client(
            f"{service.url}/mcp", service.api_token, client_info=me, mode=mode
        ) as agent:
            await call(agent, "browser_tabs", {"action": "new", "url": PAGE})
            snap = await call(agent, "browser_snapshot")
            buy = _ref(snap, 'button "Buy"')
            await call(agent, "browser_navigate", {"url": OTHER})
            # The ref is stale now: the agent is told the tool that gets fresh ones.
            stale = await agent.call_tool("browser_click", {"ref": buy, "element": "Buy"})
            assert stale.is_error
            said = text(stale)
            assert "browser_snapshot" in said and "GET /snapshot" not in said, said

            calls = 4
            await wait_for(lambda: len(_rows(panel)) >= calls, what="a row per call")
            rows = _rows(panel)
            # One row per call: no second "MCP request" row, no row for the session's
            # opening (the SDK's first requests carry no session id yet).
            assert len(rows) == calls, rows
            assert all(r["Client"].startswith("shopping-agent") for r in rows), rows
            assert not any("Missing session" in r["Result"] for r in rows), rows
            failed = panel.activity.topLevelItem(0)  # newest first: the stale click
            assert failed.text(COLUMNS.index("Action")) == "click", rows
            assert "browser_snapshot" in failed.toolTip(0), failed.toolTip(0)
            assert "GET /snapshot" not in failed.toolTip(0), failed.toolTip(0)

            app.tray.stop_agents_action.trigger()
            await wait_for(
                lambda: any(t == "All agents stopped" for _, _, t, _ in app.notices),
                what="the confirmation notice",
            )
            said = await _told(agent)
            assert "stopped by you" in said and "Session not found" not in said, said
            # The refused call is in the log, naming the agent and why it was refused.
            await wait_for(lambda: len(_rows(panel)) > calls, what="the refused call's row")
        rows = _rows(panel)
        refused = rows[0]
        assert refused["Client"] == "shopping-agent via MCP", rows
        assert refused["Action"] == "browser_snapshot", rows
        assert "stopped by you" in refused["Result"], rows
        assert not any(r["Client"] in ("", "?") for r in rows), rows
        assert not any("Session not found" in r["Result"] for r in rows), rows


async def _told(agent: Client) -> str:
    """What the agent is told of its next call: the handshake era ends the session on the
    wire (an MCP error: the session is gone), the modern era answers a tool error."""
    try:
        result = await agent.call_tool("browser_snapshot", {})
    except MCPError as exc:
        return str(exc)
    assert result.is_error, text(result)
    return text(result)


async def test_a_cli_calls_hint_in_the_log_names_the_command(qapp: Any, saved_config: Any) -> None:
    """The CLI names itself as the real CLI does (``X-Browserdeck-Client``): its row's
    hint is the command the user types, not the route."""
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        async with _client(app, CLI) as cli:
            opened = (await cli.post("/tabs/open", json={"url": PAGE})).json()["targetId"]
            r = await cli.post(
                "/act", params={"targetId": opened}, json={"kind": "click", "ref": "e99"}
            )
            assert r.status_code == 404, r.text
            assert "`browserdeck snapshot`" in r.json()["error"]["hint"], r.text
        await wait_for(lambda: len(_rows(panel)) >= 2, what="the CLI's rows")
        failed = panel.activity.topLevelItem(0)
        assert failed.text(COLUMNS.index("Action")) == "click"
        assert "`browserdeck snapshot`" in failed.toolTip(0), failed.toolTip(0)
        assert "GET /snapshot" not in failed.toolTip(0), failed.toolTip(0)
