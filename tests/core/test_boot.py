"""The service's boot order (issue 14): the API answers while the engine still starts.

Real service, real sockets, real Chromium. The one fake: the Playwright driver's start is
held at a gate, because a slow driver start cannot be produced on demand; the real start
runs once the gate opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from browserdeck import config
from browserdeck.api.server import ApiServer
from browserdeck.engine import Engine
from browserdeck.errors import BrowserdeckError
from browserdeck.master import build_service
from browserdeck.service import Service
from tests.support.net import free_port
from tests.support.service import (
    anon_client,
    api_client,
    first_health,
    kill_pids,
    live_drivers,
    running_service,
    service_config,
)


def _start() -> tuple[int, Service, asyncio.Task[None]]:
    """A headless service from a fresh config, its start under way: (its API port, it,
    the start)."""
    cfg = service_config()
    config.save(cfg)
    service = build_service(force_headless=True)
    return cfg.control_port, service, asyncio.create_task(service.start())


async def test_the_api_answers_before_the_engine_runs_and_a_page_call_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = asyncio.Event()
    real_start = Engine.start

    async def held_start(self: Engine) -> None:
        await gate.wait()
        await real_start(self)

    monkeypatch.setattr(Engine, "start", held_start)
    port, service, starting = _start()
    try:
        async with anon_client(port) as anon:
            health = await first_health(anon)
            assert health is not None, "the API did not listen while the engine started"
            # It answers, and says the engine is starting: not running yet, not stopped.
            assert health.json()["ok"] is False
            assert health.json()["engine"]["state"] == "starting"
            assert not starting.done()
            # Page calls made now wait for the engine instead of failing: one that opens a
            # tab on a URL, one on the default tab (through the front door's target()).
            await service.tokens_read()  # read once the API listens
            anon.headers["Authorization"] = f"Bearer {service.api_token}"
            opened = asyncio.create_task(
                anon.post("/tabs/open", json={"url": "data:text/html,<title>early</title>"})
            )
            navigated = asyncio.create_task(
                anon.post("/navigate", json={"url": "data:text/html,<title>also</title>"})
            )
            # Its browser starts meanwhile; then the call waits for the engine alone.
            agent = service.contexts["agent"]
            for _ in range(600):  # "no hang": up to 30 s for Chromium
                if agent.state == "running" or opened.done() or navigated.done():
                    break
                await asyncio.sleep(0.05)
            assert agent.state == "running"
            assert not opened.done(), opened.result().text
            assert not navigated.done(), navigated.result().text
            gate.set()
            resp = await opened
            assert resp.status_code == 200, resp.text
            assert resp.json()["title"] == "early"
            resp = await navigated
            assert resp.status_code == 200, resp.text
            assert resp.json()["title"] == "also"
            await asyncio.wait_for(starting, 30)
            assert (await anon.get("/health")).json()["ok"] is True
    finally:
        await _finish(gate, service, starting)


@contextlib.asynccontextmanager
async def _until_listening(port: int, service: Service) -> AsyncIterator[httpx.AsyncClient]:
    """A client with the token, once the API of a service whose engine is still being
    imported listens."""
    async with anon_client(port) as anon:
        assert await first_health(anon) is not None, "the API did not listen"
        assert service.engine is None and service.engine_starting  # still being imported
        await service.tokens_read()  # read once the API listens
        anon.headers["Authorization"] = f"Bearer {service.api_token}"
        yield anon


async def _finish(
    gate: threading.Event | asyncio.Event, service: Service, starting: asyncio.Task[None]
) -> None:
    gate.set()
    if not starting.done():
        await asyncio.wait([starting], timeout=30)
    if starting.done() and not starting.cancelled():
        starting.exception()  # retrieved: a start a stop called off raises
    await service.stop()


async def test_health_says_starting_while_the_engine_is_still_imported(
    held_engine_import: threading.Event,
) -> None:
    """The API listens before the engine is imported (issue 14): there is no engine yet
    then, and the state is still "starting", not "stopped"."""
    port, service, starting = _start()
    try:
        async with _until_listening(port, service) as anon:
            health = (await anon.get("/health")).json()
            assert health["ok"] is False
            assert health["engine"]["state"] == "starting"
            held_engine_import.set()
            await asyncio.wait_for(starting, 30)
            assert (await anon.get("/health")).json()["engine"]["state"] == "running"
    finally:
        await _finish(held_engine_import, service, starting)


async def test_page_calls_made_while_the_engine_is_imported_wait_for_it(
    held_engine_import: threading.Event,
) -> None:
    """A snapshot (one engine call on the tab) and a tab opened on a URL that cannot load
    wait for the engine, then answer as it does: not a 500, not a tab opened without it
    (which would say nothing of the URL not loading)."""
    port, service, starting = _start()
    try:
        async with _until_listening(port, service) as anon:
            await service.contexts["agent"].start()  # the browser runs; the engine does not
            snapshot = asyncio.create_task(anon.get("/snapshot"))
            # A free port (port 9 is on Chromium's restricted list: a 400 before any engine).
            closed = f"http://127.0.0.1:{free_port()}/nothing-listens"
            opened = asyncio.create_task(anon.post("/tabs/open", json={"url": closed}))
            done, _ = await asyncio.wait([snapshot, opened], timeout=1.0)
            assert not done, [t.result().text for t in done]
            held_engine_import.set()
            resp = await snapshot
            assert resp.status_code == 200, resp.text
            resp = await opened
            assert resp.status_code == 502, resp.text  # the engine's navigation_failed
            assert resp.json()["error"]["code"] == "navigation_failed"
    finally:
        await _finish(held_engine_import, service, starting)


async def test_a_stop_while_the_engine_is_imported_calls_its_start_off(
    held_engine_import: threading.Event,
) -> None:
    import sys

    from browserdeck.engine import pwdriver

    before = sys.getswitchinterval()
    port, service, starting = _start()
    try:
        async with _until_listening(port, service):
            pass
        assert sys.getswitchinterval() < before  # the import is under way
        await asyncio.wait_for(service.stop(), 10)  # "no hang"
        assert sys.getswitchinterval() == before
        assert starting.done()
        assert pwdriver.early_pid() is None
        assert live_drivers() == []
    finally:
        await _finish(held_engine_import, service, starting)


async def test_a_stop_during_a_stuck_driver_start_still_stops_the_browser(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The browsers stop beside the engine's start, not after it: a driver that never
    answers must not keep Chromium running. The driver is stopped (SIGSTOP) to get one.
    A stop is no failure: the engine's start ends as called off, with no ERROR logged."""
    import os
    import signal

    from browserdeck.engine import pwdriver

    cfg = service_config()
    config.save(cfg)
    service = build_service(force_headless=True, prelaunch=True)
    await pwdriver.start_early()
    node = pwdriver.early_pid()
    assert node is not None
    os.kill(node, signal.SIGSTOP)  # it never answers Playwright's initialize
    starting = asyncio.create_task(service.start())
    stopping: asyncio.Task[None] | None = None
    try:
        async with anon_client(cfg.control_port) as anon:
            assert await first_health(anon) is not None
        agent = service.contexts["agent"]
        for _ in range(600):  # "no hang": up to 30 s for Chromium
            if agent.state == "running":
                break
            await asyncio.sleep(0.05)
        assert agent.state == "running"
        stopping = asyncio.create_task(service.stop())
        for _ in range(200):  # "no hang": 10 s
            if agent.state == "stopped":
                break
            await asyncio.sleep(0.05)
        assert agent.state == "stopped"
        # ... and the stop ends: the stuck driver is killed, so the start fails at once.
        await asyncio.wait_for(asyncio.shield(stopping), 10)
        assert live_drivers() == []
        assert starting.done()
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    finally:
        kill_pids([node])
        await asyncio.wait([starting], timeout=30)
        if starting.done() and not starting.cancelled():
            starting.exception()  # retrieved: the stop called the start off
        if stopping is not None:
            await asyncio.wait([stopping], timeout=30)
        await service.stop()


