"""Cookies and web storage for the current page, over MCP (Playwright MCP's tool names) and
``POST /storage``, with secrets redacted in what is listed (issue 36).

Real service and Chromium, the login site on a local server: an agent sets, gets, lists,
deletes and clears cookies and localStorage/sessionStorage items of the page's origin.
A cookie and an item holding a secret's value list as ``<secret>NAME</secret>``.
Clearing cookies leaves other sites' cookies alone unless ``all`` is asked.
"""

from __future__ import annotations

from browserdeck.secrets import vault
from tests.mcp.harness import call, http_client
from tests.support.loginsite import PASSWORD, serve_login_site
from tests.support.service import running_service


async def test_cookie_and_storage_tools_redact_secrets() -> None:
    with serve_login_site() as site:
        vault.shared().set("site", [site.url], PASSWORD)
        async with running_service() as (service, api):
            async with http_client(f"{service.url}/mcp?tools=all", service.api_token) as client:
                await call(client, "browser_navigate", {"url": f"{site.url}/blank.html"})
                await call(client, "browser_cookie_set", {"name": "pw", "value": PASSWORD})
                await call(client, "browser_cookie_set", {"name": "theme", "value": "dark"})
                listed = await call(client, "browser_cookie_list")
                assert '"pw"="<secret>site</secret>" (domain: 127.0.0.1' in listed, listed
                assert '"theme"="dark"' in listed and PASSWORD not in listed
                got = await call(client, "browser_cookie_get", {"name": "theme"})
                assert '"theme"="dark"' in got
                assert "none found" in await call(client, "browser_cookie_get", {"name": "nope"})
                assert "1 removed" in await call(client, "browser_cookie_delete", {"name": "theme"})
                assert "theme" not in await call(client, "browser_cookie_list")

                for area in ("localstorage", "sessionstorage"):
                    await call(client, f"browser_{area}_set", {"key": "k", "value": "v1"})
                    await call(client, f"browser_{area}_set", {"key": "pw", "value": PASSWORD})
                    items = await call(client, f"browser_{area}_list")
                    assert f"of {site.url}" in items and '"k"="v1"' in items, items
                    assert '"pw"="<secret>site</secret>"' in items and PASSWORD not in items
                    assert '"k"="v1"' in await call(client, f"browser_{area}_get", {"key": "k"})
                    assert "1 removed" in await call(client, f"browser_{area}_delete", {"key": "k"})
                    assert "1 removed" in await call(client, f"browser_{area}_clear")
                    assert "none found" in await call(client, f"browser_{area}_list")

                # Another site's cookie: the page's clear leaves it, clear all takes it.
                await call(client, "browser_navigate", {"url": f"{site.other}/blank.html"})
                await call(client, "browser_cookie_set", {"name": "elsewhere", "value": "1"})
                await call(client, "browser_navigate", {"url": f"{site.url}/blank.html"})
                assert "1 removed" in await call(client, "browser_cookie_clear")
                everything = await call(client, "browser_cookie_list", {"all": True})
                assert '"elsewhere"="1"' in everything and '"pw"' not in everything, everything
                await call(client, "browser_cookie_clear", {"all": True})
                assert "none found" in await call(client, "browser_cookie_list", {"all": True})
            # The same requests over the API, one body per kind, in a tab of its own (the
            # MCP session's tab went with its session).
            tab = (await api.post("/tabs/open", json={"url": f"{site.url}/blank.html"})).json()
            target = {"targetId": tab["targetId"]}
            answer = await api.post("/storage", params=target, json={
                "kind": "storage_set", "area": "session", "key": "a", "value": PASSWORD})
            assert answer.status_code == 200, answer.text
            listed_api = await api.post(
                "/storage", params=target, json={"kind": "storage_list", "area": "session"}
            )
            assert listed_api.json().get("items") == [{"key": "a", "value": "<secret>site</secret>"}], listed_api.text
            bad = await api.post("/storage", json={"kind": "storage_list", "area": "disk"})
            assert bad.status_code == 400 and "area" in bad.text
            secrets = (await api.get("/secrets")).json()["secrets"]
            assert secrets == [{"name": "site", "origins": [site.url], "value": True, "totp": False}]


async def test_web_storage_of_a_page_without_an_origin_is_a_clear_error() -> None:
    async with running_service() as (_service, api):
        await api.post("/tabs/open", json={"url": "about:blank"})
        answer = await api.post("/storage", json={"kind": "storage_list"})
        assert answer.status_code == 409, answer.text
        assert answer.json()["error"]["code"] == "no_origin"
