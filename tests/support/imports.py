"""What a fresh interpreter has imported after some code: for the start-up import checks.

Each check needs its own interpreter, since a test process has imported everything.
"""

from __future__ import annotations

import subprocess
import sys

# The modules a service started for MCP clients imports on its way to answering /mcp
# (bench/boot_timeline.py profiles them).
MCP_SERVE_PATH = (
    "import browserdeck.cli.main, browserdeck.util.logsetup, browserdeck.master, browserdeck.engine.pwdriver,"
    " browserdeck.service, browserdeck.api.server, browserdeck.api.staged, browserdeck.deck,"
    " browserdeck.mcpserver.http"
)
# ... and the FastAPI app of the other routes, which `serve` and the tray build once the
# API listens (a service started for MCP clients, on their first use).
SERVE_PATH = MCP_SERVE_PATH + ", browserdeck.api.app"
# ... and then, once it listens, the engine (service.Service._start_engine).
ENGINE_PATH = SERVE_PATH + "\nimport browserdeck.engine.engine"


def loaded_after(code: str) -> set[str]:
    """The names in ``sys.modules`` of a fresh interpreter once ``code`` has run."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(done.stdout.split())
