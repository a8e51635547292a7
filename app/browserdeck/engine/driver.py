"""The engine's Playwright driver: started (on the one ``serve`` spawned early), watched,
restarted when it dies, stopped; and the pool of browser connections it serves.

``Engine`` (engine.py) is this with the calls on a tab.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Literal

from playwright.async_api import async_playwright

from browserdeck.engine import pwdriver
from browserdeck.engine.connection import BrowserPool, PoolHooks
from browserdeck.engine.state import TargetMemories
from browserdeck.errors import Unavailable
from browserdeck.util import aio

if TYPE_CHECKING:
    from collections.abc import Callable

    from playwright.async_api import Browser, Playwright

    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

Headers = dict[str, str] | None
EngineState = Literal["stopped", "running", "restarting"]

# Driver restarts back off up to this long between tries.
RESTART_BACKOFF_MAX = 10.0
# How long the Playwright driver gets to answer its handshake (its start takes under a
# second here, a few on a slow, busy machine): one that never answers would hold the
# service's start, and its stop, for ever.
DRIVER_START_TIMEOUT = 30.0

# How long a start called off may take to end once its drivers are killed (it fails at
# once on their closed pipes; the bound is for a start that somehow does not).
CALL_OFF_TIMEOUT = 5.0


async def _call_off(
    watch: pwdriver.StartWatch, start: asyncio.Future[tuple[Any, Playwright]]
) -> None:
    """End a driver start that is called off (a stop, or its deadline): its drivers are
    killed, then the start, which fails on them, is awaited; one that answered after all
    is stopped, so nothing of it is left running."""
    await pwdriver.kill(watch)
    try:
        _cm, late = await asyncio.wait_for(asyncio.shield(start), CALL_OFF_TIMEOUT)
    except TimeoutError:
        start.cancel()  # still not ended: cut off, whatever it waits for
        return
    except Exception:
        return  # failed on its killed driver, as it should
    with contextlib.suppress(Exception):
        await late.stop()  # a driver answered just as the start was called off


class EngineDriver:
    """The driver's life and the browser pool; ``Engine`` adds the calls."""

    def __init__(self, events: ServiceEvents | None = None) -> None:
        self.events = events
        self._pw_cm: Any = None
        self._pw: Playwright | None = None
        self._pool: BrowserPool | None = None
        self.memories = TargetMemories()
        self.state: EngineState = "stopped"
        self.restarts = 0  # driver restarts since start()
        self.last_failure: str | None = None  # why the driver last went away
        self._stopping = False
        self._watch: asyncio.Task[None] | None = None
        # The drivers of a start under way, for abort_start.
        self._starting: pwdriver.StartWatch | None = None
        self.pool_hooks: PoolHooks | None = None  # the engine's network rules (Engine)

    # --- lifecycle -------------------------------------------------------
    async def start(self) -> None:
        if self._pw is not None:
            return
        self._stopping = False
        await self._start_driver()
        self._watch = aio.create_task(self._watch_driver(), name="engine-driver-watch")
        log.info("engine started (Playwright driver pid %s)", self.driver_pid)

    async def launch_scratch(self, executable: str, args: list[str]) -> Browser:
        """A headless browser of the engine's own, for work that needs one and no profile
        (a recorded session's video: recording/video.py); the caller closes it."""
        pw = self._pw
        if pw is None:
            raise Unavailable(
                "the browser engine is not running", hint="start browserdeck again",
                code="engine_stopped",
            )
        return await pw.chromium.launch(
            executable_path=executable, args=args, headless=True, timeout=30_000
        )

    async def _start_driver(self) -> None:
        pwdriver.install()  # the early driver, Node's compile cache
        watch = self._starting = pwdriver.watch_start()
        # Not cancelled at the deadline: Playwright's client would leave its handshake
        # unanswered. Its driver is killed instead, and the start fails by itself.
        start = asyncio.ensure_future(self._connect_driver(watch))
        try:
            try:
                done = (await asyncio.wait([start], timeout=DRIVER_START_TIMEOUT))[0]
            except asyncio.CancelledError:
                # A stop cancelled this start (the driver watcher's restart): the driver
                # it was connecting must not outlive it.
                await aio.finish(
                    asyncio.ensure_future(_call_off(watch, start)), "calling off a driver start"
                )
                raise
            if not done:
                await _call_off(watch, start)
                raise Unavailable(
                    f"the Playwright driver did not answer within {DRIVER_START_TIMEOUT:.0f} s",
                    hint="the machine may be overloaded; start browserdeck again, and if this "
                    "repeats, see the log (`browserdeck paths` shows where)",
                    code="engine_start_timeout",
                )
            if watch.called_off and start.exception() is not None:
                # abort_start killed its driver: a stop called it off, which is no failure
                # (nor an ERROR in the log); it ends as cancelled.
                raise asyncio.CancelledError
            cm, pw = start.result()
        finally:
            self._starting = None
        self._pw_cm, self._pw = cm, pw
        self._pool = BrowserPool(pw, self.memories, self.events, self.pool_hooks)
        self.state = "running"

    async def _connect_driver(self, watch: pwdriver.StartWatch) -> tuple[Any, Playwright]:
        cm = async_playwright()
        try:
            return cm, await cm.start()
        except Exception as exc:
            if not await pwdriver.worth_another_start(watch):
                raise
            # The driver spawned early died just before it was taken: a fresh one.
            log.warning("the Playwright driver spawned early failed (%s); starting another", exc)
            cm = async_playwright()
            return cm, await cm.start()

    async def abort_start(self) -> None:
        """Call off a start still waiting for its driver (a stop): the driver is killed,
        so the start fails at once instead of holding the stop for as long as it takes."""
        self._stopping = True
        if self._starting is not None:
            await pwdriver.kill(self._starting)

    @property
    def driver_pid(self) -> int | None:
        """The Playwright driver (node) process, for status and for fault tests."""
        client = getattr(self._pw_cm, "_client", None)
        proc = getattr(getattr(client, "_transport", None), "_proc", None)
        pid = getattr(proc, "pid", None)
        return pid if isinstance(pid, int) else None

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "driverPid": self.driver_pid,
            "restarts": self.restarts,
            "lastFailure": self.last_failure,
        }

    async def _watch_driver(self) -> None:
        # playwright==1.65 (pinned): the client's close promise resolves when the driver's
        # pipe closes, whoever closed it; only our own stop() sets _stopping first.
        while not self._stopping:
            closed = getattr(getattr(self._pw_cm, "_client", None), "_close_promise", None)
            if closed is None:
                return
            await asyncio.shield(closed)
            error = getattr(getattr(self._pw_cm._client, "_transport", None), "on_error_future", None)
            if error is not None and error.done() and not error.cancelled():
                error.exception()  # read: asyncio must not log "never retrieved" at exit
            if self._stopping:
                return
            self.state = "restarting"
            self.restarts += 1
            self.last_failure = (
                f"the Playwright driver exited unexpectedly at {time.strftime('%H:%M:%S')}"
            )
            log.error("%s; restarting it (browsers keep running)", self.last_failure)
            if self.events is not None:
                self.events.notice.send(
                    level="warning",
                    title="Browser engine restarting",
                    message=f"{self.last_failure}; tabs stay open, refs must be taken again",
                )
            self._pool, self._pw = None, None
            old, self._pw_cm = self._pw_cm, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.__aexit__(), 5)
            delay = 0.2
            while not self._stopping:
                try:
                    await self._start_driver()
                except Exception as exc:
                    self.last_failure = f"restarting the Playwright driver failed: {exc}"
                    log.error("%s; next try in %.1f s", self.last_failure, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RESTART_BACKOFF_MAX)
                    continue
                log.info("Playwright driver restarted (pid %s)", self.driver_pid)
                break

    async def stop(self) -> None:
        self._stopping = True
        self.state = "stopped"
        watch, self._watch = self._watch, None
        await aio.cancel_and_wait(watch)
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close_all()
        pw, self._pw = self._pw, None
        if pw is not None:
            try:
                await pw.stop()
            except Exception:  # the driver already went away
                log.debug("stopping playwright", exc_info=True)
        self._pw_cm = None

    async def drop(self, cdp_url: str) -> None:
        """The profile behind ``cdp_url`` stopped: forget its connection (refs stay in LRU)."""
        if self._pool is not None:
            await self._pool.drop(cdp_url)

    @property
    def pool(self) -> BrowserPool:
        if self._stopping or (self._pool is None and self.state == "restarting"):
            raise self._restarting_error()
        if self._pool is None:
            raise Unavailable(
                "the browser engine is not running",
                hint="this is a browserdeck bug: page calls wait until the engine runs",
                code="engine_stopped",
            )
        return self._pool

    @staticmethod
    def _stopping_error() -> Unavailable:
        # Not "a browserdeck bug": a call that arrives while the service shuts down (or
        # outlived the API's graceful wait) is told so.
        return Unavailable(
            "the browser engine is stopping: browserdeck is shutting down",
            hint="start browserdeck again (the tray, or `browserdeck serve`) and retry",
            code="engine_stopped",
        )

    def _restarting_error(self) -> Unavailable:
        if self._stopping:  # our own stop() closed the driver: not a restart
            return self._stopping_error()
        return Unavailable(
            f"the browser engine is restarting: {self.last_failure or 'its driver exited'}",
            hint="retry in a few seconds; tabs stay open, but take a new snapshot: refs from "
            "before the restart cannot be used",
            code="engine_restarting",
        )

    async def attach(
        self, cdp_url: str, headers: Headers, keep_if: Callable[[], bool]
    ) -> int:
        """Connect to a browser the service launched and take in its tabs ahead of the
        first call (``BrowserPool.attach``); how many tabs it holds then."""
        return await self.pool.attach(cdp_url, headers, keep_if)

    def holds(self, cdp_url: str, target_id: str) -> bool:
        """Whether the engine has this tab attached and open (``BrowserPool.holds``)."""
        return self._pool is not None and self._pool.holds(cdp_url, target_id)
