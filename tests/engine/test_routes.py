"""Route patterns: Playwright's glob rules, and the Fetch patterns Chromium pauses by.

A route's glob is narrowed to a ``Fetch.enable`` wildcard pattern so that only what it
may match pauses; that pattern must match at least every URL the glob does, or a
request the route should decide would go by unseen.
"""

from __future__ import annotations

import re

import pytest
from playwright._impl.isomorphic.url_match import url_matches
from pydantic import ValidationError

from browserdeck.engine.netoptions import RouteOptions
from browserdeck.engine.routes import Route, RouteBook, glob_fetch_pattern

URLS = [
    "http://127.0.0.1:8000/api/users",
    "http://127.0.0.1:8000/api/users/",
    "https://example.com/api/users?id=1",
    "https://example.com/v2/api/users",
    "https://cdn.example.com/img/a.png",
    "https://cdn.example.com/img/deep/b.jpg",
    "https://cdn.example.com/img/c.gif",
    "https://example.com/",
    "https://example.com/a*b",
    "https://example.com/search?q=x",
]


def _fetch_matches(pattern: str, url: str) -> bool:
    """Chromium's wildcard match: * any run, ? one character, \\ escapes."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.fullmatch("".join(out), url, re.S) is not None


@pytest.mark.parametrize(
    ("glob", "matched"),
    [
        ("**/api/users", {0, 3}),
        ("**/api/users?id=1", {2}),  # "?" is itself, as in Playwright
        ("**/api/users?id?1", set()),
        ("**/*.{png,jpg}", {4, 5}),
        ("https://cdn.example.com/img/*.png", {4}),
        ("https://cdn.example.com/**", {4, 5, 6}),
        ("https://example.com/a\\*b", {8}),
        ("https://example.com", {7}),  # an origin is its "/" page
        ("**/search?q=x", {9}),
        ("**/search?q=[xy]", set()),  # "[" is itself too
        ("**/api/users{,/}", {0, 1, 3}),
    ],
)
def test_globs_match_as_in_playwright(glob: str, matched: set[int]) -> None:
    route = Route(owner="a", pattern=glob)
    assert {i for i, url in enumerate(URLS) if route.matches(url, "fetch")} == matched
    # Playwright's own matcher (as a wait for a URL reads a glob) agrees.
    assert {i for i, url in enumerate(URLS) if url_matches(None, url, glob)} == matched
    # The pattern Chromium pauses by misses none of them.
    pattern = route.fetch_patterns()[0]["urlPattern"]
    for i in matched:
        assert _fetch_matches(pattern, URLS[i]), (glob, pattern, URLS[i])


def test_narrowed_patterns_leave_the_rest_unpaused() -> None:
    assert glob_fetch_pattern("**/api/users") == "*/api/users*"
    assert not _fetch_matches(glob_fetch_pattern("**/api/users"), "https://example.com/img/a.png")
    assert glob_fetch_pattern("**/*.{png,jpg}") == "*/*.*"
    assert glob_fetch_pattern("**/search?q=x") == "*/search\\?q=x*"
    assert glob_fetch_pattern("https://example.com/a\\**") == "https://example.com/a\\**"


def test_a_glob_that_cannot_match_a_url_is_refused_at_once() -> None:
    with pytest.raises(ValidationError, match="start it with \\*\\* or a scheme"):
        RouteOptions(pattern="api/users", body="{}")
    with pytest.raises(ValidationError, match="unmatched"):
        RouteOptions(pattern="**/{a,b", body="{}")
    assert RouteOptions(pattern="api/users", regex=True, body="{}").regex


def test_a_regex_route_pauses_everything_and_searches_the_url() -> None:
    route = RouteOptions(pattern=r"/api/\w+$", regex=True).route("a")
    assert route.fetch_patterns()[0]["urlPattern"] == "*"
    assert route.matches("https://x.test/v1/api/users", "fetch")
    assert not route.matches("https://x.test/api/users/1", "fetch")


def test_a_resource_type_narrows_a_route() -> None:
    route = RouteOptions(pattern="**/*", abort=True, resourceType="image").route("a")
    assert route.fetch_patterns()[0]["resourceType"] == "Image"
    assert route.matches("https://x.test/a.png", "image")
    assert not route.matches("https://x.test/a.js", "script")
    xhr = RouteOptions(pattern="**/*", abort=True, resourceType="xhr").route("a")
    assert xhr.fetch_patterns()[0]["resourceType"] == "XHR"


def test_route_options_refuse_what_cannot_work() -> None:
    from browserdeck.errors import InvalidInput

    for bad, why in (
        ({"pattern": "(", "regex": True}, "not a regular expression"),
        ({"pattern": "**", "abort": True, "status": 500}, "takes no status"),
        ({"pattern": "**", "headers": ["no colon"]}, 'is not "Name: Value"'),
        ({"pattern": "**", "body": "x", "removeHeaders": "a"}, "not with status or body"),
        ({"pattern": ""}, "at least 1 character"),
    ):
        with pytest.raises(InvalidInput, match=re.escape(why)):
            RouteOptions.of(bad)


def test_the_newest_route_decides_and_owners_see_their_own() -> None:
    book = RouteBook()
    older = RouteOptions(pattern="**/a", body="old").route("ann")
    newer = RouteOptions(pattern="**/a", body="new").route("ann")
    bobs = RouteOptions(pattern="**/a", body="bob").route("bob")
    everyone = RouteOptions(pattern="**/b", abort=True, scope="profile").route("bob")
    for route in (older, newer, bobs, everyone):
        book.add(route)
    assert book.effective({"ann"}) == (everyone, newer, older)
    assert book.effective({"bob"}) == (everyone, bobs)
    assert [r.body for r in book.remove("ann", None)] == [b"old", b"new"]
    assert book.effective({"ann"}) == (everyone,)
    continued = RouteOptions(pattern="**", headers=["X-A: 1"], removeHeaders="Referer, x-b").route("a")
    assert continued.continued_headers({"referer": "r", "X-B": "b", "Accept": "*/*"}) == [
        {"name": "Accept", "value": "*/*"},
        {"name": "X-A", "value": "1"},
    ]
