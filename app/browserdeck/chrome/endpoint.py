"""Chrome's DevTools HTTP endpoints (``/json/version``, ``/json/list``, ``/json/new`` ...).

Loopback ``http://`` URLs are fetched with a few lines of plain asyncio: creating an
``httpx.AsyncClient`` costs ~35 ms (it builds an SSL context), which would dwarf
the ~1 ms the browser takes to answer and blow the API's overhead budget for
``GET /tabs``.  Anything else (``https://``, a remote host, credentials in the
URL, proxies from the environment) goes through httpx, imported only then (~0.1 s of
CPU that a service started for an MCP client would otherwise spend before it answers).
"""


from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from browserdeck.errors import START, Hint, Unavailable
from browserdeck.policy.guard import is_loopback_name

_MAX_BODY = 16 * 2**20  # /json/list of a browser with many tabs stays far below this


def endpoint_url(cdp_url: str, path: str) -> str:
    """``cdp_url`` + ``path``, keeping a path prefix and query (e.g. ``?token=``) of the base."""
    base = urlsplit(cdp_url)
    extra = urlsplit(path)
    query = "&".join(q for q in (extra.query, base.query) if q)
    return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + extra.path, query, ""))


def _unreachable(url: str, why: str, timeout: float) -> Unavailable:
    return Unavailable(
        f"no browser answered at {url}: {why}",
        hint=(
            Hint("start the browser ({start}), or check that the profile's CDP URL or ", start=START)
            + "port (cdpUrl/cdpPort) is right and the browser was started with "
            f"--remote-debugging-port (waited {timeout:g} s)"
        ),
        code="cdp_unreachable",
    )


async def devtools_http(
    cdp_url: str,
    path: str,
    *,
    method: str = "GET",
    timeout: float = 2.0,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, bytes]:
    """One HTTP request to the DevTools server; returns ``(status, body)``.

    Raises ``Unavailable(code="cdp_unreachable")`` when nothing answers in time.
    """
    url = endpoint_url(cdp_url, path)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise Unavailable(
            f"{cdp_url!r} is not an http(s) DevTools URL",
            hint="use http://host:port (or the ws:// URL itself where a WebSocket is expected)",
            code="cdp_unreachable",
        )
    try:
        if parts.scheme == "http" and is_loopback_name(parts.hostname) and not parts.username:
            return await asyncio.wait_for(_raw_request(parts, method, headers), timeout)
        return await _httpx_request(url, method, timeout, headers)
    except TimeoutError:
        raise _unreachable(url, "timed out", timeout) from None
    except (OSError, ValueError) as exc:
        raise _unreachable(url, str(exc) or type(exc).__name__, timeout) from None


