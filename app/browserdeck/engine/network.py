"""What a tab's network obeys: routes, and where agents may go (``allowedOrigins``).

Everything here runs on the CDP session the engine keeps for each tab
(``PageState.cdp``): it reaches Chromium the same way on every driver (the managed
profiles' endpoint, a remote browser, the extension relay's ``chrome.debugger``), and
Chromium keeps what one session asks for apart from other clients' (a user's own
Playwright or Puppeteer sees none of it). Per tab (``TabNet``):

* **Routes** (``engine/routes.py``): ``Fetch.enable`` with the routes' narrowed patterns,
  so only what a route may match pauses; each paused request is matched exactly here,
  then fulfilled, continued (headers changed) or failed.
* **Origin rules** (``policy/origins.py``), when set: ``Network.setBlockedURLs`` stops
  subresources, EventSource and beacons to a refused origin inside the renderer, at no
  cost to the rest; a ``Document`` pattern of ``Fetch`` pauses every navigation (the
  tab's and its iframes', redirects included) to refuse those; an in-page guard
  (``GUARD_JS``, run before the page's own scripts) refuses WebSockets and popups
  (``window.open``, links with a target) and tells the engine through a binding.
  A popup that got away anyway (opened before the engine reached it) is closed when it
  lands on a refused origin. Each refusal is listed in the tab's network requests,
  naming the rule, and said once in the next answer's note.

``Network`` holds, per browser, the routes by owner (``RouteBook``), and applies to
each tab what it obeys: the profile-wide routes, the routes of the agent sessions that
work in it (a tab takes a session's routes at that session's first call there; a popup
takes its opener's), and the origin rules of the browser's profile. A session's routes
end with it (``end_owner``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browserdeck.engine.routes import PROFILE, Route, RouteBook, resource_type_of
from browserdeck.policy.origins import NO_RULES, OriginRules
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.engine.har import HarRecording
    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

BINDING = "__browserdeckRefused"
BLOCKED_FAILURES = ("net::ERR_BLOCKED_BY_CLIENT", "inspector")
REFUSALS_KEPT = 20
ABORTS_KEPT = 200
LIFT_JS = "window.__browserdeckOrigins && (window.__browserdeckOrigins.rules = {blocked: [], allowed: []})"

# The in-page guard: refuses WebSockets and popups to a refused origin, before the
# page's own scripts run, and tells the engine (the binding). Installed again with new
# rules it only replaces them. A page's script can undo it: Chromium's own blocking
# (setBlockedURLs, Fetch) is what holds for everything else.
GUARD_JS = """(() => {
  const KEY = '__browserdeckOrigins';
  const guard = window[KEY] || (window[KEY] = {});
  guard.rules = __RULES__;
  if (guard.installed) return;
  guard.installed = true;
  const report = window.__BINDING__;
  const FAMILY = {'http:': 'http', 'ws:': 'http', 'https:': 'https', 'wss:': 'https'};
  const PORT = {http: '80', https: '443'};
  const refusal = (raw) => {
    let u;
    try { u = new URL(String(raw), location.href); } catch (e) { return null; }
    const family = FAMILY[u.protocol];
    if (!family || !u.hostname) return null;
    const origin = family + '://' + u.hostname + ':' + (u.port || PORT[family]);
    for (const [text, rx] of guard.rules.blocked)
      if (new RegExp(rx).test(origin)) return "blockedOrigins rule '" + text + "'";
    const allowed = guard.rules.allowed;
    if (allowed.length && !allowed.some(([, rx]) => new RegExp(rx).test(origin)))
      return 'not in allowedOrigins';
    return null;
  };
  const tell = (kind, url, why) => {
    try { report && report(JSON.stringify({kind, url: String(url), why})); } catch (e) {}
  };
  const Native = window.WebSocket;
  if (Native) {
    const WebSocket = function WebSocket(url, protocols) {
      if (!new.target) return Native.apply(this, arguments);
      const why = refusal(url);
      if (why) {
        tell('websocket', url, why);
        throw new DOMException('browserdeck refused a WebSocket to ' + url + ': ' + why, 'SecurityError');
      }
      return arguments.length > 1 ? new Native(url, protocols) : new Native(url);
    };
    WebSocket.prototype = Native.prototype;
    for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'])
      Object.defineProperty(WebSocket, k, {value: Native[k]});
    Object.defineProperty(window, 'WebSocket', {value: WebSocket, writable: true, configurable: true});
  }
  const open = window.open;
  window.open = function (url, ...rest) {
    const why = url ? refusal(url) : null;
    if (why) { tell('popup', url, why); return null; }
    return open.call(this, url, ...rest);
  };
  const onLink = (event) => {
    const link = event.target && event.target.closest && event.target.closest('a[href], area[href]');
    const why = link ? refusal(link.href) : null;
    if (!why) return;
    event.preventDefault();
    const target = (link.getAttribute('target') || '').toLowerCase();
    tell(target && target !== '_self' ? 'popup' : 'navigation', link.href, why);
  };
  document.addEventListener('click', onLink, true);
  document.addEventListener('auxclick', onLink, true);
})();"""


@dataclass(frozen=True)
class Scope:
    """Who a tab call is for: its profile, and the agent session (or client) calling."""

    profile: str
    owner: str | None


@dataclass
class Refusal:
    url: str
    kind: str  # document, websocket, popup, navigation, a subresource's type
    why: str
    at: float = field(default_factory=time.monotonic)

    def words(self) -> str:
        what = {"document": "a navigation", "navigation": "a navigation", "popup": "a popup"}
        return f"browserdeck refused {what.get(self.kind, 'a ' + self.kind)} to {self.url} ({self.why})"


class TabNet:
    """What one tab's CDP session has been asked to do about its network."""

    def __init__(self, state: PageState, hits: Counter[int]) -> None:
        self.state = state
        self.routes: tuple[Route, ...] = ()
        self.rules: OriginRules = NO_RULES
        self.hits = hits  # per route id: requests it decided (shared by the browser's tabs)
        self.unsaid: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)  # for the next answer
        self.recent: deque[Refusal] = deque(maxlen=REFUSALS_KEPT)
        self.aborted: dict[str, str] = {}  # URL -> the pattern of the route that aborted it
        self._fetch: list[dict[str, Any]] = []
        self._blocking = False
        self._uncached = False
        self._script: str | None = None
        self._listening = False
        self.lock = asyncio.Lock()

    # --- what the session is asked ---------------------------------------------
    def obeys(self, routes: tuple[Route, ...], rules: OriginRules) -> bool:
        """Whether the session was asked for exactly these already."""
        return self.routes == routes and self.rules is rules and (self._blocking or not rules.active)

    async def apply(self, routes: tuple[Route, ...], rules: OriginRules) -> None:
        cdp = self.state.cdp
        if cdp is None:
            return
        async with self.lock:
            self._listen()
            patterns = [p for route in routes for p in route.fetch_patterns()]
            if rules.active:
                patterns.append({"urlPattern": "*", "resourceType": "Document"})
            if patterns != self._fetch:
                if patterns:
                    await cdp.send("Fetch.enable", {"patterns": patterns})
                elif self._fetch:
                    await cdp.send("Fetch.disable")
                self._fetch = patterns
            if bool(routes) != self._uncached:
                await cdp.send("Network.setCacheDisabled", {"cacheDisabled": bool(routes)})
                self._uncached = bool(routes)
            if rules is not self.rules or (rules.active and not self._blocking):
                await self._apply_rules(rules)
            self.routes, self.rules = routes, rules

    async def _apply_rules(self, rules: OriginRules) -> None:
        cdp = self.state.cdp
        assert cdp is not None
        if rules.active:
            if not self._blocking:
                # Chromium blocks only while the Network domain is on for this session;
                # no buffers: this session reads no bodies.
                await cdp.send(
                    "Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}
                )
                await cdp.send("Page.enable")  # scripts for new documents need it
                if not self.state.runtime_enabled:  # the binding reaches new documents
                    await cdp.send("Runtime.enable")
                    self.state.runtime_enabled = True
                await cdp.send("Runtime.addBinding", {"name": BINDING})
            await cdp.send("Network.setBlockedURLs", {"urlPatterns": rules.block_patterns()})
            self._blocking = True
        elif self._blocking:
            await cdp.send("Network.setBlockedURLs", {"urlPatterns": []})
            await cdp.send("Network.disable")
            self._blocking = False
        # The guard with the new rules: it runs in the current document at once and in
        # every new one before the page's scripts.
        old, self._script = self._script, None
        if old is not None:
            with contextlib.suppress(Exception):
                await cdp.send("Page.removeScriptToEvaluateOnNewDocument", {"identifier": old})
        if rules.active:
            source = GUARD_JS.replace("__RULES__", json.dumps(rules.script_rules()))
            added = await cdp.send(
                "Page.addScriptToEvaluateOnNewDocument",
                {"source": source.replace("__BINDING__", BINDING), "runImmediately": True},
            )
            self._script = str(added.get("identifier"))
        elif old is not None:  # the current document's guard lets everything through now
            await cdp.send("Runtime.evaluate", {"expression": LIFT_JS})

    def _listen(self) -> None:
        if self._listening or self.state.cdp is None:
            return
        self._listening = True
        self.state.log.explain = self.explain
        cdp = self.state.cdp
        cdp.on("Fetch.requestPaused", self._on_paused)
        cdp.on("Runtime.bindingCalled", self._on_binding)
        self.state.page.on("framenavigated", self._on_navigated)

    # --- paused requests ---------------------------------------------------------
    def _on_paused(self, event: dict[str, Any]) -> None:
        aio.create_task(self._decide(event), name="route-request")

    async def _decide(self, event: dict[str, Any]) -> None:
        cdp = self.state.cdp
        if cdp is None:
            return
        request_id = event.get("requestId")
        request = event.get("request") or {}
        url = str(request.get("url", ""))
        kind = resource_type_of(str(event.get("resourceType", "Other")))
        try:
            why = self.rules.refusal(url) if self.rules.active else None
            if why is not None:
                self.refused(url, kind, why)
                await cdp.send(
                    "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
                )
                return
            route = next((x for x in self.routes if x.matches(url, kind)), None)
            if route is None:
                await cdp.send("Fetch.continueRequest", {"requestId": request_id})
                return
            self.hits[route.id] += 1
            if route.action == "abort":
                self.aborted[url] = route.pattern
                while len(self.aborted) > ABORTS_KEPT:
                    del self.aborted[next(iter(self.aborted))]
                await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "Failed"})
            elif route.action == "fulfill":
                await cdp.send("Fetch.fulfillRequest", route.fulfil_params(str(request_id)))
            else:
                params: dict[str, Any] = {"requestId": request_id}
                headers = route.continued_headers(dict(request.get("headers") or {}))
                if headers is not None:
                    params["headers"] = headers
                await cdp.send("Fetch.continueRequest", params)
        except Exception as exc:  # the tab closed, or the request was cancelled meanwhile
            log.debug("deciding %s: %s", url[:200], exc)

    # --- refusals --------------------------------------------------------------
    def refused(self, url: str, kind: str, why: str) -> None:
        refusal = Refusal(url[:2000], kind, why)
        self.unsaid.append(refusal)
        self.recent.append(refusal)

    def _on_binding(self, event: dict[str, Any]) -> None:
        if event.get("name") != BINDING:
            return
        try:
            told = json.loads(str(event.get("payload", "")))
            url, kind = str(told["url"]), str(told["kind"])
        except (ValueError, KeyError, TypeError):
            return
        # Checked again here: a page's script may call the binding itself.
        found = self.rules.refusal(url)
        if found is None:
            return
        self.refused(url, kind, found)
        listed = "websocket" if kind == "websocket" else "document"
        self.state.requests.append(
            self.state.log.new("GET", url, listed, failure=f"refused: {found}")
        )

    def explain(self, url: str, failure: str | None) -> str | None:
        """A failed request's failure, naming the rule when the origin rules stopped it."""
        if failure in BLOCKED_FAILURES and self.rules.active:
            why = self.rules.refusal(url)
            if why is not None:
                return f"refused: {why}"
        pattern = self.aborted.get(url)
        if pattern is not None:
            return f"{failure} (aborted by route {pattern})"
        return failure

    def refusal_since(self, since: float) -> Refusal | None:
        """A navigation refused since ``since`` (monotonic), the latest."""
        for refusal in reversed(self.recent):
            if refusal.at >= since and refusal.kind in ("document", "navigation", "popup"):
                return refusal
        return None

    def take_notes(self) -> list[str]:
        out = [refusal.words() for refusal in self.unsaid]
        self.unsaid.clear()
        return out

    # --- the backstop for a page that got away --------------------------------------
    def _on_navigated(self, frame: Any) -> None:
        if frame.parent_frame is None:
            self.leave_if_refused(frame.url)

    def leave_if_refused(self, url: str) -> None:
        """The tab shows a refused origin (a popup opened before the engine reached it):
        close it if it is a popup, else take it to about:blank."""
        why = self.rules.refusal(url) if self.rules.active else None
        if why is not None:
            self.refused(url, "document", why)
            aio.create_task(self._leave(), name="leave-refused-origin")

    async def _leave(self) -> None:
        page = self.state.page
        try:
            if await page.opener() is not None:
                await page.close()  # a popup: it should not have opened
            else:
                await page.goto("about:blank", timeout=10_000)
        except Exception as exc:  # it closed or navigated on its own meanwhile
            log.debug("leaving a refused origin: %s", exc)


