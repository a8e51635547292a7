"""CDP events from the extension, routed to the client sessions that should see them.

As in Chrome, an event reaches only the sessions that enabled its domain; execution
contexts are cached per tab so a later session's ``Runtime.enable`` can be answered with
them; child targets (iframes, workers) are tracked and announced on their parent's
session; a lifecycle replay is recorded while a ``Page.setLifecycleEventsEnabled`` is in
flight (commands.py repeats it).
"""

from __future__ import annotations

import logging
from typing import Any

from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.model import Child, FrameLifecycle, Session, Tab
from browserdeck.relay.protocol import CdpError, event_message, is_restricted_url, loads
from browserdeck.relay.targets import Targets

log = logging.getLogger(__name__)

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


class EventRouter:
    """Passes the events of shared tabs on to client sessions."""

    def __init__(self, targets: Targets) -> None:
        self._targets = targets

    async def route(self, tab_id: Any, child_sid: Any, method: str, body: str | None) -> None:
        tab = self._targets.tabs.get(tab_id) if isinstance(tab_id, int) else None
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
            link = self._targets.link
            if link is not None:
                self._targets.tasks.spawn(
                    self._release_child(
                        link, tab, key, child_sid, bool(params.get("waitingForDebugger"))
                    ),
                    name=f"relay-release-child-{child_sid[:8]}",
                )
            return
        tab.children[child_sid] = Child(child_sid, key, info)
        self._targets.child_owner[child_sid] = tab
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
                    reply_timeout=self._targets.op_timeout,
                )
            await link.cdp(
                tab.tab_id,
                "Target.detachFromTarget",
                {"sessionId": child_sid},
                session_id=parent or None,
                reply_timeout=self._targets.op_timeout,
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
            self._targets.child_owner.pop(sid, None)
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
