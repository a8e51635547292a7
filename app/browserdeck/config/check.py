"""The one check of a setting's value: pydantic, from the declaration, lazily.

The config loader, profile creation (API, CLI) and the settings dialog all call
``check_setting``, so they cannot disagree; a refusal is written for a person
(``_refusal``). pydantic is imported when a value is first checked, not with the config:
the lean CLI imports the config for paths and ports and must not pay for it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from browserdeck.config.schema import Setting
from browserdeck.errors import InvalidInput
from browserdeck.policy import origins

if TYPE_CHECKING:
    from pydantic import TypeAdapter

COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")


def _nonblank(value: str) -> str:
    if not value.strip():
        raise ValueError("empty")
    return value


def _upper(value: str) -> str:
    # Not str.upper itself: pydantic reads a validator's signature, and a builtin's is
    # parsed from its text with tokenize's regexes (~3 ms of a service's start).
    return value.upper()


def _cdp_url_shape(value: str) -> str:
    from browserdeck.policy.urls import CDP_URL  # the one URL policy: what clients can connect to

    if not CDP_URL.fullmatch(value):
        raise ValueError("not a CDP URL")
    return value


def _split_paths(value: Any) -> Any:
    # A list on disk; one string with os.pathsep between paths from a text field.
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(os.pathsep) if v.strip()]
    return value


def _path_item(value: str) -> str:
    if not value.strip() or "\0" in value:
        raise ValueError("not a path")
    return value.strip()


def _split_words(value: Any) -> Any:
    # A list on disk; one string with commas between words from a text field.
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def _word_item(value: str) -> str:
    # Letters, digits, spaces, '-' and apostrophes: a word or phrase as a person writes it,
    # matched as whole words (it becomes part of a pattern, so no pattern syntax).
    word = " ".join(value.split())
    if not word or len(word) > 60 or not all(c.isalnum() or c in " -'’" for c in word):
        raise ValueError("not a word")
    return word


def _origin_rules(value: list[str]) -> list[str]:
    return origins.check_rules(value)


def split_rules(value: Any) -> Any:
    """Origin rules as a list: a list on disk; one line of text from a form (commas or
    spaces between rules); nothing is none."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in re.split(r"[\s,]+", value) if v]
    return value


def _annotation(setting: Setting) -> Any:
    """The pydantic type of one declared setting (constraints from the declaration)."""
    from pydantic import AfterValidator, BeforeValidator, StrictBool, StrictInt, StrictStr
    from pydantic import Field as PydanticField

    kind = setting.type
    t: Any
    if kind == "bool":
        t = StrictBool
    elif kind == "port":
        t = Annotated[StrictInt, PydanticField(ge=1024, le=65535)]
    elif kind == "int":
        t = Annotated[StrictInt, PydanticField(ge=setting.minimum, le=setting.maximum)]
    elif kind == "choice":
        t = Literal[setting.choices]
    elif kind == "color":
        t = Annotated[StrictStr, PydanticField(pattern=COLOR_RE.pattern), AfterValidator(_upper)]
    elif kind == "url":
        t = Annotated[StrictStr, AfterValidator(_cdp_url_shape)]
    elif kind == "paths":
        t = Annotated[
            list[Annotated[StrictStr, AfterValidator(_path_item)]], BeforeValidator(_split_paths)
        ]
    elif kind == "words":
        t = Annotated[
            list[Annotated[StrictStr, AfterValidator(_word_item)]], BeforeValidator(_split_words)
        ]
    elif kind == "origins":
        t = Annotated[
            list[StrictStr], BeforeValidator(split_rules), AfterValidator(_origin_rules)
        ]
    elif kind in ("path", "profile-ref", "string"):
        t = Annotated[StrictStr, AfterValidator(_nonblank)]
    else:
        raise AssertionError(f"unknown setting type {kind}")
    return t | None if setting.default is None and kind not in ("paths", "words") else t


_ADAPTERS: dict[tuple[Any, ...], TypeAdapter[Any]] = {}


def _adapter(setting: Setting) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    # Built once per declaration (a TypeAdapter compiles a validator); Setting itself is
    # not hashable (a list default), so its type-relevant parts are the key.
    key = (setting.type, setting.choices, setting.minimum, setting.maximum, setting.default is None)
    adapter = _ADAPTERS.get(key)
    if adapter is None:
        adapter = _ADAPTERS[key] = TypeAdapter(_annotation(setting))
    return adapter


def _refusal(setting: Setting, value: Any, where: str) -> InvalidInput:
    """The plain-words error for a value the setting's type refused (what, and what to do)."""
    kind = setting.type
    if kind == "port":
        return InvalidInput(
            f"invalid {where} {value!r}: ports must be integers from 1024 to 65535",
            hint="pick a free port above 1024",
            code="invalid_port",
        )
    if kind == "color":
        return InvalidInput(
            f"invalid {where} {value!r}: expected #RRGGBB",
            hint="write a hex colour like '#FF4500'",
            code="invalid_color",
        )
    if kind == "url":
        if not isinstance(value, str):
            return InvalidInput(
                f"invalid {where} {value!r}: expected a URL",
                hint="e.g. http://127.0.0.1:9222 or ws://host:9222/devtools/browser/…",
                code="invalid_url",
            )
        return InvalidInput(
            f"invalid {where} {value!r}: expected http(s):// or ws(s):// with a host",
            hint="e.g. http://127.0.0.1:9222",
            code="invalid_url",
        )
    if kind == "bool":
        why = "expected true or false"
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            why = "expected an integer"
        else:
            lo = setting.minimum if setting.minimum is not None else value
            hi = setting.maximum if setting.maximum is not None else value
            return InvalidInput(
                f"invalid {where} {value}: expected a whole number from {lo} to {hi}",
                code="invalid_setting",
            )
    elif kind == "choice":
        why = f"expected one of {', '.join(setting.choices)}"
    elif kind == "paths":
        why = "expected a list of paths"
    elif kind == "words":
        why = (
            "expected words or phrases separated by commas (letters, digits, spaces, '-' "
            "and apostrophes; at most 60 characters each)"
        )
    elif kind == "origins":
        try:
            origins.check_rules(value)
            why = "expected a list of origins"
        except origins.RuleError as exc:
            why = str(exc)
    else:
        why = "expected a non-empty string"
    return InvalidInput(f"invalid {where} {value!r}: {why}", code="invalid_setting")


def check_setting(setting: Setting, value: Any, where: str | None = None) -> Any:
    """``value`` validated (and normalised) as ``setting`` declares it; raises InvalidInput."""
    from pydantic import ValidationError

    try:
        return _adapter(setting).validate_python(value)
    except ValidationError:
        raise _refusal(setting, value, where or setting.key) from None


def setting_schema(setting: Setting) -> dict[str, Any]:
    """The JSON schema of one declared setting (for OpenAPI), from the same pydantic type
    ``check_setting`` validates with, plus its description and default."""
    out = dict(_adapter(setting).json_schema())
    out["description"] = setting.description
    if setting.default is not None:
        out["default"] = setting.default
    return out
