"""The one URL policy (browserdeck.policy.urls): completion, Chrome-like cleaning, refusals."""

from __future__ import annotations

import pytest

from browserdeck.errors import Forbidden, InvalidInput
from browserdeck.policy import urls


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("localhost:3000", "http://localhost:3000"),
        ("localhost", "http://localhost"),
        ("127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ("[::1]:9000/", "http://[::1]:9000/"),
        ("10.1.2.3/a", "http://10.1.2.3/a"),
        ("app.localhost:5173", "http://app.localhost:5173"),
        ("example.com", "https://example.com"),
        ("example.com:8443/p?q=1", "https://example.com:8443/p?q=1"),
        ("  https://example.com/  ", "https://example.com/"),
        ("about:blank", "about:blank"),
        ("data:text/html,<p>hi</p>", "data:text/html,<p>hi</p>"),
        ("view-source:https://example.com", "view-source:https://example.com"),
        ("HTTP://Example.com", "HTTP://Example.com"),
    ],
)
def test_completion(raw: str, want: str) -> None:
    assert urls.prepare(raw, allow_file_urls=False) == want


@pytest.mark.parametrize(
    "raw",
    [
        "file:///etc/shadow",
        "FILE:///etc/shadow",
        "\u0001file:///etc/shadow",
        "fi\tle:///etc/shadow",
        "fi\nle:///etc/shadow",
        " \x00file:///etc/passwd",
        "view-source:file:///etc/shadow",
        "view-source:view-source:file:///etc/shadow",
        "filesystem:file:///etc/shadow",
        "blob:file:///abc",
    ],
)
def test_file_urls_refused_in_every_disguise(raw: str) -> None:
    with pytest.raises(Forbidden) as err:
        urls.prepare(raw, allow_file_urls=False)
    assert err.value.code == "file_url_forbidden"


def test_file_urls_allowed_when_the_setting_is_on() -> None:
    assert urls.prepare("fi\tle:///tmp/x", allow_file_urls=True) == "file:///tmp/x"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("http://256.256.256.256/", "invalid_url"),
        ("http://1.2.3.999/", "invalid_url"),
        ("http://[::1", "invalid_url"),
        ("http://[zz::1]/", "invalid_url"),
        ("https:///nohost", "invalid_url"),
        ("http://exa mple.com/", "invalid_url"),
        ("javascript:alert(1)", "unsupported_scheme"),
        ("ftp://example.com/f", "unsupported_scheme"),
        ("chrome-extension://abc/options.html", "unsupported_scheme"),
        ("view-source:javascript:1", "unsupported_scheme"),
        ("", "invalid_url"),
        ("http://a.com/" + "x" * urls.MAX_URL_CHARS, "url_too_long"),
    ],
)
def test_refusals_are_400s_naming_the_problem(raw: str, code: str) -> None:
    with pytest.raises(InvalidInput) as err:
        urls.prepare(raw, allow_file_urls=True)
    assert err.value.code == code
    assert err.value.hint


def test_ip_shorthands_chrome_accepts_pass() -> None:
    assert urls.prepare("http://127.1/", allow_file_urls=False) == "http://127.1/"
    assert urls.prepare("http://0x7f.0.0.1/", allow_file_urls=False) == "http://0x7f.0.0.1/"


def test_empty_means_blank_for_a_new_tab() -> None:
    assert urls.prepare("  ", allow_file_urls=False, empty="about:blank") == "about:blank"


def test_is_file_url_backstop() -> None:
    assert urls.is_file_url("file:///x")
    assert urls.is_file_url("view-source:file:///x")
    assert not urls.is_file_url("https://example.com/file:///x")
    assert not urls.is_file_url("about:blank")


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("\u00d1\U000c7b3e\u00aa", "U+C7B3E"),  # an unassigned code point (the fuzzer's)
        ("\u0378.com", "U+0378"),
        ("a\ue000b", "U+E000"),  # private use
        ("\u200b", "map to nothing"),  # invisible: UTS 46 drops it, and no host is left
        ("x\x85y", "U+0085"),  # a C1 control
        ("a\u05de", "left-to-right"),  # the Bidi rule: Latin then Hebrew
        ("\u0301a", "combining"),
        ("a\u200db", "joiner"),
        ("xn--zz.\u00fc", "Punycode"),  # an invalid xn-- label beside a Unicode one
        ("\u00ad", "map to nothing"),  # a soft hyphen alone
        ("c\uff0e1", "not an IP address"),  # mapped to c.1: ends in a number
        ("09", "not an IP address"),  # 09 is not octal
    ],
)
def test_hosts_chromium_cannot_navigate_to_are_400s_naming_why(host: str, why: str) -> None:
    with pytest.raises(InvalidInput) as err:
        urls.prepare(f"http://{host}/", allow_file_urls=False)
    assert err.value.code == "invalid_url"
    assert why in err.value.message, err.value.message


