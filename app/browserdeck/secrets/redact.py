"""Secrets out of everything that leaves the service: the one redaction, for every output.

Every value of the vault (secrets/vault.py), and each one-time code typed in the last ten
minutes, is replaced by its placeholder, ``<secret>NAME</secret>`` or
``<totp>NAME</totp>``, wherever it appears: as it is, JSON-escaped, URL-encoded
(``%21`` and ``+`` forms) and HTML-escaped. Snapshots show ``••••`` instead
(``masked``), as for password inputs.

Whatever writes text or bytes an agent, a log or a file may see calls one of these:

* ``text(s)`` and ``data(b)``: a string, bytes (a HAR, a trace's JSON lines);
* ``value(obj)``: JSON-like data in place (dicts, lists, pydantic models, dataclasses; ``base64``
  keys, image data, are left alone);
* ``file(path)``: a file rewritten in place, each member of a zip (a Playwright trace)
  on its own;
* ``masked(s)``: snapshot text, values shown as bullets.

Each costs one ``stat`` of the vault file when the vault is empty. What a redaction by
value cannot find: a value the page transformed (hashed, base64, reversed) and pixels;
docs/secrets.md says what covers those.
"""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re
import threading
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, quote_plus

from browserdeck.secrets import vault as vaults

if TYPE_CHECKING:
    from collections.abc import Awaitable
    from pathlib import Path

T = TypeVar("T")
MASK = "••••••••"
SKIP_KEYS = frozenset({"base64"})


def placeholder(name: str, kind: str = "secret") -> str:
    return f"<{kind}>{name}</{kind}>"


def forms(value: str) -> set[str]:
    """The spellings of ``value`` an output may carry."""
    found = {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        html.escape(value),
    }
    return {f for f in found if f}


class Redactor:
    """Finds the given values (each in all its ``forms``) in text or bytes."""

    def __init__(self, known: list[tuple[str, str, str]]) -> None:
        self.by_form: dict[str, str] = {}
        for value, name, kind in known:
            for form in forms(value):
                self.by_form.setdefault(form, placeholder(name, kind))
        # Longest first: a value that contains another is replaced whole.
        ordered = sorted(self.by_form, key=len, reverse=True)
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        by_bytes = {f.encode(): p.encode() for f, p in self.by_form.items()}
        self._by_bytes = by_bytes
        self._bytes = (
            re.compile(b"|".join(re.escape(f) for f in sorted(by_bytes, key=len, reverse=True)))
            if by_bytes
            else None
        )

    def __bool__(self) -> bool:
        return self._text is not None

    def text(self, s: str) -> str:
        if self._text is None or not s:
            return s
        return self._text.sub(lambda m: self.by_form[m.group(0)], s)

    def masked(self, s: str, mask: str = MASK) -> str:
        if self._text is None or not s:
            return s
        out = self._text.sub(mask, s)
        # A snapshot quotes a value that reads as a number ("123456"): the quotes would
        # tell that the secret was one.
        return out.replace(f'"{mask}"', mask) if out is not s else s

    def data(self, b: bytes) -> bytes:
        if self._bytes is None or not b:
            return b
        return self._bytes.sub(lambda m: self._by_bytes[m.group(0)], b)

    def value(self, obj: T) -> T:
        """``obj`` with every string in it redacted, in place where it is mutable."""
        if self._text is None:
            return obj
        return self._walk(obj)  # type: ignore[no-any-return]

    def _walk(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            for key in list(obj):
                if key in SKIP_KEYS:
                    continue
                item = obj[key]
                new_key = self.text(key) if isinstance(key, str) else key
                if new_key != key:
                    del obj[key]
                obj[new_key] = self._walk(item)
            return obj
        if isinstance(obj, list):
            for index, item in enumerate(obj):
                obj[index] = self._walk(item)
            return obj
        if isinstance(obj, tuple):
            return tuple(self._walk(item) for item in obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # a tabs.Tab
            for f in dataclasses.fields(obj):
                item = getattr(obj, f.name)
                new = self._walk(item)
                if new is not item:
                    object.__setattr__(obj, f.name, new)
            return obj
        fields = getattr(type(obj), "__pydantic_fields__", None)  # a model (pydantic unimported)
        if fields is not None and hasattr(obj, "model_extra"):
            for name in fields:
                if name in SKIP_KEYS:
                    continue
                item = getattr(obj, name, None)
                if item is not None:
                    new = self._walk(item)
                    if new is not item:
                        object.__setattr__(obj, name, new)
            if obj.model_extra:
                self._walk(obj.model_extra)
            return obj
        return obj


_cache: dict[int, tuple[int, Redactor]] = {}
_cache_lock = threading.Lock()


def current(vault: vaults.Vault | None = None) -> Redactor:
    """The redactor of ``vault`` (default: this data folder's), rebuilt when it changed."""
    v = vault if vault is not None else vaults.shared()
    generation = v.generation()
    with _cache_lock:
        cached = _cache.get(id(v))
        if cached is not None and cached[0] == generation:
            return cached[1]
    redactor = Redactor(v.known_values() if v else [])
    with _cache_lock:
        _cache[id(v)] = (generation, redactor)
    return redactor


def text(s: str) -> str:
    return current().text(s)


def data(b: bytes) -> bytes:
    return current().data(b)


def value(obj: T) -> T:
    return current().value(obj)


def masked(s: str) -> str:
    return current().masked(s)


async def awaited(work: Awaitable[T]) -> T:
    """What ``work`` answers, redacted (``value``)."""
    return value(await work)


def file(path: Path) -> bool:
    """Rewrite ``path`` with every secret redacted (each member of a zip on its own);
    True if anything changed."""
    import zipfile

    redactor = current()
    if not redactor:
        return False
    raw = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(raw)):
        out = io.BytesIO()
        changed = False
        with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(
            out, "w", zipfile.ZIP_DEFLATED
        ) as dst:
            for info in src.infolist():
                member = src.read(info)
                clean = redactor.data(member)
                changed = changed or clean != member
                dst.writestr(info, clean)
        new = out.getvalue() if changed else raw
    else:
        new = redactor.data(raw)
    if new == raw:
        return False
    from browserdeck.util.files import write_atomic

    write_atomic(path, new, mode=path.stat().st_mode & 0o777)
    return True
