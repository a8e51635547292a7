"""CDP routing: make the tabs the extension shares look like a real Chrome to clients.

The extension can only debug single tabs (``chrome.debugger``), so the relay plays
the browser: it answers the browser-level ``Browser.*`` and ``Target.*`` commands from
its own bookkeeping and forwards everything else to the right tab. What Playwright
needs from it is summarised in docs/extension.md; the rules that matter most:

* ``Target.attachedToTarget`` is sent before the reply of the command that caused it
  (``setAutoAttach``, ``createTarget``, ``attachToTarget``), with a real targetId, a
  truthy ``browserContextId`` and ``openerId`` for popups; no targetId is announced
  twice to one client.
* Child sessions (cross-origin iframes, workers) pass through with Chrome's own
  session ids, announced on their parent's session, never on the root.
* The debugger attaches to a tab on the first command a client sends it (lazy), and
  detaches when the last client session on that tab goes away, so no client inherits
  another one's scripts, bindings or emulation.
* Several sessions can share one tab's debugger (a second client, or a client's
  ``new_cdp_session``): ``Runtime.enable`` from a later session gets the live execution
  contexts replayed from a cache (Chrome does not repeat them), context events only
  reach sessions that enabled Runtime, and ``X.disable`` is not forwarded while
  another session still uses domain X.

Nothing here touches sockets directly: clients and the extension link are given in,
which keeps this testable with a fake extension. The data it routes (tabs, clients,
sessions) is in model.py; the browser-level commands it answers itself are in
browser_domain.py; the sockets, discovery, the request gate and the client slot are
server.py and extension_endpoint.py, discovery.py, gate.py and slot.py.

Why one module: what is left is one state machine, the tab and session bookkeeping,
entered from two sides. The extension's messages (tabs shared, updated, closed; CDP
events and child targets) and the clients' commands (forwarding, lazy attach,
per-session domains) read and write the same ``Tab``/``Session`` fields under the same
invariants (see the rules above); split in two, each half would reach into the other's
privates, as browser_domain.py already has to.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

from browserdeck.aio import Tasks
from browserdeck.relay.browser_domain import ROOT_HANDLERS, SLOW_ROOT, RootHandler, Then
from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.model import (
    After,
    Child,
    Client,
    Command,
    FrameLifecycle,
    Hook,
    LifecycleRecorder,
    Scope,
    Session,
    Tab,
    new_session_id,
)
from browserdeck.relay.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NO_EXTENSION_MESSAGE,
    SERVER_ERROR,
    SESSION_NOT_FOUND,
    CdpError,
    dumps,
    error_message,
    event_message,
    is_restricted_url,
    loads,
    result_message,
)

log = logging.getLogger(__name__)

# Commands that may legitimately block for a long time (awaited promises, navigations,
# input held up by a dialog, big captures). Everything else gets the normal timeout.
LONG_METHODS = frozenset(
    {
        "Runtime.evaluate",
        "Runtime.callFunctionOn",
        "Runtime.awaitPromise",
        "Runtime.runScript",
        "Page.navigate",
        "Page.reload",
        "Page.printToPDF",
        "Page.captureScreenshot",
        "Page.captureSnapshot",
        "Page.handleJavaScriptDialog",
        "Input.dispatchMouseEvent",
        "Input.dispatchKeyEvent",
        "Input.dispatchTouchEvent",
        "Input.insertText",
        "Tracing.end",
    }
)
# Child targets a client may see. Service workers and other extensions' frames hang
# clients that try to drive them (playwright-mcp, playwriter reports).
CHILD_TYPES = frozenset({"iframe", "worker"})
# Events never forwarded: Playwright does not need them and they flood on downloads.
DROPPED_EVENTS = frozenset({"Network.dataReceived", "Network.resourceChangedPriority"})
CONTEXT_EVENTS = frozenset(
    {
        "Runtime.executionContextCreated",
        "Runtime.executionContextDestroyed",
        "Runtime.executionContextsCleared",
    }
)
# Domains whose events Chrome sends to a session only after it enabled them (X.enable or
# one of ENABLERS). Events of other domains (Inspector, Target, ...) go to every session.
ENABLE_DOMAINS = frozenset(
    {
        "Accessibility", "Animation", "Audits", "Autofill", "BackgroundService", "CSS",
        "Cast", "Console", "DOM", "DOMStorage", "Database", "Debugger", "DeviceAccess",
        "FedCm", "Fetch", "HeapProfiler", "IndexedDB", "Input", "LayerTree", "Log", "Media",
        "Network", "Overlay", "Page", "Performance", "PerformanceTimeline", "Preload",
        "Profiler", "Runtime", "Security", "ServiceWorker", "Tracing", "WebAudio", "WebAuthn",
    }
)  # fmt: skip
# Commands other than X.enable after which Chrome sends a session events of their domain.
ENABLERS = frozenset(
    {
        "Page.setLifecycleEventsEnabled",
        "Page.startScreencast",
        "Page.setInterceptFileChooserDialog",
        "DOM.getDocument",
        "DOM.getFlattenedDocument",
        "Tracing.start",
        "Input.setInterceptDrags",
        "Profiler.startPreciseCoverage",
        "HeapProfiler.startSampling",
        "HeapProfiler.startTrackingHeapObjects",
    }
)
# Commands that create a session on a tab and so need the client slot.
SLOT_METHODS = frozenset(
    {
        "Target.setAutoAttach",
        "Target.attachToTarget",
        "Target.attachToBrowserTarget",
        "Storage.getCookies",
        "Storage.setCookies",
        "Storage.clearCookies",
    }
)
# A tab whose debugger Chrome dropped (navigation to a restricted page, a crash) is
# re-announced after this pause; repeated drops lengthen it (see Tab.cooldown).
REANNOUNCE_DELAY = 0.5


class Relay:
    """The routing state of one relay: tabs, clients, sessions, and the extension link."""

    def __init__(
        self,
        *,
        profile: str = "chrome",
        on_tabs_changed: Callable[[], None] | None = None,
        slot_guard: Callable[[Client], str | None] | None = None,
        command_timeout: float = 60.0,
        long_command_timeout: float = 900.0,
        op_timeout: float = 20.0,
    ) -> None:
        self.profile = profile
        self.link: ExtensionLink | None = None
        self.tabs: dict[int, Tab] = {}
        self.by_target: dict[str, Tab] = {}
        self.child_owner: dict[str, Tab] = {}
        self.clients: dict[str, Client] = {}
        self.user_agent = ""
        self.product = "Chrome/unknown"
        self.extension_version = ""
        # Chrome's id for the user's profile context, learnt from the extension (which
        # keeps it from an earlier attach) or from our first attach; until then a stand-in.
        self.context_id = "BD" + secrets.token_hex(15).upper()
        self.context_known = False
        # Chrome's browser target id is a UUID (page targets are 32 hex digits).
        self.browser_target_id = str(uuid.uuid4())
        self._on_tabs_changed = on_tabs_changed or (lambda: None)
        self._slot_guard = slot_guard or (lambda client: None)
        self.command_timeout = command_timeout
        self.long_command_timeout = long_command_timeout
        self.op_timeout = op_timeout
        # Detaches, re-announcements, attaches: RelayServer.stop() cancels what still runs
        # (a re-announcement sleeps up to 30 s).
        self.tasks = Tasks()

    # ------------------------------------------------------------------ queries
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

    def _require_link(self) -> ExtensionLink:
        if self.link is None or self.link.closed:
            raise CdpError(NO_EXTENSION_MESSAGE)
        return self.link

    def _tab_by_target(self, target_id: Any) -> Tab:
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

    # --------------------------------------------------------- extension side
    async def extension_connected(self, link: ExtensionLink) -> None:
        old = self.link
        self.link = link
        if old is not None and old is not link:
            await self._forget_extension(old, "replaced by a newer connection from the extension")

    async def extension_gone(self, link: ExtensionLink, reason: str) -> None:
        if self.link is not link:
            await link.fail_all(reason)
            return
        self.link = None
        await self._forget_extension(link, reason)

    async def _forget_extension(self, link: ExtensionLink, reason: str) -> None:
        await link.fail_all(f"the browserdeck extension disconnected: {reason}")
        for tab in list(self.tabs.values()):
            if tab.attaching:
                queued, tab.attaching = tab.attaching, None
                for cmd in queued:
                    await self._fail_command(cmd, f"{NO_EXTENSION_MESSAGE} ({reason})")
            await self._remove_tab(tab, detach_debugger=False)
        self._on_tabs_changed()

    async def extension_message(
        self, link: ExtensionLink, header: dict[str, Any], body: str | None
    ) -> None:
        link.last_seen = asyncio.get_running_loop().time()
        event = header.get("event")
        if event is not None:
            await self._on_cdp_event(header.get("tabId"), header.get("sessionId"), event, body)
            return
        if "id" in header and "method" not in header:
            await link.on_reply(header, body)
            return
        method = header.get("method")
        params = header.get("params") or {}
        if method == "ping":
            await link.notify("pong")
        elif method == "pong":
            pass
        elif method == "hello":
            await self._on_hello(link, params)
        elif method == "tabShared":
            await self._add_tab(params.get("tab") or {})
        elif method == "tabUpdated":
            await self._on_tab_updated(params)
        elif method == "tabUnshared":
            tab = self.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
            if tab is not None:
                await self._remove_tab(
                    tab, detach_debugger=False, closed=params.get("reason") == "closed"
                )
                self._on_tabs_changed()
        elif method == "debuggerDetached":
            await self._on_debugger_detached(params)
        elif method == "log":
            log.info("extension: %s", params.get("message"))
        else:
            log.debug("unknown message from the extension: %s", method)

    async def _on_hello(self, link: ExtensionLink, params: dict[str, Any]) -> None:
        ua = str(params.get("userAgent") or "")
        link.info.user_agent = ua
        link.info.version = str(params.get("version") or "")
        link.info.browser_context_id = params.get("browserContextId") or None
        self.extension_version = link.info.version
        if ua:
            self.user_agent = ua
            self.product = _product_from_ua(ua, str(params.get("fullVersion") or ""))
        if link.info.browser_context_id:
            self.context_id = str(link.info.browser_context_id)
            self.context_known = True
        for info in params.get("tabs") or []:
            await self._add_tab(info, notify=False)
        self._on_tabs_changed()

    async def _add_tab(
        self, info: dict[str, Any], *, notify: bool = True, fresh: bool = False
    ) -> Tab | None:
        tab_id = info.get("tabId")
        target_id = info.get("targetId")
        if not isinstance(tab_id, int) or not isinstance(target_id, str) or not target_id:
            log.warning("ignoring a shared tab without tabId/targetId: %r", info)
            return None
        tab = self.tabs.get(tab_id)
        if tab is None:
            tab = Tab(tab_id=tab_id, target_id=target_id)
            self.tabs[tab_id] = tab
            self.by_target[target_id] = tab
        tab.url = str(info.get("url") or tab.url or "about:blank")
        tab.title = str(info.get("title") or tab.title)
        opener = info.get("openerTabId")
        if isinstance(opener, int):
            tab.opener_tab_id = opener
        if isinstance(info.get("windowId"), int):
            tab.window_id = info["windowId"]
        await self._announce_everywhere(tab, fresh=fresh or tab.opener_tab_id is not None)
        if notify:
            self._on_tabs_changed()
        return tab

    async def _announce_everywhere(self, tab: Tab, *, fresh: bool = False) -> None:
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
                    await self._announce(client, scope, tab)

    async def _announce(self, client: Client, scope: Scope, tab: Tab) -> Session | None:
        if (
            tab.target_id in scope.announced
            or tab.target_id in scope.declined
            or not tab.exposable
            or client.closed
        ):
            return None
        session = self._new_session(client, tab, scope)
        scope.announced[tab.target_id] = session
        await self._attachment_changed(tab)
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

    def _learn_context_id(self, info: dict[str, Any]) -> None:
        if info.get("browserContextId") and not self.context_known:
            self.context_id = str(info["browserContextId"])
            self.context_known = True

    async def learn_context(self, tab: Tab | None = None, *, keep: bool = False) -> None:
        """Before the first announcement, attach to one shared tab to learn Chrome's real
        browserContextId (the extension remembers it afterwards), so tabs and their
        iframes carry the same one. The debugger stays on: a session follows at once."""
        if self.context_known or self.link is None or self.link.closed:
            return
        tab = tab or next(iter(self.shared_tabs()), None)
        if tab is None or tab.attached or tab.attaching is not None:
            return
        tab.attaching = []
        tab.attach_done = asyncio.Event()
        await self._attach(tab, keep=True)
        if not keep:
            self._maybe_detach(tab)

    async def _attachment_changed(self, tab: Tab) -> None:
        """Chrome reports a target's ``attached`` flag flipping (first session in, last
        one out) to every client discovering targets."""
        if len(tab.sessions) > 1 or tab.removed:
            return
        info = dumps({"targetInfo": self.target_info(tab, attached=bool(tab.sessions))})
        for client in list(self.clients.values()):
            for scope in list(client.scopes.values()):
                if scope.discover and tab.target_id in scope.discovered:
                    await client.send(
                        event_message(
                            "Target.targetInfoChanged", info, client.wire_sid(scope.session_id)
                        )
                    )

    def _new_session(self, client: Client, tab: Tab, scope: Scope) -> Session:
        session = Session(new_session_id(), client, tab, scope)
        client.sessions[session.session_id] = session
        tab.sessions.append(session)
        return session

    async def _drop_session(
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
            await self._attachment_changed(tab)
        self._maybe_detach(tab)

    def _maybe_detach(self, tab: Tab) -> None:
        """Release the debugger of a tab no client session uses any more."""
        if tab.sessions or tab.attaching is not None or not tab.attached or tab.removed:
            return
        for child in tab.reset_debugger_state():
            self.child_owner.pop(child, None)
        link = self.link
        if link is None:
            return
        tab.detaching = self.tasks.spawn(
            self._detach_debugger(link, tab.tab_id), name=f"relay-detach-{tab.tab_id}"
        )

    async def _after_detach(self, tab: Tab) -> None:
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

    async def _hide_tab(self, tab: Tab, *, closed: bool = False) -> None:
        """Take a tab away from every client (closed, unshared, or gone restricted)."""
        for session in list(tab.sessions):
            await self._drop_session(session, closed=closed)
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

    async def _remove_tab(self, tab: Tab, *, detach_debugger: bool, closed: bool = False) -> None:
        if tab.removed:
            return
        if not detach_debugger:
            # The extension already let go of it (closed tab, unshared, disconnected).
            tab.attached = False
        await self._hide_tab(tab, closed=closed)
        tab.removed = True
        for child in tab.reset_debugger_state():
            self.child_owner.pop(child, None)
        self.tabs.pop(tab.tab_id, None)
        if self.by_target.get(tab.target_id) is tab:
            del self.by_target[tab.target_id]
        for client in self.clients.values():
            for scope in client.scopes.values():
                scope.declined.discard(tab.target_id)

    async def _on_tab_updated(self, params: dict[str, Any]) -> None:
        tab = self.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
        if tab is None:
            return
        was_exposable = tab.exposable
        old_url = tab.url
        if isinstance(params.get("url"), str) and params["url"]:
            tab.url = params["url"]
        if isinstance(params.get("title"), str):
            tab.title = params["title"]
        if isinstance(params.get("windowId"), int):
            tab.window_id = params["windowId"]
        if was_exposable and not tab.exposable:
            await self._hide_tab(tab)
        elif not was_exposable and tab.exposable:
            await self._announce_everywhere(tab)
        elif tab.exposable and tab.url != old_url:
            # Chrome reports targetInfoChanged when a navigation commits, not when only
            # the title changes.
            info = dumps({"targetInfo": self.target_info(tab, attached=bool(tab.sessions))})
            for client in list(self.clients.values()):
                for scope in client.scopes.values():
                    if scope.discover and tab.target_id in scope.discovered:
                        await client.send(
                            event_message(
                                "Target.targetInfoChanged",
                                info,
                                client.wire_sid(scope.session_id),
                            )
                        )
        self._on_tabs_changed()

    async def _on_debugger_detached(self, params: dict[str, Any]) -> None:
        tab = self.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
        if tab is None:
            return
        reason = str(params.get("reason") or "")
        log.info("Chrome detached the debugger from tab %s (%s)", tab.tab_id, reason)
        tab.attached = False
        for child in tab.reset_debugger_state():
            self.child_owner.pop(child, None)
        # Chrome dropped the session, so every client's view of the page is dead: tell
        # them, then announce the tab afresh once it has settled.
        now = time.monotonic()
        tab.strikes = tab.strikes + 1 if now - tab.cooling_until < 10 else 1
        delay = min(REANNOUNCE_DELAY * (2 ** (tab.strikes - 1)), 30.0)
        await self._hide_tab(tab)
        tab.cooling_until = now + delay
        self.tasks.spawn(self._reannounce_later(tab, delay), name=f"relay-reannounce-{tab.tab_id}")

    async def _reannounce_later(self, tab: Tab, delay: float) -> None:
        await asyncio.sleep(delay)
        if not tab.removed and self.tabs.get(tab.tab_id) is tab:
            await self._announce_everywhere(tab)
            self._on_tabs_changed()

    # ------------------------------------------------------------ CDP events
    async def _on_cdp_event(
        self, tab_id: Any, child_sid: Any, method: str, body: str | None
    ) -> None:
        tab = self.tabs.get(tab_id) if isinstance(tab_id, int) else None
        if tab is None or method in DROPPED_EVENTS:
            return
        key = child_sid if isinstance(child_sid, str) and child_sid else ""
        params_json = body or "{}"
        if key and key not in tab.children:
            return  # a child we filtered out or already forgot
        if method == "Target.attachedToTarget":
            await self._on_child_attached(tab, key, params_json)
            return
        if method == "Target.detachedFromTarget":
            await self._on_child_detached(tab, key, params_json)
            return
        if tab.lifecycle_recorders and method in ("Page.lifecycleEvent", "Page.frameDetached"):
            # Only while a Page.setLifecycleEventsEnabled is in flight: otherwise nothing
            # is parsed or kept (issue: a page reloading forever grew the relay).
            self._record_lifecycle(tab, key, method, params_json)
        if method in CONTEXT_EVENTS:
            self._track_context(tab, key, method, params_json)
            for session in list(tab.sessions):
                if session.runtime_on(key) and (not key or key in session.known_children):
                    await session.send_event(key, method, params_json)
            return
        for session in self._event_sessions(tab, key, method):
            await session.send_event(key, method, params_json)
        if method in ("Page.downloadWillBegin", "Page.downloadProgress") and not key:
            # Playwright listens for downloads on the browser session (Browser.download*);
            # a tab-level debugger only reports them as Page.download*.
            browser_method = method.replace("Page.", "Browser.", 1)
            for client in {s.client for s in tab.sessions}:
                await client.send(event_message(browser_method, params_json, None))

    @staticmethod
    def _event_sessions(tab: Tab, key: str, method: str) -> list[Session]:
        """The sessions of ``tab`` that get an event: as in Chrome, only those that enabled
        its domain (docs/extension.md); all of them for domains that need no enable."""
        domain = method.partition(".")[0]
        if domain in ENABLE_DOMAINS:
            return [s for s in tab.sessions if (key, domain) in s.enabled]
        if domain == "Target":
            # Children's targetInfoChanged & co. belong to the sessions auto-attaching them.
            return [
                s
                for s in tab.sessions
                if key in s.auto_attach and (not key or key in s.known_children)
            ]
        return [s for s in tab.sessions if not key or key in s.known_children]

    def _track_context(self, tab: Tab, key: str, method: str, params_json: str) -> None:
        params = loads(params_json)
        contexts = tab.contexts.setdefault(key, {})
        if method == "Runtime.executionContextCreated":
            context = params.get("context") or {}
            if isinstance(context.get("id"), int):
                contexts[context["id"]] = context
        elif method == "Runtime.executionContextDestroyed":
            contexts.pop(params.get("executionContextId"), None)
        else:
            contexts.clear()

    @staticmethod
    def _record_lifecycle(tab: Tab, key: str, method: str, params_json: str) -> None:
        recorders = [r for r in tab.lifecycle_recorders if r.key == key]
        if not recorders:
            return
        params = loads(params_json)
        frame_id = params.get("frameId")
        if method == "Page.frameDetached":
            for recorder in recorders:
                recorder.frames.pop(frame_id, None)
            return
        loader_id, name = params.get("loaderId"), params.get("name")
        if not all(isinstance(value, str) for value in (frame_id, loader_id, name)):
            return
        for recorder in recorders:
            frame = recorder.frames.get(frame_id)
            if frame is None or frame.loader_id != loader_id or name == "init":
                # A new document: what the previous one went through no longer applies.
                # ``document.open()`` sends ``init`` again with the same loader, and the
                # reopened document has not loaded: Playwright keeps DOMContentLoaded and
                # load per frame, whatever the loader, so repeating the earlier ones would
                # tell it the new document loaded.
                frame = recorder.frames[frame_id] = FrameLifecycle(loader_id)
            # A repeat (networkIdle again) keeps its place, with the latest params.
            frame.events[name] = params_json

    async def _on_child_attached(self, tab: Tab, key: str, params_json: str) -> None:
        params = loads(params_json)
        child_sid = params.get("sessionId")
        info = params.get("targetInfo") or {}
        if not isinstance(child_sid, str):
            return
        if info.get("type") not in CHILD_TYPES or is_restricted_url(str(info.get("url", ""))):
            # Resume it if Chrome paused it for us, then let go of it.
            link = self.link
            if link is not None:
                self.tasks.spawn(
                    self._release_child(
                        link, tab, key, child_sid, bool(params.get("waitingForDebugger"))
                    ),
                    name=f"relay-release-child-{child_sid[:8]}",
                )
            return
        tab.children[child_sid] = Child(child_sid, key, info)
        self.child_owner[child_sid] = tab
        for session in list(tab.sessions):
            if key not in session.auto_attach or (key and key not in session.known_children):
                continue
            session.known_children.add(child_sid)
            await session.send_event(key, "Target.attachedToTarget", params_json)

    async def _release_child(
        self, link: ExtensionLink, tab: Tab, parent: str, child_sid: str, waiting: bool
    ) -> None:
        try:
            if waiting:
                await link.cdp(
                    tab.tab_id,
                    "Runtime.runIfWaitingForDebugger",
                    session_id=child_sid,
                    reply_timeout=self.op_timeout,
                )
            await link.cdp(
                tab.tab_id,
                "Target.detachFromTarget",
                {"sessionId": child_sid},
                session_id=parent or None,
                reply_timeout=self.op_timeout,
            )
        except CdpError as exc:
            log.debug("releasing a filtered child target: %s", exc.message)

    async def _on_child_detached(self, tab: Tab, key: str, params_json: str) -> None:
        params = loads(params_json)
        child_sid = params.get("sessionId")
        if not isinstance(child_sid, str) or child_sid not in tab.children:
            return
        # Grandchildren go with their parent.
        doomed = [child_sid]
        for sid, child in list(tab.children.items()):
            if child.parent in doomed and sid not in doomed:
                doomed.append(sid)
        for sid in doomed:
            tab.children.pop(sid, None)
            self.child_owner.pop(sid, None)
            tab.runtime_enabled.discard(sid)
            tab.contexts.pop(sid, None)
        # Their in-flight recorders die with them: nothing of theirs is repeated.
        for recorder in [r for r in tab.lifecycle_recorders if r.key in doomed]:
            recorder.frames.clear()
            tab.lifecycle_recorders.remove(recorder)
        for session in list(tab.sessions):
            if child_sid not in session.known_children:
                continue
            for sid in doomed:
                session.known_children.discard(sid)
            session.enabled = {pair for pair in session.enabled if pair[0] not in doomed}
            await session.send_event(key, "Target.detachedFromTarget", params_json)

    # ------------------------------------------------------------ client side
    def add_client(self, client: Client) -> None:
        self.clients[client.id] = client

    async def open_implicit_session(self, client: Client, target_id: str) -> None:
        """For ``/devtools/page/<id>``: commands without a sessionId go to that tab."""
        tab = self._tab_by_target(target_id)
        session = self._new_session(client, tab, client.scopes[""])
        client.implicit = session

    async def remove_client(self, client: Client) -> None:
        client.closed = True
        self.clients.pop(client.id, None)
        for session in list(client.sessions.values()):
            await self._drop_session(session, notify=False)

    async def client_message(self, client: Client, raw: str | bytes) -> None:
        try:
            msg = loads(raw)
        except ValueError:
            await client.send(
                error_message(None, "Message must be a valid JSON", None, INVALID_REQUEST)
            )
            return
        if not isinstance(msg, dict):
            await client.send(
                error_message(None, "Message must be an object", None, INVALID_REQUEST)
            )
            return
        msg_id = msg.get("id")
        method = msg.get("method")
        sid = msg.get("sessionId") or ""
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(msg_id, int) or not isinstance(method, str):
            await client.send(
                error_message(
                    msg_id,
                    "Message must have integer 'id' and string 'method' properties",
                    sid or None,
                    INVALID_REQUEST,
                )
            )
            return
        if not isinstance(params, dict):
            await client.send(
                error_message(msg_id, "'params' must be an object", sid or None, INVALID_PARAMS)
            )
            return
        if not sid and client.implicit is not None:
            sid = client.implicit.session_id
        scope = client.scopes.get(sid)
        if scope is not None:
            await self._root_command(client, scope, msg_id, method, params)
            return
        session = client.sessions.get(sid)
        if session is not None:
            await self._session_command(client, session, msg_id, method, params)
            return
        tab = self.child_owner.get(sid)
        if tab is not None and any(s.client is client for s in tab.sessions):
            await self._child_command(client, tab, sid, msg_id, method, params)
            return
        await client.send(
            error_message(msg_id, "Session with given id not found.", sid, SESSION_NOT_FOUND)
        )

    # Root (browser-level) commands --------------------------------------------
    async def _root_command(
        self, client: Client, scope: Scope, msg_id: int, method: str, params: dict[str, Any]
    ) -> None:
        reply_sid = client.wire_sid(scope.session_id)
        handler = ROOT_HANDLERS.get(method)
        if handler is None:
            await client.send(
                error_message(
                    msg_id,
                    f"'{method}' wasn't found",
                    reply_sid,
                    METHOD_NOT_FOUND,
                    "the browserdeck relay answers browser-level commands itself and does "
                    "not support this one (send page commands on a page session)",
                )
            )
            return
        if method in SLOT_METHODS and not (
            method == "Target.setAutoAttach" and not params.get("autoAttach")
        ):
            refusal = self._slot_guard(client)
            if refusal:
                await client.send(error_message(msg_id, refusal, reply_sid))
                return
        if method in SLOW_ROOT:
            # Waits on the extension: do not hold up this client's other commands.
            self.tasks.spawn(
                self._run_root(handler, client, scope, msg_id, params, reply_sid, None),
                name=f"relay-{method}",
            )
        else:
            await self._run_root(handler, client, scope, msg_id, params, reply_sid, None)

    async def _run_root(
        self,
        handler: RootHandler,
        client: Client,
        scope: Scope,
        msg_id: int,
        params: dict[str, Any],
        reply_sid: str | None,
        session: Session | None,
    ) -> None:
        try:
            result = await handler(self, client, scope, params, session)
        except CdpError as exc:
            await client.send(error_message(msg_id, exc.message, reply_sid, exc.code, exc.data))
            return
        except Exception as exc:
            log.exception("relay: handling a browser-level command failed")
            await client.send(error_message(msg_id, f"relay error: {exc}", reply_sid))
            return
        await client.send(result_message(msg_id, dumps(result), reply_sid))
        if isinstance(result, Then):
            await result.after()

    # Page-session commands ------------------------------------------------------
    async def _session_command(
        self, client: Client, session: Session, msg_id: int, method: str, params: dict[str, Any]
    ) -> None:
        tab = session.tab
        reply_sid = client.wire_sid(session.session_id)
        domain, _, name = method.partition(".")
        if domain == "Browser" or method in ("Target.getTargetInfo", "Target.getBrowserContexts"):
            handler = ROOT_HANDLERS.get(method)
            if handler is not None:
                await self._run_root(
                    handler, client, client.scopes[""], msg_id, params, reply_sid, session
                )
                return
        if method in (
            "Target.attachToTarget",
            "Target.createTarget",
            "Target.closeTarget",
            "Target.activateTarget",
            "Target.setDiscoverTargets",
            "Target.getTargets",
        ):
            # Puppeteer and others send these on a page session; Chrome allows it there.
            handler = ROOT_HANDLERS[method]
            await self._run_root(
                handler, client, client.scopes[""], msg_id, params, reply_sid, session
            )
            return
        await self._tab_command(
            client, tab, "", session, msg_id, method, name, domain, params, reply_sid
        )

    async def _child_command(
        self,
        client: Client,
        tab: Tab,
        child_sid: str,
        msg_id: int,
        method: str,
        params: dict[str, Any],
    ) -> None:
        # Child sessions are shared by every session of the tab; track them per session
        # of this client on the tab (there is normally exactly one).
        owner = next(
            (s for s in tab.sessions if s.client is client and child_sid in s.known_children), None
        )
        if owner is None:
            owner = next(s for s in tab.sessions if s.client is client)
        domain, _, name = method.partition(".")
        await self._tab_command(
            client, tab, child_sid, owner, msg_id, method, name, domain, params, child_sid
        )

    async def _tab_command(
        self,
        client: Client,
        tab: Tab,
        key: str,
        session: Session,
        msg_id: int,
        method: str,
        name: str,
        domain: str,
        params: dict[str, Any],
        reply_sid: str | None,
    ) -> None:
        hook: Hook | None = None
        after: After | None = None
        recorder: LifecycleRecorder | None = None
        if method in ENABLERS:
            session.enabled.add((key, domain))
        if name == "enable":
            if domain != "Runtime" or session.runtime_on(key):
                session.enabled.add((key, domain))
            elif key in tab.runtime_enabled:
                # Chrome will not repeat the contexts it already reported to another
                # session: replay them from the cache when the reply comes back (Chrome
                # has then handled every earlier command, e.g. Page.getFrameTree). Until
                # then this session gets no context events; the cache covers them.
                hook = self._replay_contexts_hook(session, key)
            else:
                tab.runtime_enabled.add(key)
                session.enabled.add((key, domain))
        elif name == "disable":
            session.enabled.discard((key, domain))
            if any(
                (key, domain) in other.enabled for other in tab.sessions if other is not session
            ):
                # Another session still relies on this domain: pretend, as Chrome would
                # for a separate session.
                await client.send(result_message(msg_id, "{}", reply_sid))
                return
            if domain == "Runtime":
                tab.runtime_enabled.discard(key)
                tab.contexts.pop(key, None)
        elif method == "Page.setLifecycleEventsEnabled" and params.get("enabled"):
            # Chrome replays the current documents' lifecycle before its reply: record it
            # for this command alone (another session's command must not wipe it).
            recorder = LifecycleRecorder(key)
            after = self._replay_lifecycle_after(session, recorder)
        elif method == "Target.setAutoAttach":
            if params.get("autoAttach"):
                session.auto_attach.add(key)
                hook = self._replay_children_hook(session, key)
            else:
                session.auto_attach.discard(key)
                if any(key in other.auto_attach for other in tab.sessions):
                    # Another session still wants the children: keep Chrome auto-attaching.
                    await client.send(result_message(msg_id, "{}", reply_sid))
                    return
        await self._forward(
            Command(
                client,
                tab,
                key,
                msg_id,
                method,
                dumps(params),
                reply_sid,
                method in LONG_METHODS or bool(params.get("awaitPromise")),
                hook,
                after,
                recorder,
            )
        )

    def _replay_contexts_hook(self, session: Session, key: str) -> Hook:
        async def hook(
            body: str | None, error: dict[str, Any] | None
        ) -> tuple[str | None, dict[str, Any] | None]:
            if error is None:
                session.enabled.add((key, "Runtime"))
                for context in list(session.tab.contexts.get(key, {}).values()):
                    await session.send_event(
                        key, "Runtime.executionContextCreated", dumps({"context": context})
                    )
            return body, error

        return hook

    def _replay_lifecycle_after(self, session: Session, recorder: LifecycleRecorder) -> After:
        """Repeat the lifecycle of each frame's current document once the reply to
        ``Page.setLifecycleEventsEnabled`` is out.

        Chrome replays it before that reply, and Playwright, on a page whose frame tree
        showed the initial empty document (a new popup), listens only from the reply on:
        the document that replaces it must still be ahead. In Chrome it is (a new target
        waits for the debugger until ``Runtime.runIfWaitingForDebugger``); a tab the
        extension shares is never paused, so the popup can commit and load between
        ``Page.getFrameTree`` and this command, and its ``load`` was lost
        (``wait_for_load_state`` timed out; docs/extension.md, "CDP handled by the
        relay"). A repeat of events the client already had is harmless: Playwright keeps
        the DOMContentLoaded and load it heard per frame, whatever the loader, until a new
        document commits. For the same reason only the current document's events may be
        repeated (``_record_lifecycle``).

        What is repeated is what ``recorder`` heard while the command was in flight, which
        holds Chrome's replay of every current document; a frame that went away in that
        window without ``Page.frameDetached`` (an old document's iframe) may be repeated,
        and clients ignore events of frames they do not know."""
        tab = session.tab

        async def after() -> None:
            if session not in tab.sessions:
                return
            for frame in list(recorder.frames.values()):
                for params_json in list(frame.events.values()):
                    await session.send_event(recorder.key, "Page.lifecycleEvent", params_json)

        return after

    def _replay_children_hook(self, session: Session, key: str) -> Hook:
        async def hook(
            body: str | None, error: dict[str, Any] | None
        ) -> tuple[str | None, dict[str, Any] | None]:
            if error is None:
                # Chrome reports already-attached children only to the first session that
                # asked; a later session learns them from us.
                for child in list(session.tab.children.values()):
                    if child.parent != key or child.session_id in session.known_children:
                        continue
                    session.known_children.add(child.session_id)
                    await session.send_event(
                        key,
                        "Target.attachedToTarget",
                        dumps(
                            {
                                "sessionId": child.session_id,
                                "targetInfo": child.target_info,
                                "waitingForDebugger": False,
                            }
                        ),
                    )
            return body, error

        return hook

    # Forwarding ---------------------------------------------------------------
    async def _forward(self, cmd: Command) -> None:
        tab = cmd.tab
        if tab.attached:
            await self._send_command(cmd)
        elif tab.attaching is not None:
            tab.attaching.append(cmd)
        elif tab.removed:
            await self._fail_command(
                cmd, "the tab is no longer shared with the browserdeck extension"
            )
        else:
            tab.attaching = [cmd]
            tab.attach_done = asyncio.Event()
            self.tasks.spawn(self._attach(tab), name=f"relay-attach-{tab.tab_id}")

    async def _attach(self, tab: Tab, *, keep: bool = False) -> None:
        error: str | None = None
        try:
            await self._after_detach(tab)
            link = self._require_link()
            result = await link.call("attach", {"tabId": tab.tab_id}, reply_timeout=self.op_timeout)
            info = result.get("targetInfo") if isinstance(result, dict) else None
            if isinstance(info, dict):
                self._learn_context_id(info)
                if info.get("url"):
                    tab.url = str(info["url"])
                if info.get("title"):
                    tab.title = str(info["title"])
        except CdpError as exc:
            error = f"could not attach the debugger to tab {tab.target_id[:8]} ({tab.url}): {exc.message}"
        queued = tab.attaching or []
        done, tab.attach_done = tab.attach_done, None
        if error is not None or tab.removed:
            tab.attaching = None
            if done is not None:
                done.set()
            for cmd in queued:
                await self._fail_command(cmd, error or "the tab is no longer shared")
            return
        # Drain in order; commands that arrive meanwhile join the end of the queue.
        while queued:
            await self._send_command(queued.pop(0))
        tab.attaching = None
        tab.attached = True
        if done is not None:
            done.set()
        if not keep:
            self._maybe_detach(tab)

    async def _send_command(self, cmd: Command) -> None:
        link = self.link
        if link is None:
            await self._fail_command(cmd, NO_EXTENSION_MESSAGE)
            return
        client, msg_id, reply_sid, hook, after, recorder = (
            cmd.client, cmd.msg_id, cmd.reply_sid, cmd.hook, cmd.after, cmd.recorder
        )  # fmt: skip
        tab = cmd.tab

        def stop_recording() -> None:
            if recorder is not None and recorder in tab.lifecycle_recorders:
                tab.lifecycle_recorders.remove(recorder)

        async def on_reply(body: str | None, error: dict[str, Any] | None) -> None:
            # Every end of the command comes here (reply, timeout, extension gone).
            stop_recording()
            if hook is not None:
                body, error = await hook(body, error)
            if error is not None:
                await client.send(
                    error_message(
                        msg_id,
                        str(error.get("message", "error")),
                        reply_sid,
                        int(error.get("code", SERVER_ERROR)),
                    )
                )
            else:
                await client.send(result_message(msg_id, body or "{}", reply_sid))
                if after is not None:
                    await after()

        if recorder is not None:
            tab.lifecycle_recorders.append(recorder)
        try:
            await link.forward(
                cmd.tab.tab_id,
                cmd.key or None,
                cmd.method,
                cmd.params_json,
                on_reply,
                reply_timeout=self.long_command_timeout if cmd.long else self.command_timeout,
            )
        except CdpError as exc:
            stop_recording()
            await self._fail_command(cmd, exc.message)

    async def _fail_command(self, cmd: Command, message: str) -> None:
        await cmd.client.send(error_message(cmd.msg_id, message, cmd.reply_sid))

    async def tab_call(self, tab: Tab, method: str, params: dict[str, Any] | None = None) -> Any:
        """A relay-internal CDP command on a tab's own session (attaching if needed)."""
        link = self._require_link()
        if not tab.attached:
            if tab.attach_done is not None:
                # Piggy-back on the attach under way.
                await tab.attach_done.wait()
            if not tab.attached:
                await self._after_detach(tab)
                await link.call("attach", {"tabId": tab.tab_id}, reply_timeout=self.op_timeout)
                tab.attached = True
        try:
            return await link.cdp(tab.tab_id, method, params, reply_timeout=self.op_timeout)
        finally:
            self._maybe_detach(tab)

    # HTTP-facing helpers ---------------------------------------------------------
    async def create_tab(
        self, url: str, *, background: bool = False, new_window: bool = False
    ) -> Tab:
        if is_restricted_url(url):
            raise CdpError(
                f"cannot open {url!r} through the extension relay: Chrome does not let "
                "extensions debug chrome://, extension or web-store pages"
            )
        link = self._require_link()
        result = await link.call(
            "createTab",
            {"url": url, "background": background, "newWindow": new_window},
            reply_timeout=self.op_timeout,
        )
        info = result.get("tab") if isinstance(result, dict) else None
        tab = await self._add_tab(info or {}, fresh=True) if isinstance(info, dict) else None
        if tab is None:
            raise CdpError("the extension opened a tab but did not report it")
        return tab

    async def close_tab(self, tab: Tab) -> None:
        link = self._require_link()
        await link.call("closeTab", {"tabId": tab.tab_id}, reply_timeout=self.op_timeout)
        await self.forget_closed_tab(tab)

    async def forget_closed_tab(self, tab: Tab) -> None:
        await self._remove_tab(tab, detach_debugger=False, closed=True)
        self._on_tabs_changed()

    async def activate_tab(self, tab: Tab) -> None:
        link = self._require_link()
        await link.call("activateTab", {"tabId": tab.tab_id}, reply_timeout=self.op_timeout)

    def tab_for(self, target_id: str) -> Tab:
        return self._tab_by_target(target_id)


def _product_from_ua(ua: str, full_version: str = "") -> str:
    # The user agent carries a reduced version (156.0.0.0); the extension sends the full
    # one from navigator.userAgentData, which is what Chrome's own product string has.
    # Chrome's product is "Chrome/<version>" even headless (the UA then says HeadlessChrome).
    for token in ua.split():
        name, _, version = token.partition("/")
        if name in ("Chrome", "HeadlessChrome", "Chromium") and version:
            return f"Chrome/{full_version or version}"
    return "Chrome/unknown"


__all__ = ["Child", "Client", "Relay", "Scope", "Session", "Tab"]
