"""Who may talk to the relay: loopback Host only, no web Origins, the token, the pinned
extension origin and proof of the token, one extension at a time, nothing on unshared tabs."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import httpx
import pytest
import websockets
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.http11 import Request, Response

from browserdeck.relay.extension_id import EXTENSION_ORIGIN
from browserdeck.relay.protocol import PROTOCOL_VERSION, CdpError, auth_proof, proof_ok
from browserdeck.relay.server import RelayServer
from browserdeck.secrets.tokens import new_token
from tests.relay.fake_extension import FakeExtension, FakeTab
from tests.relay.harness import ExtBrowser, Site, launch_ext_browser, wait_until


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
    other_extension = "chrome-extension://" + "b" * 32
    # Wrong origin (another extension, a web page, none): 403.
    assert await status_of(url, origin=other_extension, subprotocols=["browserdeck-relay"]) == 403
    assert (
        await status_of(url, origin="https://evil.example", subprotocols=["browserdeck-relay"])
        == 403
    )
    assert await status_of(url, subprotocols=["browserdeck-relay"]) == 403

    # Right origin (any local process can forge it) but no proof of the token: closed 4401
    # before the relay accepts anything, and no extension counts as connected.
    nonce = "ab" * 32
    port, profile = relay.port, relay.profile
    auth = json.dumps(
        {
            "method": "auth",
            "params": {"nonce": nonce, "protocol": PROTOCOL_VERSION, "port": port,
                       "profile": profile},
        }
    )  # fmt: skip
    async with websockets.connect(
        url, origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
    ) as ws:
        await ws.send(auth)
        challenge = json.loads(await ws.recv())
        assert challenge["method"] == "authChallenge"
        # The relay proved it knows the token, bound to our nonce, its port and its profile.
        token = relay.token_headers()["Authorization"][7:]
        theirs = challenge["params"]["nonce"]
        proof = challenge["params"]["proof"]
        assert proof_ok(token, "relay", port, profile, nonce, theirs, proof)
        assert not proof_ok(new_token(), "relay", port, profile, nonce, theirs, proof)
        assert not proof_ok(token, "relay", port + 1, profile, nonce, theirs, proof)
        assert not proof_ok(token, "relay", port, "work", nonce, theirs, proof)
        wrong = auth_proof(new_token(), "extension", port, profile, nonce, theirs)
        await ws.send(json.dumps({"method": "authProof", "params": {"proof": wrong}}))
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    # Replaying the relay's own proof as the extension's is refused too (labels differ).
    async with websockets.connect(
        url, origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
    ) as ws:
        await ws.send(auth)
        challenge = json.loads(await ws.recv())
        await ws.send(
            json.dumps({"method": "authProof", "params": {"proof": challenge["params"]["proof"]}})
        )
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    # An extension paired for another profile, or that dialled another port (a program on
    # that port passes its socket on), is told to pair again before any proof (4403).
    for other in ({"profile": "work"}, {"port": port + 1}):
        async with websockets.connect(
            url, origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
        ) as ws:
            params = {**json.loads(auth)["params"], **other}
            await ws.send(json.dumps({"method": "auth", "params": params}))
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403, other
            assert "pair again" in closed.value.rcvd.reason
    # Talking before the exchange (an old extension's hello) is a protocol mismatch.
    async with websockets.connect(
        url, origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
    ) as ws:
        await ws.send(json.dumps({"method": "hello", "params": {"protocol": 1, "tabs": []}}))
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4400
    assert not relay.extension_connected

    first = await FakeExtension.connect(
        relay, tabs=[FakeTab(1, "C" * 32, "https://a.test/")], instance="one"
    )
    try:
        # A second browser: 409, and the first keeps the slot.
        assert (
            await status_of(
                f"{url}?instance=two", origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
            )
            == 409
        )
        # Claiming the first one's instance without the token does not replace it.
        async with websockets.connect(
            f"{url}?instance=one", origin=EXTENSION_ORIGIN, subprotocols=["browserdeck-relay"]
        ) as ws:
            await ws.send(auth)
            await ws.recv()
            await ws.send(json.dumps({"method": "authProof", "params": {"proof": "00"}}))
            with pytest.raises(ConnectionClosed):
                await ws.recv()
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
    """What the extension's probe sees while another browser holds the slot (no token)."""
    async with httpx.AsyncClient(base_url=relay.cdp_url) as http:
        busy = await http.get(
            "/extension/check?instance=someone-else", headers={"Origin": EXTENSION_ORIGIN}
        )
        assert busy.status_code == 409
        assert "another browser" in busy.json()["error"]["message"]
        assert (
            await http.get("/extension/check", headers={"Origin": "https://evil.example"})
        ).status_code == 403
    state = await ext.sw_eval("browserdeck.snapshot()")
    same = await ext.sw_eval(
        f"fetch('{relay.cdp_url}/extension/check?instance=' + browserdeck.state.instance)"
        ".then(r => r.status)"
    )
    assert state["connected"] is True and same == 200


