"""The control API end to end: real service, real sockets, real headless Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from pathlib import Path

import httpx
import pytest

from browserdeck import config
from browserdeck.chrome.procs import pid_alive
from browserdeck.master import build_service
from browserdeck.util import paths
from tests.support.net import free_port
from tests.support.service import live_drivers, running_service, service_config


async def test_health_needs_no_token_and_everything_else_does() -> None:
    async with (
        running_service() as (service, _client),
        httpx.AsyncClient(base_url=service.url, trust_env=False) as anon,
    ):
        health = await anon.get("/health")
        assert health.status_code == 200
        assert health.json()["ok"] is True
        assert service.api_token not in health.text
        for method, path in [
            ("GET", "/"),
            ("GET", "/tabs"),
            ("POST", "/start"),
            ("GET", "/profiles"),
            ("GET", "/openapi.json"),
        ]:
            resp = await anon.request(method, path)
            assert resp.status_code == 401, path
            assert resp.json()["error"]["code"] == "unauthorized"
        wrong = await anon.get("/", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401


async def test_foreign_host_and_browser_origin_are_refused() -> None:
    async with running_service() as (_service, client):
        resp = await client.get("/", headers={"Host": "evil.example:18791"})
        assert resp.status_code == 403
        assert resp.json()["error"]["code"] == "forbidden_host"
        # "null" is what sandboxed iframes and file:/data: pages send: a browser too.
        for origin in ("https://evil.example", "null"):
            resp = await client.get("/", headers={"Origin": origin})
            assert resp.status_code == 403, origin
            assert resp.json()["error"]["code"] == "forbidden_origin"
        for host in ("localhost", "127.0.0.1", "[::1]"):
            ok = await client.get("/", headers={"Host": f"{host}:1"})
            assert ok.status_code == 200, host


async def test_binds_only_loopback() -> None:
    async with running_service() as (service, _client):
        assert service.api is not None
        port = service.api.port
        # Find a non-loopback address of this machine, if any, and check nothing listens there.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.connect(("10.255.255.255", 1))
                own = probe.getsockname()[0]
            except OSError:
                own = None
        if own and not own.startswith("127."):
            with socket.socket() as s, pytest.raises(OSError):
                s.settimeout(1)
                s.connect((own, port))
        listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
        hexport = f"{port:04X}"
        mine = [
            ln.split()[1]
            for ln in listening
            if ln.split()[1].endswith(":" + hexport) and ln.split()[3] == "0A"
        ]
        assert mine == ["0100007F:" + hexport]


async def test_openapi_is_the_served_spec() -> None:
    async with running_service() as (_service, client):
        spec = (await client.get("/openapi.json")).json()
        for route in (
            "/health",
            "/",
            "/start",
            "/stop",
            "/profiles",
            "/profiles/create",
            "/profiles/{name}",
            "/reset-profile",
            "/tabs",
            "/tabs/open",
            "/tabs/focus",
            "/tabs/{target_id}",
        ):
            assert route in spec["paths"], route


async def test_start_stop_restart_and_tabs() -> None:
    async with running_service() as (_service, client):
        status = (await client.get("/")).json()
        assert status["state"] == "stopped" and status["running"] is False
        started = (await client.post("/start")).json()
        assert started["running"] is True and started["pid"]
        assert started["headless"] is True and started["headlessReason"]
        pid = started["pid"]

        opened = (
            await client.post("/tabs/open", json={"url": "data:text/html,<title>one</title>"})
        ).json()
        tabs = (await client.get("/tabs")).json()["tabs"]
        assert opened["targetId"] in [t["targetId"] for t in tabs]

        prefix = opened["targetId"][:10]
        focused = await client.post("/tabs/focus", json={"targetId": prefix})
        assert focused.status_code == 200 and focused.json()["focused"] == opened["targetId"]

        closed = await client.delete(f"/tabs/{prefix}")
        assert closed.json()["closed"] == opened["targetId"]
        tabs = (await client.get("/tabs")).json()["tabs"]
        assert opened["targetId"] not in [t["targetId"] for t in tabs]

        missing = await client.delete("/tabs/ffffffffdeadbeef")
        assert missing.status_code == 404
        assert "no tab 'ffffffffdeadbeef'" in missing.json()["error"]["message"]

        stopped = (await client.post("/stop")).json()
        assert stopped["running"] is False and stopped["state"] == "stopped"
        assert not pid_alive(pid)

        again = (await client.post("/start")).json()
        assert again["running"] is True and again["pid"] != pid


async def test_ambiguous_prefix_is_a_conflict() -> None:
    async with running_service() as (_service, client):
        await client.post("/start")
        seen: dict[str, str] = {}
        # 17 tabs guarantee two ids share a first hex digit (pigeonhole).
        for _ in range(17):
            for tab in (await client.get("/tabs")).json()["tabs"]:
                first = tab["targetId"][0]
                if first in seen and seen[first] != tab["targetId"]:
                    resp = await client.post("/tabs/focus", json={"targetId": first})
                    assert resp.status_code == 409
                    assert "ambiguous" in resp.json()["error"]["message"]
                    return
                seen[first] = tab["targetId"]
            await client.post("/tabs/open", json={"url": "about:blank"})
        pytest.fail("never found two tabs sharing a prefix")


async def test_two_managed_profiles_at_once() -> None:
    cfg = service_config()
    cfg.profiles["work"] = config.ProfileConfig("work", "managed", "#0066CC", cdp_port=free_port())
    async with running_service(cfg) as (_service, client):
        a = (await client.post("/start", params={"profile": "agent"})).json()
        b = (await client.post("/start", params={"profile": "work"})).json()
        assert a["running"] and b["running"] and a["pid"] != b["pid"]
        assert a["cdpPort"] != b["cdpPort"]
        await client.post(
            "/tabs/open", params={"profile": "work"}, json={"url": "data:text/html,w"}
        )
        work_tabs = (await client.get("/tabs", params={"profile": "work"})).json()["tabs"]
        agent_tabs = (await client.get("/tabs", params={"profile": "agent"})).json()["tabs"]
        assert {t["targetId"] for t in work_tabs}.isdisjoint({t["targetId"] for t in agent_tabs})
        profiles = (await client.get("/profiles")).json()["profiles"]
        by_name = {p["profile"]: p for p in profiles}
        assert by_name["agent"]["default"] is True
        assert by_name["work"]["running"] and by_name["agent"]["running"]


async def test_profile_create_delete_and_invalid_input() -> None:
    async with running_service() as (service, client):
        bad = await client.post("/profiles/create", json={"name": "Bad_Name"})
        assert bad.status_code == 400
        assert "invalid profile name 'Bad_Name'" in bad.json()["error"]["message"]
        bad = await client.post("/profiles/create", json={"name": "ok", "color": "orange"})
        assert bad.status_code == 400 and "#RRGGBB" in bad.json()["error"]["message"]
        dup = await client.post("/profiles/create", json={"name": "agent"})
        assert dup.status_code == 409
        missing = await client.post("/profiles/create", json={})
        assert missing.status_code == 400 and "name" in missing.json()["error"]["message"]
        # What a new profile takes is config.py's declaration (issue 13): not a setting
        # users keep to themselves (a hostile userDataDir), not one of another driver.
        own = await client.post("/profiles/create", json={"name": "ok", "userDataDir": "/etc"})
        assert own.status_code == 400 and "userDataDir" in own.json()["error"]["message"]
        other = await client.post("/profiles/create", json={"name": "ok", "pool": True})
        assert other.status_code == 400
        assert "pool is not a setting of managed profiles" in other.json()["error"]["message"]
        bounds = await client.post(
            "/profiles/create",
            json={"name": "ok", "cdpUrl": "ws://10.0.0.42:3000", "poolIdleSeconds": 1},
        )
        assert bounds.status_code == 400 and "from 10 to 86400" in bounds.json()["error"]["message"]
        spec = (await client.get("/openapi.json")).json()["components"]["schemas"]
        fields = spec["CreateProfile"]["properties"]
        for setting in config.CREATE_FIELDS:
            assert fields[setting.key]["description"] == setting.description
        assert fields["driver"]["anyOf"][0]["enum"] == list(config.DRIVERS)
        assert "ok" not in json.loads(paths.config_file().read_text())["profiles"]

        created = (await client.post("/profiles/create", json={"name": "work"})).json()
        assert created["driver"] == "managed" and created["cdpPort"] in config.MANAGED_PORT_RANGE
        on_disk = json.loads(paths.config_file().read_text())
        assert on_disk["profiles"]["work"]["cdpPort"] == created["cdpPort"]

        # Give it a port nobody else on this machine uses, then run it to create user data.
        await service.update_settings(
            lambda c: setattr(c.profiles["work"], "cdp_port", free_port())
        )
        await client.post("/start", params={"profile": "work"})
        user_data = paths.profile_user_data_dir("work")
        assert user_data.exists()

        remote = (
            await client.post(
                "/profiles/create", json={"name": "far", "cdpUrl": "http://10.0.0.42:9222"}
            )
        ).json()
        assert remote["driver"] == "remote"

        gone = (await client.delete("/profiles/work")).json()
        assert gone["removedData"] == str(paths.profile_dir("work"))
        assert not user_data.exists()
        assert "work" not in json.loads(paths.config_file().read_text())["profiles"]
        unknown = await client.get("/", params={"profile": "work"})
        assert unknown.status_code == 404
        assert "profile 'work' does not exist" in unknown.json()["error"]["message"]
        default = await client.delete("/profiles/agent")
        assert default.status_code == 409


async def test_port_in_use_at_start_is_a_clear_error() -> None:
    cfg = service_config()
    assert cfg.profiles["agent"].cdp_port is not None
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", cfg.profiles["agent"].cdp_port))
        squatter.listen(1)
        async with running_service(cfg) as (_service, client):
            resp = await client.post("/start")
            assert resp.status_code == 409
            err = resp.json()["error"]
            assert err["code"] == "port_in_use"
            assert str(cfg.profiles["agent"].cdp_port) in err["message"]
            assert err["hint"]


async def test_control_port_in_use_is_a_clear_error() -> None:
    cfg = service_config()
    config.save(cfg)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", cfg.control_port))
        squatter.listen(1)
        service = build_service(force_headless=True)
        from browserdeck.errors import Conflict

        with pytest.raises(
            Conflict, match=f"port {cfg.control_port} on 127.0.0.1 is already in use"
        ):
            # "No hang": the engine's start, waiting for the API, is called off.
            await asyncio.wait_for(service.start(), 30)
        assert service.stopped.is_set()
    # Nothing left: not the Playwright driver spawned for the engine (engine/pwdriver.py).
    assert live_drivers() == []


async def test_sigkilled_browser_is_detected_and_start_recovers() -> None:
    async with running_service() as (service, client):
        started = (await client.post("/start")).json()
        ctx = service.contexts["agent"]
        os.killpg(started["pid"], signal.SIGKILL)
        for _ in range(200):
            if ctx.state == "crashed":
                break
            await asyncio.sleep(0.05)
        status = (await client.get("/")).json()
        assert status["running"] is False and status["state"] == "crashed"
        assert "killed outright" in status["detail"]
        tabs = await client.get("/tabs")  # an engine-free route starts the browser on demand
        assert tabs.status_code == 200
        status = (await client.get("/")).json()
        assert status["running"] is True and status["pid"] != started["pid"]


async def test_disabled_browser_control() -> None:
    async with running_service(service_config(enabled=False)) as (_service, client):
        for method, path in [("POST", "/start"), ("GET", "/tabs"), ("POST", "/tabs/open")]:
            resp = await client.request(method, path)
            assert resp.status_code == 503, path
            assert resp.json()["error"]["message"] == "browser control is disabled in settings"
        status = (await client.get("/")).json()
        assert status["enabled"] is False


async def test_corrupt_config_is_reported_on_status() -> None:
    paths.config_file().write_text("{ definitely not json")
    cfg_port = free_port()
    service = build_service(force_headless=True, control_port=cfg_port)
    await service.start()
    try:
        async with httpx.AsyncClient(
            base_url=service.url,
            trust_env=False,
            headers={"Authorization": f"Bearer {service.api_token}"},
        ) as c:
            status = (await c.get("/")).json()
        assert "could not be used" in status["configProblem"]
        kept = list(paths.config_dir().glob("config.json.bad-*"))
        assert kept and kept[0].read_text() == "{ definitely not json"
    finally:
        await service.stop()


async def test_reset_profile_kills_an_orphan(chromium_path: str, tmp_path: Path) -> None:
    from tests.support.browsers import launch_raw_chromium

    orphan = await launch_raw_chromium(chromium_path, tmp_path / "orphan")
    cfg = service_config()
    cfg.profiles["agent"].cdp_port = orphan.port
    try:
        async with running_service(cfg) as (_service, client):
            blocked = await client.post("/start")
            assert blocked.status_code == 409
            reset = (await client.post("/reset-profile")).json()
            assert orphan.proc.pid in reset["killedPids"]
            await asyncio.to_thread(orphan.proc.wait, 10)
            started = await client.post("/start")
            assert started.status_code == 200 and started.json()["running"]
    finally:
        await orphan.close()


async def test_every_open_tab_can_be_screenshot() -> None:
    # Headless Chromium renders only the active tab of a window: a tab hidden behind a
    # later one produces no frames, so its screenshot waited (often past the timeout).
    # Each tab gets a window of its own, as Playwright gives each page.
    async with running_service() as (service, client):
        opened = []
        for n in range(3):
            url = f"data:text/html,<h1>tab {n}</h1>"
            opened.append((await client.post("/tabs/open", json={"url": url})).json()["targetId"])
        ctx = service.profile(None)
        windows = {
            (await ctx.impl.cdp_call("Browser.getWindowForTarget", {"targetId": t}))["windowId"]
            for t in opened
        }
        assert len(windows) == len(opened)
        for target_id in opened:
            shot = await client.post("/screenshot", json={"targetId": target_id})
            assert shot.status_code == 200, shot.text
            assert shot.json()["targetId"] == target_id


async def test_unknown_routes_and_unreadable_bodies_get_the_error_shape() -> None:
    async with running_service() as (_service, client):
        cases = [
            (await client.get("/nope"), 404, "no route GET /nope"),
            (await client.put("/tabs"), 405, "PUT /tabs is not allowed"),
            (await client.delete("/tabs/..%2Fprofiles%2Fagent"), 404, "no route"),
            (await client.post("/navigate"), 400, "the body: Field required"),
            (
                await client.post(
                    "/navigate",
                    content=b"[" * 100_000 + b"]" * 100_000,
                    headers={"content-type": "application/json"},
                ),
                400,
                "cannot read the request body",
            ),
            (
                await client.post(
                    "/navigate",
                    content=b'{"url": "\xff"}',
                    headers={"content-type": "application/json"},
                ),
                400,
                "cannot read the request body",
            ),
        ]
        for resp, status, message in cases:
            assert resp.status_code == status, resp.text
            error = resp.json()["error"]
            assert message in error["message"] and error["hint"], error
        assert "GET" in (await client.put("/tabs")).json()["error"]["hint"]
        assert "agent" in [p["profile"] for p in (await client.get("/profiles")).json()["profiles"]]


async def test_reset_profile_never_kills_a_program_that_is_not_a_browser() -> None:
    import subprocess
    import sys

    cfg = service_config()
    port = cfg.profiles["agent"].cdp_port
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, sys, time\n"
            f"s = socket.create_server(('127.0.0.1', {port}))\nprint('ready', flush=True)\n"
            "time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        async with running_service(cfg) as (_service, client):
            blocked = await client.post("/start")
            assert blocked.status_code == 409
            reset = await client.post("/reset-profile")
            assert reset.status_code == 409, reset.text
            error = reset.json()["error"]
            assert error["code"] == "port_held_by_other_program"
            assert f"pid {holder.pid}" in error["message"] and "not a browser" in error["message"]
            assert holder.poll() is None  # still alive
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


async def test_a_hand_edit_while_running_is_never_overwritten() -> None:
    async with running_service() as (service, client):
        created = await client.post("/profiles/create", json={"name": "first"})
        assert created.status_code == 200
        # The user adds a profile by hand while browserdeck runs.
        raw = json.loads(service.config_path.read_text())
        raw["profiles"]["handmade"] = {"driver": "remote", "cdpUrl": "http://127.0.0.1:9"}
        edited = json.dumps(raw, indent=2)
        service.config_path.write_text(edited)
        refused = await client.post("/profiles/create", json={"name": "second"})
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "config_changed_on_disk"
        assert service.config_path.read_text() == edited
        names = [p["profile"] for p in (await client.get("/profiles")).json()["profiles"]]
        assert "second" not in names


async def _hanging_evaluate(
    client: httpx.AsyncClient, settles: str = "new Promise(() => {})", timeout_ms: int = 60000
) -> asyncio.Task[httpx.Response]:
    """An /act evaluate returning ``settles`` (by default it never ends), returned once it
    is surely running in the page."""
    started = asyncio.Event()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started.set()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    fn = f"() => {{ fetch('http://127.0.0.1:{port}/'); return {settles}; }}"
    task = asyncio.create_task(
        client.post("/act", json={"kind": "evaluate", "fn": fn, "timeoutMs": timeout_ms})
    )
    try:
        await asyncio.wait_for(started.wait(), 30)
    finally:
        server.close()
    return task


async def test_a_request_running_when_the_service_stops_still_gets_its_answer() -> None:
    """The API stops first and lets running requests finish (up to its graceful timeout)
    before the browsers close: a call in flight at a SIGTERM gets its real answer."""
    async with running_service() as (service, client):
        await client.post("/navigate", json={"url": "about:blank"})
        running = await _hanging_evaluate(
            client, "new Promise(r => setTimeout(() => r('finished'), 1500))", timeout_ms=20000
        )
        stopping = asyncio.create_task(service.stop())
        answer = await asyncio.wait_for(running, 30)
        await asyncio.wait_for(stopping, 30)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"] == "finished"


async def test_stop_or_crash_during_an_action_says_the_browser_went() -> None:
    async with running_service() as (service, client):
        crashed = asyncio.Event()

        def on_state(**kw: object) -> None:
            if kw.get("state") == "crashed":
                crashed.set()

        service.events.profile_state.connect(on_state)
        await client.post("/navigate", json={"url": "about:blank"})
        waiting = await _hanging_evaluate(client)
        assert (await client.post("/stop")).status_code == 200
        error = (await waiting).json()["error"]
        assert error["code"] == "browser_gone" and "was stopped" in error["message"], error

        await client.post("/navigate", json={"url": "about:blank"})
        old_tab = (await client.get("/tabs")).json()["tabs"][0]["targetId"]
        pid = (await client.get("/")).json()["pid"]
        waiting = await _hanging_evaluate(client)
        os.killpg(pid, signal.SIGKILL)
        error = (await waiting).json()["error"]
        assert error["code"] == "browser_gone", error
        assert "crashed or was killed" in error["message"]
        await asyncio.wait_for(crashed.wait(), 30)

        # The next request restarts it; a tab id from before says why it is unknown.
        stale = await client.post("/tabs/focus", json={"targetId": old_tab})
        assert stale.status_code == 404, stale.text
        assert "crashed" in stale.json()["error"]["message"]
        assert "restarted" in stale.json()["error"]["message"]


async def test_file_urls_are_refused_unless_allowed() -> None:
    async with running_service() as (service, client):
        for method, path, body in [
            ("POST", "/tabs/open", {"url": "file:///etc/passwd"}),
            ("POST", "/navigate", {"url": "FILE:///etc/hostname"}),
        ]:
            resp = await client.request(method, path, json=body)
            assert resp.status_code == 403, path
            err = resp.json()["error"]
            assert err["code"] == "file_url_forbidden" and "allowFileUrls" in err["hint"]
        await service.update_settings(lambda c: setattr(c, "allow_file_urls", True))
        opened = await client.post("/tabs/open", json={"url": "file:///etc/hostname"})
        assert opened.status_code == 200, opened.text
        assert opened.json()["url"].startswith("file:///etc/hostname")


async def test_an_idle_keep_alive_connection_outlives_the_clients_own_expiry() -> None:
    """httpx drops an idle pooled connection after 5 s; the server must not close it
    first (uvicorn's default was also 5 s: a request sent just as the server closed
    the connection failed with a connection error, a few in 10,000 calls under load)."""
    async with running_service() as (service, _client):
        reader, writer = await asyncio.open_connection("127.0.0.1", service.api.port)
        request = (
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {service.api_token}\r\n\r\n"
        ).encode()
        try:
            for _ in range(2):
                writer.write(request)
                await writer.drain()
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                assert head.startswith(b"HTTP/1.1 200"), head
                length = int(
                    next(
                        line.split(b":", 1)[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    )
                )
                await reader.readexactly(length)
                await asyncio.sleep(httpx.Limits().keepalive_expiry + 1.0)
        finally:
            writer.close()
