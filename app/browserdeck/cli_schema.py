"""The CLI's page commands' arguments, derived from the engine's request models.

Each argument's help, choices, type and default come from its field in
``engine/options.py``, where they are declared once (``create-profile``'s from the
profile settings' declarations, ``config.CREATE_FIELDS``); this module holds only the
CLI's spelling (``--double`` is ``doubleClick``, ``URL`` is ``url``) and the few
arguments that are the CLI's own (``fill``'s ``REF=VALUE`` pairs, ``console
--requests``).

A CLI call must not import pydantic (issue 14: it is most of the start-up), so the table
is generated ahead of time into ``cli_args.py``, plain data that ``cli_engine`` reads:

    make cli-args        # = .venv/bin/python -m browserdeck.cli_schema

``tests/core/test_cli_args.py`` fails while the committed file is stale.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from browserdeck import config
from browserdeck import results as r
from browserdeck.engine import options as o

GENERATED = Path(__file__).with_name("cli_args.py")


@dataclass(frozen=True)
class Arg:
    """One CLI argument: its flags, and the model field (JSON name) it fills, if any."""

    flags: tuple[str, ...]
    field: str | None = None  # default: the field of the flag's name (--max-chars: maxChars)
    options: dict[str, Any] = dataclasses.field(default_factory=dict)  # argparse's, beside the derived
    own: bool = False  # the CLI's own argument: fills no field, options given here

    @property
    def dest(self) -> str:
        if "dest" in self.options:
            return str(self.options["dest"])
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")

    @property
    def json_name(self) -> str | None:
        if self.own or self.field is not None:
            return self.field
        head, *rest = self.dest.split("_")
        return head + "".join(w.title() for w in rest)


def arg(*flags: str, field: str | None = None, **options: Any) -> Arg:
    return Arg(flags, field, options)


def own(*flags: str, **options: Any) -> Arg:
    """An argument of the CLI's own, filling no field (``help`` is required)."""
    assert "help" in options
    return Arg(flags, None, options, own=True)


# The wait and timeout every timed command takes (they were one shared parent parser).
TIMED = (arg("--timeout-ms"), arg("--wait-ms"))

class Settings:
    """The source of a command that fills profile settings: their declarations."""

    @staticmethod
    def field_schemas() -> dict[str, Any]:
        return {s.key: o.compact_schema(config.setting_schema(s)) for s in config.CREATE_FIELDS}


Source = type[BaseModel] | type[Settings]


def _fields(source: Source) -> dict[str, Any]:
    if issubclass(source, Settings):
        return source.field_schemas()
    return o.field_schemas(source)


