"""Runs the FastAPI app on uvicorn inside the caller's asyncio loop.

The listening socket is bound here, before uvicorn starts, so a busy port is a
clear ``Conflict`` instead of a log line and ``sys.exit`` from inside uvicorn.
uvicorn's own signal capture is disabled: the front-end (serve, tray) owns
signals and calls ``Service.stop()``, the one shutdown path.

The same app is served on a Unix socket in the private runtime folder too
(``paths.api_socket()``; Linux): the CLI and ``browserdeck mcp`` use it without a
token, because the kernel tells us the caller's uid (``SO_PEERCRED``, checked by the
shared guard). The TCP port with the bearer token stays for everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from browserdeck.api.security import PEER_PID, PEER_UID, Receive, Scope, Send
from browserdeck.errors import Conflict
from browserdeck.policy import guard
from browserdeck.util import aio, paths

if TYPE_CHECKING:
    from browserdeck.api.staged import ASGIApp, StagedApp
    from browserdeck.deck import Deck
    from browserdeck.service import Service

log = logging.getLogger(__name__)


KEEP_ALIVE_SECONDS = 65


class _Server(uvicorn.Server):
    """uvicorn without its fixed waits on the way out.

    uvicorn notices ``should_exit`` on a 0.1 s tick, then sleeps 0.1 s after asking
    its connections to close and polls them every 0.1 s: 0.2-0.3 s of every service
    stop spent sleeping. Here ``exit_now()`` wakes the main loop at once, and the
    shutdown polls for the connections' end every few ms (same order of steps, same
    graceful timeout for requests still running).
    """

    _exit_requested: asyncio.Event | None = None
    # Set once it accepts connections (uvicorn has only the ``started`` flag to poll).
    listening: asyncio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.listening is not None:
            self.listening.set()

    def exit_now(self) -> None:
        self.should_exit = True
        if self._exit_requested is not None:
            self._exit_requested.set()

    async def main_loop(self) -> None:
        self._exit_requested = asyncio.Event()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exit_requested.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # an idle keep-alive connection closes at once

        async def drained() -> None:
            # uvicorn has no event for a connection's end; a short poll, for the stop only.
            while self.server_state.connections or self.server_state.tasks:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
            for server in self.servers:
                await server.wait_closed()

        try:
            await asyncio.wait_for(drained(), self.config.timeout_graceful_shutdown)
        except TimeoutError:
            running = len(self.server_state.tasks)
            log.error("API stop: cancelling %d request(s) still running", running)
            for task in self.server_state.tasks:
                task.cancel(msg="the service is stopping")
        await self.lifespan.shutdown()


BRIDGE_HEADER = b"x-browserdeck-bridge"


class Activity:
    """When the API was last used, and which ``browserdeck mcp`` processes use it.

    For a service that exits when idle (``serve --idle-exit``): it is idle while no
    request is open, no bridge process that has called it still lives, and no request
    came for a while. A bridge names its pid on every request (``X-Browserdeck-Bridge``),
    so an agent that thinks for an hour keeps its service, and one killed with -9 stops
    counting at once. Any caller can name any pid; the worst it can do is keep an idle
    service up.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.last = time.monotonic()
        self.open = 0
        self.bridges: set[int] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope["headers"]:
            if key == BRIDGE_HEADER and value.isdigit() and len(value) < 10:
                self.bridges.add(int(value))
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
            self.last = time.monotonic()

    def idle_seconds(self) -> float:
        from browserdeck.chrome.procs import pid_alive

        self.bridges = {pid for pid in self.bridges if pid_alive(pid)}
        if self.open or self.bridges:
            self.last = time.monotonic()
        return time.monotonic() - self.last


class _WithPeer:
    """The app, with the connection's peer uid and pid in every request's scope."""

    def __init__(self, app: Any, peer: tuple[int, int] | None) -> None:
        self.app = app
        self.pid: int | None = peer[0] if peer is not None else None
        self.uid: int | None = peer[1] if peer is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[PEER_UID] = self.uid
        scope[PEER_PID] = self.pid
        await self.app(scope, receive, send)


