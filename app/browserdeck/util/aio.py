"""asyncio helpers: named tasks that are kept referenced until they finish.

A bare ``asyncio.create_task`` result can be garbage-collected mid-flight and
its exception is lost; every background task in browserdeck goes through here.
A task that outlives the call that started it belongs to an owner (``Tasks``):
the object that started it cancels it when it stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

_tasks: set[asyncio.Task[Any]] = set()


def create_task(coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
    task = asyncio.get_running_loop().create_task(coro, name=name)
    _tasks.add(task)
    task.add_done_callback(_done)
    return task


def _done(task: asyncio.Task[Any]) -> None:
    _tasks.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("background task %s failed", task.get_name(), exc_info=exc)


class Tasks:
    """The background tasks one object started; its ``stop()`` ends them with ``cancel_all``.

    Like ``asyncio.TaskGroup`` without its scope: the tasks are started from callbacks
    and handlers long after ``start()`` returned, and one failing must not cancel the
    others (each failure is logged, as with ``create_task``).
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        task = create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait until each has ended."""
        # Again until none is left: a task may start another while it is being cancelled.
        while running := [t for t in self._tasks if not t.done()]:
            await asyncio.gather(*(cancel_and_wait(t) for t in running))


async def cancel_and_wait(task: asyncio.Task[Any] | None) -> None:
    if task is None or task.done():
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        # Re-raise only if *we* are being cancelled, not the task we cancelled.
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:
        log.debug("task %s ended with an error while cancelled", task.get_name(), exc_info=True)


async def finish(task: asyncio.Future[T], what: str) -> T:
    """``await task``, which runs to its end even when the caller is cancelled meanwhile,
    once or again and again; the cancel is raised once it has ended. For work that cannot
    be stopped half-way (a thread's) and that the caller's cleanup must not race: a
    second cancel let ``Service.stop`` remove the instance file before the thread wrote
    it. A failure of ``task`` after a cancel is logged (``what`` says what it was): the
    cancel wins, and the error must not end as "Task exception was never retrieved"."""
    cancel: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError as exc:
            cancel = exc
    if cancel is not None:
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("%s failed while the caller was cancelled: %s", what, error)
        raise cancel
    return task.result()
