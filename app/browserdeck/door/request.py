"""A request describes itself once: its answer, its engine method, its name, its hints.

Every way in builds the same model: the API takes it as a body (or from the query), MCP
tools and CLI commands are derived from its ``mcp`` and ``cli`` hints (or call the door
with it in one line), and ``Deck`` carries it out. Each field's type, description,
default and bounds are declared on the model; nothing about a request is written twice.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from browserdeck.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Self

    from pydantic import TypeAdapter

    from browserdeck.config import Config

A = TypeVar("A")
R = TypeVar("R")


@dataclass(frozen=True)
class Arg:
    """One CLI argument: its flags, the request field it fills (JSON name; default: the
    flag's own name in camelCase) and argparse options beside those derived from the field."""

    flags: tuple[str, ...]
    field: str | None = None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    own: bool = False  # the CLI's own argument: fills no field; ``options`` says it all

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


# The wait and timeout every timed command takes.
TIMED = (arg("--timeout-ms"), arg("--wait-ms"))


@dataclass(frozen=True)
class Cli:
    """The CLI command a request is (``browserdeck <command> …``), generated into
    ``cli/args.py`` by ``cli/schema.py``; ``said`` is the line it prints (``words.say``)."""

    command: str
    help: str
    args: tuple[Arg, ...] = ()
    said: str = ""
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)  # sent as they are (back: action)


@dataclass(frozen=True)
class Mcp:
    """The MCP tool a request is, derived by ``mcpserver/tools/derived.py``: its name,
    description and arguments (the model's fields by JSON name, in order), whether it
    takes ``snapshot`` (what the action changed), and the line it answers (``words.say``,
    default: the request's ``said``); ``told`` adds what the answer holds in lines (it is
    given the answer's JSON and how page text is shown: the CLI prints the same lines as
    they are, ``door/networds.py``)."""

    tool: str
    description: str
    args: tuple[str, ...]
    snapshot: bool = True
    group: Literal["core", "all"] = "core"
    said: str | None = None
    told: Callable[[dict[str, Any], Any], str] | None = None


class Strict(BaseModel):
    """The config of every request and of its parts: camelCase on the wire, no unknown
    field, strict (JSON true is not the integer 1, "5" is not 5: what the OpenAPI spec
    says is what the server takes), and JSON Schema's integer 7707.0 is the int it is."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True
    )

    @model_validator(mode="before")
    @classmethod
    def _integral_numbers(cls, data: Any) -> Any:
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


class Request(Strict, Generic[A]):
    """A call at the front door whose answer is ``A``: ``class Start(Request[ProfileStatus])``.

    ``op`` is the call's name in the activity log; ``prepared`` applies the settings'
    policies (URL rules, upload roots, the default wait) before anyone sees the request.
    """

    answer: ClassVar[type[Any]]
    op: ClassVar[str]  # the call's name in the activity log: "snapshot", "act", "start" …
    said: ClassVar[str] = ""  # what was done, in a line (words.say over the JSON fields)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # The answer is the type argument of the first parametrised base: Request[X].
        for base in cls.__mro__:
            meta = getattr(base, "__pydantic_generic_metadata__", None) or {}
            args = meta.get("args") or ()
            if meta.get("origin") is not None and args:
                cls.answer = args[0] if isinstance(args[0], type) else type(None)
                return

    @classmethod
    def of(cls, values: Mapping[str, Any], *, where: str = "") -> Self:
        """The request from plain values (JSON or Python names; None: not given); each
        field it refuses is named in one ``InvalidInput``."""
        try:
            return cls.model_validate({k: v for k, v in values.items() if v is not None})
        except ValidationError as exc:
            raise invalid(exc, where) from None

    def prepared(self, settings: Config) -> Self:
        """This request with the settings' policies applied (a copy when they change it)."""
        return self

    def given(self) -> dict[str, Any]:
        """The JSON fields that were given, camelCase (what ``said`` is filled with)."""
        return self.model_dump(by_alias=True, exclude_unset=True)


class TabRequest(Request[A]):
    """A request about one tab; ``engine_method`` is the engine's method that answers it."""

    engine_method: ClassVar[str]
    mcp: ClassVar[Mcp | None] = None
    cli: ClassVar[tuple[Cli, ...]] = ()
    # The tab list changes (the tray redraws it) after every call of this kind.
    changes_tabs: ClassVar[bool] = False
    # It may raise the browser's window (a click opening a popup): the door keeps the
    # user's focus while it runs.
    raises_window: ClassVar[bool] = False

    def named_tab(self) -> str | None:
        """The tab the request names itself (``targetId`` in a body), if any."""
        return None

    def element_refs(self) -> list[str]:
        """The element refs the request acts on, the first being "the element"."""
        found = [getattr(self, name, None) for name in ("ref", "start_ref", "input_ref")]
        return [ref for ref in found if isinstance(ref, str) and ref]


def one_of(adapter: TypeAdapter[R], values: Mapping[str, Any], *, where: str = "") -> R:
    """The request of a union its ``kind`` picks (an act, a storage call), from plain
    values (as ``Request.of``)."""
    try:
        return adapter.validate_python({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise invalid(exc, where) from None


def invalid(exc: ValidationError, where: str = "") -> InvalidInput:
    """A refused request, each field named: ``browser_click: button: Input should be …``."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'the request'}: {e['msg']}" for e in exc.errors()
    )
    return InvalidInput(
        f"{where + ': ' if where else ''}invalid request: {problems}",
        hint="the fields and their types are in the tool's schema, the command's --help "
        "and GET /openapi.json",
    )
