"""SIGINT, SIGTERM and SIGHUP ask the tray app to quit, on the Qt loop, on every platform.

Kept apart from ``TrayApp``: the Unix and Windows ways differ (qasync's self-pipe vs a
plain handler woken by a timer), and each handler installed needs undoing at shutdown.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

__all__ = ["install_quit_signals"]


def install_quit_signals(
    request_quit: Callable[[], None], parent: QObject
) -> list[Callable[[], None]]:
    """Route the quit signals to ``request_quit``; what undoes it, to call at shutdown."""
    cleanup: list[Callable[[], None]] = []
    loop = asyncio.get_running_loop()
    # SIGHUP (where it exists): `browserdeck` run from a terminal that is then closed
    # must quit cleanly, not leave its browsers behind.
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)):
        try:
            # qasync's Unix loop is a SelectorEventLoop: the signal wakes its self-pipe,
            # which Qt watches with a socket notifier, so the handler runs promptly
            # even while Qt sits in C++.
            loop.add_signal_handler(sig, request_quit)
            cleanup.append(_remover(loop, sig))
        except (NotImplementedError, RuntimeError, ValueError):
            # Windows: a plain handler plus a timer that hands control back to Python
            # every 200 ms so the handler gets to run.
            previous = signal.signal(sig, lambda *_: loop.call_soon_threadsafe(request_quit))
            timer = QTimer(parent)
            timer.start(200)
            timer.timeout.connect(lambda: None)
            cleanup.append(_restorer(sig, previous))
            cleanup.append(timer.stop)
    return cleanup


def _remover(loop: asyncio.AbstractEventLoop, sig: int) -> Callable[[], None]:
    def remove() -> None:
        loop.remove_signal_handler(sig)

    return remove


def _restorer(sig: int, previous: Any) -> Callable[[], None]:
    def restore() -> None:
        signal.signal(sig, previous)

    return restore
