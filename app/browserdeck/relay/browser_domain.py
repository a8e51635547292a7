"""Browser-level CDP the relay answers itself (``Browser.*``, ``Target.*``, ``Storage.*``).

``chrome.debugger`` debugs single tabs and refuses browser-level commands, so the relay
plays the browser from its own bookkeeping and ``chrome.tabs``/``windows`` through the
extension. Each handler takes (host, client, scope, params, session) and returns the
result, or raises CdpError with Chrome's code and message; ``BrowserHost`` is all a handler
may ask of the relay (core.Relay is the one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from browserdeck.relay.model import Child, Client, Scope, Session, Tab, new_session_id
from browserdeck.relay.protocol import INVALID_PARAMS, CdpError, dumps, event_message


class BrowserHost(Protocol):
    """What the browser-level handlers need of the relay, and no more."""

    @property
    def context_id(self) -> str: ...
    @property
    def browser_target_id(self) -> str: ...
    def version_info(self) -> dict[str, Any]: ...
    def shared_tabs(self) -> list[Tab]: ...
    def target_info(self, tab: Tab, *, attached: bool = True) -> dict[str, Any]: ...
    def browser_target_info(self) -> dict[str, Any]: ...
    def tab_for(self, target_id: Any) -> Tab: ...
    def find_target(self, target_id: str) -> Tab | Child | None: ...
    async def extension_call(self, method: str, params: dict[str, Any]) -> Any: ...
    async def learn_context(self, tab: Tab | None = None, *, keep: bool = False) -> None: ...
    async def announce(self, client: Client, scope: Scope, tab: Tab) -> Session | None: ...
    def release_debugger(self, tab: Tab) -> None: ...
    async def open_session(self, client: Client, scope: Scope, tab: Tab) -> Session: ...
    async def drop_session(self, session: Session, *, notify: bool = True) -> None: ...
    async def detach_child(self, child_sid: str) -> bool: ...
    async def create_tab(
        self, url: str, *, background: bool = False, new_window: bool = False
    ) -> Tab: ...
    async def forget_closed_tab(self, tab: Tab) -> None: ...
    async def activate_tab(self, tab: Tab) -> None: ...
    async def tab_call(
        self, tab: Tab, method: str, params: dict[str, Any] | None = None
    ) -> Any: ...


class Then(dict[str, Any]):
    """A handler's result plus what to do once the reply is on its way."""

    def __init__(self, result: dict[str, Any], after: Callable[[], Awaitable[None]]) -> None:
        super().__init__(result)
        self.after = after


# Browser-level command handlers: (host, client, scope, params, session) -> result
RootHandler = Callable[
    [BrowserHost, Client, Scope, dict[str, Any], "Session | None"], Awaitable[dict[str, Any]]
]


