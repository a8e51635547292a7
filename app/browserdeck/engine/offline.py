"""Offline emulation for one tab (``POST /set/offline``), and for its origin's service workers.

Chromium keeps network emulation per DevTools session: ``Network.emulateNetworkConditions``
on the CDP session the engine keeps for a tab (``PageState.cdp``) takes that tab offline
and no other (``BrowserContext.set_offline`` would take every tab of the profile offline,
other agents' too). The emulation ends with that session, so a lost connection never
leaves a tab offline.

It does not reach a service worker: a request the worker answers with its own
``fetch()`` still goes out (measured with Chromium 156). Offline is mostly used to test
what a PWA's worker does without a network, so while the tab is offline the service
workers of its origin are emulated offline too, over a browser-level CDP session
(``Target.attachToTarget``, messages through ``Target.sendMessageToTarget``, because a
Python ``CDPSession`` cannot address a child session), including workers that start
later (``Target.setDiscoverTargets``). A worker is shared by every tab of its origin:
those tabs see its fetches fail too. A worker that starts while the tab is offline may
run a fetch before it is reached.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from typing import TYPE_CHECKING, Any

from browserdeck.engine import options as o
from browserdeck.engine.errors import playwright_errors
from browserdeck.engine.state import PageState, origin_of
from browserdeck.errors import START, STOP, Hint, Unavailable
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import Browser, CDPSession

log = logging.getLogger(__name__)

EMULATE = "Network.emulateNetworkConditions"
WORKER_CALL_TIMEOUT = 5.0


def conditions(offline: bool) -> dict[str, Any]:
    return {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


class WorkerOffline:
    """Keeps the service workers of one origin offline until ``stop()``."""

    def __init__(self, cdp: CDPSession, origin: str) -> None:
        self.cdp = cdp
        self.origin = origin
        self.workers: dict[str, str] = {}  # targetId -> script URL, emulated offline
        self._sessions: dict[str, str] = {}  # targetId -> sessionId
        self._ids = itertools.count(1)
        self._replies: dict[tuple[str, int], asyncio.Future[dict[str, Any]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}  # targetId -> attaching it
        self._stopped = False

    @classmethod
    async def start(cls, browser: Browser, origin: str) -> WorkerOffline:
        cdp = await browser.new_browser_cdp_session()
        self = cls(cdp, origin)
        cdp.on("Target.receivedMessageFromTarget", self._on_message)
        cdp.on("Target.targetCreated", self._on_target)
        cdp.on("Target.targetInfoChanged", self._on_target)
        cdp.on("Target.detachedFromTarget", self._on_detached)
        try:
            await cdp.send("Target.setDiscoverTargets", {"discover": True})
            for info in (await cdp.send("Target.getTargets")).get("targetInfos") or []:
                self._on_target({"targetInfo": info})
            # The workers running now are offline before the call returns.
            await asyncio.gather(*self._tasks.values())
        except BaseException:
            await self.stop()
            raise
        return self

    def _on_target(self, event: dict[str, Any]) -> None:
        info = event.get("targetInfo") or {}
        target = str(info.get("targetId", ""))
        if self._stopped or not self._wanted(info) or target in self._tasks:
            return
        # Kept after it is done: a target is taken once (setDiscoverTargets and getTargets
        # both report the running ones).
        self._tasks[target] = aio.create_task(self._take(info), name="offline-service-worker")

    def _wanted(self, info: dict[str, Any]) -> bool:
        return info.get("type") == "service_worker" and (
            origin_of(str(info.get("url", ""))) == self.origin
        )

    async def _take(self, info: dict[str, Any]) -> None:
        target = str(info.get("targetId", ""))
        try:
            attached = await self.cdp.send(
                "Target.attachToTarget", {"targetId": target, "flatten": False}
            )
            session = str(attached["sessionId"])
            self._sessions[target] = session
            await self._call(session, EMULATE, conditions(True))
        except Exception as exc:  # the worker stopped meanwhile: nothing to keep offline
            log.debug("offline: service worker %s: %s", info.get("url"), exc)
            return
        self.workers[target] = str(info.get("url", ""))

    async def _call(self, session: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        call_id = next(self._ids)
        reply: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[(session, call_id)] = reply
        try:
            message = json.dumps({"id": call_id, "method": method, "params": params})
            await self.cdp.send(
                "Target.sendMessageToTarget", {"sessionId": session, "message": message}
            )
            answer = await asyncio.wait_for(reply, WORKER_CALL_TIMEOUT)
        finally:
            self._replies.pop((session, call_id), None)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer

    def _on_message(self, event: dict[str, Any]) -> None:
        try:
            message = json.loads(str(event.get("message", "")))
        except ValueError:
            return
        reply = self._replies.get((str(event.get("sessionId")), message.get("id", -1)))
        if reply is not None and not reply.done():
            reply.set_result(message)

    def _on_detached(self, event: dict[str, Any]) -> None:
        target = event.get("targetId")
        if target is None:  # older protocol: only the session id
            sid = event.get("sessionId")
            target = next((t for t, s in self._sessions.items() if s == sid), None)
        if target is not None:
            self._sessions.pop(target, None)
            self.workers.pop(target, None)

    async def stop(self) -> None:
        """Back online: restore each worker, then detach (detaching alone does not reset the
        renderer's ``navigator.onLine``)."""
        self._stopped = True
        for task in list(self._tasks.values()):
            await aio.cancel_and_wait(task)
        for target, session in list(self._sessions.items()):
            with contextlib.suppress(Exception):
                await self._call(session, EMULATE, conditions(False))
            with contextlib.suppress(Exception):
                await self.cdp.send("Target.detachFromTarget", {"sessionId": session})
            self._sessions.pop(target, None)
        self.workers.clear()
        with contextlib.suppress(Exception):
            await self.cdp.detach()


async def set_offline(state: PageState, opts: o.OfflineOptions) -> dict[str, Any]:
    if state.cdp is None:
        raise Unavailable(
            "this tab has no CDP session to emulate offline with",
            hint=Hint(
                "this is a browserdeck bug; reconnect the profile ({stop}, {start})",
                stop=STOP,
                start=START,
            ),
            code="offline_unavailable",
        )
    async with state.offline_lock:
        with playwright_errors("set offline"):
            await state.cdp.send(EMULATE, conditions(opts.offline))
        state.offline = opts.offline
        note = await _service_workers(state, opts.offline)
        out: dict[str, Any] = {
            "targetId": state.target_id,
            "url": state.page.url,
            "offline": state.offline,
            "serviceWorkers": sorted(state.offline_workers.workers.values())
            if state.offline_workers is not None
            else [],
        }
        if note:
            out["note"] = note
        return out


async def _service_workers(state: PageState, offline: bool) -> str | None:
    """Take the workers of the tab's origin offline with it, or bring them back."""
    current = state.offline_workers
    origin = origin_of(state.page.url) if offline else ""
    if current is not None and current.origin != origin:
        state.offline_workers = None
        await current.stop()
    if not offline or not origin or state.offline_workers is not None:
        return None
    browser = state.page.context.browser
    if browser is None:
        return "this tab's service workers stay online (no browser-level CDP access)"
    try:
        state.offline_workers = await asyncio.wait_for(
            WorkerOffline.start(browser, origin), WORKER_CALL_TIMEOUT * 2
        )
    except Exception as exc:  # e.g. an extension relay that refuses Target.* calls
        log.info("offline: service workers of %s stay online: %s", origin, exc)
        return f"this tab is offline, but service workers of {origin} stay online: {exc}"
    return None


def release(state: PageState) -> None:
    """The tab closed: bring the workers it took offline back (in the background)."""
    workers, state.offline_workers = state.offline_workers, None
    state.offline = False
    if workers is not None:
        aio.create_task(workers.stop(), name="offline-release")
