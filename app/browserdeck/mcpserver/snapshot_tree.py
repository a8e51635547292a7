"""A snapshot's lines as a tree (MCP's compact form walks it: mcpserver/snapshot.py).

Each line goes under the nearest line above it with a smaller indent, so the tree's
shape is a function of the lines' indents alone. The next snapshot of a page after an
action differs in a few lines, mostly at the same indents (a status line's text, the
focus mark, a field's value): its tree is the last one's with those lines' nodes, and
their ancestors', made anew (``changed_tree``), instead of a node per line again
(docs/performance.md, "Where a big snapshot's time goes").
"""

from __future__ import annotations

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
    """A text's forest, and where each of its lines sits in it (for the next text's).

    ``lines`` (None for a text with YAML-quoted keys: no line-by-line update) are the
    text's lines, ``readings`` each one read; for line ``i``: ``nodes[i]`` its node (None
    for a blank line), ``parents[i]`` its parent's line (-1: a root), ``places[i]`` its
    place among its parent's children. Nothing here is changed once built: the next
    text's tree shares what did not change.
    """

    roots: list[Node]
    lines: list[str] | None = None
    readings: list[sl.Line | None] | None = None
    nodes: list[Node | None] | None = None
    parents: list[int] | None = None
    places: list[int] | None = None


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
    count = len(lines)
    nodes: list[Node | None] = [None] * count
    parents = [-1] * count
    places = [0] * count
    stack: list[Node] = []
    above: list[int] = []  # the stack's lines
    for i, line in enumerate(lines):
        if line is None:  # a blank line
            continue
        node = nodes[i] = Node(line, [])
        indent = node.indent
        while stack and stack[-1].indent >= indent:
            stack.pop()
            above.pop()
        if stack:
            siblings = stack[-1].children
            parents[i] = above[-1]
        else:
            siblings = roots
        places[i] = len(siblings)
        siblings.append(node)
        stack.append(node)
        above.append(i)
    return Tree(roots, raw, lines, nodes, parents, places)


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


def changed_tree(tree: Tree, raw: list[str]) -> Tree | None:
    """``parse_tree(text)`` from ``tree``, for a text (its lines ``raw``, no YAML-quoted keys)
    that differs in a few lines at the same indents (after an action: a value, the
    focus); None when it does not.

    The tree's shape depends on the lines' indents alone, so it is the same: each changed
    line gets a new node, and so does each of its ancestors (with a copy of its children,
    the new node in its place); everything else is shared with ``tree``.
    """
    if tree.lines is None:
        return None
    assert tree.readings is not None and tree.nodes is not None
    assert tree.parents is not None and tree.places is not None
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
    parents, places = tree.parents, tree.places
    # The changed lines and their ancestors, each with its children to put in anew.
    renew: dict[int, list[int]] = {}
    for i in changed:
        child = i
        renew.setdefault(child, [])
        parent = parents[child]
        while parent >= 0:
            known = parent in renew
            renew.setdefault(parent, []).append(child)
            if known:
                break  # its ancestors are in already
            child, parent = parent, parents[parent]
    nodes = tree.nodes.copy()
    roots = tree.roots.copy()
    for i in sorted(renew, reverse=True):  # children (later lines) before their parents
        old_node = nodes[i]
        assert old_node is not None
        children = old_node.children
        if renew[i]:
            children = children.copy()
            for child in renew[i]:
                children[places[child]] = nodes[child]  # type: ignore[assignment]
        line = readings[i]
        assert line is not None
        node = nodes[i] = Node(line, children)
        if parents[i] < 0:
            roots[places[i]] = node
    return Tree(roots, raw, readings, nodes, parents, places)
