"""DOM exploration (group all)."""

from __future__ import annotations

from typing import Any

from browserdeck.engine import pagetext
from browserdeck.errors import InvalidInput
from browserdeck.mcpserver import dom
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import JSON, arr, b, i, obj, s
from browserdeck.mcpserver.tools.registry import REF, SELECTOR, tool
from browserdeck.mcpserver.tools.shared import _dump

# --- DOM exploration (all) -------------------------------------------------------------


async def _page_fn(call: Call, body: str, args: dict[str, Any], *, ref: str | None = None) -> Any:
    fn = dom.function(body, args, with_element=ref is not None)
    # In a world of our own: the page's scripts cannot rewrite what these report
    # (engine/isolated.py).
    return (await call.act("evaluate", fn=fn, ref=ref, world="isolated")).result


def _target(call: Call) -> tuple[str | None, dict[str, Any]]:
    ref, selector = call.args.get("ref"), call.args.get("selector")
    if not ref and not selector:
        raise InvalidInput(
            f"{call.spec.name} needs ref or selector",
            hint="take refs from browser_snapshot, or pass a CSS selector",
        )
    return ref, {"selector": selector}


EL = {"ref": REF, "selector": SELECTOR}


def page_fn_tool(
    name: str,
    description: str,
    body: str,
    schema: JSON,
    *,
    element: bool = False,
    defaults: dict[str, Any] | None = None,
    narrow: str | None = None,
) -> None:
    """Register a tool that runs one page function (``dom.py``) and answers with its result.

    Each argument of ``schema`` but ``ref`` goes to the function (``defaults`` for those
    not given); ``ref`` names the element it gets. ``element``: it needs ref or selector.
    """
    names = [k for k in schema.get("properties", {}) if k != "ref"]

    async def run(call: Call) -> Reply:
        if element:
            _target(call)  # one of ref and selector, or a clear error
        args = {k: call.args.get(k, (defaults or {}).get(k)) for k in names}
        found = _dump(await _page_fn(call, body, args, ref=call.args.get("ref")))
        return Reply(pagetext.fence(found))

    tool(name, description, schema, group="all", narrow=narrow)(run)


page_fn_tool(
    "browser_query_dom",
    "Elements matching a CSS selector: tag, id, class, text, visibility.",
    dom.QUERY_DOM,
    obj({"selector": s(), "limit": i("default 10")}, ["selector"]),
    defaults={"limit": 10},
    narrow="Use a narrower selector or a lower limit",
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
    return Reply(pagetext.fence(text, "visible text") + more)


page_fn_tool(
    "browser_computed_styles",
    "Computed CSS of an element (common properties, or those named).",
    dom.COMPUTED_STYLES,
    obj({**EL, "properties": arr(s())}),
    element=True,
    defaults={"properties": []},
)
page_fn_tool(
    "browser_check_visibility",
    "Is an element visible, in the viewport, covered by another? With its box.",
    dom.CHECK_VISIBILITY,
    obj(EL),
    element=True,
)
page_fn_tool(
    "browser_attributes", "All attributes of an element.", dom.ATTRIBUTES, obj(EL), element=True
)
page_fn_tool(
    "browser_count_elements",
    "How many elements match each CSS selector.",
    dom.COUNT_ELEMENTS,
    obj({"selectors": arr(s())}, ["selectors"]),
)
page_fn_tool(
    "browser_page_metadata",
    "Title, URL, language, meta/OpenGraph tags, headings, counts.",
    dom.PAGE_METADATA,
    obj(),
)
page_fn_tool(
    "browser_find_by_text",
    "Elements whose own text contains (or equals) the given text.",
    dom.FIND_BY_TEXT,
    obj({"text": s(), "exact": b(), "limit": i("default 20")}, ["text"]),
    defaults={"exact": False, "limit": 20},
    narrow="Use exact: true or a longer text",
)
page_fn_tool(
    "browser_form_values",
    "Current values of every field of the page's forms (or of one).",
    dom.FORM_VALUES,
    obj(EL),
)
page_fn_tool(
    "browser_element_state",
    "State of an element: visible, enabled, editable, focused, checked, value...",
    dom.ELEMENT_STATE,
    obj(EL),
    element=True,
)
