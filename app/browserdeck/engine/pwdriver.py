"""The Playwright driver we spawn: its environment, and its start ahead of the engine.

Two things make its start cheaper for a service an MCP client waits for
(docs/performance.md, "the Playwright driver spawned first"): Node's compile cache
(``NODE_COMPILE_CACHE``, set in the driver's own environment, so Chromium and the user's
shell do not inherit it, in a private folder of ours, since node runs what it finds
cached there; a stale or corrupt entry costs a compile), and the driver spawned first
(``start_early``, by Playwright's own transport) before ``serve`` imports the service,
so node starts on the core those imports leave idle. The engine adopts it (``install``);
its owner stops one no engine took (``discard_early``). playwright is pinned (==1.65):
were the internals used here gone, the driver would start without the cache, or late,
and otherwise the same (tests/engine/test_pwdriver.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging

from playwright._impl import transport

from browserdeck.util import paths

log = logging.getLogger(__name__)

CACHE_VARIABLE = "NODE_COMPILE_CACHE"

# How long a driver that no engine took gets to exit after its stdin closed.
DISCARD_TIMEOUT = 5.0

_env_installed = False
_installed = False
# The driver start_early spawned, until an engine's start takes it (or discard_early).
_early: transport.PipeTransport | None = None


class StartWatch:
    """What the engine start running in one context (``watch_start``) connected to: the
    early driver it took (a start that failed on it is retried only if it had died), and
    every driver, to kill when the start is called off (``kill``)."""

    def __init__(self) -> None:
        self.adopted: list[transport.PipeTransport] = []
        self.drivers: list[transport.PipeTransport] = []
        self.called_off = False  # killed: no other start is worth it


_watch_here: contextvars.ContextVar[StartWatch | None] = contextvars.ContextVar(
    "browserdeck_driver_start", default=None
)
# How long a failed start waits to see the adopted driver's exit.
EXIT_SEEN_TIMEOUT = 1.0


def _install_env() -> None:
    global _env_installed
    if _env_installed:
        return
    original = getattr(transport, "get_driver_env", None)
    if not callable(original):
        log.warning("playwright has no get_driver_env: its driver starts without Node's cache")
        return

    @functools.wraps(original)
    def get_driver_env() -> dict[str, str]:
        env: dict[str, str] = original()
        try:
            env[CACHE_VARIABLE] = str(paths.node_compile_cache_dir())
        except OSError as exc:  # not ours (PermissionError) or not creatable: start uncached
            env.pop(CACHE_VARIABLE, None)
            log.warning("the Playwright driver starts without Node's compile cache: %s", exc)
        return env

    transport.get_driver_env = get_driver_env  # type: ignore[attr-defined]
    _env_installed = True


class _AdoptingTransport(transport.PipeTransport):
    """Playwright's pipe to the driver, taking the driver ``start_early`` spawned on
    this loop if there is one that still runs, else spawning one as Playwright does."""

    async def connect(self) -> None:
        # Playwright's client connects in a task of its own, which copied this context.
        # This transport, not the early one: its reader is the one to be told of a stop.
        watch = _watch_here.get()
        early = _take()
        if early is None:
            await super().connect()
            if watch is not None:
                watch.drivers.append(self)
                if watch.called_off:  # killed while this one was being spawned
                    await _kill(self)
            return
        if watch is not None:
            watch.adopted.append(self)
            watch.drivers.append(self)
        # PipeTransport.connect's three fields (playwright==1.65).
        self._stopped_future = early._stopped_future
        self._proc = early._proc
        self._output = early._output
        if watch is not None and watch.called_off:  # called off before it was taken
            await _kill(self)


def install() -> None:
    """Give every Playwright driver this process spawns from now on our compile cache,
    and let the next engine's start take a driver spawned by ``start_early``."""
    global _installed
    _install_env()
    if _installed:
        return
    from playwright._impl import out_of_process

    if getattr(out_of_process, "PipeTransport", None) is not transport.PipeTransport:
        log.warning("playwright's client has another transport: the early driver is not used")
    else:
        out_of_process.PipeTransport = _AdoptingTransport  # type: ignore[attr-defined]
    _installed = True


async def start_early() -> None:
    """Spawn the Playwright driver now, for this loop's next engine start to take.

    Best effort: if it cannot be spawned, the engine's start spawns one (and reports why
    that fails, if it does)."""
    global _early
    if _early is not None:
        return
    _install_env()
    early = transport.PipeTransport(asyncio.get_running_loop())
    try:
        await early.connect()
    except Exception as exc:
        early.on_error_future.exception()  # read: asyncio must not log it at exit
        log.info("the Playwright driver was not spawned early (%s); the engine will", exc)
        return
    _early = early


def early_pid() -> int | None:
    """The early driver's pid while no engine has taken it (tests, logs)."""
    return _early._proc.pid if _early is not None else None


def _take() -> transport.PipeTransport | None:
    global _early
    early = _early
    if early is None or early._loop is not asyncio.get_running_loop():
        return None  # none, or another loop's (its owner discards it)
    _early = None
    if early._proc.returncode is not None:  # it died meanwhile: not to be taken
        log.warning("the Playwright driver spawned early had exited (%s)", early._proc.returncode)
        return None
    return early


def watch_start() -> StartWatch:
    """Where the engine start about to run in this task tells which drivers it connects."""
    watch = StartWatch()
    _watch_here.set(watch)
    return watch


async def worth_another_start(watch: StartWatch) -> bool:
    """After an engine start failed: True if it failed on a driver spawned early that
    had died (just before it was taken: one more start spawns a fresh one). A driver it
    failed on that still runs is stopped (nothing else would: Playwright's client keeps
    no handle on a start that failed), and the failure stands."""
    taken, watch.adopted = watch.adopted, []
    if not taken or watch.called_off:
        return False
    try:
        await asyncio.wait_for(taken[0]._proc.wait(), EXIT_SEEN_TIMEOUT)
    except TimeoutError:
        await _stop(taken[0])
        return False
    return not watch.called_off  # a stop may have called the start off meanwhile


async def kill(watch: StartWatch) -> None:
    """Kill the drivers of a start that is called off (a stop, or no answer in time): a
    driver that never answers Playwright's handshake reads no stdin either. Its reader
    then sees the pipe close, and the start fails at once."""
    watch.called_off = True
    for driver in watch.drivers:
        await _kill(driver)


async def _kill(driver: transport.PipeTransport) -> None:
    proc = driver._proc
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def discard_early() -> None:
    """Stop the early driver if no engine took it (its owner's last step)."""
    early = _take()
    if early is not None:
        await _stop(early)


async def _stop(driver: transport.PipeTransport) -> None:
    driver.request_stop()  # closes its stdin: run-driver exits on that
    proc = driver._proc
    try:
        await asyncio.wait_for(proc.wait(), DISCARD_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
