"""The snapshot's lines as MCP's compact form reads them, each read once per text.

(The tree and the compact form built from them: mcpserver/snapshot.py.)

Everything the compact form needs of a line depends on that line alone except its
children: whether it is actionable, which attrs it keeps, its key, what it becomes as a
leaf or as an inline piece. So each distinct line is read once into a ``Line`` tuple and
kept by its text: the next snapshot of the same page (after a click, most of its 2,000
lines are the same strings, refs included) looks its lines up instead of running the
regex and rebuilding them (docs/performance.md, "Where a big snapshot's time goes"). A line's
reading is a function of its text only, so a remembered one can never be stale; only
the tree knows about the page around it, and it is a function of the whole text: reused
for an identical one (snapshot.py, ``compact_form``), and for a text changed in a few
lines at the same indents made from the last one's (snapshot_tree.py).
"""

from __future__ import annotations

import json
import re

from browserdeck.engine import snapshot_text as st
from browserdeck.engine.actionable import actionable_attrs

INTERACTIVE_ROLES = st.INTERACTIVE_ROLES
# Unnamed nodes of these roles only group their children: drop the line, keep the children.
WRAPPER_ROLES = frozenset({"generic", "rowgroup", "none", "presentation"})
# Text-only lines are written as JSON strings (``- "Some text"``): shorter than
# ``- paragraph: Some text`` on text-heavy pages, and page text can never pass for an
# element line (it always starts with a quote).
TEXT_ROLES = frozenset({"paragraph", "text"})
CELL_ROLES = frozenset({"cell", "gridcell", "columnheader", "rowheader"})

# (indent, raw, role, name, attrs, value, ref, actionable, kept, key, leaf, piece):
# role None for a line nobody can parse (kept verbatim); name with its quotes; attrs as
# written (``("level=1", "ref=e5")``); kept: the attrs the compact form shows; key: the
# line's key as the compact form writes it; leaf: its compact line (after the indent)
# when it has no children; piece: what it is inside an inline row when it has none.
Line = tuple[
    int,
    str,
    str | None,
    str | None,
    tuple[str, ...],
    str | None,
    str | None,
    bool,
    tuple[str, ...],
    str,
    str,
    str | None,
]


UNSET: object = object()  # Node.inlined before it is worked out


class Node:
    """One line of a snapshot in its tree. Never changed once built (nor its children's
    list), so a tree is reused for an identical text, and a changed text's tree shares
    the nodes of the lines that did not change (snapshot_tree.py)."""

    __slots__ = (
        "actionable",
        "attrs",
        "children",
        "indent",
        "index",
        "inlined",
        "kept",
        "key",
        "leaf",
        "name",
        "piece",
        "raw",
        "ref",
        "role",
        "value",
    )

    def __init__(self, line: Line, children: list[Node], index: int = -1) -> None:
        (
            self.indent,
            self.raw,
            self.role,
            self.name,
            self.attrs,
            self.value,
            self.ref,
            self.actionable,
            self.kept,
            self.key,
            self.leaf,
            self.piece,
        ) = line
        self.children = children
        self.index = index  # its line in the text (-1: not known, see snapshot_tree.py)
        # Its line as an inline row (snapshot.py, ``_inline``), once worked out: a function
        # of the node and its children, none of which changes, so a node shared with the
        # next text's tree (snapshot_tree.py) is not worked out again.
        self.inlined: object = UNSET  # str, None, or UNSET

    def __repr__(self) -> str:
        return f"Node({self.raw!r}, {len(self.children)} children)"


def render_key(role: str, name: str | None, attrs: tuple[str, ...], quote: bool = True) -> str:
    key = role
    if name is not None:
        key += " " + name
    for attr in attrs:
        key += f" [{attr}]"
    # Keep the YAML valid when the key itself holds ': ' (the engine quoted it the same way).
    if quote and (": " in key or key.endswith(":")):
        key = "'" + key.replace("'", "''") + "'"
    return key


def text_value(value: str) -> str:
    """A YAML scalar as Playwright wrote it -> one JSON string."""
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value  # already a JSON-compatible double-quoted scalar
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        value = value[1:-1].replace("''", "'")
    return json.dumps(value, ensure_ascii=False)


