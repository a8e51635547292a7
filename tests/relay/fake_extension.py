"""A websockets client posing as the browserdeck extension, for relay unit tests.

Only used where the real extension cannot make a case happen on demand (an extension
that never answers, drops mid-request, reports a service-worker child, sends 3 MB).
It speaks the same frames as extension/background.js (relay/protocol.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from browserdeck.relay.extension_id import EXTENSION_ORIGIN
from browserdeck.relay.protocol import PROTOCOL_VERSION, auth_proof, proof_ok
from browserdeck.relay.server import RelayServer

UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.7777.1 Safari/537.36"
CdpHandler = Callable[["FakeExtension", dict[str, Any], dict[str, Any]], Awaitable[Any]]


async def authenticate(ws: ClientConnection, token: str, port: int, profile: str) -> None:
    """The extension's half of the mutual proof (extension/background.js does the same),
    for the relay of ``profile`` on ``port``."""
    nonce = secrets.token_hex(32)
    auth = {"nonce": nonce, "protocol": PROTOCOL_VERSION, "port": port, "profile": profile}
    await ws.send(json.dumps({"method": "auth", "params": auth}))
    challenge = json.loads(await ws.recv())
    params = challenge.get("params") or {}
    assert challenge.get("method") == "authChallenge", challenge
    assert proof_ok(
        token, "relay", port, profile, nonce, params["nonce"], params.get("proof")
    ), "the relay could not prove it knows the token"
    proof = auth_proof(token, "extension", port, profile, nonce, params["nonce"])
    await ws.send(json.dumps({"method": "authProof", "params": {"proof": proof}}))


@dataclass
class FakeTab:
    tab_id: int
    target_id: str
    url: str
    title: str = "Fake"


@dataclass
class FakeExtension:
    ws: ClientConnection
    tabs: dict[int, FakeTab] = field(default_factory=dict)
    ops: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    runtime_on: set[tuple[int, str]] = field(default_factory=set)
    silent: set[str] = field(default_factory=set)  # cdp methods never answered
    handlers: dict[str, CdpHandler] = field(default_factory=dict)
    received: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def connect(
        cls,
        relay: RelayServer,
        *,
        tabs: list[FakeTab] | None = None,
        origin: str = EXTENSION_ORIGIN,
        token: str | None = None,
        instance: str = "fake-instance",
        hello: bool = True,
    ) -> FakeExtension:
        token = token if token is not None else relay.token_headers()["Authorization"][7:]
        ws = await websockets.connect(
            f"ws://127.0.0.1:{relay.port}/extension?instance={instance}",
            origin=origin,  # type: ignore[arg-type]
            subprotocols=["browserdeck-relay"],  # type: ignore[list-item]
            max_size=None,
        )
        await authenticate(ws, token, relay.port, relay.profile)
        fake = cls(ws, {t.tab_id: t for t in tabs or []})
        fake._reader = asyncio.get_running_loop().create_task(fake._read())
        if hello:
            await fake.send(
                {
                    "method": "hello",
                    "params": {
                        "protocol": PROTOCOL_VERSION,
                        "version": "0.0-fake",
                        "userAgent": UA,
                        # What a real extension sends once it has attached anywhere.
                        "browserContextId": "CTXFAKE",
                        "tabs": [fake.tab_info(t) for t in fake.tabs.values()],
                    },
                }
            )
            await relay.wait_for_extension(5)
        return fake

    @staticmethod
    def tab_info(tab: FakeTab) -> dict[str, Any]:
        return {"tabId": tab.tab_id, "targetId": tab.target_id, "url": tab.url, "title": tab.title}

    async def send(self, header: dict[str, Any], payload: Any = None) -> None:
        text = json.dumps(header)
        if payload is not None:
            text += "\n" + json.dumps(payload)
        await self.ws.send(text)

    async def event(
        self, tab_id: int, method: str, params: dict[str, Any], session_id: str | None = None
    ) -> None:
        header: dict[str, Any] = {"event": method, "tabId": tab_id}
        if session_id:
            header["sessionId"] = session_id
        await self.send(header, params)

    async def share(self, tab: FakeTab) -> None:
        self.tabs[tab.tab_id] = tab
        await self.send({"method": "tabShared", "params": {"tab": self.tab_info(tab)}})

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    def op_names(self) -> list[str]:
        return [name for name, _ in self.ops]

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                assert isinstance(raw, str)
                head, _, body = raw.partition("\n")
                header = json.loads(head)
                params = json.loads(body) if body else header.get("params") or {}
                await self.received.put(header)
                if "id" not in header:
                    if header.get("method") == "ping":
                        await self.send({"method": "pong"})
                    continue
                asyncio.get_running_loop().create_task(self._answer(header, params))
        except websockets.ConnectionClosed:
            pass

    async def _answer(self, header: dict[str, Any], params: dict[str, Any]) -> None:
        msg_id = header["id"]
        method = header["method"]
        try:
            if method == "cdp":
                record = {**header, "params": params}
                self.commands.append(record)
                if header["cdpMethod"] in self.silent:
                    return
                result = await self._cdp(record, params)
            else:
                self.ops.append((method, params))
                result = await self._op(method, params)
        except Exception as exc:
            await self.send({"id": msg_id, "error": {"code": -32000, "message": str(exc)}})
            return
        await self.send({"id": msg_id}, result)

    async def _op(self, method: str, params: dict[str, Any]) -> Any:
        if method == "attach":
            tab = self.tabs[params["tabId"]]
            return {
                "targetInfo": {
                    "targetId": tab.target_id,
                    "type": "page",
                    "url": tab.url,
                    "title": tab.title,
                    "browserContextId": "CTX",
                }
            }
        if method == "detach":
            self.runtime_on = {pair for pair in self.runtime_on if pair[0] != params["tabId"]}
            return {}
        if method == "createTab":
            tab_id = max(self.tabs, default=100) + 1
            tab = FakeTab(tab_id, f"T{tab_id:031d}", params["url"])
            self.tabs[tab_id] = tab
            return {"tab": self.tab_info(tab)}
        if method == "closeTab":
            self.tabs.pop(params["tabId"], None)
            return {}
        return {}

    async def _cdp(self, record: dict[str, Any], params: dict[str, Any]) -> Any:
        method = record["cdpMethod"]
        handler = self.handlers.get(method)
        if handler is not None:
            return await handler(self, record, params)
        tab_id = record["tabId"]
        key = (tab_id, record.get("sessionId") or "")
        if method == "Runtime.enable":
            if key not in self.runtime_on:
                # Like Chrome: report the live contexts once, before the reply.
                self.runtime_on.add(key)
                await self.event(
                    tab_id,
                    "Runtime.executionContextCreated",
                    {
                        "context": {
                            "id": 1,
                            "origin": "http://x",
                            "name": "",
                            "auxData": {"isDefault": True, "frameId": "F"},
                        }
                    },
                    record.get("sessionId"),
                )
            return {}
        if method == "Runtime.evaluate":
            return {"result": {"type": "number", "value": 2}}
        return {}
