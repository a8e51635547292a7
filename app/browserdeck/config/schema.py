"""What one setting declares, and how the table of settings is read off the models.

A setting is declared once, as a field of ``Config`` (global) or ``ProfileConfig`` (per
profile) whose default is ``declare(...)``: its type, default, bounds or choices, what
saving it restarts, the dialog's words and the reference's description. ``declared``
reads those fields back as ``Setting`` rows (``SETTINGS``, ``PROFILE_FIELDS``), which
drive validation, the settings dialog, ``reconfig``, the CLI and docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

# What a value is: picks the check (check.py), the dialog's editor and the docs' type.
Kind = Literal[
    "bool",
    "port",
    "int",
    "choice",
    "color",
    "url",
    "path",
    "paths",
    "words",
    "origins",
    "profile-ref",
    "string",
]
# Where the settings dialog shows a global setting (profile fields sit on the Profiles page).
Group = Literal["general", "ports", "advanced", "browsers", "profile"]
# What a running browser does when the setting changes: nothing ("": taken at once), or it
# restarts: "profile" (a profile's own field: that profile), "launched" (a global setting a
# launched browser reads at launch: every browser browserdeck launched), "relay" (the
# extension relay's: every extension profile).
Restarts = Literal["", "profile", "launched", "relay"]
# global: a key of the config; profile: a field of every profile; driver: a profile field
# only some drivers use (driverspecs.DRIVER_FIELDS, each DriverSpec's ``fields``).
Scope = Literal["global", "profile", "driver"]

T = TypeVar("T")
_DECLARATION = "browserdeck.setting"
_RESTARTS = "browserdeck.setting.restarts"


@dataclass(frozen=True)
class Setting:
    """One declared setting, as ``declared`` reads it off its model's field."""

    key: str  # on disk, in the API and the CLI: the field's name in camelCase
    type: Kind
    default: Any  # what an unset value means (docs, API schema, validation)
    description: str  # for the reference, the API and the CLI: may name keys and routes
    label: str = ""  # the dialog's label, in a person's words
    help: str = ""  # the dialog's line under the field: what it does for the user
    checkbox: str = ""  # a global on/off setting's checkbox text
    group: Group = "general"
    placeholder: str | None = None  # the dialog's text for "not set"
    choices: tuple[str, ...] = ()
    choice_labels: Mapping[str, str] = field(default_factory=dict)  # the dialog's words
    minimum: int | None = None
    maximum: int | None = None
    at_create: bool = False  # a profile field POST /profiles/create takes (CREATE_FIELDS)
    restarts: Restarts = ""
    scope: Scope = "global"
    attr: str = ""  # the model's attribute: control_port for controlPort

    @property
    def advanced(self) -> bool:
        return self.group == "advanced"


def declare(
    kind: Kind,
    default: T,
    description: str,
    *,
    label: str,
    help: str = "",
    checkbox: str = "",
    group: Group = "general",
    placeholder: str | None = None,
    choices: tuple[str, ...] = (),
    choice_labels: Mapping[str, str] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    at_create: bool = False,
    per_driver: bool = False,
    restarts: Restarts | None = None,
    unset: bool = False,
) -> T:
    """The default of a model's field that declares it a setting (typed as the default).

    ``restarts`` defaults by scope: a profile's field restarts its running browser, a
    global setting restarts nothing. ``unset``: a profile keeps None until the field is
    set (and saves nothing), ``default`` being what None stands for.
    """
    declaration = Setting(
        "",
        kind,
        default,
        description,
        label=label,
        help=help,
        checkbox=checkbox,
        group=group,
        placeholder=placeholder,
        choices=choices,
        choice_labels=dict(choice_labels or {}),
        minimum=minimum,
        maximum=maximum,
        at_create=at_create,
        scope="driver" if per_driver else "global",
    )
    # ``restarts`` None: by scope, which ``declared`` knows.
    metadata = {_DECLARATION: declaration, _RESTARTS: restarts}
    stored = None if unset else default
    if isinstance(stored, list):
        items = list(stored)
        return cast(T, field(default_factory=lambda: list(items), metadata=metadata))
    return cast(T, field(default=stored, metadata=metadata))


def key_of(attr: str) -> str:
    """The camelCase key of a model attribute (control_port → controlPort)."""
    head, *rest = attr.split("_")
    return head + "".join(part.capitalize() for part in rest)


def attr_of(key: str) -> str:
    """The model attribute of a camelCase key (controlPort → control_port)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def declared(model: type[Any], scope: Literal["global", "profile"]) -> tuple[Setting, ...]:
    """The settings a dataclass model declares, in field order."""
    out = []
    for f in dataclasses.fields(model):
        declaration = f.metadata.get(_DECLARATION)
        if declaration is None:
            continue
        own_scope: Scope = "driver" if declaration.scope == "driver" else scope
        restarts = f.metadata[_RESTARTS]
        if restarts is None:
            restarts = "" if scope == "global" else "profile"
        out.append(
            dataclasses.replace(
                declaration,
                key=key_of(f.name),
                attr=f.name,
                scope=own_scope,
                restarts=restarts,
                group="profile" if scope == "profile" else declaration.group,
            )
        )
    return tuple(out)
