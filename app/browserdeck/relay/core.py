"""CDP routing: make the tabs the extension shares look like a real Chrome to clients.

The extension can only debug single tabs (``chrome.debugger``), so the relay plays the
browser: it answers the browser-level ``Browser.*`` and ``Target.*`` commands from its own
bookkeeping and forwards everything else to the right tab. What Playwright needs from it
is summarised in docs/extension.md; the rules that matter most:

* ``Target.attachedToTarget`` is sent before the reply of the command that caused it
  (``setAutoAttach``, ``createTarget``, ``attachToTarget``), with a real targetId, a
  truthy ``browserContextId`` and ``openerId`` for popups; no targetId is announced
  twice to one client.
* Child sessions (cross-origin iframes, workers) pass through with Chrome's own
  session ids, announced on their parent's session, never on the root.
* The debugger attaches to a tab on the first command a client sends it (lazy), and
  detaches when the last client session on that tab goes away, so no client inherits
  another one's scripts, bindings or emulation.
* Several sessions can share one tab's debugger: ``Runtime.enable`` from a later session
  gets the live execution contexts replayed from a cache, context events only reach
  sessions that enabled Runtime, and ``X.disable`` is not forwarded while another
  session still uses domain X.

``Relay`` is the face of the routing; the parts are its collaborators: the bookkeeping
(targets.py), the clients' commands (commands.py), forwarding and the lazy attach
(forwarding.py), the extension's CDP events (events.py), and the browser-level commands
(browser_domain.py), which see the relay only through ``BrowserHost``. Here are the
extension's own messages (tabs shared, updated, closed; debugger detached) and the
helpers the HTTP side uses. Nothing here touches sockets: clients and the extension link
are given in, which keeps this testable with a fake extension.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from browserdeck.relay.commands import CommandRouter
from browserdeck.relay.events import EventRouter
from browserdeck.relay.forwarding import Forwarder
from browserdeck.relay.link import ExtensionLink
from browserdeck.relay.model import Child, Client, Scope, Session, Tab
from browserdeck.relay.protocol import NO_EXTENSION_MESSAGE, CdpError, is_restricted_url
from browserdeck.relay.targets import Targets
from browserdeck.util.aio import Tasks

log = logging.getLogger(__name__)

# A tab whose debugger Chrome dropped (navigation to a restricted page, a crash) is
# re-announced after this pause; repeated drops lengthen it (see Tab.cooldown).
REANNOUNCE_DELAY = 0.5


class Relay:
    """The routing of one relay: tabs, clients, sessions, and the extension link.

    It is also the ``BrowserHost`` the browser-level command handlers work through."""

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
        self.extension_version = ""
        self._on_tabs_changed = on_tabs_changed or (lambda: None)
        self._targets = Targets(op_timeout=op_timeout)
        self._forwarder = Forwarder(
            self._targets,
            command_timeout=command_timeout,
            long_command_timeout=long_command_timeout,
        )
        self._event_router = EventRouter(self._targets)
        self._commands = CommandRouter(
            self._targets, self._forwarder, self, slot_guard or (lambda client: None)
        )

    # ------------------------------------------------------------------ state
    @property
    def link(self) -> ExtensionLink | None:
        return self._targets.link

    @property
    def tabs(self) -> dict[int, Tab]:
        return self._targets.tabs

    @property
    def by_target(self) -> dict[str, Tab]:
        return self._targets.by_target

    @property
    def clients(self) -> dict[str, Client]:
        return self._targets.clients

    @property
    def tasks(self) -> Tasks:
        return self._targets.tasks

    @property
    def product(self) -> str:
        return self._targets.product

    @property
    def user_agent(self) -> str:
        return self._targets.user_agent

    @property
    def context_id(self) -> str:
        return self._targets.context_id

    @property
    def browser_target_id(self) -> str:
        return self._targets.browser_target_id

    def shared_tabs(self) -> list[Tab]:
        """Tabs a client may see, in the order they were shared."""
        return self._targets.shared_tabs()

    # --------------------------------------------------------- extension side
    async def extension_connected(self, link: ExtensionLink) -> None:
        old = self._targets.link
        self._targets.link = link
        if old is not None and old is not link:
            await self._forget_extension(old, "replaced by a newer connection from the extension")

    async def extension_gone(self, link: ExtensionLink, reason: str) -> None:
        if self._targets.link is not link:
            await link.fail_all(reason)
            return
        self._targets.link = None
        await self._forget_extension(link, reason)

    async def _forget_extension(self, link: ExtensionLink, reason: str) -> None:
        await link.fail_all(f"the browserdeck extension disconnected: {reason}")
        for tab in list(self._targets.tabs.values()):
            if tab.attaching:
                queued, tab.attaching = tab.attaching, None
                for cmd in queued:
                    await self._forwarder.fail_command(cmd, f"{NO_EXTENSION_MESSAGE} ({reason})")
            await self._targets.remove_tab(tab, detach_debugger=False)
        self._on_tabs_changed()

    async def extension_message(
        self, link: ExtensionLink, header: dict[str, Any], body: str | None
    ) -> None:
        link.last_seen = asyncio.get_running_loop().time()
        event = header.get("event")
        if event is not None:
            await self._event_router.route(
                header.get("tabId"), header.get("sessionId"), event, body
            )
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
            tab = self._targets.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
            if tab is not None:
                await self._targets.remove_tab(
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
            self._targets.user_agent = ua
            self._targets.product = _product_from_ua(ua, str(params.get("fullVersion") or ""))
        if link.info.browser_context_id:
            self._targets.context_id = str(link.info.browser_context_id)
            self._targets.context_known = True
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
        tab = self._targets.tabs.get(tab_id)
        if tab is None:
            tab = Tab(tab_id=tab_id, target_id=target_id)
            self._targets.tabs[tab_id] = tab
            self._targets.by_target[target_id] = tab
        tab.url = str(info.get("url") or tab.url or "about:blank")
        tab.title = str(info.get("title") or tab.title)
        opener = info.get("openerTabId")
        if isinstance(opener, int):
            tab.opener_tab_id = opener
        if isinstance(info.get("windowId"), int):
            tab.window_id = info["windowId"]
        await self._targets.announce_everywhere(tab, fresh=fresh or tab.opener_tab_id is not None)
        if notify:
            self._on_tabs_changed()
        return tab

    async def _on_tab_updated(self, params: dict[str, Any]) -> None:
        tab = self._targets.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
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
            await self._targets.hide_tab(tab)
        elif not was_exposable and tab.exposable:
            await self._targets.announce_everywhere(tab)
        elif tab.exposable and tab.url != old_url:
            # Chrome reports targetInfoChanged when a navigation commits, not when only
            # the title changes.
            await self._targets.target_info_changed(tab)
        self._on_tabs_changed()

    async def _on_debugger_detached(self, params: dict[str, Any]) -> None:
        tab = self._targets.tabs.get(params.get("tabId"))  # type: ignore[arg-type]
        if tab is None:
            return
        reason = str(params.get("reason") or "")
        log.info("Chrome detached the debugger from tab %s (%s)", tab.tab_id, reason)
        tab.attached = False
        self._targets.reset_debugger(tab)
        # Chrome dropped the session, so every client's view of the page is dead: tell
        # them, then announce the tab afresh once it has settled.
        now = time.monotonic()
        tab.strikes = tab.strikes + 1 if now - tab.cooling_until < 10 else 1
        delay = min(REANNOUNCE_DELAY * (2 ** (tab.strikes - 1)), 30.0)
        await self._targets.hide_tab(tab)
        tab.cooling_until = now + delay
        self._targets.tasks.spawn(
            self._reannounce_later(tab, delay), name=f"relay-reannounce-{tab.tab_id}"
        )

    async def _reannounce_later(self, tab: Tab, delay: float) -> None:
        await asyncio.sleep(delay)
        if not tab.removed and self._targets.tabs.get(tab.tab_id) is tab:
            await self._targets.announce_everywhere(tab)
            self._on_tabs_changed()

    # ------------------------------------------------------------ client side
    def add_client(self, client: Client) -> None:
        self._targets.clients[client.id] = client

    async def open_implicit_session(self, client: Client, target_id: str) -> None:
        """For ``/devtools/page/<id>``: commands without a sessionId go to that tab."""
        tab = self._targets.tab_by_target(target_id)
        session = self._targets.new_session(client, tab, client.scopes[""])
        client.implicit = session

    async def remove_client(self, client: Client) -> None:
        client.closed = True
        self._targets.clients.pop(client.id, None)
        for session in list(client.sessions.values()):
            await self._targets.drop_session(session, notify=False)

    async def client_message(self, client: Client, raw: str | bytes) -> None:
        await self._commands.handle(client, raw)

    # ---------------------------------------------------- HTTP-facing helpers
    async def create_tab(
        self, url: str, *, background: bool = False, new_window: bool = False
    ) -> Tab:
        if is_restricted_url(url):
            raise CdpError(
                f"cannot open {url!r} through the extension relay: Chrome does not let "
                "extensions debug chrome://, extension or web-store pages"
            )
        result = await self.extension_call(
            "createTab", {"url": url, "background": background, "newWindow": new_window}
        )
        info = result.get("tab") if isinstance(result, dict) else None
        tab = await self._add_tab(info or {}, fresh=True) if isinstance(info, dict) else None
        if tab is None:
            raise CdpError("the extension opened a tab but did not report it")
        return tab

    async def close_tab(self, tab: Tab) -> None:
        await self.extension_call("closeTab", {"tabId": tab.tab_id})
        await self.forget_closed_tab(tab)

    async def forget_closed_tab(self, tab: Tab) -> None:
        await self._targets.remove_tab(tab, detach_debugger=False, closed=True)
        self._on_tabs_changed()

    async def activate_tab(self, tab: Tab) -> None:
        await self.extension_call("activateTab", {"tabId": tab.tab_id})

    def tab_for(self, target_id: str) -> Tab:
        return self._targets.tab_by_target(target_id)

    # ------------------------------------------------ BrowserHost (browser_domain.py)
    def version_info(self) -> dict[str, Any]:
        return self._targets.version_info()

    def target_info(self, tab: Tab, *, attached: bool = True) -> dict[str, Any]:
        return self._targets.target_info(tab, attached=attached)

    def browser_target_info(self) -> dict[str, Any]:
        return self._targets.browser_target_info()

    def find_target(self, target_id: str) -> Tab | Child | None:
        """The shared tab or the child target (iframe, worker) with this id."""
        tab = self._targets.by_target.get(target_id)
        if tab is not None and tab.exposable:
            return tab
        for owner in self._targets.tabs.values():
            for child in owner.children.values():
                if child.target_info.get("targetId") == target_id:
                    return child
        return None

    async def extension_call(self, method: str, params: dict[str, Any]) -> Any:
        """A call to the extension itself (``chrome.tabs``/``chrome.windows``)."""
        link = self._targets.require_link()
        return await link.call(method, params, reply_timeout=self._targets.op_timeout)

    async def learn_context(self, tab: Tab | None = None, *, keep: bool = False) -> None:
        await self._forwarder.learn_context(tab, keep=keep)

    async def announce(self, client: Client, scope: Scope, tab: Tab) -> Session | None:
        return await self._targets.announce(client, scope, tab)

    def release_debugger(self, tab: Tab) -> None:
        self._targets.release_debugger(tab)

    async def open_session(self, client: Client, scope: Scope, tab: Tab) -> Session:
        """A new session of ``client`` on ``tab``, announced on ``scope``."""
        session = self._targets.new_session(client, tab, scope)
        await self._targets.attachment_changed(tab)
        await self._targets.send_attached(session)
        return session

    async def drop_session(self, session: Session, *, notify: bool = True) -> None:
        await self._targets.drop_session(session, notify=notify)

    async def detach_child(self, child_sid: str) -> bool:
        """Detach a child session as Chrome does (reported on its parent's session);
        whether ``child_sid`` was one."""
        tab = self._targets.child_owner.get(child_sid)
        if tab is None or not tab.attached or child_sid not in tab.children:
            return False
        link = self._targets.require_link()
        await link.cdp(
            tab.tab_id,
            "Target.detachFromTarget",
            {"sessionId": child_sid},
            session_id=tab.children[child_sid].parent or None,
            reply_timeout=self._targets.op_timeout,
        )
        return True

    async def tab_call(self, tab: Tab, method: str, params: dict[str, Any] | None = None) -> Any:
        """A relay-internal CDP command on a tab's own session (attaching if needed)."""
        return await self._forwarder.tab_call(tab, method, params)


def _product_from_ua(ua: str, full_version: str = "") -> str:
    # The user agent carries a reduced version (156.0.0.0); the extension sends the full
    # one from navigator.userAgentData, which is what Chrome's own product string has.
    # Chrome's product is "Chrome/<version>" even headless (the UA then says HeadlessChrome).
    for token in ua.split():
        name, _, version = token.partition("/")
        if name in ("Chrome", "HeadlessChrome", "Chromium") and version:
            return f"Chrome/{full_version or version}"
    return "Chrome/unknown"


__all__ = ["Relay"]
