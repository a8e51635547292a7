"""Chrome's DevTools over ``--remote-debugging-pipe``, shared by many clients.

A managed browser has no DevTools port (any local user could drive
one). It reads CDP messages from fd 3 and writes to fd 4, each message a JSON text
ended by a NUL byte. There is one pipe per browser, and every client (our engine, the
service's tab calls, a user's Puppeteer) shares it through ``BrowserPipe``:

* Each client gets a **channel**: a CDP session of its own on the pipe
  (``Target.attachToBrowserTarget``, or ``Target.attachToTarget`` for a page-level
  client). Chrome then keeps every client's state apart (auto-attach, discovery,
  domains enabled) exactly as it would for separate DevTools connections, and call ids
  need no rewriting: Chrome answers per session.
* Chrome puts a message's ``sessionId`` last (``…,"sessionId":"<32 hex>"}``), so the
  reader routes by looking at the tail of each message and never parses the (often
  megabytes of) JSON in between. A message of a client's own root session loses that
  tail, so the client sees an ordinary browser- or page-level connection.
* Sessions a client attaches to later are announced by ``Target.attachedToTarget`` on
  one of its own sessions; those small events are parsed to learn the new owner.
* The pipe's own root session belongs to browserdeck alone (``call``), for attaching
  channels, ``/json/list``, ``Browser.close``.

Reading and writing use the event loop's pipe transports (``connect_read_pipe``), which
work on plain asyncio and on qasync alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
from collections.abc import Callable
from typing import Any

from browserdeck.errors import ActionTimeout, Unavailable

__all__ = ["BrowserPipe", "Channel", "PipeCallError"]

log = logging.getLogger(__name__)

# The tail Chrome writes for a message of a session (its ids are 32 upper-case hex).
# A nested "sessionId" (inside params) is followed by at least two closing braces, so a
# match at the very end is always the top-level key.
_SESSION_TAIL = re.compile(rb',"sessionId":"([0-9A-Za-z]{1,64})"\}$')
_TAIL_WINDOW = 100
_ATTACHED = b'{"method":"Target.attachedToTarget"'
_DETACHED = b'{"method":"Target.detachedFromTarget"'


class PipeCallError(Exception):
    """Chrome answered one of browserdeck's own calls with a protocol error."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('message', error)}")
        self.method = method
        self.error = error


class Channel:
    """One client's share of the pipe: its root session and the sessions it opened."""

    def __init__(
        self,
        pipe: BrowserPipe,
        root: str,
        deliver: Callable[[bytes], None],
        on_close: Callable[[str], None],
    ) -> None:
        self.pipe = pipe
        self.root = root
        self.deliver = deliver
        self.on_close = on_close
        self.sessions: set[str] = {root}
        self.closed = False

    def send(self, data: bytes) -> None:
        """Forward a message that already names its session (see chrome/inbound.py)."""
        self.pipe.send_raw(data)

    async def close(self) -> None:
        await self.pipe.close_channel(self)


