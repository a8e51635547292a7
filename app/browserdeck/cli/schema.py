"""The CLI's page commands, derived from the request models' ``cli`` hints.

A request's hint names its command, its help, the line it prints and the CLI's spelling
of its fields (``--double`` is ``doubleClick``, ``URL`` is ``url``); each argument's
help, choices, type and default come from the field itself (``create-profile``'s from
the profile settings' declarations, ``config.CREATE_FIELDS``).

A CLI call must not import pydantic (it is most of the start-up), so the table is
generated ahead of time into ``cli/args.py``, plain data that ``cli.engine`` reads:

    make cli-args        # = .venv/bin/python -m browserdeck.cli.schema

``tests/core/test_cli_args.py`` fails while the committed file is stale.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from browserdeck import config
from browserdeck import results as r
from browserdeck.door import logins
from browserdeck.door.request import Arg, TabRequest, arg, own
from browserdeck.engine import netoptions as n
from browserdeck.engine import options as o

GENERATED = Path(__file__).with_name("args.py")


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


def _requests() -> list[type[TabRequest[Any]]]:
    """The requests about a tab that are CLI commands (a ``cli`` hint), in the order of
    ``browserdeck --help``: those of options.py as declared, then the act kinds."""
    declared = [
        m
        for m in vars(o).values()
        if isinstance(m, type) and issubclass(m, TabRequest) and m.__module__ == o.__name__
    ]
    return [m for m in [*declared, *n.NETWORK_REQUESTS, *typing.get_args(o.AnyAct)] if m.cli]


# Per command: the model its arguments fill, and the CLI's spelling of them, in order:
# create-profile's from the profile settings, the rest from each request's ``cli`` hint.
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
    **{hint.command: (model, hint.args) for model in _requests() for hint in model.cli},
    # `state save|load|list|rm NAME`: the auth-state requests (door/logins.py) share `name`.
    "state": (
        logins.SaveAuthState,
        (
            own(
                "action",
                choices=["save", "load", "list", "rm"],
                help="save the profile's logins, load them into a profile, list or delete them",
            ),
            arg("name", nargs="?"),
        ),
    ),
}


def described() -> dict[str, dict[str, Any]]:
    """Per page command: its help, the line it prints (``words.say``) and the fields it
    always sends (an act's ``kind``, ``back``'s action)."""
    out: dict[str, dict[str, Any]] = {}
    for model in _requests():
        kind = model.model_fields.get("kind")
        fixed = {"kind": typing.get_args(kind.annotation)[0]} if kind is not None else {}
        for hint in model.cli:
            out[hint.command] = {
                "help": hint.help,
                "said": hint.said or model.said,
                "fields": {**fixed, **hint.fields},
            }
    return out


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
            out["list"] = "comma"  # cli.engine splits it
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
    """The text of ``cli/args.py``: one line per argument, so a change reads as a diff."""
    lines = [
        '"""Generated from engine/options.py by cli/schema.py (`make cli-args`): do not edit.',
        "",
        "The page commands' arguments as plain data, so a CLI call needs no pydantic.",
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
    lines += [
        "}",
        "",
        "# Per page command, in --help's order: its help, the line it prints (words.say) and",
        "# the fields it always sends.",
        "COMMANDS: dict[str, dict[str, Any]] = {",
    ]
    lines += [f"    {command!r}: {spec!r}," for command, spec in described().items()]
    lines += ["}", "# fmt: on", ""]
    return "\n".join(lines)


# --- the answers the CLI reads, as TypedDicts -----------------------------------------

ANSWERS_GENERATED = Path(__file__).with_name("answers.py")

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
    r.AuthStates,
    r.AuthStateLoaded,
    r.Offline,
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
    """The text of ``cli/answers.py``: each answer the CLI reads as a ``TypedDict`` with
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
        '"""Generated from results.py by cli/schema.py (`make cli-args`): do not edit.',
        "",
        "The answers the CLI reads, as TypedDicts with the wire's key names, so mypy checks",
        "every key the CLI reads against the models. Imported only under TYPE_CHECKING: a",
        "CLI call reads plain JSON and imports neither this nor pydantic.",
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
