"""browserdeck's MCP server: Playwright MCP's tools and more, on the service's front door.

Named ``mcpserver`` (not ``mcp``) so it never shadows the official SDK package.

Public interface:
- ``client_config_snippet()``: the ``mcpServers`` JSON an MCP client needs (the
  tray's "Copy MCP config");
- ``McpApp`` (server.py) served at ``/mcp`` by ``mount`` (http.py); ``browserdeck
  mcp`` is a stdio bridge to it (cli/bridge.py); ``read_claims`` (claims.py): which agent holds which tab.
"""

from __future__ import annotations

import sys

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["client_config_snippet", "read_claims"]


def client_config_snippet(
    *,
    transport: str = "stdio",
    tools: str = "core",
    profile: str | None = None,
    url: str | None = None,
    token: str | None = None,
    name: str = "browserdeck",
) -> dict[str, Any]:
    """``{"mcpServers": {name: ...}}`` for Claude Desktop, Claude Code, Cursor and the like.

    ``stdio`` runs ``browserdeck mcp`` (the running service is used when there is one).
    ``http`` points at ``/mcp`` on the control port; the token is included only when
    given (a snippet on the clipboard should not carry a secret by accident), else a
    ``<token>`` placeholder with ``browserdeck token`` printing the real one.
    """
    if transport == "http":
        from browserdeck.client import discover_url

        base = (url or discover_url()).rstrip("/")
        query = "&".join(
            f"{k}={v}"
            for k, v in (("tools", tools if tools != "core" else None), ("profile", profile))
            if v
        )
        entry: dict[str, Any] = {
            "type": "http",
            "url": f"{base}/mcp" + (f"?{query}" if query else ""),
            "headers": {"Authorization": f"Bearer {token or '<token from `browserdeck token`>'}"},
        }
        return {"mcpServers": {name: entry}}
    if transport != "stdio":
        raise ValueError(f"transport must be stdio or http, not {transport!r}")
    args = ["mcp"]
    if tools != "core":
        args += ["--tools", tools]
    if profile:
        args += ["--profile", profile]
    if url:
        args += ["--url", url]
    # Here: `browserdeck mcp` imports this package before it starts the service.
    import shutil
    from pathlib import Path

    # The launcher next to this interpreter (a venv's bin/) before whatever PATH finds.
    beside = Path(sys.executable).with_name(
        "browserdeck.exe" if sys.platform == "win32" else "browserdeck"
    )
    exe = str(beside) if beside.is_file() else shutil.which("browserdeck")
    if exe:
        return {"mcpServers": {name: {"command": exe, "args": args}}}
    return {"mcpServers": {name: {"command": sys.executable, "args": ["-m", "browserdeck", *args]}}}


def read_claims(profile: str | None = None) -> list[Any]:
    from browserdeck.mcpserver.claims import read_claims as _read

    return _read(profile)
