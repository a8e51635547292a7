"""The asyncio loop the tray app (and its GUI tests) run on: qasync's, closed completely.

qasync runs each ``call_soon``/``call_later`` as a Qt timer of one ``QObject`` (its
``_SimpleTimer``) and keeps the handle in a dict of that object. Its ``close()`` only
flags that object "stopped": every timer still pending (a cancelled ``wait_for``
timeout, a poll ``sleep``; often a hundred, up to a minute away) stays registered
with Qt, and the dict's handles point back at the loop, so the closed loop is freed
only by Python's cyclic garbage collector. That collector runs in whichever thread
happens to allocate: when it was a worker thread (``asyncio.to_thread``, uvicorn),
``~QObject`` there could not unregister the timers ("QObject::~QObject: Timers cannot
be stopped from another thread"), Qt kept them pointing at freed memory, and the next
``processEvents()`` that reached one crashed the process (a CI flake: a segfault in
pytest-qt's post-test ``processEvents`` during a later, non-GUI test file).

``close()`` here also kills those timers and drops their handles, in the loop's own
(Qt) thread, at the moment the loop is closed: nothing of the loop is left for the
garbage collector to delete elsewhere.
"""

from __future__ import annotations

import asyncio
from typing import Any

import qasync
from PySide6.QtCore import QAbstractEventDispatcher, QObject


def pending_qt_timers(obj: QObject) -> int:
    """How many Qt timers ``obj`` has registered in its thread's event dispatcher."""
    dispatcher = QAbstractEventDispatcher.instance(obj.thread())
    return len(dispatcher.registeredTimers(obj)) if dispatcher is not None else 0


class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync ships no types
    """``qasync.QEventLoop`` whose ``close()`` leaves no Qt timer and no handle behind."""

    def close(self) -> None:
        super().close()
        timer: QObject | None = getattr(self, "_timer", None)
        if timer is None:
            return
        dispatcher = QAbstractEventDispatcher.instance(timer.thread())
        if dispatcher is not None:
            for info in dispatcher.registeredTimers(timer):
                timer.killTimer(info.timerId)
        # qasync's private dict of handles (each holds the loop: a reference cycle).
        # Dropped here so the loop is freed now, by reference counting, in this thread.
        handles: Any = getattr(timer, "_SimpleTimer__callbacks", None)
        if isinstance(handles, dict):
            handles.clear()

    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        # Every call_soon/call_later/call_at lands here. qasync schedules even on a closed
        # loop: a worker thread's call_soon_threadsafe queued just before close() still
        # arrives (Qt delivers a queued signal emitted before the disconnect), and would
        # register a Qt timer that nothing kills. qasync would never run that callback
        # (its stopped timer drops it when it fires): drop it now, with no Qt timer.
        if self.is_closed():
            handle.cancel()
            return handle
        result: asyncio.Handle = super()._add_callback(handle, delay)
        return result

    def leftover_qt_timers(self) -> int:
        """Qt timers this loop still has registered (0 once closed)."""
        timer: QObject | None = getattr(self, "_timer", None)
        return pending_qt_timers(timer) if timer is not None else 0
