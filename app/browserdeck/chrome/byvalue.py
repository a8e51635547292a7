"""Playwright's by-value results, fetched from Chromium as one string.

Playwright evaluates through its utility script (``Runtime.callFunctionOn`` with
``returnByValue``), and Chromium hands a big result back object by object: ~24 ms of the
aria snapshot of a 2,000-element table, against ~1 ms as one JSON string
(docs/performance.md, "The result's way back"). So, on the engine's own connection
(chrome/gateway.py), the gateway asks for the result through ``JSON.stringify`` and
pastes the JSON text where Chromium would have put the value: the same reply, value for
value for what Playwright serialises.

Only in an isolated world (known from ``Runtime.executionContextCreated``; a page reaches
neither its ``JSON`` nor its prototypes), and only if what comes back is exactly one JSON
value (RFC 8259), so another CDP client that changes ``JSON.stringify`` there can forge a
value but never the reply around it. Chromium's own error replies pass as they came. A
call is recognised by its head and tail in the bytes (Playwright 1.65's key order),
events only when they start with a method this follows; anything else is forwarded.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from browserdeck.chrome.inbound import error_reply

__all__ = ["Courier"]

# Playwright's call (playwright-core 1.65, crExecutionContext.evaluateWithArguments), and
# the same call answering with a string. Not async: a throw stays a throw ("Uncaught"),
# not a rejection; only a promise (an async evaluation) is stringified once it settles.
_EVALUATE = "(utilityScript, ...args) => utilityScript.evaluate(...args)"
_AS_STRING = (
    "(utilityScript, ...args) => (r => r instanceof Promise ? r.then(v => JSON.stringify(v))"
    " : JSON.stringify(r))(utilityScript.evaluate(...args))"
)
_FIELD = b'"functionDeclaration":' + json.dumps(_EVALUATE).encode()
_FIELD_AS_STRING = b'"functionDeclaration":' + json.dumps(_AS_STRING).encode()
_CALL_HEAD = re.compile(
    rb'\{"id":(\d+),"method":"Runtime\.callFunctionOn","params":\{'
    + re.escape(_FIELD)
    + rb',"objectId":"-?\d+\.(\d+)\.\d+",'
)
_CALL_TAIL = re.compile(
    rb'\],"returnByValue":true,"awaitPromise":true(?:,"userGesture":(?:true|false))?\},'
    rb'"sessionId":"([^"\\]*)"\}$'
)
_WORLD_EVENTS = (
    b'{"method":"Runtime.executionContextCreated"',
    b'{"method":"Runtime.executionContextDestroyed"',
    b'{"method":"Runtime.executionContextsCleared"',
    b'{"method":"Target.detachedFromTarget"',
)
# Chromium puts a reply's id first and its sessionId last.
_REPLY_ID = re.compile(rb'\{"id":(\d+),')
_REPLY_SESSION = re.compile(rb',"sessionId":"([^"\\]*)"\}$')
_TAIL_WINDOW = 200
# Isolated worlds remembered per session; past this a session's are forgotten (its
# calls are then forwarded as they are: slower, never wrong).
MAX_WORLDS = 1000


class Courier:
    """One CDP client's calls and replies through the gateway: ``inbound`` for each
    message it sends (with its sessionId), ``outbound`` for each it is sent. ``root``
    is its root session, which the pipe leaves off what it delivers (chrome/pipe.py)."""

    def __init__(self, root: str = "") -> None:
        self.root = root
        self._isolated: dict[str, set[int]] = {}  # sessionId -> isolated context ids
        self._asked: set[tuple[str, int]] = set()  # (sessionId, id) asked as a string

    def inbound(self, data: bytes) -> bytes:
        if not self._isolated:
            return data
        head = _CALL_HEAD.match(data)
        if head is None:
            return data
        tail = _CALL_TAIL.search(data, max(0, len(data) - _TAIL_WINDOW))
        if tail is None:
            return data
        session = tail.group(1).decode("ascii", "replace")
        if int(head.group(2)) not in self._isolated.get(session, ()):
            return data  # the page's own world, or one this did not see made
        self._asked.add((session, int(head.group(1))))
        return data.replace(_FIELD, _FIELD_AS_STRING, 1)

    def outbound(self, data: bytes) -> bytes:
        if data.startswith(b'{"id":'):  # a reply: no event to read in it
            return self._reply(data) if self._asked else data
        if data.startswith(_WORLD_EVENTS):
            self._note_world(data)
        return data

    def _reply(self, data: bytes) -> bytes:
        call = _REPLY_ID.match(data)
        if call is None:
            return data
        tail = _REPLY_SESSION.search(data, max(0, len(data) - _TAIL_WINDOW))
        session = tail.group(1).decode("ascii", "replace") if tail is not None else self.root
        key = (session, int(call.group(1)))
        if key not in self._asked:
            return data
        self._asked.discard(key)
        try:
            message = _loads(data)
            if "error" in message:
                return data  # Chromium's own answer (a context destroyed meanwhile, ...)
            result = message["result"]
            value = result["result"]
            if "exceptionDetails" in result or value.get("type") != "string":
                return data  # it threw: the same error as asked the usual way
            raw = _one_json_value(value["value"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raw = None
        if raw is None:
            return error_reply(
                key[1],
                key[0] if tail is not None else None,  # the root's answers name no session
                "browserdeck: the evaluation's result was not one JSON value "
                "(another CDP client may have changed JSON.stringify in that world)",
            )
        reply = b'{"id":%d,"result":{"result":%s}' % (key[1], _remote_object(raw))
        if tail is None:
            return reply + b"}"
        return reply + b',"sessionId":"%s"}' % tail.group(1)

    def _note_world(self, data: bytes) -> None:
        try:
            event = json.loads(data)
            session, method = event.get("sessionId", self.root), event["method"]
            params = event["params"]
            if method == "Runtime.executionContextsCleared":  # a new document
                self._isolated.pop(session, None)
            elif method == "Runtime.executionContextDestroyed":
                self._isolated.get(session, set()).discard(params["executionContextId"])
            elif method == "Target.detachedFromTarget":  # its calls get no answer now
                gone = params["sessionId"]
                self._isolated.pop(gone, None)
                self._asked = {key for key in self._asked if key[0] != gone}
            elif method == "Runtime.executionContextCreated":
                context = params["context"]
                if context["auxData"]["type"] == "isolated" and isinstance(context["id"], int):
                    worlds = self._isolated.setdefault(session, set())
                    if len(worlds) >= MAX_WORLDS:
                        worlds.clear()
                    worlds.add(context["id"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return


def _loads(data: bytes) -> Any:
    """The reply: orjson reads its 200 KB string a quarter of a millisecond sooner than
    json; json takes what orjson refuses (a lone surrogate's escape)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


# What a JSON text can start with (JSON.stringify writes no whitespace around it).
_JSON_STARTS = frozenset(b'{["tfn-0123456789')


def _one_json_value(text: Any) -> bytes | None:
    """``text`` as UTF-8 if it is exactly one JSON value by RFC 8259, else None: no
    NaN or Infinity, no whitespace around it, no lone surrogate (JSON.stringify escapes
    one; only a forger sends it raw), nothing after it."""
    if not isinstance(text, str) or not text:
        return None
    try:
        raw = text.encode("utf-8")  # strict: a raw lone surrogate is refused here
    except UnicodeEncodeError:
        return None
    if raw[0] not in _JSON_STARTS or raw[-1:].isspace():
        return None
    try:
        json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return None
    return raw


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _remote_object(raw: bytes) -> bytes:
    """The by-value RemoteObject Chromium gives for the JSON value ``raw``."""
    first = raw[:1]
    if first in (b"{", b"["):  # an array too: by value, Chromium gives it no subtype
        return b'{"type":"object","value":%s}' % raw
    if first == b'"':
        return b'{"type":"string","value":%s}' % raw
    if first in (b"t", b"f"):
        return b'{"type":"boolean","value":%s}' % raw
    if first == b"n":
        return b'{"type":"object","subtype":"null","value":null}'
    # JSON.stringify writes a finite number as String(number) does: Chromium's description.
    return b'{"type":"number","value":%s,"description":"%s"}' % (raw, raw)
