"""A snapshot's ref table and its refs as the agent sees them (renamed after a new document).

Every ai/role snapshot replaces the tab's table (engine/snapshot.py); this is how one is
built from Playwright's text, and how the text's refs are renamed when a new document
restarted Playwright's numbering (docs/engine.md, "Snapshots").

What a build depends on: the lines' readings (``snapshot_text.ScanLine``: each element
line's indent, role, name, ref, whether it is interactive or opens an iframe), the
options (format, depth, frame), the document (Playwright's numbering) and the tab's ref
numbering. A value, a focus mark or a ``/url`` is not read into the rows. So a snapshot
after an action that changed only such things (a click that wrote a status line and
moved the focus, typing into a field) has the rows of the tab's last build: its lines
are compared with the last build's in C (``snapshot_text.changed_lines``), only the few
that differ are read, and when their readings are the same the rows are too
(docs/performance.md, "Where a big snapshot's time goes"). The table is still a new one,
settled by this snapshot, so a ref of an older snapshot fails as before (engine/refs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from browserdeck.engine import snapshot_text as st
from browserdeck.engine.state import PageState, RefMap, RefMode, RefRow, RefTable

if TYPE_CHECKING:
    from browserdeck.engine.options import SnapshotOptions

# Playwright ref -> (its prefix, its number), the same in every snapshot of a document:
# split once (this runs for each of a big page's thousands of refs). Bounded.
_SPLIT: dict[str, tuple[str, int]] = {}
_SPLIT_MAX = 10_000


class Renames(dict[str, str]):
    """Playwright ref -> the ref the agent sees, for the refs whose name changes.

    Also remembers its last renamed text, line by line (``rename_text``): the next text
    with these renames (the rows of the last build held) differs in a few lines.
    """

    __slots__ = ("last",)

    def __init__(self) -> None:
        super().__init__()
        self.last: tuple[list[str], list[str]] | None = None  # (lines, renamed lines)


@dataclass(slots=True)
class Build:
    """A tab's last ref table build: what it was built from and what it gave."""

    inputs: tuple[object, ...]  # format, depth, frame, the documents' keys
    numbering: tuple[object, ...]  # the tab's numbering the build left
    text: str
    lines: list[str] | None  # the text's lines (None: quoted keys)
    readings: list[st.ScanLine | None] | None  # each line as the scan read it
    rows: dict[str, RefRow]
    renamed: Renames


def _readings(text: str, lines: list[str] | None, last: Build | None) -> list[st.ScanLine | None]:
    """Each line of ``text`` as the scan reads it; from the last build's where a line is
    the same (only the changed lines are read)."""
    if lines is not None and last is not None and last.lines is not None:
        assert last.readings is not None  # kept with the lines
        changed = st.changed_lines(last.lines, lines)
        if changed is not None and len(changed) * 8 < len(lines):
            read = st.SCAN_READER.line
            readings = last.readings
            for i in changed:
                line = read(lines[i])
                if line != readings[i]:
                    if readings is last.readings:
                        readings = readings.copy()  # the last build's is never changed
                    readings[i] = line
            return readings
    return st.SCAN_READER.lines(text, lines)


