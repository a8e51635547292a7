"""Waiting for what an action caused, with no fixed sleep (docs/engine.md, "Consequences").

An action (click, type, press, select, fill, drag, scroll, upload) returns once the page
has caught up with it, so the next observation shows the outcome: a navigation it started
(until the new document fired DOMContentLoaded), the requests it started (document,
fetch, XHR, script, in any frame; also from its promises, its timers and the page's
answer to what finished, found by one round trip to the page after each batch of
events, a *barrier*), a scroll (followed until it stops, then ``GRACE_MS``), all bounded
by ``waitMs`` (the ``actionWaitMs`` setting). Long-lived connections (WebSockets,
EventSource, a long poll past the bound) never stall it, and nothing depends on
``requestAnimationFrame`` (paused in background tabs). The answer gets ``outcome``, one
line ("navigated to X", "2 requests finished" …), and ``waitedMs``.

Why one module: it is one algorithm (arm before, read after, barriers, the bound), and the
explicit network-quiet wait at its end shares its request types and its long-lived rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page, Request, Response

    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

DEFAULT_WAIT_MS = 5000
NOTHING = "no navigation or network activity"  # the outcome of an action that caused none
# A request that starts this soon after the action's last effect is the action's own (a
# timer or promise it scheduled). Tens of milliseconds: a debounce (hundreds) is not the
# action's consequence and is left to an explicit wait.
GRACE_MS = 30
# Chrome reports a fetch finished only once the page has read its body: a response the
# page never reads (a fire-and-forget POST) never "finishes". A request whose response
# headers came this long ago, with no more news, counts as done.
UNREAD_BODY_S = 0.2
# Request types an action's outcome depends on. Images, fonts, media, beacons and
# EventSource streams are not waited for.
WAITED_TYPES = frozenset({"document", "fetch", "xhr", "script"})

# Armed in the main world before the action, read after it: did the action schedule
# timers, or scroll the page? Timer ids (setTimeout and setInterval share one pool) are
# handed out in sequence per window, so one probe id before and one after tell whether
# the page scheduled any in between, without wrapping any page function. (Animation
# frames are not counted: Playwright's own click waits two of them in the same id pool,
# and Chrome pauses them in background tabs.) Held only by our CDP session (a remote
# object); null when the page replaced the functions it relies on (then the action
# counts as having scheduled something).
_WATCH_JS = """(() => {
  const show = Function.prototype.toString;
  const native = (f) => typeof f === 'function' && /\\{\\s*\\[native code\\]\\s*\\}$/.test(show.call(f));
  if (![show, setTimeout, clearTimeout].every(native)) return null;
  const t = setTimeout(() => {}, 0); clearTimeout(t);
  return {t, x: scrollX, y: scrollY};
})()"""
# Each read moves the baseline on, so the next read says what happened since this one.
_READ_FN = """function () {
  const t = setTimeout(() => {}, 0); clearTimeout(t);
  const out = {scheduled: t !== this.t + 1, scrolled: scrollX !== this.x || scrollY !== this.y};
  this.t = t; this.x = scrollX; this.y = scrollY;
  return out;
}"""
# After the action's first read, timers the page keeps scheduling (a polling loop) are let
# run at most this many more times: enough for a chain (response -> timer -> request).
TIMER_ROUNDS = 2
# A (smooth) scroll is followed until it stops: pages load more when it reaches the end.
SCROLL_POLL_S = 0.05
SCROLL_START_S = 0.1  # a scroll that has not started by then is not coming
# Keys that scroll the page: the scroll (smooth, so it starts a frame later) is an effect
# the page may answer with requests (infinite scroll), so the grace window applies.
SCROLL_KEYS = frozenset({"End", "Home", "PageDown", "PageUp", "Space", " ", "ArrowDown", "ArrowUp"})


@dataclass
class Watch:
    """What one action caused, collected from page events while it runs and settles."""

    state: PageState
    bound_ms: int
    started: float = field(default_factory=time.monotonic)
    open: dict[Request, str] = field(default_factory=dict)
    answered: dict[Request, float] = field(default_factory=dict)  # response headers came
    finished: int = 0
    failed: list[str] = field(default_factory=list)
    nav_request: Request | None = None
    nav_failed: str | None = None
    committed: bool = False
    dcl: bool = False
    popups: list[Page] = field(default_factory=list)
    effects: int = 0  # page events so far; a barrier is due when it moved since the last
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    epoch: int = 0
    url: str = ""
    downloads: int = 0
    dialogs: int = 0
    watch_id: str | None = None
    watch_epoch: int = 0  # the document (main_epoch) the watch object lives in
    opened: int | None = None  # tabs this tab had opened (openerId) before the action
    expect_effect: bool = False  # the action is known to have an effect (a scrolling key)

    # --- page events -------------------------------------------------------
    def _effect(self) -> None:
        self.effects += 1
        self.changed.set()

    def _on_request(self, request: Request) -> None:
        if request.resource_type not in WAITED_TYPES:
            return
        page = self.state.page
        with contextlib.suppress(Exception):
            if request.is_navigation_request() and request.frame == page.main_frame:
                self.nav_request = request
                self.nav_failed = None
        self.open[request] = request.url
        self._effect()

    def _on_response(self, response: Response) -> None:
        request = response.request
        if request in self.open:
            self.answered[request] = time.monotonic()
            self._effect()

    def _on_request_done(self, request: Request) -> None:
        if self.open.pop(request, None) is not None:
            self.finished += 1
            self._effect()

    def _on_request_failed(self, request: Request) -> None:
        if self.open.pop(request, None) is None:
            return
        failure = request.failure or "failed"
        if request is self.nav_request:
            self.nav_failed = failure
        elif "ERR_ABORTED" not in failure:  # aborted by the page itself: not a failure
            self.failed.append(f"{request.url[:200]} ({failure})")
        self._effect()

    def _on_navigated(self, frame: Any) -> None:
        if frame == self.state.page.main_frame:
            self.committed = True
            self._effect()

    def _on_dcl(self, _page: Any) -> None:
        self.dcl = True
        self._effect()

    def _on_popup(self, popup: Page) -> None:
        self.popups.append(popup)
        self._effect()

    def _on_other(self, *_: Any) -> None:
        self._effect()

    def _handlers(self) -> list[tuple[str, Any]]:
        return [
            ("request", self._on_request),
            ("response", self._on_response),
            ("requestfinished", self._on_request_done),
            ("requestfailed", self._on_request_failed),
            ("framenavigated", self._on_navigated),
            ("domcontentloaded", self._on_dcl),
            ("popup", self._on_popup),
            ("dialog", self._on_other),
            ("download", self._on_other),
        ]

    # --- lifecycle -----------------------------------------------------------
    async def start(self) -> None:
        state = self.state
        self.epoch, self.url = state.main_epoch, state.page.url
        self.downloads, self.dialogs = len(state.downloads), len(state.unreported_dialogs)
        page: Any = state.page  # Page.on is typed per event name; these are all correct
        for name, handler in self._handlers():
            page.on(name, handler)
        self.watch_id, self.opened = await asyncio.gather(_arm(state), _opened(state))
        self.watch_epoch = self.epoch
        self.started = time.monotonic()

    def stop(self) -> None:
        page: Any = self.state.page
        for name, handler in self._handlers():
            with contextlib.suppress(Exception):
                page.remove_listener(name, handler)

    async def settle(self) -> dict[str, Any]:
        """Wait (bounded) until what the action started is done; the outcome fields."""
        state = self.state
        acted = time.monotonic()
        deadline = acted + self.bound_ms / 1000
        # One round trip on our CDP session reads the probe; it also lets the events the
        # page sent before acknowledging the action arrive first.
        # (Not when the action already loaded a new document: the watch object is gone.)
        new_document = state.main_epoch != self.watch_epoch
        (scheduled, scrolled), opened = await asyncio.gather(
            _nothing() if new_document else _read(state, self.watch_id), _opened(state)
        )
        if state.main_epoch != self.watch_epoch:
            # The action loaded a new document (Playwright's press and click wait for the
            # commit): the old one's timers died with it, and a page timer in the new one
            # would wait for its load. The barrier arms a watch there.
            new_document = True
            scheduled = scrolled = False
        if opened is not None and self.opened is not None and opened > self.opened:
            # The action opened a tab (window.open, target=_blank): Playwright announces
            # it only once the new page is set up; wait for that (bounded).
            await self._wait_popups(opened - self.opened, deadline)
        if scheduled:
            # Let the page run the timers the action scheduled (up to GRACE_MS): ours,
            # set after them, fires after them, however late a loaded machine runs them.
            await _page_timer(state, deadline)
            self._effect()
        grace_until = 0.0
        if scrolled or self.expect_effect:
            await self._follow_scroll(deadline)
            # The page hears of a scroll with its next frame (the scroll event), so what it
            # starts in answer gets a window of time, not just a round trip.
            grace_until = time.monotonic() + GRACE_MS / 1000
        # Effects the last page round trip accounted for: the read was one, unless there
        # was none (a new document) or a page timer followed (it has effects of its own).
        seen = 0 if scheduled or new_document else self.effects
        timer_rounds = 0
        bound_hit = False
        while True:
            now = time.monotonic()
            pending = self._pending()
            if not pending and now >= grace_until:
                if self.effects == seen or now >= deadline:
                    break  # nothing happened since the page last answered: settled
                # Something happened (a request finished, a document loaded): one round
                # trip to the page runs after the tasks those events queued there, so a
                # request started in answer is announced before the reply. No fixed sleep.
                seen = self.effects
                if await self._barrier(deadline) and timer_rounds < TIMER_ROUNDS:
                    timer_rounds += 1
                    await _page_timer(state, deadline)
                    self._effect()
                continue
            if now >= deadline:
                bound_hit = bool(pending)
                break
            answered = [t + UNREAD_BODY_S for r, t in self.answered.items() if r in self.open]
            wake = min([deadline, *answered]) if pending else min(deadline, grace_until)
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), max(0.0, wake - now))
        for popup in self.popups:
            left = deadline - time.monotonic()
            if left > 0:
                with contextlib.suppress(Exception):
                    await popup.wait_for_load_state("domcontentloaded", timeout=left * 1000)
        return self._describe(time.monotonic() - acted, bound_hit)

    async def _barrier(self, deadline: float) -> bool:
        """One round trip to the page; whether it scheduled timers since the last one."""
        state = self.state
        left = max(0.0, deadline - time.monotonic())
        if self.watch_id is not None and self.watch_epoch == state.main_epoch:
            with contextlib.suppress(TimeoutError):
                scheduled, _ = await asyncio.wait_for(_read(state, self.watch_id), left)
                return scheduled
            return False
        # A new document: arm a watch there (its own load's timers are not the action's).
        self.watch_epoch = state.main_epoch
        self.watch_id = None
        with contextlib.suppress(TimeoutError):
            self.watch_id = await asyncio.wait_for(_arm(state), left)
        return False

    async def _wait_popups(self, count: int, deadline: float) -> None:
        while len(self.popups) < count and time.monotonic() < deadline:
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), deadline - time.monotonic())

    async def _follow_scroll(self, deadline: float) -> None:
        """Poll the scroll position until it stops moving (bounded); each move is an effect."""
        began = time.monotonic()
        first = last = await _scroll_position(self.state)
        while last is not None and time.monotonic() < deadline:
            await asyncio.sleep(SCROLL_POLL_S)
            now = await _scroll_position(self.state)
            if now == last and (now != first or time.monotonic() - began >= SCROLL_START_S):
                return
            if now != last:
                self._effect()
            last = now

    def _pending(self) -> bool:
        now = time.monotonic()
        for request in self.open:
            answered = self.answered.get(request)
            if answered is None or now - answered < UNREAD_BODY_S:
                return True
        if self.state.page.is_closed():
            return False
        # A navigation that committed a new document: ready once it fired DOMContentLoaded.
        return self.state.main_epoch != self.epoch and not self.dcl

    # --- the one line --------------------------------------------------------
    def _describe(self, waited: float, bound_hit: bool) -> dict[str, Any]:
        state = self.state
        parts: list[str] = []
        out: dict[str, Any] = {"waitedMs": round(waited * 1000)}
        page = state.page
        if not page.is_closed():
            if state.main_epoch != self.epoch:
                parts.append(f"navigated to {page.url}")
            elif page.url != self.url:
                parts.append(f"navigated to {page.url} (same document)")
        if self.nav_failed and state.main_epoch == self.epoch:
            parts.append(f"a navigation failed ({self.nav_failed})")
        # Answered requests whose body the page never read count as finished (UNREAD_BODY_S).
        done = self.finished + sum(1 for r in self.open if r in self.answered)
        if done:
            parts.append(f"{done} request{'s' if done != 1 else ''} finished")
        if self.failed:
            parts.append(f"{len(self.failed)} failed: {', '.join(self.failed[:3])}")
        new_dialogs = len(state.unreported_dialogs) - self.dialogs
        if new_dialogs > 0:
            parts.append("a dialog opened" if new_dialogs == 1 else f"{new_dialogs} dialogs opened")
        for popup in self.popups:
            parts.append(f"a popup or new tab opened: {popup.url}")
        if len(state.downloads) > self.downloads:
            parts.append(f"a download started: {state.downloads[-1].suggested_filename}")
        if bound_hit:
            still = [u for r, u in self.open.items() if r not in self.answered]
            what = (
                f"{len(still)} request{'s' if len(still) != 1 else ''} still open "
                f"({', '.join(u[:200] for u in still[:3])})"
                if still
                else "the new page still loading"
            )
            parts.append(
                f"the wait bound of {self.bound_ms} ms was hit with {what}; "
                "wait for what you expect (kind=wait)"
            )
            out["waitBoundHit"] = True
        if self.popups:
            out["popups"] = [p.url for p in self.popups]
        out["outcome"] = "; ".join(parts) if parts else NOTHING
        return out


async def _arm(state: PageState) -> str | None:
    if state.cdp is None:
        return None
    try:
        armed = await state.cdp.send("Runtime.evaluate", {"expression": _WATCH_JS})
    except Exception as exc:  # navigating right now: no watch, effects still come as events
        log.debug("action watch of %s: %s", state.target_id[:8], exc)
        return None
    object_id = (armed.get("result") or {}).get("objectId")
    return str(object_id) if object_id and "exceptionDetails" not in armed else None


async def _read(state: PageState, watch_id: str | None) -> tuple[bool, bool]:
    """(scheduled timers, scrolled) during the action; (True, False) if unknown."""
    if state.cdp is None or watch_id is None:
        return True, False
    try:
        answer = await state.cdp.send(
            "Runtime.callFunctionOn",
            {"objectId": watch_id, "functionDeclaration": _READ_FN, "returnByValue": True},
        )
    except Exception:  # the document is gone: the action navigated
        return True, False
    value = (answer.get("result") or {}).get("value")
    if not isinstance(value, dict):
        return True, False
    return value.get("scheduled") is not False, value.get("scrolled") is True


async def _nothing() -> tuple[bool, bool]:
    return False, False


async def _opened(state: PageState) -> int | None:
    """How many open tabs this tab opened (Target.getTargets, openerId); None if unknown."""
    if state.cdp is None:
        return None
    try:
        answer = await state.cdp.send("Target.getTargets")
    except Exception:  # not allowed on this connection (a relay), or navigating
        return None
    infos = answer.get("targetInfos") or []
    return sum(1 for t in infos if t.get("openerId") == state.target_id and t.get("type") == "page")


async def _page_timer(state: PageState, deadline: float) -> None:
    if state.cdp is None:
        return
    expression = f"new Promise((resolve) => setTimeout(resolve, {GRACE_MS}))"
    with contextlib.suppress(Exception):  # navigated meanwhile, or past the bound
        await asyncio.wait_for(
            state.cdp.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True}),
            max(0.0, deadline - time.monotonic()),
        )


async def _scroll_position(state: PageState) -> tuple[float, float] | None:
    if state.cdp is None:
        return None
    try:
        answer = await state.cdp.send(
            "Runtime.evaluate", {"expression": "[scrollX, scrollY]", "returnByValue": True}
        )
    except Exception:  # navigating: nothing to follow
        return None
    value = (answer.get("result") or {}).get("value")
    return (float(value[0]), float(value[1])) if isinstance(value, list) and len(value) == 2 else None


async def watch(state: PageState, bound_ms: int, *, scrolls: bool = False) -> Watch | None:
    """Start watching before an action; None when waiting is off (``waitMs: 0``)."""
    if bound_ms <= 0:
        return None
    w = Watch(state, bound_ms, expect_effect=scrolls)
    await w.start()
    return w


# --- an explicit wait: the network has gone quiet ---------------------------------------
#
# What an action did not start itself (a debounced search: the page fetches 300 ms after
# the last key) is not its consequence; the agent waits for it explicitly, for the text it
# expects or for the network to go quiet. Playwright's "networkidle" load state cannot
# serve: it belongs to the document's load and, once reached, stays reached.

DEFAULT_QUIET_MS = 500  # Playwright's networkidle window, the figure agents know
# A request open this long is a long poll or a stream, not something that will finish:
# it does not keep the network "busy" (the same figure as the default action wait).
LONG_LIVED_S = DEFAULT_WAIT_MS / 1000


async def network_quiet(state: PageState, quiet_ms: int, timeout_ms: int) -> dict[str, Any]:
    """Return once no request (WAITED_TYPES) has been in flight for ``quiet_ms``.

    The quiet window starts now, not at the last request before the call: a debounce timer
    the page has armed but not fired yet would otherwise be missed. Event-driven (page
    request events and their timestamps), no polling. Raises ActionTimeout past
    ``timeout_ms``, naming what is still open.
    """
    from browserdeck.errors import ActionTimeout

    page: Any = state.page
    began = time.monotonic()
    deadline = began + timeout_ms / 1000
    quiet = quiet_ms / 1000
    # request -> when it started (monotonic), when its response headers came
    started: dict[Request, float] = {}
    answered: dict[Request, float] = {}
    for request, age in state.open_requests():
        if request.resource_type in WAITED_TYPES:
            started[request] = began - age
    last = began
    requests_seen = 0
    changed = asyncio.Event()

    def on_request(request: Request) -> None:
        nonlocal last, requests_seen
        if request.resource_type in WAITED_TYPES:
            started[request] = last = time.monotonic()
            requests_seen += 1
            changed.set()

    def on_response(response: Response) -> None:
        if response.request in started:
            answered[response.request] = time.monotonic()
            changed.set()

    def on_done(request: Request) -> None:
        nonlocal last
        if started.pop(request, None) is not None:
            answered.pop(request, None)
            last = time.monotonic()
            changed.set()

    handlers: list[tuple[str, Any]] = [
        ("request", on_request),
        ("response", on_response),
        ("requestfinished", on_done),
        ("requestfailed", on_done),
    ]
    for name, handler in handlers:
        page.on(name, handler)
    try:
        while True:
            now = time.monotonic()
            # When each open request stops counting: its body unread past UNREAD_BODY_S
            # after the headers, or open past LONG_LIVED_S (a long poll, a stream).
            busy_until = [
                min(t + LONG_LIVED_S, answered[r] + UNREAD_BODY_S if r in answered else math.inf)
                for r, t in started.items()
            ]
            busy = [t for t in busy_until if t > now]
            quiet_at = max([last, *(b for b in busy_until if b <= now)]) + quiet
            if not busy and now >= quiet_at:
                break
            if now >= deadline:
                still = [r.url[:200] for r, t in zip(started, busy_until, strict=True) if t > now]
                what = (
                    f"{len(still)} request{'s' if len(still) != 1 else ''} still open "
                    f"({', '.join(still[:3])})"
                    if still
                    else f"requests kept starting less than {quiet_ms} ms apart"
                )
                raise ActionTimeout(
                    f"the network did not go quiet for {quiet_ms} ms within {timeout_ms} ms: "
                    f"{what}",
                    hint="wait for the text you expect instead (kind=wait, text=...), or "
                    "raise timeoutMs",
                )
            wake = min([deadline, *busy]) if busy else min(deadline, quiet_at)
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), max(0.0, wake - now))
    finally:
        for name, handler in handlers:
            with contextlib.suppress(Exception):
                page.remove_listener(name, handler)
    return {"requests": requests_seen, "waitedMs": round((time.monotonic() - began) * 1000)}
