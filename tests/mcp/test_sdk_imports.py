"""What a service started for an MCP client imports before it answers (issue 14).

Each check runs in a fresh interpreter: this test process has imported the whole SDK.
"""

from __future__ import annotations

import subprocess
import sys

# The modules the service imports on its way to answering /mcp (bench/boot_timeline.py).
SERVE_PATH = (
    "import browserdeck.master, browserdeck.service, browserdeck.engine,"
    " browserdeck.api.server, browserdeck.api.app, browserdeck.mcpserver.http"
)


def loaded_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(done.stdout.split())


def test_the_service_imports_the_sdks_server_pieces_only() -> None:
    loaded = loaded_after(SERVE_PATH)
    assert "mcp.server.lowlevel" in loaded  # the server the service runs
    # The SDK's client and its high-level server come with its package __init__s only.
    assert not {"mcp.client", "mcp.server.mcpserver", "mcp.server.stdio"} & loaded


def test_the_service_does_not_import_httpx_to_start() -> None:
    # httpx (and through it click, rich and pygments) only for a remote or relay profile.
    assert "httpx" not in loaded_after(SERVE_PATH)


def test_the_rest_of_the_sdk_still_imports_after_the_server_pieces() -> None:
    code = (
        "import browserdeck.mcpserver.server\n"
        "from mcp import Client, StdioServerParameters, types\n"
        "import mcp, mcp.server\n"
        "assert mcp.server.MCPServer.__name__ == 'MCPServer'\n"
        "assert types.Tool is mcp.types.Tool\n"
        "assert 'ClientSession' in mcp.__all__"
    )
    assert "mcp.client" in loaded_after(code)
