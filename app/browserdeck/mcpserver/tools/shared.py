"""What several tool groups share: page lines, notes, snapshots after an action."""

from __future__ import annotations

import json
from typing import Any

from browserdeck import results as r
from browserdeck.engine import options as o
from browserdeck.engine import pagetext
from browserdeck.engine.consequences import NOTHING
from browserdeck.mcpserver import output, snapshot, snapshot_search
from browserdeck.mcpserver.context import Call, Reply

# --- shared ------------------------------------------------------------------


def _dump(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _page_line(data: r.TabResult) -> str:
    """``page: "<title>" — <url>``: the title quoted (pagetext.py), as every page value."""
    title, url = data.title, data.url
    if not url:
        return ""
    shown = pagetext.url(url)
    return f"page: {pagetext.quote(title)} — {shown}" if title else f"page: {shown}"


def _notes(data: r.TabResult | None) -> list[str]:
    """What an answer says happened besides the action itself (dialogs, downloads)."""
    if data is None:
        return []
    notes: list[str] = []
    # What the action caused (engine/consequences.py), one line; "nothing" goes unsaid.
    if data.outcome and data.outcome != NOTHING:
        notes.append(data.outcome)
    for dialog in data.dialogs or []:
        if dialog.type == "filechooser":
            notes.append(f"the file chooser got {', '.join(dialog.files or [])}")
            continue
        line = f"a {dialog.type} dialog {pagetext.quote(dialog.message or '')} was {dialog.action}"
        if not dialog.armed and dialog.type != "beforeunload":
            line += " (to answer one, call browser_handle_dialog before the action)"
        notes.append(line)
    if data.popups:
        notes.append(f"opened: {', '.join(data.popups)} (browser_tabs lists them)")
    if data.download:
        notes.append(f"download: {_dump(data.download.wire())}")
    if data.note:
        notes.append(data.note)
    return notes


def cut_note(data: r.Snapshot) -> list[str]:
    """What a snapshot the engine cut leaves out, and how to see the rest with this tool."""
    cut = data.truncated
    if cut is None:
        return []
    return [
        f"the page's snapshot was cut at {cut.shown_lines:,} of {cut.total_lines:,} lines "
        f"({cut.shown_chars:,} of {cut.total_chars:,} characters): to see the rest, scope "
        "browser_snapshot with selector or depth"
    ]


async def _finish(call: Call, line: str, data: r.TabResult | None = None) -> Reply:
    parts = [line, *_notes(data)]
    if data is not None and data.navigated and data.url:
        parts.append(_page_line(data))
    if call.args.get("snapshot"):
        parts.append(await _snapshot_text(call, diff=True))
    return Reply("\n".join(p for p in parts if p))


async def _snapshot_text(
    call: Call,
    *,
    diff: bool,
    selector: str | None = None,
    depth: int | None = None,
    full: bool = False,
    viewport: bool = False,
) -> str:
    params: dict[str, Any] = {"format": "ai", "selector": selector, "depth": depth}
    if viewport:
        params["viewport"] = True
    data = await call.on_tab(o.SnapshotOptions.of(params, where=call.spec.name))
    raw = pagetext.escape_snapshot(data.snapshot)
    call.session.seen[call.session.tab or ""] = raw
    # Parsed once, for compact and folded (and not again for the same text).
    roots, body = (None, raw) if full else snapshot.compact_form(raw)
    target = call.session.tab or ""
    header = _page_line(data)
    scoped = selector is not None or depth is not None or full or viewport
    notes = _notes(data) + cut_note(data)
    if not scoped:
        previous = call.session.snapshots.get(target)
        call.session.snapshots[target] = body
        if diff and previous is not None:
            changes = snapshot_search.diff(previous, body)
            if changes is None:
                return "\n".join([header, *notes, "no changes since your last snapshot"])
            if len(changes) < len(body):
                fenced = pagetext.fence(changes, "snapshot changes")
                return "\n".join([header, *notes, "changes since your last snapshot:", fenced])
    text = "\n".join([header, *notes, pagetext.fence(body, "snapshot")])
    cap = call.max_chars
    if full or len(text) <= cap:
        return text
    # Over the cap: fold repeated rows, items and cards so the whole page's shape fits;
    # the unfolded text still goes to a file for clients that can read one.
    room = cap - len(text) + len(body) - 400
    small = snapshot.folded(raw, max(room, 0), roots=roots, size=len(body))
    if small is None or len(small) >= len(body):
        return text  # nothing folds: the server's cap cuts it and saves the whole
    path = output.offload(text, "browser_snapshot")
    note = (
        f"[folded to fit {cap:,} characters: long text is cut short, look-alike rows, items "
        f"and cards may show only their first and last few; the whole snapshot "
        f"({len(body):,} characters) is in {path}]"
    )
    return "\n".join([header, *notes, pagetext.fence(small, "snapshot"), note])
