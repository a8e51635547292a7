"""One profile: its browser (launched, relayed or remote, through its driver) and its tabs.

``ProfileContext`` is everything one profile can do, independent of its driver: every
driver ends in a CDP URL, so tabs are listed with ``/json/list`` and opened, focused and
closed with ``Target.*`` over one browser-level CDP connection (a driver that differs,
such as a browser service's, overrides that). It is the ``ProfileHost`` its driver is
given, and it asks of the service only what ``drivers.host.ServiceHost`` declares
(``service.Service`` owns the contexts and is that host).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from browserdeck import drivers, states
from browserdeck.config import Config, ProfileConfig
from browserdeck.errors import (
    OPEN_TAB,
    BrowserdeckError,
    Disabled,
    Hint,
    NotFound,
    Unavailable,
)
from browserdeck.policy import urls
from browserdeck.tabs import QUIET_CLIENTS, Tab, TabHistory, attachable, match
from browserdeck.util import paths

if TYPE_CHECKING:
    from browserdeck.door.call import Caller
    from browserdeck.drivers.base import ProfileDriver
    from browserdeck.drivers.host import ServiceHost

log = logging.getLogger(__name__)


class ProfileContext:
    """One profile: its browser (launched, relayed or remote) and its tabs."""

    def __init__(self, host: ServiceHost, profile: ProfileConfig) -> None:
        self.host = host
        self.profile = profile
        self.pending: ProfileConfig | None = None  # saved for the next start (reconfig.py)
        self.state = "stopped"  # stopped | starting | running | crashed | error
        self.detail: str | None = None
        # Shared with its driver (drivers/*): start/stop run under ``lock``; ``stopping``
        # marks a stop as ours (not a crash).
        self.lock = asyncio.Lock()
        # Counting tabs and opening one happen under it, so two opens cannot pass maxTabs.
        self._open_lock = asyncio.Lock()
        self.stopping = False
        # Tabs agents opened through the API (not the user in the tray or the CLI): what
        # "Stop all agents" closes.
        self.agent_tabs: set[str] = set()
        self.history = TabHistory()
        self._impl: ProfileDriver | None = None
        # Drivers made for this profile since its last stop: a settings change may switch
        # the driver while the old one still holds a browser, a relay or leases, which its
        # own driver releases at the stop.
        self._drivers: list[ProfileDriver] = []

    # --- identity --------------------------------------------------------
    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def driver(self) -> str:
        return self.profile.driver

    @property
    def impl(self) -> ProfileDriver:
        """The profile's driver (drivers/): made anew when the settings change its class."""
        cls = drivers.driver_for(self.profile)
        if type(self._impl) is not cls:
            self._impl = cls(self)
            self._drivers.append(self._impl)
        assert self._impl is not None
        return self._impl

    @property
    def config(self) -> Config:
        return self.host.config

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
        await self.host.tokens_read()  # the relay and a managed browser's endpoint check them
        async with self.lock:
            await self.impl.start(caller)
        return await self.status()

    async def stop(self, caller: Caller | None = None) -> dict[str, Any]:
        if await self.impl.release_own(caller):
            return await self.status()
        async with self.lock:
            await self.stop_locked()
        return await self.status()

    async def stop_locked(self) -> None:
        self.stopping = True
        await self.drop_connections()
        # The driver that started the browser stops it, also when the settings have
        # switched the profile to another driver since.
        current = self.impl
        for driver in list(self._drivers):
            await driver.stop()
        self._drivers = [current]
        self.set_state("stopped", None)

    def refuse_if_not_running(self) -> None:
        """For a watcher (the panel): an error instead of starting a stopped managed browser."""
        if not self.impl.must_be_started():
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
        for driver in list(self._drivers):
            await driver.drop()
        engine = self.host.engine
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.drop(self.cdp_url)

    def set_state(self, state: str, detail: str | None) -> None:
        changed = (state, detail) != (self.state, self.detail)
        self.state, self.detail = state, detail
        if self.pending is not None and state in ("stopped", "crashed", "error"):
            self.profile, self.pending = self.pending, None  # the browser went: take them now
        if changed:
            self.host.events.profile_state.send(profile=self.name, state=state, detail=detail)

    # --- tabs --------------------------------------------------------------
    async def read_tabs(self, wait: float = 5.0, caller: Caller | None = None) -> list[Tab]:
        return await self.impl.read_tabs(wait, caller)

    async def list_tabs(self, caller: Caller | None = None) -> list[Tab]:
        await self.ensure_browser(caller)
        return await self.read_tabs(caller=caller)

    # --- the default tab ----------------------------------------------------
    def note_used(self, client: str | None, target_id: str) -> None:
        """``client`` acted on ``target_id``: it becomes that client's (and the profile's) latest."""
        if client in QUIET_CLIENTS:  # the panel watching is not a use
            return
        self.history.used(client, target_id)
        self.host.events.agent_tab.send(profile=self.name, target_id=target_id, client=client)

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
        why = self.impl.gone_note(caller)
        return match(tabs, target, where=f"in profile {self.name!r}", why=why).target_id

    async def open_tab(self, url: str = "about:blank", caller: Caller | None = None) -> Tab:
        url = urls.prepare(url, allow_file_urls=self.config.allow_file_urls, empty="about:blank")
        # (For a browser service: the engine's name for the caller's own browser.)
        cdp_url = await self.ensure_browser(caller)
        engine = self.host.engine
        if (engine is not None or self.host.engine_starting) and url != "about:blank":
            # It may still be imported or starting beside the API (Service.start).
            engine = await self.host.engine_ready()
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
                    tab = await self.impl.open_tab(url, caller)
                    self.host.events.tabs_changed.send(profile=self.name)
                    return tab
            # Outside the lock: ending a session may open a blank tab.
            if reaped or not await self.host.sessions.reap():
                break
        raise self.host.sessions.too_many_tabs(self.name, listed, limit)

    async def focus_tab(self, target: str, caller: Caller | None = None) -> Tab:
        target_id = await self.resolve_target(target, caller)
        await self.impl.cdp_call("Target.activateTarget", {"targetId": target_id}, caller)
        tabs = {t.target_id: t for t in await self.read_tabs(caller=caller)}
        return tabs.get(target_id, Tab(target_id, "", ""))

    async def close_tab(self, target: str, caller: Caller | None = None) -> str:
        target_id = await self.resolve_target(target, caller)
        await self.impl.cdp_call("Target.closeTarget", {"targetId": target_id}, caller)
        # closeTarget answers before the target leaves /json/list; return once it has, so
        # "close, then list" never shows the closed tab.
        await self.impl.wait_listed(target_id, present=False, caller=caller)
        self.host.sessions.tab_closed(self.name, target_id)
        self.host.events.tabs_changed.send(profile=self.name)
        return target_id
