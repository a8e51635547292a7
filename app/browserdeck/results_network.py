"""What the network calls answer: routes, HAR recordings, requests and their details.

Typed like every answer (``results.py``): camelCase on the wire, only the keys set.
"""

from __future__ import annotations

from pydantic import Field

from browserdeck.results import Answer, RequestEntry, TabResult


class RouteInfo(Answer):
    """One route as its owner sees it."""

    pattern: str
    regex: bool = False
    resource_type: str | None = None
    action: str = Field(description="fulfill, continue (headers changed) or abort")
    scope: str = Field(description="session: the tabs of the session that set it; profile: every tab")
    said: str = Field(description="the route in a line")
    hits: int = Field(0, description="requests it decided so far")


class Routes(TabResult):
    routes: list[RouteInfo] = Field(default_factory=list, description="yours and the profile-wide ones, newest last")
    added: RouteInfo | None = None
    removed: int | None = Field(default=None, description="how many routes were removed")


class Har(TabResult):
    recording: bool = Field(description="a recording runs now")
    scope: str | None = Field(default=None, description="tab, or session: every tab it works in")
    path: str | None = Field(default=None, description="the .har file written (absolute)")
    entries: int | None = Field(default=None, description="requests in the file")
    pages: int | None = Field(default=None, description="tabs in the file")
    pending: int | None = Field(
        default=None, description="requests still open at the stop, left out"
    )
    redacted: bool | None = Field(
        default=None, description="credential headers and stored secrets are [redacted]"
    )


class NetworkRequests(TabResult):
    requests: list[RequestEntry] = Field(default_factory=list)
    total: int = Field(0, description="how many matched, before limit")


class Header(Answer):
    name: str
    value: str


class RequestDetail(TabResult):
    """One request of the tab: its headers and bodies (each bounded, credentials redacted
    unless redactNetworkSecrets is off)."""

    index: int
    method: str
    request_url: str = Field(description="the request's URL")
    resource_type: str
    status: int | None = None
    status_text: str | None = None
    failure: str | None = None
    duration_ms: float | None = None
    request_headers: list[Header] | None = None
    response_headers: list[Header] | None = None
    request_body: str | None = None
    response_body: str | None = None
    body_note: str | None = Field(
        default=None, description="why a body is missing or cut, or where a binary one went"
    )
    redacted: bool = False
