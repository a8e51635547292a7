"""Who may talk to the relay: its use of the one guard (browserdeck/policy/guard.py).

Every request must come from a loopback address with a loopback ``Host`` (DNS
rebinding) and without a web page's ``Origin``; ``/extension`` takes only the pinned
``chrome-extension://<id>`` origin; everything else but the health check and the
extension's probe needs the relay token. The rules themselves live in policy/guard.py; this
module maps them onto the relay's requests and answers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Response

from browserdeck.policy import guard
from browserdeck.relay.http import text_response

log = logging.getLogger(__name__)


class RequestGate:
    """The relay's request checks; ``token`` may change (``RelayServer.update_token``)."""

    def __init__(self, *, token: str, extension_ids: Sequence[str]) -> None:
        self.token = token
        self.extension_ids = tuple(extension_ids)
        self.origins = [f"chrome-extension://{ext}" for ext in self.extension_ids]

    def refuse(
        self, connection: ServerConnection, headers: guard.Headers, path: str
    ) -> Response | None:
        """The transport and Origin checks every request goes through (None: passed)."""
        remote = connection.remote_address
        refusal = guard.check_transport(str(remote[0]) if remote else "", headers)
        if refusal is not None:
            log.warning("relay: refused a request: %s (DNS rebinding guard)", refusal.message)
            if refusal.code == "forbidden_client":
                return text_response(
                    connection, 403, "Forbidden: the relay only serves this machine\n"
                )
            return text_response(
                connection, 403, "Forbidden: Host must be localhost or 127.0.0.1\n"
            )
        # Two Origin headers are refused outright; /extension judges its one Origin itself.
        refusal = guard.check_origin(headers, self.origins)
        if refusal is not None and (
            path != "/extension" or len(guard.header_values(headers, "origin")) > 1
        ):
            log.warning("relay: %s", refusal.message)
            return text_response(
                connection, 403, "Forbidden: browser pages may not use the browserdeck relay\n"
            )
        return None

    def refuse_extension(
        self, connection: ServerConnection, headers: guard.Headers
    ) -> Response | None:
        """``/extension`` comes from our extension's origin or not at all."""
        origin = guard.origin_of(headers) or ""
        if self.is_ours(origin):
            return None
        log.warning("relay: refused /extension from origin %r", origin)
        return text_response(
            connection,
            403,
            "Forbidden: /extension accepts only the browserdeck extension "
            f"(chrome-extension://{self.extension_ids[0]})\n",
        )

    def is_ours(self, origin: str | None) -> bool:
        return origin is not None and origin in self.origins

    def cors(self, origin: str | None) -> str | None:
        """The origin that may read an answer (our extension's), else None."""
        return origin if self.is_ours(origin) else None

    def has_token(self, headers: guard.Headers, query: dict[str, list[str]]) -> bool:
        return guard.check_token(headers, self.token, extra=query.get("token", [])) is None

    def preflight(self, connection: ServerConnection, origin: str | None) -> Response:
        response = text_response(connection, 204, "")
        if self.is_ours(origin):
            assert origin is not None
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = "GET, PUT, HEAD, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            response.headers["Access-Control-Max-Age"] = "600"
            response.headers["Vary"] = "Origin"
        return response


def public_host(headers: guard.Headers, port: int) -> str:
    """``host:port`` for webSocketDebuggerUrl, rebuilt from the checked Host, never copied.

    The transport check already refused anything but a loopback name, so what goes
    back is ``127.0.0.1``/``localhost``/``[::1]`` and a number.
    """
    parsed = guard.parse_host(guard.single_header(headers, "host")[0])
    if parsed is None:
        return f"127.0.0.1:{port}"
    return parsed.netloc(port)


__all__ = ["RequestGate", "public_host"]
