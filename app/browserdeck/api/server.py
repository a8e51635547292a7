"""Runs the FastAPI app on uvicorn inside the caller's asyncio loop.

The listening socket is bound here, before uvicorn starts, so a busy port is a
clear ``Conflict`` instead of a log line and ``sys.exit`` from inside uvicorn.
uvicorn's own signal capture is disabled: the front-end (serve, tray) owns
signals and calls ``Service.stop()``, the one shutdown path.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any

import uvicorn

from browserdeck import aio
from browserdeck.errors import Conflict

if TYPE_CHECKING:
    from fastapi import FastAPI

    from browserdeck.service import Service

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def bind_loopback(port: int, what: str) -> socket.socket:
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets whose proto is
    # TCP, and accepted sockets inherit it. With proto 0, Nagle + delayed ACK added ~40 ms
    # to every keep-alive response (h11 writes headers and body separately).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    # SO_REUSEADDR lets us rebind right after our own previous run (TIME_WAIT), but on
    # Linux still refuses a port another process is listening on.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Conflict(
                f"{what} port {port} on 127.0.0.1 is already in use",
                hint="is browserdeck already running? (`browserdeck status`) Otherwise free the "
                f"port or choose another one in Settings ({what} port)",
                code="port_in_use",
            ) from None
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


class ApiServer:
    """The control API on 127.0.0.1: the service's front end (``service.FrontEnd``).

    ``extend`` adds routes to the app before it serves (the composition root mounts
    MCP at ``/mcp`` with it); ``before_stop`` runs with the app before uvicorn is told
    to exit (the root ends MCP streams with it, which would otherwise hold uvicorn's
    graceful shutdown for its whole timeout).
    """

    def __init__(
        self,
        service: Service,
        *,
        port: int,
        extend: Callable[[FastAPI], None] | None = None,
        before_stop: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.service = service
        self.requested_port = port
        self.port = port
        self._extend = extend
        self._before_stop = before_stop
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None
        self._app: Any = None

    @property
    def app(self) -> Any:
        """The ASGI app being served (None before start and after stop)."""
        return self._app

    async def start(self) -> None:
        from browserdeck.api.app import create_app

        self._sock = bind_loopback(self.requested_port, "control API")
        self.port = int(self._sock.getsockname()[1])
        self._app = create_app(self.service, extend=self._extend)
        config = uvicorn.Config(
            self._app,
            log_config=None,
            lifespan="off",
            access_log=False,
            ws="none",
            timeout_graceful_shutdown=3,
        )
        self._server = _Server(config)
        self._task = aio.create_task(self._server.serve(sockets=[self._sock]), name="api-server")
        while not self._server.started:
            if self._task.done():
                await self._task  # surfaces the startup error
                raise RuntimeError("the API server stopped during startup")
            await asyncio.sleep(0.01)
        log.info("control API on http://127.0.0.1:%d", self.port)

    async def stop(self) -> None:
        if self._app is not None:
            app, self._app = self._app, None
            if self._before_stop is not None:
                await self._before_stop(app)
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=5)
            except TimeoutError:
                await aio.cancel_and_wait(self._task)
        if self._sock is not None:
            self._sock.close()
        self._server = self._task = self._sock = None
