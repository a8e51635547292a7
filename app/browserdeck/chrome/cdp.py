"""A small raw Chrome DevTools Protocol client on ``websockets``.

Independent of Playwright on purpose: the launcher needs ``Browser.close`` and the
service needs ``Target.*`` calls even when no Playwright connection exists (or
when that connection is what broke).  One reader task per connection matches
answers to calls by ``id`` and fans events out to handlers; when the socket
drops, every pending call and event waiter fails at once with ``Unavailable``,
so nothing hangs on a dead browser.

Example::

    async with await CDPClient.connect(await browser_ws_url("http://127.0.0.1:18800")) as cdp:
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        attached = await cdp.send("Target.attachToTarget", {"targetId": tid, "flatten": True})
        await cdp.send("Runtime.evaluate", {"expression": "1+1"}, session_id=attached["sessionId"])
"""


from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from browserdeck.chrome.endpoint import browser_ws_url
from browserdeck.errors import (
    START,
    STATUS,
    STOP,
    ActionTimeout,
    CDPError,
    Hint,
    Unavailable,
)
from browserdeck.policy.guard import is_loopback_name

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["CDPClient", "CDPError", "EventHandler", "browser_ws_url"]

log = logging.getLogger(__name__)

EventHandler = Callable[[dict[str, Any], str | None], None]
EventPredicate = Callable[[dict[str, Any]], bool]


