"""The requests about a tab's network, declared once (as ``options.py`` declares the rest).

Routes (``browser_route`` …, named and shaped as Playwright MCP's), the online/offline
switch, HAR recordings, and the requests a tab made. Their engine methods are the
engine's network calls (``engine/netcalls.py``, ``engine_method = "network.<name>"``),
which also learn who calls: a route belongs to the caller's agent session.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from browserdeck import results as r
from browserdeck import results_network as rn
from browserdeck.door import networds
from browserdeck.door.request import Cli, Mcp, TabRequest, arg
from browserdeck.engine.fields import TabBody
from browserdeck.engine.routes import PROFILE, ResourceType, Route
from browserdeck.policy import urls

if TYPE_CHECKING:
    from typing import Self

_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}"
_HEADER_NAME = re.compile(rf"^{_TOKEN}$")
# A "Name: Value" line as header_pairs reads it, published in the API's schema.
HEADER_LINE = rf"^\s*{_TOKEN}\s*:[\s\S]*$"
HeaderLine = Annotated[str, Field(json_schema_extra={"pattern": HEADER_LINE})]
Scope = Literal["session", "profile"]
SCOPE_WORDS = "profile: every tab, not only your session's"
TYPE_WORDS = "document, script, stylesheet, image, font, fetch, xhr …"


def header_pairs(lines: list[str], where: str) -> tuple[tuple[str, str], ...]:
    """``"Name: Value"`` lines as pairs; a line without a valid name is refused."""
    out = []
    for line in lines:
        name, sep, value = line.partition(":")
        name = name.strip()
        if not sep or not _HEADER_NAME.match(name):
            raise ValueError(f'{where}: {line!r} is not "Name: Value"')
        out.append((name, value.strip()))
    return tuple(out)


class RouteOptions(TabBody[rn.Routes]):
    op, engine_method = "route", "network.route"
    # The API's schema says what the server takes (_consistent below): a glob that can
    # match a URL unless regex is true (then a regular expression); abort with no answer
    # of its own; removeHeaders only on a request that goes on; no WebSocket.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"regex": {"const": True}}, "required": ["regex"]},
                    "then": {"properties": {"pattern": {"format": "regex"}}},
                    "else": {"properties": {"pattern": {"pattern": urls.GLOB_PATTERN}}},
                },
                {
                    "if": {"properties": {"abort": {"const": True}}, "required": ["abort"]},
                    "then": {"properties": {"status": {"type": "null"}, "body": {"type": "null"},
                                            "headers": {"maxItems": 0}}},
                },
                {
                    "if": {"properties": {"removeHeaders": {"type": "string"}},
                           "required": ["removeHeaders"]},
                    "then": {"properties": {"status": {"type": "null"}, "body": {"type": "null"}}},
                },
                {"not": {"properties": {"resourceType": {"const": "websocket"}},
                         "required": ["resourceType"]}},
            ]
        }
    )  # fmt: skip
    mcp = Mcp(
        "browser_route",
        "Mock (status, body), change the headers of, or abort network requests matching a "
        "URL pattern, in this session's tabs.",
        ("pattern", "status", "body", "contentType", "headers", "removeHeaders", "abort",
         "resourceType", "regex", "scope"),
        snapshot=False,
        said="",
        told=networds.routes_text,
    )  # fmt: skip
    cli = (
        Cli(
            "route",
            "mock, change or block requests matching a URL pattern",
            (
                arg("pattern"),
                arg("--status"),
                arg("--body"),
                arg("--content-type"),
                arg("--header", field="headers", action="append", metavar="'NAME: VALUE'"),
                arg("--remove-headers"),
                arg("--abort"),
                arg("--resource-type"),
                arg("--regex"),
                arg("--scope"),
            ),
        ),
    )

    pattern: str = Field(
        min_length=1,
        max_length=2000,
        description='URL glob ("**/api/users", "**/*.{png,jpg}"), or a regex with regex',

    )
    status: int | None = Field(
        default=None, ge=100, le=599, description="HTTP status to return (default 200)"
    )
    body: str | None = Field(
        default=None, max_length=5_000_000, description="response body (text, JSON)"
    )
    content_type: str | None = Field(
        default=None,
        max_length=200,
        description="the response's Content-Type",
    )
    headers: list[HeaderLine] = Field(
        default_factory=list,
        max_length=50,
        description='"Name: Value" headers to add (the response\'s, with status or body)',
    )
    remove_headers: str | None = Field(
        default=None,
        max_length=2000,
        description="request headers to remove, comma-separated",
    )
    abort: bool = Field(default=False, description="fail matching requests")
    resource_type: ResourceType | None = Field(default=None, description="only this type: " + TYPE_WORDS)
    regex: bool = Field(default=False, description="pattern is a regular expression")
    scope: Scope = Field(default="session", description=SCOPE_WORDS)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.regex:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern is not a regular expression: {exc}") from None
        else:
            urls.check_glob(self.pattern)
        if self.abort and (self.status is not None or self.body is not None or self.headers):
            raise ValueError("abort fails the request: it takes no status, body or headers")
        header_pairs(self.headers, "headers")
        if self.resource_type == "websocket":
            raise ValueError(
                "a WebSocket passes no route (Chromium does not pause them): keep agents off "
                "its origin with blockedOrigins instead"
            )
        if self.remove_headers is not None and self.fulfils:
            raise ValueError("removeHeaders changes a request that goes on: not with status or body")
        return self

    @property
    def fulfils(self) -> bool:
        return self.status is not None or self.body is not None

    def route(self, owner: str) -> Route:
        removed = tuple(
            h.strip() for h in (self.remove_headers or "").split(",") if h.strip()
        )
        return Route(
            owner=PROFILE if self.scope == "profile" else owner,
            pattern=self.pattern,
            regex=self.regex,
            resource_type=self.resource_type,
            action="abort" if self.abort else "fulfill" if self.fulfils else "continue",
            status=self.status or 200,
            body=None if self.body is None else self.body.encode(),
            content_type=self.content_type,
            headers=header_pairs(self.headers, "headers"),
            remove_headers=removed,
        )


class RouteListOptions(TabRequest[rn.Routes]):
    op, engine_method = "routes", "network.routes"
    mcp = Mcp(
        "browser_route_list",
        "List the active network routes (yours and the profile-wide ones).",
        (),
        snapshot=False,
        said="",
        told=networds.routes_text,
    )
    cli = (Cli("routes", "list the active network routes"),)


class UnrouteOptions(TabRequest[rn.Routes]):
    op, engine_method = "unroute", "network.unroute"
    mcp = Mcp(
        "browser_unroute",
        "Remove network routes matching a pattern (or all your routes if no pattern specified).",
        ("pattern", "scope"),
        snapshot=False,
        said="",
        told=networds.routes_text,
    )
    cli = (
        Cli(
            "unroute",
            "remove routes (a pattern's, or all of yours)",
            (arg("pattern", nargs="?"), arg("--scope")),
        ),
    )

    pattern: str | None = Field(
        default=None, max_length=2000, description="the routes' pattern (omit: all)"
    )
    scope: Scope = Field(default="session", description=SCOPE_WORDS)


class NetworkStateOptions(TabBody[r.Offline]):
    op, engine_method = "network-state", "network.set_state"
    mcp = Mcp(
        "browser_network_state_set",
        "Sets this tab's network online or offline (and its origin's service workers').",
        ("state",),
        snapshot=False,
        said="network is now {state}",
    )
    cli = (Cli("network-state", "take the tab offline or back online", (arg("state"),)),)
    said = "network is now {state}"

    state: Literal["online", "offline"]


class HarStartOptions(TabBody[rn.Har]):
    op, engine_method = "har-start", "network.har_start"
    mcp = Mcp(
        "browser_har_start",
        "Record a HAR of this tab's network traffic (session: of all your tabs) until "
        "browser_har_stop.",
        ("session", "content"),
        snapshot=False,
        said="",
        told=networds.har_text,
    )
    cli = (
        Cli(
            "har-start",
            "start recording a HAR of the tab (or of the session's tabs)",
            (arg("--session"), arg("--content")),
        ),
    )

    session: bool = Field(default=False, description="every tab your session works in")
    content: Literal["embed", "omit"] = Field(default="embed", description="response bodies")


class HarStopOptions(TabBody[rn.Har]):
    op, engine_method = "har-stop", "network.har_stop"
    mcp = Mcp(
        "browser_har_stop",
        "Stop the HAR recording; answers the .har file's path.",
        (),
        snapshot=False,
        said="",
        told=networds.har_text,
    )
    cli = (Cli("har-stop", "stop the HAR recording; prints the file's path"),)


class NetworkRequestsOptions(TabRequest[rn.NetworkRequests]):
    op, engine_method = "network-requests", "network.requests"
    mcp = Mcp(
        "browser_network_requests",
        "Network requests of this tab, numbered for browser_network_request.",
        ("filter", "resourceType", "method", "status", "failed"),
        snapshot=False,
        said="",
        told=networds.requests_text,
    )
    cli = (
        Cli(
            "requests",
            "the tab's network requests (filters: URL text, type, method, status)",
            (
                arg("--filter"),
                arg("--resource-type"),
                arg("--method"),
                arg("--status"),
                arg("--failed"),
                arg("--limit"),
            ),
        ),
    )

    filter: str | None = Field(default=None, max_length=2000, description="only URLs with this text")
    resource_type: ResourceType | None = Field(default=None, description="only this type: " + TYPE_WORDS)
    method: str | None = Field(default=None, max_length=20, description="only this method")
    status: int | None = Field(default=None, ge=100, le=599, description="only this status")
    failed: bool = Field(default=False, description="only failed or refused ones")
    limit: int = Field(default=100, ge=1, le=500, description="the newest this many")

    def keeps(self, entry: r.RequestEntry) -> bool:
        if self.filter and self.filter.lower() not in entry.url.lower():
            return False
        if self.resource_type and entry.resource_type != self.resource_type:
            return False
        if self.method and entry.method.upper() != self.method.upper():
            return False
        if self.status is not None and entry.status != self.status:
            return False
        return not self.failed or bool(entry.failure)


Part = Literal["request-headers", "request-body", "response-headers", "response-body"]


class NetworkRequestOptions(TabRequest[rn.RequestDetail]):
    op, engine_method = "network-request", "network.request"
    mcp = Mcp(
        "browser_network_request",
        "Headers and body of one request (its number from browser_network_requests).",
        ("index", "part"),
        snapshot=False,
        said="",
        told=networds.request_text,
    )
    cli = (
        Cli(
            "request",
            "one request's headers and body",
            (arg("index"), arg("--part"), arg("--max-chars")),
        ),
    )

    index: int = Field(ge=1, description="the request's number")
    part: Part | None = Field(default=None, description="only this part")
    max_chars: int = Field(default=20_000, ge=100, le=1_000_000, description="cut each body here")


NETWORK_REQUESTS: tuple[type[TabRequest[Any]], ...] = (
    RouteOptions,
    RouteListOptions,
    UnrouteOptions,
    NetworkStateOptions,
    HarStartOptions,
    HarStopOptions,
    NetworkRequestsOptions,
    NetworkRequestOptions,
)
