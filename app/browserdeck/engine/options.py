"""What each engine call accepts: typed, validated, and documented once.

Each field's type, description, default, choices and bounds are written here and
nowhere else. The HTTP routes use these models as request bodies (so the OpenAPI
spec shows them); the MCP tools' input schemas are derived from them
(``field_schemas``, used in ``mcpserver/tools/``), and so are the CLI's arguments,
generated ahead of time into ``cli_args.py`` by ``cli_schema.py`` (the CLI must not
import pydantic at each call). JSON field names are camelCase (``timeoutMs``);
Python code uses snake_case. The field types several requests share (a ref, a CSS
selector, a URL, a press key …) and what each publishes are in ``fields.py``.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from browserdeck.engine.fields import Css, LocalPath, PressKey, Ref, Script, Url, UrlGlob

JSON = dict[str, Any]

ACTION_TIMEOUT_MS = 8_000
NAVIGATE_TIMEOUT_MS = 20_000
ARM_TIMEOUT_MS = 120_000
SLOW_TYPE_DELAY_MS = 75  # per key when typing slowly


def clamp(value: int | None, default: int, low: int, high: int) -> int:
    return default if value is None else max(low, min(high, int(value)))


def action_timeout(value: int | None) -> int:
    """Action timeouts: default 8 s, clamped to 0.5–60 s."""
    return clamp(value, ACTION_TIMEOUT_MS, 500, 60_000)


def navigate_timeout(value: int | None) -> int:
    return clamp(value, NAVIGATE_TIMEOUT_MS, 500, 120_000)


def arm_timeout(value: int | None) -> int:
    """Arming (dialog, file chooser): default and maximum 2 minutes."""
    return clamp(value, ARM_TIMEOUT_MS, 500, ARM_TIMEOUT_MS)


class _Model(BaseModel):
    # strict: JSON true is not the integer 1, "5" is not 5 (one schema: what the OpenAPI
    # spec says is what the server accepts).
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True
    )

    @model_validator(mode="before")
    @classmethod
    def _integral_numbers(cls, data: Any) -> Any:
        # JSON Schema's "integer" is any number without a fraction, 7707.0 too; strict
        # pydantic takes only ints, so such a number is taken as the int it is.
        if isinstance(data, dict):
            keys = _int_keys(cls)
            for key, value in data.items():
                if key in keys and isinstance(value, float) and value.is_integer():
                    data = {**data, key: int(value)}
        return data


@functools.cache
def _int_keys(model: type[BaseModel]) -> frozenset[str]:
    """The names (Python and JSON) of ``model``'s integer fields."""
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        if field.annotation in (int, int | None):
            keys |= {name, field.alias or name}
    return frozenset(keys)


class _TabBody(_Model):
    target_id: str | None = Field(
        default=None,
        description="tab: CDP targetId or a unique prefix; default: your last used tab (docs/api.md)",
    )


# --- snapshot ---------------------------------------------------------------------

SnapshotFormat = Literal["ai", "role", "aria"]
RefMode = Literal["aria", "role"]


class SnapshotOptions(_Model):
    format: SnapshotFormat = Field(
        default="ai",
        description="ai: Playwright's AI snapshot (refs e12, iframe refs f1e3); role: only "
        "interactive elements carry refs, [nth=N] marks duplicate role+name; aria: the raw "
        "accessibility tree (ax1 refs, read-only)",
    )
    refs: RefMode | None = Field(
        default=None,
        description="how refs resolve: aria (the element itself; default for format=ai) or "
        "role (role+name, survives a reconnect; default for format=role)",
    )
    interactive: bool = Field(default=False, description="only elements an agent can act on, flat")
    compact: bool = Field(default=False, description="drop unnamed structural wrappers")
    depth: int | None = Field(default=None, ge=1, le=200, description="maximum tree depth")
    selector: Css | None = Field(
        default=None, description="CSS selector: snapshot only this element"
    )
    frame: Css | None = Field(
        default=None, description="CSS selector of an <iframe>: snapshot inside it"
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=20_000,
        description="maximum lines (aria format: nodes, default 2000)",
    )
    max_chars: int | None = Field(
        default=None, ge=500, le=2_000_000, description="cut the text here (default 200000)"
    )
    viewport: bool = Field(
        default=False,
        description="only elements in the viewport (and their ancestors); all refs stay valid",
    )


DEFAULT_MAX_CHARS = 200_000
DEFAULT_AX_LIMIT = 2_000


