"""Engine tests: one real Chromium and one Engine per test module, a fresh tab per test.

Effects are checked through a second, independent channel (raw CDP over a websocket,
see ``Tab.js``), never through the engine under test.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import websockets
from pydantic import TypeAdapter

from browserdeck.engine import Engine, options
from tests.engine.site import Site, start_site
from tests.support.answers import fields_of
from tests.support.browsers import RawChromium, launch_raw_chromium

ACT = TypeAdapter(options.Act)


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    s = start_site()
    yield s
    s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(
    chromium_path: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RawChromium]:
    b = await launch_raw_chromium(chromium_path, tmp_path_factory.mktemp("engine-chromium"))
    try:
        yield b
    finally:
        await b.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine(browser: RawChromium) -> AsyncIterator[Engine]:
    eng = Engine()
    await eng.start()
    try:
        yield eng
    finally:
        await eng.stop()


def _http(url: str, method: str = "GET") -> Any:
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body.strip().startswith((b"{", b"[")) else body


class Tab:
    """A tab of the module's browser, driven through the engine under test."""

    def __init__(self, engine: Engine, browser: RawChromium, site: Site, target_id: str) -> None:
        self.engine, self.browser, self.site, self.target_id = engine, browser, site, target_id
        self.cdp_url = browser.cdp_url

    async def goto(self, path: str, **kw: Any) -> dict[str, Any]:
        url = path if "://" in path or path.startswith(("about:", "data:")) else self.site.url(path)
        return fields_of(
            await self.engine.navigate(
                self.cdp_url, self.target_id, None, options.NavigateOptions(url=url, **kw)
            )
        )

    async def snap(self, **kw: Any) -> dict[str, Any]:
        return fields_of(
            await self.engine.snapshot(
                self.cdp_url, self.target_id, None, options.SnapshotOptions.model_validate(kw)
            )
        )

    async def act(self, **kw: Any) -> dict[str, Any]:
        answer = await self.engine.act(self.cdp_url, self.target_id, None, ACT.validate_python(kw))
        return fields_of(answer)

    async def shot(self, **kw: Any) -> dict[str, Any]:
        return fields_of(
            await self.engine.screenshot(
                self.cdp_url, self.target_id, None, options.ScreenshotOptions.model_validate(kw)
            )
        )

    async def js(self, expression: str) -> Any:
        """Evaluate in the page over a separate raw CDP connection (not the engine)."""
        async with websockets.connect(
            f"ws://127.0.0.1:{self.browser.port}/devtools/page/{self.target_id}",
            max_size=50_000_000,
        ) as ws:
            await ws.send(
                json.dumps(
                    {
                        "id": 1,
                        "method": "Runtime.evaluate",
                        "params": {
                            "expression": expression,
                            "returnByValue": True,
                            "awaitPromise": True,
                        },
                    }
                )
            )
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("id") == 1:
                    result = msg["result"]
                    if "exceptionDetails" in result:
                        raise AssertionError(f"page JS failed: {result['exceptionDetails']}")
                    return result["result"].get("value")

    async def text(self, selector: str) -> str:
        return str(await self.js(f"document.querySelector({json.dumps(selector)}).textContent"))


def ref_of(snapshot: str, line_start: str) -> str:
    """The ref on the first line containing ``line_start`` (e.g. 'button "Send"')."""
    for line in snapshot.splitlines():
        if line_start in line and "[ref=" in line:
            return line.split("[ref=", 1)[1].split("]", 1)[0]
    raise AssertionError(f"no ref for {line_start!r} in:\n{snapshot}")


@pytest_asyncio.fixture(loop_scope="module")
async def tab(engine: Engine, browser: RawChromium, site: Site) -> AsyncIterator[Tab]:
    info = _http(f"{browser.cdp_url}/json/new?about:blank", method="PUT")
    t = Tab(engine, browser, site, info["id"])
    try:
        yield t
    finally:
        with contextlib.suppress(OSError):  # the test may have closed it
            _http(f"{browser.cdp_url}/json/close/{info['id']}")


@pytest.fixture
def upload_file(tmp_path: Path) -> Path:
    path = tmp_path / "hello.txt"
    path.write_text("hello upload")
    return path
