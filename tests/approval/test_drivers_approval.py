"""Every driver: the user's own Chrome through the extension (a background tab shared with
the relay), a remote browser on a CDP URL, and the managed browser, each with the
``approval`` value it gets from the precedence (the profile's, the global, the driver's).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from tests.approval.conftest import tray
from tests.approval.site import Site
from tests.relay.harness import launch_ext_browser
from tests.relay.test_e2e_playwright import direct_eval
from tests.support.asyncsite import ref_in
from tests.support.browsers import RawChromium
from tests.support.service import running_service, service_config


async def test_the_users_chrome_asks_by_default_even_in_a_background_tab(
    chromium_path: str, tmp_path: Path, site: Site
) -> None:
    """The extension driver's default is risky: no setting says so here."""
    async with (
        running_service(service_config()) as (service, client),
        contextlib.AsyncExitStack() as stack,
    ):
        assert (await client.post("/start", params={"profile": "chrome"})).status_code == 200
        relay = service.contexts["chrome"].impl.relay
        assert relay is not None
        ext = await launch_ext_browser(chromium_path, tmp_path / "ext", relay)
        stack.push_async_callback(ext.close)
        await ext.pair()
        await relay.wait_for_extension(15)
        tab_id, target = await ext.open_shared(site.page("/shop.html"))
        await ext.open_shared(site.page("/safe.html"))  # in front: the shop is behind it
        assert await direct_eval(ext, target, "document.visibilityState") == "hidden"
        q = {"profile": "chrome", "targetId": target}
        snap = (await client.get("/snapshot", params=q)).json()["snapshot"]
        pay = {"kind": "click", "ref": ref_in(snap, 'button "Pay $49.00"')}

        refused = await client.post("/act", params=q, json=pay)
        assert refused.status_code == 403, refused.text
        assert "set by the driver's default" in refused.json()["error"]["message"]
        assert site.done == []

        person = tray(service, "deny", "deny")
        assert (await client.post("/act", params=q, json=pay)).status_code == 403
        assert person.questions[-1].profile == "chrome"
        # A script's click in the user's Chrome is held in the page, through the relay.
        script = "() => { document.querySelector('#pay').click(); return 1; }"
        held = await client.post("/act", params=q, json={"kind": "evaluate", "fn": script})
        assert held.status_code == 200 and "it did not happen" in held.json()["note"]
        await asyncio.sleep(0.5)
        assert site.done == []
        active = await ext.sw_eval(f"chrome.tabs.get({tab_id}).then((t) => t.active)")
        assert active is False  # asking brought nothing to the front


async def test_a_remote_browser_follows_the_global_setting(
    chromium: RawChromium, site: Site
) -> None:
    cfg = service_config()
    cfg.profiles["agent"].driver = "remote"
    cfg.profiles["agent"].cdp_port = None
    cfg.profiles["agent"].cdp_url = chromium.cdp_url
    cfg.approval = "risky"  # global: the remote driver's own default is off
    async with running_service(cfg) as (service, client):
        person = tray(service, "deny")
        target = (await client.post("/tabs/open", json={"url": site.page("/shop.html")})).json()[
            "targetId"
        ]
        snap = (await client.get("/snapshot", params={"targetId": target})).json()["snapshot"]
        refused = await client.post(
            "/act",
            json={"kind": "click", "ref": ref_in(snap, 'button "Pay $49.00"'), "targetId": target},
        )
        assert refused.status_code == 403 and person.questions
        assert site.done == []


@pytest.mark.parametrize("own", [None, "off"])
async def test_the_managed_browser_is_off_by_default_and_a_profile_wins(
    site: Site, own: str | None
) -> None:
    cfg = service_config()
    if own is not None:  # the global value says risky; the profile's own says off
        cfg.approval = "risky"
        cfg.profiles["agent"].approval = own
    async with running_service(cfg) as (_service, client):
        target = (await client.post("/tabs/open", json={"url": site.page("/shop.html")})).json()[
            "targetId"
        ]
        snap = (await client.get("/snapshot", params={"targetId": target})).json()["snapshot"]
        done = await client.post(
            "/act",
            json={"kind": "click", "ref": ref_in(snap, 'button "Pay $49.00"'), "targetId": target},
        )
        assert done.status_code == 200, done.text
        assert site.done == ["order"]
