from __future__ import annotations

from playwright.async_api import Playwright

from browserdeck.relay.server import RelayServer
from tests.relay.harness import ExtBrowser, Site


async def test_smoke(ext: ExtBrowser, relay: RelayServer, pw: Playwright, site: Site) -> None:
    tab_id, target_id = await ext.open_shared(site.url("/page?title=One"))
    browser = await pw.chromium.connect_over_cdp(relay.cdp_url, headers=relay.auth_headers())
    try:
        pages = browser.contexts[0].pages
        assert [p.url for p in pages] == [site.url("/page?title=One")]
        page = pages[0]
        assert await page.title() == "One"
        await page.click("#b")
        assert await page.text_content("#b") == "clicked 1"
        new = await browser.contexts[0].new_page()
        await new.goto(site.url("/page?title=Two"))
        assert await new.title() == "Two"
    finally:
        await browser.close()