async def test_a_driver_that_never_answers_fails_the_start_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The driver's handshake has a deadline (engine/driver.py's DRIVER_START_TIMEOUT, 30 s; 1 s
    here): past it the driver is killed and the start fails saying so, rather than hang.
    The driver is stopped (SIGSTOP) to get one that never answers."""
    import os
    import signal

    from browserdeck.engine import driver as engine_driver
    from browserdeck.engine import pwdriver

    monkeypatch.setattr(engine_driver, "DRIVER_START_TIMEOUT", 1.0)
    config.save(service_config())
    service = build_service(force_headless=True)
    await pwdriver.start_early()
    node = pwdriver.early_pid()
    assert node is not None
    os.kill(node, signal.SIGSTOP)
    try:
        with pytest.raises(BrowserdeckError) as failed:
            await asyncio.wait_for(service.start(), 20)  # "no hang"
        assert failed.value.code == "engine_start_timeout"
        assert "did not answer within 1 s" in failed.value.message
        assert live_drivers() == []
    finally:
        kill_pids([node])
        await service.stop()


async def test_serve_stops_on_sigterm_while_its_driver_never_answers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM during the start (a driver that never answers here) calls the start off:
    `serve` exits cleanly at once and leaves no driver behind, instead of ignoring the
    signal until the start's own timeout."""
    import gc
    import os
    import signal

    from browserdeck import master
    from browserdeck.engine import pwdriver

    cfg = service_config()
    config.save(cfg)
    real_early = pwdriver.start_early
    stuck: list[int] = []

    async def start_early() -> None:
        await real_early()
        node = pwdriver.early_pid()
        if node is not None and not stuck:
            os.kill(node, signal.SIGSTOP)  # it never answers Playwright's handshake
            stuck.append(node)

    async def terminate_once_listening() -> None:
        async with anon_client(cfg.control_port) as anon:
            assert await first_health(anon) is not None, "the API did not listen"
        signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(pwdriver, "start_early", start_early)
    terminating = asyncio.create_task(terminate_once_listening())
    try:
        assert await asyncio.wait_for(master.serve(headless=True, port=None), 15) == 0
        await terminating
        assert stuck and live_drivers() == []
        assert "stopped before it had finished starting" in capsys.readouterr().err
    finally:
        gc.unfreeze()  # serve froze what it loaded; the next tests start clean
        terminating.cancel()
        kill_pids(stuck)


