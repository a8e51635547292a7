"""The origin rules (allowedOrigins / blockedOrigins): how they read and what they refuse."""

from __future__ import annotations

import re

import pytest

from browserdeck import config
from browserdeck.errors import InvalidInput
from browserdeck.policy.origins import OriginRules, RuleError, origin_of, parse_rule, rules_of


@pytest.mark.parametrize(
    ("rule", "url", "matches"),
    [
        ("https://example.com", "https://example.com/a?b", True),
        ("https://example.com", "https://example.com:443/", True),
        ("https://example.com", "https://example.com:8443/", False),  # an origin: its port
        ("https://example.com", "http://example.com/", False),
        ("https://example.com", "wss://example.com/socket", True),  # a WebSocket's twin
        ("example.com", "http://example.com:3000/", True),  # a host: any scheme and port
        ("example.com", "https://www.example.com/", False),
        ("*.example.com", "https://example.com/", True),  # the apex too
        ("*.example.com", "https://a.b.example.com/", True),
        ("*.example.com", "https://badexample.com/", False),
        ("http://localhost:*", "http://localhost:5173/", True),
        ("http://localhost:*", "https://localhost:5173/", False),
        ("api-*.corp", "https://api-eu.corp/", True),
        ("*", "https://anything.test/", True),
        ("EXAMPLE.com", "https://Example.COM/", True),
    ],
)
def test_a_rule_matches_its_origins(rule: str, url: str, matches: bool) -> None:
    origin = origin_of(url)
    assert origin is not None
    assert bool(parse_rule(rule).compiled.match(origin)) is matches


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("https://example.com/path", "without a path"),
        ("ftp://example.com", "scheme 'ftp'"),
        ("[::1]", "IPv6"),
        ("", "empty"),
        ("exa mple.com", "not a host name"),
        ("https://", "not an origin"),
        ("http://example.com:99999", "out of range"),
        ("ex..ample", "not a host name"),
    ],
)
def test_a_rule_that_cannot_be_read_says_why(raw: str, why: str) -> None:
    with pytest.raises(RuleError, match=re.escape(why)):
        parse_rule(raw)


def test_a_block_wins_and_an_allow_list_refuses_the_rest() -> None:
    rules = rules_of(("example.com", "*.corp"), ("ads.example.com", "secret.corp"))
    assert rules.refusal("https://example.com/") is None
    assert rules.refusal("https://secret.corp/") == "blockedOrigins rule 'secret.corp'"
    assert rules.refusal("https://evil.test/") == "not in allowedOrigins ('example.com', '*.corp')"
    # What has no origin is never refused: data:, blob:, about:.
    for url in ("data:text/html,hi", "about:blank", "blob:https://evil.test/x"):
        assert rules.refusal(url) is None
    assert rules_of((), ()) is rules_of((), ())  # cached, and inactive
    assert not rules_of((), ()).active


def test_chromiums_patterns_follow_the_same_order() -> None:
    rules = OriginRules(
        allowed=(parse_rule("https://example.com"),), blocked=(parse_rule("*.ads.test"),)
    )
    patterns = rules.block_patterns()
    assert patterns[0] == {"urlPattern": "http://ads.test:*/*", "block": True}
    assert {"urlPattern": "https://example.com/*", "block": False} in patterns
    assert patterns[-2:] == [
        {"urlPattern": "http://*:*/*", "block": True},
        {"urlPattern": "https://*:*/*", "block": True},
    ]
    # Blocks first (the first that matches decides), then allows, then the rest.
    kinds = [p["block"] for p in patterns]
    assert kinds == [True] * 4 + [False] + [True] * 2, patterns


def test_the_settings_take_rules_and_refuse_bad_ones() -> None:
    setting = config.SETTING_KEYS["allowedOrigins"]
    assert config.check_setting(setting, "https://a.test, *.b.test\nlocalhost:*") == [
        "https://a.test", "*.b.test", "localhost:*",
    ]
    with pytest.raises(InvalidInput, match="is not an origin"):
        config.check_setting(setting, ["https://a.test/x"])


def test_a_profile_overrides_the_global_lists() -> None:
    cfg = config.default_config()
    cfg.blocked_origins = ["evil.test"]
    cfg.profiles["agent"].allowed_origins = ["good.test"]
    cfg.profiles["chrome"].blocked_origins = []
    agent, chrome = cfg.origin_rules("agent"), cfg.origin_rules("chrome")
    assert agent.refusal("https://other.test/") is not None  # its own allow list
    assert agent.refusal("https://evil.test/") is not None  # the global block list
    assert chrome.refusal("https://evil.test/") is None  # its own (empty) block list
    saved = config.from_json(cfg.to_json())
    assert saved.profiles["agent"].allowed_origins == ["good.test"]
    assert saved.profiles["chrome"].blocked_origins == []
    assert saved.profiles["agent"].blocked_origins is None
