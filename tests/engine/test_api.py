"""The engine routes and CLI commands end to end: a real service, its managed headless
Chromium, HTTP on a free port, and the CLI's own client (one service for the module)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from browserdeck.cli import main as cli
from browserdeck.service import Service
from tests.engine.site import Site
from tests.support.service import running_service

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Api:
    def __init__(self, service: Service, client: httpx.AsyncClient, site: Site) -> None:
        self.service, self.client, self.site = service, client, site
        self.target = ""

    async def call(self, method: str, path: str, *, status: int = 200, **kw: Any) -> Any:
        resp = await self.client.request(method, path, **kw)
        assert resp.status_code == status, resp.text
        return resp.json()

    async def post(self, path: str, body: dict[str, Any], status: int = 200) -> Any:
        return await self.call("POST", path, json={"targetId": self.target, **body}, status=status)

    async def snapshot(self, **params: Any) -> Any:
        return await self.call("GET", "/snapshot", params={"targetId": self.target, **params})

    def cli(self, *argv: str) -> int:
        return cli.main([*argv, "--url", self.service.url, "--target", self.target])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(site: Site, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BROWSERDECK_HOME", str(tmp_path_factory.mktemp("api-home")))
        mp.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        async with running_service() as (service, client):
            yield Api(service, client, site)


@pytest_asyncio.fixture(loop_scope="module")
async def tab(api: Api, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Api]:
    monkeypatch.setenv("BROWSERDECK_TOKEN", api.service.api_token)
    opened = await api.call("POST", "/tabs/open", json={"url": "about:blank"})
    api.target = opened["targetId"]
    try:
        yield api
    finally:
        await api.client.delete(f"/tabs/{api.target}")


def ref(snapshot: str, line: str) -> str:
    found = re.search(re.escape(line) + r".*?\[ref=([^\]]+)\]", snapshot)
    assert found, f"{line!r} not in\n{snapshot}"
    return found.group(1)


async def test_routes_are_in_the_openapi_spec(api: Api) -> None:
    spec = await api.call("GET", "/openapi.json")
    for path in (
        "/snapshot",
        "/act",
        "/navigate",
        "/screenshot",
        "/console",
        "/set/offline",
        "/pdf",
        "/hooks/file-chooser",
        "/hooks/dialog",
    ):
        assert path in spec["paths"], path


async def test_navigate_snapshot_act_over_http(tab: Api) -> None:
    nav = await tab.post("/navigate", {"url": tab.site.url("form.html")})
    assert nav["status"] == 200 and nav["title"] == "Form"
    snap = await tab.snapshot(format="role", interactive="true")
    assert snap["targetId"] == tab.target and snap["stats"]["refs"] > 10
    text = snap["snapshot"]
    await tab.post("/act", {"kind": "type", "ref": ref(text, 'textbox "Text"'), "text": "via http"})
    await tab.post("/act", {"kind": "click", "ref": ref(text, 'checkbox "Agree"')})
    out = await tab.post(
        "/act",
        {
            "kind": "evaluate",
            "fn": "() => [document.forms[0].text.value, document.forms[0].agree.checked]",
        },
    )
    assert out["result"] == ["via http", True]
    # A unique prefix of the targetId works too.
    short = await tab.call("GET", "/snapshot", params={"targetId": tab.target[:8]})
    assert short["targetId"] == tab.target


async def test_errors_have_the_json_shape_with_a_hint(tab: Api) -> None:
    await tab.post("/navigate", {"url": tab.site.url("hover.html")})
    await tab.snapshot()
    err = await tab.post("/act", {"kind": "click", "ref": "e999"}, status=404)
    assert err["error"]["code"] == "unknown_ref"
    assert "take a new snapshot" in err["error"]["hint"]
    bad = await tab.post("/act", {"kind": "clack", "ref": "e1"}, status=400)
    assert bad["error"]["code"] == "invalid_input"
    typo = await tab.post("/act", {"kind": "click", "ref": "e1", "doubleclick": True}, status=400)
    assert "doubleclick" in typo["error"]["message"]
    depth = await tab.call(
        "GET", "/snapshot", params={"targetId": tab.target, "depth": 0}, status=400
    )
    assert depth["error"]["code"] == "invalid_input"


async def test_back_forward_screenshot_console_pdf_and_hooks(tab: Api, tmp_path: Path) -> None:
    await tab.post("/navigate", {"url": tab.site.url("console.html")})
    await tab.post("/navigate", {"url": tab.site.url("upload.html")})
    back = await tab.post("/navigate", {"action": "back"})
    assert back["url"].endswith("/console.html")
    fwd = await tab.post("/navigate", {"action": "forward"})
    assert fwd["url"].endswith("/upload.html")
    shot = await tab.post("/screenshot", {"labels": True, "maxWidth": 640})
    assert Path(shot["path"]).is_file() and shot["width"] <= 640 and shot["labels"]
    console = await tab.call("GET", "/console", params={"targetId": tab.target})
    assert set(console) >= {"messages", "errors", "requests"}
    pdf = await tab.post("/pdf", {})
    assert Path(pdf["path"]).read_bytes().startswith(b"%PDF")
    (tmp_path / "files").mkdir()
    file = tmp_path / "files" / "a.txt"
    file.write_text("abc")
    up = await tab.post(
        "/hooks/file-chooser",
        {"paths": [str(file)], "roots": [str(file.parent)], "element": "#file"},
    )
    assert up["via"] == "input"
    armed = await tab.post("/hooks/dialog", {"accept": False})
    assert armed["armed"] is True


async def test_console_contexts_clear_and_offline_over_http(tab: Api) -> None:
    await tab.post("/navigate", {"url": tab.site.url("workers.html")})
    params = {"targetId": tab.target}
    worker = {}
    for _ in range(200):  # the worker's message arrives shortly after the page's
        console = await tab.call("GET", "/console", params=params)
        worker = {m["text"]: m for m in console["messages"] if m["context"] == "worker"}
        if "worker got start" in worker:
            break
        await asyncio.sleep(0.05)
    assert worker["worker got start"]["workerUrl"] == tab.site.url("worker.js")
    cleared = await tab.call("GET", "/console", params={**params, "clear": "true"})
    assert "page hello" in [m["text"] for m in cleared["messages"]]
    assert (await tab.call("GET", "/console", params=params))["messages"] == []

    fetch = "() => fetch('/status/200').then((r) => r.status, (e) => e.name)"
    off = await tab.post("/set/offline", {"offline": True})
    assert off["offline"] is True and off["targetId"] == tab.target
    assert (await tab.post("/act", {"kind": "evaluate", "fn": fetch}))["result"] == "TypeError"
    assert (await tab.post("/set/offline", {"offline": False}))["offline"] is False
    assert (await tab.post("/act", {"kind": "evaluate", "fn": fetch}))["result"] == 200
    bad = await tab.post("/set/offline", {"offline": "maybe"}, status=400)
    assert bad["error"]["code"] == "invalid_input"


async def test_cli_commands(tab: Api, capsys: pytest.CaptureFixture[str]) -> None:
    run = tab.cli
    assert await asyncio.to_thread(run, "navigate", tab.site.url("dupes.html")) == 0
    assert 'dupes.html [200] "Rows"' in capsys.readouterr().out
    assert await asyncio.to_thread(run, "snapshot", "--format", "role", "--interactive") == 0
    text = capsys.readouterr().out
    add = ref(text, 'button "Add row"')
    assert await asyncio.to_thread(run, "click", add) == 0
    assert f"clicked {add}" in capsys.readouterr().out
    assert (
        await asyncio.to_thread(
            run, "evaluate", "--fn", "() => document.querySelectorAll('li').length", "--json"
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["result"] == 4
    # A stale ref: a clean error with the hint, exit code 1.
    assert await asyncio.to_thread(run, "click", "e9999") == 1
    err = capsys.readouterr().err
    assert "not in the latest snapshot" in err and "hint: take a new snapshot" in err
    assert await asyncio.to_thread(run, "screenshot", "--labels") == 0
    out = capsys.readouterr().out
    assert ".png (" in out and f"{add}:" in out
    assert await asyncio.to_thread(run, "resize", "900", "700") == 0
    assert await asyncio.to_thread(run, "wait", "--text", "Zeta") == 0
    assert await asyncio.to_thread(run, "dialog", "--dismiss") == 0
    assert "dismissed" in capsys.readouterr().out
    assert await asyncio.to_thread(run, "back") == 0
    capsys.readouterr()


# A page whose ai snapshot is over the default cap (200,000 characters): ~80 characters a
# button and link, 6,000 of them.
OVER_THE_CAP = "big.html?n=6000"
CUT_KEYS = {"shownLines", "totalLines", "shownChars", "totalChars"}


def _cut_as_declared(snap: dict[str, Any], spec: dict[str, Any]) -> dict[str, int]:
    """The answer's ``truncated``: the published shape, and it says what the text shows."""
    schemas = spec["components"]["schemas"]
    declared = schemas["Snapshot"]["properties"]["truncated"]["anyOf"][0]["$ref"]
    assert set(schemas[declared.rsplit("/", 1)[-1]]["required"]) == CUT_KEYS
    cut: dict[str, int] = snap["truncated"]
    assert set(cut) == CUT_KEYS, cut
    text = snap["snapshot"]
    shown = text[: cut["shownChars"]]
    assert text[len(shown) :].startswith("\n[... truncated: showing "), text[-300:]
    assert shown.count("\n") + 1 == cut["shownLines"] < cut["totalLines"]
    assert cut["shownChars"] < cut["totalChars"]
    return cut


