"""A browser service's leases: a remote profile whose cdpUrl is a ``ws://``/``wss://``
endpoint (its driver is ``drivers/browser_service.py``).

A browser service (Browserless, Browserbase, Steel, Selenium Grid's ``se:cdp``) starts a
browser for each WebSocket connection and ends it when that connection closes; it has no
``/json/list`` worth reading (Browserless's is empty). So, unlike the other drivers:

- the one connection is the browser. The engine holds it (Playwright ``connect_over_cdp``)
  and everything else rides on it: tabs are listed, opened, focused and closed with
  ``Target.*`` over a browser-level CDP session on that same connection. A second
  connection would be a second browser.
- the service token lives in the secret store (``secrets``, kind ``remote-<profile>``),
  never in config.json; the URL or header carrying it is built only to connect, and the
  engine knows the connection by a key without it (``BrowserPool.set_endpoint``).
- ``pool``: each agent session (an MCP session, a CLI client named by BROWSERDECK_CLIENT,
  any caller sending ``X-Browserdeck-Session``) gets its own browser — a *lease* — released
  when the session ends (``POST /sessions/release``), when it idles ``poolIdleSeconds``,
  or on stop. Without ``pool`` every caller shares one lease.
- start/stop mean connect/release: releasing closes our WebSocket, which is how a service
  ends the browser it started for us; nothing is ever killed.
- a dropped connection (service restarted, its session timeout) is re-established by the
  next call; since the service's browser died with the connection, that call is told its
  tabs are gone rather than silently acting in a fresh browser.
- the service's concurrency limit is read before a new browser is asked for (Browserless
  ``/pressure``), so a full service answers "all 5 browsers busy, 2 waiting" at once
  instead of parking the connection in its queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from browserdeck.errors import (
    REMOTE_TOKEN,
    STATUS_OF,
    STOP_OF,
    BrowserdeckError,
    Hint,
    InvalidInput,
    Unavailable,
)
from browserdeck.secrets import tokens
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

    from browserdeck.config import ProfileConfig
    from browserdeck.door.call import Caller
    from browserdeck.drivers.host import ProfileHost
    from browserdeck.engine.connection import Connection
    from browserdeck.tabs import Tab

log = logging.getLogger(__name__)

SESSION_HEADER = "X-Browserdeck-Session"
# Query parameters that carry a service's secret (Browserless token, Browserbase/Steel apiKey).
TOKEN_PARAMS = ("token", "apikey", "api_key", "key")
DEFAULT_IDLE = 300
HEALTH_TTL = 2.0  # the panel polls status every second or two: one /pressure per window
CONNECT_TIMEOUT_MS = 30_000


def secret_kind(profile: str) -> str:
    return f"remote-{profile}"


def split_token(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its token query parameter, the token, and that parameter's name."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    token = param = None
    kept = []
    for key, value in pairs:
        if token is None and key.lower() in TOKEN_PARAMS and value:
            token, param = value, key
        else:
            kept.append((key, value))
    if token is None:
        return url, None, None
    return urlunsplit(parts._replace(query=urlencode(kept))), token, param


def redact(url: str) -> str:
    """A URL fit for logs and status: any token in its query replaced by ``***``."""
    clean, token, param = split_token(url)
    if token is None:
        return url
    parts = urlsplit(clean)
    query = "&".join(q for q in (parts.query, f"{param}=***") if q)
    return urlunsplit(parts._replace(query=query))


@dataclass
class Lease:
    """One browser from the service, held for one agent session (or shared by all)."""

    key: str  # the engine's name for the connection (no secret in it)
    agent: str | None
    label: str
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    conn: Connection | None = None
    cdp: CDPSession | None = None
    # targetId -> targetInfo of its pages, kept by Target.setDiscoverTargets events on
    # ``cdp``: listing tabs (every call resolves its tab) costs no round trip to the service.
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: str | None = None  # why tabs from before are gone (after a reconnect)
    reconnects: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.agent,
            "label": self.label,
            "since": self.created,
            "idleSeconds": round(time.monotonic() - self.last_used, 1),
            "connected": self.conn is not None and not self.conn.lost,
            "tabs": len(self.conn.pages) if self.conn is not None and not self.conn.lost else 0,
            "reconnects": self.reconnects,
        }


class ServiceLeases:
    """Leases of one remote-service profile: connect, tabs over Target.*, release, health."""

    def __init__(self, ctx: ProfileHost) -> None:
        self.ctx = ctx
        self.leases: dict[str | None, Lease] = {}
        self._numbers = itertools.count(1)
        self._lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self._health: tuple[float, dict[str, Any]] | None = None

    # --- identity ------------------------------------------------------------
    @property
    def profile(self) -> ProfileConfig:
        return self.ctx.profile

    @property
    def name(self) -> str:
        return self.ctx.name

    @property
    def pooled(self) -> bool:
        return bool(self.profile.pool)

    @property
    def public_url(self) -> str:
        assert self.profile.cdp_url is not None
        return redact(self.profile.cdp_url)

    def _token(self) -> str | None:
        return tokens.get_token(secret_kind(self.name), create=False)

    def endpoint(self) -> tuple[str, dict[str, str]]:
        """The URL and headers to connect with, the stored token put where the service wants it."""
        url = str(self.profile.cdp_url)
        token = self._token()
        if not token:
            return url, {}
        header = self.profile.token_header
        if header:
            value = f"Bearer {token}" if header.lower() == "authorization" else token
            return url, {header: value}
        parts = urlsplit(url)
        param = self.profile.token_param or "token"
        pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != param]
        pairs.append((param, token))
        return urlunsplit(parts._replace(query=urlencode(pairs))), {}

    def _scrub(self, text: str) -> str:
        token = self._token()
        return text.replace(token, "***") if token else text

    # --- leases --------------------------------------------------------------------
    def _lessee(self, caller: Caller | None) -> tuple[str | None, str]:
        """Whose lease: the caller's agent session on a pooled profile, else the shared one."""
        agent = caller.agent if caller is not None else None
        if not self.pooled or agent is None:
            return None, "shared (every caller without a session)" if self.pooled else "shared"
        return agent.session, agent.label

    def current(self, caller: Caller | None = None) -> Lease | None:
        """The caller's lease if it has one (no connecting)."""
        return self.leases.get(self._lessee(caller)[0])

    async def lease(self, caller: Caller | None = None) -> Lease:
        """The caller's browser, connected (a new one from the service if it had none)."""
        agent, label = self._lessee(caller)
        async with self._lock:
            lease = self.leases.get(agent)
            if lease is None:
                assert self.profile.cdp_url is not None
                base = redact(self.profile.cdp_url)
                lease = Lease(key=f"{base}#lease-{next(self._numbers)}", agent=agent, label=label)
                self.leases[agent] = lease
        lease.last_used = time.monotonic()
        await self._connect(lease)
        self._ensure_reaper()
        return lease

    async def _connect(self, lease: Lease) -> Connection:
        async with lease.lock:
            # The engine may still be starting beside the API (Service.start).
            pool = (await self.ctx.host.engine_ready()).pool
            if lease.conn is not None and not lease.conn.lost:
                return lease.conn
            url, headers = self.endpoint()
            pool.set_endpoint(lease.key, url, headers, tries=1, timeout_ms=CONNECT_TIMEOUT_MS)
            # A new connection is a new browser at the service: look at its limit first,
            # so a full service is an error now, not a connection parked in its queue.
            await self._check_capacity()
            try:
                conn = await pool.connection(lease.key, None)
            except Unavailable as exc:
                raise await self._explain(exc) from None
            if lease.conn is not None:
                lease.reconnects += 1
                lease.note = (
                    "the connection to the browser service dropped and was re-established at "
                    f"{time.strftime('%H:%M:%S')}; the service ended the old browser with it, "
                    "so tabs from before are gone"
                )
                log.info("%s: reconnected lease %s", self.name, lease.key)
            lease.conn, lease.cdp = conn, None
            lease.targets.clear()
            self.ctx.host.events.tabs_changed.send(profile=self.name)
            return conn

    async def release(self, agent: str | None) -> bool:
        """End one session's browser (close our connection: the service ends the browser)."""
        async with self._lock:
            lease = self.leases.pop(agent, None)
        if lease is None:
            return False
        await self._drop(lease)
        return True

    async def release_all(self) -> None:
        async with self._lock:
            leases, self.leases = list(self.leases.values()), {}
        for lease in leases:
            await self._drop(lease)
        await aio.cancel_and_wait(self._reaper)
        self._reaper = None

    async def _drop(self, lease: Lease) -> None:
        engine = self.ctx.host.engine
        if engine is not None:
            with contextlib.suppress(Exception):
                await engine.drop(lease.key)
            with contextlib.suppress(Unavailable):  # the engine stopped first
                engine.pool.forget_endpoint(lease.key)
        lease.conn = lease.cdp = None
        log.info("%s: released %s (%s)", self.name, lease.key, lease.label)
        self.ctx.host.events.tabs_changed.send(profile=self.name)

    def _ensure_reaper(self) -> None:
        if self.pooled and (self._reaper is None or self._reaper.done()):
            self._reaper = aio.create_task(self._reap(), name=f"remote-idle-{self.name}")

    async def _reap(self) -> None:
        while self.leases:
            idle = self.profile.pool_idle_seconds or DEFAULT_IDLE
            await asyncio.sleep(min(idle / 4, 30.0))
            now = time.monotonic()
            for agent, lease in list(self.leases.items()):
                if now - lease.last_used > idle and not lease.lock.locked():
                    log.info("%s: session %s idle for %ds", self.name, lease.label, idle)
                    await self.release(agent)

    # --- CDP over the lease's connection -------------------------------------------
    async def send(self, lease: Lease, method: str, params: dict[str, Any] | None = None) -> Any:
        from playwright.async_api import Error as PlaywrightError

        for attempt in (1, 2):
            conn = await self._connect(lease)
            try:
                if lease.cdp is None:
                    lease.cdp = await self._browser_session(lease, conn)
                return await lease.cdp.send(method, params or {})
            except PlaywrightError as exc:
                lease.cdp = None
                if attempt == 1 and conn.lost:
                    continue  # dropped under us: reconnect once (the lease notes tabs are gone)
                raise Unavailable(
                    f"remote profile {self.name!r}: {method} failed: "
                    f"{self._scrub(str(exc).splitlines()[0])}",
                    hint=Hint(
                        "check the service ({status} shows its health)",
                        status=STATUS_OF.of(profile=self.name),
                    ),
                    code="browser_unreachable",
                ) from None
        raise AssertionError("unreachable")

    async def _browser_session(self, lease: Lease, conn: Connection) -> CDPSession:
        """A browser-level CDP session on the lease's connection, watching its page targets."""
        cdp = await conn.browser.new_browser_cdp_session()
        targets = lease.targets
        targets.clear()

        def changed(event: dict[str, Any]) -> None:
            info = event.get("targetInfo") or {}
            if info.get("type") == "page":
                targets[str(info["targetId"])] = info

        def destroyed(event: dict[str, Any]) -> None:
            targets.pop(str(event.get("targetId")), None)

        cdp.on("Target.targetCreated", changed)
        cdp.on("Target.targetInfoChanged", changed)
        cdp.on("Target.targetDestroyed", destroyed)
        cdp.on("Target.targetCrashed", destroyed)
        await cdp.send("Target.setDiscoverTargets", {"discover": True})
        # Seed from one listing too, so the cache never depends on event timing.
        for info in (await cdp.send("Target.getTargets")).get("targetInfos", []):
            changed({"targetInfo": info})
        return cdp

    async def tabs(self, lease: Lease) -> list[Tab]:
        from browserdeck.tabs import Tab

        if lease.cdp is None or lease.conn is None or lease.conn.lost:
            await self.send(lease, "Target.getTargets")  # (re)connects and starts the watch
        return [
            Tab(str(t["targetId"]), str(t.get("title", "")), str(t.get("url", "")), "page")
            for t in list(lease.targets.values())
        ]

    async def open_tab(self, lease: Lease, url: str) -> str:
        try:
            created = await self.send(lease, "Target.createTarget", {"url": url, "newWindow": True})
        except BrowserdeckError:
            # Some services refuse new windows; a plain tab is the next best thing.
            created = await self.send(lease, "Target.createTarget", {"url": url})
        target_id = str(created["targetId"])
        # targetCreated normally arrives before this reply; listed at once either way.
        lease.targets.setdefault(target_id, {"targetId": target_id, "url": url, "title": ""})
        return target_id

    # --- the service's limit and health -------------------------------------------
    def _http_base(self) -> tuple[str, dict[str, str], dict[str, str]]:
        """The service's HTTP root, the query and the headers that carry the token."""
        url, headers = self.endpoint()
        parts = urlsplit(url)
        scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
        query = {}
        param = self.profile.token_param or "token"
        for key, value in parse_qsl(parts.query):
            if key == param and not self.profile.token_header:
                query[key] = value
        return urlunsplit((scheme, parts.netloc, "", "", "")), query, headers

    async def health(self, *, fresh: bool = False) -> dict[str, Any]:
        """What the service says about itself: Browserless's /pressure, else reachability."""
        now = time.monotonic()
        if not fresh and self._health is not None and now - self._health[0] < HEALTH_TTL:
            return self._health[1]
        base, query, headers = self._http_base()
        out: dict[str, Any]
        import httpx  # here: the service's start does not need it

        try:
            async with httpx.AsyncClient(timeout=1.5, trust_env=False) as http:
                resp = await http.get(f"{base}/pressure", params=query, headers=headers)
        except httpx.HTTPError as exc:
            out = {
                "ok": False,
                "error": f"the service does not answer at {urlsplit(base).netloc} "
                f"({type(exc).__name__}{': ' + str(exc) if str(exc) else ''})",
            }
        else:
            pressure = None
            if resp.status_code == 200:
                with contextlib.suppress(ValueError, AttributeError):
                    pressure = resp.json().get("pressure")
            if isinstance(pressure, dict):
                out = {
                    "ok": True,
                    "service": "browserless",
                    "running": int(pressure.get("running") or 0),
                    "queued": int(pressure.get("queued") or 0),
                    "maxConcurrent": int(pressure.get("maxConcurrent") or 0),
                    "maxQueued": int(pressure.get("maxQueued") or 0),
                    "available": bool(pressure.get("isAvailable", True)),
                }
            elif resp.status_code in (401, 403):
                out = {
                    "ok": False,
                    "error": f"the service refused the token (HTTP {resp.status_code})",
                }
            else:
                # Not Browserless: it answers HTTP, but has no load figures we know of.
                out = {"ok": True, "service": "unknown", "detail": "answers; no load figures"}
        self._health = (now, out)
        return out

    def _busy(self, h: dict[str, Any]) -> Unavailable:
        limit, queued = h["maxConcurrent"], h["queued"]
        return Unavailable(
            f"remote profile {self.name!r}: the browser service is at its limit: all {limit} "
            f"browser{'s' if limit != 1 else ''} busy, {queued} waiting",
            hint=Hint(
                "try again when an agent session ends (sessions end when an MCP client "
                "disconnects or idles; {stop} releases all of this profile's browsers), or "
                "raise the service's limit (Browserless: CONCURRENT)",
                stop=STOP_OF.of(profile=self.name),
            ),
            code="service_busy",
        )

    async def _check_capacity(self) -> None:
        h = await self.health(fresh=True)
        if h.get("service") == "browserless" and h["maxConcurrent"] and (
            h["running"] >= h["maxConcurrent"] or h["queued"] > 0
        ):
            raise self._busy(h)
        if not h.get("ok") and "token" in str(h.get("error", "")):
            raise self._bad_token(str(h["error"]))

    def _bad_token(self, why: str) -> Unavailable:
        return Unavailable(
            f"remote profile {self.name!r}: {why}",
            hint=Hint("store the right token: {token}", token=REMOTE_TOKEN.of(profile=self.name)),
            code="service_auth",
        )

    async def _explain(self, exc: Unavailable) -> Unavailable:
        """A failed connect, said in the service's terms (without the token)."""
        text = self._scrub(exc.message)
        if " 401 " in text or " 403 " in text or "Unauthorized" in text:
            status = "401" if " 401 " in text or "Unauthorized" in text else "403"
            return self._bad_token(f"the service refused the token (HTTP {status})")
        if " 429 " in text or "Too Many Requests" in text or "Timeout" in text:
            h = await self.health(fresh=True)
            if h.get("service") == "browserless" and h.get("maxConcurrent"):
                return self._busy(h)
            if " 429 " in text:
                return Unavailable(
                    f"remote profile {self.name!r}: the browser service has no browser free "
                    "(HTTP 429 Too Many Requests)",
                    hint="try again when another session ends, or raise the service's limit",
                    code="service_busy",
                )
            return Unavailable(
                f"remote profile {self.name!r}: the browser service did not hand out a browser "
                f"within {CONNECT_TIMEOUT_MS // 1000} s",
                hint="the service may be overloaded or queueing; check its dashboard",
                code="service_timeout",
            )
        return Unavailable(
            f"remote profile {self.name!r}: cannot reach the browser service at "
            f"{self.public_url}: {text.split(': ', 1)[-1]}",
            hint="check that the service runs and the URL is right; browserdeck never "
            "launches a browser for a remote profile",
            code="browser_unreachable",
        )

    # --- status --------------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        return {
            "pool": self.pooled,
            "idleSeconds": self.profile.pool_idle_seconds or DEFAULT_IDLE,
            "tokenStored": self._token() is not None,
            "sessions": [lease.to_json() for lease in self.leases.values()],
            "health": await self.health(),
        }

    def connected(self) -> bool:
        return any(lease.conn is not None and not lease.conn.lost for lease in self.leases.values())


def store_token(profile: str, token: str) -> str:
    # Sent as a header (tokenHeader) or in the URL: visible ASCII, as every token is (a
    # non-ASCII one failed as a header only when it was first sent: a 500).
    if not tokens.TOKEN_RE.fullmatch(token):
        raise InvalidInput(
            "invalid token: a token is visible ASCII characters (no spaces or line breaks)",
            hint="paste the service's token or API key as it gave it",
            code="invalid_token",
        )
    return tokens.store_token(secret_kind(profile), token)

