"""A headed browser under Xvfb really shows the profile's colour in its toolbar.

Skipped where Xvfb or Pillow's X11 grab is missing.  There is no event for "the
window has been painted", so the screen is polled until the tint shows or a
deadline passes.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from browserdeck.chrome.launcher import launch
from tests.chrome.conftest import OptionsFactory

ImageGrab = pytest.importorskip("PIL.ImageGrab")


@pytest.fixture
def xvfb_display(tmp_path: Path) -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()  # Xvfb writes it once it accepts clients
        if not number:
            pytest.skip("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)


def toolbar_pixels(display: str) -> list[tuple[int, int, int]]:
    image = ImageGrab.grab(xdisplay=display).convert("RGB")
    width = image.width
    # The tab strip, right of the tabs (no text there): rows 5..30 at 80% width.
    return [image.getpixel((int(width * 0.8), y)) for y in range(5, 30, 5)]


def tinted(pixels: list[tuple[int, int, int]], channel: int) -> bool:
    return any(
        p[channel] > max(c for i, c in enumerate(p) if i != channel) + 15 and p[channel] < 250
        for p in pixels
    )


async def test_the_window_is_tinted_with_the_profile_colour(
    options: OptionsFactory, xvfb_display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", xvfb_display)
    browser = await launch(options("work", headless=False, color="#00AA00"))
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 15
        pixels = toolbar_pixels(xvfb_display)
        while not tinted(pixels, channel=1) and loop.time() < deadline:
            await asyncio.sleep(0.1)
            pixels = toolbar_pixels(xvfb_display)
        assert tinted(pixels, channel=1), f"toolbar is not green: {pixels}"
    finally:
        await browser.stop()
