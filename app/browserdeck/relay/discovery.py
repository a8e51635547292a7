"""The relay's ``/json/*`` routes: Chrome's DevTools discovery, answered from the relay's
own bookkeeping (the shared tabs), so any CDP client finds the relay as it finds Chrome.

``/json/version``, ``/json/list`` (``/json``), ``/json/new``, ``/json/activate/<id>``,
``/json/close/<id>``; ``/json/protocol`` is 404 with the reason (chrome.debugger gives an
extension no way to read the protocol schema). The caller has already checked the
transport, the Origin and the token (gate.py).
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Response

from browserdeck.relay.core import Relay
from browserdeck.relay.http import error_body, json_response, text_response
from browserdeck.relay.model import Tab
from browserdeck.relay.protocol import CdpError


def link_up(relay: Relay) -> bool:
    """Whether the extension is connected now."""
    return relay.link is not None and not relay.link.closed


class Discovery:
    def __init__(self, relay: Relay, profile: str) -> None:
        self.relay = relay
        self.profile = profile

    async def answer(
        self,
        connection: ServerConnection,
        path: str,
        raw_query: str,
        host: str,
        cors: str | None,
    ) -> Response | None:
        """The answer to a ``/json`` route, or None when ``path`` is not one."""
        if path in ("/json/version", "/json/version/"):
            return json_response(connection, 200, self.version_json(host), cors_origin=cors)
        if path in ("/json/protocol", "/json/protocol/"):
            body = error_body(
                "not_available",
                "/json/protocol is not available through the extension relay: Chrome "
                "does not let extensions read its protocol description",
                "use the devtools-protocol package matching the browser version (/json/version)",
            )
            return json_response(connection, 404, body, cors_origin=cors)
        if path in ("/json", "/json/", "/json/list", "/json/list/"):
            return json_response(connection, 200, self.list_json(host), cors_origin=cors)
        if path in ("/json/new", "/json/new/"):
            # Chrome's form is /json/new?<url>; ?url=<url> is accepted too.
            if raw_query.startswith("url="):
                query = urllib.parse.parse_qs(raw_query)
                url = (query.get("url") or ["about:blank"])[0]
            else:
                url = urllib.parse.unquote(raw_query) or "about:blank"
            try:
                tab = await self.relay.create_tab(url or "about:blank")
            except CdpError as exc:
                return _unavailable(connection, exc, cors)
            return json_response(connection, 200, self.tab_json(tab, host), cors_origin=cors)
        if path.startswith(("/json/activate/", "/json/close/")):
            target = path.rsplit("/", 1)[-1]
            found = self.relay.by_target.get(target)
            if found is None or not found.exposable:
                return text_response(connection, 404, f"No such target id: {target}\n")
            try:
                if path.startswith("/json/activate/"):
                    await self.relay.activate_tab(found)
                    return text_response(connection, 200, "Target activated")
                await self.relay.close_tab(found)
                return text_response(connection, 200, "Target is closing")
            except CdpError as exc:
                return _unavailable(connection, exc, cors)
        return None

    def version_json(self, host: str) -> dict[str, Any]:
        relay = self.relay
        return {
            "Browser": relay.product,
            "Protocol-Version": "1.3",
            "User-Agent": relay.user_agent,
            "V8-Version": "",
            "WebKit-Version": "",
            "webSocketDebuggerUrl": f"ws://{host}/cdp",
            "Browserdeck-Relay": f"profile={self.profile}; extension="
            + ("connected" if link_up(relay) else "disconnected"),
        }

    def tab_json(self, tab: Tab, host: str) -> dict[str, Any]:
        return {
            "id": tab.target_id,
            "type": "page",
            "title": tab.title or tab.url,
            "url": tab.url,
            "description": "",
            # Chrome's own form; the relay serves no DevTools front-end, so opening it
            # needs a DevTools build that can reach the WebSocket (docs/extension.md).
            "devtoolsFrontendUrl": f"/devtools/inspector.html?ws={host}/devtools/page/{tab.target_id}",
            "webSocketDebuggerUrl": f"ws://{host}/devtools/page/{tab.target_id}",
        }

    def list_json(self, host: str) -> list[dict[str, Any]]:
        return [self.tab_json(tab, host) for tab in self.relay.shared_tabs()]


def _unavailable(connection: ServerConnection, exc: CdpError, cors: str | None) -> Response:
    return json_response(
        connection, 503, error_body("unavailable", exc.message, None), cors_origin=cors
    )


__all__ = ["Discovery", "link_up"]
