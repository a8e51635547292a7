"""The MCP rendering of a page snapshot: compact by default, folded over the cap.

(The line diff and search over a rendered snapshot: mcpserver/snapshot_search.py.)

The engine hands out Playwright's ai snapshot (``- button "Save" [ref=e5]``), where
every node that can receive pointer events carries a ref. For an LLM most of those
refs are noise: nobody clicks a ``rowgroup``. The compact form keeps a ref on every
element an agent can act on (the one rule of engine/actionable.py: the actionable roles,
a pointer cursor, the marks the engine read from the DOM), drops it elsewhere, folds a link's ``/url`` child into the
link's line, and removes unnamed wrapper nodes (``generic``, ``rowgroup``) by
promoting their children. A dropped ref still works: ``full`` shows them all.

Lines the parser does not understand are kept verbatim, so the compaction can lose
decoration but never an element.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from browserdeck.engine import pagetext
from browserdeck.engine import snapshot_text as st
from browserdeck.mcpserver import snapshot_lines as sl
from browserdeck.mcpserver.snapshot_lines import (
    CELL_ROLES,
    INTERACTIVE_ROLES,
    TEXT_ROLES,
    WRAPPER_ROLES,
    Node,
)
from browserdeck.mcpserver.snapshot_tree import Tree, changed_tree, parse_tree

__all__ = ["INTERACTIVE_ROLES", "WRAPPER_ROLES", "Node", "compact", "folded", "parse"]

_REF = re.compile(r"\[ref=([^\]\s]+)\]")


def parse(text: str) -> list[Node]:
    """The snapshot as a forest; unparseable lines become leaf nodes kept verbatim."""
    return parse_tree(text).roots


def _is_actionable(node: Node) -> bool:
    return node.actionable


# A row or list item whose content is one level of leaves is written on one line:
# ``- row: "Order 1" | "37.00" | button "Edit" [ref=e20] button "Delete" [ref=e21]``.
INLINE_ROLES = frozenset({"row", "listitem"})
HEADER_ROLES = frozenset({"columnheader"})
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
    prose: int | None = None  # a text line longer than this is cut short (characters)


PROSE = 200  # over the cap, a text line keeps this many characters (then "… [+N chars]")
_NEVER = 1 << 30  # a run length no page has: no folding


def _shortened(leaf: str, keep: int) -> str:
    """A text-only line (``- "…"``) cut at a word near ``keep`` characters, saying how
    much is left out; any other line as it is."""
    if not leaf.startswith('- "') or len(leaf) <= keep + 24:
        return leaf
    try:
        text = json.loads(leaf[2:])
    except ValueError:
        return leaf
    if not isinstance(text, str) or len(text) <= keep + 20:
        return leaf
    cut = text.rfind(" ", keep - 40, keep)
    cut = cut if cut > 0 else keep
    # Quoted as page text is (pagetext.quote: its brackets and quotes as escapes), so the
    # one bracketed note in the string is ours.
    shown = pagetext.quote(text[:cut] + "…")
    return f'- {shown[:-1]} [+{len(text) - cut} chars]"'



def _url(node: Node) -> str | None:
    """``url=...`` when the node's only child is its /url (it goes on the node's line)."""
    children = node.children
    if len(children) == 1 and node.value is None:
        child = children[0]
        if child.role == "/url" and child.value is not None:
            return "url=" + child.value.strip('"')
    return None


def _piece(node: Node) -> str | None:
    """A leaf as one inline piece (no "- "), or None when it is not a plain leaf."""
    if not node.children:
        return node.piece  # read with the line (snapshot_lines.py)
    if node.role is None or node.role.startswith("/"):
        return None
    url = _url(node)  # a link with only its /url is still a plain leaf
    if url is None:
        return None
    return sl.render_key(node.role, node.name, (*node.kept, url), quote=False)


def _inline(node: Node) -> str | None:
    """A row or list item on one line, or None when its content is not flat enough.

    Worked out once per node (``Node.inlined``): after an action most rows of a big
    table are the nodes of the last text's tree."""
    got = node.inlined
    if got is sl.UNSET:
        got = node.inlined = _inline_of(node)
    return got  # type: ignore[return-value]


def _inline_of(node: Node) -> str | None:
    if node.role not in INLINE_ROLES or node.value is not None or not node.children:
        return None
    row = node.role == "row"
    parts: list[str] = []
    for child in node.children:
        if row and child.children and child.role in CELL_ROLES:
            if child.name is not None or child.kept or child.value is not None:
                return None
            inner = []
            for c in child.children:
                p = c.piece if not c.children else _piece(c)
                if p is None:
                    return None
                if p:
                    inner.append(p)
            parts.append(" ".join(inner))
            continue
        piece = child.piece if not child.children else _piece(child)
        if piece is None:
            return None
        parts.append(piece)
    return (" | " if row else " ").join(parts)


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


def _heads(node: Node) -> bool:
    return any(c.role in HEADER_ROLES for c in node.children)


