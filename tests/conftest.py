"""Shared fixtures: a private BROWSERDECK_HOME per test, free ports, and real Chromium.

Nothing here is a fake: ``chromium`` launches the real browser found on this
machine (Debian's ``chromium`` package in CI) headless on a free loopback port.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.browsers import RawChromium, find_chromium, launch_raw_chromium
from tests.support.net import free_port
from tests.support.service import hold_engine_import, stop_lingering_service

__all__ = ["free_port"]


@pytest.fixture(autouse=True)
def bd_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own BROWSERDECK_HOME, so no test touches real user files."""
    home = tmp_path / "bdhome"
    home.mkdir()
    monkeypatch.setenv("BROWSERDECK_HOME", str(home))
    # No OS keyring on a headless box; tests exercise the 0600-file fallback explicitly.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("BROWSERDECK_TOKEN", raising=False)
    monkeypatch.delenv("BROWSERDECK_URL", raising=False)
    yield home
    stop_lingering_service(home)


@pytest.fixture
def held_engine_import(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The engine's import held at a gate (tests.support.service.hold_engine_import)."""
    gate = hold_engine_import(monkeypatch)
    yield gate
    gate.set()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        pytest.fail(
            "no Chromium/Chrome found: run `make test` (it installs Debian's chromium) "
            "or set BROWSERDECK_CHROME to a browser binary"
        )
    return path


@pytest.fixture
async def chromium(chromium_path: str, tmp_path: Path) -> AsyncIterator[RawChromium]:
    """A bare headless Chromium on a free port (not launched through browserdeck)."""
    browser = await launch_raw_chromium(chromium_path, tmp_path / "raw-chromium")
    try:
        yield browser
    finally:
        await browser.close()


def pytest_report_header() -> str:
    return f"chromium: {find_chromium() or 'NOT FOUND'}; display: {os.environ.get('DISPLAY', '-')}"
