"""Background tasks belong to the object that started them: its stop() ends them (issue 13).

A re-announcement after Chrome detaches the debugger sleeps up to 30 s; held in a
module-global set, it outlived the relay that scheduled it and then announced a tab on
a relay that no longer ran. The fake extension stands in for Chrome here because only
it can send ``debuggerDetached`` on demand (tests/relay/fake_extension.py).
"""

from __future__ import annotations

import asyncio

from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from tests.relay.fake_extension import FakeExtension, FakeTab
from tests.relay.harness import wait_until


def _pending(prefix: str) -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(prefix) and not t.done()]


async def test_relay_stop_cancels_a_pending_reannouncement() -> None:
    relay = RelayServer(port=0, token=new_token())
    await relay.start()
    tab = FakeTab(7, "B" * 32, "https://example.test/")
    ext = await FakeExtension.connect(relay, tabs=[tab])
    try:
        await ext.send({"method": "debuggerDetached", "params": {"tabId": 7, "reason": "test"}})
        await wait_until(lambda: bool(_pending("relay-reannounce-7")), what="the re-announcement")
        await relay.stop()
        assert _pending("relay-reannounce-") == [], (
            "the relay stopped, its re-announcement lives on"
        )
        assert _pending("relay-") == []
    finally:
        await ext.close()
        await relay.stop()
