"""Who calls (``Caller``) and one call at the front door as addons see it (``Call``).

A ``Caller`` is passed along with every call, from the way in down to the driver that
picks a pooled browser for the caller's session: identity is a parameter, never
ambient state. A ``Call`` is made by ``Deck`` for each call and handed to every addon
before and after it runs (door/addons.py).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from browserdeck.door.request import Request, TabRequest
    from browserdeck.util.labels import Rect

A = TypeVar("A")
# The way a call came in: the HTTP API, an MCP tool, the CLI (over the API's socket or
# TCP), the tray app in-process. It also picks the words of a hint (errors.Hint).
Via = Literal["api", "mcp", "cli", "gui"]

# Clients that are the user, not an agent: the tray panel and the command line.
USER_CLIENTS = frozenset({"browserdeck-gui", "browserdeck-cli"})


@dataclass(frozen=True)
class Agent:
    """An agent session as a pooled browser service knows it: its id and a label."""

    session: str
    label: str


@dataclass(frozen=True)
class Caller:
    """Who calls: the client's name, its agent session and the way it came in."""

    client: str | None = None  # X-Browserdeck-Client, "claude via MCP", "browserdeck-gui"
    session: str | None = None  # X-Browserdeck-Session, an MCP session, "cli:<name>"
    via: Via = "api"
    software: str | None = None  # what an unnamed HTTP client runs as: "curl/8.5.0"

    @property
    def label(self) -> str:
        """Who called, in the activity log's words: its name, else its software."""
        return self.client or self.software or ("browserdeck-mcp" if self.via == "mcp" else "")

    @property
    def key(self) -> str | None:
        """Whose default tab: the session if there is one, else the client."""
        return self.session or self.client

    @property
    def is_agent(self) -> bool:
        return self.client not in USER_CLIENTS

    @property
    def agent(self) -> Agent | None:
        """The session as a pooled remote profile leases browsers to it (None: shared)."""
        session = (self.session or "").strip()[:200]
        if not session:
            return None
        return Agent(session, f"{(self.client or 'client')[:60]} {session[:24]}")


@dataclass(frozen=True)
class TabInfo:
    """The tab a call acts on: its profile and full CDP target id."""

    profile: str
    target_id: str


@dataclass(frozen=True)
class FormField:
    """A field of the form an element belongs to. Never its value: a field may hold a
    password or a secret; ``filled`` says whether it holds anything."""

    tag: str  # input, select, textarea, button
    type: str  # text, password, checkbox, submit … ("" for select and textarea)
    name: str  # its accessible name (label), else its name attribute
    filled: bool


@dataclass(frozen=True)
class Element:
    """The element a call acts on, from the tab's latest snapshot (``ref`` → role and
    name); with ``detail``, its box in CSS pixels and the fields of its form."""

    ref: str
    role: str
    name: str
    box: Rect | None = None
    form: tuple[FormField, ...] | None = None

    def describe(self) -> str:
        return f'{self.role} "{self.name}"' if self.name else self.role


# How the door answers Call.element and Call.aside for the call's tab.
ElementLookup = Callable[[str, bool], Awaitable[Element | None]]
Aside = Callable[["TabRequest[Any]"], Awaitable[Any]]
UrlLookup = Callable[[], Awaitable[str | None]]


class Call(Generic[A]):
    """One call at the front door, as every addon sees it before and after it runs.

    Set by the door: ``caller``, ``request`` (with the settings' policies applied),
    ``profile`` and ``driver`` (once resolved), ``tab`` (a tab call's), then ``answer``
    or ``error``. Addons read them, may await ``element()``, ``url()`` and ``aside()``,
    and add ``note``s, which the door appends to the answer's ``note``.
    """

    def __init__(self, caller: Caller, request: Request[A], profile: str | None = None) -> None:
        self.caller = caller
        self.request = request
        self.profile = profile  # as asked, then the profile's name once resolved
        self.driver: str | None = None
        self.tab: TabInfo | None = None
        self.answer: A | None = None
        self.error: BaseException | None = None
        self.notes: list[str] = []
        self.started = time.perf_counter()
        self.data: dict[str, Any] = {}  # an addon's own state for this call, by its key
        self._element: ElementLookup | None = None
        self._aside: Aside | None = None
        self._url: UrlLookup | None = None
        self._elements: dict[tuple[str, bool], Element | None] = {}

    @property
    def name(self) -> str:
        """The call's name in the activity log: "snapshot", "act", "start", …"""
        return self.request.op

    def bind(self, *, element: ElementLookup, url: UrlLookup, aside: Aside) -> None:
        """How ``element``, ``url`` and ``aside`` reach the call's tab (the door sets it)."""
        self._element, self._url, self._aside = element, url, aside

    def note(self, text: str) -> None:
        """Tell the caller something with the answer (appended to its ``note``)."""
        self.notes.append(text)

    async def element(self, ref: str | None = None, *, detail: bool = False) -> Element | None:
        """The element ``ref`` (default: the one the request acts on) on the call's tab,
        from its latest snapshot; None when there is none (or the ref is unknown).
        ``detail`` also reads its box and form from the page (a round trip)."""
        if ref is None:
            refs = self.request.element_refs() if hasattr(self.request, "element_refs") else []
            ref = refs[0] if refs else None
        if ref is None or self._element is None:
            return None
        key = (ref, detail)
        if key not in self._elements:
            self._elements[key] = await self._element(ref, detail)
        return self._elements[key]

    async def url(self) -> str | None:
        """The address the call's tab shows now (None outside tab calls)."""
        return await self._url() if self._url is not None else None

    async def aside(self, request: TabRequest[Any]) -> Any:
        """An engine call of the addon's own on the call's tab (a screenshot before an
        action), answered directly: no addon sees it and it makes no activity entry."""
        if self._aside is None:
            raise RuntimeError(f"{self.name} is not a call on a tab")
        return await self._aside(request)

    def __repr__(self) -> str:
        return f"<Call {self.name} by {self.caller.client!r} on {self.tab or self.profile}>"
