"""A real Browserless (npm) for remote-profile tests; skipped only where node/npm are absent."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.mcp.site import serve_site
from tests.remote import browserless as bl
from tests.support.net import free_port


@pytest.fixture(scope="session")
def browserless_dir(chromium_path: str) -> str:
    why = bl.npm_missing()
    if why:
        pytest.skip(f"remote-profile tests need Browserless from npm: {why}")
    bl.install(chromium_path)
    return str(bl.DIR)


@pytest.fixture(scope="session")
def browserless(browserless_dir: str) -> Iterator[bl.Browserless]:
    """One shared server (10 browsers at once) for the tests that do not restart or fill it."""
    server = bl.Browserless(free_port(), secrets.token_hex(16), concurrent=10, queued=2)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_browserless(browserless_dir: str) -> Iterator[bl.Browserless]:
    """A server of the test's own, stopped after it (for restarts and a tiny limit)."""
    server = bl.Browserless(free_port(), secrets.token_hex(16), concurrent=1, queued=1)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    with serve_site() as url:
        yield url