def _kept(role: str, attrs: tuple[str, ...], actionable: bool) -> tuple[str, ...]:
    wrapper = role in WRAPPER_ROLES
    if not actionable and not wrapper:  # the common case, on every cell and text line
        if len(attrs) == 1 and attrs[0].startswith("ref="):
            return ()  # the most common of all: a ref alone
        return tuple([a for a in attrs if not a.startswith("ref=") and a != "cursor=pointer"])
    return tuple(
        [
            a
            for a in attrs
            if a != "cursor=pointer"
            and (actionable or not a.startswith("ref="))
            # Focus on a wrapper means "nothing focused" (the body); keeping it would also
            # re-indent the whole tree whenever focus moves, and spoil every diff.
            and not (wrapper and a == "active")
        ]
    )


def verbatim(raw: str) -> Line:
    """A line nobody can parse: kept as it is."""
    text = raw.lstrip(" ")
    return (len(raw) - len(text), raw, None, None, (), None, None, False, (), "", text, None)


def element(
    indent: int, raw: str, role: str, name: str | None, attrs: tuple[str, ...], value: str | None
) -> Line:
    """An element line (or a prop such as ``/url``) and what the compact form makes of it."""
    ref = None
    if attrs:
        for attr in attrs:
            if attr.startswith("ref="):
                ref = attr[4:] or None
                break
    if role[0] == "/":  # /url, /placeholder ...: shown as written, under their node
        text = raw.lstrip(" ")
        return (indent, raw, role, name, attrs, value, ref, False, (), "", text, None)
    actionable = actionable_attrs(role, attrs)  # the one rule (engine/actionable.py)
    kept = _kept(role, attrs, actionable) if attrs else ()
    bare = render_key(role, name, kept, quote=False)
    # Keep the YAML valid when the key itself holds ': ' (the engine quoted it the same way).
    key = "'" + bare.replace("'", "''") + "'" if ": " in bare or bare.endswith(":") else bare
    # As a leaf: a text-only line becomes a JSON string; anything else its key and value.
    text_only = role in TEXT_ROLES and name is None and not kept and value is not None
    if text_only:
        assert value is not None
        leaf = "- " + text_value(value)
    else:
        leaf = "- " + key + (": " + value if value is not None else "")
    # As a piece of an inline row: the same, shorter still for a plain cell.
    piece: str | None
    if text_only:
        piece = leaf[2:]
    elif role in CELL_ROLES and not kept:
        piece = text_value(value) if value is not None else (name or '""')
    elif value is not None:
        piece = None
    else:
        piece = bare
    return (indent, raw, role, name, attrs, value, ref, actionable, kept, key, leaf, piece)


# Every line of the snapshot in one regex pass (in C): an element line's indent, role,
# name (quotes included), attrs and tail, or (the last alternative) any other line,
# kept verbatim. The element part is the engine's pattern (one pattern for both).
_LINES = re.compile(r"^(" + st.ELEMENT.pattern[1:-1] + r"|.*)$", re.MULTILINE)

_Match = tuple[str, str, str, str, str, str]


def _read(found: _Match) -> Line | None:
    """One line of the text (one match of ``_LINES``)."""
    raw, indent, role, name_raw, attrs, tail = found
    if not role:
        return verbatim(raw) if raw.strip() else None  # blank lines are dropped
    return element(
        len(indent),
        raw,
        role,
        name_raw[1:] or None,  # ' "Save"' -> '"Save"'
        # ' [level=1] [ref=e5]' -> ('level=1', 'ref=e5'): an attr never holds "]" (the
        # pattern's), so splitting is the same as a regex per attr, at a fraction.
        tuple(attrs[2:-1].split("] [")) if attrs else (),
        # the pattern's tail always starts with ":"
        (tail[1:].strip() or None) if tail else None,
    )


# Lines read so far, by their text (st.LineReader: bounded, never stale).
READER: st.LineReader[Line | None] = st.LineReader(_LINES, _read)


def read_lines(text: str, lines: list[str] | None = None) -> list[Line | None]:
    """Every line of ``text`` (no YAML-quoted keys) read, None for blank ones; ``lines``:
    its lines when the caller has split it already."""
    return READER.lines(text, lines)


def read_line(raw: str) -> Line | None:
    """One line (no YAML-quoted key), as ``read_lines`` reads it."""
    return READER.line(raw)
