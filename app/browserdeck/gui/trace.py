"""Machine-readable milestones of the tray app, for end-to-end tests and the benchmark.

With ``BROWSERDECK_GUI_TRACE=1`` each milestone is printed to stdout as one JSON
line (``{"event": "tray-visible", "t": <unix time>, ...}``), the way
qutebrowser's end-to-end tests read the app's JSON log. Milestones are also
logged at INFO, so the log file tells the same story.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

log = logging.getLogger("browserdeck.gui")

ENV = "BROWSERDECK_GUI_TRACE"


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def emit(event: str, **data: Any) -> None:
    log.info("gui: %s %s", event, data if data else "")
    if enabled():
        line = json.dumps({"event": event, "t": time.time(), **data}, default=str)
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):  # stdout closed: tracing must never break the app
            pass
