"""One redaction for everything that leaves the service (secrets/redact.py; issue 36).

HAR export and trace recording are built beside this work (issues 35 and 34) and do
not exist on this branch yet: these tests hold the function they are to call to what an
export needs. A HAR (JSON: a form post's body URL-encoded, a JSON body, an HTML page)
and a Playwright trace (a zip of JSON-lines members) come out with no byte of a secret
in any spelling, and otherwise unchanged; one-time codes typed lately go too; answers
are redacted in place; log lines and tracebacks carry none.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path
from urllib.parse import quote, quote_plus

from browserdeck import results
from browserdeck.secrets import redact, vault
from browserdeck.tabs import Tab
from browserdeck.util import logsetup, paths

VALUE = 'Tr1cky "pass"/wörd&<x>+%'
SITE = "https://bank.example"


def _spellings(value: str) -> list[bytes]:
    return [s.encode() for s in redact.forms(value)]


def _har() -> bytes:
    """A HAR as an exporter would write it, the value in every place a login puts it."""
    entry = {
        "request": {
            "method": "POST",
            "url": f"{SITE}/login?next=%2F&pw={quote(VALUE, safe='')}",
            "postData": {
                "mimeType": "application/x-www-form-urlencoded",
                "text": f"user=alice&password={quote_plus(VALUE)}",
                "params": [{"name": "password", "value": VALUE}],
            },
        },
        "response": {
            "content": {"mimeType": "text/html", "text": f"<input value=\"{VALUE}\">"
                        .replace(VALUE, __import__("html").escape(VALUE))},
        },
        "comment": json.dumps({"echo": VALUE}),
    }
    return json.dumps({"log": {"version": "1.2", "entries": [entry]}}, ensure_ascii=False).encode()


def test_every_spelling_of_a_secret_leaves_an_export(tmp_path: Path) -> None:
    vault.shared().set("bank", [SITE], VALUE)
    har = tmp_path / "session.har"
    har.write_bytes(_har())
    assert any(s in har.read_bytes() for s in _spellings(VALUE))
    assert redact.file(har)
    clean = har.read_bytes()
    for spelling in _spellings(VALUE):
        assert spelling not in clean, spelling
    data = json.loads(clean)  # still the same JSON, the values replaced
    params = data["log"]["entries"][0]["request"]["postData"]["params"]
    assert params == [{"name": "password", "value": "<secret>bank</secret>"}]
    assert "user=alice&password=<secret>bank</secret>" in clean.decode()

    trace = tmp_path / "trace.zip"
    with zipfile.ZipFile(trace, "w") as z:
        z.writestr("trace.trace", json.dumps({"type": "action", "params": {"value": VALUE}}) + "\n")
        z.writestr("trace.network", _har())
        z.writestr("resources/page.html", f"<p>{VALUE}</p>")
        z.writestr("resources/other.txt", "nothing secret")
    assert redact.file(trace)
    with zipfile.ZipFile(trace) as z:
        assert sorted(z.namelist()) == sorted(
            ["trace.trace", "trace.network", "resources/page.html", "resources/other.txt"]
        )
        assert z.read("resources/other.txt") == b"nothing secret"
        for name in z.namelist():
            member = z.read(name)
            assert not any(s in member for s in _spellings(VALUE)), name
    assert not redact.file(trace)  # nothing left to change


def test_codes_typed_lately_and_answers_in_place() -> None:
    v = vault.shared()
    v.set("bank", [SITE], VALUE, totp_seed="JBSWY3DPEHPK3PXP")
    code = v.use("totp", "bank", SITE)
    assert redact.text(f"code {code} sent") == "code <totp>bank</totp> sent"
    answer = results.ActResult(kind="evaluate", result={"pw": VALUE, "img": 1})
    tab = Tab(target_id="T", title=f"hello {VALUE}", url=f"{SITE}/?pw={quote_plus(VALUE)}")
    shot = {"base64": VALUE, "labels": [{"name": VALUE}]}
    assert redact.value(answer) is answer and answer.result == {"pw": "<secret>bank</secret>", "img": 1}
    assert redact.value(tab) is tab and VALUE not in tab.title and "<secret>bank</secret>" in tab.url
    redact.value(shot)
    assert shot == {"base64": VALUE, "labels": [{"name": "<secret>bank</secret>"}]}  # images left
    assert redact.masked(f'- textbox "Pin" [ref=e2]: "{code}"') == '- textbox "Pin" [ref=e2]: ••••••••'


def test_an_empty_vault_changes_nothing() -> None:
    data = {"a": ["b"]}
    assert redact.value(data) is data and redact.text("x") == "x" and redact.data(b"y") == b"y"
    assert not redact.current()


def test_log_lines_and_tracebacks_carry_no_secret() -> None:
    vault.shared().set("bank", [SITE], VALUE)
    logsetup.setup(stderr=False)
    log = logging.getLogger("browserdeck.test")
    log.warning("typed %s into the page", VALUE)
    try:
        raise RuntimeError(f"fill failed: {VALUE}")
    except RuntimeError:
        log.exception("an action failed")
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = (paths.log_dir() / "browserdeck.log").read_text(encoding="utf-8")
    assert "typed <secret>bank</secret> into the page" in text
    assert "fill failed: <secret>bank</secret>" in text and VALUE not in text
