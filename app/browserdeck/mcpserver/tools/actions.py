"""Actions on the page: click, type, press, hover, drag, select, fill, resize, wait, evaluate, upload, dialogs (core).

The act kinds whose model declares its tool (``mcp``) are derived (derived.py),
registered first; the rest are written here.
"""

from __future__ import annotations

from typing import Any

from browserdeck import results as r
from browserdeck.engine import options as o
from browserdeck.errors import InvalidInput
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import arr, field, from_model, n, obj, s
from browserdeck.mcpserver.tools import derived
from browserdeck.mcpserver.tools.registry import REF, SNAP, WAIT, tool
from browserdeck.mcpserver.tools.shared import _dump, _finish, _notes

# --- actions --------------------------------------------------------------------

derived.register(o.AnyAct)


@tool(
    "browser_select_option",
    "Select option(s) in a <select> by value or label.",
    from_model(o.SelectAct, "ref", "values", "waitMs", extra={"snapshot": SNAP}),
)
async def select_option(call: Call) -> Reply:
    a = call.args
    call.check_element(a["ref"], a.get("element"))
    data = await call.act("select", ref=a["ref"], values=a["values"], waitMs=a.get("waitMs"))
    # What the page chose (option values), which may differ from the labels asked for.
    chosen = data.selected if data.selected is not None else a["values"]
    return await _finish(call, f"selected {', '.join(map(repr, chosen))} in {a['ref']}", data)


@tool(
    "browser_fill_form",
    "Fill several fields at once.",
    obj(
        {
            # Playwright MCP's field vocabulary (textbox, combobox; "true" for a checkbox),
            # which its clients send; _fill_field maps it to the engine's FillField.
            "fields": arr(
                obj(
                    {
                        "ref": REF,
                        "type": s("textbox (default), checkbox, radio or combobox"),
                        "value": field(o.FillField, "value"),
                    },
                    ["ref", "value"],
                ),
            ),
            "waitMs": WAIT,
            "snapshot": SNAP,
        },
        ["fields"],
    ),
)
async def fill_form(call: Call) -> Reply:
    fields = [_fill_field(f) for f in call.args["fields"]]
    data = await call.act("fill", fields=fields, waitMs=call.args.get("waitMs"))
    done = [_filled_words(f) for f in data.filled or []]
    line = f"filled {len(fields)} field(s)" + (": " + "; ".join(done) if done else "")
    return await _finish(call, line, data)


def _filled_words(field: r.FilledField) -> str:
    """What one filled field holds now (a password's value comes back masked)."""
    if field.checked is not None:
        return f"{field.ref} {'checked' if field.checked else 'unchecked'}"
    if field.selected is not None:
        return f"{field.ref} = {', '.join(map(repr, field.selected))}"
    value = field.value or ""
    return f"{field.ref} = {value[:60] + '…' if len(value) > 60 else value!r}"


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
    from_model(o.ResizeAct, "width", "height"),
)
async def resize(call: Call) -> Reply:
    a = call.args
    data = await call.act("resize", width=a["width"], height=a["height"])
    size = data.viewport
    assert size is not None, "the engine answers a resize with the viewport it set"
    return await _finish(call, f"viewport is {size.width}x{size.height}", data)


@tool(
    "browser_wait_for",
    "Wait for text to appear or disappear, a selector, the network to go quiet, or a time.",
    # time: seconds, as Playwright MCP's clients send it (the model's timeMs is in ms).
    from_model(
        o.WaitAct,
        "text",
        "textGone",
        "selector",
        "networkQuiet",
        extra={"time": n("seconds")},
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
    from_model(o.EvaluateAct, "fn", "ref", rename={"fn": "function"}),
    narrow="Return less from the function (a field, a slice)",
)
async def evaluate(call: Call) -> Reply:
    data = await call.act("evaluate", fn=call.args["function"], ref=call.args.get("ref"))
    return Reply("\n".join([_dump(data.result), *_notes(data)]))


@tool(
    "browser_file_upload",
    "Set files on a file input. With ref (the input, or the button that opens the chooser) "
    "it happens now; without, it answers the next file chooser.",
    # ref: the input or the button that opens the chooser (the tool tells which below).
    from_model(o.FileChooserOptions, "paths", "waitMs", extra={"ref": REF}),
)
async def file_upload(call: Call) -> Reply:
    a = call.args
    # The API allows only files inside these roots and uploadRoots (docs/security.md).
    body: dict[str, Any] = {"paths": a["paths"], "roots": await call.roots()}
    if a.get("waitMs") is not None:
        body["waitMs"] = a["waitMs"]
    if a.get("ref"):
        # An <input type=file> takes the files directly; anything else is clicked and the
        # file chooser it opens gets them.
        probe = await call.act(
            "evaluate", ref=a["ref"], fn="(el) => el.localName === 'input' && el.type === 'file'"
        )
        body["inputRef" if probe.result is True else "ref"] = a["ref"]
    data = await call.on_tab(o.FileChooserOptions.of(body, where=call.spec.name))
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
    from_model(o.DialogOptions, "accept", "promptText"),
)
async def handle_dialog(call: Call) -> Reply:
    a = call.args
    data = await call.on_tab(
        o.DialogOptions.of(
            {"accept": a["accept"], "promptText": a.get("promptText")}, where=call.spec.name
        )
    )
    verb = "accept" if a["accept"] else "dismiss"
    return await _finish(
        call,
        f"armed: the next dialog will be {verb}ed"
        + (f" with {a['promptText']!r}" if a.get("promptText") else ""),
        data,
    )
