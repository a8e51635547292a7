"""Loopback-only guards for every HTTP surface: Host allowlist, no browser Origins, bearer token.

A plain ASGI middleware (not BaseHTTPMiddleware) so it costs microseconds per request.
DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still sends
``Host: evil.example`` — refused. Browser pages send ``Origin`` — refused, so no web
page can drive the API even if it guessed the token. ``GET /health`` needs no token.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from browserdeck import secrets

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
PUBLIC_PATHS = frozenset({"/health"})


def host_is_loopback(host: str) -> bool:
    host = host.strip().lower()
    if host.startswith("["):
        name = host.split("]")[0] + "]"
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in LOOPBACK_NAMES


def bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    if value[:7].lower() == "bearer ":
        return value[7:].strip()
    return None


async def send_error(send: Send, status: int, code: str, message: str, hint: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message, "hint": hint}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="browserdeck"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class LoopbackGuard:
    def __init__(
        self,
        app: ASGIApp,
        *,
        token: Callable[[], str],
        on_request: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.app = app
        self.token = token
        self.on_request = on_request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path: str = scope.get("path", "")
        client = scope.get("client") or ("", 0)
        if client[0] and not (client[0].startswith("127.") or client[0] == "::1"):
            await send_error(send, 403, "forbidden_client", f"connections from {client[0]} are "
                             "refused", "browserdeck only serves this machine (127.0.0.1)")
            return
        if not host_is_loopback(headers.get("host", "")):
            await send_error(
                send, 403, "forbidden_host",
                f"Host {headers.get('host', '')!r} is not a loopback name",
                "call the API as http://127.0.0.1:<port> (DNS-rebinding protection)",
            )
            return
        if path in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        # "null" is a browser Origin too: sandboxed iframes, file: and data: pages send it.
        if "origin" in headers and headers["origin"] != "":
            await send_error(
                send, 403, "forbidden_origin",
                f"requests from web pages (Origin {headers['origin']!r}) are refused",
                "call the API from a local program, not from a browser page",
            )
            return
        if not secrets.tokens_equal(bearer(headers), self.token()):
            await send_error(
                send, 401, "unauthorized", "missing or wrong API token",
                "send 'Authorization: Bearer <token>'; `browserdeck token` prints it",
            )
            return
        if self.on_request is None:
            await self.app(scope, receive, send)
            return
        status = 0
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.on_request(
                {
                    "time": time.time(),
                    "client": headers.get("x-browserdeck-client")
                    or headers.get("user-agent", "").split(" ")[0],
                    "method": scope.get("method", "WS"),
                    "path": path,
                    "query": scope.get("query_string", b"").decode("latin-1"),
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                }
            )
