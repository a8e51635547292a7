"""What an agent can act on: the one rule the API, MCP and the labels share.

An element is actionable when it is visible (Playwright gave it a ref) and any of:

* its role is one of ``ACTIONABLE_ROLES``: links, buttons and form controls, text boxes,
  and the ARIA widget roles (grid cells and column/row headers, options, tabs, tree and
  menu items, sliders, switches ...);
* it shows a pointer cursor (Playwright's ``[cursor=pointer]``);
* the page says so in ways the accessibility tree does not show, which the engine reads
  from the DOM after each snapshot (engine/marks.py) and writes on the element's line as
  a mark after its ref (``MARKS``): ``[editable]`` (the root of a ``contenteditable``
  region, or the body of a document in design mode: an iframe's rich-text editor),
  ``[draggable]`` (``draggable="true"``), ``[cursor=move]`` / ``[cursor=grab]`` (where
  that cursor starts: drag-to-reorder lists), ``[focusable]`` (``tabindex >= 0`` on an
  element with no actionable role: a scroll region, a custom widget).

Whatever reads a snapshot line decides by ``actionable(role, attrs)``: the ref table's
``interactive`` flag (format=role, ``interactive=true``, the labelled screenshot and so
the panel's labels: engine/snapshot_text.py), and MCP's compact form, which keeps a ref
only where this says so (mcpserver/snapshot_lines.py). The marks are written only where
the role and Playwright's pointer do not already say it, so a line is as short as it can
be; the compact form keeps them (they say what to do: drag, type), not Playwright's
pointer.

An editor whose real input has no box of its own (a code editor's zero-width input, a
hidden textarea) has no ref from Playwright: the engine gives its line the ref of the
nearest visible element around it (``with_input_refs``), which a click lands on and a
``type`` reaches the input through (engine/refs.py, engine/editing.py).
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import re

# Roles an agent acts on. menu, menubar and scrollbar are kept from the set this replaced
# (a menu's own line is where a keyboard user starts).
ACTIONABLE_ROLES = frozenset(
    {
        "button",
        "checkbox",
        "columnheader",
        "combobox",
        "gridcell",
        "link",
        "listbox",
        "menu",
        "menubar",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "rowheader",
        "scrollbar",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    }
)
POINTER = "cursor=pointer"  # Playwright's own mark
# Ours, in the order the page's reasons are tried (the first that holds is written).
MARKS = ("editable", "draggable", "cursor=move", "cursor=grab", "focusable")
_BRACKETED = tuple(f"[{m}]" for m in (POINTER, *MARKS))
# The roles of an editor's input that may have no box of its own (with_input_refs).
INPUT_ROLES = frozenset({"textbox", "searchbox", "combobox"})


def actionable(role: str, attrs: str) -> bool:
    """Whether a snapshot line of this role, with these attrs as written (`` [ref=e5]
    [cursor=pointer]``), is an element an agent can act on. Only lines with a ref are:
    the caller checks that."""
    if role in ACTIONABLE_ROLES:
        return True
    if "[" not in attrs:
        return False
    return any(mark in attrs for mark in _BRACKETED)


def actionable_attrs(role: str, attrs: tuple[str, ...]) -> bool:
    """``actionable`` for attrs split as MCP reads them (``("ref=e5", "cursor=pointer")``)."""
    if role in ACTIONABLE_ROLES:
        return True
    return any(a == POINTER or a in MARKS for a in attrs)


# --- writing the marks and the inputs' refs into Playwright's text -------------------

# An element line up to (not including) its ref: indent, "- ", an optional YAML quote,
# the role, the name (a JSON string) and the attrs before the ref. Anything else before a
# "[ref=" is page text that happens to read like one.
_HEAD = re.compile(r""" *- '?[A-Za-z][\w-]*(?: "(?:[^"\\\n]|\\.)*")?(?: \[[^\]\n]*\])*$""")
_REF_ATTR = re.compile(r" \[ref=([^\]\s]+)\]")
FEW = 32  # up to this many marks, each is found on its own; more: one pass over the text


def _ref_positions(text: str, refs: set[str]) -> dict[str, int]:
    """Where each of ``refs`` ends as an element line's ref attr (the index after its "]")."""
    found: dict[str, int] = {}
    if len(refs) <= FEW:
        for ref in refs:
            needle = f" [ref={ref}]"
            at = text.find(needle)
            while at >= 0:
                start = text.rfind("\n", 0, at) + 1
                if _HEAD.match(text, start, at):
                    found[ref] = at + len(needle)
                    break
                at = text.find(needle, at + 1)
        return found
    for m in _REF_ATTR.finditer(text):
        ref = m.group(1)
        if ref in refs and ref not in found:
            start = text.rfind("\n", 0, m.start()) + 1
            if _HEAD.match(text, start, m.start()):
                found[ref] = m.end()
    return found


