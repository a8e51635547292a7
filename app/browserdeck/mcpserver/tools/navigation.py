"""Navigation, snapshot and find (core)."""

from __future__ import annotations

from browserdeck.engine import options as o
from browserdeck.engine import pagetext
from browserdeck.errors import InvalidInput, NotFound
from browserdeck.mcpserver import snapshot, snapshot_search
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import b, field, from_model, obj, s
from browserdeck.mcpserver.tools.registry import PREPARE_SNAPSHOT, tool
from browserdeck.mcpserver.tools.shared import _finish, _page_line, _snapshot_text, cut_note

# --- navigation ---------------------------------------------------------------


@tool(
    "browser_navigate",
    "Go to a URL in this session's tab (opens a tab on first use).",
    from_model(o.NavigateOptions, "url", required=["url"]),
)
async def navigate(call: Call) -> Reply:
    body = {"url": call.args["url"], "prepareSnapshot": PREPARE_SNAPSHOT}
    data = await call.on_tab(o.NavigateOptions.of(body, where=call.spec.name), retry_fresh=True)
    line = _page_line(data) + (f" (HTTP {data.status})" if data.status else "")
    return await _finish(call, line, data)


async def _history(call: Call, direction: str) -> Reply:
    data = await call.on_tab(
        o.NavigateOptions.of({"action": direction, "prepareSnapshot": PREPARE_SNAPSHOT})
    )
    return await _finish(call, _page_line(data) or f"went {direction}", data)


@tool("browser_navigate_back", "Go back in this tab's history.", obj())
async def navigate_back(call: Call) -> Reply:
    return await _history(call, "back")


@tool("browser_navigate_forward", "Go forward in this tab's history.", obj())
async def navigate_forward(call: Call) -> Reply:
    return await _history(call, "forward")


# --- snapshot and search ------------------------------------------------------


@tool(
    "browser_snapshot",
    "Accessibility snapshot of this tab; act on elements by their [ref=eN]. Compact: refs "
    "only on actionable elements. Over the size cap, look-alike rows/items/cards fold; a "
    "fold line says how to see them (ref + range).",
    obj(
        {
            "diff": b("only what changed since your last snapshot"),
            "selector": field(o.SnapshotOptions, "selector"),
            "depth": field(o.SnapshotOptions, "depth"),
            "full": b("Playwright's full snapshot, refs on every node"),
            "viewport": field(o.SnapshotOptions, "viewport"),
            "ref": s("with range: show these children of this element (from a fold line)"),
            "range": s('children to show, 1-based, e.g. "4-197"'),
        }
    ),
    narrow="Narrow it: browser_find (search), or selector/depth",
)
async def snapshot_tool(call: Call) -> Reply:
    a = call.args
    if a.get("ref"):
        return Reply(await _expand(call, str(a["ref"]), a.get("range")))
    if a.get("range"):
        raise InvalidInput("range needs ref", hint="pass both, as a fold line shows them")
    text = await _snapshot_text(
        call,
        diff=bool(a.get("diff")),
        selector=a.get("selector"),
        depth=a.get("depth"),
        full=bool(a.get("full")),
        viewport=bool(a.get("viewport")),
    )
    return Reply(text)


def _range(raw: str | None) -> tuple[int, int | None]:
    """``"4-197"`` -> (4, 197); ``"12"`` -> (12, 12); None -> everything."""
    if raw is None:
        return 1, None
    text = str(raw).replace("–", "-").replace(" ", "")
    first, _, last = text.partition("-")
    try:
        a = int(first)
        b = int(last) if last else a
    except ValueError:
        a = b = 0
    if a < 1 or b < a:
        raise InvalidInput(
            f"range {raw!r} is not a range of children",
            hint='1-based and inclusive, e.g. "4-197" (as a fold line shows it)',
        )
    return a, b


async def _expand(call: Call, ref: str, span: str | None) -> str:
    """Children of one element of a new full snapshot (a fold line's ref + range)."""
    first, last = _range(span)
    data = await call.on_tab(o.SnapshotOptions(format="ai"))
    raw = pagetext.escape_snapshot(data.snapshot)
    call.session.seen[call.session.tab or ""] = raw
    ref = ref.strip().removeprefix("@").removeprefix("ref=")
    found = snapshot.expand(raw, ref, first, last if last is not None else 1_000_000)
    if found is None:
        raise NotFound(
            f"ref {ref} is not on the page now",
            hint="take a new browser_snapshot and use the ref its fold line gives",
            code="unknown_ref",
        )
    text, total = found
    if first > total:
        return f"{_page_line(data)}\n{ref} has {total} children; nothing at {first}"
    shown_last = min(last if last is not None else total, total)
    return "\n".join(
        [
            _page_line(data),
            f"{ref}: children {first}–{shown_last} of {total}",
            pagetext.fence(text, "snapshot"),
        ]
    )


@tool(
    "browser_find",
    "Search this tab's snapshot for text (case-insensitive) or a regex (/re/i); returns "
    "matching lines with refs. Cheaper than a snapshot.",
    obj({"text": s(), "regex": s()}),
    narrow="Use a more specific text or regex",
)
async def find(call: Call) -> Reply:
    text, pattern = call.args.get("text"), call.args.get("regex")
    if bool(text) == bool(pattern):
        raise InvalidInput(
            "browser_find needs text or regex (one of them)",
            hint='e.g. {"text": "Sign in"} or {"regex": "/price|total/i"}',
        )
    data = await call.on_tab(o.SnapshotOptions(format="ai"))
    raw = pagetext.escape_snapshot(data.snapshot)
    call.session.seen[call.session.tab or ""] = raw
    try:
        lines, total = snapshot_search.find(raw, pattern or text or "", regex=bool(pattern))
    except Exception as exc:  # re.error, with the pattern's own message
        raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
    if not lines:
        where = pagetext.url(data.url) if data.url else "the page"
        return Reply(f"no match for {pattern or text!r} on {where}")
    more = f"\n({total - len(lines)} more matches not shown)" if total > len(lines) else ""
    cut = "".join(f"\n(searched what was shown: {note})" for note in cut_note(data))
    return Reply(
        f"{total} match(es):\n"
        + pagetext.fence("\n".join(lines), "snapshot lines")
        + more
        + cut
    )
