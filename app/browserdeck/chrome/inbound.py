"""What the managed profile's CDP endpoint (chrome/gateway.py) does with each message
a client sends: ``prepare_inbound``.

A message without a top-level ``sessionId`` belongs to the client's root session and gets
it added. One policy (chrome/policy.py) holds for every client and every command, wrapped
ones included. Everything it does not police is forwarded as the client sent it, without
parsing: a message is parsed in full only when it may be policed, which is read from its
head (``{"id":N,"method":"X"``, as Playwright, Puppeteer and most clients write it) when
``X`` is not a policed method and nothing else in the message could change what Chrome
reads (no second ``"method"`` key, no ``\\u`` escape that could spell one, no NUL byte
that would end the message early on the pipe). Any other message is parsed: one that is
not a single JSON object (CBOR, which Chrome would also accept, spells names in ways a
byte search cannot see) or has a key twice is refused.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from browserdeck.chrome.policy import POLICED_METHODS, Rules, load_message, refusal

__all__ = ["Rules", "error_reply", "prepare_inbound"]

# The head of a message as clients write it: the id, then the method.
_HEAD = re.compile(rb'\{"id":-?[0-9]+,"method":"([A-Za-z][A-Za-z0-9_.]*)"')
# A top-level "sessionId" as the last key (where Playwright and Puppeteer put it): a
# nested one is followed by at least two closing braces.
_CLIENT_SESSION_TAIL = re.compile(rb',\s*"sessionId"\s*:\s*"([^"\\]*)"\s*\}\s*$')


def _inject_session(data: bytes, session: str) -> bytes | None:
    """``data`` (a JSON object without a top-level sessionId) with ``session`` added."""
    body = data.rstrip()
    if not body.endswith(b"}"):
        return None
    body = body[:-1].rstrip()
    separator = b"" if body.endswith(b"{") else b","
    return body + separator + b'"sessionId":"' + session.encode("ascii") + b'"}'


def error_reply(call_id: Any, session: str | None, message: str, code: int = -32000) -> bytes:
    """A CDP error answer to call ``call_id`` (on ``session``, unless the client's root)."""
    reply: dict[str, Any] = {"id": call_id if isinstance(call_id, int) else 0}
    reply["error"] = {"code": code, "message": message}
    if session is not None:
        reply["sessionId"] = session
    return json.dumps(reply).encode()


def _plainly_unpoliced(data: bytes) -> bool:
    """The message's method, read from its head, is not policed, and nothing else in it
    can make Chrome read another method (see the module docstring)."""
    head = _HEAD.match(data)
    return (
        head is not None
        and head.group(1).decode() not in POLICED_METHODS
        and data.find(b'"method"', head.end()) < 0
        and b"\\u" not in data
        # A NUL ends the message early on the browser's pipe, and what follows it is read
        # as a message of its own, CBOR included (where a method has no quotes to find).
        and b"\0" not in data
    )


def prepare_inbound(data: bytes, root: str, *, rules: Rules) -> tuple[bytes | None, bytes | None]:
    """What to do with one message from a client: ``(to_forward, reply_to_client)``.

    A message without a top-level ``sessionId`` belongs to the client's root session and
    gets it added (the client thinks it talks to the browser or page directly). A
    message the policy refuses is answered with a CDP error saying why.
    """
    if _plainly_unpoliced(data):
        if b'"sessionId"' not in data:
            injected = _inject_session(data, root)
            if injected is not None:
                return injected, None
        else:
            tail = _CLIENT_SESSION_TAIL.search(data, max(0, len(data) - 200))
            if tail is not None and tail.group(1):
                return data, None
    return _inspect(data, root, rules)


def _inspect(data: bytes, root: str, rules: Rules) -> tuple[bytes | None, bytes | None]:
    try:
        message = load_message(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # Answer with the message's id when it has one, so the client's call ends.
        call_id: Any = 0
        with contextlib.suppress(ValueError, UnicodeDecodeError, AttributeError, RecursionError):
            call_id = json.loads(data).get("id", 0)
        return None, error_reply(call_id, None, f"not a valid CDP message: {exc}", code=-32700)
    if not isinstance(message, dict):
        return None, error_reply(0, None, "a CDP message is a JSON object", code=-32600)
    call_id = message.get("id")
    session = message.get("sessionId")
    if session is not None and (not isinstance(session, str) or not session):
        return None, error_reply(call_id, None, "sessionId must be a non-empty string")
    why = refusal(message, rules)
    if why is not None:
        return None, error_reply(call_id, session, f"browserdeck: {why}")
    if session is None:
        injected = _inject_session(data, root)
        if injected is None:
            return None, error_reply(call_id, None, "a CDP message is a JSON object")
        return injected, None
    return data, None
