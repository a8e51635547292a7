"""The control API's ASGI middleware around the shared guard (browserdeck.policy.guard).

Loopback peer and Host, no browser Origins, bearer token. A plain ASGI middleware (not BaseHTTPMiddleware) so it costs microseconds per request.
DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still sends
``Host: evil.example`` — refused. Browser pages send ``Origin`` — refused, so no web
page can drive the API even if it guessed the token; only ``/mcp`` takes its own origin
(a page served from the API's own port, with the token: guard.is_own_origin).
``GET /health`` needs no token.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from browserdeck.api.errors import status_of
from browserdeck.errors import BrowserdeckError
from browserdeck.policy import guard

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = frozenset({"/health"})
# Where a page served from the API's own port may call (its own Origin, with the token): an
# MCP client in a browser (the MCP inspector opened on this port; the MCP conformance
# suite's DNS-rebinding check sends Host and Origin both localhost:<port>). The rest of
# the API has no browser clients and refuses every web Origin.
OWN_ORIGIN_PATHS = frozenset({"/mcp", "/mcp/"})
# Set in the scope of a request that came over the API's Unix socket: the peer's uid
# (SO_PEERCRED, read when the connection was accepted; api/server.py). Such a request
# needs no token: the kernel vouches for who sent it (guard.check_peer_uid).
PEER_UID = "browserdeck.peer_uid"
# And the peer's pid (SO_PEERCRED too): the process a `browserdeck mcp` bridge's session
# lives as long as, in the kernel's word rather than a header's.
PEER_PID = "browserdeck.peer_pid"
# The biggest legitimate body is a long evaluate function or typed text; a 200 MB body
# with a valid token once pushed the service from 104 to 655 MB RSS (docs/security.md).
MAX_BODY_BYTES = 8 * 2**20


async def send_error(send: Send, status: int, code: str, message: str, hint: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message, "hint": hint}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="browserdeck"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _too_large(send: Send, size: str) -> None:
    await send_error(
        send,
        413,
        "body_too_large",
        f"the request body is {size}; the limit is {MAX_BODY_BYTES // 2**20} MiB",
        "send less: upload files by path (POST /hooks/file-chooser) and big documents by "
        "URL, not inline",
    )


async def _bounded_body(headers: dict[str, str], receive: Receive, send: Send) -> Receive | None:
    """``receive`` for a body within MAX_BODY_BYTES, or None after answering 413.

    Checked before anything parses the body: a declared Content-Length over the limit is
    refused unread; a chunked body is read up to the limit and then handed on.
    """
    length = headers.get("content-length", "").strip()
    if length.isdigit():
        if int(length) > MAX_BODY_BYTES:
            await _too_large(send, f"{int(length):,} bytes")
            return None
        return receive
    if "transfer-encoding" not in headers:
        return receive
    chunks: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # the client went away
        body = message.get("body", b"")
        total += len(body)
        if total > MAX_BODY_BYTES:
            await _too_large(send, f"over {MAX_BODY_BYTES:,} bytes")
            return None
        chunks.append(body)
        if not message.get("more_body"):
            break
    pending: list[Message] = [
        {"type": "http.request", "body": b"".join(chunks), "more_body": False}
    ]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _own_port(scope: Scope, path: str) -> int | None:
    """The TCP port this request came to, when its path lets the API's own origin in."""
    if path not in OWN_ORIGIN_PATHS:
        return None
    server = scope.get("server")
    port = server[1] if isinstance(server, (tuple, list)) and len(server) == 2 else None
    return port if isinstance(port, int) else None


class LoopbackGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: Callable[[], str],
        token_read: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.app = app
        self.token = token
        # Until the token is there to check against (the service reads it once the API
        # listens): a right token is never refused for being early.
        self.token_read = token_read

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        pairs = guard.headers_from_asgi(scope["headers"])
        headers = dict(pairs)
        path: str = scope.get("path", "")
        client = scope.get("client")
        # No peer address (an in-process ASGI call): nothing to check on the transport.
        refusal = guard.check_transport((client[0] if client else None) or None, pairs)
        if PEER_UID in scope:
            refusal = refusal or guard.check_origin(pairs) or guard.check_peer_uid(scope[PEER_UID])
        elif refusal is None and path not in PUBLIC_PATHS:
            refusal = guard.check_origin(pairs, own_port=_own_port(scope, path))
            if refusal is None and self.token_read is not None:
                try:
                    await self.token_read()
                except BrowserdeckError as exc:
                    await send_error(send, status_of(exc), exc.code, exc.message, exc.hint_for("api") or "")
                    return
            refusal = refusal or guard.check_token(pairs, self.token())
        if refusal is not None:
            await send_error(send, refusal.status, refusal.code, refusal.message, refusal.hint)
            return
        if scope["type"] == "http":
            bounded = await _bounded_body(headers, receive, send)
            if bounded is None:
                return
            receive = bounded
        await self.app(scope, receive, send)
