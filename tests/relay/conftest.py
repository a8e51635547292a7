"""Fixtures for the relay: a real relay, real Chromium with the real extension, test pages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Playwright, async_playwright

from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from tests.relay.harness import ExtBrowser, Site, launch_ext_browser, start_site


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    s = start_site()
    yield s
    s.server.shutdown()
    s.server.server_close()


@pytest.fixture
async def relay() -> AsyncIterator[RelayServer]:
    server = RelayServer(port=0, token=new_token(), profile="chrome")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def ext(chromium_path: str, tmp_path: Path, relay: RelayServer) -> AsyncIterator[ExtBrowser]:
    """Chromium with the extension, paired with ``relay`` and connected to it."""
    browser = await launch_ext_browser(chromium_path, tmp_path / "ext-chromium", relay)
    try:
        await browser.pair()
        await relay.wait_for_extension(15)
        yield browser
    finally:
        await browser.close()


@pytest.fixture
async def pw() -> AsyncIterator[Playwright]:
    async with async_playwright() as p:
        yield p
