"""MCP over streamable HTTP at ``/mcp`` on the control port.

The composition root (``browserdeck.master``) hands ``McpHttpEndpoint`` to the API
server, which serves it at ``/mcp`` as soon as it listens (before FastAPI is built,
api/staged.py). The route sits behind the API's own
loopback guard, so ``/mcp`` needs the bearer token, refuses non-loopback ``Host``
headers and browser ``Origin``s like every other route; the SDK's DNS-rebinding
protection is on as well. Query parameters pick per client what the stdio flags
pick: ``/mcp?tools=all&profile=work``.

Tools call the service's front door (``Deck``, the one the API's routes call)
in-process: the token is checked once, on the ``/mcp`` request, and the core's errors
reach the tools as they were raised.

The control API runs uvicorn without lifespan events, so the SDK's session
manager is started here on the first ``/mcp`` request, in a named task that ends
when the service stops.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from browserdeck import aio
from browserdeck.api.security import Receive, Scope, Send
from browserdeck.guard import LOOPBACK_NAMES
from browserdeck.mcpserver.backend import DeckBackend
from browserdeck.mcpserver.server import SESSION_TTL, McpApp

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from browserdeck.deck import Deck
    from browserdeck.service import Service

log = logging.getLogger(__name__)

PATH = "/mcp"


def transport_security() -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*LOOPBACK_NAMES, *(f"{h}:*" for h in LOOPBACK_NAMES)],
        allowed_origins=[f"http://{h}:*" for h in LOOPBACK_NAMES],
    )


class McpHttpEndpoint:
    """The ASGI app behind ``/mcp``: starts the SDK's session manager on first use."""

    def __init__(self, deck: Deck, service: Service) -> None:
        self.deck = deck
        self.service = service
        self.mcp: McpApp | None = None
        self.manager: StreamableHTTPSessionManager | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._shutdown = asyncio.Event()

    async def _ensure(self) -> StreamableHTTPSessionManager:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.manager is None:
                from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

                service = self.service
                # The same front door the API's routes call, in-process: the /mcp request
                # passed the API's guard once; each tool call is one activity entry.
                backend = DeckBackend(
                    self.deck,
                    on_call=lambda entry: service.events.api_call.send(entry=entry),
                )
                self.mcp = McpApp(
                    backend, tools_spec="core", settings=lambda: service.config
                )
                self.manager = StreamableHTTPSessionManager(
                    app=self.mcp.server,
                    security_settings=transport_security(),
                    session_idle_timeout=SESSION_TTL,
                )
                self._ready = asyncio.Event()
                self._task = aio.create_task(self._run(self.manager), name="mcp-http-sessions")
            assert self._ready is not None
        await self._ready.wait()
        return self.manager

    async def _run(self, manager: StreamableHTTPSessionManager) -> None:
        assert self._ready is not None
        try:
            async with manager.run():
                self._ready.set()
                stopped = asyncio.ensure_future(self.service.stopped.wait())
                ended = asyncio.ensure_future(self._shutdown.wait())
                try:
                    await asyncio.wait({stopped, ended}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stopped.cancel()
                    ended.cancel()
        finally:
            if self.mcp is not None:
                await self.mcp.close()

    async def shutdown(self) -> None:
        """End every MCP session now, closing their open streams.

        For the service's stop path, before the HTTP server stops: uvicorn otherwise
        waits its whole graceful-shutdown time for a client's open event stream.
        """
        self._shutdown.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 5)
            except TimeoutError:
                await aio.cancel_and_wait(self._task)

    async def end_all_sessions(self) -> int:
        """End every open ``/mcp`` session now (the tray's Stop all agents); how many.

        The MCP state (tab claims, pooled browsers) goes, and the SDK's transport is
        terminated too: its open event streams close and its next request answers
        404 "Session not found", which the MCP spec tells a client to treat as the
        end of its session. Forgetting only our state would let the client carry on
        in a fresh session without noticing it was stopped.
        """
        keys: set[str] = set()
        manager = self.manager
        if manager is not None:
            # The SDK has no public call to end a session from the server side; its
            # own DELETE and idle paths end one through ``_discard_session``.
            instances: dict[str, Any] = getattr(manager, "_server_instances", {})
            for sid, transport in list(instances.items()):
                keys.add(sid)
                await manager._discard_session(sid, transport)
        if self.mcp is not None:
            # Sessions keyed by X-Browserdeck-Session (stateless clients) have no transport.
            keys.update(self.mcp.sessions)
            for key in list(self.mcp.sessions):
                self.mcp.end_session(key)
        return len(keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._shutdown.is_set():
            from starlette.responses import JSONResponse

            await JSONResponse(
                {
                    "error": {
                        "code": "stopping",
                        "message": "browserdeck is stopping",
                        "hint": "reconnect once it runs again",
                    }
                },
                status_code=503,
            )(scope, receive, send)
            return
        manager = await self._ensure()
        await manager.handle_request(scope, receive, send)
        if scope.get("method") == "DELETE" and self.mcp is not None:
            # The session named either way (the stateless protocol has no Mcp-Session-Id;
            # `browserdeck mcp` names its own with X-Browserdeck-Session).
            for key, value in scope.get("headers", []):
                if key in (b"mcp-session-id", b"x-browserdeck-session"):
                    self.mcp.end_session(value.decode("latin-1"))


def endpoint_of(asgi: Any) -> McpHttpEndpoint | None:
    """The ``/mcp`` endpoint of the API server's app (guarded or not), if any."""
    # The routes sit under several middlewares (activity, guard, cancellation): walk the
    # `.app` chain down to the one holding them, however many there are.
    app: Any = asgi
    for _ in range(16):
        routes = getattr(app, "routes", None)
        endpoint = routes.get(PATH) if isinstance(routes, dict) else None
        if isinstance(endpoint, McpHttpEndpoint):
            return endpoint
        app = getattr(app, "app", None)
        if app is None:
            return None
    return None


async def shutdown(asgi: Any) -> None:
    """End the MCP sessions of the API server's app (guarded or not).

    For ``ApiServer.stop()``, before it tells uvicorn to exit, so connected MCP
    clients do not hold the service's shutdown for uvicorn's graceful timeout.
    """
    endpoint = endpoint_of(asgi)
    if endpoint is not None:
        await endpoint.shutdown()
