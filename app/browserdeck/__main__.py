from __future__ import annotations

from browserdeck.cli import run

run()
