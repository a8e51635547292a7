"""The tools every MCP client sees, held to a recorded copy (tests/mcp/tools_list.json).

Tools are derived from the request models (and some written by hand); a change to a
model's field, a hint or a tool must change what agents see on purpose, never as a side
effect of moving code. Regenerate the copy when it is on purpose:

    .venv/bin/python -m tests.mcp.test_tool_schemas
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("tools_list.json")


def tools_list() -> list[dict[str, Any]]:
    from browserdeck.mcpserver.server import McpApp, select_tools

    return McpApp.tool_list(select_tools("all", run_code=True))


def test_the_tools_are_the_recorded_ones() -> None:
    recorded = {t["name"]: t for t in json.loads(RECORDED.read_text(encoding="utf-8"))}
    now = {t["name"]: t for t in json.loads(json.dumps(tools_list()))}
    assert sorted(now) == sorted(recorded), "tools added or removed"
    changed = [name for name in recorded if now[name] != recorded[name]]
    assert not changed, f"tool schemas changed: {changed}"


if __name__ == "__main__":
    RECORDED.write_text(json.dumps(tools_list(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
