"""The tool registry: ToolSpec, the @tool decorator and shared argument schemas."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from browserdeck.engine import options as o
from browserdeck.mcpserver.context import Call, Reply
from browserdeck.mcpserver.schema import JSON, b, field, s

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


REGISTRY: dict[str, ToolSpec] = {}


def tool(
    name: str, description: str, schema: JSON, *, group: str = "core", narrow: str | None = None
) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        assert group in GROUPS and name not in REGISTRY
        REGISTRY[name] = ToolSpec(name, description, schema, handler, group, narrow)
        return handler

    return register


REF = field(o.HoverAct, "ref")
SNAP = b("also return what changed on the page")
# Per call, like the API's and the CLI's waitMs (engine/consequences.py).
WAIT = field(o.ClickAct, "waitMs")
SELECTOR = s("CSS selector (instead of ref)")
# Navigations take the new page's first snapshot before answering (as Playwright MCP
# does): the first snapshot of a document is the expensive one (Playwright compiles its
# injected script for it), and agents ask for a snapshot next; the browser_snapshot that
# follows takes its own, cheap one (a snapshot is never handed out twice, docs/engine.md).
PREPARE_SNAPSHOT = "wait"
