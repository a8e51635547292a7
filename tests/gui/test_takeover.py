"""One app whoever starts first (gui/takeover.py).

Real parts: the official MCP SDK client spawns `python -m browserdeck mcp`, whose bridge
starts a headless `serve --idle-exit`; then the real tray app (a process of its own,
offscreen) takes that service over, and the agent's session goes on on the tray's
service. The reverse order (the tray first, then an MCP client) uses the tray's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.gui.apprun import app_env, run_cli, running_app, wait_until
from tests.mcp.harness import call, mcp_config, stdio_params

from browserdeck.util import paths
from mcp import Client


def _instance(home: Path) -> dict[str, object]:
    data = json.loads((home / "state" / "instance.json").read_text())
    assert isinstance(data, dict)
    return data


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "\nState:\tZ" in f.read()
    except FileNotFoundError:
        return True


async def test_the_tray_takes_over_the_service_an_agent_started_and_its_session_goes_on(
    bd_home: Path, chromium_path: str
) -> None:
    mcp_config(bd_home, headless=True)
    params = stdio_params(bd_home, chromium_path)
    env = app_env(BROWSERDECK_HOME=str(bd_home), BROWSERDECK_CHROME=chromium_path)
    async with Client(params, read_timeout_seconds=90, mode="legacy") as agent:
        page = "data:text/html,<title>before</title><button>One</button>"
        await call(agent, "browser_navigate", {"url": page})
        first = _instance(bd_home)
        assert first.get("forMcpClients") is True  # started by the agent's bridge
        old_pid = int(str(first["pid"]))

        with running_app("tray", env=env) as tray:
            # Not "already running … stop it": the tray takes the service over.
            tray.wait_event("takeover-begin")
            started = tray.wait_event("service-started", timeout=120)
            assert started["pid"] == tray.pid
            assert _gone(old_pid), "the service the agent started still runs"
            now = _instance(bd_home)
            assert now["pid"] == tray.pid and "forMcpClients" not in now
            assert not Path(paths.takeover_path()).exists()
            notice = tray.wait_event("notice")
            assert "took it over" in str(notice["message"])

            # The same MCP session goes on, on the tray's service (its bridge opened the
            # session there anew with the client's own handshake).
            text = await call(
                agent, "browser_navigate", {"url": "data:text/html,<button>Two</button>"}
            )
            assert "page:" in text
            assert 'button "Two"' in await call(agent, "browser_snapshot")
            assert _instance(bd_home)["pid"] == tray.pid  # no second service was started

            # The reverse order keeps working: a new agent while the tray runs uses it.
            async with Client(params, read_timeout_seconds=90) as second:
                assert "page:" in await call(second, "browser_navigate", {"url": "about:blank"})
            assert _instance(bd_home)["pid"] == tray.pid
            assert tray.terminate() == 0


def test_a_users_own_serve_is_not_taken_over(bd_home: Path) -> None:
    """`browserdeck serve` started by hand is the user's: the tray says so, as before."""
    mcp_config(bd_home, headless=True)
    env = app_env(BROWSERDECK_HOME=str(bd_home))
    with running_app("serve", env=env) as serve:
        wait_until(lambda: any("serving" in line for line in serve.output), timeout=90)
        tray = run_cli("tray", env=env)
        assert tray.returncode == 1
        assert "already running" in tray.stderr and "without a tray" in tray.stderr
        assert serve.proc.poll() is None
        assert serve.terminate() == 0


async def test_an_agent_waits_for_the_trays_service_while_it_takes_over(
    bd_home: Path, chromium_path: str
) -> None:
    """While the tray takes over (its pid in the take-over file), `browserdeck mcp` starts
    no service of its own, which would race the tray's for the ports: it waits for the
    tray's and uses it."""
    mcp_config(bd_home, headless=True)
    marker = Path(paths.takeover_path())
    holder = subprocess.Popen(["sleep", "120"])  # stands for the tray taking over
    marker.write_text(str(holder.pid))
    env = {
        **os.environ,
        "BROWSERDECK_HOME": str(bd_home),
        "BROWSERDECK_CHROME": chromium_path,
    }
    serve: subprocess.Popen[bytes] | None = None
    try:

        async def late_service() -> None:
            nonlocal serve
            await asyncio.sleep(2.0)  # the agent's bridge is waiting by now
            serve = subprocess.Popen(
                [sys.executable, "-m", "browserdeck", "serve", "--headless"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

        starting = asyncio.ensure_future(late_service())
        async with Client(stdio_params(bd_home, chromium_path), read_timeout_seconds=90) as agent:
            assert "page:" in await call(agent, "browser_navigate", {"url": "about:blank"})
            await starting
            assert serve is not None
            # The agent is served by the service the "tray" started, not one of its own.
            assert _instance(bd_home)["pid"] == serve.pid
            assert "forMcpClients" not in _instance(bd_home)
        assert serve.poll() is None, "its service lost the ports to one the agent started"
    finally:
        marker.unlink(missing_ok=True)
        holder.kill()
        holder.wait()
        if serve is not None and serve.poll() is None:
            serve.terminate()
            serve.wait(30)
