"""Remote profiles on a real browser service: Browserless 2.42 from npm, real Chromium.

Browserless starts one browser per WebSocket connection and its /json/list is empty, so
everything here fails on a driver that reads /json/* or opens a second connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path

import httpx
import pytest

from browserdeck import config
from browserdeck.config import Config
from browserdeck.master import build_service
from browserdeck.util import paths
from tests.remote.browserless import Browserless
from tests.support.service import anon_client, first_health, running_service, service_config


def remote_config() -> Config:
    cfg = service_config()
    cfg.profiles.pop("chrome", None)
    cfg.no_sandbox = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    return cfg


async def create_farm(client: httpx.AsyncClient, server: Browserless, **extra: object) -> dict:
    r = await client.post(
        "/profiles/create", json={"name": "farm", "cdpUrl": server.ws_url(), **extra}
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def ref_for(snapshot: str, role: str, name: str) -> str:
    m = re.search(rf'- {role} "{re.escape(name)}"[^\n]*?\[ref=([^\]]+)\]', snapshot)
    assert m, f"no {role} {name!r} in:\n{snapshot}"
    return m.group(1)


async def test_api_drives_a_browserless_profile(
    browserless: Browserless, site: str, bd_home: Path
) -> None:
    async with running_service(remote_config()) as (_service, client):
        created = await create_farm(client, browserless)
        # The token went to the secret store (a 0600 file without a keyring), not config.json.
        assert browserless.token not in paths.config_file().read_text()
        assert "token" not in created["cdpUrl"]
        secret = paths.token_file("remote-farm")
        assert secret.read_text().strip() == browserless.token
        assert secret.stat().st_mode & 0o777 == 0o600

        # Tabs come over CDP (Target.getTargets): Browserless's /json/list is empty.
        tabs = (await client.get("/tabs", params={"profile": "farm"})).json()
        assert tabs["tabs"], tabs
        tab = (
            await client.post(
                "/tabs/open", params={"profile": "farm"}, json={"url": f"{site}/shop.html"}
            )
        ).json()
        q = {"profile": "farm", "targetId": tab["targetId"]}
        listed = (await client.get("/tabs", params={"profile": "farm"})).json()["tabs"]
        assert tab["targetId"] in [t["targetId"] for t in listed]

        nav = await client.post("/navigate", params=q, json={"url": f"{site}/shop.html"})
        assert nav.status_code == 200, nav.text
        snap = (await client.get("/snapshot", params=q)).json()
        assert "Featured products" in snap["snapshot"]
        ref = ref_for(snap["snapshot"], "button", "Add to cart")
        clicked = await client.post("/act", params=q, json={"kind": "click", "ref": ref})
        assert clicked.status_code == 200, clicked.text
        after = (await client.get("/snapshot", params=q)).json()["snapshot"]
        assert "1 item" in after

        shot = await client.post("/screenshot", params=q, json={"labels": True})
        assert shot.status_code == 200, shot.text
        body = shot.json()
        assert body["labels"], body.keys()
        assert any(label["ref"] == ref for label in body["labels"])

        # The rest of a local profile's features, on the service's browser.
        console = (await client.get("/console", params=q)).json()
        assert "shop ready" in json.dumps(console)
        pdf = (await client.post("/pdf", params=q, json={})).json()
        assert pdf["bytes"] > 1000, pdf
        await client.post("/navigate", params=q, json={"url": f"{site}/form.html"})
        snap = (await client.get("/snapshot", params=q)).json()["snapshot"]
        armed = await client.post("/hooks/dialog", params=q, json={"accept": True})
        assert armed.status_code == 200, armed.text
        ask = ref_for(snap, "button", "Ask")
        await client.post("/act", params=q, json={"kind": "click", "ref": ask})
        assert "confirm: true" in (await client.get("/snapshot", params=q)).json()["snapshot"]

        # The service's load comes from its own /pressure report, which can lag a moment
        # behind the browser it just handed out: poll it (bounded) rather than race it.
        for _ in range(50):
            status = (await client.get("/", params={"profile": "farm"})).json()
            if status["remote"]["health"].get("running", 0) >= 1:
                break
            await asyncio.sleep(0.1)
        assert status["running"] and status["remote"]["health"]["service"] == "browserless"
        assert status["remote"]["health"]["running"] >= 1
        assert browserless.token not in json.dumps(status)

        # Stop means release: our browser at the service ends, the service keeps running.
        await client.post("/stop", params={"profile": "farm"})
        for _ in range(50):
            if browserless.pressure()["running"] == 0:
                break
            await asyncio.sleep(0.1)
        assert browserless.pressure()["running"] == 0
        assert browserless.proc is not None and browserless.proc.poll() is None


async def test_wrong_token_is_a_clear_error(browserless: Browserless, bd_home: Path) -> None:
    async with running_service(remote_config()) as (_service, client):
        r = await client.post(
            "/profiles/create",
            json={"name": "farm", "cdpUrl": browserless.ws_url(token=False), "token": "wrong-1"},
        )
        assert r.status_code == 200, r.text
        r = await asyncio.wait_for(client.get("/tabs", params={"profile": "farm"}), 10)
        assert r.status_code == 503, r.text
        err = r.json()["error"]
        assert err["code"] == "service_auth"
        assert "refused the token (HTTP 401)" in err["message"]
        assert "wrong-1" not in r.text
        # The right token, stored through the API, works from the next call on.
        r = await client.post(
            "/profiles/token", params={"profile": "farm"}, json={"token": browserless.token}
        )
        assert r.status_code == 200, r.text
        r = await client.get("/tabs", params={"profile": "farm"})
        assert r.status_code == 200, r.text
        await client.post("/stop", params={"profile": "farm"})


async def test_limit_reached_is_a_clear_error_not_a_hang(
    own_browserless: Browserless, bd_home: Path
) -> None:
    own_browserless.start()  # one browser at most
    async with running_service(remote_config()) as (_service, client):
        await create_farm(client, own_browserless, pool=True)
        a = {"X-Browserdeck-Session": "agent-a"}
        b = {"X-Browserdeck-Session": "agent-b"}
        r = await client.get("/tabs", params={"profile": "farm"}, headers=a)
        assert r.status_code == 200, r.text
        r = await asyncio.wait_for(
            client.get("/tabs", params={"profile": "farm"}, headers=b), 10
        )
        assert r.status_code == 503, r.text
        err = r.json()["error"]
        assert err["code"] == "service_busy"
        assert "all 1 browser busy, 0 waiting" in err["message"], err
        # Agent a's session ends: its browser goes back, and b gets one.
        r = await client.post("/sessions/release", json={"session": "agent-a"})
        assert r.json()["released"] == ["farm"]
        for _ in range(50):
            if own_browserless.pressure()["running"] == 0:
                break
            await asyncio.sleep(0.1)
        r = await client.get("/tabs", params={"profile": "farm"}, headers=b)
        assert r.status_code == 200, r.text
        # What the tray and panel show for it: sessions, who holds them, the service's load.
        # The load is the service's own /pressure report, which counts b's new browser a
        # moment after b got it: poll for it (bounded) rather than race it.
        from browserdeck import states

        want = "pool · 1 browser held · service 1/1 busy, 0 waiting"
        for _ in range(50):
            status = (await client.get("/", params={"profile": "farm"})).json()
            if status["stateText"] == want:
                break
            await asyncio.sleep(0.1)
        assert [s["session"] for s in status["remote"]["sessions"]] == ["agent-b"]
        assert status["stateText"] == want
        assert states.remote_lines(status["remote"])[2].startswith("client agent-b: ")


async def test_service_restart_mid_session_reconnects_and_says_so(
    own_browserless: Browserless, site: str, bd_home: Path
) -> None:
    own_browserless.start()
    async with running_service(remote_config()) as (_service, client):
        await create_farm(client, own_browserless)
        tab = (
            await client.post(
                "/tabs/open", params={"profile": "farm"}, json={"url": f"{site}/shop.html"}
            )
        ).json()
        q = {"profile": "farm", "targetId": tab["targetId"]}
        assert (await client.get("/snapshot", params=q)).status_code == 200

        own_browserless.stop()  # the service goes away, with the browser it gave us
        own_browserless.start()
        r = await asyncio.wait_for(client.get("/snapshot", params=q), 30)
        assert r.status_code in (404, 503), r.text
        err = r.json()["error"]
        assert "dropped" in err["message"] and "tabs from before are gone" in err["message"], err
        # The connection was re-established: the profile works again in a new browser.
        opened = await client.post(
            "/tabs/open", params={"profile": "farm"}, json={"url": f"{site}/next.html"}
        )
        assert opened.status_code == 200, opened.text
        q2 = {"profile": "farm", "targetId": opened.json()["targetId"]}
        snap = await client.get("/snapshot", params=q2)
        assert snap.status_code == 200 and "Next" in snap.json()["snapshot"], snap.text
        await client.post("/stop", params={"profile": "farm"})


def test_token_in_url_never_reaches_config(bd_home: Path) -> None:
    from browserdeck.drivers import leases as remote

    clean, token, param = remote.split_token("wss://x.example/chromium?apiKey=abc&launch=%7B%7D")
    assert (token, param) == ("abc", "apiKey") and "abc" not in clean
    assert remote.redact("ws://h/?token=s3cret") == "ws://h/?token=***"
    # tokenParam/pool only make sense on a service endpoint.
    cfg = config.default_config().to_json()
    cfg["profiles"]["x"] = {"driver": "remote", "cdpUrl": "http://h:9222", "pool": True}
    try:
        config.from_json(cfg)
    except Exception as exc:
        assert "ws(s)" in str(exc)
    else:
        raise AssertionError("pool on an http:// remote profile was accepted")


async def test_idle_pooled_session_is_released(browserless: Browserless, bd_home: Path) -> None:
    async with running_service(remote_config()) as (service, client):
        await create_farm(client, browserless, pool=True, poolIdleSeconds=10)
        me = {"X-Browserdeck-Session": "sleepy"}
        assert (await client.get("/tabs", params={"profile": "farm"}, headers=me)).status_code == 200
        ctx = service.profile("farm")
        assert list(ctx.impl.leases) == ["sleepy"]
        # Nobody calls: after poolIdleSeconds (checked every quarter of it) it goes back.
        for _ in range(100):
            if not ctx.impl.leases:
                break
            await asyncio.sleep(0.25)
        assert not ctx.impl.leases
        status = (await client.get("/", params={"profile": "farm"})).json()
        assert status["remote"]["sessions"] == []


def test_named_cli_client_is_a_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from browserdeck import client

    monkeypatch.setenv("BROWSERDECK_CLIENT", "nightly-job")
    assert client._headers("t")["X-Browserdeck-Session"] == "cli:nightly-job"
    monkeypatch.delenv("BROWSERDECK_CLIENT")
    assert "X-Browserdeck-Session" not in client._headers("t")


async def test_a_page_call_made_while_the_engine_is_imported_waits_for_it(
    browserless: Browserless, site: str, held_engine_import: threading.Event
) -> None:
    """A pooled remote profile's first call connects through the engine: made while a
    service that just started still imports it (its API listens already; issue 14), the
    call waits for it instead of failing with "the engine is not running"."""
    cfg = remote_config()
    held_engine_import.set()  # the profile is created on a service that runs
    async with running_service(cfg) as (_service, client):
        await create_farm(client, browserless)
    held_engine_import.clear()
    service = build_service(force_headless=True)
    starting = asyncio.create_task(service.start())
    try:
        async with anon_client(cfg.control_port) as anon:
            assert await first_health(anon) is not None
            assert service.engine is None and service.engine_starting
            await service.tokens_read()  # read once the API listens
            anon.headers["Authorization"] = f"Bearer {service.api_token}"
            navigated = asyncio.create_task(
                anon.post("/navigate", params={"profile": "farm"}, json={"url": f"{site}/shop.html"})
            )
            done, _ = await asyncio.wait([navigated], timeout=1.0)
            assert not done, navigated.result().text
            held_engine_import.set()
            resp = await navigated
            assert resp.status_code == 200, resp.text
    finally:
        held_engine_import.set()
        if not starting.done():
            await asyncio.wait([starting], timeout=30)
        await service.stop()