class CDPClient:
    """One WebSocket connection to a CDP endpoint (browser-level or page-level)."""

    def __init__(self, ws: ClientConnection, url: str) -> None:
        self.url = url
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._handlers: dict[str, list[EventHandler]] = {}
        self._waiters: list[tuple[str, EventPredicate | None, asyncio.Future[dict[str, Any]]]] = []
        self._close_reason: str | None = None
        self._reader = asyncio.get_running_loop().create_task(
            self._read_loop(), name=f"cdp-reader {url}"
        )

    @classmethod
    async def connect(
        cls,
        ws_url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 5.0,
        max_size: int = 64 * 2**20,
    ) -> CDPClient:
        """Open a connection; ``ws_url`` may also be an http(s) cdpUrl (resolved via /json/version)."""
        if urlsplit(ws_url).scheme in ("http", "https"):
            ws_url = await browser_ws_url(ws_url, timeout=timeout, headers=headers)
        # The client half of websockets is imported by the first connection: a managed
        # browser's start needs only the server half (our CDP gateway).
        from websockets.asyncio.client import connect

        loopback = is_loopback_name(urlsplit(ws_url).hostname)
        try:
            ws = await asyncio.wait_for(
                connect(
                    ws_url,
                    additional_headers=headers,
                    max_size=max_size,
                    open_timeout=timeout,
                    # CDP needs no keepalive on loopback, and a browser paused in a
                    # debugger must not be dropped for a late pong.
                    ping_interval=None if loopback else 20,
                    compression=None,
                    # Never send loopback traffic through an HTTP(S)_PROXY from the env.
                    proxy=None if loopback else True,
                    user_agent_header=None,
                ),
                timeout,
            )
        except TimeoutError:
            raise Unavailable(
                f"CDP WebSocket {ws_url} did not complete its handshake within {timeout:g} s",
                hint=Hint(
                    "is the browser still running and responsive? check the profile ({status})",
                    status=STATUS,
                ),
                code="cdp_unreachable",
            ) from None
        except (OSError, InvalidHandshake, InvalidURI) as exc:
            raise Unavailable(
                f"cannot open CDP WebSocket {ws_url}: {exc}",
                hint=Hint(
                    "is the browser still running? check the profile ({status}); a stale "
                    "ws:// URL changes every time the browser restarts",
                    status=STATUS,
                ),
                code="cdp_unreachable",
            ) from None
        return cls(ws, ws_url)

    # -- calls ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._close_reason is not None

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        """Call ``method`` and return its ``result``.

        Raises ``CDPError`` for a protocol error, ``ActionTimeout`` when no answer
        comes within ``timeout`` (the connection stays usable), ``Unavailable`` when
        the connection is or becomes closed.
        """
        if self._close_reason is not None:
            raise self._closed_error(method)
        msg_id = next(self._ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = (method, future)
        try:
            try:
                await self._ws.send(json.dumps(message))
            except ConnectionClosed:
                self._on_closed("the browser closed the connection")
                if future.done() and not future.cancelled():
                    future.exception()  # failed by _on_closed; mark it retrieved
                raise self._closed_error(method) from None
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise ActionTimeout(
                f"CDP {method} got no answer within {timeout:g} s",
                hint=Hint(
                    "the page or browser may be busy or hung; retry, or restart the "
                    "browser ({stop}, then {start})",
                    stop=STOP,
                    start=START,
                ),
            ) from None
        finally:
            self._pending.pop(msg_id, None)

    # -- events --------------------------------------------------------------

    def on(self, method: str, handler: EventHandler) -> Callable[[], None]:
        """Call ``handler(params, session_id)`` for every ``method`` event; returns an unsubscribe."""
        self._handlers.setdefault(method, []).append(handler)

        def unsubscribe() -> None:
            handlers = self._handlers.get(method)
            if handlers and handler in handlers:
                handlers.remove(handler)

        return unsubscribe

    def expect_event(
        self, method: str, predicate: EventPredicate | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """A future for the next matching event, registered now (so register, then send)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._close_reason is not None:
            future.set_exception(self._closed_error(f"waiting for {method}"))
        else:
            self._waiters.append((method, predicate, future))
        return future

    async def wait_for_event(
        self, method: str, predicate: EventPredicate | None = None, timeout: float = 10.0
    ) -> dict[str, Any]:
        """Wait for the next ``method`` event whose params satisfy ``predicate``."""
        future = self.expect_event(method, predicate)
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise ActionTimeout(
                f"no CDP {method} event within {timeout:g} s",
                hint="the event may never come for this page state; check the page first",
            ) from None
        finally:
            if not future.done():
                future.cancel()
            self._waiters = [w for w in self._waiters if w[2] is not future]

    # -- lifecycle -----------------------------------------------------------

    async def close(self) -> None:
        """Close the socket; pending calls fail with ``Unavailable``. Idempotent."""
        self._on_closed("the connection was closed by browserdeck")
        with contextlib.suppress(Exception):
            await self._ws.close()
        if not self._reader.done():
            self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def __aenter__(self) -> CDPClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- internals -----------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "the browser closed the connection"
        try:
            async for raw in self._ws:
                self._dispatch(raw)
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.reason:
                reason = f"the browser closed the connection ({exc.rcvd.reason})"
            else:
                reason = "the connection to the browser dropped"
        except Exception as exc:  # a bug here must not leave callers hanging
            log.exception("CDP reader for %s failed", self.url)
            reason = f"the CDP reader failed: {exc}"
        finally:
            self._on_closed(reason)

    def _dispatch(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("CDP %s sent a non-JSON frame: %r", self.url, raw[:200])
            return
        if not isinstance(message, dict):
            return
        msg_id = message.get("id")
        if msg_id is not None:
            entry = self._pending.get(msg_id)
            if entry is None:
                return  # an answer after its call timed out
            call_method, future = entry
            if future.done():
                return
            error = message.get("error")
            if error is not None:
                future.set_exception(self._protocol_error(call_method, error))
            else:
                result = message.get("result")
                future.set_result(result if isinstance(result, dict) else {})
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        session_id = message.get("sessionId")
        for handler in list(self._handlers.get(method, ())):
            try:
                handler(params, session_id)
            except Exception:
                log.exception("CDP event handler for %s failed", method)
        if self._waiters:
            self._resolve_waiters(method, params)

    def _resolve_waiters(self, method: str, params: dict[str, Any]) -> None:
        remaining = []
        for waiter in self._waiters:
            name, predicate, future = waiter
            if future.done():
                continue
            if name == method:
                try:
                    matched = predicate is None or predicate(params)
                except Exception as exc:
                    future.set_exception(exc)
                    continue
                if matched:
                    future.set_result(params)
                    continue
            remaining.append(waiter)
        self._waiters = remaining

    @staticmethod
    def _protocol_error(method: str, error: Any) -> CDPError:
        if isinstance(error, dict):
            text = str(error.get("message", "unknown error"))
            code = error.get("code")
            data = error.get("data")
        else:
            text, code, data = str(error), None, None
        detail = f"{text}: {data}" if data else text
        return CDPError(
            f"CDP {method} failed: {detail}",
            method=method,
            cdp_code=code if isinstance(code, int) else None,
            data=data,
            hint="check the method name and parameters against the DevTools protocol "
            "(the target may also be gone)",
        )

    def _closed_error(self, what: str) -> Unavailable:
        return Unavailable(
            f"CDP {what} failed: {self._close_reason or 'the connection is closed'} ({self.url})",
            hint=Hint(
                "the browser may have exited or been restarted; check the profile ({status}) "
                "and reconnect",
                status=STATUS,
            ),
            code="cdp_closed",
        )

    def _on_closed(self, reason: str) -> None:
        if self._close_reason is not None:
            return
        self._close_reason = reason
        for method, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(self._closed_error(method))
        self._pending.clear()
        for name, _predicate, future in self._waiters:
            if not future.done():
                future.set_exception(self._closed_error(f"waiting for {name}"))
        self._waiters = []
