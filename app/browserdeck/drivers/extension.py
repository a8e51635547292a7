"""The extension driver: the user's own Chrome, through the browserdeck extension and the
local CDP relay (relay/), which it keeps (``relay``) from start to stop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from browserdeck.chrome.xfocus import WindowOwner
from browserdeck.drivers.base import ProfileDriver
from browserdeck.errors import PAIR, Hint, Unavailable
from browserdeck.tabs import Tab

if TYPE_CHECKING:
    from browserdeck.door.call import Caller
    from browserdeck.drivers.host import ProfileHost
    from browserdeck.relay.server import RelayServer

log = logging.getLogger(__name__)


class Driver(ProfileDriver):
    name = "extension"
    own_window = False  # the user's Chrome gets plain tabs
    escaped_titles = False  # the relay's titles come straight from the extension
    lists_every_tab = False  # only the tabs the user shared

    def __init__(self, ctx: ProfileHost) -> None:
        super().__init__(ctx)
        self.relay: RelayServer | None = None

    async def start(self, caller: Caller | None = None) -> None:
        ctx = self.ctx
        if self.relay is not None:
            return
        from browserdeck.relay.server import RelayServer

        relay = RelayServer(
            port=ctx.config.relay_port_of(ctx.profile),
            token=ctx.host.relay_token,
            profile=ctx.name,
            client_mode=ctx.config.relay_client_mode,
            events=ctx.host.events,
            color=ctx.profile.color,
        )
        await relay.start()
        self.relay = relay
        ctx.set_state("running", "relay listening; waiting for the extension")


    async def stop(self) -> None:
        if self.relay is not None:
            relay, self.relay = self.relay, None
            await relay.stop()

    async def ensure(self, caller: Caller | None = None) -> str:
        ctx = self.ctx
        if self.relay is None:
            await ctx.start(caller)
        assert self.relay is not None
        if not self.relay.extension_connected:
            raise Unavailable(
                f"profile {ctx.name!r}: no Chrome is connected to the relay on port "
                f"{self.relay.port}",
                hint=Hint(
                    "connect the browserdeck extension (click its icon in Chrome); pair it "
                    "first ({pair}) if you have not",
                    pair=PAIR.of(profile=ctx.name),
                ),
                code="extension_not_connected",
            )
        return ctx.cdp_url

    def cdp_url(self) -> str:
        return self.relay.cdp_url if self.relay is not None else super().cdp_url()

    def headers(self) -> dict[str, str]:
        return self.relay.auth_headers() if self.relay is not None else {}

    def cdp_port(self) -> int | None:
        ctx = self.ctx
        return self.relay.port if self.relay else ctx.config.relay_port_of(ctx.profile)

    def window_owner(self) -> WindowOwner | None:
        # The user's Chrome: we know no pid of it, so any Chrome window on this screen.
        return WindowOwner(chrome_class=True)

    async def status(self, out: dict[str, Any]) -> bool | None:
        relay_status = self.relay.status() if self.relay else {}
        out["relay"] = relay_status
        out["extensionConnected"] = bool(relay_status.get("extensionConnected"))
        return None

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None:
        if self.relay is None or not self.relay.extension_connected:
            return None
        return await super().peek_tabs(caller)

    async def why_gone(self, caller: Caller | None = None) -> str | None:
        ctx = self.ctx
        if self.relay is not None and not self.relay.extension_connected:
            return (
                f"profile {ctx.name!r}: the browserdeck extension disconnected while this "
                "was running (Chrome closed, or the extension was reloaded or turned off)"
            )
        return ""  # nothing more to say: the tab alone went

    def not_running_hint(self) -> str | Hint:
        return "connect the browserdeck extension (click its icon in Chrome)"

    def restart_hint(self) -> Hint:
        return Hint("reconnect the extension in Chrome (click its icon)")

    async def stop_agents(self, spare: set[str]) -> tuple[int, int]:
        if self.relay is None:
            return 0, 0
        try:
            return 0, await self.relay.unshare_all()
        except Exception as exc:  # the extension went away meanwhile
            log.info("stop all agents: unsharing failed: %s", exc)
            return 0, 0

    def start_with_service(self) -> bool:
        return self.relay is None

    def agents_hold(self) -> bool:
        return self.relay is not None and bool(self.relay.relay.shared_tabs())
