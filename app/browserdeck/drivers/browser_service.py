"""The browser-service driver: a remote profile whose cdpUrl is a ``ws://``/``wss://``
endpoint (Browserless, Browserbase, Steel, Selenium Grid's ``se:cdp``).

The service starts a browser for each WebSocket connection and ends it when that
connection closes, so this driver holds *leases* (``remote.ServiceLeases``: one browser
per agent session with ``pool``, else one shared) and does everything over them: start
and stop mean connect and release, tabs are listed, opened and closed with ``Target.*``
on the lease's own connection (a second connection would be a second browser), and a
caller's stop on a pooled profile releases only its own browser.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from browserdeck.drivers import leases as remote
from browserdeck.drivers.base import ProfileDriver
from browserdeck.errors import BrowserdeckError

if TYPE_CHECKING:
    from browserdeck.door.call import Caller
    from browserdeck.drivers.host import ProfileHost
    from browserdeck.tabs import Tab


class Driver(ProfileDriver):
    """Chosen by ``remote.Driver.variant_for``: the profile's driver is still "remote"."""

    name = "remote"
    takes_token: ClassVar[bool] = True

    def __init__(self, ctx: ProfileHost) -> None:
        super().__init__(ctx)
        self.service = remote.ServiceLeases(ctx)

    @property
    def leases(self) -> dict[str | None, remote.Lease]:
        return self.service.leases

    # --- lifecycle -------------------------------------------------------------------
    async def start(self, caller: Caller | None = None) -> None:
        # Start means connect: the caller's browser from the service.
        await self.service.lease(caller)
        self.ctx.set_state("running", None)

    async def ensure(self, caller: Caller | None = None) -> str:
        lease = await self.service.lease(caller)
        if self.ctx.state != "running":
            self.ctx.set_state("running", None)
        return lease.key

    async def release_own(self, caller: Caller | None) -> bool:
        agent = caller.agent if caller is not None else None
        if not self.service.pooled or agent is None:
            return False
        # A pooled session stopping releases its own browser, not the others'.
        await self.service.release(agent.session)
        return True

    async def drop(self) -> None:
        # Release, never kill: closing our connection is how a service ends its browser.
        await self.service.release_all()

    def cdp_url(self) -> str:
        return self.service.public_url

    # --- status and tabs -------------------------------------------------------------
    async def status(self, out: dict[str, Any]) -> bool | None:
        service = self.service
        out["remote"] = await service.status()
        out["running"] = service.connected()
        out["tabs"] = sum(s["tabs"] for s in out["remote"]["sessions"])
        # Connected, or nothing held (all released) while the service itself answers.
        return bool(
            out["running"] or (not service.leases and bool(out["remote"]["health"].get("ok")))
        )

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        lease = self.service.current(caller)
        if lease is None or lease.conn is None or lease.conn.lost:
            return None
        try:
            return await asyncio.wait_for(self.service.tabs(lease), 1.5)
        except (BrowserdeckError, TimeoutError):
            return None

    async def read_tabs(self, wait: float = 5.0, caller: Caller | None = None) -> list[Tab]:
        return await self.service.tabs(await self.service.lease(caller))

    async def cdp_call(
        self, method: str, params: dict[str, Any], caller: Caller | None = None
    ) -> dict[str, Any]:
        reply: dict[str, Any] = await self.service.send(
            await self.service.lease(caller), method, params
        )
        return reply

    async def open_tab(self, url: str, caller: Caller | None = None) -> Tab:
        from browserdeck.tabs import Tab

        lease = await self.service.lease(caller)
        target_id = await self.service.open_tab(lease, url)
        tabs = {t.target_id: t for t in await self.service.tabs(lease)}
        return tabs.get(target_id) or Tab(target_id, "", url)

    def gone_note(self, caller: Caller | None = None) -> str | None:
        lease = self.service.current(caller)
        return lease.note if lease is not None else None

    async def why_gone(self, caller: Caller | None = None) -> str | None:
        lease = self.service.current(caller)
        if lease is not None and lease.conn is not None and lease.conn.lost:
            return (
                f"profile {self.ctx.name!r}: the connection to the browser service dropped "
                "while this was running (the service restarted, or ended the browser, "
                "e.g. at its session timeout), and the service ended the browser with it, so "
                "tabs from before are gone; the next call reconnects to a new browser"
            )
        return ""

    # --- agent sessions --------------------------------------------------------------
    async def stop_agents(self, spare: set[str]) -> tuple[int, int]:
        if self.service.pooled:
            # Not counted again: these are the browsers of the sessions the service ended
            # (or of CLI sessions), released now rather than by a task later.
            for agent in [a for a in self.service.leases if a is not None]:
                await self.service.release(agent)
        return 0, 0

    def agents_hold(self) -> bool:
        return bool(self.service.leases)

    def per_session(self) -> bool:
        return self.service.pooled

    def holds_session(self, session: str) -> bool:
        return session in self.service.leases

    async def release_session(self, session: str) -> bool:
        return await self.service.release(session)
