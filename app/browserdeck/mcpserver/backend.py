"""How MCP tools reach browserdeck: the front door's typed calls (``Backend``).

Tools call typed methods (``status``, ``tabs``, ``on_tab`` with an engine options
model, ...); the backend carries them out:

- ``DeckBackend``: the service's ``Deck`` in this process (MCP at ``/mcp`` inside the
  service, and the in-process fallback): a plain call, no HTTP to itself, the core's
  errors as they are, one activity entry per call;
- ``ApiBackend`` over a real socket, to the running service (found the way the CLI
  finds it: ``--url``, ``BROWSERDECK_URL``, the instance file, the configured port):
  the one place MCP names the API's routes;
- ``InProcessBackend``: no service runs, so start one here (headless, no API socket)
  and call its ``Deck``. Its managed browsers start on the first tool call (profiles
  start on demand) and are closed after ``mcpIdleMinutes`` without a call, to start
  again on the next one.

``AutoBackend`` (stdio) picks between the first and the last at the first call,
and looks again if the service it was using goes away.

Over 500 lines on purpose: the typed ``Backend`` calls have four implementations here
(over HTTP, in-process, the fallback, and the picker between them) whose methods mirror
one another; kept together, a new call is added to all of them in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx

from browserdeck import aio, config, paths, secrets
from browserdeck.client import NOT_OURS_HINT, discover_url, unproven_server
from browserdeck.deck import Caller, TabRequest
from browserdeck.engine import options as o
from browserdeck.errors import BrowserdeckError, Unavailable

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.service import Service

T = TypeVar("T")

log = logging.getLogger(__name__)

CLIENT_NAME = "browserdeck-mcp"
# Tools may wait up to a minute (navigation, wait_for); the API adds its own margin.
TIMEOUT = httpx.Timeout(150.0, connect=3.0)


class Backend(Protocol):
    """What MCP tools ask of browserdeck, typed (see ``Deck`` for what each call does)."""

    async def status(self, caller: Caller, profile: str | None) -> dict[str, Any]: ...

    async def profiles(self, caller: Caller) -> dict[str, Any]: ...

    async def start(self, caller: Caller, profile: str | None) -> dict[str, Any]: ...

    async def stop(self, caller: Caller, profile: str | None) -> dict[str, Any]: ...

    async def tabs(self, caller: Caller, profile: str | None) -> list[dict[str, Any]]: ...

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> dict[str, Any]: ...

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str: ...

    async def on_tab(
        self, caller: Caller, profile: str | None, target: str | None, request: TabRequest
    ) -> dict[str, Any]: ...

    async def release_session(self, caller: Caller, session: str) -> list[str]: ...

    def describe(self) -> str: ...

    async def close(self) -> None: ...


# The API route of each tab request: for the wire (ApiBackend) and for the activity log,
# which names a call by its route whichever way it came in. Any other request is an act.
TAB_ROUTES: dict[type[Any], tuple[str, str]] = {
    o.SnapshotOptions: ("GET", "/snapshot"),
    o.ConsoleOptions: ("GET", "/console"),
    o.NavigateOptions: ("POST", "/navigate"),
    o.ScreenshotOptions: ("POST", "/screenshot"),
    o.OfflineOptions: ("POST", "/set/offline"),
    o.PdfOptions: ("POST", "/pdf"),
    o.FileChooserOptions: ("POST", "/hooks/file-chooser"),
    o.DialogOptions: ("POST", "/hooks/dialog"),
}


def route_of(request: TabRequest) -> tuple[str, str]:
    return TAB_ROUTES.get(type(request), ("POST", "/act"))


def _headers(caller: Caller) -> dict[str, str]:
    headers = {}
    if caller.session:
        headers["X-Browserdeck-Session"] = caller.session
    if caller.client:
        headers["X-Browserdeck-Client"] = caller.client
    return headers


def error_from_response(resp: httpx.Response) -> BrowserdeckError:
    try:
        err = resp.json()["error"]
        return BrowserdeckError(
            str(err.get("message") or resp.text),
            hint=err.get("hint"),
            code=str(err.get("code") or "error"),
            status=resp.status_code,
        )
    except (ValueError, KeyError, TypeError):
        # Not one of ours: FastAPI's own 404/405 for a route this service does not have.
        return BrowserdeckError(
            f"HTTP {resp.status_code}: {resp.text[:300]}", status=resp.status_code, code="no_route"
        )


class ApiBackend:
    """The control API of a running service, over its socket (one httpx client)."""

    def __init__(self, client: httpx.AsyncClient, label: str, *, prove: str | None = None) -> None:
        self.client = client
        self.label = label
        # The URL whose listener must prove it is ours before the token goes out (None: an
        # in-process app, nothing to prove).
        self._prove = prove

    @classmethod
    def for_url(cls, url: str, token: str) -> ApiBackend:
        client = httpx.AsyncClient(
            base_url=url,
            timeout=TIMEOUT,
            trust_env=False,
            headers={"Authorization": f"Bearer {token}", "X-Browserdeck-Client": CLIENT_NAME},
        )
        return cls(client, f"the browserdeck service at {url}", prove=url)

    def describe(self) -> str:
        return self.label

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        if self._prove is not None:
            problem = unproven_server(self._prove)
            if problem is not None and problem[0] == "not_running":
                raise Unavailable(
                    f"{self.label} does not answer",
                    hint="start browserdeck again (`browserdeck serve` or the tray app)",
                    code="service_gone",
                )
            if problem is not None:
                raise Unavailable(problem[1], hint=NOT_OURS_HINT, code=problem[0])
            self._prove = None
        try:
            resp = await self.client.request(
                method, path, params=clean, json=json, headers=headers
            )
        except httpx.ConnectError:
            raise Unavailable(
                f"{self.label} does not answer",
                hint="start browserdeck again (`browserdeck serve` or the tray app); "
                "`browserdeck mcp` without --url then falls back to an in-process browser",
                code="service_gone",
            ) from None
        except httpx.TimeoutException:
            raise Unavailable(
                f"{self.label} did not answer {method} {path} in time",
                hint="the page may be busy; try again, or take a snapshot to see where it is",
                code="timeout",
            ) from None
        if resp.status_code >= 400:
            raise error_from_response(resp)
        if resp.headers.get("content-type", "").startswith("application/json"):
            return resp.json()
        return resp.content

    # --- the typed calls, over HTTP -------------------------------------------------
    async def status(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        out: dict[str, Any] = await self.request(
            "GET", "/", params={"profile": profile}, headers=_headers(caller)
        )
        return out

    async def profiles(self, caller: Caller) -> dict[str, Any]:
        out: dict[str, Any] = await self.request("GET", "/profiles", headers=_headers(caller))
        return out

    async def start(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        out: dict[str, Any] = await self.request(
            "POST", "/start", params={"profile": profile}, headers=_headers(caller)
        )
        return out

    async def stop(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        out: dict[str, Any] = await self.request(
            "POST", "/stop", params={"profile": profile}, headers=_headers(caller)
        )
        return out

    async def tabs(self, caller: Caller, profile: str | None) -> list[dict[str, Any]]:
        data = await self.request(
            "GET", "/tabs", params={"profile": profile}, headers=_headers(caller)
        )
        return list(data.get("tabs", []))

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> dict[str, Any]:
        out: dict[str, Any] = await self.request(
            "POST",
            "/tabs/open",
            params={"profile": profile},
            json={"url": url},
            headers=_headers(caller),
        )
        return out

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str:
        data = await self.request(
            "DELETE", f"/tabs/{target}", params={"profile": profile}, headers=_headers(caller)
        )
        return str(data.get("closed") or target)

    async def on_tab(
        self, caller: Caller, profile: str | None, target: str | None, request: TabRequest
    ) -> dict[str, Any]:
        method, path = route_of(request)
        fields = request.model_dump(by_alias=True, exclude_none=True, mode="json")
        params: dict[str, Any] = {"profile": profile}
        if method == "GET":
            params.update(fields, targetId=target)
            body = None
        else:
            body = {"targetId": target, **fields}
        out: dict[str, Any] = await self.request(
            method, path, params=params, json=body, headers=_headers(caller)
        )
        return out

    async def release_session(self, caller: Caller, session: str) -> list[str]:
        data = await self.request(
            "POST", "/sessions/release", json={"session": session}, headers=_headers(caller)
        )
        return list(data.get("released", []))

    async def close(self) -> None:
        await self.client.aclose()


class DeckBackend:
    """The service's front door in this process: a plain call, one activity entry."""

    def __init__(
        self, deck: Deck, label: str, *, on_call: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.deck = deck
        self.label = label
        # The activity log's entry for each call (service.events.api_call), in the shape
        # the API's guard reports an HTTP call in, so the tray shows both alike.
        self._on_call = on_call

    def describe(self) -> str:
        return self.label

    async def _report(
        self,
        caller: Caller,
        route: tuple[str, str],
        profile: str | None,
        run: Callable[[], Awaitable[T]],
    ) -> T:
        started = time.perf_counter()
        status, error = 200, None
        try:
            return await run()
        except BrowserdeckError as exc:
            status = exc.status
            error = {"code": exc.code, "message": exc.message, "hint": exc.hint}
            raise
        except Exception:
            status = 500
            raise
        finally:
            if self._on_call is not None:
                entry: dict[str, Any] = {
                    "time": time.time(),
                    "client": caller.client or CLIENT_NAME,
                    "method": route[0],
                    "path": route[1],
                    "query": f"profile={profile}" if profile else "",
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                }
                if caller.notes:
                    entry["detail"] = dict(caller.notes)
                if error is not None:
                    entry["error"] = error
                self._on_call(entry)

    async def status(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self.deck.status(caller, profile)

    async def profiles(self, caller: Caller) -> dict[str, Any]:
        return await self.deck.profiles()

    async def start(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self._report(
            caller, ("POST", "/start"), profile, lambda: self.deck.start(caller, profile)
        )

    async def stop(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self._report(
            caller, ("POST", "/stop"), profile, lambda: self.deck.stop(caller, profile)
        )

    async def tabs(self, caller: Caller, profile: str | None) -> list[dict[str, Any]]:
        _, tabs = await self.deck.tabs(caller, profile)
        return [t.to_json() for t in tabs]

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> dict[str, Any]:
        tab = await self._report(
            caller,
            ("POST", "/tabs/open"),
            profile,
            lambda: self.deck.open_tab(caller, profile, url),
        )
        return tab.to_json()

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str:
        return await self._report(
            caller,
            ("DELETE", f"/tabs/{target}"),
            profile,
            lambda: self.deck.close_tab(caller, profile, target),
        )

    async def on_tab(
        self, caller: Caller, profile: str | None, target: str | None, request: TabRequest
    ) -> dict[str, Any]:
        return await self._report(
            caller,
            route_of(request),
            profile,
            lambda: self.deck.on_tab(caller, profile, target, request),
        )

    async def release_session(self, caller: Caller, session: str) -> list[str]:
        return await self.deck.release_session(session)

    async def close(self) -> None:
        pass


class _Delegating:
    """A backend that hands each call to another one (``_run`` picks it)."""

    async def _run(self, use: Callable[[Backend], Awaitable[T]]) -> T:
        raise NotImplementedError

    async def status(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self._run(lambda b: b.status(caller, profile))

    async def profiles(self, caller: Caller) -> dict[str, Any]:
        return await self._run(lambda b: b.profiles(caller))

    async def start(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self._run(lambda b: b.start(caller, profile))

    async def stop(self, caller: Caller, profile: str | None) -> dict[str, Any]:
        return await self._run(lambda b: b.stop(caller, profile))

    async def tabs(self, caller: Caller, profile: str | None) -> list[dict[str, Any]]:
        return await self._run(lambda b: b.tabs(caller, profile))

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> dict[str, Any]:
        return await self._run(lambda b: b.open_tab(caller, profile, url))

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str:
        return await self._run(lambda b: b.close_tab(caller, profile, target))

    async def on_tab(
        self, caller: Caller, profile: str | None, target: str | None, request: TabRequest
    ) -> dict[str, Any]:
        return await self._run(lambda b: b.on_tab(caller, profile, target, request))

    async def release_session(self, caller: Caller, session: str) -> list[str]:
        return await self._run(lambda b: b.release_session(caller, session))


class InProcessBackend(_Delegating):
    """A headless service started in this process for as long as the MCP server runs."""

    def __init__(self, *, idle_seconds: float | None = None) -> None:
        self._idle_override = idle_seconds
        self.service: Service | None = None
        self._api: DeckBackend | None = None
        self._start_lock = asyncio.Lock()
        self._busy = 0
        self._last_call = time.monotonic()
        self._idle_task: asyncio.Task[None] | None = None
        self._idle_wake = asyncio.Event()
        self.idle_closures = 0
        self.idle_closed = asyncio.Event()  # set each time idle browsers were closed
        self._closing = False

    def describe(self) -> str:
        return "an in-process browserdeck service (no service was running)"

    @property
    def idle_seconds(self) -> float:
        if self._idle_override is not None:
            return self._idle_override
        minutes = self.service.config.mcp_idle_minutes if self.service else 30
        return float(minutes) * 60.0

    async def _ensure(self) -> DeckBackend:
        if self._api is not None:
            return self._api
        async with self._start_lock:
            if self._api is None:
                from browserdeck.deck import Deck
                from browserdeck.service import Service

                service = Service(force_headless=True, run_relays=False)
                await service.start()
                self.service = service
                self._api = DeckBackend(
                    Deck(service),
                    self.describe(),
                    on_call=lambda entry: service.events.api_call.send(entry=entry),
                )
                self._idle_task = aio.create_task(self._close_when_idle(), name="mcp-idle-close")
                log.info(
                    "MCP: started an in-process service (idle close after %ss)", self.idle_seconds
                )
        return self._api

    async def _run(self, use: Callable[[Backend], Awaitable[T]]) -> T:
        api = await self._ensure()
        self._busy += 1
        try:
            return await use(api)
        except BrowserdeckError as exc:
            from browserdeck.chrome.launcher import BrowserOnPort

            if isinstance(exc, BrowserOnPort):
                # Most likely another `browserdeck mcp` without a service, with its own
                # browser on this profile's port: killing it (the launcher's hint) would
                # pull the page from under that agent.
                exc.hint = (
                    "if another agent's `browserdeck mcp` started that browser, run "
                    "browserdeck (`browserdeck serve` or the tray app) so agents share one "
                    "browser, or give this server another profile (--profile); otherwise: "
                    + (exc.hint or "")
                )
            raise
        finally:
            self._busy -= 1
            self._last_call = time.monotonic()
            self._idle_wake.set()

    async def _close_when_idle(self) -> None:
        # A flag, not only cancellation: stopping a browser may run shielded code that
        # absorbs a cancel, and this loop must still end when the backend closes.
        while not self._closing:
            idle = self.idle_seconds
            if idle <= 0:  # 0 = never
                self._idle_wake.clear()
                await self._idle_wake.wait()
                continue
            remaining = self._last_call + idle - time.monotonic()
            if remaining > 0 or self._busy:
                self._idle_wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._idle_wake.wait(), max(remaining, 0.05))
                continue
            await self._stop_managed_browsers()
            self.idle_closed.set()
            if self._closing:
                break
            # Sleep until the next call: nothing runs to be idle about.
            self._idle_wake.clear()
            await self._idle_wake.wait()

    async def _stop_managed_browsers(self) -> None:
        api = self._api
        if api is None:
            return
        caller = Caller(client=CLIENT_NAME)
        try:
            listed = await api.profiles(caller)
        except BrowserdeckError as exc:
            log.warning("MCP: could not list profiles to close idle browsers: %s", exc)
            return
        for profile in listed.get("profiles", []):
            if profile.get("driver") != "managed" or not profile.get("running"):
                continue
            name = profile.get("profile")
            try:
                await api.stop(caller, name)
                self.idle_closures += 1
                log.info("MCP: closed the idle browser of profile %s", name)
            except BrowserdeckError as exc:
                log.warning("MCP: could not close idle profile %s: %s", name, exc)

    async def close(self) -> None:
        self._closing = True
        self._idle_wake.set()
        await aio.cancel_and_wait(self._idle_task)
        self._idle_task = None
        if self._api is not None:
            await self._api.close()
            self._api = None
        if self.service is not None:
            service, self.service = self.service, None
            await service.stop()


async def service_answers(url: str, wait: float = 1.0) -> bool:
    """Whether a browserdeck service answers ``GET /health`` at ``url``."""
    try:
        async with httpx.AsyncClient(timeout=wait, trust_env=False) as client:
            resp = await client.get(f"{url}/health")
        return resp.status_code == 200 and bool(resp.json().get("ok"))
    except (httpx.HTTPError, ValueError):
        return False


class AutoBackend(_Delegating):
    """The running service when there is one, else an in-process one (``browserdeck mcp``)."""

    def __init__(self, url: str | None = None, *, idle_seconds: float | None = None) -> None:
        self._explicit_url = url
        self._idle_seconds = idle_seconds
        self.current: ApiBackend | InProcessBackend | None = None
        self._lock = asyncio.Lock()

    def describe(self) -> str:
        return self.current.describe() if self.current else "not connected yet"

    async def _pick(self) -> ApiBackend | InProcessBackend:
        async with self._lock:
            if self.current is not None:
                return self.current
            url = (self._explicit_url or discover_url()).rstrip("/")
            if self._explicit_url or await service_answers(url):
                token = secrets.get_token("api", create=False) or ""
                self.current = ApiBackend.for_url(url, token)
            else:
                self.current = InProcessBackend(idle_seconds=self._idle_seconds)
            return self.current

    async def _run(self, use: Callable[[Backend], Awaitable[T]]) -> T:
        backend = await self._pick()
        try:
            return await use(backend)
        except Unavailable as exc:
            if exc.code == "service_gone" and not self._explicit_url:
                # The service went away: look again on the next call (in-process, or
                # a service started anew).
                async with self._lock:
                    if self.current is backend:
                        self.current = None
                await backend.close()
            raise

    async def close(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            await current.close()


_config_cache: dict[str, tuple[int, config.Config]] = {}


def load_config() -> config.Config:
    """The settings as saved; read only (a broken file is the service's to report).

    Re-read only when the file changed: tools consult settings on every call.
    """
    import json

    path = paths.config_file()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return config.default_config()
    cached = _config_cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        loaded = config.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, BrowserdeckError):
        loaded = config.default_config()
    _config_cache[str(path)] = (stamp, loaded)
    return loaded
