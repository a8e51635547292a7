"""``json.loads``/``json.dumps`` by json's C parts (``_json``), without importing json.

The json package imports ``re`` (and with it ``enum``): about a quarter of a CLI call
over the API socket (issue 14; cli_fast.py is the other half). Its C scanner and string
encoder are what json itself uses; anything they do not take (no ``_json``, leading
whitespace, a value json.dumps would write in its own way) goes to json itself.
``--json`` output is ``json.dumps(indent=2)``, which only json writes.
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


def dumps(value: Any) -> str:
    """``json.dumps(value)`` for what a request carries (str keys, plain values)."""
    if isinstance(value, str) and _scan is not None:
        return str(_quote(value))
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
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict) and all(type(k) is str for k in value):
        return "{" + ", ".join(f"{dumps(k)}: {dumps(v)}" for k, v in value.items()) + "}"
    import json

    return json.dumps(value)
