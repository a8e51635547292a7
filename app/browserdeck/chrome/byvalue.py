"""Playwright's by-value results, fetched from Chromium as one string (issue 14).

Playwright's driver evaluates in a page through its utility script: a
``Runtime.callFunctionOn`` of ``(utilityScript, ...args) => utilityScript.evaluate(...args)``
with ``returnByValue`` and ``awaitPromise``, whose result is Playwright's own serialised
form of the value (``{o: [{k, v}], id}`` per object, ``{v: "NaN"}`` and the like for what
JSON cannot hold): plain JSON by construction. Chromium's inspector hands such a result
back object by object, and for a big one that is most of the call: the aria snapshot of a
2,000-element table is ~70 ms in the renderer, ~24 of them that conversion, against ~1 ms
for the same value as one JSON string (docs/performance.md, "The result's way back").

So the gateway asks for the string (the same call, its result through ``JSON.stringify``)
and puts the JSON back where Chromium would have put the value: the client gets the
reply it asked for, value for value.

Only where the page cannot change what ``JSON.stringify`` does: in an isolated world (a
page reaches neither its ``JSON`` nor its prototypes, so no ``toJSON`` of the page's
runs). A world is known by ``Runtime.executionContextCreated`` (``auxData.type`` is
``"isolated"``), and the call's world by its ``objectId``, V8's
``<isolate>.<context id>.<object>``. Anything else is forwarded as it was sent.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["Courier"]

# Playwright's call (playwright-core 1.65, crExecutionContext.evaluateWithArguments).
_EVALUATE = "(utilityScript, ...args) => utilityScript.evaluate(...args)"
_AS_STRING = (
    "async (utilityScript, ...args) => JSON.stringify(await utilityScript.evaluate(...args))"
)
_EVALUATE_BYTES = _EVALUATE.encode()
_CREATED = b'"Runtime.executionContextCreated"'
_GONE = (
    b'"Runtime.executionContextDestroyed"',
    b'"Runtime.executionContextsCleared"',
    b'"Target.detachedFromTarget"',
)
_OBJECT_CONTEXT = re.compile(r"^-?\d+\.(\d+)\.\d+$")
# Chromium puts a reply's id first and its sessionId last.
_REPLY_ID = re.compile(rb'^\{"id":(\d+),')
_REPLY_SESSION = re.compile(rb',"sessionId":"([^"\\]*)"\}$')
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
        if _EVALUATE_BYTES not in data or not self._isolated:
            return data
        try:
            message = json.loads(data)
            params = message["params"]
            session, call_id = message["sessionId"], message["id"]
            if (
                message.get("method") != "Runtime.callFunctionOn"
                or params.get("functionDeclaration") != _EVALUATE
                or params.get("returnByValue") is not True
                or params.get("awaitPromise") is not True
                or not isinstance(call_id, int)
                or not self._in_isolated_world(session, params.get("objectId"))
            ):
                return data
        except (ValueError, KeyError, TypeError, AttributeError):
            return data  # not a call this is for: Chromium answers it as it is
        params["functionDeclaration"] = _AS_STRING
        self._asked.add((session, call_id))
        return json.dumps(message, separators=(",", ":")).encode()

    def outbound(self, data: bytes) -> bytes:
        if data.startswith(b'{"id":'):  # a reply: no event to read in it
            return self._reply(data) if self._asked else data
        if _CREATED in data or any(gone in data for gone in _GONE):
            self._note_world(data)
        return data

    def _in_isolated_world(self, session: Any, object_id: Any) -> bool:
        if not isinstance(object_id, str):
            return False
        found = _OBJECT_CONTEXT.match(object_id)
        return found is not None and int(found.group(1)) in self._isolated.get(session, ())

    def _reply(self, data: bytes) -> bytes:
        call = _REPLY_ID.match(data)
        if call is None:
            return data
        tail = _REPLY_SESSION.search(data, max(0, len(data) - 100))
        session = tail.group(1).decode("ascii", "replace") if tail is not None else self.root
        key = (session, int(call.group(1)))
        if key not in self._asked:
            return data
        self._asked.discard(key)
        try:
            result = json.loads(data)["result"]
            value = result["result"]
            if "exceptionDetails" in result or value.get("type") != "string":
                return data  # it threw (the same error as asked the usual way)
            text = value["value"]
        except (ValueError, KeyError, TypeError, AttributeError):
            return data
        reply = b'{"id":%d,"result":{"result":%s}' % (key[1], _remote_object(text))
        if tail is None:
            return reply + b"}"
        return reply + b',"sessionId":"%s"}' % tail.group(1)

    def _note_world(self, data: bytes) -> None:
        try:
            event = json.loads(data)
            session, method = event.get("sessionId", self.root), event["method"]
            if method == "Runtime.executionContextsCleared":  # a new document
                self._isolated.pop(session, None)
                return
            if method == "Runtime.executionContextDestroyed":
                self._isolated.get(session, set()).discard(event["params"]["executionContextId"])
                return
            if method == "Target.detachedFromTarget":  # its calls get no answer now
                gone = event["params"]["sessionId"]
                self._isolated.pop(gone, None)
                self._asked = {key for key in self._asked if key[0] != gone}
                return
            context = event["params"]["context"]
            if context["auxData"]["type"] == "isolated" and isinstance(context["id"], int):
                worlds = self._isolated.setdefault(session, set())
                if len(worlds) >= MAX_WORLDS:
                    worlds.clear()
                worlds.add(context["id"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return


def _remote_object(text: str) -> bytes:
    """The by-value RemoteObject Chromium gives for the JSON value ``text``."""
    raw = text.encode("utf-8", "surrogatepass")
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
