"""`browserdeck tray` (also what `browserdeck` alone runs): the desktop tray app.

Kept apart from cli.py so that importing the CLI never imports Qt: PySide6 is
imported only when the tray actually starts.
"""

from __future__ import annotations

import argparse
from typing import Any


def cmd_tray(args: argparse.Namespace) -> int:
    from browserdeck.gui.app import run

    return run(args)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "tray",
        help="the desktop tray app (the default command): the service plus a tray icon, "
        "status panel and settings",
        description="Start the tray app, which runs the same service as `browserdeck serve`. "
        "If browserdeck already runs for this user, show its panel instead.",
    )
    p.add_argument("--panel", action="store_true", help="open the status panel at start")
    p.add_argument(
        "--settings",
        action="store_true",
        help="open the settings (those of the running browserdeck, if one runs)",
    )
    p.add_argument(
        "--no-tray", action="store_true", help="run as a window even when a system tray exists"
    )
    p.add_argument("--headless", action="store_true", help="force managed browsers headless")
    p.add_argument("--port", type=int, help="control API port (default: controlPort setting)")
    p.set_defaults(local=cmd_tray)
