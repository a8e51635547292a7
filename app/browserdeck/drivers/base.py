"""The interface every profile driver implements (one instance per ``ProfileContext``).

The core is small: ``start``/``stop`` (called under the profile's lock), ``ensure``
(a usable browser for a request), ``status``, ``peek_tabs`` and the CDP endpoint
(``cdp_url``, ``headers``, ``cdp_port``). The rest are hooks with a default that
fits a plain CDP endpoint; a driver overrides only what differs.

A driver keeps its running parts on the ``ProfileContext`` (``ctx.chrome``,
``ctx.relay``, ``ctx.remote``), where the API, the engine and the tests look for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from browserdeck.errors import START, START_OF, STOP_OF, BrowserdeckError, Conflict, Hint

if TYPE_CHECKING:
    from browserdeck.chrome.xfocus import WindowOwner
    from browserdeck.door.call import Caller
    from browserdeck.driverspecs import DriverSpec
    from browserdeck.profiles import ProfileContext
    from browserdeck.tabs import Tab


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

    def __init__(self, ctx: ProfileContext) -> None:
        self.ctx = ctx

    @property
    def spec(self) -> DriverSpec:
        from browserdeck.driverspecs import spec_of

        return spec_of(self.name)

    # --- lifecycle (start/stop run under the profile's lock) ------------------
    async def start(self, caller: Caller | None = None) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        """Release what ``start`` made (connections are already dropped)."""

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

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        """The tabs if the browser answers right now; never starts anything."""
        try:
            return await self.ctx.read_tabs(wait=1.5, caller=caller)
        except BrowserdeckError:
            return None

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

    def own_data_dir(self) -> Path | None:
        """Browser data browserdeck made for this profile and removes with it (or None)."""
        return None

    def leftover_check(self) -> None:
        """At service start: clean what an earlier run left behind (managed: an orphan)."""

    def start_with_service(self) -> bool:
        """Whether the service starts it now, before any request (the extension's relay)."""
        return False
