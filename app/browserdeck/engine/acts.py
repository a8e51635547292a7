"""The act kinds of ``POST /act`` (click, type, press …), each one request model.

``Act`` is the request body: pydantic picks the model by ``kind``. An act kind is its
model here and its handler in ``actions.py``; the MCP tool and the CLI command follow
from the model's ``mcp`` and ``cli`` (or are written by hand where they say more).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter, model_validator

from browserdeck import results as r
from browserdeck.door.request import TIMED, Cli, Mcp, arg, one_of, own
from browserdeck.engine.fields import (
    SLOW_TYPE_DELAY_MS,
    SUPPRESS,
    Css,
    Part,
    PressKey,
    Ref,
    Script,
    TabBody,
    UrlGlob,
    action_timeout,
    wait_ms_field,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Self

    from browserdeck.config import Config

class _Act(TabBody[r.ActResult]):
    op = engine_method = "act"
    raises_window = True

    timeout_ms: int | None = Field(default=None, description="default 8000, clamped to 500–60000")
    wait_ms: int | None = wait_ms_field()

    def prepared(self, settings: Config) -> Self:
        if self.wait_ms is not None:
            return self
        # The actionWaitMs setting bounds the wait for what the action caused.
        return self.model_copy(update={"wait_ms": settings.action_wait_ms})


Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class ClickAct(_Act):
    said = "{doubleClick?double-}clicked {ref}"
    mcp = Mcp(
        "browser_click", "Click an element.", ("ref", "doubleClick", "button", "modifiers", "waitMs")
    )
    cli = (
        Cli(
            "click",
            "click an element by ref",
            (
                arg("ref"),
                arg("--double", field="doubleClick"),
                arg("--button"),
                arg("--modifiers"),
                *TIMED,
            ),
        ),
    )

    kind: Literal["click"]
    ref: Ref
    # Self-explaining fields carry no description: the schema is context an agent pays for.
    double_click: bool = False
    button: Literal["left", "right", "middle"] = "left"
    modifiers: list[Modifier] = Field(default_factory=list, max_length=8)


class TypeAct(_Act):
    said = "typed into {ref}{submit? and submitted}"
    mcp = Mcp(
        "browser_type",
        "Type text into an editable element (replaces its value).",
        ("ref", "text", "submit", "slowly", "waitMs"),
    )
    cli = (
        Cli(
            "type",
            "type into an element (replaces its value)",
            (arg("ref"), arg("text"), arg("--submit"), arg("--slowly"), *TIMED),
        ),
    )

    kind: Literal["type"]
    ref: Ref
    text: str
    submit: bool = Field(default=False, description="press Enter afterwards")
    slowly: bool = Field(
        default=False, description="type key by key (for pages that listen to keys)"
    )


class PressAct(_Act):
    said = "pressed {key}"
    mcp = Mcp(
        "browser_press_key",
        "Press a key or chord in the page, e.g. Enter, ArrowDown, Control+a.",
        ("key", "waitMs"),
    )
    cli = (
        Cli("press", "press a key (Enter, Escape, Control+A, ...)", (arg("key"), arg("--ref"), *TIMED)),
    )

    kind: Literal["press"]
    key: PressKey = Field(min_length=1, description="e.g. Enter, Escape, ArrowDown, Control+A")
    ref: Ref | None = Field(default=None, description="focus this element first; default: the page")


class HoverAct(_Act):
    said = "hovering {ref}"
    mcp = Mcp("browser_hover", "Hover over an element.", ("ref",))
    cli = (Cli("hover", "hover an element", (arg("ref"), *TIMED)),)

    kind: Literal["hover"]
    ref: Ref


class DragAct(_Act):
    said = "dragged {startRef} to {endRef}"
    mcp = Mcp("browser_drag", "Drag one element onto another.", ("startRef", "endRef", "waitMs"))
    cli = (
        Cli(
            "drag",
            "drag one element onto another",
            (arg("start", field="startRef"), arg("end", field="endRef"), *TIMED),
        ),
    )

    kind: Literal["drag"]
    start_ref: Ref = Field(description="the element to drag (a ref from the latest snapshot)")
    end_ref: Ref = Field(description="the element to drop it on (a ref)")


class SelectAct(_Act):
    cli = (Cli("select", "select options of a <select>", (arg("ref"), arg("values"), *TIMED)),)

    kind: Literal["select"]
    ref: Ref
    values: list[str] = Field(min_length=1, max_length=1000, description="option values or labels")


class FillField(Part):
    ref: Ref
    value: str | bool | int | float = Field(
        description="text; true/false for checkbox/radio; option value or label for select"
    )
    type: Literal["text", "checkbox", "radio", "select"] | None = Field(
        default=None, description="default: from the element's role"
    )


class FillAct(_Act):
    cli = (
        Cli(
            "fill",
            "fill several fields: REF=VALUE ... or --fields JSON",
            (
                own("pairs", nargs="*", metavar="REF=VALUE", help="a field to fill: REF=VALUE"),
                own("--fields", help='JSON: [{"ref": "e5", "value": "Ada"}, ...]'),
                *TIMED,
            ),
        ),
    )

    kind: Literal["fill"]
    fields: list[FillField] = Field(min_length=1, max_length=500)

    def element_refs(self) -> list[str]:
        return [f.ref for f in self.fields]


class ResizeAct(_Act):
    said = "viewport is {width}x{height}"
    cli = (Cli("resize", "set the viewport size", (arg("width"), arg("height"), *TIMED)),)

    kind: Literal["resize"]
    width: int = Field(ge=100, le=10_000)
    height: int = Field(ge=100, le=10_000)


class WaitAct(_Act):
    said = "done waiting"
    cli = (
        Cli(
            "wait",
            "wait for text, a selector, a URL, a load state, network quiet or time",
            (
                arg("--text"),
                arg("--text-gone"),
                arg("--selector"),
                arg("--url-glob", "--until-url", field="url", dest="url_glob"),
                arg("--load-state"),
                arg("--fn"),
                arg("--time", field="timeMs"),
                arg("--network-quiet"),
                arg("--quiet-ms"),
                *TIMED,
            ),
        ),
    )

    kind: Literal["wait"]
    time_ms: int | None = Field(
        default=None, ge=0, le=60_000, description="just wait this long (ms)"
    )
    # Empty strings are refused: an empty text is on every page (or never gone), an empty
    # function never returns truthy, so such a wait could only time out.
    text: str | None = Field(default=None, min_length=1, description="until this text is visible")
    text_gone: str | None = Field(default=None, min_length=1, description="until this text is gone")
    selector: Css | None = Field(
        default=None, min_length=1, description="until this CSS selector is visible"
    )
    url: UrlGlob | None = Field(
        default=None, min_length=1, description="until the URL matches (glob, e.g. **/done)"
    )
    load_state: Literal["load", "domcontentloaded", "networkidle"] | None = None
    fn: Script | None = Field(
        default=None, min_length=1, description="until this JS function returns truthy"
    )
    network_quiet: bool = Field(
        default=False,
        description="until no request is in flight for quietMs (streams open over 5 s aside)",
    )
    quiet_ms: int = Field(default=500, ge=50, le=10_000, description="networkQuiet's window")


class EvaluateAct(_Act):
    cli = (
        Cli(
            "evaluate",
            "run JavaScript in the page",
            (
                arg("function", field="fn", nargs="?"),
                # The old spelling keeps working, unlisted.
                arg("--fn", field="fn", dest="fn", help=SUPPRESS),
                arg("--ref"),
                *TIMED,
            ),
        ),
    )

    kind: Literal["evaluate"]
    fn: Script = Field(min_length=1, description="'() => document.title', or '(el) => …' with ref")
    ref: Ref | None = Field(default=None, description="pass this element to the function")
    world: Literal["page", "isolated"] = Field(
        default="page",
        description="isolated: run in a world of browserdeck's own, where the page's "
        "scripts cannot change what the function sees (the DOM is shared)",
    )


class CloseAct(_Act):
    kind: Literal["close"]


class ScrollIntoViewAct(_Act):
    kind: Literal["scrollIntoView"]
    ref: Ref


class ScrollAct(_Act):
    """A mouse wheel turned over the element (or the middle of the page): what a person
    does to see more, and what loads more on an infinite-scroll page."""

    said = "scrolled {ref|the page} by {deltaX|0},{deltaY|0}"
    mcp = Mcp(
        "browser_scroll",
        "Scroll the page (or the element ref) by deltaX/deltaY pixels, as a mouse wheel; "
        "waits for what the scroll loads.",
        ("ref", "deltaX", "deltaY", "waitMs"),
        group="all",
    )
    cli = (
        Cli(
            "scroll",
            "scroll the page (or an element) like a mouse wheel; waits for what it loads",
            (
                arg("ref", nargs="?"),
                arg("--dx", field="deltaX"),
                arg("--dy", field="deltaY"),
                *TIMED,
            ),
        ),
    )

    # The schema says what the server checks: a scroll moves (deltaX or deltaY not 0).
    model_config = ConfigDict(
        json_schema_extra={
            "not": {"properties": {"deltaX": {"const": 0}, "deltaY": {"const": 0}}}
        }
    )

    kind: Literal["scroll"]
    ref: Ref | None = Field(default=None, description="the element to scroll; default: the page")
    delta_x: int = Field(default=0, ge=-100_000, le=100_000, description="pixels right (<0: left)")
    delta_y: int = Field(default=0, ge=-100_000, le=100_000, description="pixels down (<0: up)")

    @model_validator(mode="after")
    def _moves(self) -> Self:
        if not (self.delta_x or self.delta_y):
            raise ValueError("scroll needs deltaX or deltaY (pixels; negative: left or up)")
        return self


AnyAct = (
    ClickAct
    | TypeAct
    | PressAct
    | HoverAct
    | DragAct
    | SelectAct
    | FillAct
    | ResizeAct
    | WaitAct
    | EvaluateAct
    | CloseAct
    | ScrollIntoViewAct
    | ScrollAct
)
# The request body of POST /act: pydantic picks the model by "kind".
Act = Annotated[AnyAct, Field(discriminator="kind")]


@functools.cache
def _act_adapter() -> TypeAdapter[AnyAct]:
    # Built by the first act, not at import: it builds the validator of every act model,
    # which a service answering its first MCP client does not need yet.
    return TypeAdapter(Act)


def act_of(values: Mapping[str, Any], *, where: str = "") -> AnyAct:
    """The act its ``kind`` names, from plain values (as ``Request.of``)."""
    return one_of(_act_adapter(), values, where=where)


def act_deadline(action: AnyAct) -> float:
    """Seconds an act may take in all: each Playwright step has the action timeout, and
    the engine stops waiting (and looks for a runaway script) after the sum."""
    from browserdeck.engine.consequences import DEFAULT_WAIT_MS

    step = action_timeout(action.timeout_ms) / 1000
    # Then the wait for what the action caused (waitMs, engine/consequences.py).
    after = (DEFAULT_WAIT_MS if action.wait_ms is None else action.wait_ms) / 1000
    if isinstance(action, FillAct):
        return step * (len(action.fields) + 1) + after
    if isinstance(action, TypeAct):
        slow = SLOW_TYPE_DELAY_MS * len(action.text) / 1000 if action.slowly else 0.0
        return step * 3 + slow + after
    if isinstance(action, WaitAct):
        conditions = (
            sum(
                value is not None
                for value in (
                    action.text,
                    action.text_gone,
                    action.selector,
                    action.url,
                    action.load_state,
                    action.fn,
                )
            )
            + action.network_quiet
        )
        return (action.time_ms or 0) / 1000 + step * max(conditions, 1)
    # The action; the ref lookup before it is quick unless the page hangs.
    return step + 1.0 + after
