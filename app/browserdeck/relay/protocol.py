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
Relay → extension notices: ``welcome`` (profile, color), ``ping``, ``pong``.
Extension → relay notices: ``hello`` (tabs, userAgent, version, browserContextId),
``tabShared`` (tab), ``tabUpdated`` (tabId, url?, title?), ``tabUnshared`` (tabId,
reason), ``debuggerDetached`` (tabId, reason), ``ping``, ``pong``; CDP events as
``{"event", "tabId", "sessionId"?}`` + payload.
"""

from __future__ import annotations

import json
from typing import Any

PROTOCOL_VERSION = 1
SUBPROTOCOL = "browserdeck-relay"
# The browser WebSocket API cannot set headers, so the extension offers its token as a
# second subprotocol "bdtoken.<token>" (base64url is a valid subprotocol token). The
# relay never selects it, so it is not echoed back.
TOKEN_SUBPROTOCOL_PREFIX = "bdtoken."

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


def split_frame(text: str) -> tuple[dict[str, Any], str | None]:
    """Split an extension frame into its parsed header and its raw payload JSON (or None)."""
    newline = text.find("\n")
    if newline < 0:
        header = json.loads(text)
        body = None
    else:
        header = json.loads(text[:newline])
        body = text[newline + 1 :]
    if not isinstance(header, dict):
        raise ValueError("frame header is not a JSON object")
    return header, body


def frame(header: dict[str, Any], payload: Any = None, *, raw: str | None = None) -> str:
    """Build a frame: the header, then the payload (already-encoded ``raw`` wins)."""
    head = json.dumps(header, separators=(",", ":"))
    if raw is not None:
        return f"{head}\n{raw}"
    if payload is None:
        return head
    return f"{head}\n{json.dumps(payload, separators=(',', ':'))}"


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def event_message(method: str, params_json: str, session_id: str | None) -> str:
    """A CDP event for a client. ``method`` and ``session_id`` come from Chrome or from us
    (hex ids, dotted names), never from a client, so they need no escaping."""
    if session_id:
        return f'{{"method":"{method}","params":{params_json},"sessionId":"{session_id}"}}'
    return f'{{"method":"{method}","params":{params_json}}}'


def result_message(msg_id: Any, result_json: str, session_id: str | None) -> str:
    mid = dumps(msg_id)
    if session_id:
        return f'{{"id":{mid},"result":{result_json},"sessionId":"{session_id}"}}'
    return f'{{"id":{mid},"result":{result_json}}}'


def error_message(
    msg_id: Any, message: str, session_id: str | None, code: int = SERVER_ERROR
) -> str:
    out: dict[str, Any] = {"id": msg_id, "error": {"code": code, "message": message}}
    if session_id:
        out["sessionId"] = session_id
    return dumps(out)


class CdpError(Exception):
    """A CDP-level failure to report to the client that sent the command."""

    def __init__(self, message: str, code: int = SERVER_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