async def test_a_squatter_on_the_relay_port_gets_no_token(
    chromium_path: str, tmp_path: Path, relay: RelayServer
) -> None:
    """Issue 10.3: with the relay stopped, a plain websockets server on its port used to
    receive ``bdtoken.<token>``. Now it gets a random nonce and nothing else, even when it
    answers like the relay would (200 on the probe, a challenge with a made-up proof)."""
    token = relay.token_headers()["Authorization"][7:]
    seen: list[str] = []

    def process_request(connection: ServerConnection, request: Request) -> Response | None:
        seen.append(request.path)
        seen.extend(f"{k}: {v}" for k, v in request.headers.raw_items())
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return connection.respond(200, "{}")  # looks like a relay's /extension/check
        return None

    async def handler(ws: ServerConnection) -> None:
        async for message in ws:
            seen.append(str(message))
            header = json.loads(str(message).split("\n", 1)[0])
            if header.get("method") == "auth":
                bogus = {"nonce": "cd" * 32, "proof": "ef" * 32}
                await ws.send(json.dumps({"method": "authChallenge", "params": bogus}))

    squatter = await websockets.serve(
        handler,
        "127.0.0.1",
        0,
        process_request=process_request,
        select_subprotocol=lambda conn, offered: offered[0] if offered else None,
    )
    port = next(iter(squatter.sockets)).getsockname()[1]
    browser = await launch_ext_browser(chromium_path, tmp_path / "squatted-chromium", relay)
    try:
        tab_id, _ = await browser.open_tab("about:blank#private")
        await browser.pair(port=port, token=token)
        await browser.share(tab_id)
        state: dict[str, object] = {}
        for _ in range(300):
            state = await browser.sw_eval("browserdeck.snapshot()")
            if "could not prove" in str(state["detail"]):
                break
            await asyncio.sleep(0.05)
        assert "could not prove" in str(state["detail"]), state
        await asyncio.sleep(2.5)  # a few more probes and attempts
        assert any(s.startswith("/extension") for s in seen), seen
        messages = [json.loads(m.split("\n", 1)[0]) for m in seen if m.startswith("{")]
        assert messages and {m["method"] for m in messages} == {"auth"}, messages
        assert not any(token in s for s in seen), "the squatter received the relay token"
        assert state["connected"] is False
    finally:
        await browser.close()
        squatter.close()
        await squatter.wait_closed()


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


