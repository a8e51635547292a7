"""Fixtures for the chrome package: browsers launched through browserdeck's own launcher."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from browserdeck.chrome.flags import LaunchOptions
from browserdeck.chrome.launcher import launch
from browserdeck.chrome.process import ChromeProcess
from tests.support.net import free_port

OptionsFactory = Callable[..., LaunchOptions]
# The token of the CDP endpoint of browsers launched here (the API token in the service).
TOKEN = "chrome-tests-token"


def make_options(
    chromium_path: str, root: Path, name: str = "agent", **overrides: object
) -> LaunchOptions:
    fields: dict[str, object] = {
        "profile": name,
        "port": free_port(),
        "user_data_dir": root / name / "user-data",
        "color": "#FF4500",
        "headless": True,
        "no_sandbox": False,  # root is detected by the launcher itself
        "executable": chromium_path,
        "token": lambda: TOKEN,
    }
    fields.update(overrides)
    return LaunchOptions(**fields)  # type: ignore[arg-type]


@pytest.fixture
def options(chromium_path: str, tmp_path: Path) -> OptionsFactory:
    """``options(name, **overrides)``: LaunchOptions for a fresh profile on a free port."""

    def factory(name: str = "agent", **overrides: object) -> LaunchOptions:
        return make_options(chromium_path, tmp_path / "profiles", name, **overrides)

    return factory


@pytest_asyncio.fixture
async def launched() -> AsyncIterator[list[ChromeProcess]]:
    """Append browsers you launch to this list; they are stopped after the test."""
    browsers: list[ChromeProcess] = []
    yield browsers
    for browser in browsers:
        await browser.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_browser(
    chromium_path: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ChromeProcess]:
    """One managed browser for a whole module (tests must leave it running)."""
    root = tmp_path_factory.mktemp("shared-browser")
    browser = await launch(make_options(chromium_path, root, "shared"))
    yield browser
    await browser.stop()
