"""Item 9 of issue 15: an agent's new tab does not steal the focus, and its screenshots
still work. A real headed Chromium on a private Xvfb display; the X input focus is read
with libX11 (what a window manager would move on activation)."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from typing import Any

import httpx
import pytest
from tests.gui.conftest import gui_config, wait_for
from tests.gui.xdisplay import missing_tools, xvfb_with_tray

from browserdeck import config

LIBX11 = ctypes.util.find_library("X11")
pytestmark = pytest.mark.skipif(
    not LIBX11 or "Xvfb" in missing_tools(), reason="needs Xvfb and libX11"
)


def _focus(display: str) -> int:
    x = ctypes.cdll.LoadLibrary(LIBX11 or "libX11.so.6")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XGetInputFocus.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_ulong),
        ctypes.POINTER(ctypes.c_int),
    ]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x.XOpenDisplay(display.encode())
    assert dpy, f"cannot open {display}"
    window, revert = ctypes.c_ulong(), ctypes.c_int()
    x.XGetInputFocus(dpy, ctypes.byref(window), ctypes.byref(revert))
    x.XCloseDisplay(dpy)
    return window.value


async def test_agent_tabs_do_not_steal_focus_and_screenshot(
    bd_home: Any, chromium_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from browserdeck.master import build_service

    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)
    config.save(gui_config(headless=False))
    with xvfb_with_tray(tray=False) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        service = build_service()
        await service.start()
        try:
            ctx = service.contexts["agent"]
            await ctx.start()
            assert ctx.chrome is not None and not ctx.chrome.headless
            # The browser's first window has the focus (the user is looking at it).
            await wait_for(lambda: _focus(x.display) > 1, what="a focused window")
            before = _focus(x.display)
            async with httpx.AsyncClient(
                base_url=service.url,
                trust_env=False,
                timeout=30,
                headers={"Authorization": f"Bearer {service.api_token}"},
            ) as agent:
                tab = (
                    await agent.post("/tabs/open", json={"url": "data:text/html,<h1>agent</h1>"})
                ).json()
                await asyncio.sleep(1.0)  # give a focus change time to happen, if any
                assert _focus(x.display) == before, "the agent's tab took the focus"
                shot = await agent.post(
                    "/screenshot", json={"targetId": tab["targetId"], "inline": True}
                )
                assert shot.status_code == 200, shot.text
                assert shot.json()["width"] > 100
        finally:
            await service.stop()
