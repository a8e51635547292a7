"""The agent session's own recording (group all): written out as a file a person opens."""

from __future__ import annotations

from browserdeck.door import admin
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import from_model
from browserdeck.mcpserver.tools.registry import tool

_OPENS = {
    "trace": "open it with `npx playwright show-trace <file>` or at trace.playwright.dev",
    "html": "one file, images inlined: open it in any browser",
    "video": "a WebM of each action's images before and after",
}


@tool(
    "browser_session_export",
    "Write this session's recording (every call so far, with screenshots before and after "
    "each action; typed text and passwords hidden) to a file for a person: a Playwright "
    "trace, an HTML report or a WebM video. Answers the file's path.",
    from_model(admin.ExportSession, "format"),
    group="all",
)
async def session_export(call: Call) -> Reply:
    caller = call.caller()
    request = admin.ExportSession.of(
        {"format": call.args.get("format"), "session": caller.session or ""},
        where="browser_session_export",
    )
    done = await call.app.deck.export_session(caller, request)
    return Reply(f"wrote {done.path} ({done.bytes:,} bytes): {_OPENS[done.format]}")