async def _raw_request(
    parts: SplitResult, method: str, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes]:
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    reader, writer = await asyncio.open_connection(host.strip("[]"), port)
    try:
        # Chrome refuses a Host header that is neither an IP nor "localhost" (DNS rebinding
        # protection), so send the URL's own host, which is one of those here.
        host_header = f"[{host}]" if ":" in host else host
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        writer.write(
            f"{method} {target} HTTP/1.1\r\nHost: {host_header}:{port}\r\n{extra}"
            "Accept: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status_parts = lines[0].split(" ", 2)
        if len(status_parts) < 2 or not status_parts[0].startswith("HTTP/"):
            raise ValueError(f"not an HTTP response: {lines[0][:80]!r}")
        status = int(status_parts[1])
        got: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                got[name.strip().lower()] = value.strip()
        if "content-length" in got:
            length = int(got["content-length"])
            if length > _MAX_BODY:
                raise ValueError(f"response too large ({length} bytes)")
            body = await reader.readexactly(length)
        elif got.get("transfer-encoding", "").lower() == "chunked":
            body = await _read_chunked(reader)
        else:
            body = await reader.read(_MAX_BODY)
        return status, body
    except asyncio.IncompleteReadError as exc:
        raise ConnectionError("connection closed mid-response") from exc
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(chunks)
        total += size
        if total > _MAX_BODY:
            raise ValueError("response too large")
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def _httpx_request(
    url: str, method: str, timeout: float, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes]:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            resp = await client.request(method, url, headers=dict(headers or {}))
            return resp.status_code, resp.content
    except httpx.HTTPError as exc:  # the caller's unreachable error, as for a socket's
        raise OSError(str(exc) or type(exc).__name__) from exc


async def devtools_json(
    cdp_url: str,
    path: str,
    *,
    method: str = "GET",
    timeout: float = 2.0,
    headers: Mapping[str, str] | None = None,
) -> Any:
    status, body = await devtools_http(cdp_url, path, method=method, timeout=timeout, headers=headers)
    url = endpoint_url(cdp_url, path)
    if status != 200:
        text = body.decode("utf-8", "replace").strip()[:200]
        raise Unavailable(
            f"{method} {url} answered HTTP {status}: {text or '(empty body)'}",
            hint="is this really a Chrome DevTools endpoint (cdpUrl)?",
            code="cdp_bad_response",
        )
    try:
        return json.loads(body)
    except ValueError:
        raise Unavailable(
            f"{method} {url} did not answer JSON: {body[:120]!r}",
            hint="is this really a Chrome DevTools endpoint (cdpUrl)?",
            code="cdp_bad_response",
        ) from None


async def fetch_version(
    cdp_url: str, timeout: float = 2.0, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``GET /json/version``: Browser, Protocol-Version, webSocketDebuggerUrl, ..."""
    data = await devtools_json(cdp_url, "/json/version", timeout=timeout, headers=headers)
    if not isinstance(data, dict):
        raise Unavailable(
            f"{endpoint_url(cdp_url, '/json/version')} answered {type(data).__name__}, not an object",
            hint="is this really a Chrome DevTools endpoint (cdpUrl)?",
            code="cdp_bad_response",
        )
    return data


async def list_targets(
    cdp_url: str, timeout: float = 2.0, headers: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """``GET /json/list``: every target (pages, workers, ...) the browser exposes."""
    data = await devtools_json(cdp_url, "/json/list", timeout=timeout, headers=headers)
    if not isinstance(data, list):
        raise Unavailable(
            f"{endpoint_url(cdp_url, '/json/list')} answered {type(data).__name__}, not a list",
            hint="is this really a Chrome DevTools endpoint (cdpUrl)?",
            code="cdp_bad_response",
        )
    return [t for t in data if isinstance(t, dict)]


def normalize_ws_url(ws_url: str, cdp_url: str) -> str:
    """Make the ``webSocketDebuggerUrl`` a browser reports usable from here.

    A Chrome behind a tunnel or in a container reports its own view
    (``ws://127.0.0.1:9222/...`` or ``ws://0.0.0.0:9222/...``); the caller reached it
    at ``cdp_url``, so that host/port (and scheme and query token) is what works.
    """
    ws = urlsplit(ws_url)
    base = urlsplit(cdp_url)
    netloc = ws.netloc
    scheme = ws.scheme
    ws_host = (ws.hostname or "").strip("[]")
    if (is_loopback_name(ws_host) or ws_host in ("0.0.0.0", "::")) and not is_loopback_name(
        base.hostname
    ):
        netloc = base.netloc
    if base.scheme == "https" and scheme == "ws":
        scheme = "wss"
    query = ws.query or base.query
    return urlunsplit((scheme, netloc, ws.path, query, ""))


async def browser_ws_url(
    cdp_url: str, timeout: float = 2.0, headers: Mapping[str, str] | None = None
) -> str:
    """The browser-level WebSocket URL for ``cdp_url`` (a ``ws(s)://`` URL is returned as is)."""
    scheme = urlsplit(cdp_url).scheme
    if scheme in ("ws", "wss"):
        return cdp_url
    version = await fetch_version(cdp_url, timeout, headers)
    ws_url = version.get("webSocketDebuggerUrl")
    if not isinstance(ws_url, str) or not ws_url:
        raise Unavailable(
            f"{endpoint_url(cdp_url, '/json/version')} has no webSocketDebuggerUrl",
            hint="the endpoint is not a browser-level DevTools server; use the browser's cdpUrl",
            code="cdp_bad_response",
        )
    return normalize_ws_url(ws_url, cdp_url)
