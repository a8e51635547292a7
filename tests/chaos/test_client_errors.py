"""Bad input is a 4xx that says why, before a tab is made; never a 5xx (issue 11, items 4-5)."""

from __future__ import annotations

import json

import pytest

from tests.chaos.conftest import Deck, error_of
from tests.support.browsers import RawChromium

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
    # Every route at the path, not the first whose pattern matched (DELETE /tabs/{id}).
    resp = await deck.call("OPTIONS", "/tabs/keep")
    assert resp.status_code == 405 and resp.headers["allow"] == "POST", resp.headers


# URLs no browser loads: each a 400 naming the problem, before a tab is made.
REFUSED_URLS = [
    ("\u00d1\udade\udf3e\u00aa", "invalid_url", "U+C7B3E"),  # the fuzzer's: unassigned
    ("http://a\u05de/", "invalid_url", "left-to-right"),
    ("http://\u200b/", "invalid_url", "map to nothing"),
    ("http://127.0.0.1:0/", "unsafe_port", "port 0"),
    ("http://127.0.0.1:25/", "unsafe_port", "restricted ports"),
    ("chrome://", "invalid_url", "no host"),
]


@pytest.mark.parametrize("route", ["/tabs/open", "/navigate"])
async def test_urls_no_browser_loads_are_400s_saying_why(deck: Deck, route: str) -> None:
    target = await deck.open("about:blank")
    before = (await deck.call("GET", "/tabs")).json()["tabs"]
    for url, code, why in REFUSED_URLS:
        body = {"url": url} if route == "/tabs/open" else {"url": url, "targetId": target}
        # As the fuzzer sent it: JSON with \u escapes (a UTF-16 pair for U+C7B3E).
        resp = await deck.call(
            "POST", route, content=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        assert resp.status_code == 400, (url, resp.text)
        error = error_of(resp)
        assert error["code"] == code and why in error["message"], (url, error)
    after = (await deck.call("GET", "/tabs")).json()["tabs"]
    assert [t["targetId"] for t in after] == [t["targetId"] for t in before]


async def test_a_chrome_page_the_browser_lacks_is_a_404_and_allowed_where_it_exists(
    deck: Deck, chromium: RawChromium
) -> None:
    # The managed headless profile runs Chromium's headless shell: no chrome://settings.
    resp = await deck.call("POST", "/tabs/open", json={"url": "chrome://settings"})
    assert resp.status_code == 404, resp.text
    error = error_of(resp)
    assert error["code"] == "page_not_available"
    assert "not available in this browser" in error["message"]
    assert "headless shell" in error["hint"]
    # A full Chromium (a profile on a browser of one's own) has it.
    created = await deck.call(
        "POST", "/profiles/create", json={"name": "full", "driver": "remote", "cdpUrl": chromium.cdp_url}
    )
    assert created.status_code == 200, created.text
    resp = await deck.call(
        "POST", "/tabs/open", params={"profile": "full"}, json={"url": "chrome://version"}
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["url"].startswith("chrome://version")


async def test_a_url_glob_that_cannot_match_is_a_400_at_once(deck: Deck) -> None:
    target = await deck.open("data:text/html,<p>x</p>")
    for glob, why in (("[[", "cannot match a URL"), ("**/{a", "unmatched '{'")):
        resp = await deck.call(
            "POST", "/act", json={"kind": "wait", "url": glob, "targetId": target}, within=3
        )
        assert resp.status_code == 400, resp.text
        assert why in error_of(resp)["message"], resp.text
    resp = await deck.call("POST", "/act", json={"kind": "wait", "url": "data:**", "targetId": target})
    assert resp.status_code == 200, resp.text


async def test_create_profile_refuses_what_would_break_it_later(deck: Deck) -> None:
    # Each of these was stored, and then every GET /profiles (or the first use) was a 500.
    for body, code in (
        ({"name": "p1", "cdpUrl": "http://host:\u00c3c\u00c1"}, "invalid_url"),
        ({"name": "p2", "cdpUrl": "wss://a\x7fb/"}, "invalid_url"),
        ({"name": "p3", "cdpUrl": "wss://farm/", "tokenHeader": "X-Key", "token": "t\u00e9"}, "invalid_token"),
        ({"name": "p4", "cdpUrl": {}}, "invalid_url"),  # not a string: it was taken
    ):
        resp = await deck.call("POST", "/profiles/create", json=body)
        assert resp.status_code == 400, (body, resp.text)
        assert error_of(resp)["code"] == code, resp.text
    assert (await deck.call("GET", "/profiles")).status_code == 200
    # A well-formed request this profile's kind does not take is a conflict.
    resp = await deck.call("POST", "/profiles/token", json={"token": "abc"})
    assert resp.status_code == 409 and error_of(resp)["code"] == "not_remote", resp.text
    resp = await deck.call("POST", "/reset-profile", params={"profile": "chrome"})
    assert resp.status_code == 409 and error_of(resp)["code"] == "not_managed", resp.text


async def test_integers_may_be_written_as_integral_numbers(deck: Deck) -> None:
    # JSON Schema's "integer" is 7707.0 too; 7707.5 and true are not.
    target = await deck.open("data:text/html,<p>x</p>")
    body = {"kind": "wait", "timeMs": 10.0, "targetId": target}
    assert (await deck.call("POST", "/act", json=body)).status_code == 200
    for value in (10.5, True):
        resp = await deck.call("POST", "/act", json={**body, "timeMs": value})
        assert resp.status_code == 400, resp.text
