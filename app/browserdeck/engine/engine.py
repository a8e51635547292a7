"""The Engine: what the front door calls to look at and drive a tab.

Every call takes the browser's CDP URL, the tab's full CDP targetId and the headers the
endpoint needs (the front door resolved the profile and the tab), plus the request, and
answers with the request's answer model (``results.py``), built here once. ``run``
carries out any request by its ``engine_method``. Errors are ``browserdeck.errors``
subclasses with a message and a hint.

A dialog that opened with nothing armed was dismissed so it could not block the page;
every response of that tab carries it once under ``dialogs``. Every call runs under its
own deadline and ends early when the connection drops or the renderer crashes; a runaway
script hitting it is stopped and said (docs/reliability.md). The Playwright driver is
watched (driver.py): while a new one starts, calls answer 503 ``engine_restarting``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck import results as r
from browserdeck.engine import (
    actions,
    arming,
    catch,
    consequences,
    elements,
    hung,
    offline,
    placeholders,
    recshot,
    storage_calls,
)
from browserdeck.engine import options as o
from browserdeck.engine import screenshot as shots
from browserdeck.engine import snapshot as snap
from browserdeck.engine.approving import ApprovalCalls
from browserdeck.engine.connection import PoolHooks
from browserdeck.engine.driver import EngineDriver, Headers
from browserdeck.engine.errors import BROWSER_GONE, NavigationFailed
from browserdeck.engine.netcalls import NetworkCalls
from browserdeck.engine.network import Network, Scope
from browserdeck.engine.state import PageState
from browserdeck.errors import (
    RELOAD,
    ActionTimeout,
    BrowserdeckError,
    Conflict,
    Forbidden,
    Hint,
    Unavailable,
)
from browserdeck.policy import origins, urls
from browserdeck.secrets import redact
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import Frame

    from browserdeck.door.call import Element
    from browserdeck.door.request import TabRequest
    from browserdeck.engine.storage import AnyStorage
    from browserdeck.events import ServiceEvents

log = logging.getLogger(__name__)

T = TypeVar("T")
A = TypeVar("A")

# Deadlines (s) of calls with no timeoutMs: a huge page is slow but finite; past one it is stuck.
SNAPSHOT_DEADLINE = 15.0
SCREENSHOT_DEADLINE = 15.0
CONSOLE_DEADLINE = 5.0
OFFLINE_DEADLINE = 10.0
RECORD_SHOT_DEADLINE = 5.0
# Added to a call's own timeout: the engine's bookkeeping around the Playwright call.
DEADLINE_GRACE = 2.0

CRASHED_HINT = Hint(
    "reload it ({reload}) or navigate it to a URL: that starts a new renderer; or close "
    "the tab. Refs from before the crash are gone",
    reload=RELOAD,
)


def tab_crashed(what: str) -> Conflict:
    return Conflict(
        f"{what}: the tab's renderer crashed (out of memory, killed, or chrome://kill), so "
        "the page is gone",
        hint=CRASHED_HINT,
        code="tab_crashed",
    )


def _never_run(work: Awaitable[Any]) -> None:
    close = getattr(work, "close", None)
    if close is not None:
        close()  # never awaited: no "coroutine was never awaited" warning


# Text in password fields never leaves the engine (docs/security.md): not in snapshots (the
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


class Engine(EngineDriver, ApprovalCalls):
    def __init__(
        self,
        events: ServiceEvents | None = None,
        *,
        file_urls_allowed: Callable[[], bool] = lambda: False,
        origin_rules: Callable[[str | None], origins.OriginRules] = lambda _: origins.NO_RULES,
        redact_network: Callable[[], bool] = lambda: True,
    ) -> None:
        super().__init__(events)
        # allowFileUrls, read on every call (the setting can change while tabs are open).
        self.file_urls_allowed = file_urls_allowed
        # Routes and where agents may go (engine/network.py); the network calls.
        self.network = Network(origin_rules, lambda cdp_url: self.netcalls.all_pages(cdp_url))
        self.netcalls = NetworkCalls(self, self.network, redact_network)
        self.pool_hooks = PoolHooks(self.network.wants_every_tab, self.network.registered)
        # Per tab: how many times its main frame arrived on a file: page while that was off.
        self._file_visits: weakref.WeakKeyDictionary[PageState, int] = weakref.WeakKeyDictionary()

    async def page_state(
        self, cdp_url: str, target_id: str, headers: Headers, *, reads: bool = True
    ) -> PageState:
        """The tab's state; refused while it shows a file: page and allowFileUrls is off.

        ``reads=False`` for calls that only take the tab elsewhere (navigate, close): the
        way out of a file: page must stay open.
        """
        pool = self.pool
        try:
            state = await pool.page(cdp_url, target_id, headers)
        except BrowserdeckError:
            if self._pool is not pool:  # the driver died while connecting
                raise self._restarting_error() from None
            raise
        self._watch_file_pages(state)
        if reads:
            self._refuse_file_page(state)
        if state.cleanup is not None:
            await state.settle()
        return state

    async def _bounded(
        self, state: PageState, what: str, seconds: float, work: Awaitable[T]
    ) -> T:
        """Run ``work`` until it ends, its deadline passes, the connection drops or the
        tab's renderer crashes; whichever comes first answers."""
        pool = self._pool
        if state.crashed.is_set() or state.hung:
            refused = tab_crashed(what) if state.crashed.is_set() else None
            try:
                if refused is None and await hung.still_hung(state):
                    refused = hung.tab_hung(what)
            except BaseException:
                _never_run(work)
                raise
            if refused is not None:
                _never_run(work)
                raise refused
        task = asyncio.ensure_future(work)
        stops: list[asyncio.Task[Any]] = [
            asyncio.ensure_future(state.crashed.wait()),
        ]
        gone = pool.gone_event(state.cdp_url) if pool is not None else None
        if gone is not None:
            stops.append(asyncio.ensure_future(gone.wait()))
        try:
            done, _ = await asyncio.wait(
                [task, *stops], timeout=seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for stop in stops:
                stop.cancel()
            if not task.done():
                task.cancel()
                try:
                    await asyncio.wait_for(task, 1.0)
                except asyncio.CancelledError:
                    # The work's own end by our cancel is expected; a cancel of *this*
                    # call that lands during the cleanup (Stop all agents, a stop) is not
                    # ours to swallow: the caller would get a deadline error instead.
                    current = asyncio.current_task()
                    if current is not None and current.cancelling():
                        raise
                except Exception:  # the work failed as it ended, or took over 1 s
                    log.debug("%s ended with an error while cancelled", what, exc_info=True)
        if task in done:
            try:
                return task.result()
            except BrowserdeckError as exc:
                raise await self._explain(state, what, exc) from None
        if state.crashed.is_set():
            raise tab_crashed(what)
        if self._pool is not pool:
            raise self._restarting_error()
        if gone is not None and gone.is_set():
            raise Unavailable(
                f"{what}: the connection to the browser was lost while this was running",
                hint=BROWSER_GONE,
                code="browser_gone",
            )
        if await hung.free_if_busy(state):
            if state.hung:
                raise hung.tab_hung(what)
            raise ActionTimeout(
                f"{what} did not finish within {seconds:g} s: the page was unresponsive "
                "(a script kept its main thread busy)",
                hint=hung.UNRESPONSIVE_HINT,
                code="tab_unresponsive",
            )
        raise ActionTimeout(
            f"{what} did not finish within {seconds:g} s",
            hint="retry; for a very large page narrow the call (snapshot: selector=, "
            "interactive=true, limit=); or raise timeoutMs",
        )

    async def _explain(
        self, state: PageState, what: str, exc: BrowserdeckError
    ) -> BrowserdeckError:
        """A clearer error than Playwright's for a failure caused by a crash, a dead driver
        or a runaway script."""
        if state.crashed.is_set() or exc.code == "tab_crashed":
            return tab_crashed(what)
        if self.state != "running" and exc.code in ("tab_closed", "browser_gone", "browser_error"):
            return self._restarting_error()
        # A navigation the page could not finish (a hung renderer aborts it) or a timeout:
        # say whether the page itself stopped answering.
        if (
            isinstance(exc, (ActionTimeout, NavigationFailed))
            and exc.code != "tab_unresponsive"
            and await hung.free_if_busy(state)
        ):
            if state.hung:
                return hung.tab_hung(what)
            return ActionTimeout(
                f"{exc.message}; the page was unresponsive (a script kept its main thread busy)",
                hint=hung.UNRESPONSIVE_HINT,
                code="tab_unresponsive",
            )
        return exc

    # The backstop behind urls.prepare (docs/security.md): whatever way a tab reached a
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

    def _finish(self, answer: type[A], state: PageState, before: int, result: dict[str, Any]) -> A:
        """The answer, unless the tab went to a file: page meanwhile (then nothing of it).

        Built here, once: page text in it is made well-formed first (a lone surrogate a
        script put in a title cannot be sent as UTF-8)."""
        if not state.page.is_closed():
            self._refuse_file_page(state, before)
        if dialogs := state.take_dialogs():
            result["dialogs"] = dialogs
        if refused := self.network.note_for(state):  # what the origin rules refused meanwhile
            result["note"] = "; ".join([*filter(None, [result.get("note")]), *refused])
        # No secret's value leaves in an answer, whatever the page did with it (secrets/redact.py).
        return answer.model_validate(redact.value(r.well_formed(result)))  # type: ignore[no-any-return,attr-defined]

    async def run(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        request: TabRequest[A],
        *,
        scope: Scope | None = None,
    ) -> A:
        """Carry out ``request`` by the engine method it names (``engine_method``); the
        tab first takes what the caller's ``scope`` asks of its network (its routes)."""
        if scope is not None:
            await self.netcalls.enter(cdp_url, target_id, headers, scope)
        name = request.engine_method
        try:
            if name.startswith("network."):  # the network calls are told who calls
                call: Callable[..., Awaitable[A]] = getattr(self.netcalls, name[8:])
                return await call(cdp_url, target_id, headers, request, scope)
            method: Callable[..., Awaitable[A]] = getattr(self, name)
            return await method(cdp_url, target_id, headers, request)
        except BrowserdeckError as exc:  # a page's text quoted in an error: no secret in it
            exc.message = redact.text(exc.message)
            raise

    async def attach(
        self, cdp_url: str, headers: Headers, keep_if: Callable[[], bool], *, profile: str | None = None
    ) -> int:
        if profile is not None:  # its tabs obey the profile's rules from the start
            self.network.bind(cdp_url, profile)
        return await super().attach(cdp_url, headers, keep_if)

    async def element(
        self, cdp_url: str, target_id: str, headers: Headers, ref: str, *, detail: bool = False
    ) -> Element | None:
        """What ``ref`` points at on the tab (``elements.describe``); None if nothing."""
        try:
            state = await self.page_state(cdp_url, target_id, headers, reads=False)
            return await asyncio.wait_for(elements.describe(state, ref, detail=detail), 5.0)
        except (BrowserdeckError, TimeoutError):
            return None

    async def page_url(self, cdp_url: str, target_id: str, headers: Headers) -> str | None:
        """The address the tab shows now."""
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        return None if state.page.is_closed() else state.page.url

    # --- the calls ---------------------------------------------------------
    async def snapshot(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.SnapshotOptions | None = None
    ) -> r.Snapshot:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        async def take() -> dict[str, Any]:
            result = await snap.snapshot(state, opts or o.SnapshotOptions())
            text = result.get("snapshot")
            if isinstance(text, str) and _TEXTBOX_VALUE.search(text):
                text = mask_passwords(text, await password_values(state))
            if isinstance(text, str):  # an input holding a secret reads as a password does
                result["snapshot"] = redact.masked(text)
            return result

        result = await self._bounded(state, "snapshot", SNAPSHOT_DEADLINE, take())
        return self._finish(r.Snapshot, state, before, result)

    async def act(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        action: o.AnyAct,
    ) -> r.ActResult:
        state = await self.page_state(cdp_url, target_id, headers, reads=action.kind != "close")
        if action.kind == "evaluate":
            placeholders.refuse_on_secret_page(state, "evaluate", "a script could read it back")
        before = self._file_visits.get(state, 0)
        state.actions += 1
        async def run() -> dict[str, Any]:
            # The engine's own action passes a script's catch on this page (it was asked
            # before it ran); a script (evaluate, a wait's function) is what it is for.
            async with catch.passing(state, action.kind not in ("evaluate", "wait")):
                result = await actions.act(state, action)
            if action.kind == "fill" and result.get("filled"):
                secret = set(await password_values(state))
                for entry in result["filled"]:
                    if entry.value in secret:
                        entry.value = MASK
            return result

        result = await self._bounded(
            state, action.kind, o.act_deadline(action) + DEADLINE_GRACE, run()
        )
        return self._finish(r.ActResult, state, before, result)

    async def navigate(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.NavigateOptions
    ) -> r.Navigated:
        # Taking the tab elsewhere reads nothing: the way out of a file: page stays open.
        state = await self.page_state(cdp_url, target_id, headers, reads=False)
        if not state.crashed.is_set():
            # A page stuck in a script cannot unload: free it first (a cheap probe when not);
            # a hung renderer is ended, and the tab revived as after a crash.
            await hung.free_if_busy(state)
            if state.hung and opts.action in ("goto", "reload"):
                await hung.end_renderer(state)
        if state.crashed.is_set():
            state, opts = await self._revive(state, cdp_url, target_id, headers, opts)
        seconds = o.navigate_timeout(opts.timeout_ms) / 1000 * 2 + DEADLINE_GRACE
        before = self._file_visits.get(state, 0)
        started = time.monotonic()
        try:
            result = await self._bounded(
                state, f"navigate ({opts.action})", seconds, self._navigate(state, opts)
            )
        except BrowserdeckError as exc:  # refused by the origin rules: say which rule
            raise self.netcalls.refused_navigation(state, started) or exc from None
        return self._finish(r.Navigated, state, before, result)

    async def _revive(
        self,
        state: PageState,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        opts: o.NavigateOptions,
    ) -> tuple[PageState, o.NavigateOptions]:
        """A crashed tab: give it a new renderer (about:blank over the tab's own CDP session),
        then a fresh connection, since Playwright keeps a crashed Page dead for good."""
        if opts.action not in ("goto", "reload"):
            raise tab_crashed(f"go {opts.action}")
        crashed_url = state.page.url
        if state.cdp is None:
            raise tab_crashed("navigate")
        try:
            await asyncio.wait_for(state.cdp.send("Page.navigate", {"url": "about:blank"}), 10)
        except Exception as exc:
            raise tab_crashed(f"revive the tab ({exc})") from None
        log.warning("tab %s crashed; reviving it (%s)", target_id[:8], opts.action)
        await self.pool.refresh(cdp_url)
        fresh = await self.page_state(cdp_url, target_id, headers, reads=False)
        if opts.action == "reload" and crashed_url and crashed_url != "about:blank":
            # The crashed document is gone: "reload" loads its URL again.
            opts = opts.model_copy(update={"action": "goto", "url": crashed_url})
        return fresh, opts

    async def _navigate(self, state: PageState, opts: o.NavigateOptions) -> dict[str, Any]:
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
        return result

    async def screenshot(
        self,
        cdp_url: str,
        target_id: str,
        headers: Headers,
        opts: o.ScreenshotOptions | None = None,
    ) -> r.Screenshot:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        opts = opts or o.ScreenshotOptions()
        if opts.labels:  # draws (and removes) an overlay in the page
            state.actions += 1
        shot = await self._bounded(
            state, "screenshot", SCREENSHOT_DEADLINE, shots.screenshot(state, opts)
        )
        return self._finish(r.Screenshot, state, before, shot)

    async def console(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.ConsoleOptions | None = None
    ) -> r.Console:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        result = actions.console(state, opts or o.ConsoleOptions())
        return self._finish(r.Console, state, before, result)

    async def storage(
        self, cdp_url: str, target_id: str, headers: Headers, request: AnyStorage
    ) -> r.Stored:
        """Cookies and web storage (engine/storage.py)."""
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        work = storage_calls.run(state, request)
        result = await self._bounded(state, request.kind, CONSOLE_DEADLINE, work)
        return self._finish(r.Stored, state, before, result)

    async def set_offline(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.OfflineOptions
    ) -> r.Offline:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        done = await self._bounded(
            state, "set offline", OFFLINE_DEADLINE, offline.set_offline(state, opts)
        )
        return self._finish(r.Offline, state, before, done)

    async def pdf(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.PdfOptions | None = None
    ) -> r.Pdf:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        # Pixels and text of a PDF are out of redaction's reach: a text input holding a
        # one-time code would print it.
        placeholders.refuse_on_secret_page(state, "PDF", "the PDF would print what it holds")
        opts = opts or o.PdfOptions()
        seconds = o.navigate_timeout(opts.timeout_ms) / 1000 + DEADLINE_GRACE
        done = await self._bounded(state, "pdf", seconds, actions.pdf(state, opts))
        return self._finish(r.Pdf, state, before, done)

    async def arm_file_chooser(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.FileChooserOptions
    ) -> r.Armed:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        if not (opts.ref or opts.input_ref or opts.element):  # only arming: nothing happens yet
            return self._finish(r.Armed, state, before, await arming.arm_file_chooser(state, opts))

        bound = consequences.DEFAULT_WAIT_MS if opts.wait_ms is None else opts.wait_ms

        async def run() -> dict[str, Any]:
            # Setting the files is an action like a click: wait for what it caused (an
            # upload the page starts on "change"), engine/consequences.py.
            watch = await consequences.watch(state, bound)
            try:
                async with catch.passing(state):
                    result = await arming.arm_file_chooser(state, opts)
                if watch is not None and not state.page.is_closed():
                    result.update(await watch.settle())
            finally:
                if watch is not None:
                    watch.stop()
            return result

        seconds = (o.action_timeout(None) * 2 + bound) / 1000 + DEADLINE_GRACE
        result = await self._bounded(state, "file chooser", seconds, run())
        return self._finish(r.Armed, state, before, result)

    async def arm_dialog(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.DialogOptions
    ) -> r.Armed:
        state = await self.page_state(cdp_url, target_id, headers)
        before = self._file_visits.get(state, 0)
        state.actions += 1
        return self._finish(r.Armed, state, before, arming.arm_dialog(state, opts))

    async def record_shot(
        self, cdp_url: str, target_id: str, headers: Headers, opts: o.RecordShot
    ) -> r.RecordedShot:
        """The session recorder's picture of the tab (engine/recshot.py). It takes nothing
        the tab's next answer carries (dialogs stay unreported) and reads no file: page."""
        state = await self.page_state(cdp_url, target_id, headers)
        result = await self._bounded(
            state, "recording shot", RECORD_SHOT_DEADLINE, recshot.take(state, opts)
        )
        return r.RecordedShot.model_validate(r.well_formed(result))
