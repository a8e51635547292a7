"""The relay's HTTP answers: plain text, and JSON the way Chrome's DevTools port sends it.

Shared by the request gate (refusals), discovery (``/json/*``) and the server's own
status routes, so every answer has one ``Content-Type`` and the same error body.
"""

from __future__ import annotations

import json
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Response


def text_response(connection: ServerConnection, status: int, text: str) -> Response:
    return connection.respond(status, text)


def json_response(
    connection: ServerConnection,
    status: int,
    body: Any,
    *,
    cors_origin: str | None = None,
    head: bool = False,
) -> Response:
    """``body`` as JSON; ``cors_origin`` (already checked to be ours) may read it."""
    response = text_response(connection, status, "" if head else json.dumps(body, indent=2) + "\n")
    # websockets' respond() already set text/plain; assigning would add a second one.
    del response.headers["Content-Type"]
    response.headers["Content-Type"] = "application/json; charset=utf-8"
    response.headers["Cache-Control"] = "no-store"
    if cors_origin is not None:
        # Only our own extension may read relay answers from a page context.
        response.headers["Access-Control-Allow-Origin"] = cors_origin
        response.headers["Vary"] = "Origin"
    return response


def error_body(code: str, message: str, hint: str | None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "hint": hint}}


__all__ = ["error_body", "json_response", "text_response"]
