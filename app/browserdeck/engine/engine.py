"""The Engine service: what the API, CLI and MCP call to look at and drive a tab.

Every public method takes the browser's CDP URL, the tab's full CDP targetId and
the headers the endpoint needs (the service resolved the profile and the tab),
plus typed options, and returns a plain JSON-able dict. Errors are
``browserdeck.errors`` subclasses with a message and a hint.

A dialog that opened with nothing armed was dismissed so it could not block the
page; every response of that tab carries it once under ``dialogs``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from playwright.async_api import async_playwright

from browserdeck.engine import actions, offline
from browserdeck.engine import options as o
from browserdeck.engine import screenshot as shots
from browserdeck.engine import snapshot as snap
from browserdeck.engine.connection import BrowserPool
from browserdeck.engine.state import PageState, TargetMemories
from browserdeck.errors import Unavailable

if TYPE_CHECKING:
    from playwright.async_api import Playwright

    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

Headers = dict[str, str] | None


class Engine:
    def __init__(self, events: ServiceEvents | None = None) -> None:
        self.events = events
        self._pw_cm: Any = None
        self._pw: Playwright | None = None
        self._pool: BrowserPool | None = None
        self.memories = TargetMemories()

    # --- lifecycle -------------------------------------------------------
    async def start(self) -> None:
        if self._pw is not None:
            return
        self._pw_cm = async_playwright()
        self._pw = await self._pw_cm.start()
        self._pool = BrowserPool(self._pw, self.memories, self.events)
        log.info("engine started")

    async def stop(self) -> None:
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
        if self._pool is None:
            raise Unavailable(
                "the browser engine is not running",
                hint="this is a browserdeck bug: the service starts the engine before the API",
                code="engine_stopped",
            )
        return self._pool

    async def page_state(self, cdp_url: str, target_id: str, headers: Headers) -> PageState:
        state = await self.pool.page(cdp_url, target_id, headers)
        if state.cleanup is not None:
            await state.settle()
        return state

    @staticmethod
    def _finish(state: PageState, result: dict[str, Any]) -> dict[str, Any]:
        dialogs = state.take_dialogs()
        if dialogs:
            result["dialogs"] = dialogs
        return result

    # --- the calls ---------------------------------------------------------
    async def snapshot(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.SnapshotOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        return self._finish(state, await snap.snapshot(state, opts or o.SnapshotOptions()))

    async def act(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        action: o.AnyAct,
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        state.actions += 1
        return self._finish(state, await actions.act(state, action))

    async def navigate(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.NavigateOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        state.actions += 1
        wait = opts.prepare_snapshot == "wait"
        # Waiting for the snapshot: it reads the title too, at the same time.
        result = await actions.navigate(state, opts, title=not wait)
        if opts.prepare_snapshot and "download" not in result:
            prepared = snap.prepare(state)
            if wait and prepared.task is not None:
                taken = await asyncio.shield(prepared.task)
                result["title"] = taken["title"] if taken else await state.title()
        elif wait:
            result["title"] = await state.title()
        return self._finish(state, result)

    async def screenshot(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        opts: o.ScreenshotOptions | None = None,
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        opts = opts or o.ScreenshotOptions()
        if opts.labels:  # draws (and removes) an overlay in the page
            state.actions += 1
        return self._finish(state, await shots.screenshot(state, opts))

    async def console(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.ConsoleOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        return self._finish(state, actions.console(state, opts or o.ConsoleOptions()))

    async def set_offline(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.OfflineOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        state.actions += 1
        return self._finish(state, await offline.set_offline(state, opts))

    async def pdf(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.PdfOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        return self._finish(state, await actions.pdf(state, opts or o.PdfOptions()))

    async def arm_file_chooser(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.FileChooserOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        state.actions += 1
        return self._finish(state, await actions.arm_file_chooser(state, opts))

    async def arm_dialog(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.DialogOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        state.actions += 1
        return self._finish(state, actions.arm_dialog(state, opts))