async def test_the_api_answers_while_the_instance_file_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The instance file's write (two fsyncs) does not hold the loop: the first request
    the listening API let in (a `browserdeck mcp` client's initialize) is answered
    meanwhile (issue 14). The write is held at a gate: a slow disk cannot be had on demand."""
    import threading

    from browserdeck.util import paths

    gate = threading.Event()
    written = threading.Event()
    real_write = Service._write_instance_file

    def held_write(self: Service) -> None:
        gate.wait(5)
        real_write(self)
        written.set()

    monkeypatch.setattr(Service, "_write_instance_file", held_write)
    port, service, starting = _start()
    try:
        async with anon_client(port) as anon:
            health = await first_health(anon)
            assert health is not None and health.status_code == 200
            assert not written.is_set(), "the API answered only once the file was written"
        gate.set()
        await starting
        assert paths.instance_file().exists()
    finally:
        gate.set()
        if not starting.done():
            await asyncio.wait([starting])
        await service.stop()


async def _cancel_start_while_writing(
    monkeypatch: pytest.MonkeyPatch,
    write: Callable[[Service], None],
    cancels: int,
    then: Callable[[], None] = lambda: None,
) -> None:
    """A service whose start is cancelled ``cancels`` times while its instance file is
    being written by ``write`` (on its thread), then ``then``; returns once it has
    stopped, its start cancelled."""
    import threading

    entered = threading.Event()

    def entering(self: Service) -> None:
        entered.set()
        write(self)

    monkeypatch.setattr(Service, "_write_instance_file", entering)
    _, service, starting = _start()
    try:
        assert await asyncio.to_thread(entered.wait, 30), "the instance file was not written"
        for _ in range(cancels):
            starting.cancel()
            await asyncio.sleep(0)  # the cancel is delivered: start() is in its wait again
        then()
        await asyncio.wait([starting], timeout=30)
        assert starting.cancelled()
    finally:
        await service.stop()


async def test_a_start_cancelled_twice_leaves_no_instance_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The write runs on a thread and cannot be stopped: start() waits for it through
    every cancel, so stop() removes the file once it is there. A second cancel used to
    end that wait, and stop() found no file yet, then the thread wrote it: a stale
    instance.json naming this pid. The write is held until stop() has removed the file,
    or 1 s (the fixed start waits for the write, so stop() cannot come first; a slow disk
    cannot be had on demand)."""
    import threading

    from browserdeck.util import paths

    removed = threading.Event()
    real_remove, real_write = Service._remove_instance_file, Service._write_instance_file

    def remove(self: Service) -> None:
        real_remove(self)
        removed.set()

    def held_write(self: Service) -> None:
        removed.wait(1)
        real_write(self)

    monkeypatch.setattr(Service, "_remove_instance_file", remove)
    await _cancel_start_while_writing(monkeypatch, held_write, cancels=2)
    assert removed.is_set()
    assert not paths.instance_file().exists(), "a stale instance file names this process"


async def test_a_write_failing_after_the_start_was_cancelled_is_retrieved(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Cancelled while the write runs, and then the write fails: the cancel wins, the
    failure is logged, and nothing is left for asyncio's "Task exception was never
    retrieved" (which came once the start's frame was collected)."""
    import gc
    import threading

    gate = threading.Event()

    def failing_write(self: Service) -> None:
        gate.wait(30)
        raise OSError(28, "No space left on device")

    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        await _cancel_start_while_writing(monkeypatch, failing_write, cancels=1, then=gate.set)
        gc.collect()  # the start task and its frame, which held the write's task, are gone
    finally:
        gate.set()
        loop.set_exception_handler(None)
    assert [c["message"] for c in unhandled] == []
    assert "writing the instance file failed while the caller was cancelled" in caplog.text


async def test_mcp_answers_before_the_api_routes_are_built() -> None:
    """A service started for MCP clients builds the FastAPI app only when a route other
    than /mcp is used (api/staged.py); /mcp needs none of it, behind the same guard."""
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "boot-test", "version": "1"}},
    }  # fmt: skip
    mcp_headers = {"Accept": "application/json, text/event-stream", "X-Browserdeck-Session": "t"}
    cfg = service_config()
    config.save(cfg)
    # As `browserdeck mcp` starts it (serve --idle-exit): its browser at once.
    service = build_service(force_headless=True, prelaunch=True)
    await service.start()
    try:
        async with api_client(service) as client:
            api = service.api
            assert isinstance(api, ApiServer) and api.staged is not None
            resp = await client.post("/mcp", json=init, headers=mcp_headers)
            assert resp.status_code == 200, resp.text
            assert "serverInfo" in resp.text
            assert api.staged.app is None  # /mcp needed no FastAPI
            # A client configured with a trailing slash reaches it too (FastAPI used to
            # redirect /mcp/ to /mcp; a 404 would break such a client).
            slashed = await client.post(
                "/mcp/", json=init, headers={**mcp_headers, "X-Browserdeck-Session": "t2"}
            )
            assert slashed.status_code == 200 and "serverInfo" in slashed.text, slashed.text
            assert api.staged.app is None
            # The guard stands before /mcp all the same.
            refused = await client.post(
                "/mcp", json=init, headers={**mcp_headers, "Authorization": "Bearer wrong"}
            )
            assert refused.status_code == 401
            assert api.staged.app is None
            health = await client.get("/health")
            assert health.status_code == 200 and health.json()["ok"] is True
            assert api.staged.app is not None
            unknown = await client.get("/no-such-route")
            assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "no_route"
    finally:
        await service.stop()


