"""The last resort: an error nothing else handled is a 500 on a connection that stays open.

An exception that escapes a route reaches FastAPI's outermost middleware, which sends
the answer (``api.app``'s handler: the error shape, logged with its traceback) and then
raises the exception again, for the server to log. uvicorn takes an exception raised
after the answer has started as a broken answer and closes the connection: the
client's next request on its keep-alive connection (even ``GET /health``) failed with
"connection reset". This wrapper, round everything the API serves, ends that:

* the answer is complete: the exception has been answered and logged; it goes no
  further, and the connection serves the next request;
* no answer has started (a route served beside FastAPI, such as ``/mcp``, or building
  the app failed): it answers the 500 in the API's error shape itself;
* the answer was cut off midway: only closing the connection can tell the client, so the
  exception goes on to the server, which does that.
"""

from __future__ import annotations

import logging

from browserdeck.api.security import ASGIApp, Message, Receive, Scope, Send, send_error
from browserdeck.util import paths

log = logging.getLogger(__name__)


class AnswerUnexpected:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = complete = False

        async def tracked(message: Message) -> None:
            nonlocal started, complete
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if complete:
                return  # answered (and logged) by the app's own handler
            if started:
                raise
            log.exception(
                "unexpected error in %s %s", scope.get("method"), scope.get("path", "")
            )
            await send_error(
                send,
                500,
                "internal",
                f"{type(exc).__name__}: {exc}",
                f"this is a browserdeck bug; details are in {paths.log_dir()}",
            )
