"""What a fresh interpreter has imported after some code: for the start-up import checks.

Each check needs its own interpreter, since a test process has imported everything.
"""

from __future__ import annotations

import subprocess
import sys

# The modules the service imports on its way to answering /mcp (bench/boot_timeline.py).
SERVE_PATH = (
    "import browserdeck.cli, browserdeck.logsetup, browserdeck.master, browserdeck.pwdriver,"
    " browserdeck.service, browserdeck.api.server, browserdeck.api.staged, browserdeck.api.app,"
    " browserdeck.deck, browserdeck.mcpserver.http"
)
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
