"""The network tests' site, one BROWSERDECK_HOME per module, and one service per module
with its managed browser and a Chromium with the real extension paired with its relay."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from browserdeck.relay.server import RelayServer
from browserdeck.service import Service
from tests.network.site import NetSite, start_net_site
from tests.relay.harness import ExtBrowser, launch_ext_browser
from tests.support.service import module_home, running_service, service_config


@pytest.fixture(scope="module", autouse=True)
def bd_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with module_home(tmp_path_factory) as home:
        yield home


@pytest.fixture(scope="session")
def site() -> Iterator[NetSite]:
    s = start_net_site()
    yield s
    s.close()


@dataclass
class Deck:
    service: Service
    client: httpx.AsyncClient
    ext: ExtBrowser


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def deck(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deck]:
    """The module's service: its managed profile started, the extension's paired."""
    async with running_service(service_config()) as (service, client), contextlib.AsyncExitStack() as stack:
        assert (await client.post("/start")).status_code == 200
        relay: RelayServer | None = service.contexts["chrome"].impl.relay
        assert relay is not None
        ext = await launch_ext_browser(chromium_path, tmp_path_factory.mktemp("ext"), relay)
        stack.push_async_callback(ext.close)
        await ext.pair()
        await relay.wait_for_extension(15)
        yield Deck(service, client, ext)
