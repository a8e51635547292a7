"""The MCP rendering of a page snapshot: compact by default, folded over the cap.

(The line diff and search over a rendered snapshot: mcpserver/snapshot_search.py.)

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


@dataclass(slots=True)
class Node:
    indent: int
    raw: str
    role: str | None = None
    name: str | None = None  # raw, quotes included
    attrs: list[str] = field(default_factory=list)
    colon: bool = False
    value: str | None = None
    children: list[Node] = field(default_factory=list)
    ref: str | None = None  # the first [ref=...]


def _from_line(line: st.Node) -> Node:
    if not line.role:  # not understood: kept verbatim
        return Node(line.indent, line.raw)
    tail = line.tail
    colon = tail.startswith(":")
    # ' [level=1] [ref=e5]' -> ['level=1', 'ref=e5']: an attr never holds "]" (the
    # parser's pattern), so splitting is the same as a regex per attr, at a fraction.
    attrs = line.attrs[2:-1].split("] [") if line.attrs else []
    return Node(
        line.indent,
        line.raw,
        line.role,
        line.name_raw.strip() or None,
        attrs,
        colon,
        (tail[1:].strip() or None) if colon else None,
        [],
        line.ref,
    )


# Every line of the snapshot in one regex pass (in C): an element line's indent, role,
# name (quotes included), attrs and tail, or (the last alternative) any other line,
# kept verbatim. The element part is the engine's pattern (one pattern for both).
_LINES = re.compile(r"^(" + st.ELEMENT.pattern[1:-1] + r"|.*)$", re.MULTILINE)


def parse(text: str) -> list[Node]:
    """The snapshot as a forest; unparseable lines become leaf nodes kept verbatim."""
    if "- '" in text:  # YAML-quoted keys (rare): the engine's full parser reads them
        return _tree([_from_line(line) for line in st.parse(text) if line.raw.strip()])
    # This runs on every snapshot an agent takes, thousands of lines each: the regex
    # splits every line at once, the loop only builds the nodes.
    nodes: list[Node] = []
    append = nodes.append
    for raw, indent, role, name_raw, attrs, tail in _LINES.findall(text):
        if not role:
            if raw.strip():  # not understood: kept verbatim
                append(Node(len(raw) - len(raw.lstrip(" ")), raw))
            continue
        ref = None
        if attrs:
            at = attrs.find(" [ref=")
            if at >= 0:
                ref = attrs[at + 6 : attrs.index("]", at)] or None
        append(
            Node(
                len(indent),
                raw,
                role,
                name_raw[1:] or None,  # ' "Save"' -> '"Save"'
                attrs[2:-1].split("] [") if attrs else [],
                bool(tail),  # the pattern's tail always starts with ":"
                (tail[1:].strip() or None) if tail else None,
                [],
                ref,
            )
        )
    return _tree(nodes)


def _tree(nodes: list[Node]) -> list[Node]:
    """Nodes in document order -> roots, each line under the nearest shallower one."""
    roots: list[Node] = []
    stack: list[Node] = []
    for node in nodes:
        indent = node.indent
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def _is_actionable(node: Node) -> bool:
    return node.role in INTERACTIVE_ROLES or "cursor=pointer" in node.attrs


def _render_key(node: Node, attrs: list[str], *, quote: bool = True) -> str:
    assert node.role is not None
    key = node.role
    if node.name is not None:
        key += " " + node.name
    for attr in attrs:
        key += f" [{attr}]"
    # Keep the YAML valid when the key itself holds ': ' (the engine quoted it the same way).
    if quote and (": " in key or key.endswith(":")):
        key = "'" + key.replace("'", "''") + "'"
    return key


# Text-only lines are written as JSON strings (``- "Some text"``): shorter than
# ``- paragraph: Some text`` on text-heavy pages, and page text can never pass for an
# element line (it always starts with a quote).
TEXT_ROLES = frozenset({"paragraph", "text"})
# A row or list item whose content is one level of leaves is written on one line:
# ``- row: "Order 1" | "37.00" | button "Edit" [ref=e20] button "Delete" [ref=e21]``.
INLINE_ROLES = frozenset({"row", "listitem"})
CELL_ROLES = frozenset({"cell", "gridcell", "columnheader", "rowheader"})
# Fold labels: what the folded siblings are called in "rows 4–197: 194 more like the above".
_FOLD_NOUN = {
    "row": "rows",
    "listitem": "items",
    "article": "articles",
    "option": "options",
    "paragraph": "paragraphs",
    "text": "paragraphs",
}


@dataclass
class Fold:
    """How repeated siblings are folded when a snapshot is over the cap (docs/mcp.md)."""

    head: int = 3  # shown before a fold
    tail: int = 2  # shown after it
    min_run: int = 8  # shorter runs of look-alike siblings are shown whole


def _kept_attrs(node: Node) -> list[str]:
    attrs = node.attrs
    if not attrs:
        return []  # a new list: callers append to it
    actionable = _is_actionable(node)
    wrapper = node.role in WRAPPER_ROLES
    if not actionable and not wrapper:  # the common case, on every cell and text line
        return [a for a in attrs if not a.startswith("ref=") and a != "cursor=pointer"]
    return [
        a
        for a in node.attrs
        if a != "cursor=pointer"
        and (actionable or not a.startswith("ref="))
        # Focus on a wrapper means "nothing focused" (the body); keeping it would also
        # re-indent the whole tree whenever focus moves, and spoil every diff.
        and not (wrapper and a == "active")
    ]


def _children_and_url(node: Node, attrs: list[str]) -> list[Node]:
    """The children to render; a link whose only child is its /url gets it as an attr."""
    children = node.children
    if (
        len(children) == 1
        and children[0].role == "/url"
        and children[0].value is not None
        and node.value is None
    ):
        attrs.append("url=" + children[0].value.strip('"'))
        return []
    return children


def _text_value(value: str) -> str:
    """A YAML scalar as Playwright wrote it -> one JSON string."""
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value  # already a JSON-compatible double-quoted scalar
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        value = value[1:-1].replace("''", "'")
    return json.dumps(value, ensure_ascii=False)


def _text_only(node: Node, attrs: list[str]) -> bool:
    return (
        node.role in TEXT_ROLES
        and node.name is None
        and not attrs
        and node.value is not None
        and not node.children
    )


def _piece(node: Node) -> str | None:
    """A leaf as one inline piece (no "- "), or None when it is not a plain leaf."""
    if node.role is None or node.role.startswith("/"):
        return None
    attrs = _kept_attrs(node)
    children = _children_and_url(node, attrs)
    if children:
        return None
    if _text_only(node, attrs):
        assert node.value is not None
        return _text_value(node.value)
    if node.role in CELL_ROLES and not attrs:
        if node.value is not None:
            return _text_value(node.value)
        return node.name or '""'
    if node.value is not None:
        return None
    return _render_key(node, attrs, quote=False)


def _inline(node: Node) -> str | None:
    """A row or list item on one line, or None when its content is not flat enough."""
    if node.role not in INLINE_ROLES or node.value is not None or not node.children:
        return None
    parts: list[str] = []
    for child in node.children:
        if child.role in CELL_ROLES and child.children and node.role == "row":
            if child.name is not None or _kept_attrs(child) or child.value is not None:
                return None
            inner = [_piece(c) for c in child.children]
            if any(p is None for p in inner):
                return None
            parts.append(" ".join(p for p in inner if p))
            continue
        piece = _piece(child)
        if piece is None:
            return None
        parts.append(piece)
    return (" | " if node.role == "row" else " ").join(parts)


def _shape(node: Node, depth: int = 0) -> str:
    """Roles of a subtree (names left out): what "looks alike" means for folding."""
    if node.role is None:
        return "?"
    if node.role == "paragraph":
        return "paragraph"  # prose is alike whatever links it holds
    kids = [c for c in node.children if not (c.role or "").startswith("/")]
    if not kids or depth >= 4:
        return node.role
    return node.role + "(" + ",".join(_shape(c, depth + 1) for c in kids) + ")"


def _controls(node: Node, out: list[tuple[str, str]]) -> list[tuple[str, str]]:
    if node.role is not None and _is_actionable(node):
        out.append((node.role, node.name or ""))
    for child in node.children:
        _controls(child, out)
    return out


def _plan(children: list[Node], fold: Fold) -> list[tuple[int, int] | int]:
    """Sibling indexes to show, and (first, last) ranges to fold, in order.

    A run of look-alike siblings (same roles all the way down) folds to its first and
    last few. A folded one is shown anyway when it has a control the shown ones lack,
    where the control is a kind, not data: its name takes few values along the run
    ("Edit"/"Refund" stay, "Item 37" is data).
    """
    plan: list[tuple[int, int] | int] = []
    shapes = [
        _shape(c) if c.role is not None and (c.children or c.role in TEXT_ROLES) else None
        for c in children
    ]
    i = 0
    while i < len(children):
        j = i + 1
        while j < len(children) and shapes[i] is not None and shapes[j] == shapes[i]:
            j += 1
        if j - i < fold.min_run:
            plan.extend(range(i, j))
            i = j
            continue
        controls = [_controls(children[k], []) for k in range(i, j)]
        width = min(len(c) for c in controls)
        kinds = {
            pos for pos in range(width) if len({c[pos] for c in controls}) <= max(3, (j - i) // 10)
        }
        shown = set(range(i, i + fold.head)) | set(range(j - fold.tail, j))
        seen = {c[pos] for k in shown for c in [controls[k - i]] for pos in kinds}
        for k in range(i + fold.head, j - fold.tail):
            mine = {controls[k - i][pos] for pos in kinds}
            if not mine <= seen:
                shown.add(k)
                seen |= mine
        start = None
        for k in range(i, j + 1):
            if k == j or k in shown:
                if start is not None:  # a hidden stretch ends: one fold (one item: shown)
                    plan.extend([(start, k - 1)] if k - start > 1 else range(start, k))
                    start = None
                if k < j:
                    plan.append(k)
            elif start is None:
                start = k
        i = j
    return plan


def _fold_line(pad: str, container: Node | None, items: list[Node], a: int, b: int) -> str:
    role = items[a].role or ""
    noun = _FOLD_NOUN.get(role) or (
        "cards" if any(c.role == "heading" for c in items[a].children) else "items"
    )
    count = b - a + 1
    ref = container.ref if container is not None else None
    how = (
        f'browser_snapshot {{"ref": "{ref}", "range": "{a + 1}-{b + 1}"}} or browser_find'
        if ref
        else "browser_find with a word of one of them"
    )
    return f"{pad}- … {noun} {a + 1}–{b + 1}: {count} more like the above (to see them: {how})"


def _compact(
    nodes: list[Node],
    depth: int,
    out: list[str],
    fold: Fold | None = None,
    container: Node | None = None,
) -> None:
    pad = "  " * depth
    plan: list[tuple[int, int] | int] = (
        _plan(nodes, fold) if fold is not None and len(nodes) >= fold.min_run else []
    )
    order = plan or list(range(len(nodes)))
    for step in order:
        if isinstance(step, tuple):
            out.append(_fold_line(pad, container, nodes, *step))
            continue
        node = nodes[step]
        if node.role is None:  # not understood: keep as it was, re-indented
            out.append(pad + node.raw.lstrip(" "))
            _compact(node.children, depth + 1, out, fold, node)
            continue
        if node.role.startswith("/"):  # /url, /placeholder ... of a node we keep
            out.append(pad + node.raw.lstrip(" "))
            continue
        attrs = _kept_attrs(node)
        children = node.children
        droppable = node.role in WRAPPER_ROLES or (
            node.role in TEXT_ROLES and node.value is None
        )  # a paragraph of text and links: its pieces are lines of their own
        if droppable and node.name is None and not attrs and node.value is None and children:
            _compact(children, depth, out, fold, node)
            continue
        if _text_only(node, attrs):
            assert node.value is not None
            out.append(pad + "- " + _text_value(node.value))
            continue
        inline = _inline(node)
        if inline is not None:
            out.append(pad + "- " + _render_key(node, attrs) + ": " + inline)
            continue
        children = _children_and_url(node, attrs)
        line = pad + "- " + _render_key(node, attrs)
        if node.value is not None:
            line += ": " + node.value
        elif children:
            line += ":"
        out.append(line)
        _compact(children, depth + 1, out, fold, node)


def compact(text: str, roots: list[Node] | None = None) -> str:
    """The compact form: refs only on actionable elements, no wrapper noise (see module doc).

    ``roots``: ``parse(text)`` when the caller has it already (it folds the same text next).
    """
    out: list[str] = []
    _compact(parse(text) if roots is None else roots, 0, out)
    return "\n".join(out)


# Gentlest first. The last ones keep only the page's outline (headings, landmarks,
# distinct controls) and a fold line where look-alike siblings were: long prose needs it.
FOLDS = (
    Fold(),
    Fold(head=2, tail=1, min_run=5),
    Fold(head=1, tail=1, min_run=3),
    Fold(head=1, tail=0, min_run=2),
    Fold(head=0, tail=0, min_run=2),
)


def folded(
    text: str, max_chars: int, *, roots: list[Node] | None = None, size: int | None = None
) -> str | None:
    """The compact form with repeated siblings folded to fit ``max_chars`` (None: it fits).

    Tries gentler folds first; returns the smallest fold when none fits (the caller's cap
    cuts what is still over). ``roots`` and ``size`` (the unfolded compact form's length),
    when the caller has them from ``compact``, save parsing and compacting it again.
    """
    if roots is None:
        roots = parse(text)
    if size is None:
        out: list[str] = []
        _compact(roots, 0, out)
        size = len("\n".join(out))
    if size <= max_chars:
        return None
    best = ""
    for fold in FOLDS:
        out = []
        _compact(roots, 0, out, fold)
        best = "\n".join(out)
        if len(best) <= max_chars:
            break
    return best


def find_ref(nodes: list[Node], ref: str) -> Node | None:
    for node in nodes:
        if node.ref == ref:
            return node
        found = find_ref(node.children, ref)
        if found is not None:
            return found
    return None


def expand(text: str, ref: str, first: int, last: int) -> tuple[str, int] | None:
    """Children ``first``..``last`` (1-based) of the element ``ref``, compact, never folded.

    Returns the text and how many children the element has, or None when the snapshot has
    no such ref.
    """
    node = find_ref(parse(text), ref)
    if node is None:
        return None
    out: list[str] = []
    _compact(node.children[first - 1 : last], 0, out)
    return "\n".join(out), len(node.children)


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
