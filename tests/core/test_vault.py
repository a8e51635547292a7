"""The vault (issue 36): secrets by name, their origins, values kept out of reach.

What only the user may do (set, change, remove; read a value) has no route and no tool:
the CLI writes the vault in its own process, values come from a prompt or stdin, never
argv. Values live in the OS keyring (one entry per secret) or, without one, in a 0600
file in a 0700 folder. Origins are checked as the browser says them.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from browserdeck.errors import Forbidden, InvalidInput, NotFound
from browserdeck.secrets import tokens as secrets
from browserdeck.secrets import totp, vault

SITE = "https://bank.example"


def test_origins_are_read_as_the_browser_says_them() -> None:
    assert vault.normalize_origin("HTTPS://Bank.Example:443/") == SITE
    assert vault.normalize_origin("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert vault.normalize_origin("http://localhost:80") == "http://localhost"
    assert vault.normalize_origin("https://*.bank.example") == "https://*.bank.example"
    for bad in ("bank.example", "ftp://bank.example", "https://bank.example/login",
                "https://bank.example?x=1", "https://user@bank.example", "https://*",
                "https://a.*.example", "https://bank.example:99999"):
        with pytest.raises(InvalidInput):
            vault.normalize_origin(bad)
    assert vault.origin_matches("https://*.bank.example", "https://bank.example")
    assert vault.origin_matches("https://*.bank.example", "https://login.bank.example")
    assert not vault.origin_matches("https://*.bank.example", "https://evilbank.example")
    assert not vault.origin_matches("https://*.bank.example", "http://login.bank.example")
    assert not vault.origin_matches(SITE, "https://bank.example:8443")
    assert vault.origin_of("https://bank.example:443/a?b#c") == SITE
    assert vault.origin_of("about:blank") == ""


def test_a_secret_is_kept_private_and_used_on_its_origins_only() -> None:
    v = vault.shared()
    info = v.set("bank", [SITE, "https://*.bank.example"], "s3cret-value\n")
    assert info.where == "file" and info.value and not info.totp
    assert v.use("secret", "bank", "https://login.bank.example") == "s3cret-value"
    with pytest.raises(Forbidden) as refused:
        v.use("secret", "bank", "https://evil.example")
    assert "https://evil.example" in refused.value.message and SITE in refused.value.message
    with pytest.raises(Forbidden):
        v.use("secret", "bank", "")  # about:blank, data: pages have no origin
    with pytest.raises(NotFound) as unknown:
        v.use("secret", "nope", SITE)
    assert "bank" in unknown.value.message  # the names it could have been
    with pytest.raises(InvalidInput):
        v.use("totp", "bank", SITE)  # no seed
    folder = v.path.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(v.path.stat().st_mode) == 0o600
    # Origins change without the value; the value stays as it was.
    v.set("bank", [SITE], None)
    assert v.use("secret", "bank", SITE) == "s3cret-value"
    assert [e.origins for e in v.entries()] == [(SITE,)]
    assert v.remove("bank") and not v.remove("bank") and not v.entries()


def test_values_go_to_the_keyring_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    store: dict[str, str] = {}
    monkeypatch.setattr(secrets, "keyring_set", lambda e, val: store.__setitem__(e, val) is None)
    monkeypatch.setattr(secrets, "keyring_get", store.get)
    monkeypatch.setattr(secrets, "keyring_delete", lambda e: store.pop(e, None))
    v = vault.shared()
    assert v.set("bank", [SITE], "in-the-keyring").where == "keyring"
    assert "in-the-keyring" not in v.path.read_text() and "secret:bank" in store
    assert v.use("secret", "bank", SITE) == "in-the-keyring"
    v.remove("bank")
    assert store == {}


def test_values_and_names_are_checked() -> None:
    v = vault.shared()
    for name in ("", "-x", "a b", "a/b", "x" * 65, "<secret>", "bank\n"):
        with pytest.raises(InvalidInput):
            v.set(name, [SITE], "long-enough")
    with pytest.raises(InvalidInput):
        v.set("short", [SITE], "abc")  # would be masked wherever "abc" appears
    with pytest.raises(InvalidInput):
        v.set("none", [], "long-enough")
    with pytest.raises(InvalidInput):
        v.set("seed", [SITE], "long-enough", totp_seed="not base32 !")
    assert vault.strip_newline("pw\r\n") == "pw" and vault.strip_newline("pw \n\n") == "pw \n"
    code_only = v.set("code", [SITE], "", totp_seed="JBSWY3DPEHPK3PXP")
    assert code_only.totp and not code_only.value
    with pytest.raises(InvalidInput):
        v.use("secret", "code", SITE)
    assert len(v.use("totp", "code", SITE)) == 6


def test_totp_codes_are_rfc_6238s() -> None:
    # RFC 6238 appendix B: T = 59 s, 8 digits, each algorithm's own test key.
    keys = {"SHA1": "12345678901234567890", "SHA256": "12345678901234567890123456789012",
            "SHA512": "1234567890" * 6 + "1234"}
    expected = {"SHA1": "94287082", "SHA256": "46119246", "SHA512": "90693936"}
    import base64

    for algorithm, key in keys.items():
        secret = base64.b32encode(key.encode()).decode()
        seed = totp.parse(f"otpauth://totp/x?secret={secret}&digits=8&algorithm={algorithm}")
        assert seed.code(59) == expected[algorithm]
    assert totp.parse("jbsw y3dp ehpk 3pxp").key == totp.parse("JBSWY3DPEHPK3PXP").key
    with pytest.raises(InvalidInput):
        totp.parse("otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP")


def _cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BROWSERDECK_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "browserdeck", "secret", *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=60, check=False,
    )


def test_the_cli_reads_values_from_stdin_never_argv(bd_home: Path) -> None:
    done = _cli(bd_home, "set", "bank", "--origin", SITE, "--totp",
                stdin="pw with trailing space \nJBSWY3DPEHPK3PXP\n")
    assert done.returncode == 0, done.stderr
    assert "pw with" not in done.stdout + done.stderr
    v = vault.shared()
    assert v.use("secret", "bank", SITE) == "pw with trailing space "  # only the newline went
    listed = _cli(bd_home, "list")
    assert "bank" in listed.stdout and SITE in listed.stdout and "pw with" not in listed.stdout
    # A value given as an argument is refused, not stored: argv is readable by every user.
    refused = _cli(bd_home, "set", "other", "hunter2-value", "--origin", SITE)
    assert refused.returncode == 2 and "unrecognized arguments" in refused.stderr
    assert [e.name for e in v.entries()] == ["bank"]
    assert _cli(bd_home, "rm", "bank").returncode == 0 and not v.entries()
    missing = _cli(bd_home, "rm", "bank")
    assert missing.returncode == 1 and "no secret named" in missing.stderr


def test_no_route_or_tool_sets_or_reads_a_value() -> None:
    from browserdeck.api.app import create_app
    from browserdeck.deck import Deck
    from tests.mcp.test_tool_schemas import tools_list

    app = create_app(Deck.__new__(Deck))  # the routes only; nothing runs
    paths = app.openapi()["paths"]
    secret_routes = {(m, p) for p, ops in paths.items() if "secret" in p for m in ops}
    assert secret_routes == {("get", "/secrets")}
    tools = {t["name"]: t for t in tools_list()}
    assert [n for n in tools if "secret" in n] == ["browser_secrets"]
    assert tools["browser_secrets"]["inputSchema"].get("properties", {}) == {}
