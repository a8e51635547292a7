"""Issue 31 item 7: which browser Origins may call ``/mcp``.

The MCP transport's security text (2025-11-25, "Security Warning"): servers MUST validate
the Origin of every connection and answer 403 to an invalid one. The official conformance
suite's DNS-rebinding scenario sends an ``initialize`` (then ``notifications/initialized``)
whose Host and Origin are both ``localhost:<port>`` of the server itself and expects a 2xx;
the same request with ``evil.example`` a 4xx. Our rule: ``/mcp`` takes its own origin
(``http://<loopback name>:<its port>``, naming the Host the request came to: only a page
served from that very port sends it, e.g. an MCP inspector opened there), never a page on
another port or name, and the token is required either way. The rest of the API keeps
refusing every web Origin. Requests are made by hand as the suite makes them (an HTTP
client would normalise the headers under test).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from browserdeck.service import Service
from tests.security.test_guard import raw_request
from tests.support.service import running_service

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "conformance-dns-rebinding-test", "version": "1.0.0"},
        },
    }
)
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def post(path: str, host: str, origin: str | None, body: str, *extra: str) -> str:
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        *([f"Origin: {origin}"] if origin is not None else []),
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-11-25",
        *extra,
        f"Content-Length: {len(body.encode())}",
        "Connection: close",
        "",
        body,
    ]
    return "\r\n".join(lines)


@pytest.fixture
async def api() -> AsyncIterator[Service]:
    async with running_service() as (service, _client):
        yield service


async def test_mcp_takes_its_own_loopback_origin_with_the_token_and_nothing_else(
    api: Service,
) -> None:
    port = api.control_port
    auth = f"Authorization: Bearer {api.api_token}"

    async def send(head: str) -> tuple[int, str]:
        return await asyncio.to_thread(raw_request, port, head)

    # The conformance suite's accepted case, for each loopback name: initialize, then the
    # initialized notification on the session it opened.
    for name in ("localhost", "127.0.0.1", "[::1]"):
        own = f"{name}:{port}"
        code, reply = await send(post("/mcp", own, f"http://{own}", INITIALIZE, auth))
        assert code == 200, reply[:400]
        assert '"serverInfo"' in reply
        session = next(
            line.split(":", 1)[1].strip()
            for line in reply.split("\r\n\r\n", 1)[0].split("\r\n")
            if line.lower().startswith("mcp-session-id:")
        )
        code, reply = await send(
            post("/mcp", own, f"http://{own}", INITIALIZED, auth, f"Mcp-Session-Id: {session}")
        )
        assert 200 <= code < 300, reply[:400]

    own = f"localhost:{port}"
    # The token is still required from the API's own origin.
    code, reply = await send(post("/mcp", own, f"http://{own}", INITIALIZE))
    assert code == 401, reply[:300]
    # Everything else a page could be: another local port, a rebound name, the other
    # loopback name, https, null, a path or userinfo smuggled in, a port missing.
    refused = {
        "another local port": (own, f"http://localhost:{port + 1 if port < 65535 else 1}"),
        "another port, Host to match": (f"localhost:{port + 1}", f"http://localhost:{port + 1}"),
        "rebound name": (f"evil.example:{port}", f"http://evil.example:{port}"),
        "the conformance attacker": ("evil.example.com", "http://evil.example.com"),
        "another loopback name": (own, f"http://127.0.0.1:{port}"),
        "https": (own, f"https://{own}"),
        "null": (own, "null"),
        "with a path": (own, f"http://{own}/x"),
        "with userinfo": (own, f"http://a@{own}"),
        "no port": ("localhost", "http://localhost"),
    }
    for what, (host, origin) in refused.items():
        code, reply = await send(post("/mcp", host, origin, INITIALIZE, auth))
        assert code == 403, (what, reply[:300])
    # The rest of the API has no browser clients: its own origin is refused there.
    code, reply = await send(
        f"GET /profiles HTTP/1.1\r\nHost: {own}\r\nOrigin: http://{own}\r\n{auth}\r\n"
        "Connection: close\r\n\r\n"
    )
    assert code == 403 and "forbidden_origin" in reply, reply[:300]
