"""Issue 9: the observation right after an action shows what the action caused.

Pages whose effects arrive late (tests/support/asyncsite.py, 400 ms by default); each
test acts through the engine and then takes a snapshot at once, with no sleep between:
the snapshot must show the outcome. Each fails with ``actionWaitMs`` 0 (no waiting),
and the reveal test fails with the old prepared-snapshot reuse.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from browserdeck.engine import Engine, options
from browserdeck.errors import ActionTimeout
from tests.engine.conftest import Tab, _http, ref_of
from tests.support.answers import fields_of
from tests.support.asyncsite import AsyncSite, start_async_site
from tests.support.browsers import RawChromium

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_HANG = 15.0  # seconds: a generous bound, not a speed assertion


@pytest.fixture(scope="module")
def asite() -> Iterator[AsyncSite]:
    s = start_async_site()
    yield s
    s.close()


class ATab(Tab):
    async def open(self, path: str, d: int | None = 400, **kw: Any) -> dict[str, Any]:
        return fields_of(
            await self.engine.navigate(
                self.cdp_url,
                self.target_id,
                None,
                options.NavigateOptions(url=self.asite.url(path, d), **kw),
            )
        )

    async def click(self, snapshot_line: str, **kw: Any) -> dict[str, Any]:
        ref = ref_of((await self.snap())["snapshot"], snapshot_line)
        return await asyncio.wait_for(self.act(kind="click", ref=ref, **kw), NO_HANG)

    asite: AsyncSite


@pytest_asyncio.fixture(loop_scope="module")
async def atab(engine: Engine, browser: RawChromium, asite: AsyncSite) -> AsyncIterator[ATab]:
    info = _http(f"{browser.cdp_url}/json/new?about:blank", method="PUT")
    t = ATab(engine, browser, None, info["id"])  # type: ignore[arg-type]
    t.asite = asite
    try:
        yield t
    finally:
        with contextlib.suppress(OSError):
            _http(f"{browser.cdp_url}/json/close/{info['id']}")


@pytest.mark.parametrize("page", ["/fetch.html", "/xhr.html", "/timer.html"])
async def test_a_click_waits_for_the_requests_it_started(atab: ATab, page: str) -> None:
    await atab.open(page)
    out = await atab.click('button "Load"')
    assert "1 request finished" in out["outcome"], out
    assert "Loaded: 42" in (await atab.snap())["snapshot"]


async def test_a_request_started_in_answer_to_a_response_is_waited_for_too(atab: ATab) -> None:
    # The second fetch starts only once the first answered: the page's answer to what
    # finished is still the action's consequence.
    await atab.open("/chain.html", d=200)
    out = await atab.click('button "Load"')
    assert "2 requests finished" in out["outcome"], out
    assert "Both: 84" in (await atab.snap())["snapshot"]


async def test_a_link_to_a_late_page_waits_for_the_new_document(atab: ATab) -> None:
    await atab.open("/link.html")
    out = await atab.click('link "Go slow"')
    assert out["outcome"].startswith("navigated to ") and "/slow-page" in out["outcome"], out
    snap = await atab.snap()
    assert snap["title"] == "Slow target" and 'heading "Arrived"' in snap["snapshot"]


async def test_a_form_post_and_its_redirect(atab: ATab) -> None:
    await atab.open("/form.html")
    ref = ref_of((await atab.snap())["snapshot"], 'textbox "Name"')
    out = await asyncio.wait_for(
        atab.act(kind="type", ref=ref, text="Ann", submit=True), NO_HANG
    )
    assert "navigated to" in out["outcome"] and "/done" in out["outcome"], out
    assert "Thanks, Ann" in (await atab.snap())["snapshot"]


async def test_a_pushstate_route_that_renders_late(atab: ATab) -> None:
    await atab.open("/spa.html")
    out = await atab.click('button "Items"')
    assert "(same document)" in out["outcome"] and "1 request finished" in out["outcome"], out
    snap = await atab.snap()
    assert snap["url"].endswith("/spa/items") and "Items: 3" in snap["snapshot"]


async def test_infinite_scroll_loads_more_rows_before_the_key_press_returns(atab: ATab) -> None:
    await atab.open("/scroll.html")
    assert "Row 31" not in (await atab.snap())["snapshot"]
    out = await asyncio.wait_for(atab.act(kind="press", key="End"), NO_HANG)
    assert "request finished" in out["outcome"], out
    assert "Row 40" in (await atab.snap())["snapshot"]


async def test_a_popup_is_reported_with_its_address(atab: ATab) -> None:
    await atab.open("/popup.html", d=None)
    out = await atab.click('button "Open"')
    assert "a popup or new tab opened" in out["outcome"], out
    assert out["popups"] and out["popups"][0].endswith("/target.html?from=popup")
    for target in _http(f"{atab.cdp_url}/json/list"):
        if target.get("url", "").endswith("from=popup"):
            _http(f"{atab.cdp_url}/json/close/{target['id']}")


async def test_websocket_eventsource_and_an_older_long_poll_do_not_stall(atab: ATab) -> None:
    await atab.open("/live.html")
    await atab.act(kind="wait", text="sse: tick")  # the stream is open
    started = time.monotonic()
    out = await atab.click('button "Load"')
    assert "waitBoundHit" not in out and "1 request finished" in out["outcome"], out
    assert time.monotonic() - started < 4.0  # far below the 5 s bound: nothing stalled it
    assert "Loaded: 42" in (await atab.snap())["snapshot"]


async def test_a_long_poll_the_action_started_ends_at_the_bound_and_says_so(atab: ATab) -> None:
    await atab.open("/live.html")
    out = await atab.click('button "Poll"', waitMs=800)
    assert out.get("waitBoundHit") is True and "/poll" in out["outcome"], out
    assert "Loaded: 42" in (await atab.snap())["snapshot"]


async def test_a_click_with_no_network_effect_says_so(atab: ATab) -> None:
    await atab.open("/static.html", d=None)
    out = await atab.click('button "Count"')
    assert out["outcome"] == "no navigation or network activity", out
    assert "Count: 1" in (await atab.snap())["snapshot"]


async def test_wait_zero_returns_before_the_response(atab: ATab) -> None:
    # The control for the tests above: without waiting, the page is still loading.
    await atab.open("/fetch.html", d=1500)
    out = await atab.click('button "Load"', waitMs=0)
    assert "outcome" not in out
    assert "Loaded: 42" not in (await atab.snap())["snapshot"]


async def test_a_debounced_search_then_a_wait_for_its_text(atab: ATab) -> None:
    # The debounce is the page's own delay, not the action's consequence: typing returns
    # at once, and a wait for the text returns as soon as it is there.
    await atab.open("/search.html")
    ref = ref_of((await atab.snap())["snapshot"], 'textbox "Search"')
    await atab.act(kind="type", ref=ref, text="cats")
    waited = await asyncio.wait_for(atab.act(kind="wait", text="Result for cats"), NO_HANG)
    assert waited["waited"] == ["text"]
    assert "Result for cats" in (await atab.snap())["snapshot"]


async def test_a_debounced_search_then_a_wait_for_network_quiet(atab: ATab) -> None:
    # The same page, waiting for the network instead of a text: the fetch starts 300 ms
    # after typing (the debounce), so the wait must not return before it even began.
    # (Playwright's networkidle load state would: it was reached when the page loaded.)
    await atab.open("/search.html")
    await atab.act(kind="wait", loadState="networkidle")  # the page's own load is over
    ref = ref_of((await atab.snap())["snapshot"], 'textbox "Search"')
    await atab.act(kind="type", ref=ref, text="dogs")
    waited = await asyncio.wait_for(atab.act(kind="wait", networkQuiet=True), NO_HANG)
    assert waited["waited"] == ["networkQuiet"]
    assert "Result for dogs" in (await atab.snap())["snapshot"]


async def test_network_quiet_ignores_streams_and_names_what_stays_open(atab: ATab) -> None:
    # A WebSocket and an EventSource stream never keep the network busy; a long poll the
    # page starts does, until the timeout, and the error names it.
    await atab.open("/live.html")
    await atab.act(kind="wait", text="sse: tick")
    await atab.click('button "Poll"', waitMs=0)
    with pytest.raises(ActionTimeout, match=r"did not go quiet.*still open.*/poll\?again=1"):
        await asyncio.wait_for(
            atab.act(kind="wait", networkQuiet=True, timeoutMs=1500), NO_HANG
        )


@pytest.mark.parametrize(
    ("page", "texts"),
    [
        ("/reveal.html", ("Revealed by animation", "Revealed by transition")),
        ("/reveal-timer.html", ("Revealed by timer",)),
    ],
)
async def test_what_css_and_timers_reveal_after_load_is_in_the_snapshot(
    atab: ATab, page: str, texts: tuple[str, ...]
) -> None:
    # Navigate (the engine prepares the first snapshot), think for a second, snapshot:
    # a CSS animation and transition (no DOM change) or a timer revealed text meanwhile.
    await atab.open(page, d=None, prepareSnapshot="wait")
    await asyncio.sleep(1.0)  # the agent thinking; the page moves on meanwhile
    snap = (await atab.snap())["snapshot"]
    for text in texts:
        assert text in snap, snap


async def test_refs_keep_one_counter_across_navigations(atab: ATab) -> None:
    await atab.open("/static.html", d=None)
    first = ref_of((await atab.snap())["snapshot"], 'button "Count"')
    await atab.open("/popup.html", d=None)
    second = ref_of((await atab.snap())["snapshot"], 'button "Open"')
    await atab.open("/static.html", d=None)
    third = ref_of((await atab.snap())["snapshot"], 'button "Count"')
    refs = [first, second, third]
    assert all(r.startswith("e") for r in refs), refs  # no f prefix in the main frame
    numbers = [int(r[1:]) for r in refs]
    assert numbers == sorted(set(numbers)), refs  # never repeated
    with pytest.raises(Exception) as failed:
        await atab.act(kind="click", ref=first)
    assert "not in the latest snapshot" in str(failed.value) or "stale" in str(failed.value)


async def test_labels_after_a_navigation_use_a_snapshot_of_the_new_document(atab: ATab) -> None:
    await atab.open("/static.html", d=None)
    await atab.snap()
    await atab.open("/popup.html", d=None)
    shot = await atab.engine.screenshot(
        atab.cdp_url, atab.target_id, None, options.ScreenshotOptions(labels=True, inline=True)
    )
    assert shot.labels and shot.skipped == 0, shot
    assert "took one" in (shot.note or "")


async def test_setting_a_file_waits_for_the_upload_the_page_starts(
    atab: ATab, upload_file: Path
) -> None:
    await atab.open("/upload.html")
    ref = ref_of((await atab.snap())["snapshot"], 'button "File"')
    out = await asyncio.wait_for(
        atab.engine.arm_file_chooser(
            atab.cdp_url,
            atab.target_id,
            None,
            options.FileChooserOptions(inputRef=ref, paths=[str(upload_file)]),
        ),
        NO_HANG,
    )
    assert "1 request finished" in (out.outcome or ""), out
    assert "Uploaded: hello.txt" in (await atab.snap())["snapshot"]