@pytest.mark.parametrize(
    "host",
    ["b\u00fccher.de", "\u2603.net", "\u0645\u062b\u0627\u0644.test", "xn--n3h.net", "xn--zz",
     "\u00c4\u0301b", "\u3002", "a\uff0eb", "0x", "1.2.3.4", "127.1", "a_b", "\u0131"],
)
def test_hosts_chromium_loads_pass(host: str) -> None:
    assert urls.prepare(f"http://{host}/", allow_file_urls=False) == f"http://{host}/"


def test_restricted_ports_are_400s_saying_why() -> None:
    for url in ("http://127.0.0.1:0/", "https://example.com:25/", "view-source:http://a:6667/"):
        with pytest.raises(InvalidInput) as err:
            urls.prepare(url, allow_file_urls=False)
        assert err.value.code == "unsafe_port"
        assert "restricted ports" in err.value.message and "8080" in (err.value.hint or "")
    for url in ("http://127.0.0.1:8080/", "https://example.com:443/", "http://a:26/", "http://a/"):
        assert urls.prepare(url, allow_file_urls=False) == url


def test_chrome_pages_need_a_host() -> None:
    assert urls.prepare("chrome://version", allow_file_urls=False) == "chrome://version"
    for url in ("chrome://", "chrome:///", "chrome://\u200b/"):
        with pytest.raises(InvalidInput):
            urls.prepare(url, allow_file_urls=False)


def test_what_the_browser_refuses_is_said_as_a_client_error() -> None:
    invalid = urls.refused_by_browser(
        "http://x/", "navigate to x failed: Protocol error (Page.navigate): Cannot navigate "
        "to invalid URL"
    )
    assert invalid is not None and invalid.code == "invalid_url"
    port = urls.refused_by_browser("http://x:1/", "net::ERR_UNSAFE_PORT")
    assert port is not None and port.code == "unsafe_port" and "port 1" in port.message
    page = urls.refused_by_browser("chrome://settings", "failed: net::ERR_INVALID_URL")
    assert page is not None and page.code == "page_not_available"
    assert "not available in this browser" in page.message
    assert urls.refused_by_browser("http://x/", "net::ERR_NAME_NOT_RESOLVED") is None


@pytest.mark.parametrize(
    ("glob", "ok"),
    [
        ("**/done", True),
        ("https://example.com/*", True),
        ("{http,https}://a/*", True),
        ("*", True),
        ("**/a\\{b", True),
        ("[[", False),  # cannot match a URL: it would only run out of time
        ("/done", False),
        ("**/{a", False),
        ("**/a}", False),
        ("**/{a,{b}}", False),
    ],
)
def test_url_globs_are_checked_at_once(glob: str, ok: bool) -> None:
    if ok:
        assert urls.check_glob(glob) == glob
    else:
        with pytest.raises(ValueError, match=r"glob|group"):
            urls.check_glob(glob)


def test_the_published_glob_pattern_is_what_playwright_reads() -> None:
    # The pattern the schema publishes and the check agree with Playwright's own parser on
    # every string of a small alphabet (up to 5 characters): brace groups, escapes, stars.
    import itertools
    import re

    from playwright._impl.errors import Error
    from playwright._impl.isomorphic.url_match import glob_to_regex_pattern

    pattern = re.compile(urls.GLOB_PATTERN)
    for n in range(6):
        for chars in itertools.product("*{},\\a", repeat=n):
            glob = "".join(chars)
            try:
                glob_to_regex_pattern(glob)
                parses = True
            except Error:
                parses = False
            starts = glob[:1] in ("*", "{")
            assert bool(pattern.fullmatch(glob)) == (parses and starts), glob


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:9222", True),
        ("ws://browserless:3000/chromium?token=x", True),
        ("wss://user:p%40ss@farm.example/cdp", True),
        ("WSS://farm.example/cdp", False),  # was taken for an http endpoint: say it
        ("http://[::1]:9222/", True),
        ("http://host:00065535", True),
        ("http://host:\u00c3c\u00c1", False),  # a port that is not one (it was a 500 later)
        ("http://host:65536", False),
        ("wss://a\x7fb/", False),  # a DEL: no client connects to it (a 500 later)
        ("http://b\u00fccher.example/", False),  # a cdpUrl host is ASCII (xn-- for IDN)
        ("http://[:::]/", False),
        ("ftp://host/", False),
        ("http:///x", False),
        ("http://a b/", False),
    ],
)
def test_cdp_urls_are_what_clients_can_connect_to(url: str, ok: bool) -> None:
    from browserdeck import config

    assert bool(urls.CDP_URL.fullmatch(url)) == ok
    if ok:
        assert config.validate_cdp_url(url) == url
    else:
        with pytest.raises(InvalidInput):
            config.validate_cdp_url(url)