def _plan(children: list[Node], fold: Fold) -> list[tuple[int, int] | int]:
    """Sibling indexes to show, and (first, last) ranges to fold, in order.

    A run of look-alike siblings (same roles all the way down) folds to its first and
    last few. A folded one is shown anyway when it has a control the shown ones lack,
    where the control is a kind, not data: its name takes few values along the run
    ("Edit"/"Refund" stay, "Item 37" is data); so is a header row. Every control of a
    folded one is still a ref of the page: the fold line says how to see them.
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
        # A header row never folds: its column headers (sorting, filters) stay in view.
        shown |= {k for k in range(i, j) if _heads(children[k])}
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
    append = out.append
    for step in plan or range(len(nodes)):
        if isinstance(step, tuple):
            append(_fold_line(pad, container, nodes, *step))
            continue
        node = nodes[step]
        children = node.children
        if not children:  # most lines: written as read (snapshot_lines.py)
            if fold is not None and fold.prose is not None:
                append(pad + _shortened(node.leaf, fold.prose))
            else:
                append(pad + node.leaf)
            continue
        role = node.role
        if role is None:  # not understood: keep as it was, re-indented
            append(pad + node.leaf)
            _compact(children, depth + 1, out, fold, node)
            continue
        if role.startswith("/"):  # /url, /placeholder ... of a node we keep
            append(pad + node.leaf)
            continue
        if (
            # a wrapper, or a paragraph of text and links: its pieces are lines of their own
            (role in WRAPPER_ROLES or (role in TEXT_ROLES and node.value is None))
            and node.name is None
            and not node.kept
            and node.value is None
        ):
            _compact(children, depth, out, fold, node)
            continue
        inline = _inline(node)
        if inline is not None:
            append(pad + "- " + node.key + ": " + inline)
            continue
        url = _url(node)
        if url is None:
            line = pad + "- " + node.key
        else:  # a link whose only child is its /url gets it as an attr
            line = pad + "- " + sl.render_key(role, node.name, (*node.kept, url))
            children = []
        if node.value is not None:
            line += ": " + node.value
        elif children:
            line += ":"
        append(line)
        _compact(children, depth + 1, out, fold, node)


def compact(text: str, roots: list[Node] | None = None) -> str:
    """The compact form: refs only on actionable elements, no wrapper noise (see module doc).

    ``roots``: ``parse(text)`` when the caller has it already (it folds the same text next).
    """
    out: list[str] = []
    _compact(parse(text) if roots is None else roots, 0, out)
    return "\n".join(out)


# The last few texts' trees and compact forms, newest last: (text, tree, compact form).
# Both are functions of the text alone and are never changed once built, so the next
# snapshot of a page whose text did not change (an action that changed nothing, a second
# look) is not parsed again; the text is still the one Playwright gave for this snapshot.
# One that changed in a few lines at the same indents (after a click: a status line, the
# focus) gets its tree from the kept one's (``snapshot_tree.changed_tree``). Module-wide like the line
# memory (snapshot_lines.READER) and bounded by count and by size (``st.KEEP_CHARS``, the
# engine's limit for a tab's last build too). A tree takes ~220 bytes
# a line beside its text (tracemalloc), its lines' readings being the line memory's, plus
# its lines and one list of their readings: ~0.8 MB with its compact form for a text
# like the 2,000-element table's 2,021 lines (tracemalloc, line memory warm).
# Readings the line memory has let go of (emptied, or over its bounds) are held by the
# tree: up to ~1 KB a line: 12 MB for four texts at the size limit in lines of ~40
# characters (measured).
_FORMS: list[tuple[str, Tree, str]] = []
FORMS_MAX = 4


def compact_form(text: str) -> tuple[list[Node], str]:
    """``parse(text)`` and ``compact(text, roots)``: remembered for the last few texts."""
    for i, form in enumerate(_FORMS):
        if form[0] == text:  # lengths first, then one memcmp: microseconds
            if i != len(_FORMS) - 1:
                del _FORMS[i]
                _FORMS.append(form)  # used last: evicted last
            return form[1].roots, form[2]
    tree = None
    raw = None
    if len(text) <= st.KEEP_CHARS and "- '" not in text:
        raw = text.split("\n")
        for form in reversed(_FORMS):  # the last used first: most likely the same page
            tree = changed_tree(form[1], raw)
            if tree is not None:
                break
    if tree is None:
        tree = parse_tree(text, raw)
    body = compact(text, tree.roots)
    if len(text) <= st.KEEP_CHARS:
        if len(_FORMS) >= FORMS_MAX:
            del _FORMS[0]
        _FORMS.append((text, tree, body))
    return tree.roots, body


# Gentlest first: long prose cut short, so every element keeps its line and its ref (an
# article's links), then folds. The last ones keep only the page's outline (headings,
# landmarks, distinct controls) and a fold line where look-alike siblings were.
FOLDS = (
    Fold(min_run=_NEVER, prose=PROSE),
    Fold(prose=PROSE),
    Fold(head=2, tail=1, min_run=5, prose=PROSE),
    Fold(head=1, tail=1, min_run=3, prose=PROSE),
    Fold(head=1, tail=0, min_run=2, prose=PROSE),
    Fold(head=0, tail=0, min_run=2, prose=PROSE),
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
