"""`browserdeck tray` (also what `browserdeck` alone runs): the desktop tray app.

Kept apart from cli/main.py so that importing the CLI never imports Qt: PySide6 is
imported only when the tray actually starts.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Mapping

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def display_problem(env: Mapping[str, str] | None = None) -> str | None:
    """Why Qt could not open a window here (Linux/BSD), or None.

    Without this, QApplication aborts the process ("could not connect to display …
    Aborted") before any of our code can say anything.
    """
    env = os.environ if env is None else env
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith(("xcb", "wayland")):
        return None  # offscreen, vnc, eglfs…: the user picked a platform that needs no display
    wayland = env.get("WAYLAND_DISPLAY")
    if wayland and not platform.startswith("xcb"):
        runtime = env.get("XDG_RUNTIME_DIR", "")
        path = wayland if os.path.isabs(wayland) else os.path.join(runtime, wayland)
        if _connects(path):
            return None
        if not env.get("DISPLAY"):
            return f"the Wayland display {wayland} does not answer"
    display = env.get("DISPLAY")
    if not display:
        return "no display: DISPLAY and WAYLAND_DISPLAY are unset"
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return f"DISPLAY={display} is not a display name"
    if host in ("", "unix"):
        if _connects(f"/tmp/.X11-unix/X{number}") or _connects(f"@/tmp/.X11-unix/X{number}"):
            return None
        return f"the X display {display} does not answer"
    try:
        with socket.create_connection((host, 6000 + int(number)), timeout=2):
            return None
    except OSError:
        return f"the X display {display} does not answer"


def _connects(path: str) -> bool:
    address = "\0" + path[1:] if path.startswith("@") else path  # "@": abstract socket
    if not path.startswith("@") and not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        try:
            sock.connect(address)
        except OSError:
            return False
    return True


def cmd_tray(args: argparse.Namespace) -> int:
    problem = display_problem()
    if problem is not None:
        # One line, then what `browserdeck serve` does: the service works without a desktop.
        print(
            f"browserdeck: {problem}, so no tray icon or windows; running the service "
            "headless instead (as `browserdeck serve --headless`). Ctrl+C stops it.",
            file=sys.stderr,
            flush=True,
        )
        import asyncio

        from browserdeck.master import serve

        return asyncio.run(serve(headless=True, port=getattr(args, "port", None)))
    from functools import partial

    from browserdeck.gui.ask import ask_user
    from browserdeck.gui.launch import run
    from browserdeck.master import build_service, mcp_client_config

    # The tray's question box is how the service asks the user (logins into their Chrome).
    return run(args, partial(build_service, ask_user=ask_user), mcp_client_config)


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
