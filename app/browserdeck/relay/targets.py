"""The tabs, clients and sessions one relay routes between, and what clients are told.

The bookkeeping every side of the relay reads: which tabs are shared, which client
sessions sit on them, the browser context and target ids the relay plays, and the events
that announce a tab or a session coming and going (``Target.attachedToTarget``,
``targetCreated``, ``detachedFromTarget`` ...). The debugger of a tab is released here
when its last session goes (docs/extension.md); attaching it is forwarding.py's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import uuid
from typing import Any

from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.model import Client, Scope, Session, Tab, new_session_id
from browserdeck.relay.protocol import (
    INVALID_PARAMS,
    NO_EXTENSION_MESSAGE,
    CdpError,
    dumps,
    event_message,
)
from browserdeck.util.aio import Tasks

log = logging.getLogger(__name__)


class Targets:
    """The routing state of one relay: tabs, clients, sessions, the extension link."""

    def __init__(self, *, op_timeout: float) -> None:
        self.link: ExtensionLink | None = None
        self.tabs: dict[int, Tab] = {}
        self.by_target: dict[str, Tab] = {}
        self.child_owner: dict[str, Tab] = {}
        self.clients: dict[str, Client] = {}
        self.user_agent = ""
        self.product = "Chrome/unknown"
        # Chrome's id for the user's profile context, learnt from the extension (which
        # keeps it from an earlier attach) or from our first attach; until then a stand-in.
        self.context_id = "BD" + secrets.token_hex(15).upper()
        self.context_known = False
        # Chrome's browser target id is a UUID (page targets are 32 hex digits).
        self.browser_target_id = str(uuid.uuid4())
        self.op_timeout = op_timeout
        # Detaches, re-announcements, attaches: RelayServer.stop() cancels what still runs
        # (a re-announcement sleeps up to 30 s).
        self.tasks = Tasks()

    def shared_tabs(self) -> list[Tab]:
        """Tabs a client may see, in the order they were shared."""
        return [tab for tab in self.tabs.values() if tab.exposable]

    def target_info(self, tab: Tab, *, attached: bool = True) -> dict[str, Any]:
        info: dict[str, Any] = {
            "targetId": tab.target_id,
            "type": "page",
            "title": tab.title or tab.url,
            "url": tab.url or "about:blank",
            "attached": attached,
            "canAccessOpener": False,
            "browserContextId": self.context_id,
        }
        opener = self.tabs.get(tab.opener_tab_id) if tab.opener_tab_id is not None else None
        if opener is not None:
            info["openerId"] = opener.target_id
            info["canAccessOpener"] = True
            # A popup's opener frame is its opener's main frame, whose id is the target id.
            info["openerFrameId"] = opener.target_id
        return info

    def browser_target_info(self) -> dict[str, Any]:
        return {
            "targetId": self.browser_target_id,
            "type": "browser",
            "title": "",
            "url": "",
            "attached": True,
            "canAccessOpener": False,
        }

    def version_info(self) -> dict[str, Any]:
        return {
            "protocolVersion": "1.3",
            "product": self.product,
            "revision": "",
            "userAgent": self.user_agent,
            "jsVersion": "",
        }

    def require_link(self) -> ExtensionLink:
        if self.link is None or self.link.closed:
            raise CdpError(NO_EXTENSION_MESSAGE)
        return self.link

    def tab_by_target(self, target_id: Any) -> Tab:
        tab = self.by_target.get(target_id) if isinstance(target_id, str) else None
        if tab is None and (self.link is None or self.link.closed):
            raise CdpError(NO_EXTENSION_MESSAGE)
        if tab is None or not tab.exposable:
            raise CdpError(
                "No target with given id found",
                INVALID_PARAMS,
                f"{target_id!r} is not a tab shared with the browserdeck extension",
            )
        return tab

    async def announce_everywhere(self, tab: Tab, *, fresh: bool = False) -> None:
        if not tab.exposable:
            return
        for client in list(self.clients.values()):
            for scope in list(client.scopes.values()):
                if scope.discover and tab.target_id not in scope.discovered:
                    scope.discovered.add(tab.target_id)
                    info = self.target_info(tab, attached=bool(tab.sessions))
                    if fresh:
                        # Like Chrome: a new tab is announced before it has a title.
                        info["title"] = ""
                    await client.send(
                        event_message(
                            "Target.targetCreated",
                            dumps({"targetInfo": info}),
                            client.wire_sid(scope.session_id),
                        )
                    )
                if scope.auto_attach:
                    await self.announce(client, scope, tab)

    async def announce(self, client: Client, scope: Scope, tab: Tab) -> Session | None:
        if (
            tab.target_id in scope.announced
            or tab.target_id in scope.declined
            or not tab.exposable
            or client.closed
        ):
            return None
        session = self.new_session(client, tab, scope)
        scope.announced[tab.target_id] = session
        await self.attachment_changed(tab)
        await self.send_attached(session)
        return session

    async def send_attached(self, session: Session) -> None:
        """``Target.attachedToTarget`` for a new tab session, on the scope it belongs to."""
        client = session.client
        await client.send(
            event_message(
                "Target.attachedToTarget",
                dumps(
                    {
                        "sessionId": session.session_id,
                        "targetInfo": self.target_info(session.tab),
                        "waitingForDebugger": False,
                    }
                ),
                client.wire_sid(session.scope.session_id),
            )
        )

    def learn_context_id(self, info: dict[str, Any]) -> None:
        if info.get("browserContextId") and not self.context_known:
            self.context_id = str(info["browserContextId"])
            self.context_known = True

    async def attachment_changed(self, tab: Tab) -> None:
        """Chrome reports a target's ``attached`` flag flipping (first session in, last
        one out) to every client discovering targets."""
        if len(tab.sessions) > 1 or tab.removed:
            return
        await self.target_info_changed(tab)

    async def target_info_changed(self, tab: Tab) -> None:
        """``Target.targetInfoChanged`` to every client discovering ``tab``."""
        info = dumps({"targetInfo": self.target_info(tab, attached=bool(tab.sessions))})
        for client in list(self.clients.values()):
            for scope in list(client.scopes.values()):
                if scope.discover and tab.target_id in scope.discovered:
                    await client.send(
                        event_message(
                            "Target.targetInfoChanged", info, client.wire_sid(scope.session_id)
                        )
                    )

    def new_session(self, client: Client, tab: Tab, scope: Scope) -> Session:
        session = Session(new_session_id(), client, tab, scope)
        client.sessions[session.session_id] = session
        tab.sessions.append(session)
        return session

    async def drop_session(
        self, session: Session, *, notify: bool = True, closed: bool = False
    ) -> None:
        client, tab, scope = session.client, session.tab, session.scope
        client.sessions.pop(session.session_id, None)
        if session in tab.sessions:
            tab.sessions.remove(session)
        if scope.announced.get(tab.target_id) is session:
            del scope.announced[tab.target_id]
        if notify and closed and not client.closed:
            # What Chrome tells a session whose page was closed.
            await client.send(
                event_message(
                    "Inspector.detached",
                    '{"reason":"Render process gone."}',
                    client.wire_sid(session.session_id),
                )
            )
        if notify and not client.closed:
            if client.implicit is session:
                # A per-page connection whose page went away: Chrome closes it too.
                await client.close(1000, "the target was closed or is no longer shared")
            elif scope.session_id == "" or scope.session_id in client.scopes:
                await client.send(
                    event_message(
                        "Target.detachedFromTarget",
                        dumps({"sessionId": session.session_id, "targetId": tab.target_id}),
                        client.wire_sid(scope.session_id),
                    )
                )
        if not tab.sessions and not closed:
            await self.attachment_changed(tab)
        self.release_debugger(tab)

    def reset_debugger(self, tab: Tab) -> None:
        """Forget what a tab's debugger had (its children, contexts): it is gone or going."""
        for child in tab.reset_debugger_state():
            self.child_owner.pop(child, None)

    def release_debugger(self, tab: Tab) -> None:
        """Release the debugger of a tab no client session uses any more."""
        if tab.sessions or tab.attaching is not None or not tab.attached or tab.removed:
            return
        self.reset_debugger(tab)
        link = self.link
        if link is None:
            return
        tab.detaching = self.tasks.spawn(
            self._detach_debugger(link, tab.tab_id), name=f"relay-detach-{tab.tab_id}"
        )

    async def after_detach(self, tab: Tab) -> None:
        """Wait for a detach of this tab still on its way: the extension handles a tab's
        attach and detach in the order they arrive, so an attach sent before it would be
        undone by it ("Debugger is not attached" under a relay-internal tab_call)."""
        pending = tab.detaching
        if pending is not None and not pending.done():
            await asyncio.wait({pending})

    async def _detach_debugger(self, link: ExtensionLink, tab_id: int) -> None:
        try:
            await link.call("detach", {"tabId": tab_id}, reply_timeout=self.op_timeout)
        except CdpError as exc:
            log.debug("detaching the debugger from tab %s: %s", tab_id, exc.message)

    async def hide_tab(self, tab: Tab, *, closed: bool = False) -> None:
        """Take a tab away from every client (closed, unshared, or gone restricted)."""
        for session in list(tab.sessions):
            await self.drop_session(session, closed=closed)
        for client in list(self.clients.values()):
            for scope in client.scopes.values():
                if tab.target_id in scope.discovered:
                    scope.discovered.discard(tab.target_id)
                    await client.send(
                        event_message(
                            "Target.targetDestroyed",
                            dumps({"targetId": tab.target_id}),
                            client.wire_sid(scope.session_id),
                        )
                    )

    async def remove_tab(self, tab: Tab, *, detach_debugger: bool, closed: bool = False) -> None:
        if tab.removed:
            return
        if not detach_debugger:
            # The extension already let go of it (closed tab, unshared, disconnected).
            tab.attached = False
        await self.hide_tab(tab, closed=closed)
        tab.removed = True
        self.reset_debugger(tab)
        self.tabs.pop(tab.tab_id, None)
        if self.by_target.get(tab.target_id) is tab:
            del self.by_target[tab.target_id]
        for client in self.clients.values():
            for scope in client.scopes.values():
                scope.declined.discard(tab.target_id)
