"""The control API's ASGI app: the guard round routes served at once and FastAPI's.

A service started for an MCP client (``browserdeck mcp`` with none running) is waited
for until ``/mcp`` answers ``initialize``. Importing FastAPI and building the
API's routes is about a quarter of that wait's CPU, and ``/mcp`` needs none of it: its
tools call the front door (``Deck``) in-process. So the routes the composition root
hands over (``/mcp``) are served as soon as the socket listens, and the FastAPI app is
built on a thread: for a service an MCP client started, on first use by any other path
(a service only MCP clients use never builds it); for ``serve`` and the tray, in the
background right after (so a first CLI call does not wait for it). A request that
comes meanwhile waits for the build.

Both sit behind the same guard (loopback, ``Host``/``Origin``, the token or the Unix
socket's peer uid) and the same cancel-on-disconnect as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from browserdeck.api.cancel import CancelOnDisconnect
from browserdeck.api.security import LoopbackGuard, Receive, Scope, Send
from browserdeck.api.unexpected import AnswerUnexpected

if TYPE_CHECKING:
    from browserdeck.service import Service

log = logging.getLogger(__name__)

ASGIApp = Callable[[Scope, Receive, Send], Any]


def guarded(service: Service, app: ASGIApp) -> LoopbackGuard:
    """``app`` behind the API's guard, cancelling a call whose client went away; an error
    nothing handled is a 500 on a connection that stays open (``api/unexpected.py``)."""
    return LoopbackGuard(
        CancelOnDisconnect(AnswerUnexpected(app)),
        token=lambda: service.api_token,
        token_read=service.tokens_read,
    )


class StagedApp:
    """``routes`` (exact paths) at once; everything else to the app ``build`` returns,
    built on a thread on first use."""

    def __init__(self, build: Callable[[], ASGIApp], routes: Mapping[str, ASGIApp]) -> None:
        self._build = build
        self.routes = dict(routes)
        self._built: asyncio.Future[ASGIApp] | None = None

    @property
    def app(self) -> ASGIApp | None:
        """The FastAPI app once built, else None."""
        built = self._built
        if built is None or not built.done() or _failed(built):
            return None
        return built.result()

    def prepare(self) -> asyncio.Future[ASGIApp]:
        """Start building the FastAPI app on a thread (once; again after a failure)."""
        if self._built is None or (self._built.done() and _failed(self._built)):
            self._built = asyncio.ensure_future(asyncio.to_thread(self._build))
            # A build nobody awaits yet: its failure is logged, and the next use retries.
            self._built.add_done_callback(_log_failure)
        return self._built

    async def full_app(self) -> ASGIApp:
        return await asyncio.shield(self.prepare())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = None
        if scope["type"] == "http":
            path = scope["path"]
            # "/mcp/" too: FastAPI redirected it to "/mcp", so clients configured with the
            # slash worked before /mcp moved in front of FastAPI.
            route = self.routes.get(path) or self.routes.get(path[:-1] if path != "/" else path)
        if route is not None:
            await route(scope, receive, send)
            return
        app = await self.full_app()
        await app(scope, receive, send)


def _failed(built: asyncio.Future[ASGIApp]) -> bool:
    # exception() raises CancelledError for a cancelled future (a build cut short at
    # loop teardown): that is a failed build too, and the next use retries.
    return built.cancelled() or built.exception() is not None


def _log_failure(built: asyncio.Future[ASGIApp]) -> None:
    if not built.cancelled() and built.exception() is not None:
        log.error("building the API's routes failed", exc_info=built.exception())
