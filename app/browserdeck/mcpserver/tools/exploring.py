"""DOM exploration (group all)."""

from __future__ import annotations

from typing import Any

from browserdeck.errors import InvalidInput
from browserdeck.mcpserver import dom
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import arr, b, i, obj, s
from browserdeck.mcpserver.tools.registry import REF, SELECTOR, tool
from browserdeck.mcpserver.tools.shared import _dump

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