@dataclass
class BrowserNet:
    """One browser's routes, origin rules' profile and HAR recordings."""

    profile: str | None = None
    book: RouteBook = field(default_factory=RouteBook)
    recordings: dict[str, HarRecording] = field(default_factory=dict)  # owner -> one


class Network:
    """The routes and rules of every browser the engine drives, applied to their tabs."""

    def __init__(
        self,
        origin_rules: Callable[[str | None], OriginRules],
        pages: Callable[[str], Awaitable[list[PageState]]],
    ) -> None:
        self._origin_rules = origin_rules
        self._pages = pages  # every tab of a browser, taken in (BrowserPool.all_pages)
        self.browsers: dict[str, BrowserNet] = {}
        self.hits: Counter[int] = Counter()

    def browser(self, cdp_url: str) -> BrowserNet:
        found = self.browsers.get(cdp_url)
        if found is None:
            found = self.browsers[cdp_url] = BrowserNet()
        return found

    def bind(self, cdp_url: str, profile: str) -> None:
        """The browser at ``cdp_url`` is profile ``profile``'s (its rules apply)."""
        self.browser(cdp_url).profile = profile

    def rules(self, cdp_url: str) -> OriginRules:
        found = self.browsers.get(cdp_url)
        if found is None or found.profile is None:
            return NO_RULES
        return self._origin_rules(found.profile)

    def wants_every_tab(self, cdp_url: str) -> bool:
        """Whether every tab of the browser must be taken in as it opens (profile-wide
        routes or origin rules), or a tab may take routes from its opener."""
        found = self.browsers.get(cdp_url)
        if found is None:
            return False
        return bool(found.book.routes or found.recordings) or self.rules(cdp_url).active

    # --- per call and per tab ----------------------------------------------------
    async def enter(self, state: PageState, scope: Scope) -> None:
        """A call of ``scope`` on this tab: the tab takes the caller's routes."""
        b = self.browser(state.cdp_url)
        if b.profile != scope.profile:
            b.profile = scope.profile
            if self.rules(state.cdp_url).active:
                await self.sync_all(state.cdp_url)
        owner = scope.owner or ""
        owners = state.memory.owners
        if owner not in owners:
            owners.add(owner)
        recording = b.recordings.get(owner)
        if recording is not None and recording.session:
            recording.watch(state)
        await self.sync(state)

    async def sync(self, state: PageState) -> None:
        """Ask the tab's session for what it obeys now (nothing when nothing changed)."""
        found = self.browsers.get(state.cdp_url)
        routes = found.book.effective(state.memory.owners) if found is not None else ()
        rules = self.rules(state.cdp_url)
        net = state.net
        if net is None:
            if not routes and not rules.active:
                return
            net = state.net = TabNet(state, self.hits)
        if net.obeys(routes, rules):
            return
        try:
            await net.apply(routes, rules)
        except Exception as exc:  # the tab closed meanwhile
            log.debug("network of tab %s: %s", state.target_id[:8], exc)

    async def sync_all(self, cdp_url: str) -> None:
        for state in await self._pages(cdp_url):
            await self.sync(state)

    async def registered(self, state: PageState, opener: PageState | None) -> None:
        """A tab the engine just took in: it takes its opener's sessions, then its rules."""
        found = self.browsers.get(state.cdp_url)
        if found is None:
            return
        if opener is not None:
            state.memory.owners.update(opener.memory.owners)
            for owner in opener.memory.owners:
                recording = found.recordings.get(owner)
                if recording is not None and recording.session:
                    recording.watch(state)
        await self.sync(state)
        if state.net is not None:
            state.net.leave_if_refused(state.page.url)

    # --- routes ------------------------------------------------------------------
    async def add_route(self, cdp_url: str, route: Route) -> None:
        self.browser(cdp_url).book.add(route)
        await self.sync_all(cdp_url)

    async def remove_routes(self, cdp_url: str, owner: str, pattern: str | None) -> list[Route]:
        gone = self.browser(cdp_url).book.remove(owner, pattern)
        if gone:
            await self.sync_all(cdp_url)
        return gone

    def visible_routes(self, cdp_url: str, owner: str) -> list[Route]:
        """What ``owner`` sees: its own routes and the profile-wide ones (never another
        session's)."""
        found = self.browsers.get(cdp_url)
        if found is None:
            return []
        return [x for x in found.book.routes if x.owner in (owner, PROFILE)]

    async def end_owner(self, owner: str) -> list[str]:
        """An agent session ended: its routes go, its recordings are written; the files."""
        written: list[str] = []
        for cdp_url, found in list(self.browsers.items()):
            recording = found.recordings.pop(owner, None)
            if recording is not None:
                with contextlib.suppress(Exception):
                    written.append((await recording.stop()).path)
                    log.info("the HAR recording of ended session %s: %s", owner[:40], written[-1])
            if found.book.remove(owner, None):
                await self.sync_all(cdp_url)
        return written

    async def rules_changed(self) -> None:
        """The settings changed: every browser's tabs get their profile's rules now."""
        for cdp_url, found in list(self.browsers.items()):
            if found.profile is not None:
                await self.sync_all(cdp_url)

    def note_for(self, state: PageState) -> list[str]:
        return state.net.take_notes() if state.net is not None else []
