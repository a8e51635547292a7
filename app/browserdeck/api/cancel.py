"""Work stops when its client leaves (docs/reliability.md): a request whose client disconnects
before the answer is cancelled, and the engine's in-flight work with it.

Starlette runs a plain route to the end even when nobody waits for the answer: a
``wait`` of 60 s, a slow snapshot or navigation would keep running (and hold the tab's
locks) for a client that is gone. This ASGI wrapper watches for ``http.disconnect``
once the request body has been read and cancels the handler if no response has
started. An MCP client's ``notifications/cancelled`` reaches here the same way: the SDK
cancels the tool call, which drops its HTTP request.

It reads the transport's ``receive`` only after the app has read the whole body (or at
once for a request without one), so the body is still read by the app alone and the
request-size limits see every byte.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

log = logging.getLogger(__name__)

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Streaming endpoints handle their own disconnects.
SKIP_PREFIXES = ("/mcp",)


def _has_body(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"transfer-encoding":
            return True
        if name == b"content-length":
            return value.strip() not in (b"", b"0")
    return False


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or path.startswith(SKIP_PREFIXES):
            await self.app(scope, receive, send)
            return
        lock = asyncio.Lock()  # one reader of the transport at a time
        pending: list[Message] = []
        body_read = asyncio.Event()
        disconnected = asyncio.Event()
        responded = False

        def note(message: Message) -> None:
            if message["type"] == "http.disconnect":
                disconnected.set()
                body_read.set()
            elif not message.get("more_body"):
                body_read.set()

        async def app_receive() -> Message:
            async with lock:
                if pending:
                    return pending.pop(0)
                if not body_read.is_set():
                    message = await receive()
                    note(message)
                    return message
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def app_send(message: Message) -> None:
            nonlocal responded
            if message["type"] == "http.response.start":
                responded = True
            await send(message)

        request_task = asyncio.current_task()
        assert request_task is not None
        cancelled_by_us = False

        async def watch() -> None:
            nonlocal cancelled_by_us
            if not _has_body(scope):
                async with lock:
                    if not body_read.is_set():
                        message = await receive()  # the empty body
                        note(message)
                        pending.append(message)
            await body_read.wait()
            if not disconnected.is_set():
                # Blocks until the client goes away (or the response is complete).
                message = await receive()
                if message["type"] != "http.disconnect":
                    return
                disconnected.set()
            if not responded and not finished:
                log.info(
                    "%s %s: the client disconnected before the answer; its work is cancelled",
                    scope.get("method"),
                    path,
                )
                cancelled_by_us = True
                request_task.cancel()

        finished = False
        watcher = asyncio.ensure_future(watch())
        try:
            await self.app(scope, app_receive, app_send)
        except asyncio.CancelledError:
            if cancelled_by_us and request_task.uncancel() == 0:
                return  # only our own cancel: nobody is left to answer
            raise
        finally:
            finished = True
            watcher.cancel()
