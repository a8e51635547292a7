"""The interface every profile driver implements (one instance per ``ProfileContext``).

The core is small: ``start``/``stop`` (called under the profile's lock), ``ensure``
(a usable browser for a request), ``status``, ``peek_tabs`` and the CDP endpoint
(``cdp_url``, ``headers``, ``cdp_port``). The rest are hooks with a default that
fits a plain CDP endpoint (tabs from ``/json/list``, ``Target.*`` over one
browser-level connection); a driver overrides only what differs. The rest of
browserdeck asks a driver what it can do (these methods and class attributes), never
which driver it is.

A driver keeps its running parts itself (the managed browser's process, the relay,
a browser service's leases); it reaches its profile and the service only through
``host.ProfileHost``.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from browserdeck.chrome import endpoint
from browserdeck.errors import (
    START,
    START_OF,
    STOP_OF,
    BrowserdeckError,
    Conflict,
    Hint,
    Unavailable,
)
from browserdeck.tabs import Tab

if TYPE_CHECKING:
    from browserdeck.chrome.cdp import CDPClient
    from browserdeck.chrome.xfocus import WindowOwner
    from browserdeck.config import ProfileConfig
    from browserdeck.door.call import Caller
    from browserdeck.drivers.host import ProfileHost
    from browserdeck.driverspecs import DriverSpec

log = logging.getLogger(__name__)


class ProfileDriver:
    """How one profile reaches its browser."""

    name: ClassVar[str]
    # A window of its own per new tab (see ProfileContext.open_tab); the user's Chrome
    # gets plain tabs.
    own_window: ClassVar[bool] = True
    # Chrome's /json/list HTML-escapes titles ("A &amp; B"); a relay's list does not.
    escaped_titles: ClassVar[bool] = True
    # ``peek_tabs`` lists every tab of the browser (a relay lists only those the user
    # shared, so its last one is not the browser's last).
    lists_every_tab: ClassVar[bool] = True
    # A service token for it is kept in the secret store (``store-token``).
    takes_token: ClassVar[bool] = False

    def __init__(self, ctx: ProfileHost) -> None:
        self.ctx = ctx
        self._cdp: CDPClient | None = None
        self._cdp_lock = asyncio.Lock()

    @classmethod
    def variant_for(cls, profile: ProfileConfig) -> type[ProfileDriver]:
        """The class that drives ``profile``: this one, or a variant its settings call for
        (a remote profile on a browser service's ws:// endpoint)."""
        return cls

    @property
    def spec(self) -> DriverSpec:
        from browserdeck.driverspecs import spec_of

        return spec_of(self.name)

    # --- lifecycle (start/stop run under the profile's lock) ------------------
    async def start(self, caller: Caller | None = None) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        """Release what ``start`` made (connections are already dropped)."""

    async def release_own(self, caller: Caller | None) -> bool:
        """Stop asked by ``caller``: end only what is the caller's own, if the driver keeps
        such apart (a pooled service's browser of one session); False: stop it all."""
        return False

    async def drop(self) -> None:
        """Close the connections the driver holds to its browser (never the browser)."""
        if self._cdp is not None:
            client, self._cdp = self._cdp, None
            await client.close()

    async def ensure(self, caller: Caller | None = None) -> str:
        """A usable browser for a request: the CDP URL to use (a lease key for a service)."""
        if self.ctx.state != "running":
            await self.ctx.start(caller)
        return self.ctx.cdp_url

    # --- the CDP endpoint ------------------------------------------------------
    def cdp_url(self) -> str:
        return self.ctx.config.cdp_url_of(self.ctx.profile)

    def headers(self) -> dict[str, str]:
        """What a CDP client must send to the endpoint (none by default)."""
        return {}

    def cdp_port(self) -> int | None:
        """The local port of the endpoint, for status (None: not local)."""
        return None

    def window_owner(self) -> WindowOwner | None:
        """Whose windows on this screen an agent's input may activate (None: no window
        here, e.g. a remote or headless browser); see chrome/xfocus.py."""
        return None

    # --- status and tabs -----------------------------------------------------
    async def status(self, out: dict[str, Any]) -> bool | None:
        """Add the driver's own fields to ``out``; return whether the browser answers,
        or None to let the profile probe its tabs."""
        return None

    def must_be_started(self) -> bool:
        """Whether only a start (not a look) brings its browser back: a watcher (the
        panel) is then refused rather than starting it."""
        return False

    def launched(self) -> object | None:
        """The browser browserdeck launched for this profile, as an identity (a restart
        makes a new one); None when it launched none."""
        return None

    def gone_note(self, caller: Caller | None = None) -> str | None:
        """Why tab ids from before may name nothing now (the browser was restarted)."""
        return None

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        """The tabs if the browser answers right now; never starts anything."""
        try:
            return await self.read_tabs(wait=1.5, caller=caller)
        except BrowserdeckError:
            return None

    async def read_tabs(self, wait: float = 5.0, caller: Caller | None = None) -> list[Tab]:
        """The browser's page tabs (``/json/list``); an error if it does not answer."""
        ctx = self.ctx
        try:
            targets = await endpoint.devtools_json(
                ctx.cdp_url, "/json/list", timeout=wait, headers=ctx.headers
            )
        except Unavailable as exc:
            raise Unavailable(
                f"profile {ctx.name!r}: the browser at {ctx.cdp_url} does not answer "
                f"({exc.message})",
                hint=self.not_running_hint(),
                code="browser_unreachable",
            ) from None
        unescape = html.unescape if self.escaped_titles else str
        return [
            Tab(t["id"], unescape(t.get("title", "")), t.get("url", ""), t.get("type", "page"))
            for t in targets
            if t.get("type") == "page"
        ]

    async def cdp_call(
        self, method: str, params: dict[str, Any], caller: Caller | None = None
    ) -> dict[str, Any]:
        """A browser-level CDP command (``Target.*``)."""
        client = await self._browser_cdp()
        try:
            return await client.send(method, params)
        except Unavailable:
            # The browser-level socket dropped (browser restarted): reconnect once.
            self._cdp = None
            client = await self._browser_cdp()
            return await client.send(method, params)

    async def _browser_cdp(self) -> CDPClient:
        from browserdeck.chrome.cdp import CDPClient

        async with self._cdp_lock:
            if self._cdp is None or self._cdp.closed:
                ws_url = await self._browser_ws_url()
                self._cdp = await CDPClient.connect(ws_url, headers=self.ctx.headers)
            return self._cdp

    async def _browser_ws_url(self) -> str:
        ctx = self.ctx
        try:
            version = await endpoint.devtools_json(
                ctx.cdp_url, "/json/version", timeout=5.0, headers=ctx.headers
            )
            return endpoint.normalize_ws_url(str(version["webSocketDebuggerUrl"]), ctx.cdp_url)
        except (Unavailable, KeyError, TypeError) as exc:
            why = exc.message if isinstance(exc, Unavailable) else "no webSocketDebuggerUrl"
            raise Unavailable(
                f"profile {ctx.name!r}: cannot read {ctx.cdp_url}/json/version ({why})",
                hint=self.not_running_hint(),
                code="browser_unreachable",
            ) from None

    async def open_tab(self, url: str, caller: Caller | None = None) -> Tab:
        """A new tab on ``url``, listed by the time it is returned."""
        ctx = self.ctx
        try:
            # A window of its own (as Playwright gives each page): a background tab that
            # shares a window is not rendered, so its screenshots wait for a frame that
            # never comes. And background with newWindow: Chromium shows that window
            # inactive, so an agent's tab never jumps over what the user is doing, while
            # it is the active tab of a visible window and renders (docs/gui.md; Focus brings
            # it forward). The user's Chrome gets plain tabs via the relay.
            own_window = self.own_window
            created = await self.cdp_call(
                "Target.createTarget",
                {"url": url, "newWindow": own_window, "background": own_window},
                caller,
            )
            target_id = str(created["targetId"])
        except BrowserdeckError as exc:
            log.info("Target.createTarget failed (%s); falling back to PUT /json/new", exc)
            try:
                created = await endpoint.devtools_json(
                    ctx.cdp_url,
                    "/json/new?" + urllib.parse.quote(url, safe=""),
                    method="PUT",
                    timeout=10.0,
                    headers=ctx.headers,
                )
                target_id = str(created["id"])
            except (Unavailable, KeyError, TypeError):
                raise Unavailable(
                    f"could not open a tab in profile {ctx.name!r}: {exc.message}",
                    hint=self.not_running_hint(),
                ) from None
        # Target.createTarget replies before /json/list shows the target; wait for it so a
        # client that lists right after opening sees its tab.
        tab = await self.wait_listed(target_id, present=True, caller=caller)
        return tab or Tab(target_id, "", url)

    async def wait_listed(
        self, target_id: str, *, present: bool, within: float = 5.0, caller: Caller | None = None
    ) -> Tab | None:
        """Until ``target_id`` is listed (or no longer is); its tab, or None on time out."""
        deadline = time.monotonic() + within
        while True:
            tabs = {t.target_id: t for t in await self.read_tabs(caller=caller)}
            if (target_id in tabs) == present:
                return tabs.get(target_id)
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.02)

    async def why_gone(self, caller: Caller | None = None) -> str | None:
        """Why the whole browser went away mid-call, when the driver can tell; "" when it
        can tell the browser is fine; None to let the profile check whether it answers."""
        return None

    def not_running_hint(self) -> str | Hint:
        return "check that the remote browser is up and reachable"

    def restart_hint(self) -> Hint:
        """How to bring the browser back after it went (``why_gone``)."""
        return Hint("start it again ({start})", start=START)

    # --- occasional operations -------------------------------------------------
    async def reset(self) -> dict[str, Any]:
        # A well-formed request the profile's kind does not allow: a conflict, not bad input.
        raise Conflict(
            f"reset-profile is for managed profiles; {self.ctx.name!r} is {self.name}",
            code="not_managed",
            hint=Hint(
                "for an extension profile restart the relay ({stop}, then {start})",
                stop=STOP_OF.of(profile=self.ctx.name),
                start=START_OF.of(profile=self.ctx.name),
            ),
        )

    async def stop_agents(self, spare: set[str]) -> tuple[int, int]:
        """Stop all agents, after their sessions ended (sessions.py): close the tabs agents
        without a session opened, except ``spare`` (kept by the user), and unshare what
        agents may still reach; (closed, unshared) tabs."""
        return 0, 0

    def agents_hold(self) -> bool:
        """Whether agents hold something of the driver's own that "Stop all agents" ends
        (tabs the user shared with them, browsers leased to their sessions)."""
        return False

    def per_session(self) -> bool:
        """Whether each agent session has a browser of its own, whose tabs go with it."""
        return False

    def holds_session(self, session: str) -> bool:
        """Whether a browser of the driver's is held for agent session ``session``."""
        return False

    async def release_session(self, session: str) -> bool:
        """Give back what the driver holds for agent session ``session``; whether it held any."""
        return False

    def own_data_dir(self) -> Path | None:
        """Browser data browserdeck made for this profile and removes with it (or None)."""
        return None

    def leftover_check(self) -> None:
        """At service start: clean what an earlier run left behind (managed: an orphan)."""

    def start_with_service(self) -> bool:
        """Whether the service starts it now, before any request (the extension's relay)."""
        return False
