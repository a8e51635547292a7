"""asyncio helpers: named tasks that are kept referenced until they finish.

A bare ``asyncio.create_task`` result can be garbage-collected mid-flight and
its exception is lost; every background task in browserdeck goes through here.
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
