"""How MCP tools reach browserdeck: the service's front door, in this process.

MCP is served at ``/mcp`` inside the service (``browserdeck mcp`` is a stdio bridge to
it, mcp_bridge.py), so a tool calls the service's ``Deck`` directly: a plain call, no
HTTP to itself, the core's errors as raised, one activity entry per call
(``DeckBackend``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from browserdeck import results as r
from browserdeck.api.errors import status_of
from browserdeck.deck import Caller, TabRequest, call_name
from browserdeck.errors import BrowserdeckError
from browserdeck.events import ActivityEntry, CallError, call_ended

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.tabs import Tab

T = TypeVar("T")

CLIENT_NAME = "browserdeck-mcp"


class DeckBackend:
    """The service's front door in this process: a plain call, one activity entry."""

    def __init__(
        self, deck: Deck, *, on_call: Callable[[ActivityEntry], None] | None = None
    ) -> None:
        self.deck = deck
        # The activity log's entry for each call (service.events.api_call). It names the
        # call (``call``: "start", "open-tab", "snapshot", "act" ...), where the API's guard
        # names an HTTP call by its method and path; the rest is alike, so the tray shows
        # both alike.
        self._on_call = on_call

    async def _report(
        self,
        caller: Caller,
        call: str,
        profile: str | None,
        run: Callable[[], Awaitable[T]],
    ) -> T:
        started = time.perf_counter()
        status = 200
        error: CallError | None = None
        try:
            return await run()
        except BrowserdeckError as exc:
            status = status_of(exc)  # the activity log shows MCP calls as the API would
            # The message may quote page text (a lone surrogate): the log shows it cleaned.
            error = CallError(
                code=exc.code, message=r.well_formed(exc.message), hint=r.well_formed(exc.hint)
            )
            raise
        except Exception:
            status = 500
            raise
        finally:
            if self._on_call is not None:
                self._on_call(
                    call_ended(
                        started,
                        client=caller.client or CLIENT_NAME,
                        call=call,
                        profile=profile or "",
                        status=status,
                        detail=caller.notes,
                        error=error,
                    )
                )

    async def status(self, caller: Caller, profile: str | None) -> r.Status:
        return await self.deck.status(caller, profile)

    async def profiles(self, caller: Caller) -> r.Profiles:
        return await self.deck.profiles()

    async def start(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        return await self._report(
            caller, "start", profile, lambda: self.deck.start(caller, profile)
        )

    async def stop(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        return await self._report(caller, "stop", profile, lambda: self.deck.stop(caller, profile))

    async def tabs(self, caller: Caller, profile: str | None) -> list[Tab]:
        return (await self.deck.tabs(caller, profile)).tabs

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> Tab:
        return await self._report(
            caller,
            "open-tab",
            profile,
            lambda: self.deck.open_tab(caller, profile, url),
        )

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str:
        return await self._report(
            caller,
            "close-tab",
            profile,
            lambda: self.deck.close_tab(caller, profile, target),
        )

    async def on_tab(
        self, caller: Caller, profile: str | None, target: str | None, request: TabRequest
    ) -> r.TabResult:
        return await self._report(
            caller,
            call_name(request),
            profile,
            lambda: self.deck.on_tab(caller, profile, target, request),
        )

    def cdp_credentials(self, caller: Caller, profile: str | None) -> dict[str, str]:
        """What a CDP client of the profile's endpoint must send: that endpoint's own
        ``Authorization`` (the API token to a managed browser's gateway, the relay token to
        the relay), and nothing to an endpoint browserdeck does not serve (attach-only,
        remote): whoever listens there is not ours to hand a token."""
        headers = self.deck.profile(caller, profile).headers
        return {k: v for k, v in headers.items() if k.lower() == "authorization"}