async def test_a_service_started_by_hand_builds_the_api_routes_without_waiting_for_a_call() -> None:
    """`serve` and the tray: the FastAPI app is built in the background once the API
    listens, so the first CLI call does not pay for it."""
    async with running_service() as (service, _client):
        api = service.api
        assert isinstance(api, ApiServer) and api.staged is not None
        for _ in range(600):  # "no hang": up to 30 s under load
            if api.staged.app is not None:
                break
            await asyncio.sleep(0.05)
        assert api.staged.app is not None


async def test_serve_starts_the_service_without_cyclic_collections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collector is off while `serve` starts the service (its imports and start are
    CPU an MCP client waits for), and on again once it runs (issue 14)."""
    import gc
    import signal

    from browserdeck import master

    cfg = service_config()
    config.save(cfg)
    threshold = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's default: a start sets off dozens
    collections: list[int] = []
    seen: dict[str, bool] = {}
    real_start = Service.start
    real_enable = gc.enable
    young_at_enable: list[int] = []

    def enable() -> None:
        young_at_enable.append(gc.get_count()[0])
        real_enable()

    def note(phase: str, info: dict[str, object]) -> None:
        if phase == "start":
            collections.append(1)

    async def observed_start(self: Service) -> None:
        gc.callbacks.append(note)
        try:
            await real_start(self)
        finally:
            gc.callbacks.remove(note)
        seen["enabled during start"] = gc.isenabled()
        # Running: stop it the way a terminal would.
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)

    monkeypatch.setattr(Service, "start", observed_start)
    monkeypatch.setattr(gc, "enable", enable)
    try:
        assert await master.serve(headless=True, port=None) == 0
        assert seen == {"enabled during start": False}
        assert collections == []
        assert gc.isenabled()
        # What the start made was frozen before the collector came back on: its first
        # pass would walk all of it just as the first page call waits (~30 ms).
        assert young_at_enable and young_at_enable[0] < 700, young_at_enable
    finally:
        real_enable()
        gc.unfreeze()  # serve froze what it loaded; the next tests start clean
        gc.set_threshold(*threshold)


async def test_serve_spawns_the_playwright_driver_first_and_its_engine_runs_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`serve` spawns the driver before it builds (imports) the service, so node starts
    on the core those imports leave idle; the engine then runs on that very driver, and
    no second one is spawned (engine/pwdriver.py; issue 14)."""
    import gc
    import signal

    from browserdeck import master
    from browserdeck.engine import pwdriver

    config.save(service_config())
    steps: list[tuple[str, int | None]] = []
    real_early, real_build = pwdriver.start_early, master.build_service

    async def start_early() -> None:
        await real_early()
        steps.append(("driver spawned", pwdriver.early_pid()))

    def build(**kwargs: Any) -> Service:
        steps.append(("service built", None))
        return real_build(**kwargs)

    real_start = Service.start

    async def observed_start(self: Service) -> None:
        await real_start(self)
        assert self.engine is not None
        steps.append(("engine runs", self.engine.driver_pid))
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)

    monkeypatch.setattr(pwdriver, "start_early", start_early)
    monkeypatch.setattr(master, "build_service", build)
    monkeypatch.setattr(Service, "start", observed_start)
    try:
        assert await master.serve(headless=True, port=None) == 0
    finally:
        gc.unfreeze()  # serve froze what it loaded; the next tests start clean
    first, driver = steps[0], steps[0][1]
    assert first[0] == "driver spawned" and driver is not None, steps
    assert steps[1] == ("service built", None), steps
    assert steps[-1] == ("engine runs", driver), steps


