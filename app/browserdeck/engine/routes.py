"""Routes: what a request matching a pattern gets instead of the network.

A route matches a URL by a glob (Playwright's: ``**/api/users``, ``**/*.{png,jpg}``;
``*`` is any run of characters but ``/``, ``**`` any run at all, ``{a,b}`` either, every
other character itself) or a regular expression (searched in the URL), and optionally by resource type; it then fulfils the request (status, body,
content type, headers), lets it go on with headers added or removed, or aborts it.

Routes belong to an owner: an agent session (the default: only the tabs that session
works in obey it), or the profile (``PROFILE``: every tab of the browser). The newest
route that matches a request decides it, as in Playwright.

Chromium is asked to pause only what a route may match: each glob is narrowed to a
``Fetch`` wildcard pattern that matches at least what the glob does (``fetch_patterns``),
so a request no route can match never waits for browserdeck; the exact match is made
here on what was paused.
"""

from __future__ import annotations

import base64
import itertools
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from playwright._impl.isomorphic.url_match import glob_to_regex_pattern, resolve_glob_base
from pydantic import AfterValidator, Field

# Playwright's resource types (the lower-case names of CDP's), which routes and request
# filters take.
RESOURCE_TYPES = (
    "document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr",
    "fetch", "prefetch", "eventsource", "websocket", "manifest", "signedexchange", "ping",
    "cspviolationreport", "preflight", "other",
)  # fmt: skip



def _known_type(value: str) -> str:
    if value not in RESOURCE_TYPES:
        raise ValueError(f"{value!r} is not a resource type ({', '.join(RESOURCE_TYPES)})")
    return value


# A string checked against the list, published as a pattern (the API's schema says what it
# takes; an enum would spell the list out to agents on every turn: playwright-mcp #1290).
TYPE_PATTERN = "^(?:" + "|".join(RESOURCE_TYPES) + ")$"
ResourceType = Annotated[
    str, AfterValidator(_known_type), Field(json_schema_extra={"pattern": TYPE_PATTERN})
]
_CDP_NAMES = {
    "xhr": "XHR",
    "texttrack": "TextTrack",
    "eventsource": "EventSource",
    "websocket": "WebSocket",
    "signedexchange": "SignedExchange",
    "cspviolationreport": "CSPViolationReport",
}
PROFILE = "*"  # the owner of a profile-wide route
Action = Literal["fulfill", "continue", "abort"]
_ids = itertools.count(1)


def cdp_type(resource_type: str) -> str:
    """CDP's name of a resource type: ``xhr`` is ``XHR``, ``image`` is ``Image``."""
    return _CDP_NAMES.get(resource_type, resource_type.capitalize())


def resource_type_of(cdp_name: str) -> str:
    return cdp_name.lower()


def resolved(glob: str) -> str:
    """``glob`` as Playwright reads it with no base URL (a bare origin gains its ``/``)."""
    return resolve_glob_base(None, glob)


def glob_regex(glob: str) -> str:
    """A glob as a regular expression over the whole URL: Playwright's own reading, as
    every glob browserdeck takes (``urls.check_glob``) is read."""
    return glob_to_regex_pattern(resolved(glob))


def glob_fetch_pattern(glob: str) -> str:
    """A ``Fetch.enable`` wildcard pattern that matches at least every URL ``glob`` does
    (``*`` any run, ``?`` one character, ``\\`` escapes)."""
    out: list[str] = []
    depth = 0
    glob = resolved(glob)
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            i += 1
            c = glob[i]
            if depth == 0:
                out.append("\\" + c if c in "*?\\" else c)
        elif c == "{":
            depth += 1
            if out[-1:] != ["*"]:
                out.append("*")
        elif c == "}" and depth:
            depth -= 1
        elif depth:
            pass  # inside {a,b}: the star stands for it
        elif c == "*":
            if out[-1:] != ["*"]:
                out.append("*")
        else:
            out.append("\\" + c if c == "?" else c)  # a glob's "?" is the character
        i += 1
    # Wider is safe (the exact match is made here, on what paused): a star at the end.
    return "".join(out) if out[-1:] == ["*"] else "".join(out) + "*"


