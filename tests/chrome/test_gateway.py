"""prepare_inbound: what the CDP endpoint does with each client message, byte for byte."""

from __future__ import annotations

import json

from browserdeck.chrome.inbound import prepare_inbound

ROOT = "ROOTSESSION0123"


def forward(raw: str, *, allow: bool = False) -> dict[str, object]:
    sent, reply = prepare_inbound(raw.encode(), ROOT, allow_file_urls=allow)
    assert reply is None and sent is not None, reply
    return json.loads(sent)  # type: ignore[no-any-return]


def refused(raw: str) -> dict[str, object]:
    sent, reply = prepare_inbound(raw.encode(), ROOT, allow_file_urls=False)
    assert sent is None and reply is not None
    return json.loads(reply)  # type: ignore[no-any-return]


def test_root_messages_get_the_clients_session_and_nothing_else_changes() -> None:
    raw = '{"id":1,"method":"Runtime.evaluate","params":{"expression":"\\"a\\\\nb\\""}}'
    sent, reply = prepare_inbound(raw.encode(), ROOT, allow_file_urls=False)
    assert reply is None
    assert sent == raw[:-1].encode() + b',"sessionId":"ROOTSESSION0123"}'
    assert forward('{ }')["sessionId"] == ROOT


def test_session_messages_pass_untouched() -> None:
    raw = b'{"id":2,"method":"DOM.enable","params":{},"sessionId":"PAGE1"}'
    assert prepare_inbound(raw, ROOT, allow_file_urls=False) == (raw, None)
    # Session first (a Python client's key order): parsed, still forwarded as sent.
    raw = b'{"sessionId":"PAGE1","id":3,"method":"DOM.enable"}'
    assert prepare_inbound(raw, ROOT, allow_file_urls=False) == (raw, None)
    # A nested sessionId in params is not the message's own.
    assert forward('{"id":4,"method":"Target.detachFromTarget","params":{"sessionId":"X"}}')[
        "sessionId"
    ] == ROOT


def test_file_urls_are_refused_however_they_are_spelled() -> None:
    for raw in (
        '{"id":1,"method":"Page.navigate","params":{"url":"file:///etc/passwd"},"sessionId":"P"}',
        '{"id":1,"method":"Target.createTarget","params":{"url":"view-source:file:///x"}}',
        '{"id":1,"method":"Target.createTarget","params":{"url":"\\u0001file:///x"}}',
        '{"id":1,"method":"Page.navig\\u0061te","params":{"url":"file:///x"},"sessionId":"P"}',
        '{"id":1,"method":"Target.createTarget","params":{"url":"fi\\nle:///x"}}',
    ):
        answer = refused(raw)
        assert answer["id"] == 1
        assert "file:// URLs are not allowed" in json.dumps(answer)
    assert refused('{"id":1,"method":"Page.navigate","params":{"url":"file:///x"},"sessionId":"P"}')[
        "sessionId"
    ] == "P"


def test_ambiguous_messages_are_refused() -> None:
    assert refused('{"id":5,"method":"Runtime.enable","method":"Page.navigate"}')["id"] == 5
    assert "sessionId" in json.dumps(refused('{"id":6,"method":"X","sessionId":""}'))
    assert refused("[1,2]")["error"]


def test_allowed_when_the_setting_says_so() -> None:
    sent = forward('{"id":1,"method":"Page.navigate","params":{"url":"file:///x"}}', allow=True)
    assert sent["sessionId"] == ROOT