# Per command: the model its arguments fill, and the CLI's spelling of them, in order.
COMMANDS: dict[str, tuple[Source, tuple[Arg, ...]]] = {
    "create-profile": (
        Settings,
        (
            own("name", nargs="?", help="the new profile's name"),
            own("--name", dest="name_option", help=argparse.SUPPRESS),  # older spelling
            arg("--color"),
            arg("--cdp-url"),
            arg("--driver"),
            arg("--pool"),
            arg("--pool-idle", field="poolIdleSeconds", metavar="SECONDS"),
            arg("--token-param", metavar="NAME"),
            arg("--token-header", metavar="NAME"),
            own(
                "--token-stdin",
                action="store_true",
                help="read the service token from stdin (a token in --cdp-url works too); "
                "it goes to the OS keyring or a 0600 file, never config.json",
            ),
        ),
    ),
    "snapshot": (
        o.SnapshotOptions,
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
    "screenshot": (
        o.ScreenshotOptions,
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
    # "URL", not "url": --url is the control API's address.
    "navigate": (o.NavigateOptions, (arg("address", field="url", metavar="URL"), *TIMED)),
    "back": (o.NavigateOptions, TIMED),
    "forward": (o.NavigateOptions, TIMED),
    "click": (
        o.ClickAct,
        (
            arg("ref"),
            arg("--double", field="doubleClick"),
            arg("--button"),
            arg("--modifiers"),
            *TIMED,
        ),
    ),
    "type": (o.TypeAct, (arg("ref"), arg("text"), arg("--submit"), arg("--slowly"), *TIMED)),
    "press": (o.PressAct, (arg("key"), arg("--ref"), *TIMED)),
    "hover": (o.HoverAct, (arg("ref"), *TIMED)),
    "drag": (o.DragAct, (arg("start", field="startRef"), arg("end", field="endRef"), *TIMED)),
    "select": (o.SelectAct, (arg("ref"), arg("values"), *TIMED)),
    "fill": (
        o.FillAct,
        (
            own("pairs", nargs="*", metavar="REF=VALUE", help="a field to fill: REF=VALUE"),
            own("--fields", help='JSON: [{"ref": "e5", "value": "Ada"}, ...]'),
            *TIMED,
        ),
    ),
    "resize": (o.ResizeAct, (arg("width"), arg("height"), *TIMED)),
    "wait": (
        o.WaitAct,
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
    "evaluate": (
        o.EvaluateAct,
        (
            arg("function", field="fn", nargs="?"),
            # The old spelling keeps working, unlisted.
            arg("--fn", field="fn", dest="fn", help=argparse.SUPPRESS),
            arg("--ref"),
            *TIMED,
        ),
    ),
    "console": (
        o.ConsoleOptions,
        (
            arg("--level"),
            arg("--limit"),
            arg("--clear"),
            own("--requests", action="store_true", help="also list network requests"),
        ),
    ),
    "pdf": (o.PdfOptions, (arg("--landscape"), *TIMED)),
    "upload": (
        o.FileChooserOptions,
        (arg("paths"), arg("--ref"), arg("--input-ref"), arg("--element"), *TIMED),
    ),
    "dialog": (
        o.DialogOptions,
        (
            # accept as two exclusive switches (cli_engine adds them): the field defaults
            # to true, so a flag could only ever say "false".
            arg("--prompt-text"),
            *TIMED,
        ),
    ),
}


def _help(schema: dict[str, Any], with_default: bool) -> str:
    text = str(schema.get("description", ""))
    default = schema.get("default")
    if with_default and default is not None and default is not False and "default" not in text:
        text += f"{'; ' if text else ''}default: {default}"
    return text


def _derived(command: str, source: Source, a: Arg) -> dict[str, Any]:
    """argparse keyword arguments for ``a``, from its field's schema."""
    name = a.json_name
    if name is None:
        return dict(a.options)
    schemas = _fields(source)
    if name not in schemas:
        # A timed command whose model has no such field: accepted and ignored, as it was
        # when every timed command shared one parent parser (scripts may pass it).
        return {"dest": a.dest, "help": argparse.SUPPRESS, "type": "int"}
    schema = schemas[name]
    kind = schema.get("type")
    out: dict[str, Any] = {}
    positional = not a.flags[0].startswith("-")
    if kind == "boolean":
        out["action"] = "store_true"
    elif kind == "integer":
        out["type"] = "int"
    elif kind == "array":
        if positional:
            out["nargs"] = "+"
        else:
            out["list"] = "comma"  # cli_engine splits it
    if "enum" in schema:
        out["choices"] = list(schema["enum"])
    elif kind == "array" and "enum" in schema.get("items", {}):
        out["list_choices"] = list(schema["items"]["enum"])
    # A setting's declared default is the config file's, not a new profile's (its colour
    # is the next of the palette, its driver follows from cdpUrl): not shown.
    text = _help(schema, with_default=source is not Settings)
    if out.get("list") == "comma":
        choices = out.get("list_choices")
        text += "; comma-separated" + (f": {','.join(choices)}" if choices else "")
    out.pop("list_choices", None)
    if text:
        out["help"] = text
    out.update(a.options)
    return out


def table() -> dict[str, list[dict[str, Any]]]:
    """Per command, each argument as plain data: flags, the field, argparse's options."""
    out: dict[str, list[dict[str, Any]]] = {}
    for command, (model, args) in COMMANDS.items():
        rows = []
        for a in args:
            row: dict[str, Any] = {"flags": list(a.flags), "dest": a.dest}
            if a.json_name is not None and a.json_name in _fields(model):
                row["field"] = a.json_name
            row["options"] = _derived(command, model, a)
            rows.append(row)
        out[command] = rows
    return out


def render() -> str:
    """The text of ``cli_args.py``: one line per argument, so a change reads as a diff."""
    lines = [
        '"""Generated from engine/options.py by cli_schema.py (`make cli-args`): do not edit.',
        "",
        "The page commands' arguments as plain data, so a CLI call needs no pydantic (issue 14).",
        "Per command, each argument: its flags, argparse's dest, the request field it fills",
        '(absent: the CLI\'s own) and argparse\'s options ("type": "int"; "list": "comma").',
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        "    from typing import Any",
        "",
        "# fmt: off",
        "ARGS: dict[str, list[dict[str, Any]]] = {",
    ]
    for command, rows in table().items():
        lines.append(f"    {command!r}: [")
        lines += [f"        {row!r}," for row in rows]
        lines.append("    ],")
    lines += ["}", "# fmt: on", ""]
    return "\n".join(lines)


# --- the answers the CLI reads, as TypedDicts -----------------------------------------

ANSWERS_GENERATED = Path(__file__).with_name("cli_answers.py")

# The page commands' answers (results.py); what they list comes along.
ANSWER_MODELS: tuple[type[BaseModel], ...] = (
    r.Snapshot,
    r.ActResult,
    r.Navigated,
    r.Screenshot,
    r.Console,
    r.Pdf,
    r.Armed,
    r.TabResult,
    r.Status,
    r.Profiles,
)


def _type_text(t: Any, need: Callable[[type[Any]], str]) -> str:
    """``t`` written as a type annotation; a model or dataclass by its TypedDict's name."""
    if t is type(None):
        return "None"
    if t is Any:
        return "Any"
    if t in (str, int, float, bool):
        return str(t.__name__)
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_text(a, need) for a in args)
    if origin is list:
        return f"list[{_type_text(args[0], need)}]"
    if origin is dict:
        return f"dict[{_type_text(args[0], need)}, {_type_text(args[1], need)}]"
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if isinstance(t, type) and (issubclass(t, BaseModel) or dataclasses.is_dataclass(t)):
        return need(t)
    raise TypeError(f"no TypedDict spelling for {t!r}")


def render_answers() -> str:
    """The text of ``cli_answers.py``: each answer the CLI reads as a ``TypedDict`` with
    the wire's key names; a key the model may leave unset is ``NotRequired``."""
    done: dict[type[Any], str] = {}

    def need(cls: type[Any]) -> str:
        if cls in done:
            return cls.__name__
        keys: list[str] = []
        if dataclasses.is_dataclass(cls):
            hints = typing.get_type_hints(cls)
            for f in dataclasses.fields(cls):
                keys.append(f"    {f.name}: {_type_text(hints[f.name], need)}")
        else:
            for name, info in cls.model_fields.items():
                text = _type_text(info.annotation, need)
                key = info.alias or name
                assert key.isidentifier(), f"{cls.__name__}.{key}: not a class-syntax key"
                keys.append(f"    {key}: " + (text if info.is_required() else f"NotRequired[{text}]"))
        done[cls] = "\n".join([f"class {cls.__name__}(TypedDict):", *keys, "", ""])
        return cls.__name__

    for model in ANSWER_MODELS:
        need(model)
    lines = [
        '"""Generated from results.py by cli_schema.py (`make cli-args`): do not edit.',
        "",
        "The answers the CLI reads, as TypedDicts with the wire's key names, so mypy checks",
        "every key the CLI reads against the models. Imported only under TYPE_CHECKING: a",
        "CLI call reads plain JSON and imports neither this nor pydantic (issue 14).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, NotRequired, TypedDict",
        "",
        "",
        *done.values(),  # each after what it names: need() finishes the inner ones first
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    GENERATED.write_text(render(), encoding="utf-8")
    ANSWERS_GENERATED.write_text(render_answers(), encoding="utf-8")
    print(f"wrote {GENERATED} and {ANSWERS_GENERATED}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