class _Protocol(H11Protocol):
    """uvicorn's HTTP protocol; on a Unix-socket connection it notes who connected.

    The uid is read once, at accept, from the kernel (SO_PEERCRED); the guard
    (api/security.py) decides with it.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family == socket.AF_UNIX:
            self.app = _WithPeer(self.app, guard.peer_credentials(sock))


def bind_unix(path: Path) -> socket.socket | None:
    """Listen on the API's Unix socket at ``path``; None when another browserdeck has it.

    A socket file left by a service that died (kill -9, a crash) refuses connections:
    it is removed and bound anew. One that answers belongs to a live browserdeck of
    this user (nobody else can enter the folder): it is left alone, and this service
    serves TCP only.
    """
    if path.exists() or path.is_symlink():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            log.info("removing the stale API socket %s (its service is gone)", path)
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # a directory, say: not ours to remove
                log.warning(
                    "cannot remove %s to serve the API socket: %s; serving TCP only "
                    "(remove it while browserdeck is stopped)", path, exc,
                )
                return None
        except OSError as exc:
            log.warning("API socket %s: %s; serving TCP only", path, exc)
            return None
        else:
            log.warning("another browserdeck answers on %s; serving TCP only", path)
            return None
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, 0o600)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        log.warning("cannot serve the API socket %s: %s; serving TCP only", path, exc)
        return None
    sock.setblocking(False)
    return sock


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


def _create_app(deck: Deck) -> Any:
    from browserdeck.api.app import create_app

    return create_app(deck)


class ApiServer:
    """The control API on 127.0.0.1: the service's front end (``service.FrontEnd``).

    ``routes`` gives the ASGI apps served at exact paths beside the API's routes, on the
    same front door and behind the same guard (the composition root serves MCP at
    ``/mcp`` with it); they answer as soon as the socket listens, while the FastAPI app
    is built in the background then, or on first use with ``build_routes_now=False``
    (api/staged.py). ``before_stop`` runs with the app before
    uvicorn is told to exit (the root ends MCP streams with it, which would otherwise
    hold uvicorn's graceful shutdown for its whole timeout). ``on_listening`` is called
    once it accepts connections (``serve --ready-fd``: the MCP bridge waits for that).
    """

    def __init__(
        self,
        service: Service,
        *,
        port: int,
        routes: Callable[[Deck], Mapping[str, ASGIApp]] | None = None,
        before_stop: Callable[[Any], Awaitable[None]] | None = None,
        build_routes_now: bool = True,
        on_listening: Callable[[], None] | None = None,
    ) -> None:
        self.service = service
        self.requested_port = port
        self.port = port
        self._routes = routes
        # False: the FastAPI app waits for its first use (a service MCP clients started);
        # True: it is built in the background once the API listens (serve, the tray), so
        # the first CLI call does not wait for it.
        self._build_routes_now = build_routes_now
        self._before_stop = before_stop
        self._on_listening = on_listening
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None
        self._unix: socket.socket | None = None
        self._unix_inode: int | None = None
        self.socket_path: Path | None = None
        self._app: Any = None
        self.activity: Activity | None = None
        self.staged: StagedApp | None = None  # the routes and the FastAPI app behind the guard

    @property
    def app(self) -> Any:
        """The ASGI app being served (None before start and after stop)."""
        return self._app

    async def start(self) -> None:
        self._sock = bind_loopback(self.requested_port, "control API")
        self.port = int(self._sock.getsockname()[1])
        sockets = [self._sock]
        try:
            unix_path = paths.api_socket()
        except OSError as exc:
            log.warning("no API socket: %s", exc)
            unix_path = None
        if unix_path is not None:
            self._unix = bind_unix(unix_path)
            if self._unix is not None:
                self.socket_path = unix_path
                self._unix_inode = os.stat(unix_path).st_ino
                sockets.append(self._unix)
        from browserdeck.api.staged import StagedApp, guarded
        from browserdeck.deck import Deck

        service, deck = self.service, Deck(self.service)
        routes = self._routes(deck) if self._routes is not None else {}
        # FastAPI is built on first use, not before the socket listens (api/staged.py).
        self.staged = staged = StagedApp(lambda: _create_app(deck), routes)
        self._app = self.activity = Activity(guarded(service, staged))
        config = uvicorn.Config(
            self._app,
            http=_Protocol,
            log_config=None,
            lifespan="off",
            access_log=False,
            ws="none",
            timeout_graceful_shutdown=3,
            # Longer than any client's idle keep-alive (httpx: 5 s, uvicorn's default too):
            # a server closing an idle connection at the very moment the client reuses it
            # gives the client a connection error (a few in 10,000 calls under load).
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
        )
        self._server = server = _Server(config)
        server.listening = listening = asyncio.Event()
        self._task = aio.create_task(server.serve(sockets=sockets), name="api-server")
        # Awaited, not polled: a service started for `browserdeck mcp` says it listens
        # from here (on_listening), and the MCP client waits for that.
        waiting = aio.create_task(listening.wait(), name="api-server-listening")
        try:
            await asyncio.wait([waiting, self._task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if not server.started:
            if self._task.done():
                await self._task  # surfaces the startup error
            raise RuntimeError("the API server stopped during startup")
        log.info("control API on http://127.0.0.1:%d", self.port)
        if self._on_listening is not None:
            self._on_listening()
        if self._build_routes_now:
            staged.prepare()

    async def stop(self) -> None:
        if self._app is not None:
            app, self._app = self._app, None
            if self._before_stop is not None:
                await self._before_stop(app)
        if self._server is not None:
            self._server.exit_now()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=5)
            except TimeoutError:
                await aio.cancel_and_wait(self._task)
        if self._sock is not None:
            self._sock.close()
        if self._unix is not None:
            self._unix.close()
            # Only our own socket file: a later service may have bound the path anew.
            with contextlib.suppress(OSError):
                if self.socket_path and os.stat(self.socket_path).st_ino == self._unix_inode:
                    self.socket_path.unlink()
        self._server = self._task = self._sock = self._unix = None
