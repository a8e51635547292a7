"""The app's asyncio loop leaves no Qt timer behind when closed (gui/qtloop.py).

The CI flake this guards against: a closed qasync loop kept its pending Qt timers; when
Python's garbage collector later freed it from a worker thread, Qt could not unregister
them and the next ``processEvents()`` segfaulted. The subprocess test replays exactly
that (a crash there cannot take this test run down with it).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from typing import Any

from browserdeck.gui.qtloop import QtEventLoop

REPLAY = textwrap.dedent(
    """
    import asyncio, faulthandler, gc, os, sys, threading, time
    faulthandler.enable()
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication
    import qasync
    from browserdeck.gui.qtloop import QtEventLoop

    app = QApplication([])
    gc.disable()  # the collector runs only where this script says: in a worker thread
    make = QtEventLoop if sys.argv[1] == "ours" else qasync.QEventLoop

    def one_test():
        loop = make(app)

        async def body():
            loop.call_later(0.3, print, "a callback of a closed loop ran")
            await asyncio.sleep(0)

        loop.run_until_complete(body())
        loop.close()

    one_test()
    worker = threading.Thread(target=gc.collect)
    worker.start()
    worker.join()
    time.sleep(0.6)
    app.processEvents()  # what pytest-qt does after every test
    print("survived")
    """
)


def replay(loop: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", REPLAY, loop],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )


def test_a_closed_loop_freed_from_another_thread_does_not_crash_qt() -> None:
    done = replay("ours")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["survived"], done.stdout
    assert "Timers cannot be stopped from another thread" not in done.stderr, done.stderr


def test_the_replay_crashes_on_plain_qasync() -> None:
    """The replay is the real failure: on qasync's own loop it crashes (or at least
    warns that Qt timers were left behind), so the test above proves the fix."""
    done = replay("qasync")
    assert done.returncode != 0 or "Timers cannot be stopped" in done.stderr, (
        done.returncode,
        done.stdout,
        done.stderr,
    )


def test_close_kills_pending_timers_and_later_calls_register_none(qapp: Any) -> None:
    loop = QtEventLoop(qapp)
    ran: list[str] = []

    async def body() -> None:
        loop.call_later(30, ran.append, "late")
        loop.call_later(0.5, ran.append, "soon").cancel()  # a cancelled one stays a timer
        await asyncio.sleep(0)

    loop.run_until_complete(body())
    assert loop.leftover_qt_timers() == 2  # qasync's own state before close
    loop.close()
    assert loop.leftover_qt_timers() == 0
    # What a worker thread's call_soon_threadsafe, delivered after close, ends up doing.
    handle = loop.call_soon(ran.append, "after close")
    assert handle.cancelled()
    assert loop.leftover_qt_timers() == 0
    assert ran == []
