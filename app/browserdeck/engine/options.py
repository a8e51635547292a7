"""The requests about one tab: each declared once, with everything every way in needs.

Each model says what it answers (``TabRequest[r.Snapshot]``), which engine method
carries it out (``engine_method``), its name in the activity log (``op``), the settings it
obeys (``prepared``) and how the MCP tool (``mcp``) and the CLI command (``cli``) spell
it; each field's type, description, default, choices and bounds are written here (the
act kinds in ``acts.py``) and nowhere else. The API takes the models as bodies; MCP
tools and CLI commands are derived from them (``mcpserver/tools/derived.py``,
``cli/schema.py``, which generates ``cli/args.py`` so a CLI call needs no pydantic).
JSON field names are camelCase (``timeoutMs``); Python code uses snake_case. The field types several requests share (a ref, a CSS
selector, a URL, a press key …) and what each publishes are in ``fields.py``.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from browserdeck import results as r
from browserdeck.door.request import TIMED, Cli, TabRequest, arg, own
from browserdeck.engine.acts import (
    Act,
    AnyAct,
    ClickAct,
    CloseAct,
    DragAct,
    EvaluateAct,
    FillAct,
    FillField,
    HoverAct,
    PressAct,
    ResizeAct,
    ScrollIntoViewAct,
    SelectAct,
    TypeAct,
    WaitAct,
    act_deadline,
    act_of,
)
from browserdeck.engine.fields import (
    ACTION_TIMEOUT_MS,
    ARM_TIMEOUT_MS,
    NAVIGATE_TIMEOUT_MS,
    SLOW_TYPE_DELAY_MS,
    Css,
    LocalPath,
    Ref,
    TabBody,
    Url,
    action_timeout,
    arm_timeout,
    clamp,
    navigate_timeout,
    wait_ms_field,
)

if TYPE_CHECKING:
    from typing import Self

    from browserdeck.config import Config

JSON = dict[str, Any]

__all__ = [
    "ACTION_TIMEOUT_MS",
    "ARM_TIMEOUT_MS",
    "NAVIGATE_TIMEOUT_MS",
    "SLOW_TYPE_DELAY_MS",
    "Act",
    "AnyAct",
    "ClickAct",
    "CloseAct",
    "ConsoleOptions",
    "DialogOptions",
    "DragAct",
    "EvaluateAct",
    "FileChooserOptions",
    "FillAct",
    "FillField",
    "HoverAct",
    "NavigateOptions",
    "OfflineOptions",
    "PdfOptions",
    "PressAct",
    "RecordShot",
    "ResizeAct",
    "ScreenshotOptions",
    "ScrollIntoViewAct",
    "SelectAct",
    "SnapshotOptions",
    "TypeAct",
    "WaitAct",
    "act_deadline",
    "act_of",
    "action_timeout",
    "arm_timeout",
    "clamp",
    "compact_schema",
    "field_schemas",
    "navigate_timeout",
    "required_fields",
]

# --- snapshot ---------------------------------------------------------------------

SnapshotFormat = Literal["ai", "role", "aria"]
RefMode = Literal["aria", "role"]


class SnapshotOptions(TabRequest[r.Snapshot]):
    op = engine_method = "snapshot"
    cli = (
        Cli(
            "snapshot",
            "accessibility snapshot with element refs",
            (
                arg("--format"),
                arg("--refs"),
                arg("--interactive", "-i"),
                arg("--compact", "-c"),
                arg("--depth", "-d"),
                arg("--selector", "-s"),
                arg("--frame"),
                arg("--limit"),
                arg("--max-chars"),
                arg("--viewport"),
            ),
        ),
    )

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


# --- navigate, screenshot, console, pdf, hooks -------------------------------------


class NavigateOptions(TabBody[r.Navigated]):
    op = engine_method = "navigate"
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
    changes_tabs = True
    # "URL", not "url": --url is the control API's address.
    cli = (
        Cli("navigate", "go to a URL", (arg("address", field="url", metavar="URL"), *TIMED)),
        Cli("back", "go back in the tab's history", TIMED, fields={"action": "back"}),
        Cli("forward", "go forward in the tab's history", TIMED, fields={"action": "forward"}),
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

    def prepared(self, settings: Config) -> Self:
        if self.action != "goto":
            return self
        from browserdeck.policy import urls

        # The URL policy (file: URLs, schemes) before anyone sees the request.
        url = urls.prepare(self.url, allow_file_urls=settings.allow_file_urls)
        return self.model_copy(update={"url": url})


_NO_ELEMENT: JSON = {"anyOf": [{"type": "null"}, {"maxLength": 0}]}


class ScreenshotOptions(TabBody[r.Screenshot]):
    op = engine_method = "screenshot"
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
    cli = (
        Cli(
            "screenshot",
            "screenshot to a file",
            (
                arg("--full-page"),
                arg("--ref"),
                arg("--element"),
                arg("--type"),
                arg("--quality"),
                arg("--labels"),
                arg("--max-width"),
                arg("--max-height"),
                *TIMED,
            ),
        ),
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


class ConsoleOptions(TabRequest[r.Console]):
    op = engine_method = "console"
    cli = (
        Cli(
            "console",
            "console messages and page errors",
            (
                arg("--level"),
                arg("--limit"),
                arg("--clear"),
                own("--requests", action="store_true", help="also list network requests"),
            ),
        ),
    )

    level: Literal["debug", "info", "warning", "error"] | None = Field(
        default=None, description="minimum level; default: all"
    )
    limit: int = Field(default=200, ge=1, le=500, description="newest entries per list")
    clear: bool = Field(
        default=False,
        description="empty the lists after reading (all levels, also entries beyond limit)",
    )


class RecordShot(TabRequest[r.RecordedShot]):
    """The session recorder's own picture of the tab (``recording/``): the viewport as a
    JPEG, the boxes to mask (password inputs) and to outline (the element ``ref``), and
    the console errors, page errors and failed requests since ``since``. No route, tool
    or command takes it: an addon asks for it with ``Call.aside``."""

    op, engine_method = "record-shot", "record_shot"

    ref: str | None = Field(default=None, description="the element to outline")
    image: bool = Field(default=True, description="false: only the page's events")
    quality: int = Field(default=70, ge=1, le=100, description="the JPEG's quality")
    since: float | None = Field(
        default=None, description="Unix seconds: the events from then on (default: none)"
    )


class OfflineOptions(TabBody[r.Offline]):
    op, engine_method = "set-offline", "set_offline"

    offline: bool = Field(
        description="true: this tab's network requests (and those of its origin's service "
        "workers) fail as if offline; false: back online"
    )


class PdfOptions(TabBody[r.Pdf]):
    op = engine_method = "pdf"
    cli = (Cli("pdf", "save the page as PDF (headless only)", (arg("--landscape"), *TIMED)),)

    inline: bool = False
    landscape: bool = Field(default=False, description="landscape pages")
    print_background: bool = True
    timeout_ms: int | None = Field(default=None, description="default 20000, clamped to 500–120000")


class FileChooserOptions(TabBody[r.Armed]):
    op, engine_method = "file-chooser", "arm_file_chooser"
    cli = (
        Cli(
            "upload",
            "upload files (arms the next file chooser)",
            (arg("paths"), arg("--ref"), arg("--input-ref"), arg("--element"), *TIMED),
        ),
    )

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
    wait_ms: int | None = wait_ms_field("with ref, inputRef or element: ")

    def prepared(self, settings: Config) -> Self:
        from browserdeck.policy import confine

        # Only files inside the caller's roots and the uploadRoots setting.
        allowed = confine.allowed_roots(self.roots, settings.upload_roots)
        update: dict[str, Any] = {
            "paths": [str(confine.readable_file(p, allowed)) for p in self.paths]
        }
        if self.wait_ms is None:  # setting files is an action: actionWaitMs bounds it
            update["wait_ms"] = settings.action_wait_ms
        return self.model_copy(update=update)

    def element_refs(self) -> list[str]:
        return [ref for ref in (self.ref, self.input_ref) if ref]


class DialogOptions(TabBody[r.Armed]):
    op, engine_method = "dialog", "arm_dialog"
    cli = (
        Cli(
            "dialog",
            "arm the answer to the next dialog",
            # accept as two exclusive switches (cli.engine adds them): the field defaults
            # to true, so a flag could only ever say "false".
            (arg("--prompt-text"), *TIMED),
        ),
    )

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
