"""Snapshots: Playwright's AI snapshot (format ai/role) and the raw AX tree (format aria).

Every ai/role snapshot replaces the tab's ref table: only refs of the latest
snapshot are accepted (Playwright itself resolves ``aria-ref=`` against the
latest AI snapshot of each frame, so anything else would be guesswork).
Ref numbers are offset after a new document so they never repeat in a tab.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from browserdeck.engine import actionable, ax, marks
from browserdeck.engine import snapshot_text as st
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.options import DEFAULT_MAX_CHARS, SnapshotOptions
from browserdeck.engine.reftable import Renames, build_table, rename_refs, rename_text
from browserdeck.engine.state import PageState, PreparedSnapshot, RefMode, RefTable
from browserdeck.errors import NotFound, Unavailable
from browserdeck.results import SnapshotRef, SnapshotStats, SnapshotViewport
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import Locator

log = logging.getLogger(__name__)

SNAPSHOT_TIMEOUT_MS = 20_000


def _scope(state: PageState, opts: SnapshotOptions) -> Locator | None:
    page = state.page
    if opts.frame:
        inner = page.locator(opts.frame).content_frame
        return inner.locator(opts.selector or "body,frameset")
    if opts.selector:
        return page.locator(opts.selector)
    return None


async def ai_text(state: PageState, opts: SnapshotOptions) -> str:
    scope = _scope(state, opts)
    what = "snapshot" + (
        f" of {opts.frame or ''} {opts.selector or ''}".rstrip() if scope is not None else ""
    )
    try:
        with playwright_errors(what, SNAPSHOT_TIMEOUT_MS):
            # boxes only for viewport: they cost a layout read per element.
            boxes = True if opts.viewport else None
            if scope is None:
                return await state.page.aria_snapshot(
                    mode="ai", depth=opts.depth, boxes=boxes, timeout=SNAPSHOT_TIMEOUT_MS
                )
            return await scope.aria_snapshot(
                mode="ai", depth=opts.depth, boxes=boxes, timeout=SNAPSHOT_TIMEOUT_MS
            )
    except Exception as exc:
        message = getattr(exc, "message", str(exc))
        if "does not match any element" in message or (
            scope is not None and "timed out" in message
        ):
            raise NotFound(
                f"{'frame ' + repr(opts.frame) if opts.frame else ''} "
                f"{'selector ' + repr(opts.selector) if opts.selector else ''}".strip()
                + " matches no element on the page",
                hint="check the CSS selector, or take a full snapshot first",
                code="selector_not_found",
            ) from None
        if opts.frame and "<iframe> was expected" in message:
            raise NotFound(
                f"frame {opts.frame!r} names an element that is not an <iframe>",
                hint="give the CSS selector of an <iframe>",
                code="selector_not_found",
            ) from None
        raise


__all__ = ["build_table", "rename_refs", "render", "snapshot"]


def render(
    text: str,
    opts: SnapshotOptions,
    table: RefTable,
    renamed: dict[str, str],
    lines: list[str] | None = None,
) -> str:
    """The snapshot as the agent sees it; ``renamed``: the refs whose name changes;
    ``lines``: ``text.split("\\n")`` when the caller has it (the tab's last build's)."""
    if opts.format == "ai" and not opts.compact and not opts.interactive:
        if not renamed:
            return text  # the common case: Playwright's text as is
        if isinstance(renamed, Renames):  # line by line where the text changed
            return rename_text(text, renamed, lines)
        return rename_refs(text, renamed)
    shown = table.refs.pw_refs()  # every ref of this format, renamed or not

    nodes = st.parse(text)  # a Node per line only when the text is transformed
    nth_of, _ = st.role_counts(nodes)
    keep: list[bool] = []
    for i, node in enumerate(nodes):
        pw_ref = node.ref
        if pw_ref is not None and not node.is_prop:
            ours = shown.get(pw_ref)
            if ours is None:  # not a ref of this format (role: non-interactive)
                node.attrs = node.attrs.replace(f" [ref={pw_ref}]", "")
            else:
                nth = ""
                if opts.format == "role" and (table.refs[ours].count or 0) > 1:
                    nth = f" [nth={nth_of.get(i, 0)}]"
                node.attrs = node.attrs.replace(f" [ref={pw_ref}]", f" [ref={ours}]{nth}")
        if opts.interactive:
            keep.append(bool(pw_ref in shown and node.interactive and not node.is_prop))
        else:
            keep.append(True)

    if opts.interactive:
        lines = [
            n.render(0) if n.role else n.raw.strip() for n, k in zip(nodes, keep, strict=True) if k
        ]
    elif opts.compact:
        lines = [
            n.render(indent) if n.role else " " * indent + n.raw.lstrip()
            for n, indent in st.compact_lines(nodes, keep)
        ]
    else:
        lines = [n.render() if n.role else n.raw for n in nodes]
    return "\n".join(lines)


async def snapshot(state: PageState, opts: SnapshotOptions) -> dict[str, Any]:
    if opts.format == "aria":
        return await ax.snapshot(state, opts)
    prepared, state.prepared = state.prepared, None
    if prepared is not None and prepared.task is not None and not prepared.task.done():
        # Shielded: a caller that gives up must not cancel it for the next one.
        await asyncio.shield(prepared.task)
    return await _take(state, opts)


async def _take(
    state: PageState, opts: SnapshotOptions, *, read: list[str] | None = None
) -> dict[str, Any]:
    """Take a snapshot; "snapshot" goes into ``read`` as soon as Playwright's text is in."""
    mode: RefMode = opts.refs or ("role" if opts.format == "role" else "aria")

    async def text_of() -> tuple[str, dict[str, tuple[str, str]]]:
        text = await ai_text(state, opts)
        if read is not None:
            read.append("snapshot")
        # What the page says is actionable beyond its roles (engine/actionable.py).
        found, inputs = await marks.read(state)
        text, given = actionable.with_input_refs(text, inputs)
        return actionable.with_marks(text, found), given

    async with state.lock:
        # The title (and the viewport's size) cost a round trip each: fetched while
        # Playwright snapshots, and the ref table is built as soon as the text is in, not
        # after them. The title's evaluate waits behind the page's walk in the renderer,
        # and the driver hands it over only once it has rendered the text: 0.1-0.6 ms
        # later mostly, up to 17 ms on a loaded machine (docs/performance.md, "Is the comparison
        # like for like?").
        title_task = asyncio.ensure_future(_title(state))
        size_task = asyncio.ensure_future(_viewport(state)) if opts.viewport else None
        try:
            text, given = await text_of()
            # The table holds every ref of the page, also with viewport: Playwright
            # resolves all of them, and an element scrolled into view later keeps its ref.
            table, shown = build_table(state, text, opts, mode)
            table.inputs = {shown.get(pw, pw): input for pw, input in given.items()}
            build = state.memory.last_build  # this text's, or None (not kept)
            lines = build.lines if build is not None else None
            title = await title_task
            size = await size_task if size_task is not None else None
        finally:  # the snapshot failed or was cancelled: end the round trips it started
            for task in (title_task, size_task):
                if task is None:
                    continue
                if not task.done():
                    task.cancel()  # both at once: the first wait may end ours (cancelled)
                elif not task.cancelled():
                    # Failed beside a snapshot that failed too: the snapshot's error is the
                    # one reported; retrieved, or asyncio logs it as never retrieved.
                    task.exception()
            await aio.cancel_and_wait(title_task)
            await aio.cancel_and_wait(size_task)
        state.table = table  # only once every part of the snapshot is in, as before
    out_text = render(text, opts, table, shown, lines)
    outside = 0
    if opts.viewport:
        assert size is not None
        out_text, outside = st.in_viewport(out_text, *size)
    max_chars = opts.max_chars or DEFAULT_MAX_CHARS
    out_text, truncated = st.truncate(out_text, max_chars=max_chars, max_lines=opts.limit)
    result: dict[str, Any] = {
        "format": opts.format,
        "refsMode": mode,
        "targetId": state.target_id,
        "url": state.page.url,
        "title": title,
        "snapshot": out_text,
        "stats": SnapshotStats(
            lines=out_text.count("\n") + 1 if out_text else 0,
            chars=len(out_text),
            refs=len(table.refs),
            interactive=table.refs.interactive_count(),
        ),
    }
    if truncated:
        result["truncated"] = truncated
    if opts.viewport:
        assert size is not None
        result["viewport"] = SnapshotViewport(width=size[0], height=size[1], outside=outside)
    if opts.format == "role":
        result["refs"] = {
            r.ref: (
                SnapshotRef(role=r.role, name=r.name, nth=r.nth)
                if (r.count or 0) > 1
                else SnapshotRef(role=r.role, name=r.name)
            )
            for r in table.refs.values()
        }
    return result


