"""Who may talk to the relay: loopback Host only, no web Origins, the token, the pinned
extension origin, one extension at a time (research/relay.md section 5)."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from browserdeck.relay.extension_id import EXTENSION_ORIGIN
from browserdeck.relay.server import RelayServer
from browserdeck.secrets import new_token
from tests.relay.fake_extension import FakeExtension, FakeTab
from tests.relay.harness import ExtBrowser, wait_until


def raw_http(port: int, request: str) -> str:
    """Send a hand-made request (httpx normalises Host, which is the point here)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request.encode())
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


async def status_of(url: str, **kwargs: object) -> int:
    try:
        async with websockets.connect(url, **kwargs):  # type: ignore[arg-type]
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_http_routes_need_token_loopback_host_and_no_web_origin(relay: RelayServer) -> None:
    token = relay.token_headers()
    async with httpx.AsyncClient(base_url=relay.cdp_url) as http:
        assert (await http.get("/")).status_code == 200  # health needs no token
        assert "token" not in (await http.get("/")).text
        for path in ("/json/version", "/json/list", "/extension/status", "/client-slot"):
            assert (await http.get(path)).status_code == 401, path
            assert (
                await http.get(path, headers={"Authorization": "Bearer wrong"})
            ).status_code == 401
            assert (await http.get(path, headers=token)).status_code == 200, path
        assert (
            await http.get(f"/json/version?token={token['Authorization'][7:]}")
        ).status_code == 200
        evil = await http.get("/json/version", headers={**token, "Origin": "https://evil.example"})
        assert evil.status_code == 403
        assert "Access-Control-Allow-Origin" not in evil.headers
        ours = await http.get("/json/version", headers={**token, "Origin": EXTENSION_ORIGIN})
        assert (
            ours.status_code == 200
            and ours.headers["Access-Control-Allow-Origin"] == EXTENSION_ORIGIN
        )
        preflight = await http.options(
            "/json/list",
            headers={"Origin": EXTENSION_ORIGIN, "Access-Control-Request-Method": "GET"},
        )
        assert (
            preflight.status_code == 204
            and preflight.headers["Access-Control-Allow-Origin"] == EXTENSION_ORIGIN
        )
        assert (
            await http.options("/json/list", headers={"Origin": "https://evil.example"})
        ).status_code == 403

    # DNS rebinding: a page on evil.example rebound to 127.0.0.1 sends its own Host.
    bearer = token["Authorization"]
    for host in ("evil.example", f"evil.example:{relay.port}", "127.0.0.1.nip.io"):
        reply = await asyncio.to_thread(
            raw_http,
            relay.port,
            f"GET /json/version HTTP/1.1\r\nHost: {host}\r\nAuthorization: {bearer}\r\n\r\n",
        )
        assert reply.startswith("HTTP/1.1 403"), reply[:80]
    for host in ("localhost", f"127.0.0.1:{relay.port}", f"[::1]:{relay.port}"):
        reply = await asyncio.to_thread(
            raw_http,
            relay.port,
            f"GET /json/version HTTP/1.1\r\nHost: {host}\r\nAuthorization: {bearer}\r\n\r\n",
        )
        assert reply.startswith("HTTP/1.1 200"), reply[:80]


async def test_cdp_websocket_refusals(relay: RelayServer) -> None:
    url = f"ws://127.0.0.1:{relay.port}/cdp"
    token = relay.token_headers()
    assert await status_of(url) == 401
    assert await status_of(url, additional_headers={"Authorization": "Bearer nope"}) == 401
    assert await status_of(url, additional_headers=token, origin="https://evil.example") == 403
    assert await status_of(url.replace("127.0.0.1", "localhost"), additional_headers=token) == 101
    assert await status_of(f"{url}?token={token['Authorization'][7:]}") == 101
    assert await status_of(url, additional_headers=token) == 101
    # A page-level endpoint for a target nobody shared does not exist.
    assert (
        await status_of(f"ws://127.0.0.1:{relay.port}/devtools/page/NOPE", additional_headers=token)
        == 404
    )


