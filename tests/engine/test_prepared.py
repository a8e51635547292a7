"""The snapshot prepared by a navigation, and the one-round-trip viewport screenshot.

A prepared snapshot only warms the document up: every snapshot call takes its own, so
what the page did since (in any way) is in it (tests/engine/test_consequences.py has the
CSS cases).
Changes are made over the test's own raw CDP connection (``Tab.js``), not the engine.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from typing import Any

import pytest
import websockets
from PIL import Image

from browserdeck.engine import snapshot as snap
from tests.engine.conftest import Tab, ref_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def go(tab: Tab, path: str, mode: str = "wait") -> dict[str, Any]:
    return await tab.goto(path, prepareSnapshot=mode)


async def test_the_next_snapshot_is_taken_anew_and_its_refs_work(tab: Tab) -> None:
    await go(tab, "hover.html")
    first = await tab.snap()
    assert "prepared" not in first and first["title"] == "Hover"
    assert 'button "Hover me"' in first["snapshot"]
    await tab.act(kind="click", ref=ref_of(first["snapshot"], 'button "Counter"'))
    assert await tab.text("#cnt") == "1"


async def test_a_snapshot_asked_for_while_it_runs_waits_for_it_then_takes_its_own(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    original = snap.ai_text

    async def counting(*args: Any, **kwargs: Any) -> str:
        nonlocal calls
        calls += 1
        return await original(*args, **kwargs)

    monkeypatch.setattr(snap, "ai_text", counting)
    await go(tab, "hover.html", mode="background")
    state = await tab.engine.page_state(tab.cdp_url, tab.target_id, None)
    assert state.prepared is not None and state.prepared.task is not None
    assert not state.prepared.task.done()  # still running when the snapshot call comes
    got = await tab.snap()
    assert "prepared" not in got
    assert calls == 2  # the prepared one finished first, then the call's own


async def test_a_page_that_changed_shows_the_change(tab: Tab) -> None:
    await go(tab, "hover.html")
    await tab.js("document.getElementById('tip').textContent = 'changed by the page'")
    got = await tab.snap()
    assert "changed by the page" in got["snapshot"]


async def test_stale_refs_still_fail_closed_after_a_prepared_navigation(tab: Tab) -> None:
    await go(tab, "hover.html")
    old = ref_of((await tab.snap())["snapshot"], 'button "Counter"')
    await go(tab, "hover.html")  # a new document, prepared (its own refs are newer)
    with pytest.raises(Exception, match="take a new snapshot"):
        await tab.act(kind="click", ref=old)
    assert await tab.text("#cnt") == "0"


# --- screenshots: one Page.captureScreenshot ----------------------------------------


def _size(data: dict[str, Any]) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data["base64"]))) as img:
        return img.size


async def test_viewport_screenshot_is_in_css_pixels_on_a_hidpi_page(tab: Tab) -> None:
    await tab.goto("hover.html")
    plain = await tab.shot(inline=True)
    css = await tab.js("[innerWidth, innerHeight]")
    assert _size(plain) == tuple(css) and (plain["width"], plain["height"]) == tuple(css)
    # Device scale factor 2, held by a CDP session of the test's own while it shoots.
    async with websockets.connect(
        f"ws://127.0.0.1:{tab.browser.port}/devtools/page/{tab.target_id}"
    ) as ws:
        await ws.send(
            json.dumps(
                {
                    "id": 1,
                    "method": "Emulation.setDeviceMetricsOverride",
                    "params": {
                        "width": 640,
                        "height": 400,
                        "deviceScaleFactor": 2,
                        "mobile": False,
                    },
                }
            )
        )
        while json.loads(await ws.recv()).get("id") != 1:
            pass
        for _ in range(2):  # the second time with the clip straight away
            shot = await tab.shot(inline=True)
            assert _size(shot) == (640, 400)
        jpeg = await tab.shot(inline=True, type="jpeg", quality=50)
        assert _size(jpeg) == (640, 400)


async def test_screenshot_of_a_tab_that_renders_nothing_times_out_clearly(
    tab: Tab, monkeypatch: pytest.MonkeyPatch
) -> None:
    await tab.goto("hover.html")
    state = await tab.engine.page_state(tab.cdp_url, tab.target_id, None)
    assert state.cdp is not None
    original = state.cdp.send

    async def stuck(method: str, params: Any = None) -> Any:
        if method == "Page.captureScreenshot":
            await asyncio.sleep(5)
        return await original(method, params)

    monkeypatch.setattr(state.cdp, "send", stuck)
    with pytest.raises(Exception, match="timed out after 500 ms") as caught:
        await tab.shot(timeoutMs=500)
    assert "POST /tabs/focus" in str(getattr(caught.value, "hint", ""))
