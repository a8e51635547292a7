"""The managed profile's CDP endpoint: Chrome's DevTools, but only for those we let in.

A managed browser talks to browserdeck over a pipe (chrome/pipe.py) and has no port of
its own. ``CdpGateway`` serves its CDP on ``127.0.0.1:<cdpPort>`` the way Chrome's
DevTools server does, for our engine (Playwright ``connect_over_cdp`` with headers)
and for outside clients (Puppeteer, Playwright, scripts) alike:

* ``GET /json/version``, ``GET /json`` = ``/json/list``, ``PUT /json/new?<url>``,
  ``/json/activate/<id>``, ``/json/close/<id>``;
* WebSockets on ``/devtools/browser/<any>`` (a browser-level connection) and
  ``/devtools/page/<targetId>`` (a page-level one).

Every request passes the shared guard (browserdeck.policy.guard: loopback peer and Host, no web
page Origin, ``Authorization: Bearer <API token>``; ``browserdeck cdp-url`` prints it).

One policy holds for every client and every command, wrapped ones included
(chrome/policy.py): ``file:`` URLs while ``allowFileUrls`` is off (``/json/new`` too),
files handed to a page and download folders confined like uploads, no way around the
policy (chrome/inbound.py reads which messages it must see). Everything else is
forwarded as the client sent it, without parsing, but for the engine's own connection
(it sends the key of ``auth_headers``): its Playwright's by-value evaluations in
isolated worlds are fetched as one string and handed back as Chromium would have
(chrome/byvalue.py). A user's own client, of whatever Playwright version, gets
Chromium's replies as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import json
import logging
import secrets
import urllib.parse
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response

from browserdeck.chrome.byvalue import Courier
from browserdeck.chrome.inbound import Rules, prepare_inbound
from browserdeck.chrome.pipe import BrowserPipe, Channel, PipeCallError
from browserdeck.chrome.procs import listening_pids, process_cmdline
from browserdeck.errors import (
    RESET_PROFILE,
    ActionTimeout,
    BrowserdeckError,
    Conflict,
    Hint,
    Unavailable,
)
from browserdeck.policy import guard, urls

__all__ = ["CdpGateway"]

log = logging.getLogger(__name__)

# What a client may send in one message (a big Runtime.evaluate or file payload).
MAX_CLIENT_MESSAGE = 256 * 2**20
# A client that stops reading is disconnected once this much waits for it (browser
# messages are written at once, without waiting for the client: the pipe is shared).
MAX_BACKLOG_BYTES = 512 * 2**20

_ACTIVATE = b"Target.activateTarget"
# The header by which the engine's own connection asks for the by-value courier.
ENGINE_HEADER = "X-Browserdeck-Engine"
# Chrome lists these in /json/list; the browser itself, tab containers and its own UI
# are not listed.
_UNLISTED_TYPES = frozenset({"browser", "tab", "browser_ui"})


class CdpGateway:
    """The CDP endpoint of one managed profile; ``bind``, ``attach(pipe)``, ``stop``."""

    def __init__(
        self,
        *,
        port: int,
        token: Callable[[], str],
        allow_file_urls: Callable[[], bool],
        profile: str,
        host: str = "127.0.0.1",
        upload_roots: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        self.requested_port = port
        self.port = port
        self.host = host
        self.profile = profile
        self._token = token
        self._allow_file_urls = allow_file_urls
        self._rules = Rules(allow_file_urls=allow_file_urls, upload_roots=upload_roots)
        self._server: Server | None = None
        self._pipe: BrowserPipe | None = None
        self._version: dict[str, Any] = {}
        self._browser_path = f"/devtools/browser/{uuid.uuid4()}"
        # Known only in this process: only our own clients get the courier.
        self._engine_key = secrets.token_urlsafe(24)
        # Target ids, most recently created or activated last (Chrome lists by activity).
        self._recency: dict[str, None] = {}

    @property
    def cdp_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}{self._browser_path}"

    def auth_headers(self) -> dict[str, str]:
        """What browserdeck's own clients (the engine above all) send: the token, and the
        key that asks for the by-value courier."""
        return {"Authorization": f"Bearer {self._token()}", ENGINE_HEADER: self._engine_key}

    def _is_engine(self, request: Request) -> bool:
        sent = request.headers.get(ENGINE_HEADER, "")
        return hmac.compare_digest(sent.encode(), self._engine_key.encode())

    async def bind(self) -> None:
        """Listen on the port (before the browser starts, so a taken port fails early)."""
        try:
            self._server = await serve(
                self._handle,
                self.host,
                self.requested_port,
                process_request=self._process_request,
                compression=None,
                max_size=MAX_CLIENT_MESSAGE,
                create_connection=_CdpConnection,
                # Loopback only; a client paused in a debugger must not be dropped.
                ping_interval=None,
                server_header="browserdeck-cdp",
            )
        except OSError as exc:
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
            raise self._port_taken() from None
        sock = next(iter(self._server.sockets))
        self.port = int(sock.getsockname()[1])

    def _port_taken(self) -> Conflict:
        port = self.requested_port
        pids = listening_pids(port)
        owners = ", ".join(
            f"pid {pid} ({(process_cmdline(pid) or ['?'])[0].rsplit('/', 1)[-1]})" for pid in pids
        )
        return Conflict(
            f"cannot start profile '{self.profile}': 127.0.0.1:{port}, its CDP port, is taken "
            f"by {owners or 'another program'}",
            hint=Hint(
                "if it is a browser left from an earlier run, resetting the profile ({reset}) "
                "closes it; otherwise stop that program, or give the profile another CDP port "
                "(Settings › Profiles; cdpPort in the config file)",
                reset=RESET_PROFILE.of(profile=self.profile),
            ),
            code="port_in_use",
        )

    async def attach(self, pipe: BrowserPipe, version: dict[str, Any]) -> None:
        """Serve ``pipe``'s browser from now on."""
        self._pipe = pipe
        self._version = version
        pipe.on_event = self._root_event
        # Discovery on the root session keeps /json/list in Chrome's order (by activity).
        with contextlib.suppress(BrowserdeckError, PipeCallError):
            await pipe.call("Target.setDiscoverTargets", {"discover": True})

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close(close_connections=True)
        await server.wait_closed()

    # -- HTTP --

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        headers = guard.headers_from_pairs(request.headers.raw_items())
        address = connection.remote_address
        # The one guard (browserdeck.policy.guard), the same the API and the relay use.
        refusal = guard.check_request(
            str(address[0]) if address else None, headers, token=self._token()
        )
        if refusal is not None:
            return self._json(
                connection,
                refusal.status,
                {"error": {"code": refusal.code, "message": refusal.message, "hint": refusal.hint}},
            )
        parsed = urllib.parse.urlsplit(request.path)
        path = parsed.path.rstrip("/") or "/"
        pipe = self._pipe
        if pipe is None or pipe.closed:
            return self._json(connection, 503, _error("browser_gone", "the browser is not running",
                                                      "start the profile (POST /start)"))
        if path.startswith(("/devtools/browser", "/devtools/page/")):
            return await self._open_channel(connection, request, pipe, path)
        netloc = self._netloc(headers)
        try:
            if path == "/json/version":
                return self._json(connection, 200, self.version_json(netloc))
            if path in ("/json", "/json/list"):
                return self._json(connection, 200, await self._list_json(pipe, netloc))
            if path == "/json/new":
                return await self._new_tab(connection, pipe, parsed.query, netloc)
            if path.startswith(("/json/activate/", "/json/close/")):
                target = path.rsplit("/", 1)[-1]
                if path.startswith("/json/activate/"):
                    await pipe.call("Target.activateTarget", {"targetId": target})
                    self._touch(target)
                    return connection.respond(200, "Target activated")
                await pipe.call("Target.closeTarget", {"targetId": target})
                return connection.respond(200, "Target is closing")
        except PipeCallError as exc:
            return connection.respond(404 if "target" in str(exc).lower() else 500, f"{exc}\n")
        except BrowserdeckError as exc:
            return self._json(connection, _status_of(exc), {"error": exc.to_dict()})
        return connection.respond(404, "Not Found\n")

    def _netloc(self, headers: guard.Headers) -> str:
        # Rebuilt from the checked Host, never copied raw (docs/security.md).
        parsed = guard.parse_host(guard.single_header(headers, "host")[0])
        if parsed is None:
            return f"{self.host}:{self.port}"
        return parsed.netloc(self.port)

    def version_json(self, netloc: str | None = None) -> dict[str, Any]:
        """``/json/version`` as a client at ``netloc`` (default: our own address) sees it."""
        netloc = netloc or f"{self.host}:{self.port}"
        v = self._version
        return {
            "Browser": v.get("product", ""),
            "Protocol-Version": v.get("protocolVersion", "1.3"),
            "User-Agent": v.get("userAgent", ""),
            "V8-Version": v.get("jsVersion", ""),
            "WebKit-Version": v.get("revision", ""),
            "webSocketDebuggerUrl": f"ws://{netloc}{self._browser_path}",
        }

    def _target_json(self, info: dict[str, Any], netloc: str) -> dict[str, Any]:
        target = str(info.get("targetId", ""))
        ws = f"{netloc}/devtools/page/{target}"
        return {
            "description": "",
            "devtoolsFrontendUrl": f"/devtools/inspector.html?ws={ws}",
            "id": target,
            "title": info.get("title", ""),
            "type": info.get("type", ""),
            "url": info.get("url", ""),
            "webSocketDebuggerUrl": f"ws://{ws}",
        }

    async def _list_json(self, pipe: BrowserPipe, netloc: str) -> list[dict[str, Any]]:
        infos = (await pipe.call("Target.getTargets")).get("targetInfos", [])
        listed = [i for i in infos if isinstance(i, dict) and i.get("type") not in _UNLISTED_TYPES]
        order = {target: n for n, target in enumerate(self._recency)}
        listed.sort(key=lambda i: order.get(str(i.get("targetId")), -1), reverse=True)
        return [self._target_json(info, netloc) for info in listed]

    async def _new_tab(
        self, connection: ServerConnection, pipe: BrowserPipe, query: str, netloc: str
    ) -> Response:
        url = urllib.parse.unquote(query) if query else "about:blank"
        if not self._allow_file_urls() and urls.is_file_url(url):
            refusal = urls.file_url_forbidden(url)
            return self._json(connection, 403, {"error": refusal.to_dict()})
        created = await pipe.call("Target.createTarget", {"url": url or "about:blank"})
        target = str(created.get("targetId", ""))
        self._touch(target)
        for info in (await pipe.call("Target.getTargets")).get("targetInfos", []):
            if info.get("targetId") == target:
                return self._json(connection, 200, self._target_json(info, netloc))
        return self._json(connection, 200, self._target_json({"targetId": target, "url": url,
                                                              "type": "page"}, netloc))

    def _json(self, connection: ServerConnection, status: int, body: Any) -> Response:
        response = connection.respond(status, json.dumps(body, indent=2) + "\n")
        response.headers["Content-Type"] = "application/json; charset=utf-8"
        response.headers["Cache-Control"] = "no-store"
        if status == 401:
            response.headers["WWW-Authenticate"] = 'Bearer realm="browserdeck"'
        return response

    # -- target order --

    def _touch(self, target: str) -> None:
        self._recency.pop(target, None)
        self._recency[target] = None

    def _root_event(self, event: dict[str, Any]) -> None:
        method = event.get("method")
        info = event.get("params", {}).get("targetInfo", {})
        if method == "Target.targetCreated" and isinstance(info, dict):
            self._touch(str(info.get("targetId", "")))
        elif method == "Target.targetDestroyed":
            self._recency.pop(str(event.get("params", {}).get("targetId", "")), None)

    def _note_activation(self, data: bytes) -> None:
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            message = json.loads(data)
            if message.get("method") == "Target.activateTarget":
                self._touch(str(message["params"]["targetId"]))

    # -- WebSocket --

    async def _open_channel(
        self, connection: ServerConnection, request: Request, pipe: BrowserPipe, path: str
    ) -> Response | None:
        """Attach the client's own session before the handshake completes, so its first
        message already has somewhere to go."""
        if not isinstance(connection, _CdpConnection) or (
            request.headers.get("Upgrade", "").lower() != "websocket"
        ):
            return connection.respond(426, "Upgrade Required: this is a WebSocket endpoint\n")
        target = path.rsplit("/", 1)[-1] if path.startswith("/devtools/page/") else None
        # The engine's connection only; told the channel's root session once it is open.
        courier = Courier() if self._is_engine(request) else None
        try:
            channel = await pipe.open_channel(
                lambda message: _send_now(
                    connection, courier.outbound(message) if courier is not None else message
                ),
                lambda reason: self._channel_closed(connection, reason),
                target_id=target,
            )
        except PipeCallError:
            return connection.respond(404, f"No such target id: {target}\n")
        except BrowserdeckError as exc:
            return self._json(connection, _status_of(exc), {"error": exc.to_dict()})
        if courier is not None:
            courier.root = channel.root
        connection.on_message = lambda data: self._inbound(connection, channel, courier, data)
        connection.on_lost = lambda: self._forget(channel)
        return None

    def _inbound(
        self, connection: _CdpConnection, channel: Channel, courier: Courier | None, data: bytes
    ) -> None:
        """One message from a client, handled where it was read (no task switch)."""
        forward, reply = prepare_inbound(data, channel.root, rules=self._rules)
        if reply is not None:
            log.warning("CDP client of profile %s: refused %s", self.profile, reply[:300])
            _send_now(connection, reply)
        if forward is not None:
            if _ACTIVATE in data:
                self._note_activation(data)
            try:
                channel.send(courier.inbound(forward) if courier is not None else forward)
            except Unavailable:
                self._channel_closed(connection, "the browser is gone")

    def _channel_closed(self, connection: ServerConnection, reason: str) -> None:
        log.info("CDP client of profile %s closed: %s", self.profile, reason)
        asyncio.get_running_loop().create_task(
            connection.close(1011, reason[:120]), name=f"cdp-gateway-close {self.profile}"
        )

    def _forget(self, channel: Channel) -> None:
        if not channel.closed:
            asyncio.get_running_loop().create_task(
                channel.close(), name=f"cdp-gateway-detach {self.profile}"
            )

    async def _handle(self, connection: ServerConnection) -> None:
        # The channel was opened in _process_request and every message is handled as it
        # is read (_CdpConnection); this coroutine only keeps the connection open.
        await connection.wait_closed()


