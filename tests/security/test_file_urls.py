"""Issue 10 item 1: allowFileUrls=false cannot be bypassed.

Through the real API and a real managed Chromium: every spelling Chrome would read as a
file: URL is refused on /tabs/open and /navigate (and so on MCP browser_navigate, which
calls /navigate), and the engine's backstop refuses to read a tab whose real URL is a
file: page, whichever way it got there.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from tests.support.service import running_service

BYPASSES = (
    "view-source:file:///{p}",
    "\u0001file:///{p}",
    "fi\tle:///{p}",
    "fi\nle:///{p}",
    " file:///{p}",
    "filesystem:file:///{p}",
    "view-source:view-source:file:///{p}",
    "blob:file:///{p}",
    "FILE:///{p}",
)


async def test_file_url_spellings_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    async with running_service() as (_service, client):
        opened = await client.post("/tabs/open", json={"url": "about:blank"})
        assert opened.status_code == 200, opened.text
        target = opened.json()["targetId"]
        for form in BYPASSES:
            url = form.format(p=str(secret).lstrip("/"))
            for path, body in (
                ("/tabs/open", {"url": url}),
                ("/navigate", {"url": url, "targetId": target}),
            ):
                resp = await client.post(path, json=body)
                assert resp.status_code in (400, 403), (path, url, resp.text)
                assert "TOP-SECRET" not in resp.text
        tabs = (await client.get("/tabs")).json()
        assert all("secret" not in str(t.get("url")) for t in tabs["tabs"]), tabs


async def _snapshot_text(client: httpx.AsyncClient, target: str) -> httpx.Response:
    return await client.get("/snapshot", params={"targetId": target})


async def test_backstop_refuses_reading_a_file_page(tmp_path: Path) -> None:
    secret = tmp_path / "api-token"
    secret.write_text("TOP-SECRET-TOKEN")
    other = tmp_path / "other.txt"
    other.write_text("OTHER-SECRET")
    async with running_service() as (service, client):
        # A file: page opened while the setting was on; then the user turns it off.
        await service.update_settings(lambda c: setattr(c, "allow_file_urls", True))
        opened = await client.post("/tabs/open", json={"url": other.as_uri()})
        assert opened.status_code == 200, opened.text
        target = opened.json()["targetId"]
        await service.update_settings(lambda c: setattr(c, "allow_file_urls", False))

        # Nothing reads it: snapshot, screenshot, evaluate, console, pdf.
        evaluate = {
            "kind": "evaluate",
            "targetId": target,
            "fn": f"() => {{ location.href = {secret.as_uri()!r}; return document.body.innerText }}",
        }
        for resp in (
            await _snapshot_text(client, target),
            await client.post("/screenshot", json={"targetId": target}),
            await client.post("/act", json=evaluate),
            await client.post("/pdf", json={"targetId": target}),
        ):
            assert resp.status_code == 403, resp.text
            assert resp.json()["error"]["code"] == "file_url_forbidden"
            assert "SECRET" not in resp.text

        # The way out stays open: navigating away works, and then the tab reads fine.
        away = await client.post(
            "/navigate", json={"url": "data:text/html,<p>safe</p>", "targetId": target}
        )
        assert away.status_code == 200, away.text
        snap = await _snapshot_text(client, target)
        assert snap.status_code == 200 and "safe" in snap.text

        # History back to the file page: the result is withheld and the tab is led away.
        back = await client.post("/navigate", json={"action": "back", "targetId": target})
        assert back.status_code == 403, back.text
        assert "SECRET" not in back.text
        for _ in range(100):
            snap = await _snapshot_text(client, target)
            if snap.status_code == 200:
                break
            await asyncio.sleep(0.1)
        assert snap.status_code == 200, snap.text
        assert "SECRET" not in snap.text
        tabs = (await client.get("/tabs")).json()["tabs"]
        assert not any(str(t.get("url", "")).startswith("file:") for t in tabs), tabs
