"""Per-session state and what a tool call can do: reach the front door for this session's tab.

Implicit sessions (as in Phoenix's browser tool): an agent never passes a session
or a tab id. Its first call that needs a page takes a free blank tab or opens a new
one, claims it, and every later call acts there until the agent selects another tab.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck import results as r
from browserdeck.door.call import Caller
from browserdeck.engine.acts import act_of
from browserdeck.errors import BrowserdeckError, Conflict, NotFound
from browserdeck.mcpserver.claims import Owner
from browserdeck.tabs import match

if TYPE_CHECKING:
    from browserdeck.door.request import TabRequest
    from browserdeck.mcpserver.server import McpApp
    from browserdeck.mcpserver.tools import ToolSpec
    from browserdeck.tabs import Tab

log = logging.getLogger(__name__)

A = TypeVar("A")
BLANK_URLS = frozenset({"about:blank", ""})
# The client name of calls from an MCP client that did not name itself.
CLIENT_NAME = "browserdeck-mcp"


def agent_caller(client: str | None, session: str) -> Caller:
    """An MCP client as the front door sees it, named as the activity log shows it:
    "claude-code via MCP" (its clientInfo name), else browserdeck-mcp."""
    return Caller(
        client=f"{client} via MCP" if client else CLIENT_NAME, session=session, via="mcp"
    )


@dataclass
class AgentSession:
    """One MCP client session: its profile, its current tab, what it saw last."""

    owner: Owner
    profile: str | None = None
    tab: str | None = None
    resolved_profile: str | None = None  # ``profile``, or the default profile's name
    # targetId -> the last compact snapshot this session took there (for diff: true)
    snapshots: dict[str, str] = field(default_factory=dict)
    # targetId -> the last snapshot text (whole, page text quoted) this session was shown
    # there, of any kind: what an ``element`` description is checked against
    seen: dict[str, str] = field(default_factory=dict)
    # targetId -> console entries already cleared ("clear": true hides what came before)
    console_cleared: dict[str, float] = field(default_factory=dict)
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Playwright objects of browser_run_code, kept between calls until browser_reset.
    code_state: dict[str, Any] = field(default_factory=dict)
    client: str | None = None  # the MCP client's own name (initialize: clientInfo.name)

    @classmethod
    def new(
        cls,
        kind: str,
        key: str,
        *,
        ttl: float | None,
        profile: str | None,
        client: str | None = None,
        pid: int | None = None,
    ) -> AgentSession:
        """``pid``: the process the session lives as long as (this one, or the
        ``browserdeck mcp`` bridge that carries it to the service)."""
        pid = pid or os.getpid()
        label = f"{client or 'MCP client'} ({kind}, pid {pid})"
        owner = Owner(
            id=f"{kind}-{pid}-{key}-{uuid.uuid4().hex[:6]}",
            label=label,
            pid=pid,
            ttl=ttl,
        )
        return cls(owner=owner, profile=profile, client=client)


@dataclass
class Reply:
    """What a tool returns: text (capped by the server) and images."""

    text: str = ""
    images: list[tuple[bytes, str]] = field(default_factory=list)
    narrow: str | None = None  # how to ask for less, shown when the text is cut

    def add_image(self, data: bytes, mime: str) -> None:
        self.images.append((data, mime))

    @staticmethod
    def b64(data: str) -> bytes:
        return base64.b64decode(data)


async def _no_roots() -> list[str]:
    return []


class Call:
    """One tool call: its validated arguments and the session it belongs to."""

    def __init__(
        self, app: McpApp, session: AgentSession, spec: ToolSpec, args: dict[str, Any]
    ) -> None:
        self.app = app
        self.session = session
        self.spec = spec
        self.args = args
        # The MCP client's workspace folders (set by the server; see McpApp.client_roots).
        self.roots: Callable[[], Awaitable[list[str]]] = _no_roots
        # This call's output cap (the server's, or the client's ?maxChars=): a snapshot
        # over it is folded to fit (tools.py).
        self.max_chars: int = app.max_chars

    @property
    def profile(self) -> str | None:
        return self.session.profile

    def caller(self) -> Caller:
        """This session as the front door sees it: a pooled remote profile gives each
        session its own browser; the activity log names the agent ("claude-code via MCP")."""
        return agent_caller(self.session.client, self.session.owner.id)

    async def profile_name(self) -> str:
        """The session's profile, resolved to a name (the default profile when unset)."""
        if self.session.profile:
            return self.session.profile
        if self.session.resolved_profile is None:
            # Read from the settings, not asked with a status call: the agent made one
            # call, and the activity log shows one row for it.
            self.session.resolved_profile = self.app.deck.settings().default_profile
        return self.session.resolved_profile

    # --- this session's tab --------------------------------------------------
    async def tabs(self) -> list[Tab]:
        return (await self.app.deck.tabs(self.caller(), self.session.profile)).tabs

    async def tab(self) -> str:
        """The session's current tab: kept, or a free blank tab claimed, or a new one."""
        profile = await self.profile_name()
        if self.session.tab is not None:
            holder = self.app.claims.owner_of(profile, self.session.tab)
            if holder is None or holder.owner == self.session.owner.id:
                return self.session.tab
            # Another agent took this tab over (force): stop acting there.
            lost = self.session.tab
            self.forget_tab(lost)
            raise Conflict(
                f"your tab {lost[:8]} was taken over by another agent ({holder.label})",
                hint="open a tab of your own (browser_tabs action=new) or navigate, which opens "
                "one",
                code="tab_taken",
            )
        tabs = await self.tabs()
        claims = self.app.claims
        claims.prune(profile, {t.target_id for t in tabs})
        owners = claims.owners(profile)
        closing = self.app.registry.closing(profile)  # an ended session's, going now
        for t in tabs:
            target = t.target_id
            if (
                t.url in BLANK_URLS
                and target not in owners
                and target not in closing
                and claims.claim(profile, target, self.session.owner) is None
            ):
                self.session.tab = target
                # Nobody's and showing nothing: the session's own from now, as if it had
                # opened it (it closes with the session; one an ending session was about
                # to close is handed over instead).
                self.app.registry.opened(self.session.owner.id, profile, target)
                return target
        opened = await self.app.deck.open_tab(self.caller(), self.session.profile, "about:blank")
        target = opened.target_id
        claims.claim(profile, target, self.session.owner)
        self.session.tab = target
        return target

    async def select_tab(self, target: str, *, force: bool = False) -> Tab:
        """Make ``target`` (a targetId or unique prefix) this session's tab, claiming it."""
        profile = await self.profile_name()
        tab = match(await self.tabs(), target)
        holder = self.app.claims.claim(profile, tab.target_id, self.session.owner, force=force)
        if holder is not None:
            raise Conflict(
                f"tab {tab.target_id[:8]} belongs to another agent ({holder.label})",
                hint="use a tab of your own (browser_tabs action=new), or pass force: true "
                "to take it over anyway",
                code="tab_owned",
            )
        self.session.tab = tab.target_id
        self.app.registry.used(self.session.owner.id, profile, tab.target_id)
        return tab

    def forget_tab(self, target: str) -> None:
        if self.session.tab == target:
            self.session.tab = None
        self.session.snapshots.pop(target, None)
        self.session.seen.pop(target, None)
        self.session.console_cleared.pop(target, None)

    async def on_tab(self, request: TabRequest[A], *, retry_fresh: bool = False) -> A:
        """``request`` on the session's tab; a tab that disappeared is said plainly.

        ``retry_fresh`` (navigation): when the tab is gone, take a new one and retry once,
        since nothing on the old page mattered.
        """
        target = await self.tab()
        try:
            return await self._send(target, request)
        except BrowserdeckError as exc:
            if exc.code not in ("tab_not_found", "no_tabs", "target_closed"):
                raise
            self.app.claims.release(self.session.owner, target_id=target)
            self.forget_tab(target)
            if not retry_fresh:
                raise NotFound(
                    f"this session's tab {target[:8]} is gone (closed, or the browser was "
                    "closed after being idle)",
                    hint="navigate again (browser_navigate opens a new tab), or pick one with "
                    "browser_tabs",
                    code="tab_gone",
                ) from None
            target = await self.tab()
            return await self._send(target, request)

    async def _send(self, target: str, request: TabRequest[A]) -> A:
        deck = self.app.deck
        return await deck.on_tab(self.caller(), request, profile=self.session.profile, target=target)

    def check_element(self, ref: str, description: object) -> None:
        """Refuse an act whose ``element`` description names another element than
        ``ref`` in what this session last saw of its tab (mcpserver/element_guard.py)."""
        from browserdeck.mcpserver.element_guard import check_element

        check_element(self.session.seen.get(self.session.tab or ""), ref, description)

    async def act(self, kind: str, **fields: Any) -> r.ActResult:
        """An act of ``kind`` from the tool's arguments, checked once (by its model)."""
        return await self.on_tab(act_of({"kind": kind, **fields}, where=self.spec.name))