async def _browser_get_version(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    return r.version_info()


async def _noop(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    return {}


def _refused(message: str) -> RootHandler:
    """A command the relay refuses on purpose: the user's own Chrome is not ours to change."""

    async def handler(
        r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
    ) -> dict[str, Any]:
        raise CdpError(message)

    return handler


_browser_close = _refused(
    "Browser.close is refused: this is the user's own Chrome, reached through the "
    "browserdeck extension; close tabs with Target.closeTarget instead"
)
_browser_grant = _refused(
    "granting permissions is not supported through the extension relay: the user "
    "decides site permissions in their own Chrome"
)


async def _window_for_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r.tab_for(p["targetId"]) if p.get("targetId") else (sess.tab if sess else None)
    if tab is None:
        raise CdpError(
            "Browser.getWindowForTarget needs a targetId on the browser session", INVALID_PARAMS
        )
    result = await r.extension_call("getWindow", {"tabId": tab.tab_id})
    return dict(result)


async def _window_bounds(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    result = await r.extension_call("getWindow", {"windowId": p.get("windowId")})
    return {"bounds": result.get("bounds", {})}


async def _set_window_bounds(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.extension_call(
        "setWindowBounds", {"windowId": p.get("windowId"), "bounds": p.get("bounds") or {}}
    )
    return {}


async def _set_auto_attach(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    if not p.get("flatten"):
        raise CdpError(
            "Only flatten protocol is supported with browser level auto-attach", INVALID_PARAMS
        )
    s.auto_attach = bool(p.get("autoAttach"))
    if s.auto_attach:
        await r.learn_context(keep=True)
        for tab in r.shared_tabs():
            await r.announce(c, s, tab)
        for tab in r.shared_tabs():
            r.release_debugger(tab)  # the tab used to learn the context, if it was declined
    return {}


async def _set_discover(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    s.discover = bool(p.get("discover"))
    if s.discover:
        await r.learn_context()
        for tab in r.shared_tabs():
            if tab.target_id not in s.discovered:
                s.discovered.add(tab.target_id)
                await c.send(
                    event_message(
                        "Target.targetCreated",
                        dumps({"targetInfo": r.target_info(tab, attached=bool(tab.sessions))}),
                        c.wire_sid(s.session_id),
                    )
                )
    else:
        s.discovered.clear()
    return {}


async def _get_targets(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.learn_context()
    return {
        "targetInfos": [r.target_info(tab, attached=bool(tab.sessions)) for tab in r.shared_tabs()]
    }


async def _get_target_info(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    target_id = p.get("targetId")
    if target_id:
        found = r.find_target(target_id)
        if isinstance(found, Tab):
            return {"targetInfo": r.target_info(found, attached=bool(found.sessions))}
        if found is not None:
            return {"targetInfo": found.target_info}
        raise CdpError(
            "No target with given id found",
            INVALID_PARAMS,
            f"{target_id!r} is not a tab shared with the browserdeck extension",
        )
    if sess is not None:
        return {"targetInfo": r.target_info(sess.tab)}
    return {"targetInfo": r.browser_target_info()}


async def _get_browser_contexts(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    # Like Chrome: only contexts made with createBrowserContext are listed (none here);
    # listing the default one makes Puppeteer file every page under a non-default context.
    return {"browserContextIds": [], "defaultBrowserContextId": r.context_id}


_create_context = _refused(
    "new browser contexts are not available through the extension relay: it reaches "
    "the user's own Chrome profile only (use browser.contexts[0] / the default context)"
)


async def _attach_to_browser(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    scope = Scope(new_session_id())
    c.scopes[scope.session_id] = scope
    await c.send(
        event_message(
            "Target.attachedToTarget",
            dumps(
                {
                    "sessionId": scope.session_id,
                    "targetInfo": r.browser_target_info(),
                    "waitingForDebugger": False,
                }
            ),
            c.wire_sid(s.session_id),
        )
    )
    return {"sessionId": scope.session_id}


async def _attach_to_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    if p.get("flatten") is False:
        raise CdpError(
            "only flat sessions are supported: send Target.attachToTarget with flatten: true"
        )
    tab = r.tab_for(p.get("targetId"))
    await r.learn_context(tab, keep=True)
    s.declined.discard(tab.target_id)
    session = await r.open_session(c, s, tab)
    return {"sessionId": session.session_id}


async def _detach_from_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    sid = p.get("sessionId")
    if not sid and p.get("targetId"):
        found = r.find_target(p["targetId"])
        tab = found if isinstance(found, Tab) else None
        sid = next((x.session_id for x in (tab.sessions if tab else []) if x.client is c), None)
    if not isinstance(sid, str):
        raise CdpError("No session with given id", INVALID_PARAMS)
    session = c.sessions.get(sid)
    if session is not None:
        if session.scope.announced.get(session.tab.target_id) is session:
            session.scope.declined.add(session.tab.target_id)
        await r.drop_session(session)
        return {}
    if sid in c.scopes and sid:
        scope = c.scopes.pop(sid)
        for other in [x for x in c.sessions.values() if x.scope is scope]:
            await r.drop_session(other, notify=False)
        await c.send(
            event_message(
                "Target.detachedFromTarget",
                dumps({"sessionId": sid, "targetId": r.browser_target_id}),
                c.wire_sid(s.session_id),
            )
        )
        return {}
    if await r.detach_child(sid):
        # A child session: Chrome detaches it and reports it on the parent's session.
        return {}
    raise CdpError("No session with given id", INVALID_PARAMS)


async def _create_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    context = p.get("browserContextId")
    if context and context != r.context_id:
        raise CdpError(
            f"unknown browserContextId {context!r}: the relay has only the default context"
        )
    await r.learn_context()
    tab = await r.create_tab(
        str(p.get("url") or "about:blank"),
        background=bool(p.get("background")),
        new_window=bool(p.get("newWindow")),
    )
    return {"targetId": tab.target_id}


async def _close_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r.tab_for(p.get("targetId"))
    await r.extension_call("closeTab", {"tabId": tab.tab_id})
    # Chrome answers first, then reports the sessions and the target going.
    return Then({"success": True}, lambda: r.forget_closed_tab(tab))


async def _activate_target(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r.tab_for(p.get("targetId"))
    await r.activate_tab(tab)
    return {}


def _cookie_tab(r: BrowserHost, c: Client) -> Tab:
    own = [tab for tab in r.shared_tabs() if any(x.client is c for x in tab.sessions)]
    tabs = own or [tab for tab in r.shared_tabs() if tab.attached] or r.shared_tabs()
    if not tabs:
        raise CdpError(
            "cookies are read through a shared tab and none is shared: share a tab with "
            "the browserdeck extension or open one first"
        )
    return tabs[0]


async def _get_cookies(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    result = await r.tab_call(_cookie_tab(r, c), "Network.getAllCookies")
    return {"cookies": result.get("cookies", [])}


async def _set_cookies(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.tab_call(_cookie_tab(r, c), "Network.setCookies", {"cookies": p.get("cookies") or []})
    return {}


async def _clear_cookies(
    r: BrowserHost, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.tab_call(_cookie_tab(r, c), "Network.clearBrowserCookies")
    return {}


ROOT_HANDLERS: dict[str, RootHandler] = {
    "Browser.getVersion": _browser_get_version,
    "Browser.setDownloadBehavior": _noop,
    "Browser.cancelDownload": _noop,
    "Browser.resetPermissions": _noop,
    "Browser.grantPermissions": _browser_grant,
    "Browser.setPermission": _browser_grant,
    "Browser.close": _browser_close,
    "Browser.getWindowForTarget": _window_for_target,
    "Browser.getWindowBounds": _window_bounds,
    "Browser.setWindowBounds": _set_window_bounds,
    "Target.setAutoAttach": _set_auto_attach,
    "Target.setDiscoverTargets": _set_discover,
    "Target.getTargets": _get_targets,
    "Target.getTargetInfo": _get_target_info,
    "Target.getBrowserContexts": _get_browser_contexts,
    "Target.createBrowserContext": _create_context,
    "Target.disposeBrowserContext": _create_context,
    "Target.attachToBrowserTarget": _attach_to_browser,
    "Target.attachToTarget": _attach_to_target,
    "Target.detachFromTarget": _detach_from_target,
    "Target.createTarget": _create_target,
    "Target.closeTarget": _close_target,
    "Target.activateTarget": _activate_target,
    "Storage.getCookies": _get_cookies,
    "Storage.setCookies": _set_cookies,
    "Storage.clearCookies": _clear_cookies,
    "Runtime.runIfWaitingForDebugger": _noop,
}
SLOW_ROOT = frozenset(
    {
        "Browser.getWindowForTarget",
        "Browser.getWindowBounds",
        "Browser.setWindowBounds",
        "Target.createTarget",
        "Target.closeTarget",
        "Target.activateTarget",
        "Storage.getCookies",
        "Storage.setCookies",
        "Storage.clearCookies",
    }
)
