"""Run a real browserdeck Service for tests: real API socket, real Chromium, free ports."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx

from browserdeck import config
from browserdeck.config import Config
from browserdeck.master import build_service
from browserdeck.service import Service
from tests.support.net import free_port


def service_config(**overrides: object) -> Config:
    """Defaults, but every port free, so parallel runs on one machine never collide."""
    cfg = config.default_config()
    cfg.control_port = free_port()
    cfg.relay_port = free_port()
    cfg.profiles["agent"].cdp_port = free_port()
    for key, value in overrides.items():
        setattr(cfg, key, value)
    return cfg


@asynccontextmanager
async def running_service(
    cfg: Config | None = None, *, tweak: Callable[[Config], None] | None = None
) -> AsyncIterator[tuple[Service, httpx.AsyncClient]]:
    cfg = cfg or service_config()
    if tweak:
        tweak(cfg)
    config.save(cfg)
    service = build_service(force_headless=True)
    await service.start()
    try:
        async with api_client(service) as client:
            yield service, client
    finally:
        await service.stop()


@contextmanager
def module_home(factory: Any) -> Iterator[Path]:
    """A BROWSERDECK_HOME of its own (``factory``: pytest's tmp_path_factory) for a module
    whose service outlives single tests: use in a module-scoped autouse fixture."""
    import pytest

    home = factory.mktemp("bdhome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BROWSERDECK_HOME", str(home))
        mp.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        mp.delenv("BROWSERDECK_TOKEN", raising=False)
        mp.delenv("BROWSERDECK_URL", raising=False)
        yield home


def api_client(service: Service) -> httpx.AsyncClient:
    """An HTTP client of ``service``'s API with its token (use as ``async with``)."""
    return httpx.AsyncClient(
        base_url=service.url,
        headers={"Authorization": f"Bearer {service.api_token}"},
        timeout=60,
        trust_env=False,
    )


def instance_file_of(home: Path) -> str:
    """The instance file of the service running in ``home``, once there: a starting
    service writes it once its tokens are read, after its API already answers
    (service.py); "" if none comes within 10 s ("no hang")."""
    import time

    path = home / "state" / "instance.json"
    deadline = time.monotonic() + 10
    while True:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if time.monotonic() > deadline or not (home / "run" / "api.sock").exists():
                return ""
            time.sleep(0.02)


def stop_lingering_service(home: Path) -> None:
    """Stop a service that `browserdeck mcp` started in ``home`` and left running on
    purpose (it outlives its MCP clients; docs/mcp.md): a test must not leave it behind."""
    import json
    import os
    import signal
    import time

    from browserdeck.chrome.procs import pid_alive

    try:
        data = json.loads(instance_file_of(home))
        pid = int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if pid == os.getpid() or not pid_alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


def anon_client(port: int) -> httpx.AsyncClient:
    """A client of the API on ``port`` with no token (what reaches /health)."""
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60, trust_env=False)


async def first_health(anon: httpx.AsyncClient) -> httpx.Response | None:
    """The first /health answer of a service still starting; None if its API did not
    listen within 20 s ("no hang")."""
    for _ in range(400):
        try:
            return await anon.get("/health")
        except httpx.TransportError:
            await asyncio.sleep(0.05)
    return None


def hold_engine_import(monkeypatch: Any) -> threading.Event:
    """Hold the engine's import (a service imports it once its API listens) until the
    returned event is set: a slow import cannot be had on demand (the fixture
    ``held_engine_import`` sets it at the end whatever the test did)."""
    gate = threading.Event()
    real_import = importlib.import_module

    def held(name: str, package: str | None = None) -> Any:
        if name == "browserdeck.engine.engine":
            gate.wait(30)
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", held)
    return gate


def kill_pids(pids: list[int]) -> None:
    """SIGKILL each of ``pids`` still there (processes a test stopped with SIGSTOP)."""
    import contextlib
    import os
    import signal

    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def live_drivers() -> list[int]:
    """The Playwright drivers (node ``run-driver``) this process has running, zombies aside."""
    import contextlib

    import psutil

    drivers = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "run-driver" in child.cmdline() and child.status() != psutil.STATUS_ZOMBIE:
                drivers.append(child.pid)
    return drivers
