"""prepare_inbound: what the CDP endpoint does with each client message, byte for byte."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from browserdeck.chrome.inbound import Rules, prepare_inbound

ROOT = "ROOTSESSION0123"
STRICT = Rules(allow_file_urls=lambda: False)


def forward(raw: str, *, allow: bool = False) -> dict[str, object]:
    sent, reply = prepare_inbound(raw.encode(), ROOT, rules=Rules(allow_file_urls=lambda: allow))
    assert reply is None and sent is not None, reply
    return json.loads(sent)  # type: ignore[no-any-return]


def refused(raw: str | bytes) -> dict[str, object]:
    data = raw.encode() if isinstance(raw, str) else raw
    sent, reply = prepare_inbound(data, ROOT, rules=STRICT)
    assert sent is None and reply is not None, sent
    return json.loads(reply)  # type: ignore[no-any-return]


def test_root_messages_get_the_clients_session_and_nothing_else_changes() -> None:
    raw = '{"id":1,"method":"Runtime.evaluate","params":{"expression":"\\"a\\\\nb\\""}}'
    sent, reply = prepare_inbound(raw.encode(), ROOT, rules=STRICT)
    assert reply is None
    assert sent == raw[:-1].encode() + b',"sessionId":"ROOTSESSION0123"}'
    assert forward('{ }')["sessionId"] == ROOT


def test_session_messages_pass_untouched() -> None:
    raw = b'{"id":2,"method":"DOM.enable","params":{},"sessionId":"PAGE1"}'
    assert prepare_inbound(raw, ROOT, rules=STRICT) == (raw, None)
    # Session first (a Python client's key order): parsed, still forwarded as sent.
    raw = b'{"sessionId":"PAGE1","id":3,"method":"DOM.enable"}'
    assert prepare_inbound(raw, ROOT, rules=STRICT) == (raw, None)
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


def wrapped(inner: str, depth: int = 1) -> str:
    """``inner`` sent through ``depth`` Target.sendMessageToTarget wrappers."""
    message = inner
    for n in range(depth):
        message = json.dumps(
            {"id": 100 + n, "method": "Target.sendMessageToTarget",
             "params": {"sessionId": "NONFLAT", "message": message}}
        )  # fmt: skip
    return message


def test_wrapped_messages_follow_the_same_policy() -> None:
    navigate = '{"id":1,"method":"Page.navigate","params":{"url":"file:///etc/passwd"}}'
    for depth in (1, 2, 3):
        answer = refused(wrapped(navigate, depth))
        assert "file:// URLs are not allowed" in json.dumps(answer), answer
        assert "Target.sendMessageToTarget" in json.dumps(answer)
    escaped = '{"id":1,"method":"Page.navig\\u0061te","params":{"url":"file:///etc/passwd"}}'
    assert "file://" in json.dumps(refused(wrapped(escaped)))
    assert "deep" in json.dumps(refused(wrapped('{"id":1,"method":"Runtime.enable"}', 4)))
    twice = '{"id":1,"method":"Runtime.enable","method":"Page.navigate"}'
    assert "twice" in json.dumps(refused(wrapped(twice)))
    # What the policy does not police passes wrapped too (our engine's offline workers).
    fine = wrapped('{"id":1,"method":"Network.emulateNetworkConditions","params":{}}')
    assert forward(fine)["sessionId"] == ROOT


def test_ways_around_the_policy_are_refused() -> None:
    assert "exposeDevToolsProtocol" in json.dumps(
        refused('{"id":1,"method":"Target.exposeDevToolsProtocol","params":{"targetId":"T"}}')
    )
    assert refused('{"id":2,"method":"Extensions.loadUnpacked","params":{"path":"/tmp/x"}}')
    assert "file://" in json.dumps(
        refused('{"id":3,"method":"Network.loadNetworkResource","params":{"url":"file:///etc/passwd"}}')
    )
    # A NUL would end the message early on the browser's pipe, and what follows would be
    # a second message nobody looked at.
    smuggled = (
        b'{"id":4,"method":"Runtime.evaluate","params":{"expression":"1"}}\0'
        b'{"id":5,"method":"Target.createTarget","params":{"url":"file:///etc/passwd"}}'
    )
    assert refused(smuggled)["error"]
    # ... CBOR after the NUL, where a method name has no quotes for a byte search to find.
    # (Its last string ends the bytes as a session would: no end to inject one into.)
    cbor = (
        b"\xd8\x5a\x00\x00\x00\x30\xa3\x62id\x05\x66method\x6dPage.navigate"
        b'\x61x\x71,"sessionId":"A"}'
    )
    assert refused(b'{"id":4,"method":"Runtime.evaluate","params":{}}\0' + cbor)["error"]
    # CBOR (which Chrome takes too) can spell a method so no byte search finds it.
    assert refused(b"\xd8\x5a\x00\x00\x00\x10\xbf\x62id\x01\xff")["error"]


def test_files_and_download_folders_are_confined(tmp_path: Path) -> None:
    upload = tmp_path / "root" / "ok.txt"
    upload.parent.mkdir()
    upload.write_text("fine")
    rules = Rules(allow_file_urls=lambda: False, upload_roots=lambda: [str(upload.parent)])

    def answer(raw: str) -> tuple[bytes | None, bytes | None]:
        return prepare_inbound(raw.encode(), ROOT, rules=rules)

    def files(method: str, path: str) -> str:
        if method == "DOM.setFileInputFiles":
            params = {"files": [path], "nodeId": 1}
        else:
            params = {"type": "drop", "x": 1, "y": 1, "modifiers": 0,
                      "data": {"items": [], "files": [path], "dragOperationsMask": 1}}  # fmt: skip
        return json.dumps({"id": 1, "method": method, "params": params})

    for method in ("DOM.setFileInputFiles", "Input.dispatchDragEvent"):
        for bad in ("/etc/passwd", str(tmp_path / "elsewhere.txt"), str(upload.parent / ".env")):
            sent, reply = answer(files(method, bad))
            assert sent is None and reply is not None and b"cannot upload" in reply, (method, bad)
        sent, reply = answer(files(method, str(upload)))
        assert reply is None and sent is not None, reply
    # A hard link in the root to a file outside it.
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.link(outside, upload.parent / "hard.txt")
    assert answer(files("DOM.setFileInputFiles", str(upload.parent / "hard.txt")))[0] is None

    def downloads(method: str, path: str, behavior: str = "allow") -> bytes | None:
        raw = json.dumps({"id": 2, "method": method,
                          "params": {"behavior": behavior, "downloadPath": path}})  # fmt: skip
        return answer(raw)[1]

    temp = Path(tempfile.gettempdir())
    for method in ("Browser.setDownloadBehavior", "Page.setDownloadBehavior"):
        for bad in (str(Path.home() / ".ssh"), str(Path.home()), "/etc", str(temp),
                    str(temp / ".hidden" / "x"), str(tmp_path / "root" / ".git")):  # fmt: skip
            reply = downloads(method, bad)
            assert reply is not None and b"downloads cannot go" in reply, (method, bad)
        assert downloads(method, str(temp / "playwright-artifacts-x1")) is None
        assert downloads(method, str(upload.parent / "downloads")) is None
    assert downloads("Browser.setDownloadBehavior", "", behavior="deny") is not None
    assert prepare_inbound(
        b'{"id":3,"method":"Browser.setDownloadBehavior","params":{"behavior":"deny"}}',
        ROOT,
        rules=rules,
    )[1] is None
