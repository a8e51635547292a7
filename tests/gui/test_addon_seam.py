"""Every way in passes the front door's addons: the tray in-process, the API, the CLI over
the API's socket and MCP at /mcp, all on the one service the tray runs."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for
from tests.mcp.harness import call, http_client

from browserdeck.door.call import Call


class Seen:
    def __init__(self) -> None:
        self.calls: list[Call[Any]] = []

    async def before(self, call: Call[Any]) -> None:
        self.calls.append(call)

    def ways(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for c in self.calls:
            out.setdefault(c.caller.via, set()).add(c.name)
        return out


async def test_the_addons_see_the_tray_the_api_the_cli_and_mcp(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        service = app.service
        seen = Seen()
        service.addons.add(seen)

        # The tray, in-process: the user opens a tab from the panel.
        app.model.open_tab("agent", "about:blank")
        await wait_for(lambda: "gui" in seen.ways(), what="the tray's call at the door")
        opened = next(c for c in seen.calls if c.caller.via == "gui")
        assert opened.name == "open-tab" and opened.caller.client == "browserdeck-gui"

        # The HTTP API.
        async with httpx.AsyncClient(
            base_url=service.url,
            trust_env=False,
            headers={"Authorization": f"Bearer {service.api_token}"},
        ) as client:
            assert (await client.get("/tabs")).status_code == 200

        # The CLI, over the API's Unix socket (no token read or sent).
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "browserdeck", "tabs",
            env=dict(os.environ),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()

        # MCP at /mcp.
        async with http_client(f"{service.url}/mcp", service.api_token) as mcp:
            await call(mcp, "browser_tabs", {"action": "list"})

        ways = seen.ways()
        assert ways["gui"] >= {"open-tab"}
        assert ways["api"] >= {"tabs"}
        assert ways["cli"] >= {"tabs"}
        assert ways["mcp"] >= {"tabs"}
        cli = next(c for c in seen.calls if c.caller.via == "cli")
        assert cli.caller.client == "browserdeck-cli" and cli.profile == "agent"
        mcp_call = next(c for c in seen.calls if c.caller.via == "mcp")
        assert mcp_call.caller.session  # the MCP session, passed along with the call