async def _title(state: PageState) -> str:
    return await state.title()


async def _viewport(state: PageState) -> tuple[int, int]:
    """The layout viewport in CSS pixels, the frame of Playwright's ``[box=]``.

    Asked over CDP, not of the page: a page can redefine ``innerWidth``.
    """
    with playwright_errors("viewport size", SNAPSHOT_TIMEOUT_MS):
        if state.cdp is not None:
            metrics = await state.cdp.send("Page.getLayoutMetrics")
            box = metrics.get("cssLayoutViewport") or {}
            width, height = box.get("clientWidth"), box.get("clientHeight")
            if isinstance(width, (int, float)) and isinstance(height, (int, float)):
                return int(width), int(height)
        size = state.page.viewport_size
    if size is None:
        raise Unavailable(
            "the viewport size of this tab is unknown", hint="take the snapshot without viewport"
        )
    return size["width"], size["height"]


# --- the first snapshot of a new document, taken right after the navigation ------------
#
# The first ai snapshot of a document costs several times a later one: most of it is
# Chromium compiling Playwright's injected script for the new document (a V8 profile of
# it is mostly "(program)", not the snapshot's own JavaScript). POST /navigate with
# prepareSnapshot takes it at once, so the agent's own snapshot is a cheap one.
#
# It is never handed out later in place of a new snapshot: a page changes without any DOM
# mutation (CSS animations and transitions, stylesheets changed through the CSSOM, media
# queries, timers that do either), so no watch can prove an older snapshot still true.
# A snapshot call waits for it if it is still running (they share the tab's lock) and
# then takes its own (docs/engine.md, "Snapshots are never older than the page").


def prepare(state: PageState) -> PreparedSnapshot:
    """Start the first snapshot of the page's new document (in the background)."""
    prepared = PreparedSnapshot(actions=state.actions)
    prepared.task = aio.create_task(
        _prepare(state), name=f"prepare-snapshot-{state.target_id[:8]}"
    )
    state.prepared = prepared
    return prepared


async def _prepare(state: PageState) -> dict[str, Any] | None:
    try:
        return await _take(state, SnapshotOptions())
    except Exception as exc:  # the page went away or navigated again: no matter
        log.debug("prepared snapshot of %s: %s", state.target_id[:8], exc)
        return None
