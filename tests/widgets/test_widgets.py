"""Real widget libraries from npm, driven through MCP as an agent does, by refs only.

Each task (tasks.py) runs through the official MCP SDK client on `browserdeck mcp`
(stdio, its own service and headless Chromium), on the library's own dist files served
by a local server (server.py): it finds each element by name and role in the latest
default (compact) snapshot, acts on its ref and checks what the library holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.harness import mcp_config, stdio_client
from tests.widgets.agent import Agent, Browserdeck
from tests.widgets.tasks import TASKS, Task


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
async def test_widget_task(task: Task, bd_home: Path, chromium_path: str, widget_site: str) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path) as client:
        await task.run(Agent(client, Browserdeck()), widget_site)