# --- act ------------------------------------------------------------------------


def _wait_ms(when: str = "") -> Any:
    return Field(
        default=None,
        ge=0,
        le=60_000,
        description=f"{when}longest wait in ms for what it caused (navigation, requests); "
        "default: the actionWaitMs setting, 0 = none",
    )


class _Act(_TabBody):
    timeout_ms: int | None = Field(default=None, description="default 8000, clamped to 500–60000")
    wait_ms: int | None = _wait_ms()


Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class ClickAct(_Act):
    kind: Literal["click"]
    ref: Ref
    # Self-explaining fields carry no description: the schema is context an agent pays for.
    double_click: bool = False
    button: Literal["left", "right", "middle"] = "left"
    modifiers: list[Modifier] = Field(default_factory=list, max_length=8)


class TypeAct(_Act):
    kind: Literal["type"]
    ref: Ref
    text: str
    submit: bool = Field(default=False, description="press Enter afterwards")
    slowly: bool = Field(
        default=False, description="type key by key (for pages that listen to keys)"
    )


class PressAct(_Act):
    kind: Literal["press"]
    key: PressKey = Field(min_length=1, description="e.g. Enter, Escape, ArrowDown, Control+A")
    ref: Ref | None = Field(default=None, description="focus this element first; default: the page")


class HoverAct(_Act):
    kind: Literal["hover"]
    ref: Ref


class DragAct(_Act):
    kind: Literal["drag"]
    start_ref: Ref = Field(description="the element to drag (a ref from the latest snapshot)")
    end_ref: Ref = Field(description="the element to drop it on (a ref)")


class SelectAct(_Act):
    kind: Literal["select"]
    ref: Ref
    values: list[str] = Field(min_length=1, max_length=1000, description="option values or labels")


class FillField(_Model):
    ref: Ref
    value: str | bool | int | float = Field(
        description="text; true/false for checkbox/radio; option value or label for select"
    )
    type: Literal["text", "checkbox", "radio", "select"] | None = Field(
        default=None, description="default: from the element's role"
    )


class FillAct(_Act):
    kind: Literal["fill"]
    fields: list[FillField] = Field(min_length=1, max_length=500)


class ResizeAct(_Act):
    kind: Literal["resize"]
    width: int = Field(ge=100, le=10_000)
    height: int = Field(ge=100, le=10_000)


class WaitAct(_Act):
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
)
# The request body of POST /act: pydantic picks the model by "kind".
Act = Annotated[AnyAct, Field(discriminator="kind")]


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


# --- navigate, screenshot, console, pdf, hooks -------------------------------------


class NavigateOptions(_TabBody):
    # The schema says what the server checks: goto (the default action) needs a url.
    model_config = ConfigDict(
        json_schema_extra={
            "if": {
                "properties": {"action": {"enum": ["back", "forward", "reload"]}},
                "required": ["action"],
            },
            "else": {"required": ["url"], "properties": {"url": {"type": "string", "minLength": 1}}},
        }
    )

    url: Url | None = Field(default=None, description="where to go (required for action=goto)")
    action: Literal["goto", "back", "forward", "reload"] = "goto"
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = "load"
    timeout_ms: int | None = Field(default=None, description="default 20000, clamped to 500–120000")
    prepare_snapshot: Literal["background", "wait"] | None = Field(
        default=None,
        description="take the first ai snapshot of the new page now (background: after "
        "answering; wait: before); the next plain GET /snapshot returns it if the page has "
        "not changed since",
    )


_NO_ELEMENT: JSON = {"anyOf": [{"type": "null"}, {"maxLength": 0}]}


class ScreenshotOptions(_TabBody):
    # What engine/screenshot.py refuses, said by the schema: one element (ref or element),
    # labels only on a page screenshot, quality only for jpeg (a png is lossless).
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "not": {
                        "required": ["ref", "element"],
                        "properties": {
                            "ref": {"type": "string"},
                            "element": {"type": "string", "minLength": 1},
                        },
                    }
                },
                {
                    "if": {"properties": {"labels": {"const": True}}, "required": ["labels"]},
                    "then": {"properties": {"ref": {"type": "null"}, "element": _NO_ELEMENT}},
                },
                {
                    "if": {"properties": {"type": {"const": "jpeg"}}, "required": ["type"]},
                    "else": {"properties": {"quality": {"type": "null"}}},
                },
            ]
        }
    )

    full_page: bool = False
    ref: Ref | None = Field(default=None, description="only this element")
    element: Css | None = Field(default=None, description="only this element (CSS selector)")
    type: Literal["png", "jpeg"] = "png"
    quality: int | None = Field(default=None, ge=1, le=100, description="jpeg only")
    labels: bool = Field(default=False, description="draw ref labels (max 150, those in view)")
    max_width: int | None = Field(default=None, ge=16, le=20_000, description="downscale to fit")
    max_height: int | None = Field(default=None, ge=16, le=20_000, description="downscale to fit")
    inline: bool = Field(default=False, description="return base64 data instead of a file path")
    timeout_ms: int | None = Field(default=None, description="default 20000, clamped to 500–60000")


