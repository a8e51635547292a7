"""Where the peers live: the npm packages the benches run beside browserdeck.

They are installed outside the repo, in a scratch folder (default: ``peers`` beside the
checkout; ``BROWSERDECK_PEERS`` moves it), so no bench result depends on what the repo
ships and nothing npm writes ends up in a commit.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIR = Path(os.environ.get("BROWSERDECK_PEERS") or ROOT.parent / "peers")
MODULES = DIR / "node_modules"
BIN = MODULES / ".bin"
PACKAGES = "@playwright/mcp chrome-devtools-mcp puppeteer-core playwright-core agent-browser@0.41.2"
INSTALL = f"mkdir -p {DIR} && npm install --prefix {DIR} {PACKAGES}"
