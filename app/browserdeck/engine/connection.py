"""One persistent Playwright connection per CDP URL, and pages by CDP targetId.

``connect_over_cdp`` costs a few hundred milliseconds, so a connection is made
once per browser and reused by every request. It is retried (3 tries, growing
timeouts), dropped when the browser disconnects and rebuilt by the next request.

Playwright does not expose a page's CDP targetId. We ask each page once, with
``Target.getTargetInfo`` over a CDP session that we keep for the page's life
(the labelled screenshot reuses it), and cache targetId -> PageState.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from browserdeck.engine import offline
from browserdeck.engine.state import PageState, TargetMemories, origin_of
from browserdeck.errors import START, STATUS, TABS, Hint, NotFound, Unavailable
from browserdeck.relay.slot import SLOT_HEADER, is_slot_busy_error, wait_for_client_slot
from browserdeck.results import ConsoleContext
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright

    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

CONNECT_TRIES = 3
# How long the engine waits for an extension relay's single-active client slot that
# someone else (a user's own script) holds, before it says who holds it.
RELAY_SLOT_WAIT = 30.0
# A connection retired after a tab's renderer crashed is closed this long after (seconds).
RETIRED_CLOSE_AFTER = 60.0
# A closed tab's memory (its refs, its last build) is let go this long after its Page
# closed, if its connection is still up (seconds). Playwright closes every Page of a
# browser that disconnects and only then reports the disconnect, and such a tab may still
# be open (a relay or a remote browser reconnects): its ref numbering must then stay, or
# refs would repeat in the tab.
CLOSED_TAB_FORGET_AFTER = 2.0
PAGE_APPEAR_WAIT = 3.0  # a tab the service just opened may reach Playwright a moment later
WARM_UP_TIMEOUT = 5.0  # the warm-up's one count; normally a few ms (BrowserPool._warm_up)


@dataclass
class Connection:
    cdp_url: str
    browser: Browser
    pages: dict[str, PageState] = field(default_factory=dict)  # targetId -> state
    by_page: dict[Page, PageState] = field(default_factory=dict)
    lost: bool = False
    map_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    page_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Set at the first page event and never cleared (``attach`` waits for it; ``page``
    # clears ``page_event`` as it waits, so two waiters on that one could miss a page).
    any_page: asyncio.Event = field(default_factory=asyncio.Event)
    gone: asyncio.Event = field(default_factory=asyncio.Event)  # set when disconnected


@dataclass(frozen=True)
class PoolHooks:
    """What the engine's network rules need of the pool (engine/network.py): whether every
    tab of a browser must be taken in as it opens, and each tab taken in (with its opener)."""

    wants_every_tab: Callable[[str], bool]
    registered: Callable[[PageState, PageState | None], Awaitable[None]]


@dataclass
class Connecting:
    """A connect in progress that other callers share (``BrowserPool.connection``)."""

    future: asyncio.Future[Connection]
    # Made ahead of any call (``BrowserPool.attach``): a caller that joined it and sees it
    # fail connects itself, since that failure (a changed browser, a cancelled warm-up,
    # one short try) is not the caller's own.
    ahead: bool
    waiters: int = 0


class BrowserPool:
    def __init__(
        self,
        playwright: Playwright,
        memories: TargetMemories,
        events: ServiceEvents | None = None,
        hooks: PoolHooks | None = None,
    ) -> None:
        self._pw = playwright
        self._hooks = hooks
        self._memories = memories
        self._events = events
        self._conns: dict[str, Connection] = {}
        self._connecting: dict[str, Connecting] = {}
        # key -> (real URL, headers, tries, timeout ms): a browser-service profile
        # (browserdeck.drivers.leases) names each of its connections by a key without the secret,
        # and each try at its URL starts a browser there, so it is tried once.
        self._endpoints: dict[str, tuple[str, dict[str, str], int, int]] = {}
        # Page calls so far: a warm-up runs only before the first (``attach``).
        self.page_calls = 0

    def set_endpoint(
        self, key: str, url: str, headers: dict[str, str], *, tries: int = 1, timeout_ms: int = 20_000
    ) -> None:
        """Connect ``key`` to ``url`` with ``headers`` (the URL and headers may hold a secret)."""
        self._endpoints[key] = (url, headers, tries, timeout_ms)

    def forget_endpoint(self, key: str) -> None:
        self._endpoints.pop(key, None)

    # --- connections -----------------------------------------------------
    async def connection(
        self,
        cdp_url: str,
        headers: dict[str, str] | None,
        *,
        keep_if: Callable[[], bool] | None = None,
    ) -> Connection:
        """The connection to ``cdp_url``, made once and shared by every caller.

        ``keep_if``: a connection made ahead of any call (``attach``), tried once and kept
        only if ``keep_if()`` still holds once it is made (the browser may have been
        stopped, or replaced by another on the same port, meanwhile).
        """
        while True:
            conn = self._conns.get(cdp_url)
            if conn is not None and not conn.lost:
                return conn
            pending = self._connecting.get(cdp_url)
            if pending is None:
                break
            if not pending.ahead:  # someone is already connecting: share the outcome
                return await asyncio.shield(pending.future)
            pending.waiters += 1
            try:
                await asyncio.wait([pending.future])
            finally:
                pending.waiters -= 1
            if not pending.future.cancelled() and pending.future.exception() is None:
                return pending.future.result()
            # The connect made ahead failed or was dropped: connect anew, for this call.
        future: asyncio.Future[Connection] = asyncio.get_running_loop().create_future()
        self._connecting[cdp_url] = Connecting(future, ahead=keep_if is not None)
        try:
            conn = await self._connect(cdp_url, headers, tries=1 if keep_if else None)
            if keep_if is not None and not keep_if():
                with contextlib.suppress(Exception):  # never closes the browser itself
                    await asyncio.wait_for(conn.browser.close(), 10)
                raise Unavailable(
                    f"the browser at {cdp_url} changed while the engine connected ahead",
                    hint="nothing to do: the next call connects anew",
                    code="browser_changed",
                )
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: waiters get it, nobody else must
            raise
        else:
            self._conns[cdp_url] = conn
            future.set_result(conn)
            return conn
        finally:
            self._connecting.pop(cdp_url, None)

    async def _connect(
        self, cdp_url: str, headers: dict[str, str] | None, *, tries: int | None = None
    ) -> Connection:
        if headers and SLOT_HEADER in headers:
            # An extension relay in single-active mode serves one client at a time: wait
            # (polling /client-slot with jitter) rather than fail, then name the holder.
            await wait_for_client_slot(cdp_url, headers, wait=RELAY_SLOT_WAIT)
        last: Exception | None = None
        target, fixed_timeout = cdp_url, 0
        tries = tries or CONNECT_TRIES
        if cdp_url in self._endpoints:
            target, extra, tries, fixed_timeout = self._endpoints[cdp_url]
            headers = {**(headers or {}), **extra}
        for attempt in range(tries):
            timeout_ms = fixed_timeout or 5_000 + attempt * 2_500
            try:
                browser = await self._pw.chromium.connect_over_cdp(
                    target, timeout=timeout_ms, headers=headers or None
                )
            except PlaywrightError as exc:
                # The message may quote the real URL, with its token: name it by its key.
                last = PlaywrightError(str(exc).replace(target, cdp_url)) if target != cdp_url else exc
                if headers and SLOT_HEADER in headers and is_slot_busy_error(exc):
                    # Someone took the slot between our check and the connect.
                    await wait_for_client_slot(cdp_url, headers, wait=RELAY_SLOT_WAIT)
                    continue
                log.info(
                    "connect %s try %d failed: %s", cdp_url, attempt + 1, str(last).splitlines()[0]
                )
                if attempt + 1 < tries:
                    await asyncio.sleep(0.2 * (attempt + 1))
                continue
            conn = Connection(cdp_url, browser)

            def on_disconnected(_browser: Browser, conn: Connection = conn) -> None:
                self._on_disconnected(conn)

            def on_context(context: BrowserContext, conn: Connection = conn) -> None:
                self._watch_context(conn, context)

            browser.on("disconnected", on_disconnected)
            browser.on("context", on_context)
            for context in browser.contexts:
                self._watch_context(conn, context)
            log.info("connected to %s", cdp_url)
            return conn
        first = str(last).strip().splitlines()[0] if last else "unknown error"
        raise Unavailable(
            f"cannot connect to the browser at {cdp_url} after {tries} tries: {first}",
            hint=Hint(
                "check that the profile's browser is running ({status}) and start it with "
                "{start}; an extension profile needs the extension connected",
                status=STATUS,
                start=START,
            ),
            code="browser_unreachable",
        )

    def _watch_context(self, conn: Connection, context: BrowserContext) -> None:
        def on_page(page: Page) -> None:
            conn.page_event.set()
            conn.any_page.set()
            hooks = self._hooks
            if hooks is not None and hooks.wants_every_tab(conn.cdp_url) and not conn.lost:
                # A popup or a tab someone opened: it obeys the routes and rules at once.
                aio.create_task(self._map_pages(conn, ""), name="take-in-new-tab")

        def on_console(msg: ConsoleMessage) -> None:
            # Page and dedicated-worker messages reach the page's own listener (PageState).
            # A service worker's messages have no page, and Playwright sends them only to
            # a context "console" listener: give them to every tab of the worker's origin.
            worker = msg.worker
            if msg.page is not None or worker is None:
                return
            origin = origin_of(worker.url)
            kind: ConsoleContext = (
                "service-worker" if worker in context.service_workers else "worker"
            )
            for state in list(conn.pages.values()):
                page = state.page
                if (
                    page.context == context
                    and not page.is_closed()
                    and origin_of(page.url) == origin
                ):
                    state.record_console(msg, kind)

        context.on("page", on_page)
        context.on("console", on_console)

    def _forget_closed(self, conn: Connection, target_id: str) -> None:
        """A tab closed ``CLOSED_TAB_FORGET_AFTER`` ago: forget it, unless its connection
        is no longer the pool's (lost, dropped: the tab may be open; retired: the one that
        replaced it has the same tabs) or the tab is back."""
        if self._conns.get(conn.cdp_url) is conn and target_id not in conn.pages:
            self._memories.forget(conn.cdp_url, target_id)

    def _on_disconnected(self, conn: Connection) -> None:
        conn.lost = True
        conn.gone.set()
        for state in list(conn.pages.values()):
            state.cancel_arms()
        if self._conns.get(conn.cdp_url) is conn:
            del self._conns[conn.cdp_url]
        log.info("disconnected from %s", conn.cdp_url)

    def gone_event(self, cdp_url: str) -> asyncio.Event | None:
        """Set when the current connection to ``cdp_url`` drops (None: not connected)."""
        conn = self._conns.get(cdp_url)
        return conn.gone if conn is not None else None

    async def refresh(self, cdp_url: str) -> None:
        """Make the next call connect anew (a crashed tab's Page is dead in Playwright).

        The old connection is retired, not closed at once: calls of other tabs still
        running on it finish there; it is closed a minute later.
        """
        conn = self._conns.pop(cdp_url, None)
        if conn is None:
            return

        async def close_later() -> None:
            await asyncio.sleep(RETIRED_CLOSE_AFTER)
            conn.gone.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.browser.close(), 10)

        aio.create_task(close_later(), name=f"retire-{cdp_url}")

    async def drop(self, cdp_url: str) -> None:
        """Forget the connection (the profile stopped); never closes the browser itself."""
        conn = self._conns.pop(cdp_url, None)
        if conn is None:
            return
        conn.lost = True
        conn.gone.set()
        for state in list(conn.pages.values()):
            state.cancel_arms()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(state.settle(), 5)
        # For a connect_over_cdp browser, close() disconnects; the browser keeps running.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.browser.close(), 10)

    async def close_all(self) -> None:
        for cdp_url in list(self._conns):
            await self.drop(cdp_url)

    # --- pages -----------------------------------------------------------
    def holds(self, cdp_url: str, target_id: str) -> bool:
        """Whether a live Page of this tab is attached now (no round trip to the browser).

        Playwright closes the Page when the browser closes the target, so a held Page is
        an open tab; a tab closed in the moment after this answers fails in the call.
        """
        conn = self._conns.get(cdp_url)
        if conn is None or conn.lost:
            return False
        state = conn.pages.get(target_id)
        return state is not None and not state.page.is_closed()

    async def page(self, cdp_url: str, target_id: str, headers: dict[str, str] | None) -> PageState:
        self.page_calls += 1
        conn = await self.connection(cdp_url, headers)
        state = conn.pages.get(target_id)
        if state is not None and not state.page.is_closed():
            return state
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PAGE_APPEAR_WAIT
        while True:
            conn.page_event.clear()
            state = await self._map_pages(conn, target_id)
            if state is not None:
                return state
            remaining = deadline - loop.time()
            if remaining <= 0 or conn.lost:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(conn.page_event.wait(), remaining)
        if conn.lost:
            raise Unavailable(
                f"the browser at {cdp_url} disconnected",
                hint=Hint("start the profile again ({start})", start=START),
                code="browser_gone",
            )
        raise NotFound(
            f"tab {target_id} is not open in the browser at {cdp_url}",
            hint=Hint("list tabs ({tabs}) and use a targetId from there", tabs=TABS),
            code="tab_not_found",
        )

    async def all_pages(self, cdp_url: str) -> list[PageState]:
        """Every open tab of the connected browser, taken in (none when not connected)."""
        conn = self._conns.get(cdp_url)
        if conn is None or conn.lost:
            return []
        await self._map_pages(conn, "")
        return [s for s in conn.pages.values() if not s.page.is_closed()]

    async def attach(
        self,
        cdp_url: str,
        headers: dict[str, str] | None,
        keep_if: Callable[[], bool],
        *,
        first_tab_wait: float = PAGE_APPEAR_WAIT,
        warm_up: bool = True,
    ) -> int:
        """Connect to a browser and take in its tabs before any call needs them; how many.

        For a browser the service launched itself (the caller checks, and ``keep_if``
        says whether it is still that browser): the first page call then finds the
        connection made and its tab held. The browser's first tab may reach
        Playwright after the connect: it is waited for, up to ``first_tab_wait``.
        """
        conn = await self.connection(cdp_url, headers, keep_if=keep_if)
        if not any(context.pages for context in conn.browser.contexts):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(conn.any_page.wait(), first_tab_wait)
        if conn.lost or not keep_if():
            return 0
        await self._map_pages(conn, "")
        if conn.lost:  # dropped while its tabs were taken in: nothing is held
            return 0
        held = len(conn.pages)
        log.info("engine took in %d tab(s) of %s ahead of a call", held, cdp_url)
        if warm_up and await self._warm_up(conn):
            log.info("engine warmed up a blank tab of %s", cdp_url)
        return held

    async def _warm_up(self, conn: Connection) -> bool:
        """Before any page call: Playwright's injected script compiled once in a blank tab,
        so the first snapshot of the first page does not compile it cold (the renderer
        keeps the compiled script; ~30 ms of a ~60 ms first snapshot, measured).

        Read-only, and only a count: should a call navigate the tab meanwhile and this run
        in its new document, it changes nothing there (an aria snapshot would replace the
        one the agent's refs resolve against). A call never waits for it."""
        blank = [s for s in conn.pages.values() if s.page.url == "about:blank"]
        if not blank or self.page_calls or conn.lost:
            return False
        try:  # the prelaunched browser's one tab, the one a session's first call claims
            # Bounded: a dialog or a busy page would keep the early attach pending until
            # the service stops.
            await asyncio.wait_for(blank[0].page.locator(":root").count(), WARM_UP_TIMEOUT)
        except (PlaywrightError, TimeoutError) as exc:  # gone, navigated, stuck: not warmed
            log.debug("warm-up of %s: %r", blank[0].target_id[:8], exc)
            return False
        return True

    async def state_of(self, conn: Connection, page: Page) -> PageState | None:
        """The state of ``page`` (a tab that just appeared), taken in if need be."""
        if page not in conn.by_page and not page.is_closed():
            await self._map_pages(conn, "")
        return conn.by_page.get(page)

    async def _map_pages(self, conn: Connection, target_id: str) -> PageState | None:
        async with conn.map_lock:
            state = conn.pages.get(target_id)
            if state is not None and not state.page.is_closed():
                return state
            for context in conn.browser.contexts:
                for page in context.pages:
                    if page in conn.by_page or page.is_closed():
                        continue
                    await self._register(conn, context, page)
            state = conn.pages.get(target_id)
            return state if state is not None and not state.page.is_closed() else None

    async def _register(self, conn: Connection, context: BrowserContext, page: Page) -> None:
        try:
            cdp = await context.new_cdp_session(page)
            info = await cdp.send("Target.getTargetInfo")
        except PlaywrightError as exc:
            log.debug("cannot identify a page: %s", exc)
            return
        target_id = str(info["targetInfo"]["targetId"])
        memory = self._memories.get(conn.cdp_url, target_id)
        state = PageState(page, conn.cdp_url, target_id, cdp, memory)
        state.attach()
        conn.pages[target_id] = state
        conn.by_page[page] = state

        def on_close(_p: Page) -> None:
            state.cancel_arms()
            offline.release(state)
            if conn.pages.get(target_id) is state:
                del conn.pages[target_id]
                asyncio.get_running_loop().call_later(
                    CLOSED_TAB_FORGET_AFTER, self._forget_closed, conn, target_id
                )
            conn.by_page.pop(page, None)

        page.on("close", on_close)

        def on_crash(_p: Page) -> None:
            state.crashed.set()
            state.cancel_arms()
            log.warning("tab %s of %s: the renderer crashed (%s)", target_id[:8], conn.cdp_url,
                        page.url[:200])

        page.on("crash", on_crash)
        hooks = self._hooks
        if hooks is not None and hooks.wants_every_tab(conn.cdp_url):
            try:
                opener = await page.opener()
            except PlaywrightError:  # closed meanwhile
                opener = None
            await hooks.registered(state, conn.by_page.get(opener) if opener else None)
