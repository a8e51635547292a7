"""The websockets internals the relay and the CDP gateway write frames through.

``relay/link.py`` (``send_text``) and ``chrome/gateway.py`` (``_send_now``) skip
``send()``'s per-message work by writing a frame straight to the connection's protocol
and transport. That uses attributes of websockets' asyncio connection that exist from
16.0 on; on an older release every relayed message would fail. pyproject.toml pins
that floor, and this test holds a real connection to it.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from browserdeck.relay.link import send_text

ROOT = Path(__file__).resolve().parents[2]
# What the fast paths read or call on a connection (and on its protocol).
USED = ("protocol", "send_in_progress", "paused", "transport", "send_data")
USED_ON_PROTOCOL = ("state", "send_text")


def _floor(requirement: str) -> tuple[int, ...]:
    found = re.search(r">=\s*([0-9.]+)", requirement)
    assert found, requirement
    return tuple(int(p) for p in found.group(1).split("."))


def test_the_pinned_floor_is_the_release_that_has_the_attributes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pin = next(d for d in project["dependencies"] if d.startswith("websockets"))
    assert _floor(pin) >= (16,), pin
    installed = tuple(int(p) for p in version("websockets").split(".")[:2])
    assert installed >= _floor(pin)[:2]


async def test_send_text_writes_through_the_connection_without_send() -> None:
    received: asyncio.Queue[str] = asyncio.Queue()
    server_side: list[ServerConnection] = []

    async def handler(ws: ServerConnection) -> None:
        server_side.append(ws)
        async for message in ws:
            await received.put(str(message))

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as client:
            for name in USED:
                assert hasattr(client, name), f"websockets connection has no {name}"
            for name in USED_ON_PROTOCOL:
                assert hasattr(client.protocol, name), f"websockets protocol has no {name}"

            async def refused(*_: Any, **__: Any) -> None:
                raise AssertionError("send() was used: the fast path did not apply")

            client.send = refused  # type: ignore[method-assign]
            await send_text(client, "hello")
            assert await asyncio.wait_for(received.get(), 5) == "hello"
            await asyncio.sleep(0)
            assert server_side and all(hasattr(server_side[0], n) for n in USED)
