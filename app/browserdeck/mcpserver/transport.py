"""The HTTP side of ``/mcp``: one request, and one handshake-era session (http.py).

Raw ASGI, no web framework: ``/mcp`` is served before FastAPI is built (api/staged.py),
and a service only MCP clients use never builds it.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from browserdeck.api.security import PEER_PID, Receive, Scope, Send
from browserdeck.mcpserver import protocol
from browserdeck.mcpserver.protocol import RpcError

if TYPE_CHECKING:
    from browserdeck.session import EndReason

MAX_BODY = 4 * 1024 * 1024  # the SDK's limit on a request body
PING_EVERY = 15.0  # a keep-alive comment on a quiet event stream, as the SDK sends
JSON = b"application/json"
# The answer to a request that arrives (or whose body finishes arriving) as the service
# stops: both eras check after reading the body, so no call starts after the stop.
STOPPING = (
    b'{"error":{"code":"stopping","message":"browserdeck is stopping",'
    b'"hint":"reconnect once it runs again"}}'
)
SSE_HEADERS = [
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"content-type", b"text/event-stream"),
    (b"x-accel-buffering", b"no"),
]


class Request:
    """One HTTP request to ``/mcp``: method, headers (lower-case, last wins), query."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.method: str = scope.get("method", "GET")
        self.headers: dict[str, str] = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        self.raw_headers: list[tuple[bytes, bytes]] = list(scope.get("headers", []))
        self.query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        # The process that sent it, when the kernel says (the API's Unix socket).
        peer = scope.get(PEER_PID)
        self.peer_pid: int | None = peer if isinstance(peer, int) and peer > 0 else None
        self.receive = receive
        self.send = send

    def accepts(self) -> tuple[bool, bool]:
        """(JSON, event stream) acceptable, with ``*/*``, ``application/*``, ``text/*``."""
        kinds = {p.split(";")[0].strip().lower() for p in self.headers.get("accept", "").split(",")}
        anything = "*/*" in kinds
        return (
            anything or bool({"application/json", "application/*"} & kinds),
            anything or bool({"text/event-stream", "text/*"} & kinds),
        )

    async def body(self) -> bytes | None:
        """The body, or None when it is larger than ``MAX_BODY``."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def respond(
        self, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        all_headers = [*(headers or []), (b"content-length", str(len(body)).encode())]
        await self.send({"type": "http.response.start", "status": status, "headers": all_headers})
        await self.send({"type": "http.response.body", "body": body})

    async def rpc_error(
        self, status: int, error: RpcError, session: str | None = None, allow: bytes | None = None
    ) -> None:
        """A JSON-RPC error without a request id, as the transport answers refusals."""
        headers = [(b"content-type", JSON)]
        if allow is not None:
            headers.append((b"allow", allow))
        if session is not None:
            headers.append((b"mcp-session-id", session.encode()))
        body = protocol.encode(protocol.error_message(None, error))
        await self.respond(status, body, headers)

    async def wait_disconnect(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass


async def refused(request: Request) -> bool:
    """The SDK's transport security beyond the API's guard: a POST says it is JSON.

    Answers the refusal itself; True when it did."""
    if request.method == "POST":
        ctype = request.headers.get("content-type", "").lower()
        if not ctype.startswith("application/json"):
            await request.respond(400, b"Invalid Content-Type header")
            return True
    return False


def event(message: dict[str, Any]) -> bytes:
    return b"event: message\r\ndata: " + protocol.encode(message) + b"\r\n\r\n"


class HttpSession:
    """One handshake-era session: its open streams, running calls and our questions."""

    def __init__(self, sid: str, params: dict[str, Any]) -> None:
        self.id = sid
        self.client_name: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.version = protocol.LATEST_HANDSHAKE
        self.adopt(params)
        self.outbox: asyncio.Queue[dict[str, Any] | None] | None = None  # the GET stream's
        self.unsent: list[dict[str, Any]] = []  # for the next GET stream
        self.calls: dict[Any, asyncio.Task[dict[str, Any]]] = {}
        self.questions: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.busy = 0
        self.idle: asyncio.TimerHandle | None = None
        self.ended = False

    def adopt(self, params: dict[str, Any]) -> None:
        """The client, its capabilities and the version, from its ``initialize``."""
        info, caps = params.get("clientInfo"), params.get("capabilities")
        name = info.get("name") if isinstance(info, dict) else None
        self.client_name = name if isinstance(name, str) else None
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.version = protocol.negotiate(params.get("protocolVersion"))

    async def ask(
        self,
        method: str,
        params: dict[str, Any] | None,
        outbox: asyncio.Queue[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Send the client a request on the GET stream (or ``outbox``: a request's own
        stream); its result, once it POSTs it.

        Without an open GET stream the question is lost, as the SDK's was; the caller
        bounds the wait (``ROOTS_TIMEOUT``).
        """
        self.next_id += 1
        request_id = self.next_id
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.questions[request_id] = answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        if outbox is not None:
            outbox.put_nowait(message)
        elif self.outbox is not None:
            self.outbox.put_nowait(message)
        try:
            return await answer
        finally:
            self.questions.pop(request_id, None)

    def own_stream(self) -> tuple[asyncio.Queue[dict[str, Any]], protocol.Ask]:
        """What the server sends about one request while it runs (a question for the
        client's user, progress), before its answer, on that request's own stream: the
        queue the stream sends from, and how to ask the client there."""
        here: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def ask_here(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            return await self.ask(method, params, outbox=here)

        return here, ask_here

    def answered(self, message: dict[str, Any]) -> None:
        answer = self.questions.get(message["id"])
        if answer is None or answer.done():
            return
        if "error" in message:
            error = message["error"]
            answer.set_exception(RpcError(error.get("code", 0), str(error.get("message", ""))))
        else:
            answer.set_result(message["result"])

    def end(self) -> None:
        """Close its streams and stop its calls: its next request answers 404."""
        self.ended = True
        if self.idle is not None:
            self.idle.cancel()
        if self.outbox is not None:
            self.outbox.put_nowait(None)
        for task in self.calls.values():
            task.cancel()
        for answer in self.questions.values():
            answer.cancel()


def not_found(reason: EndReason | None) -> RpcError:
    """The 404 of a request naming a session the server does not hold: why it ended,
    when that is known ("Session ended: stopped by you …"), else as the SDK says it."""
    if reason is None:
        return RpcError(protocol.INVALID_REQUEST, "Session not found")
    return RpcError(
        protocol.INVALID_REQUEST, f"Session ended: {reason.words}; start a new MCP session to go on"
    )


def called_tool(body: bytes | None) -> str | None:
    """The tool a POST's body calls (``tools/call``), or None: not a tool call."""
    try:
        message = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    return tool if isinstance(tool, str) else None
