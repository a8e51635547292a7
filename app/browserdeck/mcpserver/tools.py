"""Every MCP tool: its name, group, schema, and how it maps onto the control API.

Names follow Playwright MCP wherever the action is the same, so prompts and
habits carry over. Groups:

- ``core``: Playwright MCP's core set plus ``browser_profiles`` and
  ``browser_navigate_forward``; what most agents need, with a small schema;
- ``all``: core plus PDF, DOM exploration (unibrowse), images, service workers,
  network sources and offline mode (Phoenix);
- ``code``: ``browser_run_code``/``browser_reset``, only when the ``mcpRunCode``
  setting is on (they run arbitrary Python with Playwright objects in scope).

Actions answer in one short line; ``snapshot: true`` adds what changed on the page.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from browserdeck import imaging
from browserdeck.engine.consequences import NOTHING
from browserdeck.errors import BrowserdeckError, Conflict, InvalidInput, NotFound
from browserdeck.mcpserver import dom, images, snapshot
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import JSON, arr, b, i, n, obj, s

Handler = Callable[[Call], Awaitable[Reply]]
GROUPS = ("core", "all", "code")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    schema: JSON
    handler: Handler
    group: str = "core"
    narrow: str | None = None  # how to ask for less when the output is cut

    def to_mcp(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.schema}


REGISTRY: dict[str, ToolSpec] = {}


def tool(
    name: str, description: str, schema: JSON, *, group: str = "core", narrow: str | None = None
) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        assert group in GROUPS and name not in REGISTRY
        REGISTRY[name] = ToolSpec(name, description, schema, handler, group, narrow)
        return handler

    return register


REF = s("element ref from the snapshot, e.g. e12")
SNAP = b("also return what changed on the page")
# Per call, like the API's and the CLI's waitMs (engine/consequences.py).
WAIT = i("longest wait in ms for what the action caused (navigation, requests); "
         "default: the actionWaitMs setting; 0 = do not wait")
SELECTOR = s("CSS selector (instead of ref)")
# Navigations take the new page's first snapshot before answering (as Playwright MCP
# does): the first snapshot of a document is the expensive one (Playwright compiles its
# injected script for it), and agents ask for a snapshot next; the browser_snapshot that
# follows takes its own, cheap one (a snapshot is never handed out twice, docs/engine.md).
PREPARE_SNAPSHOT = "wait"


# --- shared ------------------------------------------------------------------


def _dump(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _page_line(data: dict[str, Any]) -> str:
    title, url = data.get("title"), data.get("url")
    if not url:
        return ""
    return f"page: {title} — {url}" if title else f"page: {url}"


def _notes(data: Any) -> list[str]:
    """What an API answer says happened besides the action itself (dialogs, downloads)."""
    if not isinstance(data, dict):
        return []
    notes: list[str] = []
    # What the action caused (engine/consequences.py), one line; "nothing" goes unsaid.
    if data.get("outcome") and data["outcome"] != NOTHING:
        notes.append(str(data["outcome"]))
    for dialog in data.get("dialogs") or ([data["dialog"]] if data.get("dialog") else []):
        if not isinstance(dialog, dict):
            notes.append(f"dialog: {dialog}")
            continue
        if dialog.get("type") == "filechooser":
            notes.append(f"the file chooser got {', '.join(dialog.get('files') or [])}")
            continue
        line = (
            f"a {dialog.get('type', '')} dialog {dialog.get('message', '')!r} was "
            f"{dialog.get('action') or 'dismissed'}"
        )
        if not dialog.get("armed") and dialog.get("type") != "beforeunload":
            line += " (to answer one, call browser_handle_dialog before the action)"
        notes.append(line)
    download = data.get("download")
    if download:
        notes.append(f"download: {_dump(download)}")
    if data.get("note"):
        notes.append(str(data["note"]))
    return notes


async def _finish(call: Call, line: str, data: Any = None) -> Reply:
    parts = [line, *_notes(data)]
    if isinstance(data, dict) and data.get("navigated") and data.get("url"):
        parts.append(_page_line(data))
    if call.args.get("snapshot"):
        parts.append(await _snapshot_text(call, diff=True))
    return Reply("\n".join(p for p in parts if p))


def _snapshot_body(data: dict[str, Any]) -> str:
    for key in ("snapshot", "text"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    raise BrowserdeckError(
        "the snapshot route answered without a snapshot",
        hint="this is a browserdeck bug",
        code="internal",
    )


async def _snapshot_text(
    call: Call,
    *,
    diff: bool,
    selector: str | None = None,
    depth: int | None = None,
    full: bool = False,
) -> str:
    params: dict[str, Any] = {"format": "ai", "selector": selector, "depth": depth}
    data = await call.on_tab("GET", "/snapshot", params=params)
    raw = _snapshot_body(data)
    body = raw if full else snapshot.compact(raw)
    target = call.session.tab or ""
    header = _page_line(data)
    scoped = selector is not None or depth is not None or full
    notes = _notes(data)
    if not scoped:
        previous = call.session.snapshots.get(target)
        call.session.snapshots[target] = body
        if diff and previous is not None:
            changes = snapshot.diff(previous, body)
            if changes is None:
                return "\n".join([header, *notes, "no changes since your last snapshot"])
            if len(changes) < len(body):
                return "\n".join([header, *notes, "changes since your last snapshot:", changes])
    return "\n".join([header, *notes, body])


# --- navigation ---------------------------------------------------------------


@tool(
    "browser_navigate",
    "Go to a URL in this session's tab (opens a tab on first use).",
    obj({"url": s()}, ["url"]),
)
async def navigate(call: Call) -> Reply:
    body = {"url": call.args["url"], "prepareSnapshot": PREPARE_SNAPSHOT}
    data = await call.on_tab("POST", "/navigate", json=body, retry_fresh=True)
    status = data.get("status")
    line = _page_line(data) + (f" (HTTP {status})" if status else "")
    return await _finish(call, line, data)


async def _history(call: Call, direction: str) -> Reply:
    data = await call.on_tab(
        "POST", "/navigate", json={"action": direction, "prepareSnapshot": PREPARE_SNAPSHOT}
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
    "only on actionable elements.",
    obj(
        {
            "diff": b("only what changed since your last snapshot"),
            "selector": s("CSS selector to scope to"),
            "depth": i("limit tree depth"),
            "full": b("Playwright's full snapshot, refs on every node"),
        }
    ),
    narrow="Narrow it: browser_find (search), or selector/depth",
)
async def snapshot_tool(call: Call) -> Reply:
    a = call.args
    text = await _snapshot_text(
        call,
        diff=bool(a.get("diff")),
        selector=a.get("selector"),
        depth=a.get("depth"),
        full=bool(a.get("full")),
    )
    return Reply(text)


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
    data = await call.on_tab("GET", "/snapshot", params={"format": "ai"})
    raw = _snapshot_body(data)
    try:
        lines, total = snapshot.find(raw, pattern or text or "", regex=bool(pattern))
    except Exception as exc:  # re.error, with the pattern's own message
        raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
    if not lines:
        return Reply(f"no match for {pattern or text!r} on {data.get('url', 'the page')}")
    more = f"\n({total - len(lines)} more matches not shown)" if total > len(lines) else ""
    return Reply(f"{total} match(es):\n" + "\n".join(lines) + more)


# --- actions --------------------------------------------------------------------


@tool(
    "browser_click",
    "Click an element.",
    obj(
        {
            "ref": REF,
            "doubleClick": b(),
            "button": s(enum=["left", "right", "middle"]),
            "modifiers": arr(s(enum=["Alt", "Control", "ControlOrMeta", "Meta", "Shift"])),
            "snapshot": SNAP,
            "waitMs": WAIT,
        },
        ["ref"],
    ),
)
async def click(call: Call) -> Reply:
    a = call.args
    data = await call.act(
        "click",
        ref=a["ref"],
        doubleClick=a.get("doubleClick"),
        button=a.get("button"),
        modifiers=a.get("modifiers"),
        waitMs=a.get("waitMs"),
    )
    return await _finish(
        call, f"{'double-' if a.get('doubleClick') else ''}clicked {a['ref']}", data
    )


@tool(
    "browser_type",
    "Type text into an editable element (replaces its value).",
    obj(
        {
            "ref": REF,
            "text": s(),
            "submit": b("press Enter after"),
            "slowly": b("one key at a time (fires key handlers)"),
            "snapshot": SNAP,
            "waitMs": WAIT,
        },
        ["ref", "text"],
    ),
)
async def type_text(call: Call) -> Reply:
    a = call.args
    data = await call.act(
        "type",
        ref=a["ref"],
        text=a["text"],
        submit=a.get("submit"),
        slowly=a.get("slowly"),
        waitMs=a.get("waitMs"),
    )
    return await _finish(
        call, f"typed into {a['ref']}" + (" and submitted" if a.get("submit") else ""), data
    )


@tool(
    "browser_press_key",
    "Press a key or chord in the page, e.g. Enter, ArrowDown, Control+a.",
    obj({"key": s(), "snapshot": SNAP, "waitMs": WAIT}, ["key"]),
)
async def press_key(call: Call) -> Reply:
    data = await call.act("press", key=call.args["key"], waitMs=call.args.get("waitMs"))
    return await _finish(call, f"pressed {call.args['key']}", data)


@tool("browser_hover", "Hover over an element.", obj({"ref": REF, "snapshot": SNAP}, ["ref"]))
async def hover(call: Call) -> Reply:
    data = await call.act("hover", ref=call.args["ref"])
    return await _finish(call, f"hovering {call.args['ref']}", data)


@tool(
    "browser_drag",
    "Drag one element onto another.",
    obj(
        {"startRef": REF, "endRef": REF, "snapshot": SNAP, "waitMs": WAIT},
        ["startRef", "endRef"],
    ),
)
async def drag(call: Call) -> Reply:
    a = call.args
    data = await call.act(
        "drag", startRef=a["startRef"], endRef=a["endRef"], waitMs=a.get("waitMs")
    )
    return await _finish(call, f"dragged {a['startRef']} to {a['endRef']}", data)


@tool(
    "browser_select_option",
    "Select option(s) in a <select> by value or label.",
    obj(
        {"ref": REF, "values": arr(s()), "snapshot": SNAP, "waitMs": WAIT}, ["ref", "values"]
    ),
)
async def select_option(call: Call) -> Reply:
    a = call.args
    data = await call.act("select", ref=a["ref"], values=a["values"], waitMs=a.get("waitMs"))
    return await _finish(call, f"selected {', '.join(map(repr, a['values']))} in {a['ref']}", data)


@tool(
    "browser_fill_form",
    "Fill several fields at once.",
    obj(
        {
            "fields": arr(
                obj(
                    {
                        "ref": REF,
                        "type": s("textbox (default), checkbox, radio or combobox"),
                        "value": s(
                            "text; true/false for checkbox/radio; option label for combobox"
                        ),
                    },
                    ["ref", "value"],
                )
            ),
            "snapshot": SNAP,
            "waitMs": WAIT,
        },
        ["fields"],
    ),
)
async def fill_form(call: Call) -> Reply:
    fields = [_fill_field(f) for f in call.args["fields"]]
    data = await call.act("fill", fields=fields, waitMs=call.args.get("waitMs"))
    return await _finish(call, f"filled {len(fields)} field(s)", data)


# Playwright MCP's field types -> the engine's.
_FIELD_TYPES = {
    "textbox": "text",
    "text": "text",
    "slider": "text",
    "checkbox": "checkbox",
    "radio": "radio",
    "combobox": "select",
    "select": "select",
}


def _fill_field(field: dict[str, Any]) -> dict[str, Any]:
    kind = field.get("type")
    out: dict[str, Any] = {"ref": field["ref"], "value": field["value"]}
    if kind is not None:
        if kind not in _FIELD_TYPES:
            raise InvalidInput(
                f"unknown field type {kind!r}", hint="use textbox, checkbox, radio or combobox"
            )
        out["type"] = _FIELD_TYPES[kind]
        if out["type"] in ("checkbox", "radio") and isinstance(out["value"], str):
            out["value"] = out["value"].strip().lower() in ("true", "on", "yes", "1", "checked")
    return out


@tool(
    "browser_resize",
    "Resize the viewport.",
    obj({"width": i(), "height": i()}, ["width", "height"]),
)
async def resize(call: Call) -> Reply:
    a = call.args
    if a["width"] <= 0 or a["height"] <= 0:
        raise InvalidInput(
            f"invalid size {a['width']}x{a['height']}: width and height must be positive"
        )
    data = await call.act("resize", width=a["width"], height=a["height"])
    return await _finish(call, f"viewport is {a['width']}x{a['height']}", data)


@tool(
    "browser_wait_for",
    "Wait for text to appear or disappear, a selector, the network to go quiet, or a time.",
    obj(
        {
            "text": s(),
            "textGone": s(),
            "selector": s(),
            "networkQuiet": b("until no request has been in flight for 500 ms"),
            "time": n("seconds"),
        }
    ),
)
async def wait_for(call: Call) -> Reply:
    a = call.args
    if not any(a.get(k) for k in ("text", "textGone", "selector", "networkQuiet")) and (
        "time" not in a
    ):
        raise InvalidInput("browser_wait_for needs text, textGone, selector, networkQuiet or time")
    time_ms = round(float(a["time"]) * 1000) if "time" in a else None
    data = await call.act(
        "wait",
        text=a.get("text"),
        textGone=a.get("textGone"),
        selector=a.get("selector"),
        networkQuiet=a.get("networkQuiet") or None,
        timeMs=time_ms,
    )
    what = (
        f"text {a['text']!r} appeared"
        if "text" in a
        else f"text {a['textGone']!r} is gone"
        if "textGone" in a
        else f"{a['selector']!r} appeared"
        if "selector" in a
        else "the network is quiet"
        if a.get("networkQuiet")
        else f"waited {a['time']} s"
    )
    return await _finish(call, what, data)


@tool(
    "browser_evaluate",
    "Run a JavaScript function in the page, e.g. () => document.title; "
    "with ref it gets the element: (el) => el.value.",
    obj({"function": s(), "ref": REF}, ["function"]),
    narrow="Return less from the function (a field, a slice)",
)
async def evaluate(call: Call) -> Reply:
    data = await call.act("evaluate", fn=call.args["function"], ref=call.args.get("ref"))
    result = data.get("result") if isinstance(data, dict) and "result" in data else data
    return Reply("\n".join([_dump(result), *_notes(data)]))


@tool(
    "browser_file_upload",
    "Set files on a file input. With ref (the input, or the button that opens the chooser) "
    "it happens now; without, it answers the next file chooser.",
    obj({"paths": arr(s(), "absolute paths"), "ref": REF, "waitMs": WAIT}, ["paths"]),
)
async def file_upload(call: Call) -> Reply:
    a = call.args
    # The API allows only files inside these roots and uploadRoots (issue 10 item 5).
    body: dict[str, Any] = {"paths": a["paths"], "roots": await call.roots()}
    if a.get("waitMs") is not None:
        body["waitMs"] = a["waitMs"]
    if a.get("ref"):
        # An <input type=file> takes the files directly; anything else is clicked and the
        # file chooser it opens gets them.
        probe = await call.act(
            "evaluate", ref=a["ref"], fn="(el) => el.localName === 'input' && el.type === 'file'"
        )
        body["inputRef" if probe.get("result") is True else "ref"] = a["ref"]
    data = await call.on_tab("POST", "/hooks/file-chooser", json=body)
    done = (
        f"uploaded {len(a['paths'])} file(s) via {a['ref']}"
        if a.get("ref")
        else (
            f"armed: the next file chooser gets {len(a['paths'])} file(s); now click the upload "
            "button"
        )
    )
    return await _finish(call, done, data)


@tool(
    "browser_handle_dialog",
    "Answer the next alert/confirm/prompt dialog; call it before the action that opens it.",
    obj({"accept": b(), "promptText": s()}, ["accept"]),
)
async def handle_dialog(call: Call) -> Reply:
    a = call.args
    data = await call.on_tab(
        "POST", "/hooks/dialog", json={"accept": a["accept"], "promptText": a.get("promptText")}
    )
    verb = "accept" if a["accept"] else "dismiss"
    return await _finish(
        call,
        f"armed: the next dialog will be {verb}ed"
        + (f" with {a['promptText']!r}" if a.get("promptText") else ""),
        data,
    )


# --- screenshot, console, network, pdf ----------------------------------------------


@tool(
    "browser_take_screenshot",
    "Screenshot of this tab (viewport, full page or one element) as an image; labels draws "
    "each ref's box on it. Use browser_snapshot to act.",
    obj(
        {
            "ref": REF,
            "fullPage": b(),
            "labels": b("label refs on the image"),
            "type": s(enum=["png", "jpeg"]),
        }
    ),
)
async def screenshot(call: Call) -> Reply:
    a = call.args
    limit = call.app.max_image_dimension()
    body = {
        "ref": a.get("ref"),
        "fullPage": a.get("fullPage"),
        "labels": a.get("labels"),
        "type": a.get("type"),
        "inline": True,
        "maxWidth": limit,
        "maxHeight": limit,
    }
    data = await call.on_tab(
        "POST", "/screenshot", json={k: v for k, v in body.items() if v is not None}
    )
    raw = _image_bytes(data)
    w, h = data.get("width"), data.get("height")
    if isinstance(w, int) and isinstance(h, int) and max(w, h) <= limit:
        # The engine already fitted it: no need to look inside the image again.
        fitted, mime = raw, "image/jpeg" if data.get("type") == "jpeg" else "image/png"
    else:
        fitted_image = imaging.fit(raw, limit, limit)
        fitted, mime = fitted_image.data, fitted_image.mime
        w, h = fitted_image.width, fitted_image.height
    reply = Reply(narrow="Take it without labels, or of one element (ref)")
    reply.add_image(fitted, mime)
    lines = [f"screenshot {w}x{h}" + (f", saved to {data['path']}" if data.get("path") else "")]
    labels = data.get("labels") or []
    if labels:
        lines.append("labels (ref: x,y width x height, in image pixels):")
    for label in labels:
        box = label.get("box") or {}
        lines.append(
            f"{label.get('ref')}: {box.get('x')},{box.get('y')} "
            f"{box.get('width')}x{box.get('height')}"
        )
    if data.get("unplaced"):
        # Boxed in the image but with no room for a badge: the agent must know which.
        lines.append("no room for a badge (boxed, not labelled): " + ", ".join(data["unplaced"]))
    if data.get("note"):
        lines.append(str(data["note"]))
    reply.text = "\n".join(lines)
    return reply


def _image_bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    for key in ("base64", "data", "image"):
        if isinstance(data.get(key), str):
            return Reply.b64(data[key])
    if data.get("path"):
        from pathlib import Path

        return Path(str(data["path"])).read_bytes()
    raise BrowserdeckError(
        "the screenshot route answered without an image",
        code="internal",
        hint="this is a browserdeck bug",
    )


def _entry_time(entry: dict[str, Any]) -> float:
    for key in ("time", "timestamp", "ts"):
        value = entry.get(key)
        if isinstance(value, int | float):
            return float(value)
    return 0.0


@tool(
    "browser_console_messages",
    "Console messages of this tab, tagged [page]/[worker]/[service-worker]; clear: true hides "
    "them from later calls.",
    obj({"level": s(enum=["error", "warning", "info", "debug"]), "clear": b("mark all as read")}),
    narrow="Ask for level: error, or clear: true and call again after the next action",
)
async def console_messages(call: Call) -> Reply:
    a = call.args
    data = await call.on_tab("GET", "/console", params={"level": a.get("level")})
    entries = [e for e in _list_of(data, "messages", "console") if isinstance(e, dict)]
    errors = [e for e in _list_of(data, "errors", "pageErrors") if isinstance(e, dict)]
    target = call.session.tab or ""
    mark = call.session.console_cleared.get(target, float("-inf"))
    rows = [(_entry_time(e), _console_line(e)) for e in entries]
    rows += [
        (_entry_time(e), "[page] uncaught: " + str(e.get("message") or e.get("text") or e))
        for e in errors
        if a.get("level") in (None, "error", "warning", "info", "debug")
    ]
    rows = sorted(
        (r for r in rows if r[0] > mark or (r[0] == 0.0 and mark == float("-inf"))),
        key=lambda r: r[0],
    )
    if a.get("clear"):
        newest = max([mark, *(t for t, _ in rows)], default=mark)
        call.session.console_cleared[target] = max(newest, 1.0)
    if not rows:
        return Reply(
            "no console messages" + (" since the last clear" if mark > float("-inf") else "")
        )
    text = "\n".join(line for _, line in rows)
    if a.get("clear"):
        text += f"\n({len(rows)} message(s) cleared)"
    return Reply(text)


def _list_of(data: Any, *keys: str) -> list[Any]:
    if isinstance(data, list):
        return data if keys[0] in ("messages", "console") else []
    if isinstance(data, dict):
        for key in keys:
            value = data.get(key)
            if isinstance(value, list):
                return value
    return []


def _console_line(e: dict[str, Any]) -> str:
    where = str(e.get("context") or e.get("source") or "page")
    where = {"serviceworker": "service-worker", "service_worker": "service-worker"}.get(
        where, where
    )
    level = e.get("type") or e.get("level") or "log"
    at = f" ({e['url']}:{e.get('line', '')})" if e.get("url") else ""
    return f"[{where}] {level}: {e.get('text', e.get('message', ''))}{at}"


@tool(
    "browser_network_requests",
    "Network requests this tab made (method, status, URL).",
    obj({"filter": s("only URLs containing this")}),
    narrow="Pass filter to see fewer requests",
)
async def network_requests(call: Call) -> Reply:
    data = await call.on_tab("GET", "/console")
    needle = (call.args.get("filter") or "").lower()
    rows = []
    for r in _list_of(data, "requests", "network"):
        if not isinstance(r, dict) or needle not in str(r.get("url", "")).lower():
            continue
        status = r.get("status") or r.get("failure") or "pending"
        rows.append(
            f"{r.get('method', 'GET')} {status} {r.get('url')}"
            + (f" ({r['resourceType']})" if r.get("resourceType") else "")
        )
    return Reply(
        "\n".join(rows)
        if rows
        else "no requests recorded" + (f" matching {needle!r}" if needle else "")
    )


@tool(
    "browser_pdf_save",
    "Save this tab as a PDF (headless browsers only).",
    obj({"filename": s("where to write it")}),
    group="all",
)
async def pdf_save(call: Call) -> Reply:
    from browserdeck import confine
    from browserdeck.mcpserver.output import write_output

    filename = call.args.get("filename")
    # Checked before the PDF is made: a refused name fails fast and writes nothing.
    name = confine.output_name(str(filename)) if filename else None
    data = await call.on_tab("POST", "/pdf", json={"inline": bool(filename)})
    if name is not None:
        folder = call.app.output_folder(await call.roots())
        target = write_output(folder, name, Reply.b64(str(data["base64"])))
        return Reply(f"saved PDF ({data.get('bytes', 0):,} bytes) to {target}")
    return Reply(f"saved PDF ({data.get('bytes', 0):,} bytes) to {data.get('path')}")


# --- tabs, profiles, close ------------------------------------------------------------


@tool(
    "browser_tabs",
    "List, open (new), select or close tabs. Tabs of other agents are refused unless force.",
    obj(
        {
            "action": s(enum=["list", "new", "select", "close"]),
            "targetId": s("tab id or unique prefix (from list)"),
            "index": i("tab index from list"),
            "url": s("for new"),
            "force": b("act on another agent's tab"),
        },
        ["action"],
    ),
)
async def tabs(call: Call) -> Reply:
    a = call.args
    action = a["action"]
    if action == "new":
        opened = await call.api("POST", "/tabs/open", json={"url": a.get("url") or "about:blank"})
        target = str(opened["targetId"])
        call.app.claims.claim(await call.profile_name(), target, call.session.owner)
        call.session.tab = target
        return Reply(f"opened tab {target[:8]} and made it current: {opened.get('url', '')}")
    if action == "list":
        return Reply(await _tab_list(call))
    listed = await call.tabs()
    if "index" in a:
        if not 0 <= a["index"] < len(listed):
            raise NotFound(
                f"no tab at index {a['index']} ({len(listed)} tabs)",
                hint="list tabs with browser_tabs action=list",
            )
        target = str(listed[a["index"]]["targetId"])
    elif a.get("targetId"):
        target = a["targetId"]
    elif action == "close" and call.session.tab:
        target = call.session.tab
    else:
        raise InvalidInput(f"browser_tabs action={action} needs targetId or index")
    if action == "select":
        tab = await call.select_tab(target, force=bool(a.get("force")))
        return Reply(
            f"current tab is now {tab['targetId'][:8]}: {tab.get('title', '')} — "
            f"{tab.get('url', '')}"
        )
    return Reply(await _close_tab(call, target, force=bool(a.get("force"))))


async def _close_tab(call: Call, target: str, *, force: bool) -> str:
    from browserdeck.mcpserver.context import resolve_tab

    profile = await call.profile_name()
    tab = resolve_tab(await call.tabs(), target)
    target_id = str(tab["targetId"])
    holder = call.app.claims.owner_of(profile, target_id)
    if holder is not None and holder.owner != call.session.owner.id and not force:
        raise Conflict(
            f"tab {target_id[:8]} belongs to another agent ({holder.label})",
            hint="close your own tabs, or pass force: true",
            code="tab_owned",
        )
    await call.api("DELETE", f"/tabs/{target_id}")
    call.app.claims.release(call.session.owner, profile, target_id)
    call.forget_tab(target_id)
    return f"closed tab {target_id[:8]}"


async def _tab_list(call: Call) -> str:
    profile = await call.profile_name()
    listed = await call.tabs()
    call.app.claims.prune(profile, {t["targetId"] for t in listed})
    owners = call.app.claims.owners(profile)
    if not listed:
        return f"no tabs in profile {profile}"
    lines = []
    for k, t in enumerate(listed):
        tid = str(t["targetId"])
        holder = owners.get(tid)
        mine = holder is None or holder.owner == call.session.owner.id
        if holder is not None and not mine:
            mark = f"held by {holder.label}"
        elif tid == call.session.tab:
            mark = "current, yours"
        elif holder is not None:
            mark = "yours"
        else:
            mark = "free"
        lines.append(f"{k}. {tid[:8]} [{mark}] {t.get('title') or '(untitled)'} — {t.get('url')}")
    return f"profile {profile}:\n" + "\n".join(lines)


@tool("browser_close", "Close this session's tab (the browser stays up for other agents).", obj())
async def close(call: Call) -> Reply:
    if call.session.tab is None:
        return Reply("this session has no tab open")
    return Reply(await _close_tab(call, call.session.tab, force=False))


@tool(
    "browser_profiles",
    "Browser profiles: list, start, stop, or use one for this session's next calls.",
    obj({"action": s(enum=["list", "start", "stop", "use"]), "name": s()}, ["action"]),
)
async def profiles(call: Call) -> Reply:
    a = call.args
    action, name = a["action"], a.get("name")
    if action == "list":
        data = await call.app.backend.request("GET", "/profiles")
        current = call.session.profile or data.get("defaultProfile")
        lines = []
        for p in data.get("profiles", []):
            bits = [p.get("driver", ""), "running" if p.get("running") else p.get("state", "")]
            if p.get("running"):
                bits.append(f"{p.get('tabs', 0)} tab(s)")
            mark = "* " if p.get("profile") == current else "  "
            lines.append(
                f"{mark}{p.get('profile')} ({', '.join(b for b in bits if b)})"
                + (" — default" if p.get("default") else "")
            )
        return Reply("\n".join(lines) + "\n(* = this session's profile)")
    if not name:
        raise InvalidInput(
            f"browser_profiles action={action} needs name", hint="list profiles with action=list"
        )
    if action == "use":
        status = await call.app.backend.request("GET", "/", params={"profile": name})
        if call.session.tab is not None:
            call.app.claims.release(call.session.owner, await call.profile_name())
        call.session.profile = name
        call.session.resolved_profile = name
        call.session.tab = None
        return Reply(
            f"this session now uses profile {name} ({status.get('driver')}, "
            f"{'running' if status.get('running') else 'not running yet'})"
        )
    data = await call.app.backend.request(
        "POST", f"/{action}", params={"profile": name}, headers=call.session_headers()
    )
    return Reply(
        f"profile {name}: {data.get('state', 'done')}"
        + (f" ({data['detail']})" if data.get("detail") else "")
    )


# --- DOM exploration (all) -------------------------------------------------------------


async def _page_fn(call: Call, body: str, args: dict[str, Any], *, ref: str | None = None) -> Any:
    fn = dom.function(body, args, with_element=ref is not None)
    data = await call.act("evaluate", fn=fn, ref=ref)
    return data.get("result") if isinstance(data, dict) and "result" in data else data


def _target(call: Call) -> tuple[str | None, dict[str, Any]]:
    ref, selector = call.args.get("ref"), call.args.get("selector")
    if not ref and not selector:
        raise InvalidInput(
            f"{call.spec.name} needs ref or selector",
            hint="take refs from browser_snapshot, or pass a CSS selector",
        )
    return ref, {"selector": selector}


EL = {"ref": REF, "selector": SELECTOR}


@tool(
    "browser_query_dom",
    "Elements matching a CSS selector: tag, id, class, text, visibility.",
    obj({"selector": s(), "limit": i("default 10")}, ["selector"]),
    group="all",
    narrow="Use a narrower selector or a lower limit",
)
async def query_dom(call: Call) -> Reply:
    a = call.args
    return Reply(
        _dump(
            await _page_fn(
                call, dom.QUERY_DOM, {"selector": a["selector"], "limit": a.get("limit", 10)}
            )
        )
    )


@tool(
    "browser_visible_text",
    "The visible text of the page or of one element, in reading order.",
    obj({**EL, "maxChars": i("default 8000")}),
    group="all",
    narrow="Scope it to an element (ref or selector)",
)
async def visible_text(call: Call) -> Reply:
    a = call.args
    data = await _page_fn(
        call,
        dom.VISIBLE_TEXT,
        {"selector": a.get("selector"), "maxChars": a.get("maxChars", 8000)},
        ref=a.get("ref"),
    )
    text = data.get("text", "") if isinstance(data, dict) else _dump(data)
    more = (
        " (cut; raise maxChars or scope it)"
        if isinstance(data, dict) and data.get("truncated")
        else ""
    )
    return Reply(text + more)


@tool(
    "browser_computed_styles",
    "Computed CSS of an element (common properties, or those named).",
    obj({**EL, "properties": arr(s())}),
    group="all",
)
async def computed_styles(call: Call) -> Reply:
    ref, args = _target(call)
    args["properties"] = call.args.get("properties") or []
    return Reply(_dump(await _page_fn(call, dom.COMPUTED_STYLES, args, ref=ref)))


@tool(
    "browser_check_visibility",
    "Is an element visible, in the viewport, covered by another? With its box.",
    obj(EL),
    group="all",
)
async def check_visibility(call: Call) -> Reply:
    ref, args = _target(call)
    return Reply(_dump(await _page_fn(call, dom.CHECK_VISIBILITY, args, ref=ref)))


@tool("browser_attributes", "All attributes of an element.", obj(EL), group="all")
async def attributes(call: Call) -> Reply:
    ref, args = _target(call)
    return Reply(_dump(await _page_fn(call, dom.ATTRIBUTES, args, ref=ref)))


@tool(
    "browser_count_elements",
    "How many elements match each CSS selector.",
    obj({"selectors": arr(s())}, ["selectors"]),
    group="all",
)
async def count_elements(call: Call) -> Reply:
    return Reply(
        _dump(await _page_fn(call, dom.COUNT_ELEMENTS, {"selectors": call.args["selectors"]}))
    )


@tool(
    "browser_page_metadata",
    "Title, URL, language, meta/OpenGraph tags, headings, counts.",
    obj(),
    group="all",
)
async def page_metadata(call: Call) -> Reply:
    return Reply(_dump(await _page_fn(call, dom.PAGE_METADATA, {})))


@tool(
    "browser_find_by_text",
    "Elements whose own text contains (or equals) the given text.",
    obj({"text": s(), "exact": b(), "limit": i("default 20")}, ["text"]),
    group="all",
    narrow="Use exact: true or a longer text",
)
async def find_by_text(call: Call) -> Reply:
    a = call.args
    return Reply(
        _dump(
            await _page_fn(
                call,
                dom.FIND_BY_TEXT,
                {"text": a["text"], "exact": bool(a.get("exact")), "limit": a.get("limit", 20)},
            )
        )
    )


@tool(
    "browser_form_values",
    "Current values of every field of the page's forms (or of one).",
    obj(EL),
    group="all",
)
async def form_values(call: Call) -> Reply:
    a = call.args
    return Reply(
        _dump(
            await _page_fn(call, dom.FORM_VALUES, {"selector": a.get("selector")}, ref=a.get("ref"))
        )
    )


@tool(
    "browser_element_state",
    "State of an element: visible, enabled, editable, focused, checked, value...",
    obj(EL),
    group="all",
)
async def element_state(call: Call) -> Reply:
    ref, args = _target(call)
    return Reply(_dump(await _page_fn(call, dom.ELEMENT_STATE, args, ref=ref)))


# --- Phoenix extras (all) ------------------------------------------------------------------


@tool(
    "browser_read_image",
    "Read a local image file (PNG/JPEG/GIF/WebP) and return it, downscaled, as an image.",
    obj({"path": s()}, ["path"]),
    group="all",
)
async def read_image(call: Call) -> Reply:
    from browserdeck import confine

    # The same rule as uploads: only files in the client's roots and uploadRoots.
    roots = confine.allowed_roots(await call.roots(), call.app.settings().upload_roots)
    path = str(confine.readable_file(call.args["path"], roots, what="read"))
    data, mime, (w, h), size = images.read(path, call.app.max_image_dimension())
    reply = Reply(f"image {call.args['path']} ({mime}, {size:,} bytes, shown at {w}x{h})")
    reply.add_image(data, mime)
    return reply


@tool(
    "browser_service_workers",
    "Service worker registrations of this tab's origin and their state.",
    obj(),
    group="all",
)
async def service_workers(call: Call) -> Reply:
    return Reply(_dump(await _page_fn(call, dom.SERVICE_WORKERS, {})))


@tool(
    "browser_network_sources",
    "Where this page's resources came from: network, HTTP cache or service worker.",
    obj({"limit": i("default 50")}),
    group="all",
    narrow="Lower the limit",
)
async def network_sources(call: Call) -> Reply:
    return Reply(
        _dump(await _page_fn(call, dom.NETWORK_SOURCES, {"limit": call.args.get("limit", 50)}))
    )


@tool(
    "browser_set_offline",
    "Emulate offline (true) or back online (false) for this tab and its origin's service workers.",
    obj({"offline": b()}, ["offline"]),
    group="all",
)
async def set_offline(call: Call) -> Reply:
    offline = bool(call.args["offline"])
    data = await call.on_tab("POST", "/set/offline", json={"offline": offline})
    if not offline:
        return await _finish(call, "back online", data)
    workers = [str(w) for w in data.get("serviceWorkers") or []]
    line = "offline: network requests of this tab fail"
    if workers:
        # Shared with every tab of the origin: say so, it surprises.
        line += f"; so do those of its service worker(s) {', '.join(workers)} (for every tab "
        line += "of that origin)"
    return await _finish(call, line, data)


# --- code (opt-in: mcpRunCode) -------------------------------------------------------------


@tool(
    "browser_run_code",
    "Run Python with Playwright objects in scope: page (this tab), context, browser, state "
    "(a dict kept between calls). Use await; return a value. Runs in its own process; "
    "stopped after timeout seconds (default 30).",
    obj({"code": s(), "timeout": n("seconds, default 30, at most 300")}, ["code"]),
    group="code",
    narrow="Return less",
)
async def run_code(call: Call) -> Reply:
    from browserdeck.mcpserver import runcode

    return Reply(await runcode.run(call, call.args["code"], call.args.get("timeout")))


@tool("browser_reset", "Drop browser_run_code's connection and state.", obj(), group="code")
async def reset(call: Call) -> Reply:
    from browserdeck.mcpserver import runcode

    await runcode.reset(call.session)
    return Reply("reset: the next browser_run_code starts fresh")
