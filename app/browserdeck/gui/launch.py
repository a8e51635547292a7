"""The tray app's entry point (`browserdeck` / `browserdeck tray`): hand over to a running
tray, take over a service an MCP client started, or start the app on a qasync loop."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from browserdeck.gui import instance, trace
from browserdeck.gui.app import TrayApp
from browserdeck.gui.qtapp import make_qapp
from browserdeck.gui.takeover import McpService
from browserdeck.util import heap

if TYPE_CHECKING:
    from browserdeck.service import Service


def second_launch(show: str = "show-panel") -> int | McpService | None:
    """If a browserdeck already runs for this home: hand over and return an exit code, or
    the service an MCP client started, which this app takes over (gui/takeover.py)."""
    answer = instance.send_command(show)
    if answer is not None:
        trace.emit("second-launch", answer=answer)
        print(
            "browserdeck is already running; showing its "
            f"{'panel' if show == 'show-panel' else 'settings'}.",
            file=sys.stderr,
        )
        return 0
    running = instance.running_service()
    mcp_service = McpService.of(running)
    if mcp_service is not None:
        return mcp_service
    if running is not None:
        print(
            f"error: browserdeck is already running at {running.get('url')} "
            f"(pid {running.get('pid')}) without a tray, e.g. `browserdeck serve`.\n"
            "  hint: use the CLI against it, or stop it and start the tray app.",
            file=sys.stderr,
        )
        return 1
    return None


def run(
    args: argparse.Namespace,
    build_service: Callable[..., Service],
    mcp_config: Callable[[], str],
) -> int:
    """The tray app; ``build_service`` and ``mcp_config`` are the composition root's
    (``master.build_service``, ``master.mcp_client_config``)."""
    from browserdeck.gui.qtloop import QtEventLoop
    from browserdeck.util import logsetup

    logsetup.setup()
    qapp = make_qapp()
    handed_over = second_launch(
        "show-settings" if getattr(args, "settings", False) else "show-panel"
    )
    if isinstance(handed_over, int):
        return handed_over
    headless = bool(getattr(args, "headless", False))
    port = getattr(args, "port", None)
    app = TrayApp(
        qapp,
        service_factory=lambda: build_service(force_headless=headless, control_port=port),
        mcp_config=mcp_config,
        tray=False if getattr(args, "no_tray", False) else None,
        show_panel=bool(getattr(args, "panel", False)),
        show_settings=bool(getattr(args, "settings", False)),
        take_over=handed_over,
    )
    # Before the service starts (it starts inside the loop): the app's own process only,
    # never a test's that builds a TrayApp.
    heap.settle()  # a big snapshot's temporaries no longer set off collections
    loop = QtEventLoop(qapp)
    asyncio.set_event_loop(loop)
    main = loop.create_task(app.run(), name="gui-main")
    try:
        with loop:
            while True:
                try:
                    return int(loop.run_until_complete(main))
                except RuntimeError as exc:
                    # Something called QApplication.quit() (session logout, aboutToQuit):
                    # the Qt loop returned early. request_quit() has been called from
                    # aboutToQuit; run the loop again until the shutdown path finishes.
                    if main.done() or "before Future completed" not in str(exc):
                        raise
                    app.request_quit()
    finally:
        asyncio.set_event_loop(None)
