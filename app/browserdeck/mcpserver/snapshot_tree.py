"""A snapshot's lines as a tree (MCP's compact form walks it: mcpserver/snapshot.py).

Each line goes under the nearest line above it with a smaller indent, so the tree's
shape is a function of the lines' indents alone. The next snapshot of a page after an
action differs in a few lines, mostly at the same indents (a status line's text, the
focus mark, a field's value): its tree is the last one's with those lines' nodes, and
their ancestors', made anew (``changed_tree``), instead of a node per line again
(docs/performance.md, "Where a big snapshot's time goes").
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass

from browserdeck.engine import snapshot_text as st
from browserdeck.mcpserver import snapshot_lines as sl
from browserdeck.mcpserver.snapshot_lines import Node


def _from_line(line: st.Node) -> sl.Line:
    """A line the engine's full parser read (YAML-quoted keys) as MCP reads lines."""
    if not line.role:  # not understood: kept verbatim
        return sl.verbatim(line.raw)
    tail = line.tail
    return sl.element(
        line.indent,
        line.raw,
        line.role,
        line.name_raw.strip() or None,
        tuple(line.attrs[2:-1].split("] [")) if line.attrs else (),
        (tail[1:].strip() or None) if tail.startswith(":") else None,
    )



@dataclass(slots=True)
class Tree:
    """A text's forest, with the text's lines and each one read (None for a text with
    YAML-quoted keys: no line-by-line update). Nothing here is changed once built: the
    next text's tree shares what did not change."""

    roots: list[Node]
    lines: list[str] | None = None
    readings: list[sl.Line | None] | None = None


def parse_tree(text: str, raw: list[str] | None = None) -> Tree:
    """The tree of ``text``; ``raw``: its lines, when the caller has them."""
    if "- '" in text:  # YAML-quoted keys (rare): the engine's full parser reads them
        read = [_from_line(n) for n in st.parse(text) if n.raw.strip()]
        return Tree(_forest(read))
    if raw is None:
        raw = text.split("\n")
    lines = sl.read_lines(text, raw)  # each distinct line read once (snapshot_lines.py)
    # Nodes in document order -> roots, each line under the nearest shallower one.
    roots: list[Node] = []
    stack: list[Node] = []
    for i, line in enumerate(lines):
        if line is None:  # a blank line
            continue
        node = Node(line, [], i)
        indent = node.indent
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return Tree(roots, raw, lines)


def _forest(lines: list[sl.Line]) -> list[Node]:
    roots: list[Node] = []
    stack: list[Node] = []
    for line in lines:
        node = Node(line, [])
        indent = node.indent
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


_INDEX = operator.attrgetter("index")


def changed_tree(tree: Tree, raw: list[str]) -> Tree | None:
    """``parse_tree(text)`` from ``tree``, for a text (its lines ``raw``, no YAML-quoted keys)
    that differs in a few lines at the same indents (after an action: a value, the
    focus); None when it does not.

    The tree's shape depends on the lines' indents alone, so it is the same: each changed
    line gets a new node, and so does each of its ancestors (with a copy of its children,
    the new node in its place); everything else is shared with ``tree``. A line's node
    is found from the roots down: among siblings (in document order, each holding the
    lines up to the next one's) the last that starts at or before it (a bisection, in C).
    """
    if tree.lines is None:
        return None
    assert tree.readings is not None
    changed = st.changed_lines(tree.lines, raw)
    if changed is None or len(changed) * 8 >= len(raw):
        return None
    readings = tree.readings.copy()
    for i in changed:
        line = sl.read_line(raw[i])
        old = readings[i]
        if line is None or old is None or line[0] != old[0]:
            return None  # a line appeared, went or moved: another shape
        readings[i] = line
    roots = tree.roots.copy()
    # The nodes made here (their children lists are theirs): Node has no __eq__, so it
    # hashes by identity, and holding the nodes keeps them from being mistaken by id.
    made: set[Node] = set()
    for i in changed:
        siblings = roots  # always a list of this tree's own
        while True:
            k = bisect.bisect_right(siblings, i, key=_INDEX) - 1
            node = siblings[k]
            at = node.index
            if at == i or node not in made:
                line = readings[at]
                assert line is not None
                node = siblings[k] = Node(line, node.children.copy(), at)
                made.add(node)
            if at == i:
                break
            siblings = node.children
    return Tree(roots, raw, readings)
