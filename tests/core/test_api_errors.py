"""Core errors say what kind of failure happened; the API alone maps them to HTTP (issue 13)."""

from __future__ import annotations

import asyncio
import http.client
import importlib
import json
import pkgutil
from typing import Any

import pytest

import browserdeck
from browserdeck import errors
from browserdeck.api.errors import status_of
from browserdeck.chrome.cdp import CDPError
from browserdeck.chrome.launcher import BrowserOnPort
from browserdeck.client import CLIENT_NAME as CLI
from browserdeck.deck import Deck
from browserdeck.engine.errors import NavigationFailed
from browserdeck.errors import Hint
from tests.support.service import running_service


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


def test_no_core_error_carries_an_http_status() -> None:
    # Import every module that may define an error (Qt and the GUI aside).
    for info in pkgutil.walk_packages(browserdeck.__path__, "browserdeck."):
        if not info.name.startswith(("browserdeck.gui", "browserdeck.__main__")):
            importlib.import_module(info.name)
    classes = {errors.BrowserdeckError} | _all_subclasses(errors.BrowserdeckError)
    assert len(classes) >= 12, classes
    carrying = sorted(c.__qualname__ for c in classes if hasattr(c, "status"))
    assert not carrying, f"errors that still name an HTTP status: {carrying}"
    with pytest.raises(TypeError):
        errors.BrowserdeckError("x", status=404)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.BrowserdeckError("x"), 400),
        (errors.InvalidInput("x"), 400),
        (errors.InvalidInput("x", code="unknown_profile"), 404),
        (errors.Unauthorized("x"), 401),
        (errors.Forbidden("x"), 403),
        (errors.NotFound("x"), 404),
        (errors.Conflict("x", code="stale_ref"), 409),
        (BrowserOnPort("x"), 409),
        (errors.ConfigError("x"), 500),
        (errors.BrowserdeckError("x", code="browser_error"), 500),
        (NavigationFailed("x"), 502),
        (CDPError("x", method="Page.navigate"), 502),
        (errors.Disabled("x"), 503),
        (errors.Unavailable("x", code="browser_gone"), 503),
        (errors.ActionTimeout("x"), 504),
    ],
)
def test_the_api_answers_each_kind_of_error_with_its_status(
    error: errors.BrowserdeckError, status: int
) -> None:
    assert status_of(error) == status


def test_a_hint_names_each_step_in_the_callers_words() -> None:
    hint = "if the page changed, " + Hint(
        "take a new snapshot ({snapshot}) and list tabs ({tabs}) {{as JSON}}",
        snapshot=errors.SNAPSHOT,
        tabs=errors.TABS,
    )
    error = errors.Conflict("stale", hint=hint, code="stale_ref")
    assert error.hint == (
        "if the page changed, take a new snapshot (GET /snapshot) and list tabs (GET /tabs) "
        "{as JSON}"
    )
    assert error.hint_for("cli") == (
        "if the page changed, take a new snapshot (`browserdeck snapshot`) and list tabs "
        "(`browserdeck tabs`) {as JSON}"
    )
    assert error.hint_for("mcp") == (
        "if the page changed, take a new snapshot (browser_snapshot) and list tabs "
        "(browser_tabs action=list) {as JSON}"
    )
    # A step the CLI has no command for is named by its route there.
    offline = errors.BrowserdeckError("x", hint=Hint("go online ({o})", o=errors.OFFLINE))
    assert offline.hint_for("cli") == "go online (POST /set/offline)"
    assert offline.hint_for("mcp") == "go online (browser_set_offline)"
    assert errors.BrowserdeckError("x", hint="plain").hint_for("mcp") == "plain"


async def test_the_api_says_what_to_do_next_in_routes_or_in_cli_commands() -> None:
    async with running_service() as (_service, client):
        http = (await client.get("/tabs", params={"profile": "ghost"})).json()["error"]
        cli = (
            await client.get(
                "/tabs", params={"profile": "ghost"}, headers={"X-Browserdeck-Client": CLI}
            )
        ).json()["error"]
    assert http["code"] == cli["code"] == "unknown_profile"
    assert http["hint"] == (
        "list profiles with GET /profiles; create one with POST /profiles/create"
    )
    assert cli["hint"] == (
        "list profiles with `browserdeck profiles`; create one with "
        "`browserdeck create-profile NAME`"
    )


def _get(conn: http.client.HTTPConnection, path: str, token: str) -> tuple[int, dict[str, Any]]:
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read())


async def test_a_bug_answers_500_and_the_connection_serves_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fault injected where no error is expected (the status call raises a plain
    # exception, as a model that no longer matched its data did): the answer is the error
    # shape, and the same keep-alive connection answers the next request.
    async def broken(*_: object, **__: object) -> None:
        raise RuntimeError("an injected bug")

    async with running_service() as (service, _):
        monkeypatch.setattr(Deck, "status", broken)
        conn = http.client.HTTPConnection("127.0.0.1", service.control_port, timeout=30)
        try:
            status, body = await asyncio.to_thread(_get, conn, "/", service.api_token)
            assert status == 500, body
            assert body["error"]["code"] == "internal"
            assert "RuntimeError: an injected bug" in body["error"]["message"]
            assert "bug" in body["error"]["hint"]
            sock = conn.sock
            status, body = await asyncio.to_thread(_get, conn, "/health", service.api_token)
            assert status == 200 and body["ok"] is True, body
            assert conn.sock is sock  # the same connection: http.client did not reconnect
        finally:
            conn.close()
