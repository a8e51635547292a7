"""Browser-level CDP the relay answers itself (``Browser.*``, ``Target.*``, ``Storage.*``).

``chrome.debugger`` debugs single tabs and refuses browser-level commands, so the relay
plays the browser from its own bookkeeping (core.Relay) and ``chrome.tabs``/``windows``
through the extension. Each handler takes (relay, client, scope, params, session) and
returns the result, or raises CdpError with Chrome's code and message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from browserdeck.relay.model import Client, Scope, Session, Tab, new_session_id
from browserdeck.relay.protocol import INVALID_PARAMS, CdpError, dumps, event_message

if TYPE_CHECKING:
    from browserdeck.relay.core import Relay


class Then(dict[str, Any]):
    """A handler's result plus what to do once the reply is on its way."""

    def __init__(self, result: dict[str, Any], after: Callable[[], Awaitable[None]]) -> None:
        super().__init__(result)
        self.after = after


# Browser-level command handlers: (relay, client, scope, params, session) -> result
RootHandler = Callable[
    ["Relay", Client, Scope, dict[str, Any], "Session | None"], Awaitable[dict[str, Any]]
]


async def _browser_get_version(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    return r.version_info()


async def _noop(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    return {}


def _refused(message: str) -> RootHandler:
    """A command the relay refuses on purpose: the user's own Chrome is not ours to change."""

    async def handler(
        r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
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
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r._tab_by_target(p["targetId"]) if p.get("targetId") else (sess.tab if sess else None)
    if tab is None:
        raise CdpError(
            "Browser.getWindowForTarget needs a targetId on the browser session", INVALID_PARAMS
        )
    result = await r._require_link().call(
        "getWindow", {"tabId": tab.tab_id}, reply_timeout=r.op_timeout
    )
    return dict(result)


async def _window_bounds(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    result = await r._require_link().call(
        "getWindow", {"windowId": p.get("windowId")}, reply_timeout=r.op_timeout
    )
    return {"bounds": result.get("bounds", {})}


async def _set_window_bounds(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r._require_link().call(
        "setWindowBounds",
        {"windowId": p.get("windowId"), "bounds": p.get("bounds") or {}},
        reply_timeout=r.op_timeout,
    )
    return {}


async def _set_auto_attach(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    if not p.get("flatten"):
        raise CdpError(
            "Only flatten protocol is supported with browser level auto-attach", INVALID_PARAMS
        )
    s.auto_attach = bool(p.get("autoAttach"))
    if s.auto_attach:
        await r.learn_context(keep=True)
        for tab in r.shared_tabs():
            await r._announce(c, s, tab)
        for tab in r.shared_tabs():
            r._maybe_detach(tab)  # the tab used to learn the context, if it was declined
    return {}


async def _set_discover(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
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
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.learn_context()
    return {
        "targetInfos": [r.target_info(tab, attached=bool(tab.sessions)) for tab in r.shared_tabs()]
    }


async def _get_target_info(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    target_id = p.get("targetId")
    if target_id:
        tab = r.by_target.get(target_id)
        if tab is not None and tab.exposable:
            return {"targetInfo": r.target_info(tab, attached=bool(tab.sessions))}
        for owner in r.tabs.values():
            for child in owner.children.values():
                if child.target_info.get("targetId") == target_id:
                    return {"targetInfo": child.target_info}
        raise CdpError(
            "No target with given id found",
            INVALID_PARAMS,
            f"{target_id!r} is not a tab shared with the browserdeck extension",
        )
    if sess is not None:
        return {"targetInfo": r.target_info(sess.tab)}
    return {"targetInfo": r.browser_target_info()}


async def _get_browser_contexts(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    # Like Chrome: only contexts made with createBrowserContext are listed (none here);
    # listing the default one makes Puppeteer file every page under a non-default context.
    return {"browserContextIds": [], "defaultBrowserContextId": r.context_id}


_create_context = _refused(
    "new browser contexts are not available through the extension relay: it reaches "
    "the user's own Chrome profile only (use browser.contexts[0] / the default context)"
)


async def _attach_to_browser(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
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
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    if p.get("flatten") is False:
        raise CdpError(
            "only flat sessions are supported: send Target.attachToTarget with flatten: true"
        )
    tab = r._tab_by_target(p.get("targetId"))
    await r.learn_context(tab, keep=True)
    session = r._new_session(c, tab, s)
    s.declined.discard(tab.target_id)
    await r._attachment_changed(tab)
    await r.send_attached(session)
    return {"sessionId": session.session_id}


async def _detach_from_target(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    sid = p.get("sessionId")
    if not sid and p.get("targetId"):
        tab = r.by_target.get(p["targetId"])
        sid = next((x.session_id for x in (tab.sessions if tab else []) if x.client is c), None)
    if not isinstance(sid, str):
        raise CdpError("No session with given id", INVALID_PARAMS)
    session = c.sessions.get(sid)
    if session is not None:
        if session.scope.announced.get(session.tab.target_id) is session:
            session.scope.declined.add(session.tab.target_id)
        await r._drop_session(session)
        return {}
    if sid in c.scopes and sid:
        scope = c.scopes.pop(sid)
        for other in [x for x in c.sessions.values() if x.scope is scope]:
            await r._drop_session(other, notify=False)
        await c.send(
            event_message(
                "Target.detachedFromTarget",
                dumps({"sessionId": sid, "targetId": r.browser_target_id}),
                c.wire_sid(s.session_id),
            )
        )
        return {}
    tab = r.child_owner.get(sid)
    if tab is not None and tab.attached and sid in tab.children:
        # A child session: Chrome detaches it and reports it on the parent's session.
        link = r._require_link()
        await link.cdp(
            tab.tab_id,
            "Target.detachFromTarget",
            {"sessionId": sid},
            session_id=tab.children[sid].parent or None,
            reply_timeout=r.op_timeout,
        )
        return {}
    raise CdpError("No session with given id", INVALID_PARAMS)


async def _create_target(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
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
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r._tab_by_target(p.get("targetId"))
    await r._require_link().call("closeTab", {"tabId": tab.tab_id}, reply_timeout=r.op_timeout)
    # Chrome answers first, then reports the sessions and the target going.
    return Then({"success": True}, lambda: r.forget_closed_tab(tab))


async def _activate_target(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    tab = r._tab_by_target(p.get("targetId"))
    await r.activate_tab(tab)
    return {}


def _cookie_tab(r: Relay, c: Client) -> Tab:
    own = [tab for tab in r.shared_tabs() if any(x.client is c for x in tab.sessions)]
    tabs = own or [tab for tab in r.shared_tabs() if tab.attached] or r.shared_tabs()
    if not tabs:
        raise CdpError(
            "cookies are read through a shared tab and none is shared: share a tab with "
            "the browserdeck extension or open one first"
        )
    return tabs[0]


async def _get_cookies(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    result = await r.tab_call(_cookie_tab(r, c), "Network.getAllCookies")
    return {"cookies": result.get("cookies", [])}


async def _set_cookies(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
) -> dict[str, Any]:
    await r.tab_call(_cookie_tab(r, c), "Network.setCookies", {"cookies": p.get("cookies") or []})
    return {}


async def _clear_cookies(
    r: Relay, c: Client, s: Scope, p: dict[str, Any], sess: Session | None
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
