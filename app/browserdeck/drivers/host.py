"""What a driver may ask of the world around it: two narrow interfaces, no concrete class.

A driver (``base.ProfileDriver``) is given a ``ProfileHost``: the profile that holds it
(``profiles.ProfileContext`` is one). The profile in turn is given a ``ServiceHost``:
the few things of the service it needs (``service.Service`` is one). Neither the
drivers nor the profile import the service, so the service can own them without a
loop, and a test can host a driver on something smaller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from browserdeck.config import Config, ProfileConfig
    from browserdeck.door.call import Caller
    from browserdeck.engine import Engine
    from browserdeck.errors import Conflict
    from browserdeck.events import ServiceEvents
    from browserdeck.tabs import Tab


class TabLimits(Protocol):
    """The agent sessions, as far as a profile opening and closing tabs needs them."""

    async def reap(self) -> Sequence[object]:
        """End the sessions that are gone; what ended (empty: nothing freed a tab)."""
        ...

    def too_many_tabs(self, profile: str, listed: list[Tab], limit: int) -> Conflict: ...

    def tab_closed(self, profile: str, target_id: str) -> None: ...


class ServiceHost(Protocol):
    """What a profile and its driver need of the service: settings, events, tokens, the
    engine and the sessions' tab limits."""

    @property
    def config(self) -> Config: ...

    @property
    def events(self) -> ServiceEvents: ...

    @property
    def force_headless(self) -> bool: ...

    @property
    def api_token(self) -> str: ...

    @property
    def relay_token(self) -> str: ...

    @property
    def engine(self) -> Engine | None: ...

    @property
    def engine_starting(self) -> bool: ...

    @property
    def sessions(self) -> TabLimits: ...

    async def tokens_read(self) -> None: ...

    async def engine_ready(self) -> Engine: ...


class ProfileHost(Protocol):
    """What a driver needs of the profile that holds it: its settings and name, its
    lifecycle (state, lock, start/stop) and its tabs; ``host`` for the service's part."""

    # Set by the profile's stop so that an exit it caused is not taken for a crash.
    stopping: bool
    # Tabs agents opened through the API (what "Stop all agents" closes).
    agent_tabs: set[str]

    @property
    def name(self) -> str: ...

    @property
    def profile(self) -> ProfileConfig: ...

    @property
    def config(self) -> Config: ...

    @property
    def host(self) -> ServiceHost: ...

    @property
    def state(self) -> str: ...

    @property
    def detail(self) -> str | None: ...

    @property
    def lock(self) -> asyncio.Lock: ...

    @property
    def cdp_url(self) -> str: ...

    @property
    def headers(self) -> dict[str, str]: ...

    def set_state(self, state: str, detail: str | None) -> None: ...

    async def start(self, caller: Caller | None = None) -> dict[str, Any]: ...

    async def stop_locked(self) -> None: ...

    async def drop_connections(self) -> None: ...

    async def peek_tabs(self, caller: Caller | None = None) -> list[Tab] | None: ...

    async def close_tab(self, target: str, caller: Caller | None = None) -> str: ...
