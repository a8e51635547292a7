"""Navigation, screenshots (with labels), console and PDF."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
from PIL import Image

from browserdeck.engine import options
from browserdeck.engine.errors import NavigationFailed
from browserdeck.errors import Conflict, InvalidInput, NotFound
from browserdeck.util import paths
from browserdeck.util.labels import Rect
from tests.engine.conftest import Tab, ref_of
from tests.support.net import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")


# --- navigation -------------------------------------------------------------------


async def test_navigate_returns_final_url_title_and_status(tab: Tab) -> None:
    out = await tab.goto("form.html")
    assert out["url"] == tab.site.url("form.html") and out["title"] == "Form"
    assert out["status"] == 200
    missing = await tab.goto("status/404")
    assert missing["status"] == 404


async def test_back_forward_and_reload(tab: Tab) -> None:
    await tab.goto("form.html")
    await tab.goto("hover.html")
    nav = tab.engine.navigate
    back = await nav(tab.cdp_url, tab.target_id, None, options.NavigateOptions(action="back"))
    assert (back.url or "").endswith("/form.html")
    fwd = await nav(tab.cdp_url, tab.target_id, None, options.NavigateOptions(action="forward"))
    assert (fwd.url or "").endswith("/hover.html") and fwd.title == "Hover"
    await tab.js("document.title = 'changed'")
    again = await nav(tab.cdp_url, tab.target_id, None, options.NavigateOptions(action="reload"))
    assert again.title == "Hover"
    with pytest.raises(Conflict, match="no page forward"):
        await nav(tab.cdp_url, tab.target_id, None, options.NavigateOptions(action="forward"))


async def test_navigate_to_a_download_reports_the_file(tab: Tab) -> None:
    out = await tab.goto("download")
    download = out["download"]
    assert download.suggested_filename == "report.txt"
    assert download.path and Path(download.path).read_text() == "hello download\n"
    assert Path(download.path).parent == paths.artifacts_dir("downloads")


async def test_navigation_errors_say_what_failed(tab: Tab) -> None:
    closed = f"http://127.0.0.1:{free_port()}/"
    with pytest.raises(NavigationFailed, match="ERR_CONNECTION_REFUSED"):
        await tab.goto(closed)
    with pytest.raises(InvalidInput, match="javascript: scheme"):
        await tab.engine.navigate(
            tab.cdp_url, tab.target_id, None, options.NavigateOptions(url="javascript:alert(1)")
        )


# --- screenshots --------------------------------------------------------------------


def image(out: dict[str, object]) -> Image.Image:
    if "base64" in out:
        data = base64.b64decode(str(out["base64"]))
    else:
        data = Path(str(out["path"])).read_bytes()
    return Image.open(io.BytesIO(data))


async def test_viewport_full_page_and_file_location(tab: Tab) -> None:
    await tab.goto("long.html")
    await tab.act(kind="resize", width=800, height=600)
    view = await tab.shot()
    assert Path(view["path"]).parent == paths.artifacts_dir("screenshots")
    assert image(view).size == (800, 600) == (view["width"], view["height"])
    full = await tab.shot(fullPage=True)
    assert full["width"] <= 800 and full["height"] > 15000  # (no scrollbar in full page)


async def test_element_screenshots_by_ref_and_selector_and_jpeg_inline(tab: Tab) -> None:
    await tab.goto("dnd.html")
    snap = (await tab.snap())["snapshot"]
    by_ref = await tab.shot(ref=ref_of(snap, 'region "Drop zone"'))
    assert (by_ref["width"], by_ref["height"]) == (204, 124)
    by_css = await tab.shot(element="#item", type="jpeg", quality=50, inline=True)
    img = image(by_css)
    assert img.format == "JPEG" and img.size == (80, 40) and "path" not in by_css
    with pytest.raises(InvalidInput, match="jpeg only"):
        await tab.shot(quality=50)


async def test_downscale_for_vision_limits(tab: Tab) -> None:
    await tab.goto("long.html")
    await tab.act(kind="resize", width=1200, height=800)
    out = await tab.shot(maxWidth=600, maxHeight=600, inline=True)
    assert (out["width"], out["height"]) == (600, 400) == image(out).size
    assert out["scale"] == 0.5


async def test_labels_box_each_visible_ref_and_leave_no_trace(tab: Tab) -> None:
    await tab.goto("long.html")
    await tab.act(kind="resize", width=800, height=600)
    snap = (await tab.snap())["snapshot"]
    out = await tab.shot(labels=True)
    labels = {label.ref: label.box for label in out["labels"]}
    first = ref_of(snap, 'button "Button 0"')
    assert first in labels
    # Only what is in the viewport: section 0..3 fit in 600px, section 100 does not.
    assert ref_of(snap, 'button "Button 100"') not in labels
    assert out["skipped"] >= 100
    box = labels[first]
    assert 0 <= box.x < 800 and 0 <= box.y < 600 and box.width > 20
    real = await tab.js(
        "(() => { const r = [...document.querySelectorAll('button')][0]"
        ".getBoundingClientRect(); return [r.x, r.y, r.width, r.height] })()"
    )
    assert box.as_list() == pytest.approx(real, abs=1)
    # The overlay is gone before the next engine call on the tab runs.
    after = await tab.snap()
    assert after["snapshot"] == snap
    assert await tab.js("document.getElementById('__browserdeck_labels__')") is None
    # The overlay was in the image: orange pixels where the first box's border is.
    img = image(out).convert("RGB")
    r, g, b = img.getpixel((int(box.x) + 1, int(box.y + box.height / 2)))
    assert r > 200 and 40 < g < 110 and b < 60


async def test_labels_are_capped_at_150(tab: Tab) -> None:
    await tab.goto("big.html?n=600")
    await tab.act(kind="resize", width=1280, height=8000)
    await tab.snap()
    out = await tab.shot(labels=True)
    assert len(out["labels"]) == 150 and out["skipped"] > 0


async def test_labels_include_refs_inside_iframes(tab: Tab) -> None:
    await tab.goto("frames.html")
    await tab.act(
        kind="wait", fn="() => document.getElementById('same').contentDocument?.getElementById('b')"
    )
    await tab.act(kind="resize", width=1000, height=700)
    snap = (await tab.snap())["snapshot"]
    out = await tab.shot(labels=True)
    refs = {label.ref for label in out["labels"]}
    assert set(re.findall(r'button "Frame button" \[ref=(f\d+e\d+)\]', snap)) <= refs


async def test_labels_without_a_snapshot_take_one(tab: Tab) -> None:
    await tab.goto("hover.html")
    out = await tab.shot(labels=True)
    assert out["labels"] and "took one" in out["note"]
    await tab.act(kind="click", ref=out["labels"][1].ref)  # its refs are usable


async def test_screenshot_of_a_missing_element_is_clear(tab: Tab) -> None:
    await tab.goto("hover.html")
    with pytest.raises(Exception, match=r"no element matched|timed out"):
        await tab.shot(element="#nope", timeoutMs=600)
    with pytest.raises(InvalidInput, match="labels apply"):
        await tab.shot(labels=True, element="#h")


# --- console, PDF ---------------------------------------------------------------------


async def test_console_errors_and_requests_with_levels(tab: Tab) -> None:
    await tab.goto("console.html")
    snap = (await tab.snap())["snapshot"]
    for name in ("Log", "Throw", "Fetch missing"):
        await tab.act(kind="click", ref=ref_of(snap, f'button "{name}"'))
    await tab.act(kind="wait", fn="() => performance.getEntriesByType('resource').length > 0")
    con = tab.engine.console
    everything = await con(tab.cdp_url, tab.target_id, None, options.ConsoleOptions())
    texts = [m.text for m in everything.messages]
    assert {"page loaded", "log line", "warn line", "error line"} <= set(texts)
    assert any("boom from page" in e.message for e in everything.errors)
    statuses = {r.url.rsplit("/", 1)[1]: r.status for r in everything.requests}
    assert statuses.get("console.html") == 200
    errors = await con(tab.cdp_url, tab.target_id, None, options.ConsoleOptions(level="error"))
    assert "error line" in [m.text for m in errors.messages]
    assert {m.type for m in errors.messages} == {"error"}
    assert all(r.status == 404 or r.failure for r in errors.requests)
    assert any(r.url.endswith("/status/404") for r in errors.requests)
    warn = await con(tab.cdp_url, tab.target_id, None, options.ConsoleOptions(level="warning"))
    assert [m.text for m in warn.messages][:2] == ["warn line", "error line"]
    assert {m.type for m in warn.messages} == {"warning", "error"}
    await con(tab.cdp_url, tab.target_id, None, options.ConsoleOptions(clear=True))
    after = await con(tab.cdp_url, tab.target_id, None, options.ConsoleOptions())
    assert after.messages == [] and after.errors == []


async def test_pdf_in_headless_chromium(tab: Tab) -> None:
    await tab.goto("form.html")
    out = await tab.engine.pdf(tab.cdp_url, tab.target_id, None, options.PdfOptions())
    data = Path(out.path or "").read_bytes()
    assert data.startswith(b"%PDF") and out.size == len(data)
    inline = await tab.engine.pdf(tab.cdp_url, tab.target_id, None, options.PdfOptions(inline=True))
    assert base64.b64decode(inline.base64 or "").startswith(b"%PDF")


async def test_unknown_tab_is_not_found(tab: Tab) -> None:
    with pytest.raises(NotFound, match="is not open"):
        await tab.engine.snapshot(tab.cdp_url, "0" * 32, None, options.SnapshotOptions())


async def test_labels_use_the_offset_refs_after_a_new_document(tab: Tab) -> None:
    await tab.goto("dupes.html")
    await tab.snap()
    await tab.goto("dupes.html")
    snap = (await tab.snap())["snapshot"]
    refs = set(re.findall(r"\[ref=([^\]]+)\]", snap))
    out = await tab.shot(labels=True)
    labelled = {label.ref for label in out["labels"]}
    assert labelled and labelled <= refs
    assert ref_of(snap, 'button "Add row"') in labelled


DENSE = (
    "data:text/html,<style>body{font:14px sans-serif;margin:8px}td{padding:2px}"
    "label{display:block;margin-top:6px}</style>"
    "<form><label for=n>Full name</label><input id=n>"
    "<label for=m>Email address</label><input id=m></form><table>"
    + "".join(
        f"<tr><td>Row {i}</td><td><button>Edit</button><button>Copy</button>"
        "<button>Delete</button></td></tr>"
        for i in range(14)
    )
    + "</table>"
)


async def test_label_badges_sit_outside_boxes_off_text_and_each_other(tab: Tab) -> None:
    await tab.goto(DENSE)
    await tab.act(kind="resize", width=800, height=600)
    await tab.snap()
    out = await tab.shot(labels=True, inline=True)
    labels = out["labels"]
    assert labels
    def rect(d: Rect | dict[str, float]) -> tuple[float, float, float, float]:
        if isinstance(d, Rect):
            return d.x, d.y, d.right, d.bottom
        return d["x"], d["y"], d["x"] + d["width"], d["y"] + d["height"]

    def overlap(a: Rect | dict[str, float], b: Rect | dict[str, float]) -> bool:
        ax1, ay1, ax2, ay2 = rect(a)
        bx1, by1, bx2, by2 = rect(b)
        return min(ax2, bx2) - max(ax1, bx1) > 0.5 and min(ay2, by2) - max(ay1, by1) > 0.5

    badges = [lb.badge for lb in labels if lb.badge]
    boxes = [lb.box for lb in labels]
    # Every ref is drawn or listed: nothing silently dropped.
    assert len(badges) + len(out["unplaced"]) == len(labels)
    assert {lb.ref for lb in labels if not lb.badge} == set(out["unplaced"])
    for i, badge in enumerate(badges):
        assert not any(overlap(badge, b) for b in badges[i + 1 :]), "badges overlap"
        assert not any(overlap(badge, b) for b in boxes), "a badge covers an element"
    # The field labels' text stays readable ("Full name" was cut to "ll name").
    for word in ("Full name", "Email address"):
        text = await tab.js(
            "(() => { const l = [...document.querySelectorAll('label')]"
            f".find(l => l.textContent === '{word}'); const r = document.createRange();"
            " r.selectNodeContents(l); const b = r.getBoundingClientRect();"
            " return {x: b.x, y: b.y, width: b.width, height: b.height} })()"
        )
        assert not any(overlap(badge, text) for badge in badges), f"a badge covers {word!r}"
    # A badge that moved away from its box has a leader line; the image has the badge.
    assert any(lb.leader for lb in labels)
    img = image(out).convert("RGB")
    first = badges[0]
    r, g, b = img.getpixel((int(first.x) + 1, int(first.y + first.height / 2)))
    assert r > 200 and 40 < g < 110 and b < 60
