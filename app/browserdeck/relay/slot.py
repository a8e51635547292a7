"""Client side of the relay's single-active arbitration, for our own engine.

In ``single-active`` mode the relay lets one CDP client use the tabs at a time. Our
engine connects with ``RelayServer.auth_headers()`` (a *lazy* slot: it is never refused
at connect, and takes the slot when it first attaches), so before it connects it waits
here for the slot to be free, polling ``GET /client-slot`` with jitter for up to 30 s,
and then says who holds it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from typing import Any

import httpx

from browserdeck import errors

BUSY_MARKER = "is in use by"


async def client_slot(cdp_url: str, headers: Mapping[str, str]) -> dict[str, Any]:
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


__all__ = ["client_slot", "is_slot_busy_error", "wait_for_client_slot"]
