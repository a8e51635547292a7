"""The MCP rendering of a page snapshot: compact by default, a line diff on request, search.

The engine hands out Playwright's ai snapshot (``- button "Save" [ref=e5]``), where
every node that can receive pointer events carries a ref. For an LLM most of those
refs are noise: nobody clicks a ``rowgroup``. The compact form keeps a ref on every
element an agent can act on (interactive roles, and anything with
``[cursor=pointer]``), drops it elsewhere, folds a link's ``/url`` child into the
link's line, and removes unnamed wrapper nodes (``generic``, ``rowgroup``) by
promoting their children. A dropped ref still works: ``full`` shows them all.

Lines the parser does not understand are kept verbatim, so the compaction can lose
decoration but never an element.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field

from browserdeck.engine import snapshot_text as st

# One parser and one "interactive" role set for the API and MCP: the engine's
# (browserdeck.engine.snapshot_text). This module only builds the tree MCP renders.
INTERACTIVE_ROLES = st.INTERACTIVE_ROLES
# Unnamed nodes of these roles only group their children: drop the line, keep the children.
WRAPPER_ROLES = frozenset({"generic", "rowgroup", "none", "presentation"})

_REF = re.compile(r"\[ref=([^\]\s]+)\]")
_ATTR = re.compile(r"\[([^\]]*)\]")


@dataclass
class Node:
    indent: int
    raw: str
    role: str | None = None
    name: str | None = None  # raw, quotes included
    attrs: list[str] = field(default_factory=list)
    colon: bool = False
    value: str | None = None
    children: list[Node] = field(default_factory=list)

    @property
    def ref(self) -> str | None:
        for attr in self.attrs:
            if attr.startswith("ref="):
                return attr[4:]
        return None


def _from_line(line: st.Node) -> Node:
    if not line.role:  # not understood: kept verbatim
        return Node(indent=line.indent, raw=line.raw)
    tail = line.tail
    return Node(
        indent=line.indent,
        raw=line.raw,
        role=line.role,
        name=line.name_raw.strip() or None,
        attrs=_ATTR.findall(line.attrs),
        colon=tail.startswith(":"),
        value=tail[1:].strip() or None if tail.startswith(":") else None,
    )


def parse_line(line: str) -> Node | None:
    """One snapshot line as a Node, or None when it is not a ``- key[: value]`` entry."""
    parsed = st.parse(line)
    return _from_line(parsed[0]) if parsed and parsed[0].role else None


def parse(text: str) -> list[Node]:
    """The snapshot as a forest; unparseable lines become leaf nodes kept verbatim."""
    roots: list[Node] = []
    stack: list[Node] = []
    for line in st.parse(text):
        if not line.raw.strip():
            continue
        node = _from_line(line)
        while stack and stack[-1].indent >= node.indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def _is_actionable(node: Node) -> bool:
    return node.role in INTERACTIVE_ROLES or "cursor=pointer" in node.attrs


def _render_key(node: Node, attrs: list[str]) -> str:
    assert node.role is not None
    key = node.role
    if node.name is not None:
        key += " " + node.name
    for attr in attrs:
        key += f" [{attr}]"
    # Keep the YAML valid when the key itself holds ': ' (the engine quoted it the same way).
    if ": " in key or key.endswith(":"):
        key = "'" + key.replace("'", "''") + "'"
    return key


def _compact(nodes: list[Node], depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for node in nodes:
        if node.role is None:  # not understood: keep as it was, re-indented
            out.append(pad + node.raw.lstrip(" "))
            _compact(node.children, depth + 1, out)
            continue
        if node.role.startswith("/"):  # /url, /placeholder ... of a node we keep
            out.append(pad + node.raw.lstrip(" "))
            continue
        actionable = _is_actionable(node)
        wrapper = node.role in WRAPPER_ROLES
        attrs = [
            a
            for a in node.attrs
            if a != "cursor=pointer"
            and (actionable or not a.startswith("ref="))
            # Focus on a wrapper means "nothing focused" (the body); keeping it would also
            # re-indent the whole tree whenever focus moves, and spoil every diff.
            and not (wrapper and a == "active")
        ]
        children = node.children
        if wrapper and node.name is None and not attrs and node.value is None and children:
            _compact(children, depth, out)
            continue
        # A link whose only child is its /url: one line instead of two.
        if (
            len(children) == 1
            and children[0].role == "/url"
            and children[0].value is not None
            and node.value is None
        ):
            attrs.append("url=" + children[0].value.strip('"'))
            children = []
        line = pad + "- " + _render_key(node, attrs)
        if node.value is not None:
            line += ": " + node.value
        elif children:
            line += ":"
        out.append(line)
        _compact(children, depth + 1, out)


def compact(text: str) -> str:
    """The compact form: refs only on actionable elements, no wrapper noise (see module doc)."""
    out: list[str] = []
    _compact(parse(text), 0, out)
    return "\n".join(out)


def refs_in(text: str) -> set[str]:
    return set(_REF.findall(text))


def actionable_refs(text: str) -> set[str]:
    """Refs of the elements an agent can act on (what the compact form must keep)."""
    found: set[str] = set()

    def walk(nodes: list[Node]) -> None:
        for node in nodes:
            if node.role is not None and _is_actionable(node) and node.ref:
                found.add(node.ref)
            walk(node.children)

    walk(parse(text))
    return found


def diff(previous: str, current: str) -> str | None:
    """A line diff of two snapshots (None when identical).

    Refs stay the same across snapshots while an element keeps its role and name,
    so the diff shows what really changed on the page.
    """
    if previous == current:
        return None
    lines = list(
        difflib.unified_diff(previous.splitlines(), current.splitlines(), n=1, lineterm="")
    )
    return "\n".join(line for line in lines[2:])  # without the ---/+++ header


def find(text: str, query: str, *, regex: bool = False, limit: int = 30) -> tuple[list[str], int]:
    """Lines matching ``query`` (substring, case-insensitive; or a regex), each with its parent.

    Returns the rendered matches and the total number of matching lines.
    """
    pattern = _user_regex(query) if regex else None
    needle = query.lower()

    def match(line: str) -> bool:
        return bool(pattern.search(line)) if pattern is not None else needle in line.lower()

    lines = text.splitlines()
    results: list[str] = []
    total = 0
    for i, line in enumerate(lines):
        if not match(line):
            continue
        total += 1
        if len(results) >= limit:
            continue
        indent = len(line) - len(line.lstrip(" "))
        parent = next(
            (
                lines[j].strip()
                for j in range(i - 1, -1, -1)
                if len(lines[j]) - len(lines[j].lstrip(" ")) < indent
            ),
            None,
        )
        results.append(line.strip() + (f"   (in: {parent})" if parent else ""))
    return results, total


def _user_regex(query: str) -> re.Pattern[str]:
    """``/pattern/flags`` or a bare pattern (case-sensitive), as Playwright MCP's find takes it."""
    flags = 0
    m = re.fullmatch(r"/(.*)/([imsx]*)", query, flags=re.S)
    if m:
        query = m.group(1)
        for f in m.group(2):
            flags |= {"i": re.I, "m": re.M, "s": re.S, "x": re.X}[f]
    return re.compile(query, flags)


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
