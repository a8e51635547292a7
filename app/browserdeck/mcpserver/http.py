"""MCP over streamable HTTP at ``/mcp`` on the control port.

The composition root (``browserdeck.master``) hands ``McpHttpEndpoint`` to the API
server, which serves it at ``/mcp`` as soon as it listens (before FastAPI is built,
api/staged.py). The route sits behind the API's own loopback guard, so ``/mcp`` needs
the bearer token, refuses non-loopback ``Host`` headers and browser ``Origin``s like
every other route; here a POST must also say ``Content-Type: application/json`` and
stay under 4 MiB (what the SDK's transport security added). Query parameters pick per
client what the stdio flags pick: ``/mcp?tools=all&profile=work``.

The transport is ours, not the official SDK's (importing the SDK's server
was ~350 ms of CPU on the way to a spawned service's first answer). On the wire it
answers as the SDK 2.3 server did, which the tests hold with the SDK's own client:

- **handshake era** (no ``MCP-Protocol-Version`` header, or a 2025 one): a POST of
  ``initialize`` without a session opens one (``Mcp-Session-Id``); every other request
  must name it (400 without, 404 for one unknown or ended). A request is answered on an
  event stream of its own; a notification or a response is answered 202. A GET opens
  the session's stream for what the server sends outside a request (our ``roots/list``
  question; its answer comes back by POST); DELETE ends the session.
  ``notifications/cancelled`` cancels a running call, which answers -32800.
- **modern era** (``2026-07-28``, modern.py): one POST, one answer, no session; JSON
  unless the call runs past 15 s, then an event stream with keep-alive comments; a
  client cancels by closing the connection.

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

from browserdeck import session as ending
from browserdeck.api.security import Receive, Scope, Send
from browserdeck.errors import Unavailable
from browserdeck.mcpserver import modern, protocol
from browserdeck.mcpserver.protocol import Exchange, RpcError
from browserdeck.mcpserver.server import SESSION_TTL, McpApp
from browserdeck.mcpserver.transport import (
    JSON,
    PING_EVERY,
    SSE_HEADERS,
    STOPPING,
    HttpSession,
    Request,
    called_tool,
    event,
    not_found,
    refused,
)
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.deck import Deck

log = logging.getLogger(__name__)

PATH = "/mcp"
# The SDK's cap on open handshake-era sessions: a client that opens sessions in a loop
# and never ends them costs a bounded amount of memory.
MAX_SESSIONS = 10_000


class McpHttpEndpoint:
    """The ASGI app behind ``/mcp``."""

    def __init__(self, deck: Deck) -> None:
        self.deck = deck
        self._mcp: McpApp | None = None
        self.sessions: dict[str, HttpSession] = {}
        self._closed: asyncio.Task[None] | None = None
        self._shutdown = asyncio.Event()
        # The modern era's running calls: no session holds them, and Stop all agents
        # or the service's stop must end them as it ends the sessions' calls.
        # Each with the event that tells its request to answer at once: a cancel can be
        # lost on Python 3.11, and the answer must not wait for the call to notice. Shown
        # on 3.11.7 with a bare script: asyncio.wait_for returns its inner future's result
        # and drops a cancel that lands in the loop turn that future finishes in (the call
        # runs on); 3.12 delivers it (bpo-42130). tests/mcp/test_modern_stop.py holds it.
        self._modern_calls: dict[asyncio.Task[dict[str, Any]], asyncio.Event] = {}
        # The modern era's request handlers, so the stop lets their answers go out
        # before the API server cancels what is still running.
        self._modern_requests: set[asyncio.Task[Any]] = set()
        self._why_ended = ending.EndedLog()  # for a 404's words: "Session ended: stopped by you…"

    def tools(self) -> McpApp:
        """The MCP server's tools, built on the first request (with their stop watcher)."""
        if self._mcp is None:
            # Every way here re-checks the stop after reading its body, with no await
            # before this call; this is the backstop: a new McpApp (and its stop watcher)
            # after the stop would never be closed.
            if self._shutdown.is_set():
                raise Unavailable("browserdeck is stopping", hint="reconnect once it runs again")
            deck = self.deck
            # The same front door the API's routes call, in-process: the /mcp request
            # passed the API's guard once; each call a tool makes there is one call.
            self._mcp = McpApp(
                deck, tools_spec="core", settings=deck.settings, registry=deck.sessions
            )
            self._mcp.on_transport_end = self._end
            self._closed = aio.create_task(self._close_when_stopped(), name="mcp-http-stop")
        return self._mcp

    async def _close_when_stopped(self) -> None:
        await self.deck.stopped()
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
            self._end(key, ending.SERVICE_STOPPING)
        self._cancel_modern_calls()
        if self._modern_requests:
            await asyncio.wait(set(self._modern_requests), timeout=2)
        if self._mcp is not None:
            await self._mcp.close()

    def session_count(self) -> int:
        """How many ``/mcp`` sessions are open (transport-keyed and modern-era ones)."""
        keys = set(self.sessions)
        if self._mcp is not None:
            keys.update(self._mcp.sessions)
        return len(keys)

    async def end_all_sessions(self, reason: ending.EndReason = ending.STOPPED_BY_USER) -> int:
        """End every open ``/mcp`` session now (the tray's Stop all agents); how many.

        The MCP state (tab claims, pooled browsers) goes, and so does the transport's:
        its open event streams close and its next request answers 404 saying ``reason``
        ("Session ended: stopped by you …"), which the MCP spec tells a client to treat
        as the end of its session. Forgetting only our state would let the client carry
        on in a fresh session without noticing it was stopped.
        """
        keys = set(self.sessions)
        for key in list(self.sessions):
            self._end(key, reason)
        self._cancel_modern_calls()
        if self._mcp is not None:
            # Sessions keyed by X-Browserdeck-Session (the modern era) have no transport.
            keys.update(self._mcp.sessions)
            for key in list(self._mcp.sessions):
                self._mcp.end_session(key, reason)
        return len(keys)

    def _cancel_modern_calls(self) -> None:
        for call, ended in list(self._modern_calls.items()):
            ended.set()
            call.cancel()

    def _end(self, sid: str, reason: ending.EndReason = ending.CLIENT_ENDED) -> None:
        """End the transport's session ``sid`` and the MCP session on it (each calls the other)."""
        session = self.sessions.pop(sid, None)
        if session is not None:
            session.end()
            if reason.tell:
                self._why_ended.remember(sid, reason, session.client_name)
        if self._mcp is not None:
            self._mcp.end_session(sid, reason)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        if self._shutdown.is_set():
            await request.respond(503, STOPPING, [(b"content-type", JSON)])
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
            why = self._why_ended.why(sid)
            posted = await request.body() if why is not None and request.method == "POST" else None
            if why is not None and (tool := called_tool(posted)) is not None:  # in the log
                refusal = ending.ended_error(why, "start a new MCP session to go on")
                await self.tools().refuse(self._why_ended.who(sid), tool, refusal)
            await request.rpc_error(404, not_found(why))
            return
        if await refused(request):
            return
        # The sessions this request holds busy (its own, or the one its initialize
        # opens): none expires while a request of it is in flight.
        held: list[HttpSession] = []
        if session is not None:
            self._hold(session)
            held.append(session)
        try:
            if request.method == "POST":
                await self._post(request, session, held)
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
                not_allowed = RpcError(protocol.INVALID_REQUEST, "Method Not Allowed")
                await request.rpc_error(405, not_allowed, sid, allow=b"GET, POST, DELETE")
        finally:
            for served in held:
                served.busy -= 1
                if not served.busy and not served.ended:
                    # Idle from now: the SDK's countdown too starts once no request of
                    # the session is in flight (an open GET stream counts as one).
                    if served.idle is not None:
                        served.idle.cancel()
                    served.idle = asyncio.get_running_loop().call_later(
                        SESSION_TTL, self._expire, served
                    )

    def _expire(self, session: HttpSession) -> None:
        # A timer left behind must not end a session a request is using now.
        if not session.busy and not session.ended and self.sessions.get(session.id) is session:
            self._end(session.id, ending.idle(SESSION_TTL))

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

    async def _post(
        self, request: Request, session: HttpSession | None, held: list[HttpSession]
    ) -> None:
        """Answers one POST; a session its ``initialize`` opens joins ``held``."""
        sid = session.id if session is not None else None
        has_json, has_sse = request.accepts()
        if not (has_json and has_sse):
            message = (
                "Not Acceptable: Client must accept both application/json and text/event-stream"
            )
            await request.rpc_error(406, RpcError(protocol.INVALID_REQUEST, message), sid)
            return
        ok, message = await self._read(request, sid)
        if not ok:
            return
        # The body can come long after the headers: the session (or the service) may
        # have ended meanwhile, and a call run now would bring its agent session back.
        if self._shutdown.is_set():
            await request.respond(503, STOPPING, [(b"content-type", JSON)])
            return
        if session is not None and session.ended:
            await request.rpc_error(404, not_found(self._why_ended.why(session.id)))
            return
        kind = protocol.kind_of(message)
        if kind is None:
            error = RpcError(protocol.INVALID_PARAMS, "Validation error: not one JSON-RPC message")
            await request.rpc_error(400, error, sid)
            return
        again: dict[str, Any] | None = None
        if kind == "request" and message["method"] == "initialize":
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if session is None:
                if len(self.sessions) >= MAX_SESSIONS:
                    await self._too_many_sessions(request)
                    return
                session = HttpSession(uuid.uuid4().hex, params)
                self.sessions[session.id] = session
                self._hold(session)
                held.append(session)
            else:
                # Initialize again: its answer and the session agree, as in the SDK,
                # which commits the new parameters to the connection; once it is
                # accepted (below: a duplicate id is refused and changes nothing).
                again = params
        elif session is None:
            await self._missing_session(request)
            return
        headers = [(b"mcp-session-id", session.id.encode())]
        if kind != "request":
            await request.respond(202, headers=[(b"content-type", JSON), *headers])
            if kind == "response":
                session.answered(message)
            elif message["method"] == "notifications/cancelled":
                target = (message.get("params") or {}).get("requestId")
                task = session.calls.get(target) if protocol.is_request_id(target) else None
                if task is not None:
                    task.cancel()
            return
        request_id = message["id"]
        if request_id in session.calls:
            # Its answer and its cancellation would be confused with the running one's.
            duplicate = RpcError(
                protocol.INVALID_REQUEST,
                f"request id {request_id!r} is already taken by a request still running in "
                "this session; send each request with an id of its own",
            )
            body = protocol.encode(protocol.error_message(request_id, duplicate))
            await request.respond(400, body, [(b"content-type", JSON), *headers])
            return
        if again is not None:
            session.adopt(again)
        here, ask_here = session.own_stream()  # a question about this call, its progress
        exchange = Exchange(
            request.headers,
            request.query,
            session.version,
            client_name=session.client_name,
            client_capabilities=session.capabilities,
            ask=session.ask,
            peer_pid=request.peer_pid,
            ask_here=ask_here,
            notify=here.put_nowait,
            progress_token=protocol.progress_token(message),
        )
        call = aio.create_task(
            protocol.reply(self.tools(), message, exchange), name=f"mcp-call-{message['method']}"
        )
        session.calls[request_id] = call
        # Forgotten when it ends, not when this stream does: a call whose client went away
        # runs on, and must stay where DELETE, expiry, Stop all agents and shutdown find it.
        call.add_done_callback(lambda done: _forget(session.calls, request_id, done))
        try:
            await request.send(
                {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]}
            )
            while True:
                sent = aio.create_task(here.get(), name="mcp-call-message")
                done, _ = await asyncio.wait(
                    {call, sent}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
                )
                if sent in done:
                    body = event(sent.result())
                else:
                    sent.cancel()
                    if call in done:
                        break
                    body = b": ping\r\n\r\n"
                await request.send({"type": "http.response.body", "body": body, "more_body": True})
            if call.cancelled():
                if session.ended:  # the session was ended: its streams close unanswered
                    await request.send({"type": "http.response.body", "body": b""})
                    return
                cancelled = RpcError(protocol.REQUEST_CANCELLED, "Request cancelled")
                reply = protocol.error_message(request_id, cancelled)
            else:
                reply = call.result()
            await request.send({"type": "http.response.body", "body": event(reply)})
        except OSError as exc:  # the client went away; the call runs on, as the SDK's did
            log.debug("MCP response stream closed: %s", exc)
        except asyncio.CancelledError:
            call.cancel()  # the server dropped this request (its shutdown): the call too
            raise

    async def _too_many_sessions(self, request: Request) -> None:
        log.warning("Refusing to open an MCP session: %d are open already", len(self.sessions))
        too_many = RpcError(
            protocol.INTERNAL_ERROR,
            f"Too many open sessions: browserdeck holds at most {MAX_SESSIONS} MCP sessions "
            "at once, and that many are open; end sessions you no longer use (DELETE /mcp "
            f"with their Mcp-Session-Id) or wait {SESSION_TTL / 60:.0f} minutes for idle ones "
            "to expire, then initialize again",
        )
        await request.rpc_error(503, too_many)

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
        for kept in session.unsent:  # what the stream before this one could not send
            # Only questions someone still waits for: one whose asker timed out would
            # be answered into nothing.
            if kept.get("id") in session.questions:
                outbox.put_nowait(kept)
        session.unsent.clear()
        session.outbox = outbox
        gone = aio.create_task(request.wait_disconnect(), name="mcp-get-disconnect")
        taken: dict[str, Any] | None = None  # off the queue, not yet on the wire
        item: asyncio.Task[dict[str, Any] | None] | None = None
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
                elif (taken := item.result()) is None:
                    break
                if gone in done:
                    return
                body = b": ping\r\n\r\n" if taken is None else event(taken)
                await request.send({"type": "http.response.body", "body": body, "more_body": True})
                taken = None
            await request.send({"type": "http.response.body", "body": b""})
        except OSError as exc:
            log.debug("MCP event stream closed: %s", exc)
        finally:
            gone.cancel()
            if item is not None:
                item.cancel()  # cancelled mid-wait (the server's stop): no get left pending
            if session.outbox is outbox:
                session.outbox = None
                # Kept for the client's next GET stream: a question it never saw would
                # hold its caller until its timeout.
                if taken is not None:
                    session.unsent.append(taken)
                while not outbox.empty():
                    left = outbox.get_nowait()
                    if left is not None:
                        session.unsent.append(left)

    async def _modern(self, request: Request) -> None:
        handler = asyncio.current_task()
        if handler is not None:
            self._modern_requests.add(handler)
        try:
            await modern.serve(request, self.tools, self._modern_calls, self._shutdown)
        finally:
            self._modern_requests.discard(handler)


def _forget(calls: dict[Any, asyncio.Task[Any]], request_id: Any, call: asyncio.Task[Any]) -> None:
    """Drop a finished call from its session, if the id is still that call's."""
    if calls.get(request_id) is call:
        del calls[request_id]


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
