"""Page text as our lines show it: a JSON string whose body holds no quote, bracket,
line break or bidi control, so a page's title, name or URL can never read as a ref
(``[ref=e5]``) or a new line of ours.

The one quoting of page text: engine/pagetext.py quotes snapshots, fences blocks and
re-exports these; the CLI quotes titles and URLs with them. No ``re``, ``json`` or
``typing`` here: the CLI imports this on every call (docs/performance.md, the CLI's
start-up).
"""

from __future__ import annotations

from browserdeck.util import fastjson

# Inside page text, as JSON escapes: what could close a quoted name or open an attribute
# (ASCII and full-width), break a line for a reader (JSON leaves these unescaped), or
# reorder what a person sees (bidi controls).
RISKY_CHARS = (
    '"[]\uff02\uff3b\uff3d\u0085\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069'
)
_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in RISKY_CHARS}
_URL_UNSAFE = ' "[]'


def quote(text: str) -> str:
    """``text`` as a JSON string whose body holds no quote, bracket or line break."""
    return quote_json(fastjson.dumps(text, ensure_ascii=False))


def quote_json(literal: str) -> str:
    """A JSON string literal (quotes included) with its risky characters escaped."""
    body = literal[1:-1]
    # In a JSON string body a quote only ever appears escaped, as \" (a preceding \\ is an
    # escaped backslash), so the escape is rewritten as a whole.
    safe = body.replace('\\"', "\\u0022").translate(_ESCAPES)
    return literal if safe == body else '"' + safe + '"'


def title(text: str | None) -> str:
    """A page's title as an answer line shows it: always quoted (``(untitled)`` if none)."""
    return quote(text) if text else "(untitled)"


def url(text: str) -> str:
    """A URL as an answer line shows it: as it is when it is plain printable ASCII without
    space, quote or bracket (what Chrome reports nearly always), else quoted."""
    plain = text.isascii() and text.isprintable() and not any(c in text for c in _URL_UNSAFE)
    return text if text and plain else quote(text)
