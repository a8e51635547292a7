"""The service's view of a dropped extension: an action in flight says what happened."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.relay.harness import Site, launch_ext_browser
from tests.support.service import running_service, service_config


async def test_extension_dropped_during_an_action(
    chromium_path: str, tmp_path: Path, site: Site
) -> None:
    started = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started.set()
        writer.close()

    probe = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    async with running_service(service_config()) as (service, client):
        relay = service.contexts["chrome"].impl.relay
        assert relay is not None
        ext = await launch_ext_browser(chromium_path, tmp_path / "ext", relay)
        try:
            await ext.pair()
            await relay.wait_for_extension(15)
            await ext.open_shared(site.url("/page?title=Shared"))
            fn = f"() => {{ fetch('http://127.0.0.1:{port}/'); return new Promise(() => {{}}); }}"
            pending = asyncio.create_task(
                client.post(
                    "/act",
                    params={"profile": "chrome"},
                    json={"kind": "evaluate", "fn": fn, "timeoutMs": 60000},
                )
            )
            await asyncio.wait_for(started.wait(), 30)
        finally:
            await ext.close()  # Chrome goes away, and the extension with it
        probe.close()
        error = (await pending).json()["error"]
        assert error["code"] == "browser_gone", error
        assert "extension disconnected" in error["message"]
        assert "reconnect the extension" in error["hint"]
