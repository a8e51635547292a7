"""MCP tools derived from their request models: a model with an ``mcp`` hint is a tool.

The tool's arguments are the model's fields the hint names (their schemas from the
model, ``schema.from_model``), plus ``snapshot`` (what the action changed) when the hint
says so. A call builds the request from the arguments (the model checks them, once),
runs it on the session's tab and answers the request's ``said`` line, what the action
caused, and the changes when asked. An ``element`` description beside a ref is checked
against what the session last saw (as for the tools written by hand).
"""

from __future__ import annotations

import typing
from typing import Any

from browserdeck.door.request import TabRequest
from browserdeck.door.words import say
from browserdeck.engine import pagetext
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import DESCRIPTIONS, from_model
from browserdeck.mcpserver.tools.registry import REGISTRY, SNAP, tool
from browserdeck.mcpserver.tools.shared import _finish

# A ref argument, and the argument that describes its element in words.
DESCRIBED = {"ref": "element", "startRef": "startElement", "endRef": "endElement"}


def register(union: Any) -> None:
    """A tool for every model of ``union`` (or of a tuple) whose ``mcp`` hint names one,
    in its order (a tool already registered by hand is left as it is)."""
    for model in typing.get_args(union) or union:
        hint = model.mcp
        if hint is not None and hint.tool not in REGISTRY:
            _register(model)


def _register(model: type[TabRequest[Any]]) -> None:
    hint = model.mcp
    assert hint is not None
    # An act kind's ``kind`` is fixed by the tool: not an argument.
    kind = model.model_fields.get("kind")
    fixed: dict[str, Any] = {"kind": typing.get_args(kind.annotation)[0]} if kind else {}
    extra = {"snapshot": SNAP} if hint.snapshot else None
    said = hint.said if hint.said is not None else model.said

    async def run(call: Call) -> Reply:
        # Playwright MCP's descriptions of the elements (``element`` …) must name what the
        # refs name in what this session last saw (mcpserver/element_guard.py).
        for ref, description in DESCRIBED.items():
            if ref in call.args:
                call.check_element(call.args[ref], call.args.get(description))
        values = {k: v for k, v in call.args.items() if k != "snapshot" and k not in DESCRIPTIONS}
        request = model.of({**fixed, **values}, where=hint.tool)
        data = await call.on_tab(request)
        line = say(said, request.given())
        if hint.told is not None:  # what the answer holds, in lines
            line = "\n".join(x for x in (line, hint.told(data.wire(), pagetext)) if x)
        return await _finish(call, line, data)

    tool(hint.tool, hint.description, from_model(model, *hint.args, extra=extra), group=hint.group)(
        run
    )
