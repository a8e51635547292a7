"""``/mcp`` on the wire: what the SDK's server answered, which clients rely on (issue 14).

The service's MCP server layer is ours (mcpserver/protocol.py, http.py); the SDK's
client drives it in the other tests. These send raw HTTP to a real service for what
no client does on purpose: the refusals, their status codes and JSON-RPC errors, the
protocol-version header, idle expiry, keep-alives on a long call, and the stop path.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from browserdeck.mcpserver import http as mcp_http
from browserdeck.mcpserver import modern as mcp_modern
from browserdeck.service import Service
from tests.mcp.harness import call, http_client, mcp_config
from tests.support.service import running_service

BOTH = "application/json, text/event-stream"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
}


@asynccontextmanager
async def mcp_service(home: Path) -> AsyncIterator[tuple[Service, httpx.AsyncClient]]:
    async with running_service(mcp_config(home)) as (service, client):
        client.headers["Accept"] = BOTH
        yield service, client


def events(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


async def open_session(client: httpx.AsyncClient, version: str = "2025-11-25") -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "1"},
        },
    }
    resp = await client.post("/mcp", json=init)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "text/event-stream"
    answer = events(resp.text)[0]["result"]
    assert answer["protocolVersion"] == version
    assert answer["serverInfo"]["name"] == "browserdeck" and answer["instructions"]
    sid = resp.headers["mcp-session-id"]
    resp = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"Mcp-Session-Id": sid},
    )
    assert resp.status_code == 202
    return sid


def rpc(method: str, request_id: int = 7, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


async def test_handshake_refusals_and_errors(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (_, client):
        # An unknown version is answered with the newest the server knows.
        unknown = await client.post(
            "/mcp",
            json=rpc(
                "initialize",
                1,
                protocolVersion="2099-01-01",
                capabilities={},
                clientInfo={"name": "x", "version": "0"},
            ),
        )
        assert events(unknown.text)[0]["result"]["protocolVersion"] == "2025-11-25"
        sid = await open_session(client, "2025-06-18")
        session = {"Mcp-Session-Id": sid}

        resp = await client.post("/mcp", json=rpc("ping"), headers={"Mcp-Session-Id": "nope"})
        assert resp.status_code == 404
        assert resp.json()["error"] == {"code": -32600, "message": "Session not found"}

        resp = await client.post("/mcp", json=rpc("ping"))
        assert resp.status_code == 400
        assert resp.json()["error"]["message"] == "Bad Request: Missing session ID"

        resp = await client.post(
            "/mcp", json=rpc("ping"), headers={**session, "Accept": "application/json"}
        )
        assert resp.status_code == 406

        resp = await client.post(
            "/mcp", content=b"{}", headers={**session, "Content-Type": "text/plain"}
        )
        assert resp.status_code == 400 and resp.text == "Invalid Content-Type header"

        resp = await client.post(
            "/mcp", content=b"{bad", headers={**session, "Content-Type": "application/json"}
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32700  # parse error

        resp = await client.post("/mcp", json=rpc("no/such/method"), headers=session)
        assert resp.status_code == 200
        assert events(resp.text)[0] == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32601, "message": "Method not found", "data": "no/such/method"},
        }
        resp = await client.post("/mcp", json=rpc("ping"), headers=session)
        assert events(resp.text)[0] == {"jsonrpc": "2.0", "id": 7, "result": {}}

        resp = await client.put("/mcp", headers=session)
        assert resp.status_code == 405 and resp.headers["allow"] == "GET, POST, DELETE"

        # One GET stream per session.
        async with client.stream("GET", "/mcp", headers=session) as stream:
            assert stream.status_code == 200
            second = await client.get("/mcp", headers=session)
            assert second.status_code == 409

        resp = await client.delete("/mcp", headers=session)
        assert resp.status_code == 200
        resp = await client.post("/mcp", json=rpc("ping"), headers=session)
        assert resp.status_code == 404


async def test_the_protocol_version_header_picks_and_checks_the_era(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (_, client):
        sid = await open_session(client)
        # A version the handshake era does not know sends the request to the modern
        # era's checks, which a handshake-era message fails.
        resp = await client.post(
            "/mcp",
            json=rpc("ping"),
            headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"},
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32602

        listed = rpc("tools/list", 3, _meta=META)
        resp = await client.post("/mcp", json=listed, headers=modern_headers("tools/list"))
        assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
        result = resp.json()["result"]
        assert "browser_navigate" in {t["name"] for t in result["tools"]}
        assert result["resultType"] == "complete"
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "browserdeck"
        assert "mcp-session-id" not in resp.headers

        # The headers must repeat the body.
        resp = await client.post("/mcp", json=listed, headers=modern_headers("ping"))
        assert resp.status_code == 400 and resp.json()["error"]["code"] == -32020
        called = rpc("tools/call", 4, name="browser_tabs", arguments={"action": "list"}, _meta=META)
        resp = await client.post("/mcp", json=called, headers=modern_headers("tools/call", "other"))
        assert resp.status_code == 400 and resp.json()["error"]["code"] == -32020
        resp = await client.post(
            "/mcp", json=called, headers={"MCP-Protocol-Version": "2099-01-01"}
        )
        assert resp.status_code == 400 and resp.json()["error"]["code"] == -32020

        future = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        resp = await client.post(
            "/mcp",
            json=rpc("tools/list", 5, _meta=future),
            headers={**modern_headers("tools/list"), "MCP-Protocol-Version": "2099-01-01"},
        )
        assert resp.status_code == 400
        assert resp.json()["error"]["code"] == -32022
        assert resp.json()["error"]["data"] == {"supported": [MODERN], "requested": "2099-01-01"}

        resp = await client.post(
            "/mcp", json=rpc("ping", 6, _meta=META), headers=modern_headers("ping")
        )
        assert resp.status_code == 404 and resp.json()["error"]["code"] == -32601

        resp = await client.get("/mcp", headers=modern_headers("x"))
        assert resp.status_code == 405 and resp.headers["allow"] == "POST"


async def test_an_idle_session_expires(bd_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_http, "SESSION_TTL", 0.3)
    async with mcp_service(bd_home) as (service, client):
        sid = await open_session(client)
        endpoint = mcp_http.endpoint_of(service.api.app)  # type: ignore[union-attr]
        assert endpoint is not None and sid in endpoint.sessions
        # One that only initialized (its one request opened it) expires as well.
        init = rpc(
            "initialize",
            1,
            protocolVersion="2025-11-25",
            capabilities={},
            clientInfo={"name": "x", "version": "0"},
        )
        opened_only = (await client.post("/mcp", json=init)).headers["mcp-session-id"]
        await asyncio.sleep(0.6)
        for key in (sid, opened_only):
            resp = await client.post("/mcp", json=rpc("ping"), headers={"Mcp-Session-Id": key})
            assert resp.status_code == 404
        assert not endpoint.sessions


@pytest.mark.parametrize("era", ["2025-11-25", MODERN])
async def test_a_long_call_keeps_its_stream_alive(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """A call that runs longer than a proxy's idle timeout gets keep-alive comments on its
    event stream (the modern era answers JSON unless the call runs that long)."""
    monkeypatch.setattr(mcp_http, "PING_EVERY", 0.2)
    monkeypatch.setattr(mcp_modern, "PING_EVERY", 0.2)
    async with mcp_service(bd_home) as (_, client):
        wait = {"name": "browser_wait_for", "arguments": {"time": 1}}
        if era == MODERN:
            resp = await client.post(
                "/mcp",
                json=rpc("tools/call", 9, **wait, _meta=META),
                headers=modern_headers("tools/call", "browser_wait_for"),
            )
        else:
            sid = await open_session(client)
            resp = await client.post(
                "/mcp", json=rpc("tools/call", 9, **wait), headers={"Mcp-Session-Id": sid}
            )
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "text/event-stream"
        assert ": ping" in resp.text
        (answer,) = events(resp.text)
        assert answer["id"] == 9 and answer["result"]["isError"] is False


async def test_a_modern_client_cancels_by_closing_the_connection(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, _):
        url = f"{service.url}/mcp"
        async with http_client(url, service.api_token, mode=MODERN) as client:
            await call(client, "browser_navigate", {"url": "data:text/html,<title>w</title>"})
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("browser_wait_for", {"time": 8}), 1.0)
            # The call was cancelled, not left to run: the shared session is free at once.
            await asyncio.wait_for(call(client, "browser_tabs", {"action": "list"}), 5)


async def test_stopping_the_service_closes_open_streams_at_once(bd_home: Path) -> None:
    async with mcp_service(bd_home) as (service, client):
        sid = await open_session(client)
        async with client.stream("GET", "/mcp", headers={"Mcp-Session-Id": sid}) as stream:
            assert stream.status_code == 200
            started = asyncio.get_running_loop().time()
            await asyncio.wait_for(service.stop(), 10)
            # The stream ended with the service, not after uvicorn's graceful timeout.
            await asyncio.wait_for(stream.aread(), 5)
            assert asyncio.get_running_loop().time() - started < 5
