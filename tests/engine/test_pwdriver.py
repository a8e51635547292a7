"""The Playwright driver (issue 14): Node's compile cache in a private folder of ours, and
the driver `serve` spawns before its imports, which the engine's start takes.

Real engines (real Playwright drivers); the driver's environment is read from /proc.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from browserdeck.engine import Engine, pwdriver
from browserdeck.engine.pwdriver import CACHE_VARIABLE
from browserdeck.util import paths
from tests.support.service import kill_pids, live_drivers

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the driver's environment from /proc"
)


def _driver_environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(): v.decode() for k, v in pairs}


def _cached_files(folder: Path) -> dict[Path, bytes]:
    return {f: f.read_bytes() for f in folder.rglob("*") if f.is_file()}


async def _start_and_stop() -> dict[str, str]:
    """Start a real engine, return its driver's environment, stop it (node writes the
    cache as it exits)."""
    engine = Engine()
    await engine.start()
    try:
        assert engine.driver_pid is not None
        return _driver_environ(engine.driver_pid)
    finally:
        await engine.stop()


async def test_the_driver_compiles_into_our_private_cache() -> None:
    folder = paths.node_compile_cache_dir()
    environ = await _start_and_stop()
    assert environ.get(CACHE_VARIABLE) == str(folder)
    assert _cached_files(folder), "the driver wrote no compile cache"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # Only the driver's: this process (and so Chromium, which it spawns) never had it.
    assert CACHE_VARIABLE not in os.environ


async def test_a_corrupt_cache_is_recompiled_not_run() -> None:
    await _start_and_stop()
    corrupted: dict[Path, bytes] = {}
    for path, data in _cached_files(paths.node_compile_cache_dir()).items():
        corrupted[path] = bytes(b ^ 0x5A for b in data)  # same size, every byte wrong
        path.write_bytes(corrupted[path])
    assert corrupted
    # The driver starts and answers: node rejected each file (its checksum) and compiled.
    await _start_and_stop()
    rewritten = _cached_files(paths.node_compile_cache_dir())
    assert all(rewritten[path] != data for path, data in corrupted.items())


async def test_a_cache_folder_that_is_not_ours_is_not_used(tmp_path: Path) -> None:
    elsewhere = tmp_path / "planted"
    elsewhere.mkdir()
    (paths.cache_dir() / "node-compile-cache").symlink_to(elsewhere)
    environ = await _start_and_stop()  # starts, uncached
    assert CACHE_VARIABLE not in environ
    assert not any(elsewhere.iterdir())


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_the_engine_takes_the_driver_spawned_early() -> None:
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None
    try:
        engine = Engine()
        await engine.start()
        try:
            assert engine.driver_pid == early  # not a second driver
            assert pwdriver.early_pid() is None
            # It answers: the engine's Playwright runs on it.
            assert engine._pw is not None and engine._pw.chromium.name == "chromium"
            # Spawned as Playwright spawns it, with our compile cache.
            assert _driver_environ(early).get(CACHE_VARIABLE) == str(paths.node_compile_cache_dir())
        finally:
            await engine.stop()
        assert _gone(early)
    finally:
        await pwdriver.discard_early()


async def test_an_early_driver_that_no_engine_took_is_stopped() -> None:
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None and not _gone(early)
    await pwdriver.discard_early()
    assert pwdriver.early_pid() is None
    assert _gone(early)  # it exited on its closed stdin, and was waited for


async def test_an_early_driver_that_died_is_replaced() -> None:
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None
    os.kill(early, signal.SIGKILL)
    for _ in range(200):  # until asyncio has seen it exit
        if pwdriver._early is not None and pwdriver._early._proc.returncode is not None:
            break
        await asyncio.sleep(0.01)
    engine = Engine()
    await engine.start()
    try:
        assert engine.driver_pid not in (None, early)
        assert engine._pw is not None and engine._pw.chromium.name == "chromium"
    finally:
        await engine.stop()
        await pwdriver.discard_early()


async def test_an_early_driver_that_dies_as_it_is_taken_is_replaced(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Killed the moment the engine's start takes it (its exit not yet seen): the start
    # fails on it, and one more start spawns a fresh driver.
    real_take = pwdriver._take

    def take_then_kill() -> Any:
        early = real_take()
        if early is not None:
            os.kill(early._proc.pid, signal.SIGKILL)
        return early

    monkeypatch.setattr(pwdriver, "_take", take_then_kill)
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None
    engine = Engine()
    try:
        await engine.start()
        assert engine.driver_pid not in (None, early)
        assert "spawned early failed" in caplog.text  # the retry, not _take's skip
    finally:
        await engine.stop()
        await pwdriver.discard_early()


async def test_a_start_that_fails_on_a_live_early_driver_stops_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Playwright's client keeps no handle on a start that failed: the driver it ran on
    # is stopped here, and the failure stands (no second start hides it).
    from playwright._impl.connection import Connection

    async def refuse(self: Connection) -> Any:
        raise RuntimeError("initialize refused (test)")

    monkeypatch.setattr(Connection, "initialize_playwright", refuse)
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None
    try:
        with pytest.raises(RuntimeError, match="initialize refused"):
            await Engine().start()
        assert _gone(early)
    finally:
        await pwdriver.discard_early()


async def test_overlapping_engine_starts_give_the_switch_interval_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two services' engine starts in one process: the interval before the first comes back.
    from browserdeck.service import Service

    async def no_start(self: Engine) -> None:
        return None

    monkeypatch.setattr(Engine, "start", no_start)
    before = sys.getswitchinterval()
    go = asyncio.Event()
    go.set()
    try:
        await asyncio.gather(Service()._start_engine(go), Service()._start_engine(go))
        assert sys.getswitchinterval() == before
    finally:
        sys.setswitchinterval(before)


def _stuck_from_now_on(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every driver spawned from now on never answers Playwright's handshake (stopped
    with SIGSTOP: a hung driver cannot be had on demand); their pids."""
    stuck: list[int] = []
    real_connect = pwdriver._AdoptingTransport.connect

    async def connect(self: Any) -> None:
        await real_connect(self)
        os.kill(self._proc.pid, signal.SIGSTOP)
        stuck.append(self._proc.pid)

    monkeypatch.setattr(pwdriver._AdoptingTransport, "connect", connect)
    return stuck


