"""Open an exported recording the way a person would, in real tools, headless.

* a trace zip in Playwright's own trace viewer: ``playwright show-trace --port 0`` (the
  Python package's driver, the one the tests run) serves it, headless Chromium loads the viewer, which parses
  the zip with Playwright's own loader; the action list it shows is read back;
* an HTML report in headless Chromium, from its file.

Both save a screenshot of what they showed next to the file (``<file>.png``), to look at.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from playwright._impl._driver import compute_driver_executable
from playwright.async_api import Browser, async_playwright

from tests.support.browsers import find_chromium


@contextlib.asynccontextmanager
async def headless_chromium() -> AsyncIterator[Browser]:
    path = find_chromium()
    assert path is not None, "no Chromium here"
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=path, args=["--no-sandbox"], headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


async def trace_viewer_actions(trace: Path, shot: Path) -> list[str]:
    """The action titles Playwright's trace viewer lists for ``trace``."""
    # The driver's node itself, in a process group of its own (the Python wrapper left
    # node running when stopped, and its output never reached this pipe).
    node, cli = compute_driver_executable()
    proc = await asyncio.create_subprocess_exec(
        node, cli, "show-trace", "--host", "127.0.0.1", "--port", "0", str(trace),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = None
        while url is None:
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            assert line, "show-trace exited without serving the trace"
            found = re.search(r"http://\S+", line)
            url = found.group(0) if found else None
        async with headless_chromium() as browser:
            page = await browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(url)
            titles = page.locator(".action-title")
            await titles.first.wait_for(timeout=30_000)
            listed = [t.split("\n")[0] for t in await titles.all_inner_texts()]
            # The last action that has images: its "After" tab shows the recorded image.
            await page.screenshot(path=str(shot))
            assert not errors, errors
            return listed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        await proc.wait()


async def render_report(report: Path, shot: Path) -> dict[str, Any]:
    """What the HTML report shows in Chromium: its steps and how many images loaded."""
    async with headless_chromium() as browser:
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        await page.goto(report.as_uri())
        shown: dict[str, Any] = await page.evaluate(
            """() => ({
              steps: [...document.querySelectorAll('section.step h2')].map(h => h.textContent),
              images: document.images.length,
              loaded: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length,
            })"""
        )
        await page.screenshot(path=str(shot), full_page=True)
        shown["fetched"] = [u for u in requests if not u.startswith(("file:", "data:"))]
        return shown


async def video_size(video: Path) -> tuple[int, int]:
    """The width and height Chromium decodes the video's first frame at."""
    async with headless_chromium() as browser:
        page = await browser.new_page()
        await page.goto(video.parent.as_uri() + "/")
        size: list[int] = await page.evaluate(
            """async (src) => {
              const v = document.createElement('video');
              v.muted = true; v.src = src; document.body.append(v);
              await new Promise((ok, no) => {
                v.onloadeddata = ok; v.onerror = () => no(new Error(v.error && v.error.message));
              });
              return [v.videoWidth, v.videoHeight];
            }""",
            video.as_uri(),
        )
        return size[0], size[1]
