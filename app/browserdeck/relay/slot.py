"""The relay's single-client slot, both sides of it.

In ``single-active`` mode the relay lets one CDP client use the tabs at a time:

* ``ClientSlot`` is the relay's side: who holds the slot, the 409 a second client
  gets (naming the holder), and the short hand-over wait that lets a client that
  disconnects and reconnects at once get back in.
* ``wait_for_client_slot`` is our engine's side. The engine connects with
  ``RelayServer.auth_headers()`` (a *lazy* slot: it is never refused at connect, and
  takes the slot when it first attaches), so before it connects it waits here for the
  slot to be free, polling ``GET /client-slot`` with jitter for up to 30 s, and then
  says who holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from websockets.protocol import State

from browserdeck import errors

if TYPE_CHECKING:
    # The relay's session model (and with it its wire helpers) comes with a relay's
    # start, not with the engine, which imports this module for its slot header (issue
    # 14: the engine's import is on the way to the Playwright driver's spawn).
    from browserdeck.relay.model import Client

BUSY_MARKER = "is in use by"
CLIENT_MODES = ("single-active", "multi-client")
# The header (or ``?slot=``) a CDP client picks its slot mode with: ``eager`` (the
# default: take the slot at connect, 409 while it is held), ``lazy`` (take it at the first
# attach; our engine and service) or ``none`` (tab management only, never the slot).
SLOT_HEADER = "X-Browserdeck-Slot"
SLOT_MODES = ("eager", "lazy", "none")
# How long a new client waits for the slot holder's socket to finish closing before it
# gets 409: a client that disconnects and reconnects at once (Puppeteer's disconnect()
# does not wait for the close handshake) would otherwise race its own old connection.
SLOT_HANDOVER_WAIT = 1.0


class ClientSlot:
    """The relay's side: one holder at a time in ``single-active`` mode."""

    def __init__(self, *, profile: str, mode: str) -> None:
        if mode not in CLIENT_MODES:
            raise errors.InvalidInput(
                f"unknown relay client mode {mode!r}",
                hint="use 'single-active' or 'multi-client'",
                code="invalid_client_mode",
            )
        self.profile = profile
        self.mode = mode
        self.holder: Client | None = None
        self._freed = asyncio.Event()

    @property
    def exclusive(self) -> bool:
        return self.mode == "single-active"

    def current(self) -> Client | None:
        """The holder, unless its connection is already closed."""
        holder = self.holder
        return None if holder is None or holder.closed else holder

    def live_holder(self) -> Client | None:
        """The holder, unless its socket is already closing (the slot is then free: it no
        longer sends commands, and its cleanup may lag behind a reconnect)."""
        holder = self.current()
        if holder is not None and getattr(holder.ws, "state", State.OPEN) is not State.OPEN:
            return None
        return holder

    def guard(self, client: Client) -> str | None:
        """Why ``client`` may not attach to a tab now (None: it may, and holds the slot)."""
        if client.slot_mode == "none":
            return (
                f"this connection was opened with {SLOT_HEADER}: none, so it can list, "
                "open, focus and close tabs but not attach to them"
            )
        if not self.exclusive:
            return None
        holder = self.live_holder()
        if holder is None:
            self.holder = client
            return None
        if holder is client:
            return None
        return self.busy_message(holder)

    def busy_message(self, holder: Client) -> str:
        since = time.strftime("%H:%M:%S", time.localtime(holder.connected_at))
        who = holder.label or "another client"
        return (
            f"the extension relay for profile {self.profile!r} is in use by {who} "
            f"(client {holder.id}, connected since {since}); relayClientMode is single-active, "
            "so one CDP client at a time: wait for it to disconnect, close it, or switch the "
            "setting to multi-client"
        )

    async def holder_after_handover(self, slot_mode: str) -> Client | None:
        """Who keeps an ``eager`` client out, after giving a disconnecting holder a moment
        to go (None: the client may connect)."""
        if not self.exclusive or slot_mode != "eager":
            return None
        deadline = asyncio.get_running_loop().time() + SLOT_HANDOVER_WAIT
        while (holder := self.live_holder()) is not None:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return holder
            self._freed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._freed.wait(), min(left, 0.05))
        return None

    def take(self, client: Client) -> str | None:
        """An ``eager`` client takes the slot as its socket opens (None: taken or not
        needed); the reason it may not, if another client got in first."""
        if not self.exclusive or client.slot_mode != "eager":
            return None
        holder = self.live_holder()
        if holder is not None and holder is not client:
            return self.busy_message(holder)
        self.holder = client
        return None

    def release(self, client: Client) -> None:
        """``client`` is gone: free the slot at once, before its (slower) session cleanup,
        so a reconnect gets in."""
        client.closed = True
        if self.holder is client:
            self.holder = None
        self._freed.set()

    def info(self, clients: Iterable[Client]) -> dict[str, Any]:
        """``GET /client-slot``."""
        holder = self.current()
        return {
            "mode": self.mode,
            "busy": holder is not None and self.exclusive,
            "activeClientId": holder.id if holder else None,
            "connectedAt": holder.connected_at if holder else None,
            "holder": holder.describe() if holder else None,
            "clients": [c.describe() for c in clients],
        }


async def client_slot(cdp_url: str, headers: Mapping[str, str]) -> dict[str, Any]:
    import httpx  # here: the service's start does not need it

    async with httpx.AsyncClient(timeout=5.0) as http:
        resp = await http.get(f"{cdp_url.rstrip('/')}/client-slot", headers=dict(headers))
    if resp.status_code != 200:
        raise errors.Unavailable(
            f"the relay at {cdp_url} answered HTTP {resp.status_code} for /client-slot",
            hint="check that browserdeck serves the extension profile and the relay token",
            code="relay_unreachable",
        )
    body = resp.json()
    return body if isinstance(body, dict) else {}


async def wait_for_client_slot(
    cdp_url: str,
    headers: Mapping[str, str],
    *,
    wait: float = 30.0,
    profile: str | None = None,
    poll: tuple[float, float] = (0.2, 0.4),
) -> None:
    """Return once the relay's client slot is free; raise errors.Conflict after ``wait`` s."""
    deadline = time.monotonic() + wait
    info: dict[str, Any] = {}
    while True:
        info = await client_slot(cdp_url, headers)
        if not info.get("busy"):
            return
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(random.uniform(*poll))
    holder = info.get("holder") or {}
    since = holder.get("connectedAt")
    when = (
        time.strftime("%H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else "?"
    )
    who = holder.get("label") or "another client"
    name = f"profile {profile!r}" if profile else cdp_url
    raise errors.Conflict(
        f"the extension relay of {name} is in use by {who} (client {holder.get('id')}, since "
        f"{when}) and did not free up within {wait:g} s",
        hint="close that client (or its script), or set relayClientMode to multi-client",
        code="relay_busy",
    )


def is_slot_busy_error(exc: BaseException) -> bool:
    """Whether a connect/attach failure means the relay's slot is held by someone else."""
    text = str(exc)
    return BUSY_MARKER in text or "relay_busy" in text or "409" in text


__all__ = [
    "CLIENT_MODES",
    "SLOT_HEADER",
    "ClientSlot",
    "client_slot",
    "is_slot_busy_error",
    "wait_for_client_slot",
]
