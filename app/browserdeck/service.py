"""The orchestrator and one ProfileContext per profile.

``Service`` owns every long-lived part (engine, relays, managed browsers, the
control API) and starts them in order and stops them in reverse order, on one
shutdown path, whichever front-end runs it (``browserdeck serve``, the tray,
the in-process MCP fallback, tests).

``ProfileContext`` is everything one profile can do, independent of its driver:
every driver ends in a CDP URL, so tabs are listed with ``/json/list`` and opened,
focused and closed with ``Target.*`` over one browser-level CDP connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import os
import shutil
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from browserdeck import (
    __version__,
    aio,
    artifacts,
    config,
    drivers,
    logsetup,
    paths,
    remote,
    secrets,
    states,
    urls,
)
from browserdeck.chrome import endpoint, launcher
from browserdeck.chrome.cdp import CDPClient
from browserdeck.config import Config, ProfileConfig
from browserdeck.errors import (
    BrowserdeckError,
    Conflict,
    Disabled,
    InvalidInput,
    NotFound,
    Unavailable,
)
from browserdeck.events import ServiceEvents
from browserdeck.files import write_atomic
from browserdeck.tabs import Tab

if TYPE_CHECKING:
    from browserdeck.drivers.base import ProfileDriver

if TYPE_CHECKING:
    from browserdeck.engine import Engine
    from browserdeck.relay.server import RelayServer

log = logging.getLogger(__name__)

# The built-in front-ends' X-Browserdeck-Client labels name a tool, not a caller: their
# calls count as unnamed ones (one shared history per profile), as do calls with none.
TOOL_CLIENTS = frozenset({"browserdeck-cli", "browserdeck-mcp", "browserdeck-gui", ""})
# The panel's own calls (its live screenshots) are not an agent acting.
QUIET_CLIENTS = frozenset({"browserdeck-gui"})
RECENT_TABS_MAX = 50
# Pages the engine cannot (or must not) drive: DevTools and extensions' own pages.
_UNATTACHABLE = ("devtools://", "chrome-extension://", "chrome-untrusted://")


def _url_drivers() -> str:
    return ", ".join(n for n, s in drivers.SPECS.items() if s.needs_url)


def client_key(client: str | None) -> str:
    name = (client or "").strip()
    return "" if name in TOOL_CLIENTS else name[:200]


def attachable(tab: Tab) -> bool:
    return tab.type == "page" and not tab.url.startswith(_UNATTACHABLE)


class ProfileContext:
    """One profile: its browser (launched, relayed or remote) and its tabs."""

    def __init__(self, service: Service, profile: ProfileConfig) -> None:
        self.service = service
        self.profile = profile
        self.chrome: launcher.ChromeProcess | None = None
        self.relay: RelayServer | None = None
        self.state = "stopped"  # stopped | starting | running | crashed | error
        self.detail: str | None = None
        self._lock = asyncio.Lock()
        self._cdp: CDPClient | None = None
        self._cdp_lock = asyncio.Lock()
        # Counting tabs and opening one happen under it, so two opens cannot pass maxTabs.
        self._open_lock = asyncio.Lock()
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False
        self.restart_note: str | None = None
        # Tabs agents opened through the API (not the user in the tray or the CLI): what
        # "Stop all agents" closes.
        self.agent_tabs: set[str] = set()
        # The default tab (docs/api.md "Which tab"): per client, the tab it last used and
        # the one it last opened; and the profile's tabs by last use through browserdeck.
        self._used: dict[str, str] = {}
        self._opened: dict[str, str] = {}
        self._recent: list[str] = []
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

    def headless(self) -> tuple[bool, str | None]:
        """Whether a managed browser runs headless, and why when it is forced."""
        if self.service.force_headless:
            return True, "forced by --headless"
        if not launcher.has_display():
            return True, "no display: DISPLAY and WAYLAND_DISPLAY are unset"
        return self.config.is_headless(self.profile), None

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
        out["stateText"] = states.label(out)
        return out

    async def peek_tabs(self) -> list[Tab] | None:
        """The tabs if the browser answers right now; never starts anything (for status views)."""
        return await self.impl.peek_tabs()

    # --- lifecycle -------------------------------------------------------
    async def start(self) -> dict[str, Any]:
        self._ensure_enabled()
        async with self._lock:
            driver = self.impl
            self._started_by = driver
            await driver.start()
        return await self.status()

    async def stop(self) -> dict[str, Any]:
        service = self.remote
        if service is not None and service.pooled and remote.CURRENT_AGENT.get() is not None:
            # A pooled session stopping releases its own browser, not the others'.
            await service.release(remote.CURRENT_AGENT.get()[0])  # type: ignore[index]
            return await self.status()
        async with self._lock:
            await self._stop_locked()
        return await self.status()

    async def _stop_locked(self) -> None:
        self._stopping = True
        self.restart_note = None
        await self._drop_connections()
        # The driver that started the browser stops it, also when the settings have
        # switched the profile to another driver since.
        for driver in dict.fromkeys(d for d in (self._started_by, self.impl) if d is not None):
            await driver.stop()
        self._started_by = None
        self._set_state("stopped", None)

    def refuse_if_not_running(self) -> None:
        """For a watcher (the panel): an error instead of starting a stopped managed browser."""
        if not self.impl.spec.launches or (self.chrome is not None and self.chrome.alive()):
            return
        word = "crashed" if self.state == "crashed" else "not running"
        raise Unavailable(
            f"profile {self.name!r}: the browser is {word}"
            + (f" ({self.detail})" if self.detail else ""),
            hint="start it from the tray menu or the panel; an agent's next request also "
            "starts it",
            code="browser_stopped",
        )

    async def ensure_browser(self) -> str:
        """The CDP URL of a usable browser; starts a managed one on demand."""
        self._ensure_enabled()
        return await self.impl.ensure()

    async def reset(self) -> dict[str, Any]:
        """Kill whatever holds this profile's CDP port (an orphaned browser), then report."""
        return await self.impl.reset()

    async def why_gone(self) -> str | None:
        """After a call lost its tab or connection: whether the whole browser went, and why.

        The engine only sees a closed page; this says it was a stop, a crash or a dropped
        extension, so the agent knows its tabs and refs are gone, not just one tab.
        """
        if self._stopping or self.state == "stopped":
            return f"profile {self.name!r}: its browser was stopped while this was running"
        said = await self.impl.why_gone()
        if said is not None:
            return said or None
        if await self.peek_tabs() is not None:
            return None  # the browser answers: it really was just the tab
        why = f" ({self.detail})" if self.state == "crashed" and self.detail else ""
        return (
            f"profile {self.name!r}: the browser went away while this was running; it "
            f"crashed or was killed{why}"
        )

    async def _drop_connections(self) -> None:
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

    def _set_state(self, state: str, detail: str | None) -> None:
        changed = (state, detail) != (self.state, self.detail)
        self.state, self.detail = state, detail
        if changed:
            self.service.events.profile_state.send(profile=self.name, state=state, detail=detail)

    # --- tabs --------------------------------------------------------------
    async def _list_tabs_raw(self, wait: float = 5.0) -> list[Tab]:
        if self.remote is not None:
            return await self.remote.tabs(await self.remote.lease())
        try:
            targets = await endpoint.devtools_json(
                self.cdp_url, "/json/list", timeout=wait, headers=self.headers
            )
        except Unavailable as exc:
            raise Unavailable(
                f"profile {self.name!r}: the browser at {self.cdp_url} does not answer "
                f"({exc.message})",
                hint=self._not_running_hint(),
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

    def _not_running_hint(self) -> str:
        return self.impl.not_running_hint()

    async def list_tabs(self) -> list[Tab]:
        await self.ensure_browser()
        return await self._list_tabs_raw()

    # --- the default tab ----------------------------------------------------
    def note_used(self, client: str | None, target_id: str) -> None:
        """``client`` acted on ``target_id``: it becomes that client's (and the profile's) latest."""
        if client in QUIET_CLIENTS:  # the panel watching is not a use
            return
        key = client_key(client)
        self._used[key] = target_id
        if target_id in self._recent:
            self._recent.remove(target_id)
        self._recent.append(target_id)
        del self._recent[:-RECENT_TABS_MAX]
        self.service.events.agent_tab.send(profile=self.name, target_id=target_id, client=client)

    def note_opened(self, client: str | None, target_id: str) -> None:
        self._opened[client_key(client)] = target_id
        self.note_used(client, target_id)

    def default_target(self, tabs: list[Tab], client: str | None) -> str:
        """The tab a call that names none acts on (never one the engine cannot attach to)."""
        usable = [t for t in tabs if attachable(t)]
        if not usable:
            raise NotFound(
                f"profile {self.name!r} has no tab an agent can use "
                f"({len(tabs)} open, all browser-internal pages)",
                hint="open one with POST /tabs/open or `browserdeck open URL`",
                code="no_tabs",
            )
        ids = {t.target_id for t in usable}
        key = client_key(client)
        for candidate in (self._used.get(key), self._opened.get(key), *reversed(self._recent)):
            if candidate in ids:
                return candidate
        # Nothing used through browserdeck yet: Chrome lists tabs by last activity, so its
        # first is the profile's most recently used one. The call then records it, so the
        # choice stays put however Chrome reorders its list.
        return usable[0].target_id

    async def resolve_target(self, target: str | None, client: str | None = None) -> str:
        """A full targetId from an id, a unique prefix, or None (the default tab)."""
        tabs = await self.list_tabs()
        if not tabs:
            raise NotFound(
                f"profile {self.name!r} has no open tabs",
                hint="open one with POST /tabs/open or `browserdeck open URL`",
                code="no_tabs",
            )
        if not target:
            return self.default_target(tabs, client)
        exact = [t for t in tabs if t.target_id == target]
        if exact:
            return exact[0].target_id
        matches = [t for t in tabs if t.target_id.lower().startswith(target.lower())]
        if len(matches) == 1:
            return matches[0].target_id
        if not matches:
            lease = self.remote.current() if self.remote is not None else None
            why = (lease.note if lease else None) or self.restart_note or "it may have been closed"
            raise NotFound(
                f"no tab {target!r} in profile {self.name!r} ({why})",
                hint="list tabs with GET /tabs and use a targetId from there",
                code="tab_not_found",
            )
        raise Conflict(
            f"tab prefix {target!r} is ambiguous: it matches {len(matches)} tabs "
            f"({', '.join(t.target_id[:12] for t in matches)})",
            hint="use more characters of the targetId",
            code="ambiguous_tab",
        )

    async def _browser_cdp(self) -> CDPClient:
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
                hint=self._not_running_hint(),
                code="browser_unreachable",
            ) from None

    async def _cdp_call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.remote is not None:
            reply: dict[str, Any] = await self.remote.send(await self.remote.lease(), method, params)
            return reply
        client = await self._browser_cdp()
        try:
            return await client.send(method, params)
        except Unavailable:
            # The browser-level socket dropped (browser restarted): reconnect once.
            self._cdp = None
            client = await self._browser_cdp()
            return await client.send(method, params)

    async def open_tab(self, url: str = "about:blank") -> Tab:
        url = urls.prepare(url, allow_file_urls=self.config.allow_file_urls, empty="about:blank")
        # (For a browser service: the engine's name for the caller's own browser.)
        cdp_url = await self.ensure_browser()
        engine = self.service.engine
        # A URL is opened blank, then navigated by the engine: a URL that cannot load (no
        # server, bad host) is an error the caller sees (and the CLI exits non-zero on),
        # and an HTTP error page is a success that carries its status, as with /navigate.
        navigate = url != "about:blank" and engine is not None
        async with self._open_lock:
            open_now = len(await self._list_tabs_raw())
            limit = self.config.max_tabs
            if open_now >= limit:
                raise Conflict(
                    f"profile {self.name!r} already has {open_now} tabs open; the limit is "
                    f"{limit} (maxTabs)",
                    hint="close tabs you no longer need (DELETE /tabs/{targetId}, browser_tabs "
                    "action=close), or raise maxTabs in Settings",
                    code="too_many_tabs",
                )
            tab = await self._open_tab_unlocked("about:blank" if navigate else url)
        if not navigate or engine is None:
            return tab
        from browserdeck.engine.options import NavigateOptions

        try:
            result = await engine.navigate(
                cdp_url, tab.target_id, self.headers, NavigateOptions(url=url)
            )
        except BrowserdeckError as exc:
            with contextlib.suppress(BrowserdeckError):
                await self.close_tab(tab.target_id)
            exc.message = f"could not open {url}: {exc.message} (the tab was closed)"
            raise
        return Tab(
            tab.target_id,
            str(result.get("title") or ""),
            str(result.get("url") or url),
            status=result.get("status"),
        )

    async def _open_tab_unlocked(self, url: str) -> Tab:
        if self.remote is not None:
            lease = await self.remote.lease()
            target_id = await self.remote.open_tab(lease, url)
            self.service.events.tabs_changed.send(profile=self.name)
            tabs = {t.target_id: t for t in await self.remote.tabs(lease)}
            return tabs.get(target_id) or Tab(target_id, "", url)
        try:
            # A window of its own (as Playwright gives each page): a background tab that
            # shares a window is not rendered, so its screenshots wait for a frame that
            # never comes. And background with newWindow: Chromium shows that window
            # inactive, so an agent's tab never jumps over what the user is doing, while
            # it is the active tab of a visible window and renders (issue 15; Focus brings
            # it forward). The user's Chrome gets plain tabs via the relay.
            own_window = self.impl.own_window
            created = await self._cdp_call(
                "Target.createTarget",
                {"url": url, "newWindow": own_window, "background": own_window},
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
                    hint=self._not_running_hint(),
                ) from None
        # Target.createTarget replies before /json/list shows the target; wait for it so a
        # client that lists right after opening sees its tab.
        tab = await self._wait_listed(target_id, present=True)
        self.service.events.tabs_changed.send(profile=self.name)
        return tab or Tab(target_id, "", url)

    async def focus_tab(self, target: str) -> Tab:
        target_id = await self.resolve_target(target)
        await self._cdp_call("Target.activateTarget", {"targetId": target_id})
        tabs = {t.target_id: t for t in await self._list_tabs_raw()}
        return tabs.get(target_id, Tab(target_id, "", ""))

    async def close_tab(self, target: str) -> str:
        target_id = await self.resolve_target(target)
        await self._cdp_call("Target.closeTarget", {"targetId": target_id})
        # closeTarget answers before the target leaves /json/list; return once it has, so
        # "close, then list" never shows the closed tab.
        await self._wait_listed(target_id, present=False)
        self.service.events.tabs_changed.send(profile=self.name)
        return target_id

    async def _wait_listed(
        self, target_id: str, *, present: bool, within: float = 5.0
    ) -> Tab | None:
        deadline = time.monotonic() + within
        while True:
            tabs = {t.target_id: t for t in await self._list_tabs_raw()}
            if (target_id in tabs) == present:
                return tabs.get(target_id)
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.02)