async def test_the_tokens_are_read_once_the_playwright_driver_is_spawned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading the tokens imports the keyring (~25 ms of CPU): the driver's spawn does not
    wait behind it (it is the start's first step; issue 14), and the API still listens
    with the token."""


    from browserdeck.secrets import tokens as secrets

    drivers_seen: list[bool] = []
    real_get = secrets.get_token

    def get_token(kind: str = "api", *, create: bool = True) -> str | None:
        drivers_seen.append(bool(live_drivers()))
        return real_get(kind, create=create)

    monkeypatch.setattr(secrets, "get_token", get_token)
    async with running_service() as (service, client):
        assert service.api_token and service.relay_token
        assert (await client.get("/tabs")).status_code == 200
    assert drivers_seen[:2] == [True, True], drivers_seen


async def test_the_tokens_are_read_once_the_api_listens_and_what_needs_them_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading the tokens imports keyring (~50 ms of CPU): MCP's handshake over the Unix
    socket (the peer's uid, no token) and /health are answered before they are read. A
    right token sent over TCP meanwhile waits for them and passes, rather than a 401; a
    wrong one is refused once they are there; a managed browser's start waits too (its
    gateway checks the token). The read is held at a gate: a slow keyring cannot be had
    on demand."""
    from browserdeck.secrets import tokens as secrets
    from browserdeck.util import paths, uds

    gate = threading.Event()
    real_get = secrets.get_token

    def held_get_token(kind: str = "api", *, create: bool = True) -> str | None:
        gate.wait(30)
        return real_get(kind, create=create)

    token = real_get("api")  # stored now, so the service reads this one
    monkeypatch.setattr(secrets, "get_token", held_get_token)
    port, service, starting = _start()
    try:
        async with anon_client(port) as anon:
            assert await first_health(anon) is not None, "the API did not listen"
            sock = paths.api_socket_path()
            assert sock is not None
            init = {
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "boot-test", "version": "1"}},
            }  # fmt: skip
            status, _headers, body = await asyncio.to_thread(
                uds.request, sock, "POST", "/mcp", body=json.dumps(init).encode(), timeout=20,
                headers={"Content-Type": "application/json", "X-Browserdeck-Session": "t",
                         "Accept": "application/json, text/event-stream"},
            )  # fmt: skip
            assert status == 200 and b"serverInfo" in body, body
            right = asyncio.create_task(
                anon.get("/profiles", headers={"Authorization": f"Bearer {token}"})
            )
            launch = asyncio.create_task(service.contexts["agent"].start())
            relay = asyncio.create_task(service.contexts["chrome"].start())  # the extension's
            done, _ = await asyncio.wait([right, launch, relay], timeout=1.0)
            assert not done, [t.result() for t in done]
            assert service.api_token == ""  # still being read
            # A TCP client finds the service by it, and then needs the stored token.
            assert not paths.instance_file().exists()
            gate.set()
            resp = await asyncio.wait_for(right, 20)
            assert resp.status_code == 200, resp.text
            await asyncio.wait_for(launch, 30)
            assert service.contexts["agent"].state == "running"
            await asyncio.wait_for(relay, 30)
            assert service.contexts["chrome"].impl.relay is not None
            wrong = await anon.get("/profiles", headers={"Authorization": "Bearer wrong"})
            assert wrong.status_code == 401, wrong.text
            await asyncio.wait_for(starting, 30)
    finally:
        await _finish(gate, service, starting)


