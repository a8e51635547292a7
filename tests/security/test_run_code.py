"""Issue 10 item 6: browser_run_code runs agent Python in a child process with a time
limit, never inside the service.

`browserdeck mcp` over stdio with no service running starts the service in its own
process: the case where a snippet run in-process froze everything with it. While a
`while True` runs, that process must keep answering (MCP tools/list); the snippet is stopped at
its time limit, and the next snippet works (in a fresh process, state reset).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from browserdeck import config
from tests.mcp.harness import call, call_error, mcp_config, stdio_client
from tests.security.stranger import Stranger
from tests.support.browsers import RawChromium


async def test_endless_code_neither_freezes_the_service_nor_runs_forever(
    bd_home: Path, chromium_path: str
) -> None:
    mcp_config(bd_home, mcp_run_code=True)
    async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
        await call(client, "browser_navigate", {"url": "data:text/html,<title>x</title>"})
        assert "7" in await call(client, "browser_run_code", {"code": "state['n'] = 7\n7"})
        pid = await call(client, "browser_run_code", {"code": "import os\nos.getpid()"})

        started = time.monotonic()
        endless = asyncio.create_task(
            call_error(client, "browser_run_code", {"code": "while True: pass", "timeout": 4})
        )
        await asyncio.sleep(1.5)
        assert not endless.done()
        # The MCP server's process (which hosts the service here) still answers while the
        # loop spins: a tool listing comes back.
        tools = await asyncio.wait_for(client.list_tools(), 5)
        assert any(t.name == "browser_run_code" for t in tools.tools)
        error = await asyncio.wait_for(endless, 30)
        assert "longer than 4 s" in error and "stopped" in error
        assert time.monotonic() - started < 25

        # A fresh process, fresh state: the code can run again.
        again = await call(client, "browser_run_code", {"code": "state.get('n')"})
        assert again.startswith("done")
        other = await call(client, "browser_run_code", {"code": "import os\nos.getpid()"})
        assert other.strip() != pid.strip()
        # And it never was the MCP server's own process.
        title = await call(client, "browser_run_code", {"code": "await page.title()"})
        assert "x" in title


@pytest.mark.parametrize("driver", ["attach-only", "remote"])
async def test_run_code_sends_no_api_token_to_an_endpoint_browserdeck_does_not_serve(
    bd_home: Path, chromium_path: str, chromium: RawChromium, driver: str
) -> None:
    """Issue 31 item 2: an attach-only managed profile, or a remote profile on an http://
    cdpUrl, is a browser on a port whoever listens there owns. The run_code child connects
    to it with that endpoint's own credentials: none. It used to send the API token, which
    opens the whole API to whoever listens there."""
    stranger = await Stranger(chromium.port).start()
    try:
        cfg = mcp_config(bd_home, mcp_run_code=True)
        if driver == "attach-only":
            cfg.profiles["agent"].attach_only = True
            cfg.profiles["agent"].cdp_port = stranger.port
        else:
            cfg.profiles["far"] = config.ProfileConfig(
                name="far", driver="remote", cdp_url=f"http://127.0.0.1:{stranger.port}"
            )
            cfg.default_profile = "far"
        config.save(cfg)
        async with stdio_client(bd_home, chromium_path, "--tools", "all") as client:
            await call(
                client, "browser_navigate", {"url": "data:text/html,<title>theirs</title>"}
            )
            title = await call(client, "browser_run_code", {"code": "await page.title()"})
            assert "theirs" in title
        token = (bd_home / "config" / "api-token").read_text().strip()
        heard = stranger.heard()
        assert b"/json/version" in heard and b"Upgrade: websocket" in heard  # it was used
        assert token and token.encode() not in heard, "the API token went to the stranger"
        assert b"Authorization" not in heard
    finally:
        await stranger.stop()
