"""``json.loads``/``json.dumps`` by json's C parts (``_json``), without importing json.

The json package imports ``re`` (and with it ``enum``): about a quarter of a CLI call
over the API socket (cli/fast.py is the other half). Its C scanner and string
encoder are what json itself uses; anything they do not take (no ``_json``, leading
whitespace, a value json.dumps would write in its own way) goes to json itself.
``--json`` output (``indent=2``) and evaluate results (``ensure_ascii=False``) included.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Context:
    # What json.JSONDecoder gives its C scanner: json.loads' defaults.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity


try:
    from _json import encode_basestring as _quote_utf8
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner

    _scan: Any = _make_scanner(_Context())  # type: ignore[arg-type]  # duck-typed, as json's
except ImportError:  # an interpreter without json's C parts: json itself
    _scan = None


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if _scan is None or text[:1].isspace():
        import json

        return json.loads(text)
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        value, end = None, -1
    if end < 0 or text[end:].strip(" \t\n\r"):
        import json

        return json.loads(text)  # raises json's own error, with its position
    return value


class _Unusual(Exception):
    """A value json.dumps writes in a way of its own (NaN, non-str keys, subclasses)."""


def dumps(value: Any, *, indent: int | None = None, ensure_ascii: bool = True) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)``."""
    if _scan is not None:
        try:
            return _write(value, indent, 0, _quote if ensure_ascii else _quote_utf8)
        except _Unusual:
            pass
    import json

    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)


def _write(value: Any, indent: int | None, level: int, quote: Any) -> str:
    if type(value) is str:
        return str(quote(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float and value == value and value not in (float("inf"), float("-inf")):
        return float.__repr__(value)
    if type(value) in (list, tuple):
        if not value:
            return "[]"
        items = [_write(v, indent, level + 1, quote) for v in value]
        opening, between, closing = _layout(indent, level)
        return "[" + opening + between.join(items) + closing + "]"
    if type(value) is dict and all(type(k) is str for k in value):
        if not value:
            return "{}"
        items = [f"{quote(k)}: {_write(v, indent, level + 1, quote)}" for k, v in value.items()]
        opening, between, closing = _layout(indent, level)
        return "{" + opening + between.join(items) + closing + "}"
    raise _Unusual


def _layout(indent: int | None, level: int) -> tuple[str, str, str]:
    """What json puts after the opening bracket, between items and before the closing one."""
    if indent is None:
        return "", ", ", ""
    inner = "\n" + " " * (indent * (level + 1))
    return inner, "," + inner, "\n" + " " * (indent * level)


# Each UTF-16 surrogate to U+FFFD (str.translate: no `re`, which the CLI's path avoids).
LONE_SURROGATES = dict.fromkeys(range(0xD800, 0xE000), 0xFFFD)


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, each lone surrogate as U+FFFD: the one encode every byte that
    leaves for a client or a file goes through (the API's JSON, its errors included, MCP's
    messages, run_code's output), so page text that slipped past ``results.well_formed`` (an error
    message quoting it) is cleaned there rather than failing the answer."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.translate(LONE_SURROGATES).encode()
