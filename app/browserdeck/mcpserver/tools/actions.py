"""Actions on the page: click, type, press, hover, drag, select, fill, resize, wait, evaluate, upload, dialogs (core)."""

from __future__ import annotations

from typing import Any

from browserdeck.engine import options as o
from browserdeck.errors import InvalidInput
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import arr, b, i, n, obj, s
from browserdeck.mcpserver.tools.registry import REF, SNAP, WAIT, tool
from browserdeck.mcpserver.tools.shared import _dump, _finish, _notes

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
    obj({"ref": REF, "values": arr(s()), "snapshot": SNAP, "waitMs": WAIT}, ["ref", "values"]),
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
    data = await call.on_tab(o.FileChooserOptions, body)
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
        o.DialogOptions, {"accept": a["accept"], "promptText": a.get("promptText")}
    )
    verb = "accept" if a["accept"] else "dismiss"
    return await _finish(
        call,
        f"armed: the next dialog will be {verb}ed"
        + (f" with {a['promptText']!r}" if a.get("promptText") else ""),
        data,
    )
