"""The relay's side of the one ``/extension`` connection: requests, replies, timeouts.

Two kinds of request share one id space:

* ``call`` — relay-internal operations (attach, createTab, ...): awaited, with a timeout.
* ``forward`` — a client's CDP command on the hot path: no future and no task, just a
  callback run when the reply frame arrives, so replies keep the extension's order.

When the connection drops every pending request is failed at once (no client is left
waiting for an answer that cannot come), and requests time out even while it is up.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from websockets.protocol import State

from browserdeck.relay.protocol import SERVER_ERROR, CdpError, dumps, frame, loads

log = logging.getLogger(__name__)

# (raw result JSON or None, error dict or None) -> awaitable
ReplyHandler = Callable[[str | None, dict[str, Any] | None], Awaitable[None]]


class Socket(Protocol):
    async def send(self, message: str) -> None: ...

    async def close(self, code: int = 1000, reason: str = "") -> None: ...


async def send_text(ws: Socket, text: str) -> None:
    """Send one text message, writing it to the transport at once when that is safe.

    Every relayed message costs two sends; ``websockets``' ``send()`` (an async context
    manager, state checks and a drain per message) was a measurable part of the relay's
    per-message cost (docs/extension.md, Performance). When the connection is open, no
    fragmented send is under way and the transport is not paused for flow control, the
    frame is written synchronously, which is all ``send()`` would do then too; otherwise
    (and for anything that is not a ``websockets`` connection) ``send()`` handles it.
    """
    protocol = getattr(ws, "protocol", None)
    if (
        protocol is not None
        and protocol.state is State.OPEN
        and ws.send_in_progress is None  # type: ignore[attr-defined]
        and not ws.paused  # type: ignore[attr-defined]
        and not ws.transport.is_closing()  # type: ignore[attr-defined]
    ):
        protocol.send_text(text.encode())
        ws.send_data()  # type: ignore[attr-defined]
        return
    await ws.send(text)


@dataclass
class _Pending:
    method: str
    handler: ReplyHandler
    timer: asyncio.TimerHandle | None = None


@dataclass
class ExtensionInfo:
    user_agent: str = ""
    version: str = ""
    extension_id: str = ""
    instance: str = ""
    browser_context_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ExtensionLink:
    def __init__(self, ws: Socket, *, remote: str = "", instance: str = "") -> None:
        self.ws = ws
        self.remote = remote
        self.instance = instance
        self.info = ExtensionInfo(instance=instance)
        self.closed = False
        self.close_reason = ""
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self.last_seen = asyncio.get_running_loop().time()

    async def send_raw(self, text: str) -> None:
        if self.closed:
            raise CdpError(self.close_reason or "the browserdeck extension disconnected")
        try:
            await send_text(self.ws, text)
        except Exception as exc:  # ConnectionClosed or a broken transport
            raise CdpError(f"the browserdeck extension connection broke ({exc})") from None

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        header: dict[str, Any] = {"method": method}
        if params is not None:
            header["params"] = params
        await self.send_raw(frame(header))

    def _register(self, method: str, handler: ReplyHandler, timeout: float | None) -> int:
        if self.closed:
            raise CdpError(self.close_reason or "the browserdeck extension disconnected")
        msg_id = next(self._ids)
        pending = _Pending(method, handler)
        if timeout is not None:
            pending.timer = asyncio.get_running_loop().call_later(
                timeout, self._expire, msg_id, timeout
            )
        self._pending[msg_id] = pending
        return msg_id

    def _expire(self, msg_id: int, timeout: float) -> None:
        pending = self._pending.pop(msg_id, None)
        if pending is None:
            return
        error = {
            "code": SERVER_ERROR,
            "message": f"the browserdeck extension did not answer {pending.method} "
            f"within {timeout:g} s",
        }
        # A timer callback cannot await: hand the reply to a task.
        from browserdeck.util.aio import create_task

        create_task(_run(pending.handler, None, error), name=f"relay-timeout-{msg_id}")

    async def forward(
        self,
        tab_id: int,
        session_id: str | None,
        cdp_method: str,
        params_json: str,
        handler: ReplyHandler,
        *,
        reply_timeout: float | None,
    ) -> None:
        """Send a CDP command to a tab (or a child session of it); ``handler`` gets the reply."""
        msg_id = self._register(cdp_method, handler, reply_timeout)
        header: dict[str, Any] = {"id": msg_id, "method": "cdp", "tabId": tab_id}
        if session_id:
            header["sessionId"] = session_id
        header["cdpMethod"] = cdp_method
        try:
            await self.send_raw(frame(header, raw=params_json))
        except CdpError:
            self._drop(msg_id)
            raise

    async def call(
        self, method: str, params: dict[str, Any], *, reply_timeout: float = 20.0
    ) -> Any:
        """A relay-internal request; returns the parsed result or raises CdpError."""
        future, on_reply = _awaited_reply()
        msg_id = self._register(method, on_reply, reply_timeout)
        try:
            await self.send_raw(frame({"id": msg_id, "method": method, "params": params}))
        except CdpError:
            self._drop(msg_id)
            raise
        return await future

    async def cdp(
        self,
        tab_id: int,
        cdp_method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        reply_timeout: float = 20.0,
    ) -> Any:
        """A relay-internal CDP command on a tab; returns the parsed result."""
        future, on_reply = _awaited_reply()
        await self.forward(
            tab_id,
            session_id,
            cdp_method,
            dumps(params or {}),
            on_reply,
            reply_timeout=reply_timeout,
        )
        return await future

    def _drop(self, msg_id: int) -> _Pending | None:
        pending = self._pending.pop(msg_id, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    async def on_reply(self, header: dict[str, Any], body: str | None) -> None:
        msg_id = header.get("id")
        pending = self._drop(msg_id) if isinstance(msg_id, int) else None
        if pending is None:
            log.debug("reply for unknown or expired request %r", msg_id)
            return
        error = header.get("error")
        if error is not None and not isinstance(error, dict):
            error = {"code": SERVER_ERROR, "message": str(error)}
        await _run(pending.handler, None if error else (body or "{}"), error)

    async def fail_all(self, reason: str) -> None:
        """The connection is gone: answer every pending request with ``reason``."""
        self.closed = True
        self.close_reason = reason
        pending, self._pending = self._pending, {}
        error = {"code": SERVER_ERROR, "message": reason}
        for item in pending.values():
            if item.timer is not None:
                item.timer.cancel()
            await _run(item.handler, None, error)


def _awaited_reply() -> tuple[asyncio.Future[Any], ReplyHandler]:
    """A future and the reply handler that settles it (parsed result, or CdpError)."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def on_reply(body: str | None, error: dict[str, Any] | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(
                CdpError(str(error.get("message", error)), int(error.get("code", -32000)))
            )
        else:
            future.set_result(loads(body) if body else {})

    return future, on_reply


async def _run(handler: ReplyHandler, body: str | None, error: dict[str, Any] | None) -> None:
    try:
        await handler(body, error)
    except Exception:
        log.exception("relay reply handler failed")
