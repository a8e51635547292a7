"""MCP's JSON-RPC messages for the two protocol eras the service speaks.

The service answers four things over MCP: ``initialize`` (or ``server/discover``),
``ping``, ``tools/list`` and ``tools/call``, and asks one (``roots/list``). This module
is what those messages look like, with no I/O: plain dicts through the stdlib's json,
no pydantic model per message. Importing the official SDK's server for it cost the
service ~350 ms of CPU on the way to its first answer; the SDK stays the tests' client,
which holds this module to what the SDK's server answered (tests/mcp).

Two eras, as the SDK 2.3 server serves them:

- **handshake** (``2024-11-05`` … ``2025-11-25``): ``initialize`` negotiates the
  version (the client's if known, else the newest), then requests run in a session;
- **modern** (``2026-07-28``): no handshake; every request carries the version, the
  client's capabilities and info in ``params._meta``, checked against the
  ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers; results carry
  ``resultType`` and the server's info in ``_meta``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from browserdeck.util import paths
from browserdeck.util.fastjson import utf8

_log = logging.getLogger(__name__)

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]

# JSON-RPC and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
# The handshake era ends a cancelled request's stream with this (LSP's RequestCancelled).
REQUEST_CANCELLED = -32800

# The modern era's HTTP status per error code (the SDK's table; others answer 200).
ERROR_HTTP_STATUS: Mapping[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    -32021: 400,  # a required client capability is missing
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# Methods whose name parameter the modern era repeats in the Mcp-Name header.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class RpcError(Exception):
    """A JSON-RPC error answer: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


