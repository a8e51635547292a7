"""The relay's model: tabs, clients, their sessions and scopes, child targets.

Plain data plus a client's socket; the routing that changes them lives in core.py and its
collaborators (targets, commands, forwarding, events), the browser-level commands in
browser_domain.py (docs/extension.md, "How it works").
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from browserdeck.relay.link import Socket, send_text
from browserdeck.relay.protocol import event_message, is_restricted_url

log = logging.getLogger(__name__)


def new_session_id() -> str:
    return secrets.token_hex(16).upper()


@dataclass(eq=False)
class Child:
    """A child target Chrome attached under a tab (OOPIF or worker)."""

    session_id: str
    parent: str  # "" for the tab's own session, else the parent child's session id
    target_info: dict[str, Any]


@dataclass(eq=False)
class FrameLifecycle:
    """The ``Page.lifecycleEvent`` params a frame's current document has had so far, by
    name in the order they came (kept to repeat them to a client; see
    ``CommandRouter._replay_lifecycle_after``)."""

    loader_id: str
    events: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False)
class LifecycleRecorder:
    """What Chrome reports of frames' lifecycle on session key ``key`` while one
    ``Page.setLifecycleEventsEnabled`` is in flight (its replay of the current state), to
    repeat to the sender after the reply. It lives only as long as the command: nothing
    is kept between commands, so a page that reloads forever costs nothing (Chrome sends
    no ``Page.frameDetached`` for the old document's iframes)."""

    key: str
    frames: dict[str, FrameLifecycle] = field(default_factory=dict)


@dataclass(eq=False)
class Tab:
    tab_id: int
    target_id: str
    url: str = ""
    title: str = ""
    opener_tab_id: int | None = None
    window_id: int | None = None
    attached: bool = False
    # Commands waiting for the debugger to attach; None when no attach is under way.
    attaching: list[Command] | None = None
    attach_done: asyncio.Event | None = None
    # The debugger detach on its way to the extension, if any (an attach waits for it).
    detaching: asyncio.Task[None] | None = None
    sessions: list[Session] = field(default_factory=list)
    children: dict[str, Child] = field(default_factory=dict)
    # Chrome-side Runtime state per session key ("" = the tab, else a child session id).
    runtime_enabled: set[str] = field(default_factory=set)
    contexts: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    # One per Page.setLifecycleEventsEnabled in flight on this tab (usually none).
    lifecycle_recorders: list[LifecycleRecorder] = field(default_factory=list)
    cooling_until: float = 0.0
    strikes: int = 0
    removed: bool = False

    @property
    def exposable(self) -> bool:
        return (
            not self.removed
            and not is_restricted_url(self.url)
            and (self.cooling_until <= time.monotonic())
        )

    def reset_debugger_state(self) -> list[str]:
        """Forget everything that lived on the debugger session; returns dropped child ids."""
        self.attached = False
        self.runtime_enabled.clear()
        self.contexts.clear()
        for recorder in self.lifecycle_recorders:
            recorder.frames.clear()  # Chrome's replay is void with the session
        self.lifecycle_recorders.clear()
        dropped = list(self.children)
        self.children.clear()
        return dropped


@dataclass(eq=False)
class Scope:
    """A root-like session of a client: the root ("") or a Target.attachToBrowserTarget one."""

    session_id: str
    auto_attach: bool = False
    discover: bool = False
    announced: dict[str, Session] = field(default_factory=dict)
    discovered: set[str] = field(default_factory=set)
    # Targets the client detached on purpose: not auto-announced again while shared.
    declined: set[str] = field(default_factory=set)


@dataclass(eq=False)
class Session:
    session_id: str
    client: Client
    tab: Tab
    scope: Scope
    # (key, domain) pairs this session enabled; key "" is the tab, else a child session id.
    enabled: set[tuple[str, str]] = field(default_factory=set)
    known_children: set[str] = field(default_factory=set)
    # Keys ("" = the tab, else a child session id) on which this session asked for
    # Target.setAutoAttach: only these sessions hear about new children there, as in
    # Chrome. Announcing a child on another session too makes Puppeteer replace its
    # frame session with an orphan (docs/extension.md).
    auto_attach: set[str] = field(default_factory=set)

    def runtime_on(self, key: str) -> bool:
        return (key, "Runtime") in self.enabled

    async def send_event(self, key: str, method: str, params_json: str) -> None:
        """An event for this session's client: on the tab itself (``key`` "") or on one of
        its child sessions (``key`` the child's session id)."""
        client = self.client
        await client.send(
            event_message(method, params_json, client.wire_sid(key or self.session_id))
        )


class Client:
    """One ``/cdp`` (or ``/devtools/page/<id>``) WebSocket connection."""

    def __init__(
        self,
        ws: Socket,
        *,
        client_id: str,
        label: str = "",
        remote: str = "",
        slot_mode: str = "eager",
        page_target: str | None = None,
    ) -> None:
        self.ws = ws
        self.id = client_id
        self.label = label
        self.remote = remote
        self.slot_mode = slot_mode
        self.page_target = page_target
        self.connected_at = time.time()
        self.scopes: dict[str, Scope] = {"": Scope("")}
        self.sessions: dict[str, Session] = {}
        self.implicit: Session | None = None
        self.closed = False

    def wire_sid(self, session_id: str | None) -> str | None:
        """The sessionId to put on the wire (an implicit per-page session has none)."""
        if self.implicit is not None and session_id == self.implicit.session_id:
            return None
        return session_id or None

    async def send(self, text: str) -> None:
        if self.closed:
            return
        try:
            await send_text(self.ws, text)
        except Exception:
            # The client went away mid-send; its reader loop will clean up.
            self.closed = True

    async def close(self, code: int, reason: str) -> None:
        self.closed = True
        try:
            await self.ws.close(code, reason)
        except Exception:
            log.debug("closing client %s failed", self.id, exc_info=True)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "remote": self.remote,
            "connectedAt": self.connected_at,
            "sessions": len(self.sessions),
        }


Hook = Callable[
    [str | None, dict[str, Any] | None], Awaitable[tuple[str | None, dict[str, Any] | None]]
]
# Run after a command's successful reply has gone to the client.
After = Callable[[], Awaitable[None]]


@dataclass(eq=False)
class Command:
    """A client's CDP command on its way to a tab (queued while the debugger attaches)."""

    client: Client
    tab: Tab
    key: str
    msg_id: Any
    method: str
    params_json: str
    reply_sid: str | None
    long: bool
    hook: Hook | None = None
    after: After | None = None
    # Listens to the tab from the moment the command is sent until its reply (or failure).
    recorder: LifecycleRecorder | None = None
