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
import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from playwright.async_api import async_playwright

from browserdeck import aio, urls
from browserdeck.engine import actions, consequences, offline
from browserdeck.engine import options as o
from browserdeck.engine import screenshot as shots
from browserdeck.engine import snapshot as snap
from browserdeck.engine.connection import BrowserPool
from browserdeck.engine.state import PageState, TargetMemories
from browserdeck.errors import Forbidden, Unavailable

if TYPE_CHECKING:
    from playwright.async_api import Frame, Playwright

    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

Headers = dict[str, str] | None


# Text in password fields never leaves the engine (issue 10 item 8): not in snapshots (the
# ai/role formats print a textbox's value), not echoed by fill. The accessibility tree
# already shows bullets for them; this does the same for our own formats.
MASK = "••••••••"
_TEXTBOX_VALUE = re.compile(r"- textbox\b[^\n]*\]: ")
_PASSWORD_VALUES_JS = (
    "() => Array.from(document.querySelectorAll('input[type=password]'), e => e.value)"
    ".filter(Boolean)"
)


async def password_values(state: PageState) -> list[str]:
    """The current values of the tab's password inputs, in every frame."""
    values: list[str] = []
    for frame in state.page.frames:
        try:
            found = await frame.evaluate(_PASSWORD_VALUES_JS)
        except Exception:  # a frame that navigated or went away: nothing to mask there
            continue
        values.extend(str(v) for v in found if isinstance(v, str))
    return values


def mask_passwords(text: str, values: list[str]) -> str:
    """``text`` with each textbox line whose value is a password shown as bullets."""
    if not values:
        return text
    secret = set(values)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _TEXTBOX_VALUE.search(line)
        if match and line[match.end() :] in secret:
            lines[i] = line[: match.end()] + MASK
    return "\n".join(lines)


class Engine:
    def __init__(
        self,
        events: ServiceEvents | None = None,
        *,
        file_urls_allowed: Callable[[], bool] = lambda: False,
    ) -> None:
        self.events = events
        # allowFileUrls, read on every call (the setting can change while tabs are open).
        self.file_urls_allowed = file_urls_allowed
        # Per tab: how many times its main frame arrived on a file: page while that was off.
        self._file_visits: weakref.WeakKeyDictionary[PageState, int] = weakref.WeakKeyDictionary()
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

    async def page_state(
        self, cdp_url: str, target_id: str, headers: Headers, *, reads: bool = True
    ) -> PageState:
        """The tab's state; refused while it shows a file: page and allowFileUrls is off.

        ``reads=False`` for calls that only take the tab elsewhere (navigate, close): the
        way out of a file: page must stay open.
        """
        state = await self.pool.page(cdp_url, target_id, headers)
        self._watch_file_pages(state)
        if reads:
            self._refuse_file_page(state)
        if state.cleanup is not None:
            await state.settle()
        return state

    # The backstop behind urls.prepare (issue 10 item 1): whatever way a tab reached a
    # file: page (a redirect, a script setting location.href on a file: page opened while
    # the setting was on, a history entry), no call reads it, and the tab is taken away.
    def _watch_file_pages(self, state: PageState) -> None:
        if state in self._file_visits:
            return
        self._file_visits[state] = 0
        page = state.page

        def on_navigated(frame: Frame) -> None:
            if frame.parent_frame is not None or self.file_urls_allowed():
                return
            if not urls.is_file_url(frame.url):
                return
            self._file_visits[state] = self._file_visits.get(state, 0) + 1
            log.warning("a tab reached a file: page with allowFileUrls off; leaving it")
            aio.create_task(self._leave_file_page(state), name="leave-file-page")

        page.on("framenavigated", on_navigated)

    async def _leave_file_page(self, state: PageState) -> None:
        try:
            if not state.page.is_closed() and urls.is_file_url(state.page.url):
                await state.page.goto("about:blank", timeout=10_000)
        except Exception as exc:  # the tab closed or navigated on its own meanwhile
            log.debug("leaving a file: page: %s", exc)

    def _refuse_file_page(self, state: PageState, visits_before: int | None = None) -> None:
        if self.file_urls_allowed():
            return
        url = state.page.url
        moved = visits_before is not None and self._file_visits.get(state, 0) != visits_before
        if urls.is_file_url(url) or moved:
            raise Forbidden(
                "this tab shows (or just went to) a local file: page, and allowFileUrls is "
                "off, so browserdeck will not read it",
                hint="navigate the tab to an http(s) URL or close it; turn on "
                '"allowFileUrls" in Settings only if agents may read local files',
                code="file_url_forbidden",
            )

    def _finish(self, state: PageState, before: int, result: dict[str, Any]) -> dict[str, Any]:
        """The result, unless the tab went to a file: page meanwhile (then nothing of it)."""
        if not state.page.is_closed():
            self._refuse_file_page(state, before)
        dialogs = state.take_dialogs()
        if dialogs:
            result["dialogs"] = dialogs
        return result

    # --- the calls ---------------------------------------------------------
    async def snapshot(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.SnapshotOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        result = await snap.snapshot(state, opts or o.SnapshotOptions())
        text = result.get("snapshot")
        if isinstance(text, str) and _TEXTBOX_VALUE.search(text):
            result["snapshot"] = mask_passwords(text, await password_values(state))
        return self._finish(state, before, result)

    async def act(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        action: o.AnyAct,
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers, reads=action.kind != "close")
        before = self._file_visits.get(state, 0)
        state.actions += 1
        result = await actions.act(state, action)
        if action.kind == "fill" and isinstance(result.get("filled"), list):
            secret = set(await password_values(state))
            for entry in result["filled"]:
                if isinstance(entry, dict) and entry.get("value") in secret:
                    entry["value"] = MASK
        return self._finish(state, before, result)

    async def navigate(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.NavigateOptions
    ) -> dict[str, Any]:
        # Taking the tab elsewhere reads nothing: the way out of a file: page stays open.
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        before = self._file_visits.get(state, 0)
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
        return self._finish(state, before, result)

    async def screenshot(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        opts: o.ScreenshotOptions | None = None,
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        opts = opts or o.ScreenshotOptions()
        if opts.labels:  # draws (and removes) an overlay in the page
            state.actions += 1
        return self._finish(state, before, await shots.screenshot(state, opts))

    async def console(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.ConsoleOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        return self._finish(state, before, actions.console(state, opts or o.ConsoleOptions()))

    async def set_offline(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.OfflineOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        return self._finish(state, before, await offline.set_offline(state, opts))

    async def pdf(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.PdfOptions | None = None
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        return self._finish(state, before, await actions.pdf(state, opts or o.PdfOptions()))

    async def arm_file_chooser(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.FileChooserOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        if not (opts.ref or opts.input_ref or opts.element):  # only arming: nothing happens yet
            return self._finish(state, before, await actions.arm_file_chooser(state, opts))
        # Setting the files is an action like a click: wait for what it caused (an upload
        # the page starts on "change"), engine/consequences.py.
        watch = await consequences.watch(state, consequences.DEFAULT_WAIT_MS)
        try:
            result = await actions.arm_file_chooser(state, opts)
            if watch is not None and not state.page.is_closed():
                result.update(await watch.settle())
        finally:
            if watch is not None:
                watch.stop()
        return self._finish(state, before, result)

    async def arm_dialog(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.DialogOptions
    ) -> dict[str, Any]:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        return self._finish(state, before, actions.arm_dialog(state, opts))