def with_marks(text: str, marks: dict[str, tuple[str, str]]) -> str:
    """``text`` with each mark written after its ref. ``marks``: Playwright ref -> (mark,
    the ref of the first element inside it): the snapshot leaves out an unnamed element
    that only wraps one other (an editable div around a paragraph, an iframe's body), and
    the mark then goes on that one. Refs not in the text (a scoped snapshot, an element
    gone since) are left out."""
    if not marks:
        return text
    at = _ref_positions(text, set(marks))
    chosen = {ref: mark for ref, (mark, _) in marks.items() if ref in at}
    inner = {
        inside: mark
        for ref, (mark, inside) in marks.items()
        if ref not in at and inside and inside not in marks
    }
    if inner:
        found = _ref_positions(text, set(inner))
        at.update(found)
        chosen.update((ref, inner[ref]) for ref in found)
    # Written only where the role and the pointer do not already say it (a tab with
    # tabindex=0, a draggable link): the line stays as short as it was.
    chosen = {ref: mark for ref, mark in chosen.items() if not _said(text, at[ref])}
    if not chosen:
        return text
    out: list[str] = []
    pos = 0
    for ref, end in sorted(((r, at[r]) for r in chosen), key=lambda item: item[1]):
        out.append(text[pos:end])
        out.append(f" [{chosen[ref]}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


_INPUT_LINE = re.compile(
    r"""^( *)- '?(textbox|searchbox|combobox)( "(?:[^"\\\n]|\\.)*")?((?: \[[^\]\n]*\])*)(:.*|')?$"""
)


def with_input_refs(
    text: str, inputs: list[tuple[str, str, str]]
) -> tuple[str, dict[str, tuple[str, str]]]:
    """``text`` with each ref-less editor input's line given the ref of the visible element
    around it. ``inputs``: (that element's Playwright ref, the input's role, its name as the
    page gives it, "" if none). Returns the text and, per ref given, the input's (role,
    name) as the line shows it, which is how the engine finds the input inside that
    element. The element's own line loses the ref unless it is actionable itself, so the
    ref names one line wherever it is not needed twice."""
    if not inputs:
        return text, {}
    at = _ref_positions(text, {ref for ref, _, _ in inputs})
    given: dict[str, tuple[str, str]] = {}
    lines: list[str] | None = None
    starts: list[int] = []
    for ref, role, name in inputs:
        end = at.get(ref)
        if end is None or ref in given:
            continue
        if lines is None:
            lines = text.split("\n")
            starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        row = bisect.bisect_right(starts, end) - 1
        found = _input_line(lines, row, role, name)
        if found is None:
            continue
        i, m = found
        line = lines[i]
        lines[i] = line[: m.end(4)] + f" [ref={ref}]" + line[m.end(4) :]
        given[ref] = (role, _unquoted(m.group(3)))
        own = lines[row]
        head = _OWN.match(own)
        attrs = own[own.find(f" [ref={ref}]") :].split(":", 1)[0]
        if head is None or not actionable(head.group(1), attrs):
            lines[row] = own.replace(f" [ref={ref}]", "", 1)
    return ("\n".join(lines) if lines is not None else text), given


_OWN = re.compile(r" *- '?([A-Za-z][\w-]*)")  # match() anchors it


def _said(text: str, end: int) -> bool:
    """Whether the element line whose ref ends at ``end`` is actionable already."""
    start = text.rfind("\n", 0, end) + 1
    head = _OWN.match(text, start)
    if head is not None and head.group(1) in ACTIONABLE_ROLES:
        return True
    return text.startswith(f" [{POINTER}]", end)


def _input_line(
    lines: list[str], row: int, role: str, name: str
) -> tuple[int, re.Match[str]] | None:
    """The ref-less ``role`` line under line ``row`` named ``name`` (else the first one)."""
    own = lines[row]
    indent = len(own) - len(own.lstrip(" "))
    first = None
    for i in range(row + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
            break  # past the element's subtree
        m = _INPUT_LINE.match(line)
        if m is None or "[ref=" in line or m.group(2) != role:
            continue
        if _unquoted(m.group(3)) == name:
            return i, m
        if first is None:
            first = (i, m)
    return first


def _unquoted(raw: str | None) -> str:
    if not raw:
        return ""
    body = raw.strip()[1:-1]
    if "\\" in body:
        with contextlib.suppress(ValueError):
            return str(json.loads(f'"{body}"'))
    return body
