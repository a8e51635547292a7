"""Big pages through MCP (issue 14 items 6 and 7): small, and readable over the cap.

The official MCP client drives `browserdeck mcp` over stdio (in-process service, real
headless Chromium) on generated pages (tests/support/bigpages.py). Effects of clicks are
read back from the page itself (a log element the page's own handlers write).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.async_api import async_playwright

from browserdeck.mcpserver import snapshot
from tests.mcp.harness import call, call_error, mcp_config, stdio_client
from tests.mcp.site import PAGES
from tests.support import bigpages
from tests.support.browsers import RawChromium

# Row 120 has a control no other row has: it must stay visible when rows fold.
PAGES["/big/orders.html"] = bigpages.table(200).replace(
    "hit('Delete 120')\">Delete", "hit('Refund 120')\">Refund"
)
PAGES["/big/list.html"] = bigpages.long_list(300)
PAGES["/big/grid.html"] = bigpages.product_grid(150)
PAGES["/big/article.html"] = bigpages.article(120)
PAGES["/big/table200.html"] = bigpages.table(200)
PAGES["/big/article40.html"] = bigpages.article(40)
# Over the engine's default cap (200,000 characters of snapshot): about 220 a row.
PAGES["/big/table2000.html"] = bigpages.table(2000)

FOLD = re.compile(
    r"- … (\w+) (\d+)–(\d+): (\d+) more like the above \(to see them: browser_snapshot "
    r"(\{[^}]*\})"
)
SAVED = re.compile(r"the whole snapshot \(([\d,]+) characters\) is in (\S+?)\]")


def button_ref(text: str, order: int, name: str) -> str:
    """The ref of button ``name`` in the row of order ``order`` (one line per row)."""
    row = next(line for line in text.splitlines() if f'"Order {order}" |' in line)
    m = re.search(rf'button "{name}" \[ref=([^\]]+)\]', row)
    assert m, row
    return m.group(1)


async def log_text(client: object) -> str:
    return await call(
        client,  # type: ignore[arg-type]
        "browser_evaluate",
        {"function": "() => document.getElementById('log').textContent"},
    )


async def test_table_over_the_cap_folds_with_refs_that_stay_valid(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--max-chars", "6000") as client:
        await call(client, "browser_navigate", {"url": f"{site}/big/orders.html"})
        text = await call(client, "browser_snapshot")
        assert len(text) <= 6000, len(text)
        # The page's shape: landmarks, headings, controls outside the table, both ends.
        for needle in (
            "- banner:",
            'link "Home"',
            'heading "Orders" [level=1]',
            'button "Export" [ref=',
            "- contentinfo:",
            'link "Help"',
            '"Order 1" |',
            '"Order 200" |',
        ):
            assert needle in text, needle
        # The one distinct control stays visible, in its own row.
        assert 'button "Refund" [ref=' in text and '"Order 120" |' in text
        folds = FOLD.findall(text)
        assert folds, text
        noun, first, last, count, how = folds[0]
        assert noun == "rows" and int(count) == int(last) - int(first) + 1 > 50
        assert f'"Order {int(first) - 1}" |' in text and f'"Order {int(first)}" |' not in text
        # The whole text went to a file.
        saved = SAVED.search(text)
        assert saved, text[-300:]
        full = Path(saved.group(2)).read_text(encoding="utf-8")
        assert '"Order 77" |' in full and '"Order 77" |' not in text

        # Expanding a fold: the rows it hid, with the refs the full snapshot has.
        args = json.loads(how)
        assert set(args) == {"ref", "range"}
        args["range"] = f"{int(first) + 10}-{int(first) + 12}"
        part = await call(client, "browser_snapshot", args)
        order = int(first) + 10
        assert f'"Order {order}" |' in part and f'"Order {order + 3}" |' not in part
        delete = button_ref(part, order, "Delete")
        assert delete == button_ref(full, order, "Delete")  # expanding never renumbers
        # A ref from a folded row acts on that row's element.
        await call(client, "browser_click", {"ref": delete})
        assert await log_text(client) == f"clicked Delete {order}"
        # ... also one read from the saved file, never shown inline.
        await call(client, "browser_click", {"ref": button_ref(full, 77, "Edit")})
        assert await log_text(client) == "clicked Edit 77"
        # And the rows shown stay numbered as before.
        again = await call(client, "browser_snapshot")
        assert button_ref(again, 1, "Edit") == button_ref(text, 1, "Edit")

        bad = await call_error(client, "browser_snapshot", {"ref": "e99999", "range": "1-2"})
        assert "e99999" in bad and "snapshot" in bad
        bad = await call_error(client, "browser_snapshot", {"ref": args["ref"], "range": "9-3"})
        assert "range" in bad

        # Only what is in the viewport (the clicks above scrolled the page to row 77).
        seen = await call(client, "browser_snapshot", {"viewport": True})
        assert '"Order 77" |' in seen and "…" not in seen
        assert '"Order 1" |' not in seen and '"Order 200" |' not in seen
        await call(client, "browser_evaluate", {"function": "() => scrollTo(0, 1e6)"})
        seen = await call(client, "browser_snapshot", {"viewport": True})
        assert '"Order 200" |' in seen and '"Order 77" |' not in seen


async def test_lists_grids_and_articles_fold_to_the_cap(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    mcp_config(bd_home)
    cases = {
        # page: (noun, what must stay visible)
        "list": ("items", ['heading "Latest items"', 'heading "Archive"', '"Item 300"']),
        "grid": (
            "cards",
            ['searchbox "Search products"', 'heading "All products"', "Product 150", "Next page"],
        ),
        "article": ("paragraphs", [f'heading "Section {n}"' for n in range(1, 13)]),
    }
    async with stdio_client(bd_home, chromium_path, "--max-chars", "8000") as client:
        for page, (noun, visible) in cases.items():
            await call(client, "browser_navigate", {"url": f"{site}/big/{page}.html"})
            text = await call(client, "browser_snapshot")
            assert len(text) <= 8000, (page, len(text))
            for needle in visible:
                assert needle in text, (page, needle)
            folds = FOLD.findall(text)
            assert folds and all(f[0] == noun for f in folds), (page, text[:2000])
            assert SAVED.search(text), page
            # Every fold expands to exactly the siblings it hid.
            _, first, last, count, how = folds[0]
            assert int(count) == int(last) - int(first) + 1
            part = await call(client, "browser_snapshot", json.loads(how))
            assert f"children {first}–{last} of" in part, part[:300]


async def test_snapshot_size_uncapped(
    bd_home: Path, chromium_path: str, site: str, chromium: RawChromium
) -> None:
    """200 rows x 2 buttons: <= 0.5x Playwright's own ai snapshot, every button a ref;
    an article: <= 1.05x its visible text + 10 characters per link."""
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(chromium.cdp_url)
        page = await browser.contexts[0].new_page()
        await page.goto(f"{site}/big/table200.html")
        playwright_chars = len(await page.aria_snapshot(mode="ai"))
        await page.goto(f"{site}/big/article40.html")
        article_text = len(await page.evaluate("document.body.innerText"))
        links = await page.locator("a").count()
        await browser.close()

    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--max-chars", "2000000") as client:
        await call(client, "browser_navigate", {"url": f"{site}/big/table200.html"})
        table = await call(client, "browser_snapshot")
        assert len(table) <= 0.5 * playwright_chars, (len(table), playwright_chars)
        for order in (1, 100, 200):
            for name in ("Edit", "Delete"):
                button_ref(table, order, name)
        assert len(re.findall(r'button "(?:Edit|Delete)" \[ref=', table)) == 400

        await call(client, "browser_navigate", {"url": f"{site}/big/article40.html"})
        article = await call(client, "browser_snapshot")
        assert len(article) <= 1.05 * article_text + 10 * links, (len(article), article_text)
        assert len(snapshot.refs_in(article)) == links


async def test_a_snapshot_over_the_default_cap_says_it_was_cut(
    bd_home: Path, chromium_path: str, site: str
) -> None:
    # The engine cuts a snapshot at 200,000 characters; the tool says so and how to see
    # the rest (it used to be a tool error: the answer's model did not match the cut).
    mcp_config(bd_home)
    async with stdio_client(bd_home, chromium_path, "--max-chars", "2000000") as client:
        await call(client, "browser_navigate", {"url": f"{site}/big/table2000.html"})
        text = await call(client, "browser_snapshot")
        cut = re.search(
            r"the page's snapshot was cut at ([\d,]+) of ([\d,]+) lines \(([\d,]+) of "
            r"([\d,]+) characters\): to see the rest, scope browser_snapshot with selector",
            text,
        )
        assert cut, text[:2000]
        shown, total, shown_chars, total_chars = (int(g.replace(",", "")) for g in cut.groups())
        assert shown < total and shown_chars <= 200_000 < total_chars
        assert '"Order 1" |' in text and '"Order 2000" |' not in text
        found = await call(client, "browser_find", {"text": "Order 2"})
        assert "searched what was shown: the page's snapshot was cut" in found


def test_fold_plan_keeps_kinds_and_folds_data() -> None:
    rows = "\n".join(
        f'    - row [ref=e{i}0]:\n      - cell "Order {i}" [ref=e{i}1]\n'
        f'      - button "{"Refund" if i == 12 else "Delete"}" [ref=e{i}2]'
        for i in range(1, 31)
    )
    raw = f'- main [ref=e1]:\n  - heading "Orders" [level=1] [ref=e2]\n  - rowgroup [ref=e3]:\n{rows}'
    text = snapshot.folded(raw, 1200)
    assert text is not None and len(text) <= 1200, text
    assert 'heading "Orders"' in text
    assert '"Order 12" | button "Refund" [ref=e122]' in text  # the distinct control
    assert '"Order 1" |' in text and '"Order 30" |' in text
    assert "rows 4–11: 8 more like the above" in text
    assert '{"ref": "e3", "range": "4-11"}' in text
    assert '"Order 7"' not in text  # "Order 7" is data, folded
    expanded = snapshot.expand(raw, "e3", 7, 7)
    assert expanded == ('- row: "Order 7" | button "Delete" [ref=e72]', 30)
    assert snapshot.folded(raw, 100_000) is None  # under the cap nothing folds