def dumps(message: Mapping[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def encode(message: Mapping[str, Any]) -> bytes:
    """The message as UTF-8 JSON, the one way every answer goes onto the wire.

    A page can hold text no UTF-8 can carry: a lone surrogate (``'a\\uD800b'`` set by a
    script) reaches us from the browser as it is. Each one becomes U+FFFD here, not an
    error: ``\\ud800`` escapes would be valid JSON that strict clients' parsers (pydantic's)
    refuse, and an exception here left a client waiting for an answer that never came.
    """
    return utf8(dumps(message))


def result_message(request_id: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(request_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.error()}


def is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def kind_of(message: object) -> str | None:
    """``request``, ``notification`` or ``response`` (a client's answer to ours); None
    for anything else (a batch, a wrong envelope)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    params = message.get("params")
    if "method" in message:
        if not isinstance(message["method"], str) or not (
            params is None or isinstance(params, dict)
        ):
            return None
        if "id" not in message:
            return "notification"
        return "request" if is_request_id(message["id"]) else None
    if is_request_id(message.get("id")) and (
        isinstance(message.get("result"), dict) or isinstance(message.get("error"), dict)
    ):
        return "response"
    return None


def progress_token(message: Mapping[str, Any]) -> str | int | None:
    """The request's ``_meta.progressToken`` (its client wants progress), if any."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if is_request_id(token) else None


def negotiate(requested: object) -> str:
    """The handshake era's version: the client's when we know it, else the newest."""
    return (
        requested
        if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS
        else (LATEST_HANDSHAKE)
    )


def modern_rejection(body: Mapping[str, Any], headers: Mapping[str, str]) -> RpcError | None:
    """The first check a modern-era request fails, as the SDK orders them; None if none.

    The envelope in ``params._meta``, then the routing headers repeat the body (a client
    that disagrees with itself is told so before the version), then the version.
    """
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        return RpcError(
            INVALID_PARAMS,
            f"params._meta must be an object carrying the required {META_VERSION!r} and "
            f"{META_CAPABILITIES!r} envelope keys",
        )
    missing = [key for key in (META_VERSION, META_CAPABILITIES) if key not in meta]
    if missing:
        return RpcError(
            INVALID_PARAMS,
            f"params._meta is missing the required envelope key(s): {', '.join(missing)}",
        )
    version = meta[META_VERSION]
    header = headers.get("mcp-protocol-version")
    if header is None or header != version:
        return RpcError(
            HEADER_MISMATCH,
            "mcp-protocol-version header does not match the request envelope's protocol version",
        )
    method = body.get("method")
    if headers.get("mcp-method") != method:
        return RpcError(
            HEADER_MISMATCH, "mcp-method header does not match the request body's method"
        )
    name_key = NAME_BEARING.get(method) if isinstance(method, str) else None
    if name_key is not None and isinstance(params, dict):
        value = params.get(name_key)
        if value is not None and headers.get("mcp-name") != value:
            return RpcError(
                HEADER_MISMATCH,
                f"mcp-name header does not match the request body's {name_key!r} parameter",
            )
    if not isinstance(version, str):
        return RpcError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    return unsupported_version(version)


def unsupported_version(requested: str) -> RpcError | None:
    if requested in MODERN_VERSIONS:
        return None
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(MODERN_VERSIONS), "requested": requested},
    )


# Asks the client something (roots/list) and returns its result; raises when it cannot.
Ask = Callable[[str, "dict[str, Any] | None"], Awaitable[dict[str, Any]]]


class NoBackChannel(Exception):
    """The client cannot be asked anything on this request (the modern era)."""


async def _no_back_channel(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    raise NoBackChannel(f"{method}: the client cannot be asked anything on this protocol")


def _no_notify(message: dict[str, Any]) -> None:
    pass


@dataclass
class Exchange:
    """One request as a handler sees it: its HTTP headers and query, the client, and
    how to ask the client something while it runs: ``ask`` on the session's own stream
    (roots/list), ``ask_here`` and ``notify`` on this request's stream (a question about
    this call, its progress), where a client looks for them while it waits."""

    headers: Mapping[str, str]
    query: Mapping[str, str]
    version: str
    client_name: str | None = None
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    ask: Ask = _no_back_channel
    peer_pid: int | None = None  # the sending process, when the kernel says (Unix socket)
    ask_here: Ask = _no_back_channel
    notify: Callable[[dict[str, Any]], None] = _no_notify
    progress_token: str | int | None = None  # the request's _meta.progressToken
    # The modern era's second round of a call (SEP-2322): the client's answers to the
    # questions the first round's input_required result carried, and its request state.
    input_responses: Mapping[str, Any] = field(default_factory=dict)
    request_state: str | None = None

    def can_elicit(self) -> bool:
        """The client shows a form-mode ``elicitation/create`` to its user: on this request's
        stream (the handshake era), or in an input_required round (the modern era)."""
        caps = self.client_capabilities.get("elicitation")
        form = isinstance(caps, dict) and (not caps or isinstance(caps.get("form"), dict))
        return form and (self.ask_here is not _no_back_channel or self.modern)

    @property
    def modern(self) -> bool:
        return self.version in MODERN_VERSIONS


class Tools(Protocol):
    """What the service's MCP server provides (server.McpApp)."""

    name: str
    version: str
    instructions: str

    async def list_tools(self, exchange: Exchange) -> list[dict[str, Any]]: ...

    async def call_tool(
        self, exchange: Exchange, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]: ...


CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}


async def answer(
    tools: Tools, method: str, params: Mapping[str, Any] | None, exchange: Exchange
) -> dict[str, Any]:
    """The result of one request (raises ``RpcError``), shaped for the exchange's era."""
    modern = exchange.version in MODERN_VERSIONS
    params = params or {}
    result: dict[str, Any]
    if method == "initialize" and not modern:
        result = {
            "capabilities": CAPABILITIES,
            "instructions": tools.instructions,
            "protocolVersion": negotiate(params.get("protocolVersion")),
            "serverInfo": {"name": tools.name, "version": tools.version},
        }
    elif method == "server/discover" and modern:
        result = {
            "cacheScope": "private",
            "capabilities": CAPABILITIES,
            "instructions": tools.instructions,
            "supportedVersions": list(MODERN_VERSIONS),
            "ttlMs": 0,
        }
    elif method == "ping" and not modern:  # the modern era has no ping
        result = {}
    elif method == "tools/list":
        result = {"tools": await tools.list_tools(exchange)}
        if modern:
            result.update(cacheScope="private", ttlMs=0)
    elif method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise RpcError(
                INVALID_PARAMS,
                "Invalid request parameters",
                "tools/call takes a string name and an object of arguments",
            )
        result = await tools.call_tool(exchange, name, dict(arguments or {}))
    else:
        raise RpcError(METHOD_NOT_FOUND, "Method not found", shown(method))
    if modern:
        result.setdefault("resultType", "complete")  # a tool's may be "input_required"
        result["_meta"] = {META_SERVER_INFO: {"name": tools.name, "version": tools.version}}
    return result


SHOWN_METHOD = 100


def shown(method: str) -> str:
    """A client-chosen method name as echoed or logged: its first ``SHOWN_METHOD``
    characters (a megabyte-long name would otherwise be copied into answer and log)."""
    return method if len(method) <= SHOWN_METHOD else method[:SHOWN_METHOD] + "…"


async def reply(tools: Tools, message: Mapping[str, Any], exchange: Exchange) -> dict[str, Any]:
    """The JSON-RPC reply to one request (a result or an error, never an exception)."""
    request_id = message["id"]
    try:
        result = await answer(tools, message["method"], message.get("params"), exchange)
    except RpcError as exc:
        return error_message(request_id, exc)
    except Exception:
        # The detail goes to the log, not to the client: it is ours to fix, and an
        # exception's text can carry paths and internals.
        _log.exception("MCP %s failed", shown(message["method"]))
        failed = RpcError(
            INTERNAL_ERROR,
            f"Internal error: browserdeck failed to answer {shown(message['method'])}; this is a "
            f"browserdeck bug, the details are in its log ({paths.log_dir()}); try again, "
            "and report it if it happens again",
        )
        return error_message(request_id, failed)
    return result_message(request_id, result)
