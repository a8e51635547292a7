"""Bad input is a 4xx that says why, before a tab is made; never a 5xx (issue 11, items 4-5)."""

from __future__ import annotations

import pytest

from tests.chaos.conftest import Deck, error_of

BAD_URLS = [
    "http://256.256.256.256/",
    "javascript:alert(1)",
    "ftp://example.com/file",
    "http://[::1",
    "https://example.com/" + "a" * 3_000_000,
]


@pytest.mark.parametrize("route", ["/tabs/open", "/navigate"])
async def test_bad_urls_are_400_and_open_no_tab(deck: Deck, route: str) -> None:
    target = await deck.open("about:blank")
    before = (await deck.call("GET", "/tabs")).json()["tabs"]
    for url in BAD_URLS:
        body = {"url": url} if route == "/tabs/open" else {"url": url, "targetId": target}
        resp = await deck.call("POST", route, json=body)
        # 413 is the request-size limit (a 3 MB body), also a clear client error.
        assert resp.status_code in (400, 413), (url[:60], resp.status_code, resp.text[:300])
        error_of(resp)
    after = (await deck.call("GET", "/tabs")).json()["tabs"]
    assert [t["targetId"] for t in after] == [t["targetId"] for t in before]


async def test_internal_selectors_and_impossible_waits_are_400(deck: Deck) -> None:
    target = await deck.open("data:text/html,<p>x</p>")
    for selector in ("internal:control=enter-frame", "internal:text=\"x\"i"):
        resp = await deck.call(
            "GET", "/snapshot", params={"targetId": target, "selector": selector}
        )
        assert resp.status_code == 400, resp.text
        error_of(resp)
    for field in ("fn", "textGone", "text", "selector", "url"):
        resp = await deck.call(
            "POST", "/act", json={"kind": "wait", field: "", "targetId": target}
        )
        assert resp.status_code == 400, (field, resp.text)
        assert field in error_of(resp)["message"]


async def test_booleans_are_not_integers(deck: Deck) -> None:
    target = await deck.open("about:blank")
    resp = await deck.call(
        "POST", "/act", json={"kind": "wait", "timeMs": True, "targetId": target}
    )
    assert resp.status_code == 400, resp.text
    resp = await deck.call("POST", "/navigate", json={"url": "about:blank", "timeoutMs": False})
    assert resp.status_code == 400, resp.text


async def test_405_names_the_allowed_methods(deck: Deck) -> None:
    resp = await deck.call("DELETE", "/snapshot")
    assert resp.status_code == 405
    assert resp.headers["allow"] == "GET"
    assert error_of(resp)["code"] == "method_not_allowed"
