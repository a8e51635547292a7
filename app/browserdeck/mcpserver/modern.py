"""The modern era of ``/mcp`` (``2026-07-28``): one POST, one answer, no session.

Each request carries its version, the client's capabilities and info in
``params._meta``, repeated in the ``MCP-Protocol-Version`` / ``Mcp-Method`` /
``Mcp-Name`` headers (protocol.modern_rejection checks them, in the SDK's order). The
answer is JSON unless the call runs past ``PING_EVERY``; then an event stream with
keep-alive comments, so a proxy's idle timeout does not cut it. A client cancels by
closing the connection; Stop all agents and the service's stop cancel through the
endpoint's set of running calls (http.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from browserdeck.mcpserver import protocol
from browserdeck.mcpserver.protocol import Exchange, RpcError
from browserdeck.mcpserver.transport import (
    JSON,
    PING_EVERY,
    SSE_HEADERS,
    STOPPING,
    Request,
    event,
    refused,
)
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.mcpserver.server import McpApp

Call = asyncio.Task[dict[str, Any]]
# A running call and the event set when browserdeck ends it (Stop all agents, the stop).
Calls = dict[Call, asyncio.Event]


async def serve(
    request: Request, tools: Callable[[], McpApp], calls: Calls, stopping: asyncio.Event
) -> None:
    """Answer one modern-era request; its running call sits in ``calls`` meanwhile.
    ``stopping``: the endpoint's shutdown, re-checked once the body is read."""
    if await refused(request):
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
    if stopping.is_set():
        # The body can come long after the headers: a call started now would outlive
        # the stop that already cancelled the running ones (and build tools anew).
        await request.respond(503, STOPPING, [(b"content-type", JSON)])
        return
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        await _reply(request, None, RpcError(protocol.PARSE_ERROR, "Parse error"))
        return
    kind = protocol.kind_of(message)
    if kind != "request":
        invalid = RpcError(
            protocol.INVALID_REQUEST,
            "Body must be a single JSON-RPC request or notification object",
        )
        if isinstance(message, dict) and "id" not in message:
            if kind != "notification":
                await _reply(request, None, invalid)
                return
            # Acknowledged and dropped, as the SDK does: this era has no client
            # notifications over HTTP (a client cancels by closing the stream).
            requested = request.headers.get("mcp-protocol-version", "")
            unsupported = protocol.unsupported_version(requested)
            if unsupported is not None:
                await _reply(request, None, unsupported)
            else:
                await request.respond(202)
            return
        await _reply(request, None, invalid)
        return
    routing = [k for k, _ in request.raw_headers if k.lower() in _ROUTING]
    duplicated = next((k for k in routing if routing.count(k) > 1), None)
    if duplicated is not None:
        name = duplicated.decode("latin-1").lower()
        mismatch = RpcError(protocol.HEADER_MISMATCH, f"{name} header appears more than once")
        await _reply(request, message["id"], mismatch)
        return
    rejection = protocol.modern_rejection(message, request.headers)
    if rejection is not None:
        await _reply(request, message["id"], rejection)
        return
    params = message["params"]
    meta = params["_meta"]
    info, caps = meta.get(protocol.META_CLIENT_INFO), meta.get(protocol.META_CAPABILITIES)
    responses, state = params.get("inputResponses"), params.get("requestState")
    exchange = Exchange(
        request.headers,
        request.query,
        meta[protocol.META_VERSION],
        client_name=info.get("name") if isinstance(info, dict) else None,
        client_capabilities=caps if isinstance(caps, dict) else {},
        peer_pid=request.peer_pid,
        input_responses=responses if isinstance(responses, dict) else {},
        request_state=state if isinstance(state, str) else None,
    )
    await _call(request, message, exchange, tools(), calls)


async def _call(
    request: Request, message: dict[str, Any], exchange: Exchange, mcp: McpApp, calls: Calls
) -> None:
    call = aio.create_task(protocol.reply(mcp, message, exchange), name="mcp-modern-call")
    ended = asyncio.Event()
    calls[call] = ended
    call.add_done_callback(lambda task: calls.pop(task, None))
    gone = aio.create_task(request.wait_disconnect(), name="mcp-modern-disconnect")
    stop = aio.create_task(ended.wait(), name="mcp-modern-ended")
    try:
        done, _ = await asyncio.wait(
            {call, gone, stop}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
        )
        if call in done or stop in done:
            reply = _result(call, message["id"], ended=stop in done)
            error = reply.get("error")
            status = protocol.ERROR_HTTP_STATUS.get(error["code"], 200) if error else 200
            await request.respond(status, protocol.encode(reply), [(b"content-type", JSON)])
            return
        if gone in done:
            return  # the client cancelled by closing the connection
        # Past the deferral window: commit to an event stream so keep-alive comments
        # can hold the connection open behind a proxy's idle timeout.
        await request.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        while call not in done:
            await request.send(
                {"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True}
            )
            done, _ = await asyncio.wait(
                {call, gone, stop}, timeout=PING_EVERY, return_when=asyncio.FIRST_COMPLETED
            )
            if stop in done:
                break
            if gone in done and call not in done:
                return
        reply = _result(call, message["id"], ended=stop in done)
        await request.send({"type": "http.response.body", "body": event(reply)})
    finally:
        gone.cancel()
        stop.cancel()
        if not call.done():
            call.cancel()


_ROUTING = {b"mcp-protocol-version", b"mcp-method", b"mcp-name"}


def _result(call: Call, request_id: Any, *, ended: bool = False) -> dict[str, Any]:
    """The call's reply; a call ended by Stop all agents or the stop says so."""
    if not ended and not call.cancelled():
        return call.result()
    stopped = RpcError(
        protocol.REQUEST_CANCELLED,
        "Request cancelled: browserdeck ended its agents' MCP sessions (Stop all agents, "
        "or it is stopping); call again to start afresh",
    )
    return protocol.error_message(request_id, stopped)


async def _reply(request: Request, request_id: Any, error: RpcError) -> None:
    status = protocol.ERROR_HTTP_STATUS.get(error.code, 200)
    body = protocol.encode(protocol.error_message(request_id, error))
    await request.respond(status, body, [(b"content-type", JSON)])
