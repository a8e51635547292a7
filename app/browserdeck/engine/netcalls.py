"""The engine's network calls: routes, online/offline, HAR recordings, requests.

Each answers one request of ``netoptions.py`` (their ``engine_method`` is
``network.<name>``) and, unlike the other engine calls, is told who calls (``Scope``):
a route and a recording belong to the caller's agent session.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import TYPE_CHECKING, Any

from browserdeck import results as r
from browserdeck import results_network as rn
from browserdeck.engine import netoptions as n
from browserdeck.engine import options as o
from browserdeck.engine.actions import write_artifact
from browserdeck.engine.har import HarRecording, is_text
from browserdeck.engine.network import Network, Scope
from browserdeck.engine.routes import PROFILE, Route
from browserdeck.errors import (
    HAR_START,
    HAR_STOP,
    REQUESTS,
    BrowserdeckError,
    Conflict,
    Hint,
    NotFound,
)
from browserdeck.policy import origins
from browserdeck.secrets import redaction

if TYPE_CHECKING:
    from collections.abc import Callable

    from browserdeck.engine.driver import Headers
    from browserdeck.engine.engine import Engine
    from browserdeck.engine.state import PageState

HAR_DEADLINE = 30.0
DETAIL_DEADLINE = 15.0


def _owner(scope: Scope | None) -> str:
    return (scope.owner if scope is not None else None) or ""


class NetworkCalls:
    def __init__(self, engine: Engine, network: Network, redact: Callable[[], bool]) -> None:
        self.engine = engine
        self.network = network
        self.redact = redact  # redactNetworkSecrets, read at each call

    def _info(self, route: Route) -> rn.RouteInfo:
        return rn.RouteInfo(
            pattern=route.pattern,
            regex=route.regex,
            resource_type=route.resource_type,
            action=route.action,
            scope="profile" if route.owner == PROFILE else "session",
            said=route.describe(),
            hits=self.network.hits[route.id],
        )

    def _routes(self, state: PageState, owner: str, **more: Any) -> dict[str, Any]:
        routes = self.network.visible_routes(state.cdp_url, owner)
        return {
            "targetId": state.target_id,
            "url": state.page.url,
            "routes": [self._info(x) for x in routes],
            **more,
        }

    # --- who calls -----------------------------------------------------------------
    async def enter(self, cdp_url: str, target_id: str, headers: Headers, scope: Scope) -> None:
        """Before a call of ``scope`` on this tab: the tab takes the caller's routes."""
        net = self.network
        found = net.browsers.get(cdp_url)
        if found is not None and found.profile == scope.profile and not (
            found.book.routes or found.recordings or net.rules(cdp_url).active
        ):
            return  # nothing for this tab's network to obey: the common case
        state = await self.engine.page_state(cdp_url, target_id, headers, reads=False)
        await net.enter(state, scope)

    async def all_pages(self, cdp_url: str) -> list[PageState]:
        """Every tab of the browser, taken in (none while the engine is not connected)."""
        pool = self.engine._pool
        return await pool.all_pages(cdp_url) if pool is not None else []

    @staticmethod
    def refused_navigation(state: PageState, since: float) -> BrowserdeckError | None:
        """The error for a navigation the origin rules refused since ``since``, if one was."""
        refused = state.net.refusal_since(since) if state.net is not None else None
        if refused is None or state.net is None:
            return None
        state.net.take_notes()  # said in the error
        return origins.refused(refused.url, refused.why)

    # --- routes ------------------------------------------------------------------
    async def route(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.RouteOptions, scope: Scope | None
    ) -> rn.Routes:
        state = await self.engine.page_state(cdp_url, target_id, headers, reads=False)
        owner = _owner(scope)
        route = opts.route(owner)
        await self.network.add_route(cdp_url, route)
        return rn.Routes.model_validate(self._routes(state, owner, added=self._info(route)))

    async def routes(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.RouteListOptions, scope: Scope | None
    ) -> rn.Routes:
        state = await self.engine.page_state(cdp_url, target_id, headers, reads=False)
        return rn.Routes.model_validate(self._routes(state, _owner(scope)))

    async def unroute(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.UnrouteOptions, scope: Scope | None
    ) -> rn.Routes:
        state = await self.engine.page_state(cdp_url, target_id, headers, reads=False)
        owner = _owner(scope)
        whose = PROFILE if opts.scope == "profile" else owner
        gone = await self.network.remove_routes(cdp_url, whose, opts.pattern)
        return rn.Routes.model_validate(self._routes(state, owner, removed=len(gone)))

    # --- online, offline ---------------------------------------------------------
    async def set_state(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.NetworkStateOptions, scope: Scope | None
    ) -> r.Offline:
        offline = o.OfflineOptions(offline=opts.state == "offline", target_id=opts.target_id)
        return await self.engine.set_offline(cdp_url, target_id, headers, offline)

    # --- HAR ---------------------------------------------------------------------
    async def har_start(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.HarStartOptions, scope: Scope | None
    ) -> rn.Har:
        state = await self.engine.page_state(cdp_url, target_id, headers, reads=False)
        owner = _owner(scope)
        found = self.network.browser(cdp_url)
        running = found.recordings.get(owner)
        if running is not None:
            since = time.strftime("%H:%M:%S", time.localtime(running.started))
            raise Conflict(
                f"a HAR recording of yours is already running (since {since}, "
                f"{len(running.entries)} request(s) so far)",
                hint=Hint("stop it first ({stop}), then start another", stop=HAR_STOP),
                code="har_running",
            )
        recording = HarRecording(
            owner, session=opts.session, bodies=opts.content == "embed", redact=self.redact()
        )
        recording.watch(state)
        if opts.session:
            for other in await self.all_pages(cdp_url):
                if owner in other.memory.owners:
                    recording.watch(other)
        found.recordings[owner] = recording
        return rn.Har(
            target_id=state.target_id,
            url=state.page.url,
            recording=True,
            scope="session" if opts.session else "tab",
            pages=len(recording.pages),
            redacted=recording.redact,
        )

    async def har_stop(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.HarStopOptions, scope: Scope | None
    ) -> rn.Har:
        owner = _owner(scope)
        recording = self.network.browser(cdp_url).recordings.pop(owner, None)
        if recording is None:
            raise NotFound(
                "no HAR recording of yours is running in this profile",
                hint=Hint("start one first ({start})", start=HAR_START),
                code="har_not_running",
            )
        saved = await asyncio.wait_for(recording.stop(), HAR_DEADLINE)
        return rn.Har(
            target_id=target_id,
            recording=False,
            scope="session" if recording.session else "tab",
            path=saved.path,
            entries=saved.entries,
            pages=saved.pages,
            pending=saved.pending,
            redacted=recording.redact,
        )

    # --- requests ------------------------------------------------------------------
    async def requests(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.NetworkRequestsOptions, scope: Scope | None
    ) -> rn.NetworkRequests:
        state = await self.engine.page_state(cdp_url, target_id, headers)
        kept = [e for e in state.requests if opts.keeps(e)]
        return rn.NetworkRequests(
            target_id=state.target_id,
            url=state.page.url,
            requests=kept[-opts.limit :],
            total=len(kept),
        )

    async def request(
        self, cdp_url: str, target_id: str, headers: Headers, opts: n.NetworkRequestOptions, scope: Scope | None
    ) -> rn.RequestDetail:
        state = await self.engine.page_state(cdp_url, target_id, headers)
        entry = next((e for e in state.requests if e.index == opts.index), None)
        if entry is None:
            newest = state.log.count
            raise NotFound(
                f"request #{opts.index} is not among this tab's requests (it has "
                f"{'none' if not newest else f'#1 to #{newest}, the last {len(state.requests)} kept'})",
                hint=Hint("list them ({requests}) and use a number from there", requests=REQUESTS),
                code="request_not_found",
            )
        detail = await asyncio.wait_for(self._detail(state, entry, opts), DETAIL_DEADLINE)
        return rn.RequestDetail.model_validate(detail)

    async def _detail(
        self, state: PageState, entry: r.RequestEntry, opts: n.NetworkRequestOptions
    ) -> dict[str, Any]:
        redact = self.redact()
        out: dict[str, Any] = {
            "targetId": state.target_id,
            "url": state.page.url,
            "index": entry.index,
            "method": entry.method,
            "requestUrl": entry.url,
            "resourceType": entry.resource_type,
            "status": entry.status,
            "failure": entry.failure,
            "redacted": redact,
        }
        request = entry._request
        want = opts.part
        if request is None:  # refused before it reached the network: nothing more to show
            out["bodyNote"] = "refused by browserdeck before it was sent: no headers or body"
            return out

        def pairs(raw: list[dict[str, str]]) -> list[dict[str, str]]:
            found = [(h["name"], h["value"]) for h in raw]
            if redact:
                found = redaction.headers(found)
            return [{"name": k, "value": v} for k, v in found]

        def text(value: str) -> str:
            value = redaction.redact_secrets(value) if redact else value
            if len(value) > opts.max_chars:
                notes.append(f"a body was cut at {opts.max_chars} characters (maxChars)")
                return value[: opts.max_chars]
            return value

        notes: list[str] = []
        timing = request.timing or {}
        if timing.get("responseEnd", -1) >= 0:
            out["durationMs"] = round(float(timing["responseEnd"]), 1)
        if want in (None, "request-headers"):
            out["requestHeaders"] = pairs(await request.headers_array())
        if want in (None, "request-body") and request.post_data is not None:
            out["requestBody"] = text(request.post_data)
        response = await request.response() if entry.failure is None else None
        if response is not None:
            out["statusText"] = response.status_text
            if want in (None, "response-headers"):
                out["responseHeaders"] = pairs(await response.headers_array())
            if want in (None, "response-body"):
                await self._body(state, entry, response, out, notes, text)
        elif want in ("response-headers", "response-body"):
            notes.append("no response" + (f": {entry.failure}" if entry.failure else " yet"))
        if notes:
            out["bodyNote"] = "; ".join(notes)
        return out

    async def _body(
        self,
        state: PageState,
        entry: r.RequestEntry,
        response: Any,
        out: dict[str, Any],
        notes: list[str],
        text: Callable[[str], str],
    ) -> None:
        try:
            body = await response.body()
        except Exception as exc:  # a redirect, or a body Chromium no longer holds
            notes.append(f"no response body: {str(exc).splitlines()[0][:200]}")
            return
        mime = str((await response.all_headers()).get("content-type", ""))
        if is_text(mime) or not body:
            out["responseBody"] = text(body.decode("utf-8", "replace"))
            return
        path = await asyncio.to_thread(write_artifact, "responses", state.target_id, "bin", body)
        notes.append(f"binary body ({mime or 'no content type'}, {len(body):,} bytes) saved to {path}")
        if len(body) <= 3 * 1024:
            out["responseBody"] = base64.b64encode(body).decode("ascii")
            notes.append("responseBody is base64")