def build_table(
    state: PageState, text: str, opts: SnapshotOptions, mode: RefMode
) -> tuple[RefTable, Renames]:
    """The ref table of a snapshot and the map Playwright ref -> the ref the agent sees.

    The map is empty when every ref keeps Playwright's name (a tab's first document, the
    common case): there is then nothing to rename in the text.
    """
    memory = state.memory
    main_root = opts.frame is None
    keys = {True: state.epoch_key(True), False: state.epoch_key(False)}
    role_only = opts.format == "role"
    counted = not opts.depth  # a depth-limited snapshot does not see every element
    inputs = (role_only, counted, main_root, keys[True], keys[False])
    last = memory.last_build
    if last is not None and (
        last.inputs != inputs or last.numbering != (tuple(memory.bases.items()), memory.issued_max)
    ):
        last = None  # rows of another format, document or numbering: nothing to compare
    quoted = "- '" in text  # YAML-quoted keys (rare): read by the full parser
    kept = len(text) <= st.KEEP_CHARS  # a bigger text is scanned afresh every time
    lines = text.split("\n") if not quoted and kept else None
    readings = None
    if last is not None and last.text == text:  # the same text (a length check, a memcmp)
        readings = last.readings
    elif not quoted:
        readings = _readings(text, lines, last)
    if last is not None and (
        last.text == text or (readings is not None and readings is last.readings)
    ):
        # The same readings, numbering and options give the same rows: no scan, no loop.
        memory.last_build = Build(
            inputs, last.numbering, text, lines, readings, last.rows, last.renamed
        )
        return _table(state, opts, mode, last.rows), last.renamed
    if readings is None:
        entries, totals = st.scan(text)
    else:
        entries, totals = st.scan_read(readings, one_frame="- iframe " not in text)
    rows: dict[str, RefRow] = {}
    renamed = Renames()
    # Playwright prefix ("" or "f3") -> (the agent's prefix, offset), settled once per
    # snapshot: this loop runs once per ref (thousands on a big page).
    bases: dict[tuple[str, bool], tuple[str, int]] = {}
    interactive_roles = st.INTERACTIVE_ROLES
    issued = memory.issued_max  # kept in a local: this loop runs once per ref
    if len(_SPLIT) > _SPLIT_MAX:
        _SPLIT.clear()
    split = _SPLIT.get
    for pw_ref, role, name, chain, interactive, nth in entries:
        if role_only and role not in interactive_roles:
            continue
        parts = split(pw_ref)
        if parts is None:
            pw_prefix, _, digits = pw_ref.rpartition("e")
            if not digits.isdigit():
                continue
            parts = _SPLIT[pw_ref] = (pw_prefix, int(digits))
        pw_prefix, pw_number = parts
        main = main_root and not chain
        settled = bases.get((pw_prefix, main))
        if settled is None:
            # Playwright prefixes even the main frame's refs with a new "f<seq>" after
            # each navigation (its frame sequence number); the agent sees one counter per
            # tab with no prefix there, and the "f" prefix only inside iframes.
            prefix = "" if main else pw_prefix
            key = keys[main]
            entry = memory.bases.get(prefix)
            if entry is None:
                entry = (0, key)  # a prefix never seen in this tab cannot clash
            elif entry[1] != key:
                # A new document (or a new Page object) restarted Playwright's numbering:
                # start above every number this tab ever handed out.
                entry = (issued, key)
            memory.bases[prefix] = entry
            settled = bases[(pw_prefix, main)] = (prefix, entry[0])
        prefix, base = settled
        number = pw_number + base
        if number > issued:
            issued = number
        if base or prefix != pw_prefix:
            ours = renamed[pw_ref] = f"{prefix}e{number}"
        else:
            ours = pw_ref  # Playwright's own name (no string built per ref)
        count = totals.get((chain, role, name)) if counted else None
        rows[ours] = (pw_ref, role, name, chain, nth, count, interactive)
    memory.issued_max = issued
    # Kept by the tab (one build), shared with the table: neither is changed once built.
    memory.last_build = (
        Build(
            inputs,
            (tuple(memory.bases.items()), issued),
            text,
            lines,
            readings if lines is not None else None,
            rows,
            renamed,
        )
        if kept
        else None
    )
    return _table(state, opts, mode, rows), renamed


def _table(
    state: PageState, opts: SnapshotOptions, mode: RefMode, rows: dict[str, RefRow]
) -> RefTable:
    return RefTable(
        mode=mode,
        refs=RefMap(rows),
        page_token=state.token,
        main_epoch=state.main_epoch,
        child_epoch=state.child_epoch,
        selector=opts.selector,
        frame=opts.frame,
        depth_limited=opts.depth is not None,
        url=state.page.url,
    )


def rename_refs(text: str, shown: dict[str, str]) -> str:
    """Every ``[ref=<Playwright ref>]`` of ``text`` as the ref the agent sees.

    Split at the refs rather than a regex substitution: no Python call per ref (a big
    page has thousands), about half the time.
    """
    parts = text.split("[ref=")
    get = shown.get
    out = [parts[0]]
    for part in parts[1:]:
        end = part.find("]")
        if end < 0:  # "[ref=" without its "]": not a ref
            out.append(part)
            continue
        pw_ref = part[:end]
        out.append(get(pw_ref, pw_ref) + part[end:])
    return "[ref=".join(out)


def rename_text(text: str, renamed: Renames) -> str:
    """``rename_refs`` of ``text``, line by line where it differs from the last text.

    The same as renaming the whole text: a ref never holds a newline (each is read from
    one line), so a "[ref=" whose "]" is on a later line is left as it is either way.
    """
    if len(text) > st.KEEP_CHARS:
        return rename_refs(text, renamed)
    lines = text.split("\n")
    last = renamed.last
    changed = st.changed_lines(last[0], lines) if last is not None else None
    if last is None or changed is None or len(changed) * 8 >= len(lines):
        out = rename_refs(text, renamed)
        renamed.last = (lines, out.split("\n"))
        return out
    shown = last[1].copy()  # the last one's lines are never changed: others may hold them
    for i in changed:
        shown[i] = rename_refs(lines[i], renamed)
    renamed.last = (lines, shown)
    return "\n".join(shown)