async def test_extension_endpoint_refusals(relay: RelayServer) -> None:
    url = f"ws://127.0.0.1:{relay.port}/extension"
    good = f"bdtoken.{relay.token_headers()['Authorization'][7:]}"
    other_extension = "chrome-extension://" + "b" * 32
    # Wrong origin (another extension, a web page, none): 403 even with the token.
    assert (
        await status_of(url, origin=other_extension, subprotocols=["browserdeck-relay", good])
        == 403
    )
    assert (
        await status_of(
            url, origin="https://evil.example", subprotocols=["browserdeck-relay", good]
        )
        == 403
    )
    assert await status_of(url, subprotocols=["browserdeck-relay", good]) == 403
    # Right origin, no or wrong token: 401 (any local process can forge an Origin).
    assert await status_of(url, origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]) == 401
    assert (
        await status_of(
            url,
            origin=EXTENSION_ORIGIN,
            subprotocols=["browserdeck-relay", f"bdtoken.{new_token()}"],
        )
        == 401
    )

    first = await FakeExtension.connect(
        relay, tabs=[FakeTab(1, "C" * 32, "https://a.test/")], instance="one"
    )
    try:
        # A second browser: 409, and the first keeps the slot.
        assert (
            await status_of(
                f"{url}?instance=two",
                origin=EXTENSION_ORIGIN,
                subprotocols=["browserdeck-relay", good],
            )
            == 409
        )
        assert relay.status()["extensionConnected"] and relay.status()["tabs"] == 1
        # The same browser reconnecting (its worker restarted) replaces its old socket.
        again = await FakeExtension.connect(relay, tabs=[], instance="one", hello=False)
        try:
            await wait_until(
                lambda: (
                    relay.relay.link is not None
                    and relay.relay.link.instance == "one"
                    and relay.status()["tabs"] == 0
                ),
                what="the replacement",
            )
        finally:
            await again.close()
    finally:
        await first.close()


async def test_real_second_extension_gets_409_over_http_check(
    ext: ExtBrowser, relay: RelayServer
) -> None:
    """What the extension's failure diagnosis sees while another browser holds the slot."""
    async with httpx.AsyncClient(base_url=relay.cdp_url) as http:
        busy = await http.get(
            "/extension/check?instance=someone-else",
            headers={**relay.token_headers(), "Origin": EXTENSION_ORIGIN},
        )
        assert busy.status_code == 409
        assert "another browser" in busy.json()["error"]["message"]
    state = await ext.sw_eval("browserdeck.snapshot()")
    same = await ext.sw_eval(
        f"fetch('{relay.cdp_url}/extension/check?instance=' + browserdeck.state.instance,"
        f" {{headers: {{Authorization: '{relay.token_headers()['Authorization']}'}}}}).then(r => r.status)"
    )
    assert state["connected"] is True and same == 200


@pytest.mark.parametrize("mode", ["single-active", "multi-client"])
async def test_client_slot_modes(mode: str) -> None:
    relay = RelayServer(port=0, token=new_token(), client_mode=mode)
    await relay.start()
    try:
        url = f"ws://127.0.0.1:{relay.port}/cdp"
        headers = {**relay.token_headers(), "X-Browserdeck-Client": "first"}
        async with websockets.connect(url, additional_headers=headers):
            await wait_until(lambda: len(relay.relay.clients) == 1, what="the first client")
            second = await status_of(url, additional_headers=relay.token_headers())
            assert second == (409 if mode == "single-active" else 101)
            # Our own clients (lazy slot) are never refused at connect.
            assert await status_of(url, additional_headers=relay.auth_headers()) == 101
            slot = relay.slot_info()
            assert slot["mode"] == mode and slot["busy"] is (mode == "single-active")
        await wait_until(lambda: not relay.relay.clients, what="the clients to go")
        assert relay.slot_info()["busy"] is False
        assert await status_of(url, additional_headers=relay.token_headers()) == 101
    finally:
        await relay.stop()


def test_bad_settings_are_refused() -> None:
    from browserdeck import errors

    with pytest.raises(errors.InvalidInput):
        RelayServer(port=0, token="t", client_mode="free-for-all")
    with pytest.raises(errors.InvalidInput):
        RelayServer(port=0, token="")
