"""Wire format between the relay and the extension, and small CDP helpers.

Every message on ``/extension`` is one WebSocket text frame holding a JSON *header*
and, for CDP payloads, a newline and the payload JSON::

    {"id": 7, "method": "cdp", "tabId": 3, "cdpMethod": "Runtime.evaluate"}\\n{"expression": "1+1"}
    {"id": 7}\\n{"result": {"type": "number", "value": 2}}
    {"event": "Page.loadEventFired", "tabId": 3}\\n{"timestamp": 12.5}

``JSON.stringify`` never emits a raw newline, so the first ``\\n`` always ends the
header. The point is speed: the relay reads the small header and splices the
payload into the client's message without decoding and re-encoding it, which
matters for screenshots and snapshots that are megabytes of JSON.

Relay → extension requests (``id`` set; the extension replies with the same id):
``cdp`` (tabId, sessionId?, cdpMethod + payload), ``attach`` / ``detach`` (tabId),
``createTab`` (url, background, newWindow), ``closeTab`` / ``activateTab`` (tabId),
``getWindow`` (tabId), ``setWindowBounds`` (windowId, bounds).
Before any of these, the auth exchange described at AUTH_NONCE_BYTES below.
Relay → extension notices: ``welcome`` (profile, color), ``ping``, ``pong``.
Extension → relay notices: ``hello`` (tabs, userAgent, version, browserContextId),
``tabShared`` (tab), ``tabUpdated`` (tabId, url?, title?), ``tabUnshared`` (tabId,
reason), ``debuggerDetached`` (tabId, reason), ``ping``, ``pong``; CDP events as
``{"event", "tabId", "sessionId"?}`` + payload.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import orjson

PROTOCOL_VERSION = 3
SUBPROTOCOL = "browserdeck-relay"
# Mutual proof before anything else on /extension (whatever listened on the
# relay port used to receive the token). The token itself never goes on the wire:
#   extension -> relay  {"method":"auth","params":{"nonce":NE,"protocol":3,"port":P,"profile":F}}
#   relay -> extension  {"method":"authChallenge","params":{"nonce":NR,"proof":P_relay}}
#   extension -> relay  {"method":"authProof","params":{"proof":P_ext}}   then "hello"
# with P_x = hex(HMAC-SHA256(token, "browserdeck-<x>\n" + P + "\n" + F + "\n" + NE + "\n" + NR)),
# x = relay or extension. The extension checks P_relay before it sends its own proof or any
# tab data, so a squatter on the port learns only a random nonce; the relay checks P_ext
# before it accepts anything. The labels stop one side's proof from being replayed as the
# other's.
#
# P is the port the extension dialled and F the profile it was paired for (the pairing
# link's ``profile``); each side puts in what *it* knows (the relay: its own port and
# profile), never what the other side said. Every extension profile's relay has the same
# token, so without them another local user on the port of a profile that is not running
# could pipe the extension's WebSocket to a running relay: both proofs checked, and the
# program in the middle read the shared tabs and sent the extension commands (docs/security.md).
# Bound to the port, a proof made by the relay on another port is refused by the
# extension; bound to the profile, a relay of another profile on the same port (the
# configuration changed) is refused too, and the user is told to pair again.
AUTH_NONCE_BYTES = 32
AUTH_TIMEOUT = 5.0


def auth_proof(
    token: str, side: str, port: int, profile: str, extension_nonce: str, relay_nonce: str
) -> str:
    """The HMAC one side sends to prove it knows ``token`` (``side``: relay|extension),
    bound to the relay's ``port`` and ``profile``."""
    message = f"browserdeck-{side}\n{port}\n{profile}\n{extension_nonce}\n{relay_nonce}"
    return hmac.new(token.encode(), message.encode(), hashlib.sha256).hexdigest()


def proof_ok(
    token: str,
    side: str,
    port: int,
    profile: str,
    extension_nonce: str,
    relay_nonce: str,
    proof: Any,
) -> bool:
    if not isinstance(proof, str) or not proof.isascii():
        return False
    expected = auth_proof(token, side, port, profile, extension_nonce, relay_nonce)
    return hmac.compare_digest(expected.encode(), proof.encode())


NO_EXTENSION_MESSAGE = (
    "no browser is connected to the relay: connect the browserdeck extension "
    "(click its icon in Chrome)"
)

# Pages chrome.debugger cannot attach to, or that belong to Chrome or other extensions.
RESTRICTED_PREFIXES = (
    "chrome://",
    "chrome-untrusted://",
    "chrome-search://",
    "chrome-extension://",
    "devtools://",
    "edge://",
    "brave://",
    "opera://",
    "vivaldi://",
    "view-source:",
    "https://chromewebstore.google.com/",
    "https://chrome.google.com/webstore",
)

# CDP error codes as Chrome uses them.
SERVER_ERROR = -32000
SESSION_NOT_FOUND = -32001
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600


def is_restricted_url(url: str) -> bool:
    return url.startswith(RESTRICTED_PREFIXES)


# JSON on the hot path goes through orjson: every relayed command is parsed once and its
# params, the extension frame's header and the reply's id encoded once, and the standard
# library took ~40 us of that per round trip (docs/extension.md, Performance). orjson
# refuses a few things the standard library accepts (integers beyond 64 bits, lone
# surrogates, NaN); those fall back to it, so the relay accepts what it did before.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    """Parse JSON (raises ValueError when it is not JSON)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def dumps(value: Any) -> str:
    """Compact JSON."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return _ENCODER.encode(value)


def split_frame(text: str) -> tuple[dict[str, Any], str | None]:
    """Split an extension frame into its parsed header and its raw payload JSON (or None)."""
    newline = text.find("\n")
    if newline < 0:
        header = loads(text)
        body = None
    else:
        header = loads(text[:newline])
        body = text[newline + 1 :]
    if not isinstance(header, dict):
        raise ValueError("frame header is not a JSON object")
    return header, body


def frame(header: dict[str, Any], payload: Any = None, *, raw: str | None = None) -> str:
    """Build a frame: the header, then the payload (already-encoded ``raw`` wins)."""
    head = dumps(header)
    if raw is not None:
        return f"{head}\n{raw}"
    if payload is None:
        return head
    return f"{head}\n{dumps(payload)}"


def event_message(method: str, params_json: str, session_id: str | None) -> str:
    """A CDP event for a client. ``method`` and ``session_id`` come from Chrome or from us
    (hex ids, dotted names), never from a client, so they need no escaping."""
    if session_id:
        return f'{{"method":"{method}","params":{params_json},"sessionId":"{session_id}"}}'
    return f'{{"method":"{method}","params":{params_json}}}'


def result_message(msg_id: Any, result_json: str, session_id: str | None) -> str:
    mid = str(msg_id) if type(msg_id) is int else dumps(msg_id)
    if session_id:
        return f'{{"id":{mid},"result":{result_json},"sessionId":"{session_id}"}}'
    return f'{{"id":{mid},"result":{result_json}}}'


def error_message(
    msg_id: Any,
    message: str,
    session_id: str | None,
    code: int = SERVER_ERROR,
    data: str | None = None,
) -> str:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    out: dict[str, Any] = {"id": msg_id, "error": error}
    if session_id:
        out["sessionId"] = session_id
    return dumps(out)


class CdpError(Exception):
    """A CDP-level failure to report to the client that sent the command."""

    def __init__(self, message: str, code: int = SERVER_ERROR, data: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        # Chrome's own message goes in ``message`` (clients match on it); why, and what to
        # do, in ``data``, where CDP puts details.
        self.data = data