async def test_a_cut_snapshot_says_how_much_it_shows(tab: Api) -> None:
    # Each cut (maxChars, limit, the default cap) answers the declared shape, not a 500.
    spec = await tab.call("GET", "/openapi.json")
    await tab.post("/navigate", {"url": tab.site.url("long.html")})
    by_chars = _cut_as_declared(await tab.snapshot(maxChars=500), spec)
    assert by_chars["shownChars"] <= 500
    assert _cut_as_declared(await tab.snapshot(limit=1), spec)["shownLines"] == 1
    aria = _cut_as_declared(await tab.snapshot(format="aria", limit=3), spec)
    assert aria["shownLines"] == 3
    await tab.post("/navigate", {"url": tab.site.url(OVER_THE_CAP)})
    capped = _cut_as_declared(await tab.snapshot(), spec)
    assert capped["shownChars"] <= 200_000 < capped["totalChars"]
    # The connection still serves the next call.
    assert (await tab.call("GET", "/health"))["ok"] is True


async def test_the_cli_says_a_snapshot_was_cut(
    tab: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tab.cli
    await tab.post("/navigate", {"url": tab.site.url("long.html")})
    for argv in (("--max-chars", "500"), ("--limit", "1")):
        assert await asyncio.to_thread(run, "snapshot", *argv) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert re.search(r"^# cut: \d+ of \d+ lines \(\d+ of \d+ chars\)", out, re.M), out
        assert "[... truncated: showing" in out
    assert await asyncio.to_thread(run, "snapshot", "--limit", "2", "--json") == 0
    assert json.loads(capsys.readouterr().out)["truncated"]["shownLines"] == 2
    await tab.post("/navigate", {"url": tab.site.url(OVER_THE_CAP)})
    assert await asyncio.to_thread(run, "snapshot") == 0, capsys.readouterr().err
    assert re.search(r"^# cut: \d+ of \d+ lines", capsys.readouterr().out, re.M)
