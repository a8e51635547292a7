"""The extension relay: a local endpoint that looks like Chrome's DevTools port.

One ``RelayServer`` per ``extension`` profile, on 127.0.0.1 (18792 by default):

* ``/extension`` (WebSocket): the browserdeck extension, one at a time. It must come
  from the pinned ``chrome-extension://<id>`` origin *and* prove it knows the relay
  token, after the relay proved it first (protocol.auth_proof; no token on the wire).
* ``/cdp`` (also ``/devtools/browser/<any>``, ``/devtools/page/<targetId>``): CDP clients
  (our engine, the service, a user's own Playwright/Puppeteer) with the token.
* HTTP: ``GET /`` (health, no token), ``/json/version``, ``/json/list``, ``/json/new``,
  ``/json/activate/<id>``, ``/json/close/<id>``, ``/extension/status``,
  ``/client-slot`` (token); ``/extension/check`` (our extension's Origin, no token).

Every request is refused unless it comes from a loopback address with a loopback
``Host`` (DNS rebinding) and without a web page's ``Origin``. Client arbitration:
in ``single-active`` mode one client holds the slot and a second one gets HTTP 409
naming the holder; ``multi-client`` lets everyone in. See docs/extension.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import json
import logging
import secrets
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.typing import Subprotocol

from browserdeck import errors, guard
from browserdeck.aio import cancel_and_wait
from browserdeck.events import ServiceEvents
from browserdeck.relay.core import Relay
from browserdeck.relay.extension_id import EXTENSION_ID
from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.model import Client, Tab
from browserdeck.relay.protocol import (
    AUTH_NONCE_BYTES,
    AUTH_TIMEOUT,
    PROTOCOL_VERSION,
    SUBPROTOCOL,
    CdpError,
    auth_proof,
    frame,
    proof_ok,
    split_frame,
)

log = logging.getLogger(__name__)

CLIENT_MODES = ("single-active", "multi-client")
# Screenshots and snapshots are megabytes of JSON; the websockets default is 1 MiB.
MAX_MESSAGE = 256 * 1024 * 1024
# The extension is considered gone after this long without a message (it pings every 15 s
# and answers our pings).
EXTENSION_SILENCE_LIMIT = 45.0
PING_EVERY = 10.0
# How long a new client waits for the slot holder's socket to finish closing before it
# gets 409: a client that disconnects and reconnects at once (Puppeteer's disconnect()
# does not wait for the close handshake) would otherwise race its own old connection.
SLOT_HANDOVER_WAIT = 1.0
SLOT_HEADER = "X-Browserdeck-Slot"
CLIENT_HEADER = "X-Browserdeck-Client"


@dataclass
class _Upgrade:
    """What process_request decided about a WebSocket upgrade, for the handler."""

    kind: str  # "extension" | "cdp"
    label: str = ""
    slot_mode: str = "eager"
    page_target: str | None = None
    instance: str = ""


class RelayServer:
    """The relay for one extension profile. ``start``/``stop``; see the module docstring."""

    def __init__(
        self,
        *,
        port: int,
        token: str,
        profile: str = "chrome",
        host: str = "127.0.0.1",
        extension_ids: Sequence[str] = (EXTENSION_ID,),
        client_mode: str = "single-active",
        events: ServiceEvents | None = None,
        color: str = "#00AA00",
        command_timeout: float = 60.0,
        op_timeout: float = 20.0,
    ) -> None:
        if client_mode not in CLIENT_MODES:
            raise errors.InvalidInput(
                f"unknown relay client mode {client_mode!r}",
                hint="use 'single-active' or 'multi-client'",
                code="invalid_client_mode",
            )
        if not token:
            raise errors.InvalidInput(
                "the relay needs a token", hint="pass secrets.get_token('relay')"
            )
        self.requested_port = port
        self.port = port
        self.host = host
        self.profile = profile
        self.color = color
        self.client_mode = client_mode
        self.extension_ids = tuple(extension_ids)
        self._token = token
        self._events = events
        self._server: Server | None = None
        self._upgrades: dict[int, _Upgrade] = {}
        self._client_ids = itertools.count(1)
        self._slot_holder: Client | None = None
        self._slot_freed = asyncio.Event()
        self._extension_ready = asyncio.Event()
        self._stopping = False
        self.relay = Relay(
            profile=profile,
            on_tabs_changed=self._tabs_changed,
            slot_guard=self._slot_guard,
            command_timeout=command_timeout,
            op_timeout=op_timeout,
        )

    # ------------------------------------------------------------------ public
    @property
    def cdp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/cdp"

    @property
    def extension_connected(self) -> bool:
        link = self.relay.link
        return link is not None and not link.closed

    def auth_headers(self) -> dict[str, str]:
        """Headers for our own CDP clients (engine, service): the token, and a lazy slot.

        ``lazy`` means the connection never gets a 409: it takes the client slot only when
        it first needs a tab session, so the service's tab-management socket never blocks
        the engine (or a user's script) in single-active mode. External clients without the
        header get the standard behaviour (409 at connect while the slot is held).
        """
        return {"Authorization": f"Bearer {self._token}", SLOT_HEADER: "lazy"}

    def token_headers(self) -> dict[str, str]:
        """Just the token, as an external client would send it."""
        return {"Authorization": f"Bearer {self._token}"}

    def status(self) -> dict[str, Any]:
        link = self.relay.link
        holder = self._slot_holder
        tabs = self.relay.shared_tabs()
        return {
            "profile": self.profile,
            "port": self.port,
            "cdpUrl": self.cdp_url,
            "extensionConnected": self.extension_connected,
            "extension": None
            if link is None
            else {
                "version": link.info.version,
                "userAgent": link.info.user_agent,
                "product": self.relay.product,
            },
            "tabs": len(tabs),
            "attachedTabs": sum(1 for tab in tabs if tab.attached),
            "clients": len(self.relay.clients),
            "clientMode": self.client_mode,
            "slot": None if holder is None or holder.closed else holder.describe(),
        }

    def slot_info(self) -> dict[str, Any]:
        holder = self._slot_holder if self._slot_holder and not self._slot_holder.closed else None
        return {
            "mode": self.client_mode,
            "busy": holder is not None and self.client_mode == "single-active",
            "activeClientId": holder.id if holder else None,
            "connectedAt": holder.connected_at if holder else None,
            "holder": holder.describe() if holder else None,
            "clients": [c.describe() for c in self.relay.clients.values()],
        }

    async def wait_for_extension(self, wait: float = 10.0) -> None:
        """Wait until the extension is connected and has said hello (tests, CLI)."""
        try:
            await asyncio.wait_for(self._extension_ready.wait(), wait)
        except TimeoutError:
            raise errors.Unavailable(
                f"the browserdeck extension did not connect to the relay on port {self.port} "
                f"within {wait:g} s",
                hint="click the browserdeck icon in Chrome; check the port and token in the "
                "extension's options (browserdeck pair)",
                code="extension_not_connected",
            ) from None

    async def unshare_all(self) -> int:
        """Ask the extension to stop sharing every tab (the tray's Stop all agents)."""
        link = self.relay.link
        if link is None or link.closed:
            return 0
        result = await link.call("unshareAll", {}, reply_timeout=10.0)
        return int(result.get("unshared") or 0) if isinstance(result, dict) else 0

    async def update_token(self, token: str) -> None:
        """Switch to a new relay token; connections made with the old one are closed."""
        self._token = token
        link = self.relay.link
        if link is not None:
            await link.ws.close(4401, "the relay token changed: pair the extension again")
        for client in list(self.relay.clients.values()):
            await client.close(4401, "the relay token changed")

    async def release_slot(self) -> bool:
        """Disconnect the client holding the slot (the tray's 'take over'). True if one did."""
        holder = self._slot_holder
        if holder is None or holder.closed:
            return False
        await holder.close(4000, "the browserdeck user released the relay client slot")
        return True

    async def start(self) -> None:
        if self._server is not None:
            return
        self._stopping = False
        try:
            self._server = await serve(
                self._handle,
                self.host,
                self.requested_port,
                process_request=self._process_request,
                select_subprotocol=_select_subprotocol,
                compression=None,
                max_size=MAX_MESSAGE,
                write_limit=16 * 1024 * 1024,
                ping_interval=20,
                ping_timeout=30,
                server_header="browserdeck-relay",
            )
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise errors.Conflict(
                    f"port {self.requested_port} on {self.host} is already in use, so the "
                    f"extension relay for profile {self.profile!r} cannot listen there",
                    hint=f"stop the program using it (`ss -ltnp 'sport = :{self.requested_port}'` "
                    "shows which; it may be another browserdeck), or give the profile another "
                    "port (relayPort or the profile's cdpPort) and set the same port in the "
                    "browserdeck extension's options",
                    code="port_in_use",
                ) from None
            raise
        sock = next(iter(self._server.sockets))
        self.port = int(sock.getsockname()[1])
        log.info("extension relay for profile %s listening on %s", self.profile, self.cdp_url)

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping = True
        server.close(close_connections=True)
        await server.wait_closed()
        link = self.relay.link
        if link is not None:
            await self.relay.extension_gone(link, "the relay stopped")
        await self.relay.tasks.cancel_all()
        self._extension_ready.clear()
        self._slot_holder = None
        log.info("extension relay for profile %s stopped", self.profile)

    # ------------------------------------------------------------ arbitration
    def _slot_guard(self, client: Client) -> str | None:
        if client.slot_mode == "none":
            return (
                f"this connection was opened with {SLOT_HEADER}: none, so it can list, "
                "open, focus and close tabs but not attach to them"
            )
        if self.client_mode == "multi-client":
            return None
        holder = self._live_holder()
        if holder is None:
            self._slot_holder = client
            return None
        if holder is client:
            return None
        return self._busy_message(holder)

    def _busy_message(self, holder: Client) -> str:
        since = time.strftime("%H:%M:%S", time.localtime(holder.connected_at))
        who = holder.label or "another client"
        return (
            f"the extension relay for profile {self.profile!r} is in use by {who} "
            f"(client {holder.id}, connected since {since}); relayClientMode is single-active, "
            "so one CDP client at a time: wait for it to disconnect, close it, or switch the "
            "setting to multi-client"
        )

    # ------------------------------------------------------------------ events
    def _tabs_changed(self) -> None:
        if self._events is not None:
            self._events.tabs_changed.send(profile=self.profile)

    def _extension_event(self, connected: bool, detail: str) -> None:
        if self._events is not None:
            self._events.extension.send(profile=self.profile, connected=connected, detail=detail)

    # ------------------------------------------------------------------ HTTP
    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        method = request.method.upper()
        parsed = urllib.parse.urlsplit(request.path)
        path = parsed.path
        query = urllib.parse.parse_qs(parsed.query)
        headers = guard.headers_from_pairs(request.headers.raw_items())

        refusal = self._check_transport(connection, headers)
        if refusal is not None:
            return refusal

        # Two Origin headers are refused outright; /extension judges its one Origin itself.
        origin_refusal = guard.check_origin(headers, self._our_origins())
        if origin_refusal is not None and (
            path != "/extension" or len(guard.header_values(headers, "origin")) > 1
        ):
            log.warning("relay: %s", origin_refusal.message)
            return _text(
                connection, 403, "Forbidden: browser pages may not use the browserdeck relay\n"
            )
        origin = guard.origin_of(headers)

        if method == "OPTIONS":
            return self._preflight(connection, origin)

        if path == "/" and method in ("GET", "HEAD"):
            return self._json(
                connection,
                200,
                {"ok": True, "service": "browserdeck-relay", "profile": self.profile},
                origin,
                head=method == "HEAD",
            )

        if path == "/extension":
            return self._check_extension_upgrade(connection, request, query)
        if path == "/extension/check":
            # No token: the extension never sends it over HTTP (a squatter could be
            # listening). It says only whether the extension slot is free (no secrets);
            # web pages were refused above by their Origin. Chrome sends no Origin on an
            # extension's GET to a host it has permissions for.
            return self._extension_check(connection, query, origin)

        if not self._has_token(headers, query):
            return self._json(
                connection,
                401,
                _error_body(
                    "unauthorized",
                    "the relay token is missing or wrong",
                    "send Authorization: Bearer <token> (browserdeck token --relay prints it)",
                ),
                origin,
            )

        if path == "/cdp" or path.startswith("/devtools/browser"):
            return await self._check_cdp_upgrade(connection, request, query, None)
        if path.startswith("/devtools/page/"):
            target = path.rsplit("/", 1)[-1]
            if target not in self.relay.by_target:
                return _text(connection, 404, f"No such target id: {target}\n")
            return await self._check_cdp_upgrade(connection, request, query, target)

        if method not in ("GET", "PUT", "HEAD"):
            return _text(connection, 405, "Method Not Allowed\n")
        host = self._public_host(headers)
        if path in ("/json/version", "/json/version/"):
            return self._json(connection, 200, self._version_json(host), origin)
        if path in ("/json/protocol", "/json/protocol/"):
            # chrome.debugger gives an extension no way to read Chrome's protocol schema.
            return self._json(
                connection,
                404,
                _error_body(
                    "not_available",
                    "/json/protocol is not available through the extension relay: Chrome "
                    "does not let extensions read its protocol description",
                    "use the devtools-protocol package matching the browser version "
                    "(/json/version)",
                ),
                origin,
            )
        if path in ("/json", "/json/", "/json/list", "/json/list/"):
            return self._json(connection, 200, self._list_json(host), origin)
        if path in ("/json/new", "/json/new/"):
            # Chrome's form is /json/new?<url>; ?url=<url> is accepted too.
            if parsed.query.startswith("url="):
                url = (query.get("url") or ["about:blank"])[0]
            else:
                url = urllib.parse.unquote(parsed.query) or "about:blank"
            try:
                tab = await self.relay.create_tab(url or "about:blank")
            except CdpError as exc:
                return self._json(
                    connection, 503, _error_body("unavailable", exc.message, None), origin
                )
            return self._json(connection, 200, self._tab_json(tab, host), origin)
        if path.startswith(("/json/activate/", "/json/close/")):
            target = path.rsplit("/", 1)[-1]
            found = self.relay.by_target.get(target)
            if found is None or not found.exposable:
                return _text(connection, 404, f"No such target id: {target}\n")
            try:
                if path.startswith("/json/activate/"):
                    await self.relay.activate_tab(found)
                    return _text(connection, 200, "Target activated")
                await self.relay.close_tab(found)
                return _text(connection, 200, "Target is closing")
            except CdpError as exc:
                return self._json(
                    connection, 503, _error_body("unavailable", exc.message, None), origin
                )
        if path == "/extension/status":
            return self._json(connection, 200, self._extension_status(), origin)
        if path == "/client-slot":
            return self._json(connection, 200, self.slot_info(), origin)
        return _text(connection, 404, "Not Found\n")

    def _check_transport(
        self, connection: ServerConnection, headers: guard.Headers
    ) -> Response | None:
        remote = connection.remote_address
        address = str(remote[0]) if remote else ""
        refusal = guard.check_transport(address, headers)
        if refusal is None:
            return None
        log.warning("relay: refused a request: %s (DNS rebinding guard)", refusal.message)
        if refusal.code == "forbidden_client":
            return _text(connection, 403, "Forbidden: the relay only serves this machine\n")
        return _text(connection, 403, "Forbidden: Host must be localhost or 127.0.0.1\n")

    def _our_origins(self) -> list[str]:
        return [f"chrome-extension://{ext}" for ext in self.extension_ids]

    def _is_our_origin(self, origin: str) -> bool:
        return origin in self._our_origins()

    def _has_token(self, headers: guard.Headers, query: dict[str, list[str]]) -> bool:
        return guard.check_token(headers, self._token, extra=query.get("token", [])) is None

    def _public_host(self, headers: guard.Headers) -> str:
        """``host:port`` for webSocketDebuggerUrl, rebuilt from the checked Host, never copied.

        The transport check already refused anything but a loopback name, so what goes
        back is ``127.0.0.1``/``localhost``/``[::1]`` and a number.
        """
        parsed = guard.parse_host(guard.single_header(headers, "host")[0])
        if parsed is None:
            return f"127.0.0.1:{self.port}"
        return parsed.netloc(self.port)

    def _check_extension_upgrade(
        self, connection: ServerConnection, request: Request, query: dict[str, list[str]]
    ) -> Response | None:
        origin = guard.origin_of(guard.headers_from_pairs(request.headers.raw_items())) or ""
        if not self._is_our_origin(origin):
            log.warning("relay: refused /extension from origin %r", origin)
            return _text(
                connection,
                403,
                "Forbidden: /extension accepts only the browserdeck extension "
                f"(chrome-extension://{self.extension_ids[0]})\n",
            )
        # The token is checked after the upgrade, by mutual proof (protocol.auth_proof):
        # the extension never puts it on the wire.
        instance = (query.get("instance") or [""])[0]
        link = self.relay.link
        if link is not None and not link.closed and not self._replaceable(link, instance):
            return self._json(
                connection,
                409,
                _error_body(
                    "extension_slot_busy",
                    "another browser's browserdeck extension is already connected to this relay",
                    "disconnect it (or close that Chrome) first; each relay serves one browser",
                ),
                None,
            )
        self._upgrades[id(connection)] = _Upgrade("extension", instance=instance)
        return None

    def _replaceable(self, link: ExtensionLink, instance: str) -> bool:
        # The same browser reconnecting (its worker restarted before we saw the old socket
        # close), or a link that has gone silent, may be replaced; anyone else waits.
        if instance and instance == link.instance:
            return True
        return asyncio.get_running_loop().time() - link.last_seen > EXTENSION_SILENCE_LIMIT

    def _live_holder(self) -> Client | None:
        """The slot holder, unless its socket is already closing (the slot is then free:
        it no longer sends commands, and its cleanup may lag behind a reconnect)."""
        holder = self._slot_holder
        if holder is None or holder.closed:
            return None
        if getattr(holder.ws, "state", State.OPEN) is not State.OPEN:
            return None
        return holder

    async def _wait_for_slot(self) -> Client | None:
        """The live holder after giving a disconnecting one a moment to go."""
        deadline = asyncio.get_running_loop().time() + SLOT_HANDOVER_WAIT
        while (holder := self._live_holder()) is not None:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return holder
            self._slot_freed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._slot_freed.wait(), min(left, 0.05))
        return None

    async def _check_cdp_upgrade(
        self,
        connection: ServerConnection,
        request: Request,
        query: dict[str, list[str]],
        page_target: str | None,
    ) -> Response | None:
        slot_mode = (
            _first_header(request, SLOT_HEADER) or (query.get("slot") or ["eager"])[0]
        ).lower()
        if slot_mode not in ("eager", "lazy", "none"):
            slot_mode = "eager"
        label = _first_header(request, CLIENT_HEADER) or _first_header(request, "User-Agent")
        holder = (
            await self._wait_for_slot()
            if self.client_mode == "single-active" and slot_mode == "eager"
            else None
        )
        if holder is not None:
            return self._json(
                connection,
                409,
                _error_body(
                    "relay_busy",
                    self._busy_message(holder),
                    "GET /client-slot shows who holds it; retry when busy is false",
                ),
                None,
            )
        self._upgrades[id(connection)] = _Upgrade(
            "cdp", label=label[:120], slot_mode=slot_mode, page_target=page_target
        )
        return None

    def _preflight(self, connection: ServerConnection, origin: str | None) -> Response:
        response = _text(connection, 204, "")
        if origin is not None and self._is_our_origin(origin):
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = "GET, PUT, HEAD, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            response.headers["Access-Control-Max-Age"] = "600"
            response.headers["Vary"] = "Origin"
        return response

    def _json(
        self,
        connection: ServerConnection,
        status: int,
        body: Any,
        origin: str | None,
        *,
        head: bool = False,
    ) -> Response:
        response = _text(connection, status, "" if head else json.dumps(body, indent=2) + "\n")
        # websockets' respond() already set text/plain; assigning would add a second one.
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = "application/json; charset=utf-8"
        response.headers["Cache-Control"] = "no-store"
        if origin is not None and self._is_our_origin(origin):
            # Only our own extension may read relay answers from a page context.
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
        return response

    def _version_json(self, host: str) -> dict[str, Any]:
        relay = self.relay
        return {
            "Browser": relay.product,
            "Protocol-Version": "1.3",
            "User-Agent": relay.user_agent,
            "V8-Version": "",
            "WebKit-Version": "",
            "webSocketDebuggerUrl": f"ws://{host}/cdp",
            "Browserdeck-Relay": f"profile={self.profile}; extension="
            + ("connected" if self.extension_connected else "disconnected"),
        }

    def _tab_json(self, tab: Tab, host: str) -> dict[str, Any]:
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

    def _list_json(self, host: str) -> list[dict[str, Any]]:
        return [self._tab_json(tab, host) for tab in self.relay.shared_tabs()]

    def _extension_status(self) -> dict[str, Any]:
        link = self.relay.link
        return {
            "connected": self.extension_connected,
            "tabs": len(self.relay.shared_tabs()),
            "extensionVersion": link.info.version if link else None,
            "browser": self.relay.product if link else None,
            "profile": self.profile,
        }

    def _extension_check(
        self, connection: ServerConnection, query: dict[str, list[str]], origin: str | None
    ) -> Response:
        """Why the extension's WebSocket was refused: browsers hide the HTTP status from it."""
        instance = (query.get("instance") or [""])[0]
        link = self.relay.link
        if link is not None and not link.closed and not self._replaceable(link, instance):
            body = _error_body(
                "extension_slot_busy",
                "another browser's browserdeck extension is connected to this relay",
                "disconnect it first",
            )
            return self._json(connection, 409, body, origin)
        return self._json(
            connection,
            200,
            {
                "ok": True,
                "profile": self.profile,
                "color": self.color,
                "protocol": PROTOCOL_VERSION,
            },
            origin,
        )

    # ------------------------------------------------------------- WebSockets
    async def _handle(self, ws: ServerConnection) -> None:
        upgrade = self._upgrades.pop(id(ws), None)
        if upgrade is None:  # pragma: no cover - process_request always records one
            await ws.close(1011, "unexpected connection")
            return
        if upgrade.kind == "extension":
            await self._serve_extension(ws, upgrade)
        else:
            await self._serve_client(ws, upgrade)

    async def _authenticate_extension(self, ws: ServerConnection) -> bool:
        """The mutual proof (protocol.py): True once the extension proved the token."""
        try:
            header, _ = split_frame(_text_of(await asyncio.wait_for(ws.recv(), AUTH_TIMEOUT)))
            params = header.get("params") or {}
            nonce = params.get("nonce")
            if (
                header.get("method") != "auth"
                or params.get("protocol") != PROTOCOL_VERSION
                or not isinstance(nonce, str)
                or not 32 <= len(nonce) <= 256
                or not nonce.isascii()
            ):
                await ws.close(
                    4400,
                    "protocol mismatch: reload the extension from this browserdeck's "
                    "extension/ folder",
                )
                return False
            mine = secrets.token_hex(AUTH_NONCE_BYTES)
            await ws.send(
                frame(
                    {
                        "method": "authChallenge",
                        "params": {
                            "nonce": mine,
                            "proof": auth_proof(self._token, "relay", nonce, mine),
                        },
                    }
                )
            )
            header, _ = split_frame(_text_of(await asyncio.wait_for(ws.recv(), AUTH_TIMEOUT)))
            params = header.get("params") or {}
            if header.get("method") != "authProof" or not proof_ok(
                self._token, "extension", nonce, mine, params.get("proof")
            ):
                log.warning("relay: an /extension connection failed the token proof")
                await ws.close(
                    4401, "wrong relay token: pair the extension again (browserdeck pair)"
                )
                return False
            return True
        except (TimeoutError, ValueError, ConnectionClosed):
            with contextlib.suppress(Exception):
                await ws.close(4408, "no valid auth exchange")
            return False

    async def _serve_extension(self, ws: ServerConnection, upgrade: _Upgrade) -> None:
        if not await self._authenticate_extension(ws):
            return
        current = self.relay.link
        if current is not None and not current.closed:
            if not self._replaceable(current, upgrade.instance):
                await ws.close(4409, "another browser's browserdeck extension is already connected")
                return
            await current.ws.close(4000, "replaced by a newer connection from the same browser")
        remote = f"{ws.remote_address[0]}:{ws.remote_address[1]}"
        link = ExtensionLink(ws, remote=remote, instance=upgrade.instance)
        await self.relay.extension_connected(link)
        reason = "the extension closed the connection"
        heartbeat = self.relay.tasks.spawn(
            self._heartbeat(link), name=f"relay-heartbeat-{self.profile}"
        )
        try:
            await link.notify(
                "welcome",
                {
                    "profile": self.profile,
                    "color": self.color,
                    "protocol": PROTOCOL_VERSION,
                    "port": self.port,
                },
            )
            async for message in ws:
                if isinstance(message, bytes):
                    continue
                try:
                    header, body = split_frame(message)
                except ValueError:
                    log.warning("relay: unreadable frame from the extension")
                    continue
                if header.get("method") == "hello":
                    params = header.get("params") or {}
                    if params.get("protocol") not in (None, PROTOCOL_VERSION):
                        reason = "the extension speaks another protocol version"
                        await ws.close(
                            4400,
                            "protocol mismatch: reload the extension from this browserdeck's extension/ folder",
                        )
                        break
                    await self.relay.extension_message(link, header, body)
                    self._extension_ready.set()
                    self._extension_event(
                        True, f"{self.relay.product}, extension {link.info.version}"
                    )
                    continue
                await self.relay.extension_message(link, header, body)
        except ConnectionClosed as exc:
            reason = f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        except CdpError as exc:
            reason = exc.message
        finally:
            await cancel_and_wait(heartbeat)
            was_current = self.relay.link is link
            await self.relay.extension_gone(link, reason)
            if was_current and self.relay.link is None:
                self._extension_ready.clear()
                self._extension_event(False, reason if not self._stopping else "the relay stopped")

    async def _heartbeat(self, link: ExtensionLink) -> None:
        loop = asyncio.get_running_loop()
        while not link.closed:
            await asyncio.sleep(PING_EVERY)
            if loop.time() - link.last_seen > EXTENSION_SILENCE_LIMIT:
                log.warning("relay: the extension went silent; dropping it")
                await link.ws.close(4408, "no heartbeat from the extension")
                return
            try:
                await link.notify("ping")
            except CdpError:
                return

    async def _serve_client(self, ws: ServerConnection, upgrade: _Upgrade) -> None:
        remote = f"{ws.remote_address[0]}:{ws.remote_address[1]}"
        client = Client(
            ws,
            client_id=f"c{next(self._client_ids)}",
            label=upgrade.label,
            remote=remote,
            slot_mode=upgrade.slot_mode,
            page_target=upgrade.page_target,
        )
        if self.client_mode == "single-active" and upgrade.slot_mode == "eager":
            holder = self._live_holder()
            if holder is not None and holder is not client:
                await ws.close(4409, self._busy_message(holder))
                return
            self._slot_holder = client
        self.relay.add_client(client)
        try:
            if upgrade.page_target is not None:
                try:
                    await self.relay.open_implicit_session(client, upgrade.page_target)
                except CdpError as exc:
                    await ws.close(4404, exc.message[:120])
                    return
            async for message in ws:
                await self.relay.client_message(client, message)
        except ConnectionClosed:
            pass
        finally:
            # Free the slot before the (slower) session cleanup, so a reconnect gets in.
            client.closed = True
            if self._slot_holder is client:
                self._slot_holder = None
            self._slot_freed.set()
            await self.relay.remove_client(client)


def _select_subprotocol(
    connection: ServerConnection, subprotocols: Sequence[Subprotocol]
) -> Subprotocol | None:
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in subprotocols else None


def _text_of(message: str | bytes) -> str:
    if isinstance(message, bytes):
        raise ValueError("binary frame during the auth exchange")
    return message


def _first_header(request: Request, name: str) -> str:
    # Headers.get raises on a repeated header; a label or slot mode may take the first.
    values = request.headers.get_all(name)
    return values[0] if values else ""


def _text(connection: ServerConnection, status: int, text: str) -> Response:
    response = connection.respond(status, text)
    return response


def _error_body(code: str, message: str, hint: str | None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "hint": hint}}


__all__ = ["CLIENT_MODES", "RelayServer"]