@dataclass(frozen=True)
class Route:
    """One route: who set it, what it matches, what it does."""

    owner: str
    pattern: str
    regex: bool = False
    resource_type: str | None = None
    action: Action = "continue"
    status: int = 200
    body: bytes | None = None
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()  # fulfil: response headers; else: added
    remove_headers: tuple[str, ...] = ()
    id: int = field(default_factory=lambda: next(_ids))

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compiled(self.pattern, self.regex)

    def matches(self, url: str, resource_type: str) -> bool:
        if self.resource_type is not None and self.resource_type != resource_type:
            return False
        found = self.compiled
        return found.search(url) is not None

    def fetch_patterns(self) -> list[dict[str, Any]]:
        pattern = "*" if self.regex else glob_fetch_pattern(self.pattern)
        out: dict[str, Any] = {"urlPattern": pattern, "requestStage": "Request"}
        if self.resource_type is not None:
            out["resourceType"] = cdp_type(self.resource_type)
        return [out]

    def fulfil_params(self, request_id: str) -> dict[str, Any]:
        headers = [{"name": n, "value": v} for n, v in self.headers]
        if self.content_type and not any(n.lower() == "content-type" for n, _ in self.headers):
            headers.append({"name": "Content-Type", "value": self.content_type})
        return {
            "requestId": request_id,
            "responseCode": self.status,
            "responseHeaders": headers,
            "body": base64.b64encode(self.body or b"").decode("ascii"),
        }

    def continued_headers(self, sent: dict[str, str]) -> list[dict[str, str]] | None:
        """The request's headers after this route's changes (None: no change)."""
        if not self.headers and not self.remove_headers:
            return None
        drop = {h.lower() for h in self.remove_headers} | {n.lower() for n, _ in self.headers}
        kept = [(n, v) for n, v in sent.items() if n.lower() not in drop]
        return [{"name": n, "value": v} for n, v in [*kept, *self.headers]]

    def describe(self) -> str:
        """The route in a line, as ``browser_route_list`` shows it."""
        bits = []
        if self.regex:
            bits.append("regex")
        if self.resource_type:
            bits.append(f"type={self.resource_type}")
        if self.action == "abort":
            bits.append("abort")
        elif self.action == "fulfill":
            bits.append(f"status={self.status}")
            if self.body is not None:
                text = self.body.decode("utf-8", "replace")
                bits.append(f"body={text[:50]}{'…' if len(text) > 50 else ''}")
            if self.content_type:
                bits.append(f"contentType={self.content_type}")
        if self.headers:
            word = "headers" if self.action == "fulfill" else "addHeaders"
            bits.append(f"{word}={', '.join(f'{n}: {v}' for n, v in self.headers)}")
        if self.remove_headers:
            bits.append(f"removeHeaders={','.join(self.remove_headers)}")
        if self.owner == PROFILE:
            bits.append("profile-wide")
        return self.pattern + (f" ({', '.join(bits)})" if bits else "")


_CACHE: dict[tuple[str, bool], re.Pattern[str]] = {}


def _compiled(pattern: str, regex: bool) -> re.Pattern[str]:
    key = (pattern, regex)
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) > 1000:
            _CACHE.clear()
        found = _CACHE[key] = re.compile(pattern if regex else glob_regex(pattern))
    return found


class RouteBook:
    """The routes of one browser, by owner, in the order they were added."""

    def __init__(self) -> None:
        self.routes: list[Route] = []
        self.version = 0

    def add(self, route: Route) -> None:
        self.routes.append(route)
        self.version += 1

    def remove(self, owner: str, pattern: str | None) -> list[Route]:
        gone = [r for r in self.routes if r.owner == owner and pattern in (None, r.pattern)]
        if gone:
            self.routes = [r for r in self.routes if r not in gone]
            self.version += 1
        return gone

    def owned(self, owner: str) -> list[Route]:
        return [r for r in self.routes if r.owner == owner]

    def has(self, owner: str | None) -> bool:
        return any(r.owner in (owner, PROFILE) for r in self.routes)

    @property
    def profile_wide(self) -> bool:
        return any(r.owner == PROFILE for r in self.routes)

    def effective(self, owners: set[str]) -> tuple[Route, ...]:
        """The routes a tab worked in by ``owners`` obeys, the newest first."""
        return tuple(r for r in reversed(self.routes) if r.owner == PROFILE or r.owner in owners)