class _CdpConnection(ServerConnection):
    """A server connection that hands each complete message to ``on_message`` as soon as
    its last frame is parsed, instead of queueing it for a ``recv()`` in another task:
    one task switch less per message each way, which is most of the hop's cost."""

    on_message: Callable[[bytes], None] | None = None
    on_lost: Callable[[], None] | None = None
    _fragments: list[bytes] | None = None

    def process_event(self, event: Any) -> None:
        handler = self.on_message
        if handler is not None and isinstance(event, Frame):
            if event.opcode in (Opcode.TEXT, Opcode.BINARY):
                if event.fin:
                    handler(bytes(event.data))
                else:
                    self._fragments = [bytes(event.data)]
                return
            if event.opcode is Opcode.CONT and self._fragments is not None:
                self._fragments.append(bytes(event.data))
                if event.fin:
                    data, self._fragments = b"".join(self._fragments), None
                    handler(data)
                return
        super().process_event(event)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.on_lost is not None:
            on_lost, self.on_lost = self.on_lost, None
            on_lost()


def _status_of(exc: BrowserdeckError) -> int:
    """The HTTP status of a failure of a pipe call, at this DevTools endpoint's own edge.

    Core errors carry no HTTP status (the API maps them in ``api/errors.py``, which
    this core module cannot import). A pipe call can only find the browser gone or
    silent: DevTools clients read any of these as "failed", and the body says why.
    """
    if isinstance(exc, ActionTimeout):
        return 504
    if isinstance(exc, Unavailable):
        return 503
    return 500


def _send_now(connection: ServerConnection, message: bytes) -> None:
    """Send a text frame at once (the event loop runs one callback at a time, so frames
    never interleave); a client that lets too much pile up unread is disconnected."""
    try:
        connection.protocol.send_text(message)
        connection.send_data()
    except (InvalidState, OSError, RuntimeError):
        return  # closing: nothing more to send
    transport = connection.transport
    if transport.get_write_buffer_size() > MAX_BACKLOG_BYTES:
        log.warning("closing a CDP client that stopped reading (over 512 MiB waiting)")
        transport.abort()


def _error(code: str, message: str, hint: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "hint": hint}}
