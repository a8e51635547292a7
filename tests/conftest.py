"""Shared fixtures: a private BROWSERDECK_HOME per test, free ports, and real Chromium.

Nothing here is a fake: ``chromium`` launches the real browser found on this
machine (Debian's ``chromium`` package in CI) headless on a free loopback port.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.browsers import RawChromium, find_chromium, launch_raw_chromium
from tests.support.net import free_port

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


def stop_lingering_service(home: Path) -> None:
    """Stop a service that `browserdeck mcp` started in ``home`` and left running on
    purpose (it outlives its MCP clients; docs/mcp.md): a test must not leave it behind."""
    import json
    import signal
    import time

    from browserdeck.chrome.procs import pid_alive

    try:
        data = json.loads((home / "state" / "instance.json").read_text(encoding="utf-8"))
        pid = int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if pid == os.getpid() or not pid_alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


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
