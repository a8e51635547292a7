"""The extension relay: a local endpoint that looks like Chrome's DevTools port.

One ``RelayServer`` per ``extension`` profile, on 127.0.0.1 (18792 by default):

* ``/extension`` (WebSocket): the browserdeck extension, one at a time. It must come
  from the pinned ``chrome-extension://<id>`` origin *and* prove it knows the relay
  token, after the relay proved it first (protocol.auth_proof; no token on the wire).
* ``/cdp`` (also ``/devtools/browser/<any>``, ``/devtools/page/<targetId>``): CDP clients
  (our engine, the service, a user's own Playwright/Puppeteer) with the token.
* HTTP: ``GET /`` (health, no token), the ``/json/*`` discovery routes
  (discovery.py), ``/extension/status``, ``/client-slot`` (token);
  ``/extension/check`` (our extension's Origin, no token).

This module is the route table, ``/cdp`` and the start/stop; the parts are beside it:

* extension_endpoint.py: ``/extension`` (the auth exchange, the serve loop, the heartbeat);
* gate.py: who may connect (loopback, Host, Origin, token), on top of policy/guard.py;
* discovery.py: Chrome's ``/json/*`` answers;
* slot.py: the single-client slot (``single-active``: one client holds it and a second
  one gets HTTP 409 naming the holder; ``multi-client`` lets everyone in);
* core.py (with targets, commands, forwarding, events): the CDP routing behind the sockets.

See docs/extension.md.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from browserdeck import errors
from browserdeck.events import ServiceEvents
from browserdeck.policy import guard
from browserdeck.relay.core import Relay
from browserdeck.relay.discovery import Discovery, link_up
from browserdeck.relay.extension_endpoint import ExtensionEndpoint
from browserdeck.relay.extension_id import EXTENSION_ID
from browserdeck.relay.gate import RequestGate, public_host
from browserdeck.relay.http import error_body, json_response, text_response
from browserdeck.relay.model import Client
from browserdeck.relay.protocol import PROTOCOL_VERSION, SUBPROTOCOL, CdpError
from browserdeck.relay.slot import CLIENT_MODES, SLOT_HEADER, SLOT_MODES, ClientSlot

log = logging.getLogger(__name__)

# Screenshots and snapshots are megabytes of JSON; the websockets default is 1 MiB.
MAX_MESSAGE = 256 * 1024 * 1024
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
        if not token:
            raise errors.InvalidInput(
                "the relay needs a token", hint="pass tokens.get_token('relay') (browserdeck.secrets.tokens)"
            )
        self.requested_port = port
        self.port = port
        self.host = host
        self.profile = profile
        self.color = color
        self.slot = ClientSlot(profile=profile, mode=client_mode)
        self.gate = RequestGate(token=token, extension_ids=extension_ids)
        self.extension_ids = self.gate.extension_ids
        self._events = events
        self._server: Server | None = None
        self._upgrades: dict[int, _Upgrade] = {}
        self._client_ids = itertools.count(1)
        self.relay = Relay(
            profile=profile,
            on_tabs_changed=self._tabs_changed,
            slot_guard=self.slot.guard,
            command_timeout=command_timeout,
            op_timeout=op_timeout,
        )
        self.discovery = Discovery(self.relay, profile)
        self.extension = ExtensionEndpoint(
            self.relay,
            self.gate,
            profile=profile,
            port=lambda: self.port,
            welcome=self._welcome,
            on_change=self._extension_event,
        )

    # ------------------------------------------------------------------ public
    @property
    def cdp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/cdp"

    @property
    def client_mode(self) -> str:
        """``single-active`` or ``multi-client`` (slot.py); tests switch it on a live relay."""
        return self.slot.mode

    @client_mode.setter
    def client_mode(self, mode: str) -> None:
        self.slot.mode = mode

    @property
    def extension_connected(self) -> bool:
        return link_up(self.relay)

    @property
    def _token(self) -> str:
        return self.gate.token

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
        holder = self.slot.current()
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
            "slot": None if holder is None else holder.describe(),
        }

    def slot_info(self) -> dict[str, Any]:
        return self.slot.info(self.relay.clients.values())

    async def wait_for_extension(self, wait: float = 10.0) -> None:
        """Wait until the extension is connected and has said hello (tests, CLI)."""
        try:
            await asyncio.wait_for(self.extension.ready.wait(), wait)
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
        self.gate.token = token
        link = self.relay.link
        if link is not None:
            await link.ws.close(4401, "the relay token changed: pair the extension again")
        for client in list(self.relay.clients.values()):
            await client.close(4401, "the relay token changed")

    async def start(self) -> None:
        if self._server is not None:
            return
        self.extension.stopping = False
        # Looks like chrome/gateway.py's bind(): both are a websockets server with a
        # port-in-use error, but the options differ where it matters (subprotocol,
        # keep-alive pings for the extension, message and write limits); a shared helper
        # would be a parameter for each line.
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
                    "port (the relay port, or the profile's own CDP port, in Settings) and set "
                    "the same port in the "
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
        self.extension.stopping = True
        server.close(close_connections=True)
        await server.wait_closed()
        link = self.relay.link
        if link is not None:
            await self.relay.extension_gone(link, "the relay stopped")
        await self.relay.tasks.cancel_all()
        self.extension.ready.clear()
        self.slot.holder = None
        log.info("extension relay for profile %s stopped", self.profile)

    # ------------------------------------------------------------------ events
    def _tabs_changed(self) -> None:
        if self._events is not None:
            self._events.tabs_changed.send(profile=self.profile)

    def _welcome(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "color": self.color,
            "protocol": PROTOCOL_VERSION,
            "port": self.port,
        }

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

        refusal = self.gate.refuse(connection, headers, path)
        if refusal is not None:
            return refusal
        origin = guard.origin_of(headers)
        cors = self.gate.cors(origin)

        if method == "OPTIONS":
            return self.gate.preflight(connection, origin)

        if path == "/" and method in ("GET", "HEAD"):
            return json_response(
                connection,
                200,
                {"ok": True, "service": "browserdeck-relay", "profile": self.profile},
                cors_origin=cors,
                head=method == "HEAD",
            )

        if path == "/extension":
            instance = (query.get("instance") or [""])[0]
            refusal = self.extension.check_upgrade(connection, headers, instance)
            if refusal is None:
                self._upgrades[id(connection)] = _Upgrade("extension", instance=instance)
            return refusal
        if path == "/extension/check":
            # No token: the extension never sends it over HTTP (a squatter could be
            # listening). It says only whether the extension slot is free (no secrets);
            # web pages were refused above by their Origin. Chrome sends no Origin on an
            # extension's GET to a host it has permissions for.
            return self.extension.check(connection, (query.get("instance") or [""])[0], cors)

        if not self.gate.has_token(headers, query):
            return json_response(
                connection,
                401,
                error_body(
                    "unauthorized",
                    "the relay token is missing or wrong",
                    "send Authorization: Bearer <token> (browserdeck token --relay prints it)",
                ),
                cors_origin=cors,
            )

        if path == "/cdp" or path.startswith("/devtools/browser"):
            return await self._check_cdp_upgrade(connection, request, query, None)
        if path.startswith("/devtools/page/"):
            target = path.rsplit("/", 1)[-1]
            if target not in self.relay.by_target:
                return text_response(connection, 404, f"No such target id: {target}\n")
            return await self._check_cdp_upgrade(connection, request, query, target)

        if method not in ("GET", "PUT", "HEAD"):
            return text_response(connection, 405, "Method Not Allowed\n")
        if path.startswith("/json"):
            host = public_host(headers, self.port)
            answer = await self.discovery.answer(connection, path, parsed.query, host, cors)
            if answer is not None:
                return answer
        if path == "/extension/status":
            return json_response(connection, 200, self._extension_status(), cors_origin=cors)
        if path == "/client-slot":
            return json_response(connection, 200, self.slot_info(), cors_origin=cors)
        return text_response(connection, 404, "Not Found\n")

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
        if slot_mode not in SLOT_MODES:
            slot_mode = "eager"
        label = _first_header(request, CLIENT_HEADER) or _first_header(request, "User-Agent")
        holder = await self.slot.holder_after_handover(slot_mode)
        if holder is not None:
            return json_response(
                connection,
                409,
                error_body(
                    "relay_busy",
                    self.slot.busy_message(holder),
                    "GET /client-slot shows who holds it; retry when busy is false",
                ),
            )
        self._upgrades[id(connection)] = _Upgrade(
            "cdp", label=label[:120], slot_mode=slot_mode, page_target=page_target
        )
        return None

    def _extension_status(self) -> dict[str, Any]:
        link = self.relay.link
        return {
            "connected": self.extension_connected,
            "tabs": len(self.relay.shared_tabs()),
            "extensionVersion": link.info.version if link else None,
            "browser": self.relay.product if link else None,
            "profile": self.profile,
        }

    # ------------------------------------------------------------- WebSockets
    async def _handle(self, ws: ServerConnection) -> None:
        upgrade = self._upgrades.pop(id(ws), None)
        if upgrade is None:  # pragma: no cover - process_request always records one
            await ws.close(1011, "unexpected connection")
            return
        if upgrade.kind == "extension":
            await self.extension.serve(ws, upgrade.instance)
        else:
            await self._serve_client(ws, upgrade)

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
        busy = self.slot.take(client)
        if busy is not None:
            await ws.close(4409, busy)
            return
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
            self.slot.release(client)
            await self.relay.remove_client(client)


def _select_subprotocol(
    connection: ServerConnection, subprotocols: Sequence[Subprotocol]
) -> Subprotocol | None:
    return Subprotocol(SUBPROTOCOL) if SUBPROTOCOL in subprotocols else None


def _first_header(request: Request, name: str) -> str:
    # Headers.get raises on a repeated header; a label or slot mode may take the first.
    values = request.headers.get_all(name)
    return values[0] if values else ""


__all__ = ["CLIENT_MODES", "RelayServer"]