class BrowserPipe:
    """The browserdeck end of one browser's DevTools pipe."""

    def __init__(self, write_fd: int, read_fd: int, *, label: str = "browser") -> None:
        self.label = label
        self._write_fd = write_fd
        self._read_fd = read_fd
        self._writer: asyncio.WriteTransport | None = None
        self._reader: asyncio.ReadTransport | None = None
        self._partial = bytearray()
        # Far from the small ids clients count from, though answers are also matched by
        # session: a late answer to a departed client's call never ends one of ours.
        self._ids = itertools.count(1 << 30)
        self._pending: dict[int, tuple[str, str | None, asyncio.Future[dict[str, Any]]]] = {}
        self._owners: dict[str, Channel] = {}
        self._channels: set[Channel] = set()
        self.closed_reason: str | None = None
        self._closed = asyncio.Event()
        self.on_event: Callable[[dict[str, Any]], None] | None = None

    # -- lifecycle --

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._reader, _ = await loop.connect_read_pipe(
            lambda: _ReadProtocol(self), os.fdopen(self._read_fd, "rb", buffering=0)
        )
        self._writer, _ = await loop.connect_write_pipe(
            lambda: _WriteProtocol(self), os.fdopen(self._write_fd, "wb", buffering=0)
        )

    @property
    def closed(self) -> bool:
        return self.closed_reason is not None

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def close(self, reason: str = "the browserdeck end of the pipe was closed") -> None:
        """Close both ends; every pending call and every channel ends at once."""
        if self.closed_reason is not None:
            return
        self.closed_reason = reason
        for transport in (self._writer, self._reader):
            if transport is not None:
                transport.close()
        for method, _session, future in self._pending.values():
            if not future.done():
                future.set_exception(
                    Unavailable(f"{self.label}: {reason} (during {method})", code="browser_gone")
                )
        self._pending.clear()
        for channel in list(self._channels):
            self._drop_channel(channel, reason)
        self._closed.set()

    # -- browserdeck's own calls on the root session --

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        """A call of browserdeck's own: on the root session, or on ``session`` (one that no
        client owns, e.g. attached with ``Target.attachToTarget`` through this method)."""
        if self.closed_reason is not None:
            raise Unavailable(f"{self.label}: {self.closed_reason}", code="browser_gone")
        call_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = (method, session, future)
        message: dict[str, Any] = {"id": call_id, "method": method}
        if params:
            message["params"] = params
        if session is not None:
            message["sessionId"] = session
        self.send_raw(json.dumps(message).encode())
        try:
            reply = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise ActionTimeout(
                f"{self.label} did not answer {method} within {timeout:g} s",
                hint="the browser may be hung; stop and start the profile",
            ) from None
        finally:
            self._pending.pop(call_id, None)
        if "error" in reply:
            raise PipeCallError(method, reply["error"])
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    # -- channels --

    async def open_channel(
        self,
        deliver: Callable[[bytes], None],
        on_close: Callable[[str], None],
        *,
        target_id: str | None = None,
    ) -> Channel:
        """A session of its own for one client: browser-level, or on ``target_id``."""
        if target_id is None:
            attached = await self.call("Target.attachToBrowserTarget")
        else:
            attached = await self.call(
                "Target.attachToTarget", {"targetId": target_id, "flatten": True}
            )
        channel = Channel(self, str(attached["sessionId"]), deliver, on_close)
        self._owners[channel.root] = channel
        self._channels.add(channel)
        return channel

    async def close_channel(self, channel: Channel) -> None:
        if channel.closed:
            return
        root_attached = channel.root in self._owners
        self._drop_channel(channel, None)
        if root_attached and self.closed_reason is None:
            # Detaching the root session detaches what the client attached through it and
            # resumes targets it left paused (waitForDebuggerOnStart).
            with contextlib.suppress(Exception):
                await self.call("Target.detachFromTarget", {"sessionId": channel.root}, timeout=5)

    def _drop_channel(self, channel: Channel, reason: str | None) -> None:
        channel.closed = True
        self._channels.discard(channel)
        for session in channel.sessions:
            if self._owners.get(session) is channel:
                del self._owners[session]
        channel.sessions.clear()
        if reason is not None:
            channel.on_close(reason)

    # -- wire --

    def send_raw(self, data: bytes) -> None:
        if self._writer is None or self.closed_reason is not None:
            raise Unavailable(
                f"{self.label}: {self.closed_reason or 'the pipe is not open'}",
                code="browser_gone",
            )
        self._writer.write(data + b"\0")

    def _received(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\0", start)
            if end < 0:
                break
            if self._partial:
                self._partial += data[start:end]
                message = bytes(self._partial)
                self._partial.clear()
            else:
                message = data[start:end]
            start = end + 1
            try:
                self._dispatch(message)
            except Exception:  # one bad message must not stop the reader
                log.exception("%s: could not route a message from the browser", self.label)
        if start < len(data):
            self._partial += data[start:]

    def _dispatch(self, message: bytes) -> None:
        tail = _SESSION_TAIL.search(message, max(0, len(message) - _TAIL_WINDOW))
        if tail is None:
            self._root_message(message)
            return
        session = tail.group(1).decode("ascii")
        channel = self._owners.get(session)
        if channel is None:
            # A session of our own calls, or one whose client has left (its detach is
            # under way): only answers to our own calls matter there.
            if message.startswith(b'{"id":'):
                self._root_message(message, session)
            return
        if message.startswith(_ATTACHED) or message.startswith(_DETACHED):
            self._track(message, channel)
        if session == channel.root:
            message = message[: tail.start()] + b"}"
        channel.deliver(message)

    def _track(self, message: bytes, channel: Channel) -> None:
        event = json.loads(message)
        child = str(event.get("params", {}).get("sessionId", ""))
        if not child:
            return
        if message.startswith(_ATTACHED):
            self._owners[child] = channel
            channel.sessions.add(child)
        elif self._owners.get(child) is channel and child != channel.root:
            del self._owners[child]
            channel.sessions.discard(child)

    def _root_message(self, message: bytes, session: str | None = None) -> None:
        data = json.loads(message)
        if not isinstance(data, dict):
            return
        call_id = data.get("id")
        if isinstance(call_id, int):
            pending = self._pending.get(call_id)
            if pending is not None and pending[1] == session and not pending[2].done():
                pending[2].set_result(data)
            return
        if data.get("method") == "Target.detachedFromTarget":
            # A page-level client's target went away (or Chrome dropped a session).
            session = str(data.get("params", {}).get("sessionId", ""))
            channel = self._owners.get(session)
            if channel is not None and channel.root == session:
                self._drop_channel(channel, "the target was closed")
        if self.on_event is not None:
            self.on_event(data)


class _ReadProtocol(asyncio.Protocol):
    def __init__(self, pipe: BrowserPipe) -> None:
        self.pipe = pipe

    def data_received(self, data: bytes) -> None:
        self.pipe._received(data)

    def eof_received(self) -> bool | None:
        self.pipe.close("the browser closed its DevTools pipe (it exited)")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe.close("the browser closed its DevTools pipe (it exited)")


class _WriteProtocol(asyncio.BaseProtocol):
    def __init__(self, pipe: BrowserPipe) -> None:
        self.pipe = pipe

    def connection_lost(self, exc: Exception | None) -> None:
        self.pipe.close("the browser stopped reading its DevTools pipe (it exited)")
