"""What the managed profile's CDP endpoint (chrome/gateway.py) does with each message
a client sends: ``prepare_inbound``.

A message without a top-level ``sessionId`` belongs to the client's root session and gets
it added. The URL policy (browserdeck.urls) holds for every client: ``Page.navigate`` and
``Target.createTarget`` to a ``file:`` URL are refused while ``allowFileUrls`` is off.
Everything else is forwarded as the client sent it, without parsing: only the policed
method names are looked for in the raw bytes (and ``\\u`` escapes, which could spell
them), and a top-level ``sessionId`` at the end.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from browserdeck import urls

__all__ = ["error_reply", "prepare_inbound"]

# Any message that could be a policed call contains one of these as raw bytes: a method
# name can only be written differently with \u escapes, which send it to the full parse.
_POLICED_WORDS = (b"Page.navigate", b"Target.createTarget", b"\\u")
_POLICED_METHODS = frozenset({"Page.navigate", "Target.createTarget"})
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


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key appears twice in one object")
    return dict(pairs)


def prepare_inbound(
    data: bytes, root: str, *, allow_file_urls: bool
) -> tuple[bytes | None, bytes | None]:
    """What to do with one message from a client: ``(to_forward, reply_to_client)``.

    A message without a top-level ``sessionId`` belongs to the client's root session and
    gets it added (the client thinks it talks to the browser or page directly). Only a
    message that may be ``Page.navigate``/``Target.createTarget``, or whose session cannot
    be seen at the end, is parsed; a ``file:`` URL there is refused while
    ``allow_file_urls`` is off, with a CDP error reply naming the setting.
    """
    if not any(word in data for word in _POLICED_WORDS):
        if b'"sessionId"' not in data:
            injected = _inject_session(data, root)
            if injected is not None:
                return injected, None
        else:
            tail = _CLIENT_SESSION_TAIL.search(data, max(0, len(data) - 200))
            if tail is not None and tail.group(1):
                return data, None
    return _inspect(data, root, allow_file_urls=allow_file_urls)


def _inspect(data: bytes, root: str, *, allow_file_urls: bool) -> tuple[bytes | None, bytes | None]:
    try:
        message = json.loads(data, object_pairs_hook=_refuse_duplicates)
    except (ValueError, UnicodeDecodeError) as exc:
        # Answer with the message's id when it has one, so the client's call ends.
        call_id: Any = 0
        with contextlib.suppress(ValueError, UnicodeDecodeError, AttributeError):
            call_id = json.loads(data).get("id", 0)
        return None, error_reply(call_id, None, f"not a valid CDP message: {exc}", code=-32700)
    if not isinstance(message, dict):
        return None, error_reply(0, None, "a CDP message is a JSON object", code=-32600)
    call_id = message.get("id")
    session = message.get("sessionId")
    if session is not None and (not isinstance(session, str) or not session):
        return None, error_reply(call_id, None, "sessionId must be a non-empty string")
    method = message.get("method")
    params = message.get("params")
    if method in _POLICED_METHODS and isinstance(params, dict):
        url = params.get("url")
        if isinstance(url, str) and not allow_file_urls and urls.is_file_url(url):
            refusal = urls.file_url_forbidden(url)
            return None, error_reply(
                call_id, session, f"browserdeck: {refusal.message}; {refusal.hint}"
            )
    if session is None:
        injected = _inject_session(data, root)
        if injected is None:
            return None, error_reply(call_id, None, "a CDP message is a JSON object")
        return injected, None
    return data, None
