"""Reading and rewriting Playwright's AI snapshot text (pure functions, no browser).

Playwright renders the snapshot as YAML lines::

    - generic [active] [ref=e1]:
      - button "Save" [ref=e5] [cursor=pointer]
      - 'link "Read: more" [ref=e6]':
        - /url: /more
      - iframe [ref=e7]:
        - button "Inside" [ref=f1e2]

A line whose key contains ``: `` is YAML-single-quoted. Names are JSON strings.
Refs are ``e<n>``, prefixed ``f<seq>`` in frames other than frame 0.

Why one module (a little over 500 lines): the readers and the rewrites share one
grammar (the line patterns, the quoting of names and keys), and ``LineReader`` is the
reading both the engine's ref scan here and MCP's compact form run on.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import operator
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from browserdeck.engine.actionable import ACTIONABLE_ROLES, actionable
from browserdeck.results import Truncated

T = TypeVar("T")

# Roles an agent acts on: the one set the API (format=role, interactive=true), MCP (its
# compact form) and the labels share, with the marks that make any element actionable
# (engine/actionable.py).
INTERACTIVE_ROLES = ACTIONABLE_ROLES
# Unnamed wrappers that `compact` removes (their children move up a level).
STRUCTURAL_ROLES = frozenset(
    {
        "generic",
        "group",
        "none",
        "presentation",
        "list",
        "listitem",
        "region",
        "section",
        "rowgroup",
        "document",
        "main",
        "article",
        "complementary",
        "contentinfo",
        "banner",
        "navigation",
        "form",
    }
)

# One element line: indent, role, "name", [attrs]..., then ":" (children) or ": text".
# The name is a JSON string: its body as runs of plain characters between escapes (the
# same strings as an alternation per character, with far less backtracking).
_ELEMENT = re.compile(
    r'^( *)- (/?[A-Za-z][\w-]*)( "[^"\\]*(?:\\.[^"\\]*)*")?((?: \[[^\]]*\])*)(:.*)?$'
)
ELEMENT = _ELEMENT  # for mcpserver/snapshot.py's parser: one pattern for both
# A snapshot text over this is kept for the next snapshot neither by the engine (a tab's
# last ref table build, engine/reftable.py) nor by MCP (its tree and compact form): it is
# read afresh every time. What is kept stays bounded: 50 tabs, MCP's last 4 texts.
KEEP_CHARS = 150_000
_QUOTED = re.compile(r"^( *)- '(.*)$")
_REF_ATTR = re.compile(r" \[ref=([^\]]+)\]")
REF_IN_TEXT = re.compile(r"\[ref=(f\d+)?e(\d+)\]")
REF_SHAPE = re.compile(r"^(?:f(\d+))?e(\d+)$")


@dataclass(slots=True)
class Node:
    """One line of the snapshot (parsed with one regex: this runs for every line)."""

    indent: int  # spaces
    raw: str  # the line as Playwright wrote it
    role: str = ""  # "" for lines we do not understand (kept verbatim)
    name: str | None = None
    name_raw: str = ""  # ' "Save"' as written, for re-rendering
    attrs: str = ""  # ' [level=1] [ref=e5]' as written
    tail: str = ""  # ":" or ": text" or ""
    quoted: bool = False
    frame_chain: tuple[str, ...] = ()
    ref: str | None = None

    @property
    def is_prop(self) -> bool:
        return self.role.startswith("/")

    @property
    def pointer(self) -> bool:
        return "[cursor=pointer]" in self.attrs

    @property
    def interactive(self) -> bool:
        return self.role in INTERACTIVE_ROLES or (
            self.ref is not None and actionable(self.role, self.attrs)
        )

    @property
    def inline_text(self) -> bool:
        return self.tail.startswith(": ") and len(self.tail) > 2

    def render(self, indent: int | None = None) -> str:
        key = f"{self.role}{self.name_raw}{self.attrs}"
        if self.quoted:
            key = "'" + key.replace("'", "''") + "'"
        return " " * (self.indent if indent is None else indent) + "- " + key + self.tail


def _unquote_yaml(body: str) -> tuple[str, str] | None:
    """The rest of a YAML single-quoted key: ``a ''b''': c`` -> (``a 'b'``, ``: c``)."""
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "'":
            if i + 1 < len(body) and body[i + 1] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), body[i + 1 :]
        out.append(ch)
        i += 1
    return None


def _name(raw: str) -> str:
    """An element line's name from its quoted form (`` "Save"``, JSON-escaped if need be)."""
    if "\\" in raw:
        with contextlib.suppress(ValueError):
            return str(json.loads(raw[1:]))
    return raw[2:-1]


def _node(
    indent: int,
    raw: str,
    m: re.Match[str],
    tail: str | None,
    quoted: bool,
    chain: tuple[str, ...],
) -> Node:
    name_raw = m.group(3) or ""
    name = _name(name_raw) if name_raw else None
    attrs = m.group(4) or ""
    ref = None
    if "[ref=" in attrs:
        found = _REF_ATTR.search(attrs)
        ref = found.group(1) if found else None
    return Node(
        indent,
        raw,
        m.group(2),
        name,
        name_raw,
        attrs,
        (m.group(5) or "") if tail is None else tail,
        quoted,
        chain,
        ref,
    )


def parse(text: str) -> list[Node]:
    nodes: list[Node] = []
    append = nodes.append
    # Open <iframe> nodes as (indent, Playwright ref), to know each line's frame.
    frames: list[tuple[int, str]] = []
    chain: tuple[str, ...] = ()
    element = _ELEMENT.match
    for raw in text.split("\n"):
        m = element(raw)
        quoted = None
        if m is not None:
            indent = len(m.group(1))
        else:
            q = _QUOTED.match(raw)
            indent = len(q.group(1)) if q is not None else len(raw) - len(raw.lstrip(" "))
            unq = _unquote_yaml(q.group(2)) if q is not None else None
            if unq is not None:
                m = element("- " + unq[0])
                quoted = unq[1]
        if frames and frames[-1][0] >= indent:
            while frames and frames[-1][0] >= indent:
                frames.pop()
            chain = tuple(f[1] for f in frames)
        if m is None:
            append(Node(indent, raw, frame_chain=chain))
            continue
        node = _node(indent, raw, m, quoted, quoted is not None, chain)
        append(node)
        if node.role == "iframe" and node.ref is not None and node.tail == ":":
            frames.append((indent, node.ref))
            chain = (*chain, node.ref)
    return nodes


def role_counts(
    nodes: list[Node],
) -> tuple[dict[int, int], dict[tuple[tuple[str, ...], str, str], int]]:
    """For each element line: its index among same role+name in its frame; and the totals."""
    seen: dict[tuple[tuple[str, ...], str, str], int] = defaultdict(int)
    nth: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if not node.role or node.is_prop or node.role == "text":
            continue
        key = (node.frame_chain, node.role, node.name or "")
        nth[i] = seen[key]
        seen[key] += 1
    return nth, dict(seen)


def compact_lines(nodes: list[Node], keep: list[bool]) -> list[tuple[Node, int]]:
    """Drop unnamed structural wrappers; their children move up one level each."""
    out: list[tuple[Node, int]] = []
    stack: list[tuple[int, bool]] = []  # (indent, dropped) of open ancestors
    for node, wanted in zip(nodes, keep, strict=True):
        while stack and stack[-1][0] >= node.indent:
            stack.pop()
        dropped = sum(1 for _, d in stack if d)
        drop = (
            node.role in STRUCTURAL_ROLES
            and not node.name
            and not node.inline_text
            and not node.pointer
        )
        stack.append((node.indent, drop))
        if drop or not wanted:
            continue
        out.append((node, max(0, node.indent - 2 * dropped)))
    return out


# How to get a smaller snapshot, by format: aria takes no selector.
NARROW = "selector=<css>, depth=N, interactive=true or compact=true"
NARROW_AX = "depth=N, interactive=true or compact=true"


def truncate(
    text: str,
    *,
    max_chars: int,
    max_lines: int | None,
    what: str = "lines",
    narrow: str = NARROW,
) -> tuple[str, Truncated | None]:
    """Cut at a line boundary; the marker says how much is missing and how to narrow."""
    if len(text) < max_chars and (max_lines is None or text.count("\n") < max_lines):
        return text, None  # it fits: no list of thousands of lines to count it
    lines = text.split("\n")
    total_lines, total_chars = len(lines), len(text)
    keep = lines
    if max_lines is not None and len(keep) > max_lines:
        keep = keep[:max_lines]
    size = 0
    for i, line in enumerate(keep):
        size += len(line) + 1
        if size > max_chars:
            keep = keep[:i]
            break
    if len(keep) == total_lines:
        return text, None
    shown = "\n".join(keep)
    info = Truncated(
        shown_lines=len(keep),
        total_lines=total_lines,
        shown_chars=len(shown),
        total_chars=total_chars,
    )
    marker = (
        f"\n[... truncated: showing {len(keep)} of {total_lines} {what} "
        f"({len(shown)} of {total_chars} chars). Narrow it with {narrow}, "
        f"or raise maxChars/limit.]"
    )
    return shown + marker, info


_BOX = re.compile(r" \[box=(-?\d+),(-?\d+),(\d+),(\d+)\]")


def in_viewport(text: str, width: int, height: int) -> tuple[str, int]:
    """Only the lines of elements inside a ``width`` x ``height`` viewport; boxes removed.

    ``text`` was rendered with Playwright's ``boxes`` (``[box=x,y,w,h]``, viewport
    coordinates). An element is kept when its box meets the viewport, or when one of its
    descendants is kept (an ancestor that sized to nothing, a positioned child); a line
    without a box (text, ``/url``) goes with its parent element. Returns the text and how
    many element lines were left out.
    """
    nodes = parse(text)
    own: list[bool | None] = []  # the element's own box meets the viewport (None: no box)
    for node in nodes:
        m = _BOX.search(node.attrs) if node.role else None
        if m is None:
            own.append(None)
            continue
        x, y, w, h = (int(g) for g in m.groups())
        own.append(w > 0 and h > 0 and x < width and y < height and x + w > 0 and y + h > 0)
    keep = [False] * len(nodes)
    stack: list[int] = []  # open ancestors (indexes)
    for i, node in enumerate(nodes):
        while stack and nodes[stack[-1]].indent >= node.indent:
            stack.pop()
        parent = stack[-1] if stack else None
        if own[i] is None:
            keep[i] = parent is None or (own[parent] is not False and keep[parent])
        elif own[i]:
            keep[i] = True
            for j in stack:  # its ancestors stay, so the tree around it reads right
                keep[j] = True
        stack.append(i)
    out: list[str] = []
    dropped = 0
    for node, kept in zip(nodes, keep, strict=True):
        if not kept:
            dropped += 1 if node.role and not node.is_prop else 0
            continue
        if node.role and "[box=" in node.attrs:
            node.attrs = _BOX.sub("", node.attrs)
            out.append(node.render())
        else:
            out.append(node.raw)
    return "\n".join(out), dropped


class LineReader(Generic[T]):
    """Every line of a snapshot read with one regex pass, each distinct line read once.

    The next snapshot of a page repeats most of its lines as the same strings, refs
    included (Playwright keeps an element's ref within a document): after a click on the
    2,000-element table only a few differ. Reading a line depends on its text alone, so
    its reading is remembered by that text and can never be stale; what depends on the
    lines around it (frames, counts, the tree) is worked out afresh for every snapshot.

    Bounded by size, not only by count: the memory is module-wide (every session and
    profile), and an entry holds its line several times over (the key, the reading's
    strings). It is emptied before it would hold more than ``limit`` lines or ``budget``
    bytes of them (``_weight``: a non-ASCII line counts 4 bytes a character, the most
    CPython takes), and a snapshot bigger than that alone is read and not kept, without
    emptying it (the other sessions' lines stay). A line
    longer than ``longest`` is never kept: one such line that changes in every snapshot
    (a data URL, a long text) would otherwise fill the memory with its versions, and a
    regex pass over it costs little beside its own size anyway.

    ``pattern`` matches any line (its last alternative), with several groups; ``read``
    turns one match's groups (``""`` for a group not taking part) into a line's reading.
    """

    def __init__(
        self,
        pattern: re.Pattern[str],
        read: Callable[[Any], T],
        limit: int = 10_000,
        budget: int = 4_000_000,
        longest: int = 1_000,
    ) -> None:
        self.pattern = pattern
        self.read = read
        self.limit = limit
        self.budget = budget
        self.longest = longest
        self.memo: dict[str, T] = {}
        self.chars = 0  # the remembered lines' weight (``_weight``, duplicates counted)

    def _unknown(self, lines: list[str], memo: dict[str, T]) -> list[str]:
        """The lines to read in the regex pass and keep: not remembered, not too long."""
        missing = [raw for raw in lines if raw not in memo]
        if missing and max(map(len, missing)) > self.longest:
            longest = self.longest
            missing = [raw for raw in missing if len(raw) <= longest]
        return missing

    def lines(self, text: str, lines: list[str] | None = None) -> list[T]:
        """Each line's reading; ``lines``: ``text.split("\\n")`` when the caller has it."""
        if lines is None:
            lines = text.split("\n")
        memo = self.memo
        if not memo:
            self.chars = 0  # emptied (or replaced) elsewhere
        missing = self._unknown(lines, memo)
        known: dict[str, T] = memo
        if missing:
            chars = _weight(missing)
            kept = True
            if len(memo) + len(missing) > self.limit or self.chars + chars > self.budget:
                # Emptying is for the sake of this snapshot's lines: one over the bounds
                # on its own is read and not kept, and leaves the memory (every other
                # session's lines) as it is.
                own = missing if len(missing) == len(lines) else self._unknown(lines, {})
                own_chars = chars if own is missing else _weight(own)
                kept = len(own) <= self.limit and own_chars <= self.budget
                if kept:
                    memo.clear()
                    self.chars = 0
                    missing, chars = own, own_chars
            found = self.pattern.findall("\n".join(missing))  # in C, all at once
            if len(found) == len(missing):  # one match per line (the last alternative)
                read = self.read
                got = [read(match) for match in found]
                if kept:
                    memo.update(zip(missing, got, strict=True))
                    self.chars += chars
                if len(missing) == len(lines):  # nothing was remembered: these are they
                    return got
                if not kept:
                    known = dict(zip(missing, got, strict=True))
        out: list[Any] = []
        append = out.append
        get = known.get
        for raw in lines:
            line = get(raw, _UNREAD)
            if line is _UNREAD and known is not memo:  # not kept: the rest is remembered
                line = memo.get(raw, _UNREAD)
            if line is _UNREAD:  # too long to keep, or emptied by a caller in another thread
                m = self.pattern.match(raw)
                assert m is not None  # the last alternative matches any line
                line = self.read(m.groups(""))
            append(line)
        return out


    def line(self, raw: str) -> T:
        """One line's reading (remembered, or read now and not kept)."""
        found = self.memo.get(raw, _UNREAD)
        if found is _UNREAD:
            m = self.pattern.match(raw)
            assert m is not None  # the last alternative matches any line
            found = self.read(m.groups(""))
        return found  # type: ignore[no-any-return]


_UNREAD: Any = object()  # LineReader's marker for a line it does not remember


def changed_lines(old: list[str], new: list[str]) -> list[int] | None:
    """The positions where ``new`` differs from ``old``; None when their counts differ.

    In C (``map`` of ``operator.ne``, ``compress``): no Python step per line. After an
    action the next snapshot of a big page differs from the last in a few of its
    thousands of lines (a value, the focus), so what was worked out for the others holds.
    """
    if len(old) != len(new):
        return None
    return list(itertools.compress(range(len(new)), map(operator.ne, old, new)))


def _weight(lines: list[str]) -> int:
    """Roughly the bytes ``lines`` take in CPython, the unit of ``LineReader.budget``.

    A str holds 1 byte a character when all are ASCII, else 2 or 4 (by its widest
    character): counting characters would let non-ASCII pages hold up to 4 times the
    budget. A non-ASCII line counts 4 a character (the most it can take); ``isascii``
    is O(1) on a str, and one join (in C) settles the common all-ASCII case.
    """
    chars = sum(map(len, lines))
    if "".join(lines).isascii():
        return chars
    return chars + 3 * sum(len(raw) for raw in lines if not raw.isascii())

# One element line for the ref scan, matched over the whole text at once (in C): indent,
# role (a ``/url`` prop is no element), the name between its quotes, the attrs before
# the ref, the ref, the attrs after it, the tail; or (the last alternative) any other
# line. The same lines as ``_ELEMENT`` without props: the attrs are split around
# ``[ref=]`` so no second regex runs per line.
_REF_LINES = re.compile(
    r'^(?:( *)- ([A-Za-z][\w-]*)(?: "([^"\\]*(?:\\.[^"\\]*)*)")?'
    r"((?: \[(?!ref=)[^\]]*\])*)(?: \[ref=([^\]]+)\])?((?: \[[^\]]*\])*)(:.*)?|.*)$",
    re.MULTILINE,
)

# (Playwright ref, role, name, frame chain, interactive, nth among same role+name in frame)
RefEntry = tuple[str, str, str, tuple[str, ...], bool, int]
CountKey = tuple[tuple[str, ...], str, str]
# An element line as the scan reads it: indent, role, name, Playwright ref ("" for none),
# interactive, whether it opens an iframe's lines (``- iframe [ref=e7]:``).
ScanLine = tuple[int, str, str, str, bool, bool]


def _inner_name(inner: str) -> str:
    """A name from between its quotes (JSON-escaped when it holds a backslash)."""
    if "\\" in inner:
        with contextlib.suppress(ValueError):
            return str(json.loads(f'"{inner}"'))
    return inner


def _scan_line(found: tuple[str, str, str, str, str, str, str]) -> ScanLine | None:
    """One line of the text for the ref scan (None: no element)."""
    indent, role, inner, before, ref, after, tail = found
    if not role:
        return None
    name = _inner_name(inner) if "\\" in inner else inner
    interactive = actionable(role, after) or (bool(before) and actionable(role, before))
    return (len(indent), role, name, ref, interactive, role == "iframe" and tail == ":")


SCAN_READER: LineReader[ScanLine | None] = LineReader(_REF_LINES, _scan_line)


def scan(text: str) -> tuple[list[RefEntry], dict[CountKey, int]]:
    """The refs of a snapshot and the role+name totals, without building a Node per line.

    This is the per-snapshot hot path (thousands of lines): each line read once
    (``LineReader``), then one lean loop. Lines with a YAML-quoted key are rare; when
    there are any, the full parser is used.
    """
    if "- '" in text:
        return _scan_parsed(text)
    return scan_read(SCAN_READER.lines(text), one_frame="- iframe " not in text)


def scan_read(
    lines: list[ScanLine | None], *, one_frame: bool
) -> tuple[list[RefEntry], dict[CountKey, int]]:
    """``scan`` of lines read already (no YAML-quoted keys); ``one_frame``: the text has
    no ``- iframe `` (its result is the same either way, only slower with frames)."""
    totals: dict[CountKey, int] = {}
    entries: list[RefEntry] = []
    append = entries.append
    if one_frame:  # every line's chain is ()
        top: tuple[str, ...] = ()
        for line in lines:
            if line is None:
                continue
            _, role, name, ref, interactive, _ = line
            if role == "text":
                continue
            key = (top, role, name)
            nth = totals.get(key, 0)
            totals[key] = nth + 1
            if ref:
                append((ref, role, name, top, interactive, nth))
        return entries, totals
    frames: list[tuple[int, str]] = []  # open <iframe> nodes: (indent, Playwright ref)
    chain: tuple[str, ...] = ()
    for line in lines:
        if line is None:
            continue
        indent, role, name, ref, interactive, opens = line
        if frames and frames[-1][0] >= indent:
            while frames and frames[-1][0] >= indent:
                frames.pop()
            chain = tuple(f[1] for f in frames)
        if role == "text":
            continue
        key = (chain, role, name)
        nth = totals.get(key, 0)
        totals[key] = nth + 1
        if not ref:
            continue
        append((ref, role, name, chain, interactive, nth))
        if opens:
            frames.append((indent, ref))
            chain = (*chain, ref)
    return entries, totals


def _scan_parsed(text: str) -> tuple[list[RefEntry], dict[CountKey, int]]:
    """``scan`` through the full parser (for YAML-quoted lines)."""
    totals: dict[CountKey, int] = defaultdict(int)
    entries: list[RefEntry] = []
    for node in parse(text):
        if not node.role or node.is_prop or node.role == "text":
            continue
        name = node.name or ""
        key = (node.frame_chain, node.role, name)
        nth = totals[key]
        totals[key] += 1
        if node.ref is not None:
            entries.append((node.ref, node.role, name, node.frame_chain, node.interactive, nth))
    return entries, dict(totals)