async def test_a_stop_while_the_tokens_are_read_calls_the_start_off_quietly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A stop then ends the start as called off (cancelled), not as a failure to read the
    tokens, and logs no failed engine start."""
    from browserdeck.secrets import tokens as secrets

    gate = threading.Event()
    real_get = secrets.get_token

    def held_get_token(kind: str = "api", *, create: bool = True) -> str | None:
        gate.wait(30)
        return real_get(kind, create=create)

    monkeypatch.setattr(secrets, "get_token", held_get_token)
    port, service, starting = _start()
    try:
        async with anon_client(port) as anon:
            assert await first_health(anon) is not None, "the API did not listen"
        await asyncio.wait_for(service.stop(), 10)
        await asyncio.wait([starting], timeout=10)
        assert starting.done() and not starting.cancelled()
        called_off = starting.exception()
        assert isinstance(called_off, BrowserdeckError), called_off
        assert called_off.code == "stopped_while_starting"
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
    finally:
        await _finish(gate, service, starting)


async def test_a_token_read_that_fails_fails_the_start_and_a_waiting_request_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from browserdeck.secrets import tokens as secrets

    gate = threading.Event()

    def broken_get_token(kind: str = "api", *, create: bool = True) -> str | None:
        gate.wait(30)
        raise OSError(13, "Permission denied", "/somewhere/api-token")

    monkeypatch.setattr(secrets, "get_token", broken_get_token)
    port, service, starting = _start()
    try:
        async with anon_client(port) as anon:
            assert await first_health(anon) is not None, "the API did not listen"
            waiting = asyncio.create_task(
                anon.get("/profiles", headers={"Authorization": "Bearer some-token"})
            )
            done, _ = await asyncio.wait([waiting], timeout=0.5)
            assert not done
            gate.set()
            resp = await asyncio.wait_for(waiting, 20)
            assert resp.status_code == 503, resp.text
            assert "could not read its API and relay tokens" in resp.json()["error"]["message"]
            assert "Permission denied" in resp.json()["error"]["message"]
        with pytest.raises(BrowserdeckError, match="could not read its API and relay tokens"):
            await asyncio.wait_for(starting, 30)
    finally:
        await _finish(gate, service, starting)


async def test_a_slow_keyring_still_lets_the_engine_take_in_the_prelaunched_tab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tokens are read once the driver is spawned; the connect made ahead through the
    browser's gateway carries the API token, so it waits for them (a keyring that asks to
    be unlocked can take seconds)."""
    import time

    from browserdeck.secrets import tokens as secrets

    real_get = secrets.get_token

    def slow_get_token(kind: str = "api", *, create: bool = True) -> str | None:
        time.sleep(3.0)  # longer than Chromium's and the driver's start here
        return real_get(kind, create=create)

    monkeypatch.setattr(secrets, "get_token", slow_get_token)
    config.save(service_config())
    service = build_service(force_headless=True, prelaunch=True)  # as `serve --idle-exit`
    await service.start()
    try:
        assert service.early_attach is not None
        await asyncio.wait_for(asyncio.shield(service.early_attach), 30)
        agent, engine = service.contexts["agent"], service.engine
        assert engine is not None
        tabs = [t.target_id for t in await agent.read_tabs()]
        assert tabs and all(engine.holds(agent.cdp_url, t) for t in tabs)
    finally:
        await service.stop()