async def test_a_stop_during_the_drivers_restart_leaves_no_driver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The driver died and the engine is starting another, which hangs: a stop then
    must end that start and its driver, not leave them running."""
    engine = Engine()
    await engine.start()
    stuck: list[int] = []
    try:
        old = engine.driver_pid
        assert old is not None
        stuck = _stuck_from_now_on(monkeypatch)
        os.kill(old, signal.SIGKILL)
        for _ in range(400):  # "no hang": the restart spawns its driver within 20 s
            if stuck:
                break
            await asyncio.sleep(0.05)
        assert stuck and engine.state == "restarting"
        await asyncio.wait_for(engine.stop(), 10)
        assert live_drivers() == []
    finally:
        kill_pids(stuck)
        await engine.stop()


async def test_a_driver_spawned_as_its_start_is_called_off_is_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stop (abort_start) that lands while a driver is being spawned, before the start
    knows it: the driver is killed once spawned, and the start ends as called off."""
    engine = Engine()
    real_connect = pwdriver.transport.PipeTransport.connect

    async def stop_as_it_spawns(self: Any) -> None:
        await real_connect(self)
        await engine.abort_start()

    monkeypatch.setattr(pwdriver.transport.PipeTransport, "connect", stop_as_it_spawns)
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(engine.start(), 10)  # "no hang"
        assert live_drivers() == []
        assert engine._pw is None
    finally:
        await engine.stop()


async def test_a_start_called_off_while_its_early_driver_exits_spawns_no_other() -> None:
    """A start that failed on the early driver waits (up to 1 s) to see it exit before
    spawning a fresh one: a stop meanwhile means no fresh one."""
    await pwdriver.start_early()
    early = pwdriver._take()
    assert early is not None
    watch = pwdriver.StartWatch()
    watch.adopted.append(early)
    try:
        worth = asyncio.create_task(pwdriver.worth_another_start(watch))
        await asyncio.sleep(0.1)  # waiting for the driver's exit
        await pwdriver.kill(watch)  # the stop: no driver of its own yet
        os.kill(early._proc.pid, signal.SIGKILL)
        assert await asyncio.wait_for(worth, 10) is False
    finally:
        kill_pids([early._proc.pid])
        await early._proc.wait()


async def test_a_start_called_off_before_it_takes_the_early_driver_kills_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stop that lands after the engine's start began but before its connection took
    the early driver: the driver it then takes (here one that never answers) is killed,
    and the start ends as called off at once, not at its deadline."""
    from browserdeck.engine import driver as engine_driver

    monkeypatch.setattr(engine_driver, "DRIVER_START_TIMEOUT", 8.0)
    await pwdriver.start_early()
    early = pwdriver.early_pid()
    assert early is not None
    os.kill(early, signal.SIGSTOP)  # it never answers Playwright's handshake
    engine = Engine()
    real_connect = pwdriver._AdoptingTransport.connect

    async def stop_first(self: Any) -> None:
        await engine.abort_start()
        await real_connect(self)

    monkeypatch.setattr(pwdriver._AdoptingTransport, "connect", stop_first)
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(engine.start(), 5)  # under the deadline: no hang
        assert live_drivers() == []
    finally:
        kill_pids([early])
        await engine.stop()
        await pwdriver.discard_early()
