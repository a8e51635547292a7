"""The remote driver: a browser at an http(s):// CDP URL that browserdeck never launches
(a browser with --remote-debugging-port, often through a tunnel). A remote profile whose
cdpUrl is a browser service's ws(s):// endpoint is driven by ``browser_service.Driver``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browserdeck.chrome import launcher
from browserdeck.drivers.base import ProfileDriver
from browserdeck.errors import Unavailable

if TYPE_CHECKING:
    from browserdeck.config import ProfileConfig
    from browserdeck.door.call import Caller


class Driver(ProfileDriver):
    name = "remote"

    @classmethod
    def variant_for(cls, profile: ProfileConfig) -> type[ProfileDriver]:
        if profile.is_service:
            from browserdeck.drivers import browser_service

            return browser_service.Driver
        return cls

    async def start(self, caller: Caller | None = None) -> None:
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