async def test_a_stop_beside_a_start_that_has_not_started_anything_calls_it_off() -> None:
    """stop() from another task (the tray's Quit) while start() runs: the start must not
    go on to start everything after the stop has returned. The start is held on its
    first step (a thread) to get one."""
    gate = threading.Event()
    real_clean = Service._clean_leftovers

    def held_clean(self: Service) -> None:
        gate.wait(30)
        real_clean(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Service, "_clean_leftovers", held_clean)
        port, service, starting = _start()
        try:
            await asyncio.sleep(0.2)  # the start is on its first step
            assert not starting.done()
            await asyncio.wait_for(service.stop(), 10)  # "no hang"
            gate.set()
            with pytest.raises(BrowserdeckError) as called_off:
                await asyncio.wait_for(starting, 10)
            assert called_off.value.code == "stopped_while_starting"
            assert "stopped before it had finished starting" in called_off.value.message
            assert not service.started and service.api is None
            with pytest.raises(OSError):  # nothing listens: the start went no further
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
        finally:
            await _finish(gate, service, starting)


async def test_a_cancel_during_a_failed_starts_cleanup_keeps_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A signal to `serve` cancels its start; one landing while a start that failed
    stops what it had started must neither cut that stop half-way nor hide the failure
    behind a clean "stopped before it had finished starting" (exit 0)."""
    from browserdeck.errors import Unavailable

    async def failing_start(self: Engine) -> None:
        raise Unavailable("the engine could not start (test)", code="test_engine_failed")

    entered, release = asyncio.Event(), asyncio.Event()
    real_stop = Service.stop

    async def held_stop(self: Service) -> None:
        if not release.is_set():
            entered.set()
            await release.wait()
        await real_stop(self)

    monkeypatch.setattr(Engine, "start", failing_start)
    monkeypatch.setattr(Service, "stop", held_stop)
    _, service, starting = _start()
    try:
        await asyncio.wait_for(entered.wait(), 30)  # the failed start's cleanup runs
        starting.cancel()  # the signal
        await asyncio.sleep(0.1)
        assert not starting.done()  # the cleanup goes on
        release.set()
        await asyncio.wait([starting], timeout=10)
        assert starting.done() and not starting.cancelled(), starting
        failure = starting.exception()
        assert isinstance(failure, BrowserdeckError), failure
        assert failure.code == "test_engine_failed"
        assert service.stopped.is_set() and service.api is None  # stopped to its end
    finally:
        release.set()
        await _finish(release, service, starting)
