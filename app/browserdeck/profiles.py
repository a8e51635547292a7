"""One profile: its browser (launched, relayed or remote, through its driver) and its tabs.

``ProfileContext`` is everything one profile can do, independent of its driver: every
driver ends in a CDP URL, so tabs are listed with ``/json/list`` and opened, focused and
closed with ``Target.*`` over one browser-level CDP connection. The orchestrator that
owns the contexts is ``service.Service``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from browserdeck import drivers, paths, remote, states, urls
from browserdeck.chrome import endpoint
from browserdeck.config import Config, ProfileConfig
from browserdeck.errors import (
    OPEN_TAB,
    BrowserdeckError,
    Disabled,
    Hint,
    NotFound,
    Unavailable,
)
from browserdeck.tabs import QUIET_CLIENTS, Tab, TabHistory, attachable, match

if TYPE_CHECKING:  # the launcher and the CDP client (websockets) load when used
    from browserdeck.chrome.cdp import CDPClient
    from browserdeck.chrome.launcher import ChromeProcess
    from browserdeck.door.call import Caller
    from browserdeck.drivers.base import ProfileDriver
    from browserdeck.relay.server import RelayServer
    from browserdeck.service import Service

log = logging.getLogger(__name__)


class ProfileContext:
    """One profile: its browser (launched, relayed or remote) and its tabs."""

    def __init__(self, service: Service, profile: ProfileConfig) -> None:
        self.service = service
        self.profile = profile
        self.pending: ProfileConfig | None = None  # saved for the next start (reconfig.py)
        self.chrome: ChromeProcess | None = None
        self.relay: RelayServer | None = None
        self.state = "stopped"  # stopped | starting | running | crashed | error
        self.detail: str | None = None
        # Shared with its driver (drivers/*): start/stop run under ``lock``; ``stopping``
        # marks a stop as ours (not a crash); ``watch`` is the driver's process watcher.
        self.lock = asyncio.Lock()
        self._cdp: CDPClient | None = None
        self._cdp_lock = asyncio.Lock()
        # Counting tabs and opening one happen under it, so two opens cannot pass maxTabs.
        self._open_lock = asyncio.Lock()
        self.watch: asyncio.Task[None] | None = None
        self.stopping = False
        self.restart_note: str | None = None
        # Tabs agents opened through the API (not the user in the tray or the CLI): what
        # "Stop all agents" closes.
        self.agent_tabs: set[str] = set()
        self.history = TabHistory()
        self._service: remote.ServiceDriver | None = None
        self._impl: ProfileDriver | None = None
        self._started_by: ProfileDriver | None = None

    # --- identity --------------------------------------------------------
    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def driver(self) -> str:
        return self.profile.driver

    @property
    def impl(self) -> ProfileDriver:
        """The profile's driver (drivers/): made anew when the settings change its driver."""
        if self._impl is None or self._impl.name != self.profile.driver:
            self._impl = drivers.driver_class(self.profile.driver)(self)
        return self._impl

    @property
    def config(self) -> Config:
        return self.service.config

    @property
    def remote(self) -> remote.ServiceDriver | None:
        """The browser-service driver when cdpUrl is a ws(s):// service endpoint (remote.py)."""
        if not self.profile.is_service:
            return None
        if self._service is None:
            self._service = remote.ServiceDriver(self)
        return self._service

    @property
    def cdp_url(self) -> str:
        return self.impl.cdp_url()

    @property
    def headers(self) -> dict[str, str]:
        """What a CDP client must send to this profile's endpoint: the relay's token, or
        the API token for a managed browser's CDP endpoint (none for attach-only/remote)."""
        return self.impl.headers()

    # --- status ------------------------------------------------------------
    def _ensure_enabled(self) -> None:
        if not self.config.enabled:
            raise Disabled(
                "browser control is disabled in settings",
                hint=f'enable it in the tray\'s Settings, or set "enabled": true in '
                f"{paths.config_file()}",
            )

    async def status(self) -> dict[str, Any]:
        p = self.profile
        out: dict[str, Any] = {
            "profile": p.name,
            "enabled": self.config.enabled,
            "driver": p.driver,
            "color": p.color,
            "state": self.state,
            "running": False,
            "pid": None,
            "cdpUrl": self.cdp_url,
            "cdpPort": self.impl.cdp_port(),
            "tabs": 0,
            "detail": self.detail,
        }
        said = await self.impl.status(out)
        answers = bool(said)
        # The browser counts as running if its endpoint answers (covers attach-only and remote).
        if said is None and self.config.enabled:
            tabs = await self.peek_tabs()
            if tabs is not None:
                answers = True
                out["running"] = True
                out["tabs"] = len(tabs)
                if self.state in ("stopped", "crashed", "error") and not self.impl.spec.launches:
                    self.state = "running"
        # One vocabulary for every front-end (states.py): the word and the line people read.
        out["state"] = str(
            states.classify(
                driver=p.driver,
                state=self.state,
                enabled=self.config.enabled,
                answers=answers,
                extension_connected=bool(out.get("extensionConnected")),
            )
        )
        out["stateText"] = states.describe(
            out["state"], p.driver, int(out.get("tabs") or 0), out.get("remote")
        )
        return out

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        """The tabs if the browser answers right now; never starts anything (for status views)."""
        return await self.impl.peek_tabs(caller)

    # --- lifecycle -------------------------------------------------------
    async def start(self, caller: Caller | None = None) -> dict[str, Any]:
        self._ensure_enabled()
        await self.service.tokens_read()  # the relay and a managed browser's endpoint check them
        async with self.lock:
            driver = self.impl
            self._started_by = driver
            await driver.start(caller)
        return await self.status()

    async def stop(self, caller: Caller | None = None) -> dict[str, Any]:
        service = self.remote
        agent = caller.agent if caller is not None else None
        if service is not None and service.pooled and agent is not None:
            # A pooled session stopping releases its own browser, not the others'.
            await service.release(agent.session)
            return await self.status()
        async with self.lock:
            await self.stop_locked()
        return await self.status()

    async def stop_locked(self) -> None:
        self.stopping = True
        self.restart_note = None
        await self.drop_connections()
        # The driver that started the browser stops it, also when the settings have
        # switched the profile to another driver since.
        for driver in dict.fromkeys(d for d in (self._started_by, self.impl) if d is not None):
            await driver.stop()
        self._started_by = None
        self.set_state("stopped", None)

    def refuse_if_not_running(self) -> None:
        """For a watcher (the panel): an error instead of starting a stopped managed browser."""
        if not self.impl.spec.launches or (self.chrome is not None and self.chrome.alive()):
            return
        word = "crashed" if self.state == "crashed" else "not running"
        raise Unavailable(
            f"profile {self.name!r}: the browser is {word}"
            + (f" ({self.detail})" if self.detail else ""),
            hint="start it from the tray menu or the panel; an agent's next request also starts it",
            code="browser_stopped",
        )

    async def ensure_browser(self, caller: Caller | None = None) -> str:
        """The CDP URL of a usable browser (for a pooled service, the caller's own);
        starts a managed one on demand."""
        self._ensure_enabled()
        return await self.impl.ensure(caller)

    async def reset(self) -> dict[str, Any]:
        """Kill whatever holds this profile's CDP port (an orphaned browser), then report."""
        return await self.impl.reset()

    async def why_gone(self, caller: Caller | None = None) -> str | None:
        """After a call lost its tab or connection: whether the whole browser went, and why.

        The engine only sees a closed page; this says it was a stop, a crash or a dropped
        extension, so the agent knows its tabs and refs are gone, not just one tab.
        """
        if self.stopping or self.state == "stopped":
            return f"profile {self.name!r}: its browser was stopped while this was running"
        said = await self.impl.why_gone(caller)
        if said is not None:
            return said or None
        if await self.peek_tabs(caller) is not None:
            return None  # the browser answers: it really was just the tab
        why = f" ({self.detail})" if self.state == "crashed" and self.detail else ""
        return (
            f"profile {self.name!r}: the browser went away while this was running; it "
            f"crashed or was killed{why}"
        )

    def restart_hint(self) -> Hint:
        """How to bring the browser back after ``why_gone`` said it went."""
        return self.impl.restart_hint()

    async def drop_connections(self) -> None:
        if self._service is not None:
            # Release, never kill: closing our connection is how a service ends its browser.
            await self._service.release_all()
        if self._cdp is not None:
            client, self._cdp = self._cdp, None
            await client.close()
        engine = self.service.engine
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.drop(self.cdp_url)

    def set_state(self, state: str, detail: str | None) -> None:
        changed = (state, detail) != (self.state, self.detail)
        self.state, self.detail = state, detail
        if self.pending is not None and state in ("stopped", "crashed", "error"):
            self.profile, self.pending = self.pending, None  # the browser went: take them now
        if changed:
            self.service.events.profile_state.send(profile=self.name, state=state, detail=detail)

    # --- tabs --------------------------------------------------------------
    async def read_tabs(self, wait: float = 5.0, caller: Caller | None = None) -> list[Tab]:
        if self.remote is not None:
            return await self.remote.tabs(await self.remote.lease(caller))
        try:
            targets = await endpoint.devtools_json(
                self.cdp_url, "/json/list", timeout=wait, headers=self.headers
            )
        except Unavailable as exc:
            raise Unavailable(
                f"profile {self.name!r}: the browser at {self.cdp_url} does not answer "
                f"({exc.message})",
                hint=self.impl.not_running_hint(),
                code="browser_unreachable",
            ) from None
        # Chrome's /json/list HTML-escapes titles ("A &amp; B"); the relay's list is plain
        # text, as its tab titles come straight from the extension.
        unescape = html.unescape if self.impl.escaped_titles else str
        return [
            Tab(t["id"], unescape(t.get("title", "")), t.get("url", ""), t.get("type", "page"))
            for t in targets
            if t.get("type") == "page"
        ]

    async def list_tabs(self, caller: Caller | None = None) -> list[Tab]:
        await self.ensure_browser(caller)
        return await self.read_tabs(caller=caller)

    # --- the default tab ----------------------------------------------------
    def note_used(self, client: str | None, target_id: str) -> None:
        """``client`` acted on ``target_id``: it becomes that client's (and the profile's) latest."""
        if client in QUIET_CLIENTS:  # the panel watching is not a use
            return
        self.history.used(client, target_id)
        self.service.events.agent_tab.send(profile=self.name, target_id=target_id, client=client)

    def note_opened(self, client: str | None, target_id: str) -> None:
        self.history.opened(client, target_id)
        self.note_used(client, target_id)

    def default_target(self, tabs: list[Tab], client: str | None) -> str:
        """The tab a call that names none acts on (never one the engine cannot attach to)."""
        usable = [t for t in tabs if attachable(t)]
        if not usable:
            raise NotFound(
                f"profile {self.name!r} has no tab an agent can use "
                f"({len(tabs)} open, all browser-internal pages)",
                hint=Hint("open one ({open})", open=OPEN_TAB),
                code="no_tabs",
            )
        latest = self.history.latest(client, {t.target_id for t in usable})
        if latest is not None:
            return latest
        # Nothing used through browserdeck yet: Chrome lists tabs by last activity, so its
        # first is the profile's most recently used one. The call then records it, so the
        # choice stays put however Chrome reorders its list.
        return usable[0].target_id

    async def resolve_target(self, target: str | None, caller: Caller | None = None) -> str:
        """A full targetId from an id, a unique prefix, or None (the caller's default tab)."""
        tabs = await self.list_tabs(caller)
        if not tabs:
            raise NotFound(
                f"profile {self.name!r} has no open tabs",
                hint=Hint("open one ({open})", open=OPEN_TAB),
                code="no_tabs",
            )
        if not target:
            return self.default_target(tabs, caller.key if caller is not None else None)
        lease = self.remote.current(caller) if self.remote is not None else None
        why = (lease.note if lease else None) or self.restart_note
        return match(tabs, target, where=f"in profile {self.name!r}", why=why).target_id

    async def _browser_cdp(self) -> CDPClient:
        from browserdeck.chrome.cdp import CDPClient

        async with self._cdp_lock:
            if self._cdp is None or self._cdp.closed:
                ws_url = await self._browser_ws_url()
                self._cdp = await CDPClient.connect(ws_url, headers=self.headers)
            return self._cdp

    async def _browser_ws_url(self) -> str:
        try:
            version = await endpoint.devtools_json(
                self.cdp_url, "/json/version", timeout=5.0, headers=self.headers
            )
            return endpoint.normalize_ws_url(str(version["webSocketDebuggerUrl"]), self.cdp_url)
        except (Unavailable, KeyError, TypeError) as exc:
            why = exc.message if isinstance(exc, Unavailable) else "no webSocketDebuggerUrl"
            raise Unavailable(
                f"profile {self.name!r}: cannot read {self.cdp_url}/json/version ({why})",
                hint=self.impl.not_running_hint(),
                code="browser_unreachable",
            ) from None

    async def _cdp_call(
        self, method: str, params: dict[str, Any], caller: Caller | None = None
    ) -> dict[str, Any]:
        if self.remote is not None:
            reply: dict[str, Any] = await self.remote.send(
                await self.remote.lease(caller), method, params
            )
            return reply
        client = await self._browser_cdp()
        try:
            return await client.send(method, params)
        except Unavailable:
            # The browser-level socket dropped (browser restarted): reconnect once.
            self._cdp = None
            client = await self._browser_cdp()
            return await client.send(method, params)

    async def open_tab(self, url: str = "about:blank", caller: Caller | None = None) -> Tab:
        url = urls.prepare(url, allow_file_urls=self.config.allow_file_urls, empty="about:blank")
        # (For a browser service: the engine's name for the caller's own browser.)
        cdp_url = await self.ensure_browser(caller)
        engine = self.service.engine
        if (engine is not None or self.service.engine_starting) and url != "about:blank":
            # It may still be imported or starting beside the API (Service.start).
            engine = await self.service.engine_ready()
        # A URL is opened blank, then navigated by the engine: a URL that cannot load (no
        # server, bad host) is an error the caller sees (and the CLI exits non-zero on),
        # and an HTTP error page is a success that carries its status, as with /navigate.
        navigate = url != "about:blank" and engine is not None
        tab = await self._open_within_limit("about:blank" if navigate else url, caller)
        if not navigate or engine is None:
            return tab
        from browserdeck.engine.network import Scope
        from browserdeck.engine.options import NavigateOptions

        # As the caller's: the new tab obeys its routes and the profile's origin rules
        # before it loads anything.
        scope = Scope(self.name, caller.key if caller is not None else None)
        try:
            result = await engine.run(
                cdp_url, tab.target_id, self.headers, NavigateOptions(url=url), scope=scope
            )
        except BrowserdeckError as exc:
            with contextlib.suppress(BrowserdeckError):
                await self.close_tab(tab.target_id, caller)
            exc.message = f"could not open {url}: {exc.message} (the tab was closed)"
            raise
        return Tab(tab.target_id, result.title or "", result.url or url, status=result.status)

    async def _open_within_limit(self, url: str, caller: Caller | None) -> Tab:
        """Open a tab unless maxTabs are open; only live work counts (sessions.py)."""
        limit = self.config.max_tabs
        for reaped in (False, True):
            async with self._open_lock:
                listed = await self.read_tabs(caller=caller)
                if len(listed) < limit:
                    return await self._open_tab_unlocked(url, caller)
            # Outside the lock: ending a session may open a blank tab.
            if reaped or not await self.service.sessions.reap():
                break
        raise self.service.sessions.too_many_tabs(self.name, listed, limit)

    async def _open_tab_unlocked(self, url: str, caller: Caller | None) -> Tab:
        if self.remote is not None:
            lease = await self.remote.lease(caller)
            target_id = await self.remote.open_tab(lease, url)
            self.service.events.tabs_changed.send(profile=self.name)
            tabs = {t.target_id: t for t in await self.remote.tabs(lease)}
            return tabs.get(target_id) or Tab(target_id, "", url)
        try:
            # A window of its own (as Playwright gives each page): a background tab that
            # shares a window is not rendered, so its screenshots wait for a frame that
            # never comes. And background with newWindow: Chromium shows that window
            # inactive, so an agent's tab never jumps over what the user is doing, while
            # it is the active tab of a visible window and renders (docs/gui.md; Focus brings
            # it forward). The user's Chrome gets plain tabs via the relay.
            own_window = self.impl.own_window
            created = await self._cdp_call(
                "Target.createTarget",
                {"url": url, "newWindow": own_window, "background": own_window},
                caller,
            )
            target_id = str(created["targetId"])
        except BrowserdeckError as exc:
            log.info("Target.createTarget failed (%s); falling back to PUT /json/new", exc)
            try:
                created = await endpoint.devtools_json(
                    self.cdp_url,
                    "/json/new?" + urllib.parse.quote(url, safe=""),
                    method="PUT",
                    timeout=10.0,
                    headers=self.headers,
                )
                target_id = str(created["id"])
            except (Unavailable, KeyError, TypeError):
                raise Unavailable(
                    f"could not open a tab in profile {self.name!r}: {exc.message}",
                    hint=self.impl.not_running_hint(),
                ) from None
        # Target.createTarget replies before /json/list shows the target; wait for it so a
        # client that lists right after opening sees its tab.
        tab = await self._wait_listed(target_id, present=True, caller=caller)
        self.service.events.tabs_changed.send(profile=self.name)
        return tab or Tab(target_id, "", url)

    async def focus_tab(self, target: str, caller: Caller | None = None) -> Tab:
        target_id = await self.resolve_target(target, caller)
        await self._cdp_call("Target.activateTarget", {"targetId": target_id}, caller)
        tabs = {t.target_id: t for t in await self.read_tabs(caller=caller)}
        return tabs.get(target_id, Tab(target_id, "", ""))

    async def close_tab(self, target: str, caller: Caller | None = None) -> str:
        target_id = await self.resolve_target(target, caller)
        await self._cdp_call("Target.closeTarget", {"targetId": target_id}, caller)
        # closeTarget answers before the target leaves /json/list; return once it has, so
        # "close, then list" never shows the closed tab.
        await self._wait_listed(target_id, present=False, caller=caller)
        self.service.sessions.tab_closed(self.name, target_id)
        self.service.events.tabs_changed.send(profile=self.name)
        return target_id

    async def _wait_listed(
        self, target_id: str, *, present: bool, within: float = 5.0, caller: Caller | None = None
    ) -> Tab | None:
        deadline = time.monotonic() + within
        while True:
            tabs = {t.target_id: t for t in await self.read_tabs(caller=caller)}
            if (target_id in tabs) == present:
                return tabs.get(target_id)
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.02)