class FrontEnd(Protocol):
    """A way in that the service starts after its engine and stops first: the control API.

    The composition root (``browserdeck.master``) hands the service a factory for one, so
    the service never imports the API (nor the MCP server mounted on it).
    """

    port: int

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


# Ends the agent sessions a way in holds (MCP) and releases their tab claims: how many
# sessions ended, and per profile the target ids of the tabs agents held.
AgentReleaser = Callable[[], Awaitable[tuple[int, dict[str, set[str]]]]]


class Service:
    """Owns config, engine, relays, managed browsers and the control API; one shutdown path."""

    def __init__(
        self,
        *,
        force_headless: bool = False,
        control_port: int | None = None,
        front_end: Callable[[Service, int], FrontEnd] | None = None,
        run_relays: bool = True,
        config_path: Path | None = None,
        prelaunch: bool = False,
    ) -> None:
        self.events = ServiceEvents()
        # Launch the default managed profile's browser at start, beside the Playwright
        # driver: a service started for an MCP client will be asked for a page at once.
        self._prelaunch = prelaunch
        self.force_headless = force_headless
        self._control_port_override = control_port
        # The control API, built by the composition root; None: no API socket (the
        # in-process MCP fallback).
        self._front_end = front_end
        # Registered by the composition root; run by stop_all_agents().
        self.agent_releasers: list[AgentReleaser] = []
        # The in-process MCP fallback runs without relays (and without starting the default
        # profile): it must not hold the relay port the tray or `serve` will want.
        self._run_relays = run_relays
        self._config_path = config_path
        self.config: Config = config.default_config()
        self.config_problem: str | None = None
        # The config file as this service last read or wrote it, so a save never
        # overwrites an edit made meanwhile by hand or by another program.
        self._config_on_disk: bytes | None = None
        self.contexts: dict[str, ProfileContext] = {}
        self.engine: Engine | None = None
        self.api: FrontEnd | None = None
        self.api_token = ""
        self.relay_token = ""
        self.started = False
        self.stopped = asyncio.Event()
        # Background work the service started; stop() cancels what is still running.
        self.tasks = aio.Tasks()

    @property
    def config_path(self) -> Path:
        return self._config_path or paths.config_file()

    @property
    def control_port(self) -> int:
        if self.api is not None:
            return self.api.port
        return self._control_port_override or self.config.control_port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.control_port}"

    # --- lifecycle -------------------------------------------------------------
    async def start(self) -> None:
        """Start everything; on any failure, stop what did start and re-raise."""
        loaded = config.load(self.config_path)
        self.config, self.config_problem = loaded.config, loaded.problem
        self._config_on_disk = self._read_config_bytes()
        self._apply_disk_limits()
        if self.config_problem:
            log.error("%s", self.config_problem)
            self.events.notice.send(
                level="error", title="Config file problem", message=self.config_problem
            )
        self.api_token = secrets.get_token("api") or ""
        self.relay_token = secrets.get_token("relay") or ""
        self.contexts = {name: ProfileContext(self, p) for name, p in self.config.profiles.items()}
        await asyncio.to_thread(self._clean_leftovers)
        # A save killed just before this start left a temp file too young to remove now
        # (another process may be saving): look again once it is old enough.
        self.tasks.spawn(self._clean_temp_files_later(), name="clean-config-temp-files")
        try:
            default = self.contexts.get(self.config.default_profile)
            if self._prelaunch and default is not None and default.impl.spec.launches:
                # Chromium starts while the driver does; a page route waits for it under
                # the profile's lock, and never for what the first page does not need.
                self.tasks.spawn(self._start_quietly(default), name="prelaunch-default-profile")
            from browserdeck.engine import Engine

            self.engine = Engine(
                events=self.events, file_urls_allowed=lambda: self.config.allow_file_urls
            )
            await self.engine.start()
            if self._front_end is not None:
                self.api = self._front_end(self, self.control_port)
                await self.api.start()
                self._write_instance_file()
            if self.config.enabled and self._run_relays:
                await self._start_relays()
                if self.config.start_default_profile:
                    default = self.contexts.get(self.config.default_profile)
                    if default is not None and default.impl.spec.launches:
                        self.tasks.spawn(self._start_quietly(default), name="start-default-profile")
            self.started = True
        except BaseException:
            await self.stop()
            raise

    async def _clean_temp_files_later(self) -> None:
        await asyncio.sleep(config.TEMP_FILE_GRACE + 1.0)
        for tmp in await asyncio.to_thread(config.remove_stale_temp_files, self.config_path):
            log.info("removed %s, left by a save that was interrupted", tmp)

    def _clean_leftovers(self) -> None:
        """What an earlier run killed mid-way left: half-written config temp files, and a
        browser still holding a profile (issue 11 item 6), so ``/start`` works at once."""
        for tmp in config.remove_stale_temp_files(self.config_path):
            log.info("removed %s, left by a save that was interrupted", tmp)
        for ctx in self.contexts.values():
            ctx.impl.leftover_check()

    async def _start_relays(self) -> None:
        for ctx in self.contexts.values():
            if ctx.impl.start_with_service():
                try:
                    await ctx.start()
                except BrowserdeckError as exc:
                    # A busy relay port must not keep the API from coming up: report it.
                    ctx._set_state("error", exc.message)
                    log.error("relay for profile %s: %s", ctx.name, exc)
                    self.events.notice.send(
                        level="error", title=f"{ctx.name}: relay not started", message=str(exc)
                    )

    async def _start_quietly(self, ctx: ProfileContext) -> None:
        try:
            await ctx.start()
        except BrowserdeckError as exc:
            log.error("starting %s: %s", ctx.name, exc)

    async def stop(self) -> None:
        """Stop in reverse order of start; every step runs even if an earlier one fails."""
        try:
            await self.tasks.cancel_all()
            if self.api is not None:
                api, self.api = self.api, None
                try:
                    await api.stop()
                finally:
                    self._remove_instance_file()
            for ctx in list(self.contexts.values()):
                try:
                    await ctx.stop()
                except Exception:
                    log.exception("stopping profile %s", ctx.name)
            if self.engine is not None:
                engine, self.engine = self.engine, None
                try:
                    await engine.stop()
                except Exception:
                    log.exception("stopping the engine")
        finally:
            self.started = False
            self.stopped.set()

    def _read_config_bytes(self) -> bytes | None:
        try:
            return self.config_path.read_bytes()
        except OSError:  # gone: saving recreates it and overwrites nothing
            return None

    # --- instance discovery (CLI, second launch) -------------------------------
    def _write_instance_file(self) -> None:
        data: dict[str, Any] = {"url": self.url, "pid": os.getpid(), "version": __version__}
        socket_path = getattr(self.api, "socket_path", None)
        if socket_path is not None:
            data["socket"] = str(socket_path)
        write_atomic(paths.instance_file(), json.dumps(data))

    def _remove_instance_file(self) -> None:
        path = paths.instance_file()
        with contextlib.suppress(FileNotFoundError, ValueError, OSError):
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
                path.unlink()

    # --- profiles --------------------------------------------------------------
    def profile(self, name: str | None) -> ProfileContext:
        p = self.config.profile(name)  # raises the precise unknown-profile error
        if p.name not in self.contexts:
            self.contexts[p.name] = ProfileContext(self, p)
        return self.contexts[p.name]

    async def list_profiles(self) -> list[dict[str, Any]]:
        statuses = await asyncio.gather(*(c.status() for c in self.contexts.values()))
        for status in statuses:
            status["default"] = status["profile"] == self.config.default_profile
        return sorted(statuses, key=lambda s: str(s["profile"]))

    async def create_profile(
        self,
        name: object,
        *,
        color: str | None = None,
        cdp_url: str | None = None,
        driver: str | None = None,
        headless: bool | None = None,
        token: str | None = None,
        token_param: str | None = None,
        token_header: str | None = None,
        pool: bool | None = None,
        pool_idle_seconds: int | None = None,
    ) -> dict[str, Any]:
        name = config.validate_profile_name(name)
        if name in self.config.profiles:
            raise Conflict(
                f"profile {name!r} already exists",
                hint="pick another name, or delete it first",
                code="profile_exists",
            )
        kind = driver or ("remote" if cdp_url else "managed")
        if kind not in drivers.SPECS:
            raise InvalidInput(
                f"invalid driver {kind!r}: expected {', '.join(drivers.SPECS)}",
                code="invalid_setting",
            )
        raw: dict[str, Any] = {
            "driver": kind,
            "color": config.validate_color(color) if color else config.next_color(self.config),
        }
        if headless is not None:
            raw["headless"] = headless
        if drivers.spec_of(kind).needs_url:
            if not cdp_url:
                raise InvalidInput(
                    f"a {kind} profile needs cdpUrl", hint="e.g. http://10.0.0.42:9222"
                )
            raw["cdpUrl"] = config.validate_cdp_url(cdp_url)
            # A service token in the URL goes to the secret store, not into config.json.
            clean, in_url, param = remote.split_token(raw["cdpUrl"])
            if in_url is not None:
                if token is not None and token != in_url:
                    raise InvalidInput(
                        "two different tokens: one in cdpUrl and one in token",
                        hint="pass the token once",
                    )
                raw["cdpUrl"], token = clean, in_url
                if param != "token" and not token_header:
                    raw["tokenParam"] = param
            for key, value in (
                ("tokenParam", token_param),
                ("tokenHeader", token_header),
                ("pool", pool),
                ("poolIdleSeconds", pool_idle_seconds),
            ):
                if value is not None:
                    raw[key] = value
            if token is not None and not remote.split_token(raw["cdpUrl"])[0].lower().startswith(
                ("ws://", "wss://")
            ):
                raise InvalidInput(
                    "a token is for a browser service's ws:// or wss:// endpoint",
                    hint="use the service's WebSocket URL as cdpUrl (see docs/remote.md)",
                )
        elif cdp_url:
            raise InvalidInput(
                f"cdpUrl is only for {_url_drivers()} profiles, not {kind}",
                hint="omit cdpUrl, or use driver 'remote'",
            )
        else:
            raw["cdpPort"] = config.allocate_cdp_port(self.config)
        profile = config.parse_profile(name, raw, f"profile {name!r}")

        def add(c: Config) -> None:
            c.profiles[name] = profile

        if token is not None:
            remote.store_token(name, token)
        try:
            await self.apply_config(config.updated(self.config, add))
        except BaseException:
            if token is not None:
                secrets.delete_token(remote.secret_kind(name))
            raise
        return await self.contexts[name].status()

    async def delete_profile(self, name: str) -> dict[str, Any]:
        ctx = self.profile(name)
        if name == self.config.default_profile:
            raise Conflict(
                f"profile {name!r} is the default profile",
                hint="make another profile the default first (defaultProfile)",
                code="default_profile",
            )
        await ctx.stop()
        removed: str | None = None
        target = ctx.impl.own_data_dir()
        if target is not None and target.exists():
            await asyncio.to_thread(shutil.rmtree, target)
            removed = str(target)

        def drop(c: Config) -> None:
            del c.profiles[name]

        await self.apply_config(config.updated(self.config, drop))
        secrets.delete_token(remote.secret_kind(name))
        return {"deleted": name, "removedData": removed}

    async def apply_config(self, new: Config) -> None:
        """Save ``new`` atomically, then restart only the profiles whose settings changed."""
        config.check_consistency(new)
        current = self._read_config_bytes()
        if current is not None and current != self._config_on_disk:
            raise Conflict(
                f"{self.config_path} was changed by another program (or by hand) since "
                "browserdeck read it; saving this change would overwrite that edit",
                hint="restart browserdeck to load the edited file (a file that fails to "
                "parse is kept aside and reported), or undo that edit; then try again",
                code="config_changed_on_disk",
            )
        config.save(new, self.config_path)
        self._config_on_disk = self._read_config_bytes()
        old, self.config = self.config, new
        for name in list(self.contexts):
            if name not in new.profiles:
                await self.contexts.pop(name).stop()
        for name, profile in new.profiles.items():
            ctx = self.contexts.get(name)
            if ctx is None:
                self.contexts[name] = ProfileContext(self, profile)
                continue
            before = old.profiles.get(name)
            ctx.profile = profile
            if before is not None and before.to_json() != profile.to_json():
                was_running = ctx.state == "running"
                await ctx.stop()
                if was_running and new.enabled:
                    await self._start_quietly(ctx)
        if not new.enabled:
            for ctx in self.contexts.values():
                await ctx.stop()
        elif (old.relay_port, old.relay_client_mode) != (new.relay_port, new.relay_client_mode):
            for ctx in self.contexts.values():
                if ctx.impl.spec.port == "relay":
                    await ctx.stop()
        if new.enabled and self._run_relays:
            await self._start_relays()
        if self.api is not None and new.control_port != old.control_port:
            self.events.notice.send(
                level="info",
                title="Control port changed",
                message=f"the API moves to port {new.control_port} at the "
                "next start of browserdeck",
            )
        self._apply_disk_limits()
        self.events.config_changed.send()

    async def stop_all_agents(self) -> dict[str, int]:
        """End every agent session, close the tabs agents opened in managed profiles and
        stop sharing every tab of the user's Chrome (the tray's one-click switch).

        Every /mcp session ends (a client's next request is refused as an ended
        session, so a `browserdeck mcp` bridge ends its stdio session too); agents in an
        older stand-alone `browserdeck mcp` process lose their tab claims and those tabs.
        Browsers a pooled remote profile leased to agent sessions go back to the service.
        """
        sessions = 0
        claimed: dict[str, set[str]] = {}
        for release in self.agent_releasers:
            ended, held = await release()
            sessions += ended
            for profile, target_ids in held.items():
                claimed.setdefault(profile, set()).update(target_ids)
        closed = unshared = 0
        for ctx in list(self.contexts.values()):
            n_closed, n_unshared = await ctx.impl.stop_agents(claimed.get(ctx.name, set()))
            closed += n_closed
            unshared += n_unshared
        return {"sessions": sessions, "closedTabs": closed, "unsharedTabs": unshared}

    def _apply_disk_limits(self) -> None:
        artifacts.configure(
            max_mb=self.config.artifacts_max_mb, max_age_days=self.config.artifacts_max_age_days
        )
        logsetup.set_max_mb(self.config.log_max_mb)

    async def update_settings(self, change: Callable[[Config], None]) -> None:
        await self.apply_config(config.updated(self.config, change))
