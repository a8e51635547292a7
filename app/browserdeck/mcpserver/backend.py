"""How MCP tools reach browserdeck: always through the control API, never its internals.

The same HTTP routes serve every transport, only the way to them differs:

- ``ApiBackend`` over a real socket, to the running service (found the way the CLI
  finds it: ``--url``, ``BROWSERDECK_URL``, the instance file, the configured port);
- ``ApiBackend`` over ``httpx.ASGITransport`` into an app in this process (the HTTP
  transport inside the service: no second network hop);
- ``InProcessBackend``: no service runs, so start one here (headless, no API socket)
  and call its app in-process. Its managed browsers start on the first tool call (the
  API starts managed profiles on demand) and are closed after ``mcpIdleMinutes``
  without a call, to start again on the next one.

``AutoBackend`` (stdio) picks between the first and the last at the first call,
and looks again if the service it was using goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from browserdeck import aio, config, paths, secrets
from browserdeck.client import NOT_OURS_HINT, discover_url, unproven_server
from browserdeck.errors import BrowserdeckError, Unavailable

if TYPE_CHECKING:
    from browserdeck.service import Service

log = logging.getLogger(__name__)

CLIENT_NAME = "browserdeck-mcp"
# Tools may wait up to a minute (navigation, wait_for); the API adds its own margin.
TIMEOUT = httpx.Timeout(150.0, connect=3.0)


class Backend(Protocol):
    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any: ...

    def describe(self) -> str: ...

    async def close(self) -> None: ...


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
    """The control API through one httpx client (a socket, or an in-process ASGI app)."""

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

    @classmethod
    def for_app(cls, app: Any, token: str, label: str) -> ApiBackend:
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://127.0.0.1",
            timeout=TIMEOUT,
            headers={"Authorization": f"Bearer {token}", "X-Browserdeck-Client": CLIENT_NAME},
        )
        return cls(client, label)

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

    async def close(self) -> None:
        await self.client.aclose()


class InProcessBackend:
    """A headless service started in this process for as long as the MCP server runs."""

    def __init__(self, *, idle_seconds: float | None = None) -> None:
        self._idle_override = idle_seconds
        self.service: Service | None = None
        self._api: ApiBackend | None = None
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

    async def _ensure(self) -> ApiBackend:
        if self._api is not None:
            return self._api
        async with self._start_lock:
            if self._api is None:
                from browserdeck.api.app import create_app
                from browserdeck.service import Service

                service = Service(force_headless=True, run_relays=False)
                await service.start()
                self.service = service
                self._api = ApiBackend.for_app(
                    create_app(service), service.api_token, self.describe()
                )
                self._idle_task = aio.create_task(self._close_when_idle(), name="mcp-idle-close")
                log.info(
                    "MCP: started an in-process service (idle close after %ss)", self.idle_seconds
                )
        return self._api

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        api = await self._ensure()
        self._busy += 1
        try:
            return await api.request(method, path, params=params, json=json, headers=headers)
        except BrowserdeckError as exc:
            if exc.code == "port_in_use" and "DevTools endpoint" in exc.message:
                # Most likely another `browserdeck mcp` without a service, with its own
                # browser on this profile's port: killing it (the launcher's hint) would
                # pull the page from under that agent.
                raise BrowserdeckError(
                    exc.message,
                    code=exc.code,
                    status=exc.status,
                    hint="if another agent's `browserdeck mcp` started that browser, run "
                    "browserdeck (`browserdeck serve` or the tray app) so agents share one "
                    "browser, or give this server another profile (--profile); otherwise: "
                    + (exc.hint or ""),
                ) from None
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
        try:
            listed = await api.request("GET", "/profiles")
        except BrowserdeckError as exc:
            log.warning("MCP: could not list profiles to close idle browsers: %s", exc)
            return
        for profile in listed.get("profiles", []):
            if profile.get("driver") != "managed" or not profile.get("running"):
                continue
            name = profile.get("profile")
            try:
                await api.request("POST", "/stop", params={"profile": name})
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


class AutoBackend:
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

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        backend = await self._pick()
        try:
            return await backend.request(method, path, params=params, json=json, headers=headers)
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
