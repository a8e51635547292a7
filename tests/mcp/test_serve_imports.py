"""What a service started for an MCP client imports (issue 14): not the MCP SDK.

The service's ``/mcp`` is our own server layer (mcpserver/protocol.py, http.py); the
official SDK is only the tests' client. Each check runs in a fresh interpreter: this
test process has imported the whole SDK.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

from browserdeck.chrome.procs import pid_alive
from tests.mcp.harness import call, mcp_config, stdio_client
from tests.mcp.test_bridge import WITH_MODULE_LIST, env_for
from tests.support.imports import SERVE_PATH, loaded_after
from tests.support.service import instance_file_of

SDK = ("mcp", "mcp_types")


def instance_pid(home: Path) -> object:
    return json.loads(instance_file_of(home) or "{}").get("pid")


def sdk_modules(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in SDK)


def test_the_service_imports_no_mcp_sdk() -> None:
    assert sdk_modules(loaded_after(SERVE_PATH)) == []


def test_the_service_does_not_import_httpx_to_start() -> None:
    # httpx (and through it click, rich and pygments) only for a remote or relay profile.
    assert "httpx" not in loaded_after(SERVE_PATH)


async def test_a_real_serve_answers_mcp_without_the_sdk(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    """A real `serve` process answers a real MCP client (the SDK's, through `browserdeck
    mcp`) through to a tool call, and has loaded no module of the SDK when it exits."""
    mcp_config(bd_home)
    modules = tmp_path / "serve-modules.txt"
    serve = subprocess.Popen(
        [sys.executable, "-c", WITH_MODULE_LIST, str(modules), "serve", "--headless"],
        env=env_for(bd_home, chromium_path),
        cwd=str(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        # It says so once it serves (the bridge would start another service before that).
        line = await asyncio.wait_for(asyncio.to_thread(serve.stdout.readline), 60)
        assert "serving" in line, line
        # What the bridge discovers is this process: the instance file names it.
        assert instance_pid(bd_home) == serve.pid
        async with stdio_client(bd_home, chromium_path) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "browser_navigate" in tools
            text = await call(client, "browser_navigate", {"url": "data:text/html,<p>hi</p>"})
            assert "page:" in text
            # Only an MCP tool call claims a tab for its session: the call went through
            # MCP, in the service the instance file names.
            claims = json.loads((bd_home / "state" / "mcp-tab-claims.json").read_text())
            assert claims, "the MCP call claimed no tab"
        # No other service took over meanwhile (a second one writes its own pid there).
        assert serve.poll() is None and instance_pid(bd_home) == serve.pid
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(30)
        finally:
            if pid_alive(serve.pid):
                serve.kill()
            if serve.stdout is not None:
                serve.stdout.close()
    assert sdk_modules(set(modules.read_text().split())) == []
