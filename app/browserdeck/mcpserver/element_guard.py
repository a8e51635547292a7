"""MCP's side of the element-description check (browserdeck/policy/element_check.py).

The click-like tools (click, hover, type, select, drag) call ``check_element`` with the
``element`` description Playwright MCP's clients send beside the ref. It reads what this
session last saw of the tab (the snapshot text it was answered, page text quoted:
engine/pagetext.py, so ``[ref=…]`` there is only ever a real ref) and refuses the call
when the description names another element, saying which element the ref is. Without a
snapshot of the tab in this session, or a ref it did not show, there is nothing to compare
with, and the call goes ahead as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from browserdeck.engine import pagetext
from browserdeck.engine import snapshot_text as st
from browserdeck.engine.errors import NEW_SNAPSHOT
from browserdeck.engine.refs import normalize
from browserdeck.errors import Conflict
from browserdeck.policy.element_check import Element, mismatch

__all__ = ["check_element"]


def _read(raw: str) -> tuple[int, Element | None]:
    """A snapshot line's indent and its element (None for a line with no role)."""
    m = st.ELEMENT.match(raw)
    if m is None:
        return len(raw) - len(raw.lstrip(" ")), None
    name = m.group(3) or ""
    if name:
        try:
            name = str(json.loads(name[1:]))
        except ValueError:
            name = name[2:-1]
    attrs = m.group(4) or ""
    at = attrs.find("[ref=")
    ref = attrs[at + 5 : attrs.find("]", at)] if at >= 0 else ""
    return len(m.group(1)), Element(ref, m.group(2), name)


def _elements(lines: list[str]) -> Iterator[Element]:
    for raw in lines:
        if "[ref=" in raw:
            element = _read(raw)[1]
            if element is not None and element.ref:
                yield element


def check_element(seen: str | None, ref: str, description: object) -> None:
    """Refuse (409 ``element_mismatch``) when ``description`` names another element of
    the page ``seen`` showed than ``ref``; see the module docstring."""
    if not seen or not isinstance(description, str) or not description.strip():
        return
    try:
        wanted = normalize(ref)
    except Exception:  # the engine says what is wrong with the ref itself
        return
    lines = seen.split("\n")
    mark = f"[ref={wanted}]"
    at = next((i for i, raw in enumerate(lines) if mark in raw), None)
    if at is None:
        return
    indent, target = _read(lines[at])
    if target is None or target.ref != wanted:
        return
    ancestors: list[str] = []
    for raw in reversed(lines[:at]):
        level, element = _read(raw)
        if level < indent:
            indent = level
            if element is not None and element.name:
                ancestors.append(element.name)
    other = mismatch(description, target, ancestors, _elements(lines))
    if other is None:
        return
    raise Conflict(
        f"ref {wanted} is {_show(target)}, which does not fit the element you described, "
        f"{pagetext.quote(description)}; that description names {_show(other)} "
        f"[ref={other.ref}]. Nothing was done",
        hint="check which ref you meant in your last snapshot (its names are the page's "
        "text, quoted), or " + NEW_SNAPSHOT,
        code="element_mismatch",
    )


def _show(element: Element) -> str:
    return f"{element.role} {pagetext.quote(element.name)}" if element.name else element.role
