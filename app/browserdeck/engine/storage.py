"""The cookie and web-storage requests of ``POST /storage``, each one model (as acts.py).

``StorageRequest`` is the body: pydantic picks the model by ``kind``. The MCP tools
carry Playwright MCP's names (its "storage" capability: ``browser_cookie_list`` …
``browser_sessionstorage_clear``) and follow from each model's ``mcp`` hint
(mcpserver/tools/storage.py); the handlers are in storage_calls.py. What they list has
every secret's value redacted (``Engine._finish``), like every answer.

Cookies are the profile's (a browser keeps one jar): ``cookie_list`` and
``cookie_clear`` take those the current page gets unless ``all`` is set, since the
user's own Chrome (an extension profile) holds every login of theirs. Web storage is
the current page's origin's.
"""

from __future__ import annotations

import functools
import typing
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from browserdeck import results as r
from browserdeck.door.request import Mcp, one_of
from browserdeck.engine.fields import TabBody

if TYPE_CHECKING:
    from collections.abc import Mapping


class StorageCall(TabBody[r.Stored]):
    """A cookie or web-storage call on a tab."""

    op = "storage"
    engine_method = "storage"


_ALL = Field(
    default=False,
    description="every cookie of the profile (default: those the current page gets)",
)


class CookieList(StorageCall):
    said = "cookies"
    mcp = Mcp(
        "browser_cookie_list",
        "List cookies of the current page (all: every cookie of the profile), optionally "
        "filtered by domain/path. Secrets show as <secret>NAME</secret>.",
        ("domain", "path", "all"),
        group="all",
    )

    kind: Literal["cookie_list"]
    domain: str | None = Field(default=None, description="only cookies whose domain contains this")
    path: str | None = Field(default=None, description="only cookies whose path starts with this")
    all: bool = _ALL


class CookieGet(StorageCall):
    said = "cookie {name}"
    mcp = Mcp("browser_cookie_get", "Get a cookie by name.", ("name",), group="all")

    kind: Literal["cookie_get"]
    name: str = Field(min_length=1, description="the cookie's name")


class CookieSet(StorageCall):
    said = "set cookie {name}"
    mcp = Mcp(
        "browser_cookie_set",
        "Set a cookie (domain: the current page's host unless given).",
        ("name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite"),
        group="all",
    )

    kind: Literal["cookie_set"]
    name: str = Field(min_length=1, max_length=4096)
    value: str = Field(max_length=16_384)
    domain: str | None = Field(default=None, description="default: the current page's host")
    path: str = "/"
    expires: float | None = Field(default=None, description="Unix seconds; default: a session cookie")
    http_only: bool = False
    secure: bool = False
    same_site: Literal["Strict", "Lax", "None"] | None = None


class CookieDelete(StorageCall):
    said = "deleted cookie {name}"
    mcp = Mcp("browser_cookie_delete", "Delete a cookie by name.", ("name", "domain"), group="all")

    kind: Literal["cookie_delete"]
    name: str = Field(min_length=1)
    domain: str | None = Field(default=None, description="only the cookie of this domain")


class CookieClear(StorageCall):
    said = "cleared cookies"
    mcp = Mcp(
        "browser_cookie_clear",
        "Clear the cookies the current page gets (all: every cookie of the profile).",
        ("all",),
        group="all",
    )

    kind: Literal["cookie_clear"]
    all: bool = _ALL


Area = Annotated[Literal["local", "session"], Field(description="localStorage or sessionStorage")]
_KEY = Field(min_length=1, description="the item's key")


class _OnArea(StorageCall):
    area: Area = "local"


class _OnKey(_OnArea):
    key: str = _KEY


class StorageList(_OnArea):
    said = "{area|local}Storage"

    kind: Literal["storage_list"]


class StorageGet(_OnKey):
    said = "{area|local}Storage {key}"

    kind: Literal["storage_get"]


class StorageSet(_OnKey):
    said = "set {area|local}Storage {key}"

    kind: Literal["storage_set"]
    value: str = Field(max_length=1_000_000)


class StorageDelete(_OnKey):
    said = "deleted {area|local}Storage {key}"

    kind: Literal["storage_delete"]


class StorageClear(_OnArea):
    said = "cleared {area|local}Storage"

    kind: Literal["storage_clear"]


def _tools(area: str, area_title: str) -> list[tuple[type[StorageCall], Mcp]]:
    """Playwright MCP's web-storage tools: one per area and call, the area fixed."""
    what = f"{area_title} of the current page's origin"
    return [
        (StorageList, Mcp(f"browser_{area}storage_list", f"List {what}.", (), group="all")),
        (
            StorageGet,
            Mcp(f"browser_{area}storage_get", f"Get an item of {what}.", ("key",), group="all"),
        ),
        (
            StorageSet,
            Mcp(f"browser_{area}storage_set", f"Set an item of {what}.", ("key", "value"), group="all"),
        ),
        (
            StorageDelete,
            Mcp(f"browser_{area}storage_delete", f"Delete an item of {what}.", ("key",), group="all"),
        ),
        (StorageClear, Mcp(f"browser_{area}storage_clear", f"Clear {what}.", (), group="all")),
    ]


# The web-storage tools: (model, its tool, the fields the tool fixes).
WEB_STORAGE_TOOLS: list[tuple[type[StorageCall], Mcp, dict[str, Any]]] = [
    (model, hint, {"area": area})
    for area, title in (("local", "localStorage"), ("session", "sessionStorage"))
    for model, hint in _tools(area, title)
]

AnyStorage = (
    CookieList
    | CookieGet
    | CookieSet
    | CookieDelete
    | CookieClear
    | StorageList
    | StorageGet
    | StorageSet
    | StorageDelete
    | StorageClear
)
# The request body of POST /storage: pydantic picks the model by "kind".
Storage = Annotated[AnyStorage, Field(discriminator="kind")]


@functools.cache
def _adapter() -> TypeAdapter[AnyStorage]:
    return TypeAdapter(Storage)


def storage_of(values: Mapping[str, Any], *, where: str = "") -> AnyStorage:
    """The storage call its ``kind`` names, from plain values (as ``Request.of``)."""
    return one_of(_adapter(), values, where=where)

# The storage kinds, as the models of the /storage body declare them.
KINDS = [typing.get_args(m.model_fields["kind"].annotation)[0] for m in typing.get_args(AnyStorage)]
