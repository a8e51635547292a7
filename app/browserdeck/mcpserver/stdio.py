"""``browserdeck mcp``: the MCP server over stdio.

Uses the running service when one answers, otherwise starts one in this process
(headless, no API socket) on the first tool call. stdout belongs to the protocol:
logs go to stderr and the log file only.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

from browserdeck.mcpserver import output
from browserdeck.mcpserver.backend import AutoBackend
from browserdeck.mcpserver.server import McpApp


async def serve(
    *,
    tools_spec: str = "core",
    profile: str | None = None,
    url: str | None = None,
    max_chars: int = output.DEFAULT_MAX_CHARS,
    idle_seconds: float | None = None,
) -> None:
    app = McpApp(
        AutoBackend(url, idle_seconds=idle_seconds),
        tools_spec=tools_spec,
        profile=profile,
        max_chars=max_chars,
        transport="stdio",
    )
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        # SIGTERM from the client (or a supervisor) must still stop an in-process browser.
        # SIGHUP: a closed terminal, for a server started by hand.
        for sig in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", signal.SIGTERM)):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await app.run_stdio()
