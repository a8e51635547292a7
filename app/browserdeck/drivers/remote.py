"""The remote driver: a browser at a CDP URL that browserdeck never launches, either a
browser with --remote-debugging-port (http(s)://) or a browser service reached over one
WebSocket (ws(s)://, remote.ServiceDriver). Moved from ``profiles.ProfileContext``'s
``driver == "remote"`` branches as it was.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from browserdeck.chrome import launcher
from browserdeck.drivers.base import ProfileDriver
from browserdeck.errors import BrowserdeckError, Unavailable
from browserdeck.tabs import Tab

if TYPE_CHECKING:
    from browserdeck.door.call import Caller


class Driver(ProfileDriver):
    name = "remote"

    async def start(self, caller: Caller | None = None) -> None:
        ctx = self.ctx
        if ctx.remote is not None:
            # Start means connect: the caller's browser from the service.
            await ctx.remote.lease(caller)
            ctx.set_state("running", None)
        else:
            await self._attach()

    async def _attach(self) -> None:
        ctx = self.ctx
        if not await launcher.is_cdp_ready(ctx.cdp_url, timeout=3.0):
            ctx.set_state("error", f"nothing answers at {ctx.cdp_url}")
            raise Unavailable(
                f"remote profile {ctx.name!r}: no CDP endpoint answers at {ctx.cdp_url}",
                hint="check that the remote browser runs with --remote-debugging-port and "
                "that the tunnel is up; browserdeck never launches a browser for a remote profile",
                code="attach_failed",
            )
        ctx.set_state("running", None)


    async def ensure(self, caller: Caller | None = None) -> str:
        ctx = self.ctx
        if ctx.remote is not None:
            lease = await ctx.remote.lease(caller)
            if ctx.state != "running":
                ctx.set_state("running", None)
            return lease.key
        return await super().ensure(caller)

    def cdp_url(self) -> str:
        ctx = self.ctx
        return ctx.remote.public_url if ctx.remote is not None else super().cdp_url()

    async def status(self, out: dict[str, Any]) -> bool | None:
        service = self.ctx.remote
        if service is None:
            return None
        out["remote"] = await service.status()
        out["running"] = service.connected()
        out["tabs"] = sum(s["tabs"] for s in out["remote"]["sessions"])
        # Connected, or nothing held (all released) while the service itself answers.
        return bool(
            out["running"] or (not service.leases and bool(out["remote"]["health"].get("ok")))
        )

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        service = self.ctx.remote
        if service is None:
            return await super().peek_tabs(caller)
        lease = service.current(caller)
        if lease is None or lease.conn is None or lease.conn.lost:
            return None
        try:
            return await asyncio.wait_for(service.tabs(lease), 1.5)
        except (BrowserdeckError, TimeoutError):
            return None

    async def why_gone(self, caller: Caller | None = None) -> str | None:
        ctx = self.ctx
        if ctx.remote is None:
            return None
        lease = ctx.remote.current(caller)
        if lease is not None and lease.conn is not None and lease.conn.lost:
            return (
                f"profile {ctx.name!r}: the connection to the browser service dropped "
                "while this was running (the service restarted, or ended the browser, "
                "e.g. at its session timeout), and the service ended the browser with it, so "
                "tabs from before are gone; the next call reconnects to a new browser"
            )
        return ""

    async def stop_agents(self, spare: set[str]) -> tuple[int, int]:
        service = self.ctx.remote
        if service is not None and service.pooled:
            # Not counted again: these are the browsers of the sessions the service ended
            # (or of CLI sessions), released now rather than by a task later.
            for agent in [a for a in service.leases if a is not None]:
                await service.release(agent)
        return 0, 0
