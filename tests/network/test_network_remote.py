"""Routes and origin rules on a remote profile: a browser browserdeck did not launch,
reached by its CDP URL (here a bare Chromium with a DevTools port), through the API."""

from __future__ import annotations

import asyncio

import pytest

from tests.network.site import NetSite
from tests.support.browsers import RawChromium
from tests.support.service import running_service, service_config

pytestmark = pytest.mark.asyncio(loop_scope="module")
AGENT = {"X-Browserdeck-Session": "remote-agent"}


async def test_routes_and_origin_rules_on_a_remote_profile(chromium: RawChromium, site: NetSite) -> None:
    cfg = service_config(blocked_origins=["localhost"])
    cfg.profiles.pop("chrome", None)
    async with running_service(cfg) as (_service, client):
        made = await client.post("/profiles/create", json={"name": "far", "cdpUrl": chromium.cdp_url})
        assert made.status_code == 200, made.text
        on = {"profile": "far"}
        tab = (await client.post("/tabs/open", params=on, json={}, headers=AGENT)).json()
        on["targetId"] = tab["targetId"]
        routed = await client.post(
            "/network/routes", params=on, headers=AGENT, json={"pattern": "**/api/user", "body": '{"name": "Far"}'}
        )
        assert routed.status_code == 200, routed.text
        assert (await client.post("/navigate", params=on, headers=AGENT, json={"url": site.url("/app.html")})).status_code == 200
        for _ in range(100):
            snap = (await client.get("/snapshot", params=on, headers=AGENT)).json()["snapshot"]
            if "User: Far" in snap:
                break
            await asyncio.sleep(0.1)
        assert "User: Far" in snap
        refused = await client.post("/navigate", params=on, headers=AGENT, json={"url": site.other + "/page.html"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "origin_refused"
        site.ws_connections.clear()
        await client.post("/navigate", params=on, headers=AGENT, json={"url": site.origins_page()})
        fn = "() => { openWs(); return document.getElementById('ws').textContent }"
        ran = await client.post("/act", params=on, headers=AGENT, json={"kind": "evaluate", "fn": fn})
        assert ran.json()["result"] == "ws: refused", ran.text
        assert site.ws_connections == []
