"""DevTools URL handling (no network)."""

from __future__ import annotations

from browserdeck.chrome.endpoint import endpoint_url, normalize_ws_url
from browserdeck.policy.guard import is_loopback_name


def test_endpoint_url_keeps_prefix_and_token() -> None:
    assert endpoint_url("http://h:9222", "/json/list") == "http://h:9222/json/list"
    assert endpoint_url("http://h:9222/", "/json/list") == "http://h:9222/json/list"
    assert (
        endpoint_url("https://h/prefix/?token=abc", "/json/new?about:blank")
        == "https://h/prefix/json/new?about:blank&token=abc"
    )


def test_ws_url_of_a_remote_browser_uses_the_address_we_reached_it_at() -> None:
    local = "ws://127.0.0.1:9222/devtools/browser/u"
    assert normalize_ws_url(local, "http://127.0.0.1:9222") == local
    assert normalize_ws_url(local, "http://localhost:9222") == local
    assert (
        normalize_ws_url("ws://0.0.0.0:9222/devtools/browser/u", "https://remote.example:443/?t=1")
        == "wss://remote.example:443/devtools/browser/u?t=1"
    )
    assert (
        normalize_ws_url("ws://10.0.0.5:9222/devtools/browser/u", "http://tunnel:1234")
        == "ws://10.0.0.5:9222/devtools/browser/u"
    )


def test_loopback_hosts() -> None:
    assert all(is_loopback_name(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.8.9.1"))
    assert not any(is_loopback_name(h) for h in ("10.0.0.1", "example.com", "", None))
