"""MCP over streamable HTTP at ``/mcp`` on the control port.

The composition root (``browserdeck.master``) hands ``McpHttpEndpoint`` to the API
server, which serves it at ``/mcp`` as soon as it listens (before FastAPI is built,
api/staged.py). The route sits behind the API's own loopback guard, so ``/mcp`` needs
the bearer token, refuses non-loopback ``Host`` headers and browser ``Origin``s like
every other route; here a POST must also say ``Content-Type: application/json`` and
stay under 4 MiB (what the SDK's transport security added). Query parameters pick per
client what the stdio flags pick: ``/mcp?tools=all&profile=work``.

The transport is ours, not the official SDK's (issue 14: importing the SDK's server
was ~350 ms of CPU on the way to a spawned service's first answer). On the wire it
answers as the SDK 2.3 server did, which the tests hold with the SDK's own client:

- **handshake era** (no ``MCP-Protocol-Version`` header, or a 2025 one): a POST of
  ``initialize`` without a session opens one (``Mcp-Session-Id``); every other request
  must name it (400 without, 404 for one unknown or ended). A request is answered on an
  event stream of its own; a notification or a response is answered 202. A GET opens
  the session's stream for what the server sends outside a request (our ``roots/list``
  question; its answer comes back by POST); DELETE ends the session.
  ``notifications/cancelled`` cancels a running call, which answers -32800.
- **modern era** (``2026-07-28``): one POST, one answer, no session; JSON unless the
  call runs past 15 s, then an event stream with keep-alive comments; a client cancels
  by closing the connection.

Tools call the service's front door (``Deck``, the one the API's routes call)
in-process: the token is checked once, on the ``/mcp`` request, and the core's errors
reach the tools as they were raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from browserdeck import aio
from browserdeck.api.security import Receive, Scope, Send
from browserdeck.mcpserver import protocol
from browserdeck.mcpserver.backend import DeckBackend
from browserdeck.mcpserver.protocol import Exchange, RpcError
from browserdeck.mcpserver.server import SESSION_TTL, McpApp
from browserdeck.mcpserver.transport import (
    JSON,
    PING_EVERY,
    SSE_HEADERS,
    HttpSession,
    Request,
    event,
)

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.service import Service

log = logging.getLogger(__name__)

PATH = "/mcp"


class McpHttpEndpoint:
    """The ASGI app behind ``/mcp``."""

    def __init__(self, deck: Deck, service: Service) -> None:
        self.deck = deck
        self.service = service
        self._mcp: McpApp | None = None
        self.sessions: dict[str, HttpSession] = {}
        self._closed: asyncio.Task[None] | None = None
        self._shutdown = asyncio.Event()

    def tools(self) -> McpApp:
        """The MCP server's tools, built on the first request (with their stop watcher)."""
        if self._mcp is None:
            service = self.service
            # The same front door the API's routes call, in-process: the /mcp request
            # passed the API's guard once; each tool call is one activity entry.
            backend = DeckBackend(
                self.deck, on_call=lambda entry: service.events.api_call.send(entry=entry)
            )
            self._mcp = McpApp(backend, tools_spec="core", settings=lambda: service.config)
            self._closed = aio.create_task(self._close_when_stopped(), name="mcp-http-stop")
        return self._mcp

    async def _close_when_stopped(self) -> None:
        await self.service.stopped.wait()
        await self.shutdown()

    async def shutdown(self) -> None:
        """End every MCP session now, closing their open streams.

        For the service's stop path, before the HTTP server stops: uvicorn otherwise
        waits its whole graceful-shutdown time for a client's open event stream.
        """
        if self._shutdown.is_set():
            return
        self._shutdown.set()
        for key in list(self.sessions):
            self._end(key)
        if self._mcp is not None:
            await self._mcp.close()

    async def end_all_sessions(self) -> int:
        """End every open ``/mcp`` session now (the tray's Stop all agents); how many.

        The MCP state (tab claims, pooled browsers) goes, and so does the transport's:
        its open event streams close and its next request answers 404 "Session not
        found", which the MCP spec tells a client to treat as the end of its session.
        Forgetting only our state would let the client carry on in a fresh session
        without noticing it was stopped.
        """
        keys = set(self.sessions)
        for key in list(self.sessions):
            self._end(key)
        if self._mcp is not None:
            # Sessions keyed by X-Browserdeck-Session (the modern era) have no transport.
            keys.update(self._mcp.sessions)
            for key in list(self._mcp.sessions):
                self._mcp.end_session(key)
        return len(keys)

    def _end(self, sid: str) -> None:
        session = self.sessions.pop(sid, None)
        if session is not None:
            session.end()
        if self._mcp is not None:
            self._mcp.end_session(sid)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        if self._shutdown.is_set():
            body = (
                b'{"error":{"code":"stopping","message":"browserdeck is stopping",'
                b'"hint":"reconnect once it runs again"}}'
            )
            await request.respond(503, body, [(b"content-type", JSON)])
            return
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in protocol.HANDSHAKE_VERSIONS:
            await self._modern(request)
        else:
            await self._handshake(request)
        if request.method == "DELETE":
            # The session named either way (the modern era has no Mcp-Session-Id;
            # `browserdeck mcp` names its own with X-Browserdeck-Session).
            for name in ("mcp-session-id", "x-browserdeck-session"):
                key = request.headers.get(name)
                if key is not None and self._mcp is not None:
                    self._mcp.end_session(key)

    # --- shared checks ------------------------------------------------------------
    @staticmethod
    async def _refused(request: Request) -> bool:
        """The SDK's transport security beyond the API's guard: a JSON content type."""
        if request.method == "POST":
            ctype = request.headers.get("content-type", "").lower()
            if not ctype.startswith("application/json"):
                await request.respond(400, b"Invalid Content-Type header")
                return True
        return False

    async def _read(self, request: Request, sid: str | None) -> tuple[bool, Any]:
        """The POST's JSON; answers the error itself and returns (False, None) if none."""
        body = await request.body()
        if body is None:
            await request.respond(413, b"Request body too large")
            return False, None
        try:
            return True, json.loads(body)
        except (ValueError, RecursionError) as exc:
            await request.rpc_error(400, RpcError(protocol.PARSE_ERROR, f"Parse error: {exc}"), sid)
            return False, None

    # --- the handshake era --------------------------------------------------------
    async def _handshake(self, request: Request) -> None:
        sid = request.headers.get("mcp-session-id")
        session = self.sessions.get(sid) if sid is not None else None
        if sid is not None and session is None:
            await request.rpc_error(404, RpcError(protocol.INVALID_REQUEST, "Session not found"))
            return
        if await self._refused(request):
            return
        if session is not None:
            self._hold(session)
        served = session
        try:
            if request.method == "POST":
                served = await self._post(request, session)
            elif request.method == "GET":
                await self._get(request, session)
            elif request.method == "DELETE":
                if session is None:
                    await self._missing_session(request)
                else:
                    self._end(session.id)
                    await request.respond(
                        200,
                        headers=[(b"content-type", JSON), (b"mcp-session-id", session.id.encode())],
                    )
            else:
                refused = RpcError(protocol.INVALID_REQUEST, "Method Not Allowed")
                await request.rpc_error(405, refused, sid, allow=b"GET, POST, DELETE")
        finally:
            if session is not None:
                session.busy -= 1
            if served is not None and not served.busy and not served.ended:
                # Idle from now: the SDK's countdown too starts once no request of the
                # session is in flight (an open GET stream counts as one).
                served.idle = asyncio.get_running_loop().call_later(
                    SESSION_TTL, self._end, served.id
                )

    @staticmethod
    def _hold(session: HttpSession) -> None:
        session.busy += 1
        if session.idle is not None:
            session.idle.cancel()
            session.idle = None

    @staticmethod
    async def _missing_session(request: Request) -> None:
        await request.rpc_error(
            400, RpcError(protocol.INVALID_REQUEST, "Bad Request: Missing session ID")
        )

    async def _post(self, request: Request, session: HttpSession | None) -> HttpSession | None:
        """Answers one POST; the session it was for (a new one for ``initialize``)."""
        sid = session.id if session is not None else None
        has_json, has_sse = request.accepts()
        if not (has_json and has_sse):
            message = (
                "Not Acceptable: Client must accept both application/json and text/event-stream"
            )
            await request.rpc_error(406, RpcError(protocol.INVALID_REQUEST, message), sid)
            return session
        ok, message = await self._read(request, sid)
        if not ok:
            return session
        kind = protocol.kind_of(message)
        if kind is None:
            error = RpcError(protocol.INVALID_PARAMS, "Validation error: not one JSON-RPC message")
            await request.rpc_error(400, error, sid)
            return session
        if kind == "request" and message["method"] == "initialize":
            if session is None:
                params = message.get("params")
                session = HttpSession(uuid.uuid4().hex, params if isinstance(params, dict) else {})
                self.sessions[session.id] = session
        elif session is None:
            await self._missing_session(request)
            return session
        headers = [(b"mcp-session-id", session.id.encode())]
        if kind != "request":
            await request.respond(202, headers=[(b"content-type", JSON), *headers])
            if kind == "response":
                session.answered(message)
            elif message["method"] == "notifications/cancelled":
                params = message.get("params") or {}
                task = session.calls.get(params.get("requestId"))
                if task is not None:
                    task.cancel()
            return session
        exchange = Exchange(
            request.headers,
            request.query,
            session.version,
            client_name=session.client_name,
            client_capabilities=session.capabilities,
            ask=session.ask,
        )
        request_id = message["id"]
        call = aio.create_task(
            _answer(self.tools(), message, exchange), name=f"mcp-call-{message['method']}"
        )
        session.calls[request_id] = call
        try:
            await request.send(
                {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]}
            )
            while True:
                done, _ = await asyncio.wait({call}, timeout=PING_EVERY)
                if done:
                    break
                await request.send(
                    {"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True}
                )
            if call.cancelled():
                if session.ended:  # the session was ended: its streams close unanswered
                    await request.send({"type": "http.response.body", "body": b""})
                    return session
                cancelled = RpcError(protocol.REQUEST_CANCELLED, "Request cancelled")
                reply = protocol.error_message(request_id, cancelled)
            else:
                reply = call.result()
            await request.send({"type": "http.response.body", "body": event(reply)})
        except OSError as exc:  # the client went away; the call runs on, as the SDK's did
            log.debug("MCP response stream closed: %s", exc)
        finally:
            session.calls.pop(request_id, None)
        return session

    async def _get(self, request: Request, session: HttpSession | None) -> None:
        if not request.accepts()[1]:
            message = "Not Acceptable: Client must accept text/event-stream"
            sid = session.id if session is not None else None
            await request.rpc_error(406, RpcError(protocol.INVALID_REQUEST, message), sid)
            return
        if session is None:
            await self._missing_session(request)
            return
        if session.outbox is not None:
            message = "Conflict: Only one SSE stream is allowed per session"
            await request.rpc_error(409, RpcError(protocol.INVALID_REQUEST, message), session.id)
            return
        outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        session.outbox = outbox
        gone = aio.create_task(request.wait_disconnect(), name="mcp-get-disconnect")
        try:
            headers = [*SSE_HEADERS, (b"mcp-session-id", session.id.encode())]
            await request.send({"type": "http.response.start", "status": 200, "headers": headers})
            while not session.ended:
                item = aio.create_task(outbox.get(), name="mcp-get-next")
                done, _ = await asyncio.wait(
                    {item, gone}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
                )
                if item not in done:
                    item.cancel()
                if gone in done:
                    return
                body = b": ping\r\n\r\n"
                if item in done:
                    sent = item.result()
                    if sent is None:
                        break
                    body = event(sent)
                await request.send({"type": "http.response.body", "body": body, "more_body": True})
            await request.send({"type": "http.response.body", "body": b""})
        except OSError as exc:
            log.debug("MCP event stream closed: %s", exc)
        finally:
            gone.cancel()
            if session.outbox is outbox:
                session.outbox = None

    # --- the modern era -------------------------------------------------------------
    async def _modern(self, request: Request) -> None:
        if await self._refused(request):
            return
        if request.method != "POST":
            await request.respond(405, headers=[(b"allow", b"POST")])
            return
        has_json, has_sse = request.accepts()
        if not (has_json and has_sse):
            await request.respond(406)
            return
        body = await request.body()
        if body is None:
            await request.respond(413, b"Request body too large")
            return
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            await _modern_reply(request, None, RpcError(protocol.PARSE_ERROR, "Parse error"))
            return
        kind = protocol.kind_of(message)
        if kind != "request":
            invalid = RpcError(
                protocol.INVALID_REQUEST,
                "Body must be a single JSON-RPC request or notification object",
            )
            if isinstance(message, dict) and "id" not in message:
                if kind != "notification":
                    await _modern_reply(request, None, invalid)
                    return
                # Acknowledged and dropped, as the SDK does: this era has no client
                # notifications over HTTP (a client cancels by closing the stream).
                requested = request.headers.get("mcp-protocol-version", "")
                unsupported = protocol.unsupported_version(requested)
                if unsupported is not None:
                    await _modern_reply(request, None, unsupported)
                else:
                    await request.respond(202)
                return
            await _modern_reply(request, None, invalid)
            return
        routing = [k for k, _ in request.raw_headers if k.lower() in _ROUTING]
        duplicated = next((k for k in routing if routing.count(k) > 1), None)
        if duplicated is not None:
            name = duplicated.decode("latin-1").lower()
            mismatch = RpcError(protocol.HEADER_MISMATCH, f"{name} header appears more than once")
            await _modern_reply(request, message["id"], mismatch)
            return
        rejection = protocol.modern_rejection(message, request.headers)
        if rejection is not None:
            await _modern_reply(request, message["id"], rejection)
            return
        meta = message["params"]["_meta"]
        info, caps = meta.get(protocol.META_CLIENT_INFO), meta.get(protocol.META_CAPABILITIES)
        exchange = Exchange(
            request.headers,
            request.query,
            meta[protocol.META_VERSION],
            client_name=info.get("name") if isinstance(info, dict) else None,
            client_capabilities=caps if isinstance(caps, dict) else {},
        )
        await self._modern_call(request, message, exchange)

    async def _modern_call(
        self, request: Request, message: dict[str, Any], exchange: Exchange
    ) -> None:
        call = aio.create_task(_answer(self.tools(), message, exchange), name="mcp-modern-call")
        gone = aio.create_task(request.wait_disconnect(), name="mcp-modern-disconnect")
        try:
            done, _ = await asyncio.wait(
                {call, gone}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
            )
            if call in done:
                reply = call.result()
                error = reply.get("error")
                status = protocol.ERROR_HTTP_STATUS.get(error["code"], 200) if error else 200
                await request.respond(
                    status, protocol.dumps(reply).encode(), [(b"content-type", JSON)]
                )
                return
            if gone in done:
                return  # the client cancelled by closing the connection
            # Past the deferral window: commit to an event stream so keep-alive comments
            # can hold the connection open behind a proxy's idle timeout.
            await request.send(
                {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}
            )
            while call not in done:
                await request.send(
                    {"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True}
                )
                done, _ = await asyncio.wait(
                    {call, gone}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
                )
                if gone in done and call not in done:
                    return
            await request.send({"type": "http.response.body", "body": event(call.result())})
        finally:
            gone.cancel()
            if not call.done():
                call.cancel()


_ROUTING = {b"mcp-protocol-version", b"mcp-method", b"mcp-name"}


async def _modern_reply(request: Request, request_id: Any, error: RpcError) -> None:
    status = protocol.ERROR_HTTP_STATUS.get(error.code, 200)
    body = protocol.dumps(protocol.error_message(request_id, error)).encode()
    await request.respond(status, body, [(b"content-type", JSON)])


async def _answer(mcp: McpApp, message: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
    """The JSON-RPC reply to one request (a result or an error, never an exception)."""
    request_id = message["id"]
    try:
        result = await protocol.answer(mcp, message["method"], message.get("params"), exchange)
    except RpcError as exc:
        return protocol.error_message(request_id, exc)
    except Exception as exc:
        log.exception("MCP %s failed", message["method"])
        return protocol.error_message(
            request_id, RpcError(protocol.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        )
    return protocol.result_message(request_id, result)


def endpoint_of(asgi: Any) -> McpHttpEndpoint | None:
    """The ``/mcp`` endpoint of the API server's app (guarded or not), if any."""
    # The routes sit under several middlewares (activity, guard, cancellation): walk the
    # `.app` chain down to the one holding them, however many there are.
    app: Any = asgi
    for _ in range(16):
        routes = getattr(app, "routes", None)
        endpoint = routes.get(PATH) if isinstance(routes, dict) else None
        if isinstance(endpoint, McpHttpEndpoint):
            return endpoint
        app = getattr(app, "app", None)
        if app is None:
            return None
    return None


async def shutdown(asgi: Any) -> None:
    """End the MCP sessions of the API server's app (guarded or not).

    For ``ApiServer.stop()``, before it tells uvicorn to exit, so connected MCP
    clients do not hold the service's shutdown for uvicorn's graceful timeout.
    """
    endpoint = endpoint_of(asgi)
    if endpoint is not None:
        await endpoint.shutdown()