class ConsoleOptions(_Model):
    level: Literal["debug", "info", "warning", "error"] | None = Field(
        default=None, description="minimum level; default: all"
    )
    limit: int = Field(default=200, ge=1, le=500, description="newest entries per list")
    clear: bool = Field(
        default=False,
        description="empty the lists after reading (all levels, also entries beyond limit)",
    )


class OfflineOptions(_TabBody):
    offline: bool = Field(
        description="true: this tab's network requests (and those of its origin's service "
        "workers) fail as if offline; false: back online"
    )


class PdfOptions(_TabBody):
    inline: bool = False
    landscape: bool = Field(default=False, description="landscape pages")
    print_background: bool = True
    timeout_ms: int | None = Field(default=None, description="default 20000, clamped to 500–120000")


class FileChooserOptions(_TabBody):
    paths: list[LocalPath] = Field(min_length=1, max_length=100, description="absolute paths")
    roots: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="the caller's workspace folders (an MCP client's roots); uploads come "
        "only from these and the uploadRoots setting",
    )
    ref: Ref | None = Field(
        default=None, description="arm, then click this ref (opens the chooser)"
    )
    input_ref: Ref | None = Field(
        default=None, description="set the files on this <input type=file>"
    )
    element: Css | None = Field(default=None, description="CSS selector of an <input type=file>")
    timeout_ms: int | None = Field(default=None, description="default and maximum 120000")
    wait_ms: int | None = _wait_ms("with ref, inputRef or element: ")


class DialogOptions(_TabBody):
    accept: bool = True
    prompt_text: str | None = Field(default=None, description="the answer to a prompt()")
    timeout_ms: int | None = Field(default=None, description="default and maximum 120000")


# --- the schema, derived for the other ways in ---------------------------------------

# What a derived field schema keeps of pydantic's: no titles (the schema is context an
# agent pays for on every turn, playwright-mcp #1290), no default that goes without
# saying (null, false, an empty list).
_KEEP = (
    "type", "enum", "description", "default", "items", "properties", "required",
    "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
)  # fmt: skip


def compact_schema(schema: JSON, defs: JSON | None = None) -> JSON:
    """``schema`` as pydantic wrote it, compact: ``$ref`` resolved from ``defs``, a
    nullable type as the type, only the keys in ``_KEEP``."""
    defs = defs or {}
    if "$ref" in schema:
        schema = {
            **defs[schema["$ref"].rsplit("/", 1)[1]],
            **{k: v for k, v in schema.items() if k != "$ref"},
        }
    if "anyOf" in schema:
        options = [compact_schema(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        if len(options) == 1:
            schema = {**options[0], **rest}
        else:  # a union of plain types (FillField.value): one type list
            schema = {**rest, "type": [o["type"] for o in options]}
    out: JSON = {}
    for key in _KEEP:
        if key not in schema or (
            key == "default" and (schema[key] is None or schema[key] is False or schema[key] == [])
        ):
            continue
        value = schema[key]
        if key == "items":
            value = compact_schema(value, defs)
        elif key == "properties":
            value = {name: compact_schema(v, defs) for name, v in value.items()}
        out[key] = value
    return out


@functools.cache
def field_schemas(model: type[BaseModel]) -> dict[str, JSON]:
    """Each field of ``model`` as a compact JSON schema, by its JSON (camelCase) name:
    type, description, default, choices and bounds exactly as the model declares them."""
    full = model.model_json_schema(by_alias=True)
    defs = full.get("$defs", {})
    return {name: compact_schema(prop, defs) for name, prop in full["properties"].items()}


def required_fields(model: type[BaseModel]) -> list[str]:
    """The JSON names of the fields a request must give (``kind`` is the model's own)."""
    return [
        str(f.alias or name)
        for name, f in model.model_fields.items()
        if f.is_required() and name != "kind"
    ]
