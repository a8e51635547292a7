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

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from browserdeck.engine import snapshot_text as st
from browserdeck.engine.actionable import ACTIONABLE_ROLES
from browserdeck.engine.state import (
    PageState,
    RefMap,
    RefMode,
    RefRow,
    RefTable,
    TargetMemory,
)

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
    """A tab's last ref table build: what it was built from and what it gave.

    The text is kept as its lines only (``"\\n".join(lines)`` is the text): they are
    what the next build compares, and the renames' last lines are these same strings
    (``rename_text``), so a tab holds one copy of its text.
    """

    inputs: tuple[object, ...]  # format, depth, frame, the documents' keys
    numbering: tuple[object, ...]  # the tab's numbering the build left
    lines: list[str]  # the text's lines
    readings: list[st.ScanLine | None] | None  # each line as the scan read it (None: quoted)
    rows: dict[str, RefRow]
    renamed: Renames


# Every tab's last build together is bounded (as the line memory is, module-wide): up to
# 50 tabs (TARGET_MEMORY_MAX) each keeping a text of up to KEEP_CHARS would hold 73-161 MB
# (1.5-3.2 MB a text at the limit: its lines, their readings where the line memory let
# go of them, the renamed lines; docs/performance.md). A build counts its text's
# characters (twice when its refs are renamed: the renamed lines too); once all of them pass KEPT_BUDGET the least recently built tab's build is
# dropped (that tab's next snapshot is scanned afresh, as its first was). 1,000,000
# characters: every tab of 50 with a page of 20,000 characters, or the 6 last used
# tabs at the size limit (3 renamed); 4-14 MB in all at the limit (measured, against
# 46-254 MB unbounded). The tab an agent acts on is the one built last: it keeps its
# build.
KEPT_BUDGET = 1_000_000
_KEPT: OrderedDict[int, tuple[weakref.ref[TargetMemory], int]] = OrderedDict()
_kept_lock = threading.Lock()  # module-wide: sessions may build on several threads
_kept_chars = 0


def _keep(memory: TargetMemory, build: Build | None, chars: int) -> None:
    """Set the tab's last build and bound every tab's together (``KEPT_BUDGET``)."""
    global _kept_chars
    memory.last_build = build
    dropped: list[TargetMemory] = []
    with _kept_lock:
        old = _KEPT.pop(id(memory), None)  # an id reused after its tab went: replaced too
        if old is not None:
            _kept_chars -= old[1]
        if build is not None:
            _KEPT[id(memory)] = (weakref.ref(memory), chars)
            _kept_chars += chars
        while _kept_chars > KEPT_BUDGET and len(_KEPT) > 1:
            _, (ref, weight) = _KEPT.popitem(last=False)
            _kept_chars -= weight
            other = ref()
            if other is not None:
                dropped.append(other)
    for other in dropped:
        other.last_build = None


def _readings(
    text: str, lines: list[str] | None, last: Build | None, changed: list[int] | None
) -> list[st.ScanLine | None]:
    """Each line of ``text`` as the scan reads it; from the last build's where a line is
    the same (only the ``changed`` lines are read: None, the lines cannot be compared)."""
    if (
        lines is not None
        and last is not None
        and last.readings is not None
        and changed is not None
        and len(changed) * 8 < len(lines)
    ):
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
    lines = text.split("\n") if kept else None
    # Where the text differs from the last build's, in C; [] when it is the same text.
    changed = st.changed_lines(last.lines, lines) if last is not None and lines else None
    readings = None
    if changed == []:
        readings = last.readings if last is not None else None
    elif not quoted:
        readings = _readings(text, lines, last, changed)
    if last is not None and lines is not None and (
        changed == [] or (readings is not None and readings is last.readings)
    ):
        # The same readings, numbering and options give the same rows: no scan, no loop.
        same = Build(inputs, last.numbering, lines, readings, last.rows, last.renamed)
        _keep(memory, same, len(text) * (2 if last.renamed else 1))
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
    issued = memory.issued_max  # kept in a local: this loop runs once per ref
    if len(_SPLIT) > _SPLIT_MAX:
        _SPLIT.clear()
    split = _SPLIT.get
    for pw_ref, role, name, chain, interactive, nth in entries:
        # format=role: refs on the actionable roles only (they resolve by role and name)
        if role_only and role not in ACTIONABLE_ROLES:
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
    build = None
    if lines is not None:
        numbering = (tuple(memory.bases.items()), issued)
        build = Build(inputs, numbering, lines, readings, rows, renamed)
    _keep(memory, build, len(text) * (2 if renamed else 1))  # renamed: its lines too
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


def rename_text(text: str, renamed: Renames, lines: list[str] | None = None) -> str:
    """``rename_refs`` of ``text``, line by line where it differs from the last text.

    ``lines``: ``text.split("\\n")`` when the caller has it (the tab's last build's, so
    the renames hold the same strings, not a copy). The same as renaming the whole text:
    a ref never holds a newline (each is read from one line), so a "[ref=" whose "]" is
    on a later line is left as it is either way.
    """
    if len(text) > st.KEEP_CHARS:
        return rename_refs(text, renamed)
    if lines is None:
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
