"""The one URL policy (browserdeck.urls): completion, Chrome-like cleaning, refusals."""

from __future__ import annotations

import pytest

from browserdeck import urls
from browserdeck.errors import Forbidden, InvalidInput


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
