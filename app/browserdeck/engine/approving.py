"""The engine's calls for the approval addon (door/approval/requests.py): facts about the
element an action hits, a picture of it, and the in-page catch of scripts' actions.

``Engine`` has them as methods (``ApprovalCalls``), so ``call.aside`` reaches them by the
requests' ``engine_method`` as any engine call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck.engine import catch, risk
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

    from browserdeck.door.approval.requests import ActionPicture, CatchScripts, CheckAction
    from browserdeck.engine.connection import BrowserPool
    from browserdeck.engine.driver import Headers
    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

ARM_TIMEOUT = 5.0
T = TypeVar("T")


class ApprovalCalls:
    """Mixed into ``Engine``: it gives ``page_state`` and the pool."""

    async def page_state(
        self, cdp_url: str, target_id: str, headers: Headers, *, reads: bool = True
    ) -> PageState:
        raise NotImplementedError

    @property
    def pool(self) -> BrowserPool:
        raise NotImplementedError

    async def _bounded(self, state: PageState, what: str, seconds: float, work: Awaitable[T]) -> T:
        raise NotImplementedError

    async def approval_facts(
        self, cdp_url: str, target_id: str, headers: Headers, request: CheckAction
    ) -> dict[str, Any] | None:
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        # Bounded as the action would be: a crashed or hung tab says so at once (the
        # action could not run there either), rather than ask the person about it.
        return await self._bounded(
            state,
            "checking the element before the action",
            risk.FACTS_TIMEOUT,
            risk.facts(state, request.ref, request.key, request.rules),
        )

    async def approval_picture(
        self, cdp_url: str, target_id: str, headers: Headers, request: ActionPicture
    ) -> dict[str, Any] | None:
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        return await risk.picture(state, request.box)

    async def approval_catch(
        self, cdp_url: str, target_id: str, headers: Headers, request: CatchScripts
    ) -> Caught:
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        caught = Caught(request)
        await caught.arm(state)
        conn = await self.pool.connection(cdp_url, headers)
        if request.everywhere:
            others = [other for other in conn.pages.values() if other is not state]
        else:
            # A page script reaches the tabs of its opener chain (window.opener.document):
            # guarded too.
            others = [o for o in await _openers(state, conn.by_page) if o is not state]
        for other in others:
            await caught.arm(other)
        # And the tabs it opens while it runs (window.open, then a click in the popup).
        caught.watch(conn.browser.contexts, lambda page: self.pool.state_of(conn, page))
        return caught


async def _openers(state: PageState, by_page: Mapping[Page, PageState]) -> list[PageState]:
    """The tabs that opened this one, nearest first (as far as the browser knows them)."""
    found: list[PageState] = []
    page: Page | None = state.page
    while page is not None and len(found) < 10:
        try:
            page = await asyncio.wait_for(page.opener(), ARM_TIMEOUT)
        except Exception:  # closing, or a target the connection does not know
            break
        opener = by_page.get(page) if page is not None else None
        if opener is None or opener in found:
            break
        found.append(opener)
    return found


class Caught:
    """The catch of one script call, over the tabs it was armed on."""

    def __init__(self, request: CatchScripts) -> None:
        self.rules = request.rules
        self.ask = request.ask
        self.tabs: list[tuple[PageState, catch.TabCatch]] = []
        self._unwatch: list[tuple[BrowserContext, Any]] = []
        self._arming: set[asyncio.Task[None]] = set()

    async def arm(self, state: PageState) -> None:
        if state.page.is_closed() or state.cdp is None:
            return
        try:
            tab = await asyncio.wait_for(catch.arm(state, self.rules, self.ask), ARM_TIMEOUT)
        except Exception as exc:  # a tab closing, a dialog holding its page: not armed
            log.debug("arming the catch on %s: %r", state.target_id[:8], exc)
            return
        self.tabs.append((state, tab))

    def watch(
        self,
        contexts: list[BrowserContext],
        state_of: Callable[[Page], Awaitable[PageState | None]],
    ) -> None:
        """Arm the tabs the script opens while it runs, as they appear (a few ms after:
        before the page it loads, whose document gets the guard from its start)."""

        def on_page(page: Page) -> None:
            async def arm_later() -> None:
                state = await state_of(page)
                if state is not None:
                    await self.arm(state)

            task = aio.create_task(arm_later(), name="approval-arm-new-tab")
            self._arming.add(task)
            task.add_done_callback(self._arming.discard)

        for context in contexts:
            context.on("page", on_page)
            self._unwatch.append((context, on_page))

    async def settle(self, within: float) -> None:
        """Wait for the answers about what the guard held until now."""
        if self._arming:
            await asyncio.wait(set(self._arming), timeout=3.0)
        for state, tab in list(self.tabs):
            await catch.settle(state, tab, within)

    async def close(self) -> None:
        for context, handler in self._unwatch:
            with contextlib.suppress(Exception):
                context.remove_listener("page", handler)
        self._unwatch.clear()
        for task in list(self._arming):
            task.cancel()
        for state, tab in self.tabs:
            await catch.disarm(state, tab)
