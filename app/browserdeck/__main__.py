from __future__ import annotations

from browserdeck.cli.main import run

run()
