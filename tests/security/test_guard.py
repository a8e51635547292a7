"""Issue 10 item 8: one Host/Origin/token guard for the API, /mcp and the relay.

Strict Host parsing, two Origin headers refused, tokens compared as bytes (a non-ASCII
token is a 401, never a 500), and the relay never copies a raw Host into the
webSocketDebuggerUrl it hands out. Real sockets with hand-made requests (httpx would
normalise the very headers under test).
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.parse
from collections.abc import AsyncIterator

import pytest

from browserdeck.policy import guard
from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from browserdeck.service import Service
from tests.support.service import running_service

BAD_HOSTS = (
    "[::1]evil.com",
    "[::1]evil.com:80",
    "localhost:80@evil.com",
    "localhost:evil",
    "localhost:",
    "localhost:0",
    "localhost:99999",
    "127.0.0.1.nip.io",
    "evil.example",
    "localhost.evil.example",
    "local host",
    "localhost/x",
    "127.1",
    "0x7f.0.0.1",
    "[::ffff:127.0.0.1]",
    "",
)
GOOD_HOSTS = (
    "localhost",
    "LOCALHOST:8080",
    "127.0.0.1",
    "127.0.0.1:1",
    "127.9.8.7:65535",
    "[::1]",
    "[::1]:18791",
    " localhost:80 ",
)


def test_strict_host_parser() -> None:
    for host in BAD_HOSTS:
        assert not guard.host_is_loopback(host), host
    for host in GOOD_HOSTS:
        assert guard.host_is_loopback(host), host
    parsed = guard.parse_host("[::1]:80")
    assert parsed is not None and parsed.netloc(1) == "[::1]:80"
    parsed = guard.parse_host("LocalHost")
    assert parsed is not None and parsed.netloc(5) == "localhost:5"


def test_tokens_compare_as_bytes() -> None:
    assert guard.tokens_equal("abc", "abc")
    assert not guard.tokens_equal("ábc", "abc")  # str.compare_digest raises TypeError here
    assert not guard.tokens_equal("\udcff", "abc")
    assert not guard.tokens_equal("", "")
    assert not guard.tokens_equal(None, "abc")


def raw_request(port: int, head: str) -> tuple[int, str]:
    """Send hand-made request bytes (latin-1, so non-ASCII header bytes go out as such)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1") if head.isascii() else head.encode("utf-8"))
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    reply = b"".join(chunks).decode("utf-8", "replace")
    status = int(reply.split(" ", 2)[1]) if reply.startswith("HTTP/") else 0
    return status, reply


def request(path: str, host: str, *extra: str) -> str:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", *extra, "Connection: close", "", ""]
    return "\r\n".join(lines)


@pytest.fixture
async def api() -> AsyncIterator[Service]:
    async with running_service() as (service, _client):
        yield service


async def test_api_guard(api: Service) -> None:
    port = api.control_port
    auth = f"Authorization: Bearer {api.api_token}"
    good_host = f"127.0.0.1:{port}"

    async def status(head: str) -> tuple[int, str]:
        return await asyncio.to_thread(raw_request, port, head)

    assert (await status(request("/profiles", good_host, auth)))[0] == 200
    for host in BAD_HOSTS:
        code, reply = await status(request("/profiles", host, auth))
        assert code in (400, 403), (host, reply[:200])
    # Two Host headers: servers disagree on which wins, so neither does.
    code, _ = await status(request("/profiles", good_host, "Host: evil.example", auth))
    assert code in (400, 403)
    # Two Origin headers: the old dict kept the last one (an empty one passed).
    code, reply = await status(
        request("/profiles", good_host, auth, "Origin: https://evil.example", "Origin: ")
    )
    assert code == 403 and "forbidden_origin" in reply, reply[:300]
    # A non-ASCII token is a plain 401, never a 500 with a traceback.
    for token in ("tökén", "\u2603" * 40, api.api_token + "é"):
        code, reply = await status(
            request("/profiles", good_host, f"Authorization: Bearer {token}")
        )
        assert code == 401, reply[:300]
        assert "Traceback" not in reply and "internal" not in reply
    # /mcp sits behind the same guard.
    code, _ = await status(request("/mcp", "[::1]evil.com", auth))
    assert code == 403
    code, _ = await status(request("/mcp", good_host, "Authorization: Bearer é"))
    assert code == 401


@pytest.fixture
async def relay() -> AsyncIterator[RelayServer]:
    server = RelayServer(port=0, token=new_token(), profile="chrome")
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_relay_guard(relay: RelayServer) -> None:
    port = relay.port
    auth = relay.token_headers()["Authorization"]
    good_host = f"127.0.0.1:{port}"

    async def status(head: str) -> tuple[int, str]:
        return await asyncio.to_thread(raw_request, port, head)

    assert (await status(request("/json/version", good_host, f"Authorization: {auth}")))[0] == 200
    for host in BAD_HOSTS:
        code, reply = await status(request("/json/version", host, f"Authorization: {auth}"))
        assert code in (400, 403), (host, reply[:200])
    code, _ = await status(
        request(
            "/json/version",
            good_host,
            f"Authorization: {auth}",
            "Origin: https://evil.example",
            "Origin: chrome-extension://x",
        )
    )
    assert code == 403
    for token in ("tökén", "\u2603" * 40):
        code, reply = await status(
            request("/json/version", good_host, f"Authorization: Bearer {token}")
        )
        assert code == 401, reply[:300]
        code, reply = await status(
            request(f"/json/version?token={urllib.parse.quote(token)}", good_host)
        )
        assert code == 401, reply[:300]

    # webSocketDebuggerUrl is rebuilt from the checked Host, not copied from it.
    for host, expect in (
        (f"LOCALHOST:{port}", f"ws://localhost:{port}/cdp"),
        ("127.0.0.1", f"ws://127.0.0.1:{port}/cdp"),
        (f"[::1]:{port}", f"ws://[::1]:{port}/cdp"),
    ):
        code, reply = await status(request("/json/version", host, f"Authorization: {auth}"))
        assert code == 200, reply[:200]
        body = json.loads(reply.split("\r\n\r\n", 1)[1])
        assert body["webSocketDebuggerUrl"] == expect
