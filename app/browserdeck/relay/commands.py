"""The clients' CDP commands: parsed, checked and routed by their session.

A command on the browser session (or one Chrome also takes on a page session) goes to the
handlers in browser_domain.py; a command on a page or child session goes to its tab, with
the bookkeeping Chrome does per session: domains enabled, ``X.disable`` held back while
another session still uses X, execution contexts, children and lifecycle replayed to a
later session (docs/extension.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from browserdeck.relay.browser_domain import (
    ROOT_HANDLERS,
    SLOW_ROOT,
    BrowserHost,
    RootHandler,
    Then,
)
from browserdeck.relay.forwarding import Forwarder
from browserdeck.relay.model import (
    After,
    Client,
    Command,
    Hook,
    LifecycleRecorder,
    Scope,
    Session,
    Tab,
)
from browserdeck.relay.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SESSION_NOT_FOUND,
    CdpError,
    dumps,
    error_message,
    loads,
    result_message,
)
from browserdeck.relay.targets import Targets

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


class CommandRouter:
    """Routes each client's commands to the browser-level handlers or to a tab."""

    def __init__(
        self,
        targets: Targets,
        forwarder: Forwarder,
        host: BrowserHost,
        slot_guard: Callable[[Client], str | None],
    ) -> None:
        self._targets = targets
        self._forwarder = forwarder
        self._host = host
        self._slot_guard = slot_guard

    async def handle(self, client: Client, raw: str | bytes) -> None:
        """One message from a client: parsed, checked, and sent where its session says."""
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
        tab = self._targets.child_owner.get(sid)
        if tab is not None and any(s.client is client for s in tab.sessions):
            await self._child_command(client, tab, sid, msg_id, method, params)
            return
        await client.send(
            error_message(msg_id, "Session with given id not found.", sid, SESSION_NOT_FOUND)
        )

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
            self._targets.tasks.spawn(
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
            result = await handler(self._host, client, scope, params, session)
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
        await self._forwarder.forward(
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
        repeated (``EventRouter`` in events.py).

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