async def test_the_extension_refuses_every_operation_on_unshared_tabs(
    ext: ExtBrowser, relay: RelayServer, site: Site
) -> None:
    """Issue 10.3: whatever holds the extension's connection reaches only shared tabs,
    tabs it opened itself and their popups; asked straight over the extension link (as a
    rogue relay would), the extension refuses the rest."""
    link = relay.relay.link
    assert link is not None
    shared_id, _ = await ext.open_shared(site.url("/page?title=Shared"))
    private_id, private_target = await ext.open_tab(site.url("/page?title=Private"))
    # A window holding only the private tab.
    lonely = await ext.cdp.send(
        "Target.createTarget", {"url": site.url("/page?title=Lonely"), "newWindow": True}
    )
    lonely_tab = await ext.sw_eval(
        "(async () => { for (let i = 0; i < 100; i++) { const t = (await chrome.debugger"
        f".getTargets()).find(x => x.id === {json.dumps(lonely['targetId'])});"
        " if (t && t.tabId !== undefined) return t.tabId;"
        " await new Promise(r => setTimeout(r, 20)); } return null; })()"
    )
    lonely_window = await ext.sw_eval(f"chrome.tabs.get({lonely_tab}).then(t => t.windowId)")

    refusals = {
        "attach": lambda: link.call("attach", {"tabId": private_id}),
        "cdp": lambda: link.cdp(private_id, "Runtime.evaluate", {"expression": "1"}),
        "closeTab": lambda: link.call("closeTab", {"tabId": private_id}),
        "activateTab": lambda: link.call("activateTab", {"tabId": private_id}),
        "getWindow(tab)": lambda: link.call("getWindow", {"tabId": private_id}),
        "getWindow(window)": lambda: link.call("getWindow", {"windowId": lonely_window}),
        "getWindow(none)": lambda: link.call("getWindow", {}),
        "setWindowBounds": lambda: link.call(
            "setWindowBounds", {"windowId": lonely_window, "bounds": {"width": 500}}
        ),
    }
    for name, call in refusals.items():
        with pytest.raises(CdpError) as refused:
            await call()
        assert "not shared" in refused.value.message or "no tab shared" in refused.value.message, (
            name,
            refused.value.message,
        )
    # The private tab is still open, untouched, and no debugger went near it.
    targets = {t["targetId"]: t for t in await ext.browser_targets()}
    assert private_target in targets and not targets[private_target]["attached"]
    # The shared tab's window is reachable.
    window = await link.call("getWindow", {"tabId": shared_id})
    assert isinstance(window.get("windowId"), int)

    # A tab the agent opens through the relay, and a popup of a shared tab, are shared
    # automatically and carry the badge; the private tab does not.
    created = await relay.relay.create_tab(site.url("/opener?title=Agent"))
    popup_of = await ext.sw_eval("chrome.tabs.query({}).then(ts => ts.map(t => t.id))")
    # createTab answers as soon as Chrome made the tab, which may still show its initial
    # about:blank (no button to click yet): wait until Chrome says the page has loaded.
    await ext.sw_eval(
        "(async () => { for (let i = 0; i < 400; i++) {"
        f" const t = await chrome.tabs.get({created.tab_id});"
        " if (t.status === 'complete' && t.url.includes('/opener')) return true;"
        " await new Promise(r => setTimeout(r, 25)); } return false; })()"
    )
    await relay.relay.tab_call(
        created,
        "Runtime.evaluate",
        {"expression": "document.getElementById('wo').click()", "userGesture": True},
    )
    try:
        await wait_until(lambda: relay.status()["tabs"] == 3, what="the popup to be shared")
    except AssertionError as exc:
        # Say what each side had.
        seen = await ext.sw_eval(
            "(async () => JSON.stringify({shared: [...browserdeck.state.shared.keys()],"
            " tabs: (await chrome.tabs.query({})).map(t => [t.id, t.url, t.openerTabId])}))()"
        )
        relay_tabs = [(t.tab_id, t.url, t.exposable) for t in relay.relay.tabs.values()]
        raise AssertionError(f"{exc}; relay: {relay_tabs}; extension: {seen}") from None
    popup = next(
        t for t in relay.relay.shared_tabs() if t.tab_id not in (shared_id, created.tab_id)
    )
    assert popup.tab_id not in popup_of and popup.opener_tab_id == created.tab_id

    async def badge(tab_id: int) -> str:
        return str(await ext.sw_eval(f"chrome.action.getBadgeText({{tabId: {tab_id}}})"))

    for tab_id in (shared_id, created.tab_id, popup.tab_id):
        for _ in range(50):
            if await badge(tab_id) == "ON":
                break
            await asyncio.sleep(0.05)
        assert await badge(tab_id) == "ON", tab_id
    assert await badge(private_id) != "ON"
