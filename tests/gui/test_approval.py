"""The tray asks: the approval window's buttons clicked for real (Qt offscreen), a real
service and Chromium behind it, agents calling over the API.

The window shows the agent, the action in words, the amount, a picture of the page with
the element outlined; Deny leaves the order unplaced, Allow once places it; "Allow on this
site for this agent" stops the asking for that agent and not for another; two agents
asking at once queue in one window; the activity list says "waiting for your approval"
and then who decided what; the tray menu's per-profile choice turns asking off.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from tests.approval.site import Site, serve
from tests.gui.conftest import in_qt, running_tray, wait_for
from tests.support.asyncsite import ref_in

from browserdeck import config
from browserdeck.gui.approval import ApprovalWindow


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as served:
        yield served


@pytest.fixture
def risky_config(saved_config: config.Config) -> config.Config:
    saved_config.profiles["agent"].approval = "risky"
    config.save(saved_config)
    return saved_config


def _agent(service: Any, session: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=service.url,
        trust_env=False,
        timeout=90,
        headers={
            "Authorization": f"Bearer {service.api_token}",
            "X-Browserdeck-Client": f"agent {session}",
            "X-Browserdeck-Session": session,
        },
    )


@contextlib.asynccontextmanager
async def _two_agents(qapp: Any) -> AsyncIterator[tuple[Any, httpx.AsyncClient, httpx.AsyncClient]]:
    """The tray app, and agents "a1" and "b2" calling its service."""
    async with (
        running_tray(qapp) as app,
        _agent(app.service, "a1") as first,
        _agent(app.service, "b2") as second,
    ):
        yield app, first, second


async def _open(client: httpx.AsyncClient, url: str) -> tuple[str, str]:
    target = (await client.post("/tabs/open", json={"url": url})).json()["targetId"]
    snap = (await client.get("/snapshot", params={"targetId": target})).json()["snapshot"]
    return str(target), str(snap)


def _window(app: Any) -> ApprovalWindow | None:
    window = app.approvals.asker.window
    return window if window is not None and window.isVisible() else None


async def _press(app: Any, button: str) -> None:
    window = await wait_for(lambda: _window(app), what="the approval window")
    widget = getattr(window, button)
    await in_qt(lambda: QTest.mouseClick(widget, Qt.MouseButton.LeftButton))


async def test_the_window_shows_the_action_and_its_buttons_decide(
    qapp: Any, risky_config: config.Config, site: Site
) -> None:
    async with running_tray(qapp) as app, _agent(app.service, "a1") as agent:
        target, snap = await _open(agent, site.page("/shop.html"))
        pay = {"kind": "click", "ref": ref_in(snap, 'button "Pay $49.00"'), "targetId": target}

        asking = asyncio.ensure_future(agent.post("/act", json=pay))
        window = await wait_for(lambda: _window(app), what="the approval window")
        assert window.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        assert window.windowFlags() & Qt.WindowType.WindowDoesNotAcceptFocus
        assert window.agent.text().startswith("agent a1")
        assert window.action.text() == 'click button "Pay $49.00" on 127.0.0.1'
        assert "$49.00" in window.details.text()
        assert 'its name says "pay"' in window.why.text()
        assert "Denied in" in window.countdown.text()
        assert window.picture.isVisible() and not window.picture.pixmap().isNull()
        # The activity list says it waits.
        await wait_for(
            lambda: any(a.result == "waiting for your approval" for a in app.model.activity),
            what="the waiting row",
        )
        await _press(app, "deny")
        refused = await asyncio.wait_for(asking, 30)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "denied_by_user"
        assert site.done == []  # the order is not placed
        await wait_for(
            lambda: any(
                a.result.startswith("denied (you, in the tray") for a in app.model.activity
            ),
            what="the decision row",
        )
        await wait_for(lambda: _window(app) is None, what="the window to go")

        asking = asyncio.ensure_future(agent.post("/act", json=pay))
        await _press(app, "allow_once")
        placed = await asyncio.wait_for(asking, 30)
        assert placed.status_code == 200, placed.text
        assert site.done == ["order"]
        act = next(a for a in reversed(app.model.activity) if a.action == "click")
        assert act.target.endswith("button “Pay $49.00”") or "Pay $49.00" in act.target


async def test_allow_on_this_site_is_for_this_agent_only(
    qapp: Any, risky_config: config.Config, site: Site
) -> None:
    async with _two_agents(qapp) as (app, first, second):
        target, snap = await _open(first, site.page("/table.html"))
        delete = 'button "Delete"'
        body = {"kind": "click", "ref": ref_in(snap, delete), "targetId": target}
        asking = asyncio.ensure_future(first.post("/act", json=body))
        await _press(app, "allow_site")
        assert (await asyncio.wait_for(asking, 30)).status_code == 200
        await wait_for(lambda: "delete 1" in site.done, what="row 1 deleted")

        # The same agent on the same site: not asked again.
        shown = len([a for a in app.model.activity if a.action == "approval"])
        snap = (await first.get("/snapshot", params={"targetId": target})).json()["snapshot"]
        again = await first.post("/act", json={**body, "ref": ref_in(snap, delete)})
        assert again.status_code == 200, again.text
        assert "allowed: you allowed this agent on 127.0.0.1 earlier" in again.json()["note"]
        assert len([a for a in app.model.activity if a.action == "approval"]) == shown
        await wait_for(lambda: "delete 2" in site.done, what="row 2 deleted")

        # Another agent on the same site is asked.
        other, snap = await _open(second, site.page("/table.html"))
        asking = asyncio.ensure_future(
            second.post(
                "/act", json={"kind": "click", "ref": ref_in(snap, delete), "targetId": other}
            )
        )
        window = await wait_for(lambda: _window(app), what="the question to the other agent")
        assert window.agent.text().startswith("agent b2")
        await _press(app, "deny")
        assert (await asyncio.wait_for(asking, 30)).status_code == 403


async def test_two_agents_asking_at_once_queue_in_one_window(
    qapp: Any, risky_config: config.Config, site: Site
) -> None:
    async with _two_agents(qapp) as (app, first, second):
        t1, s1 = await _open(first, site.page("/shop.html"))
        t2, s2 = await _open(second, site.page("/shop.html"))
        pay = 'button "Pay $49.00"'
        one = asyncio.ensure_future(
            first.post("/act", json={"kind": "click", "ref": ref_in(s1, pay), "targetId": t1})
        )
        window = await wait_for(lambda: _window(app), what="the first question")
        two = asyncio.ensure_future(
            second.post("/act", json={"kind": "click", "ref": ref_in(s2, pay), "targetId": t2})
        )
        await wait_for(lambda: window.queued.isVisible(), what="the second one queued")
        assert "1 more waiting" in window.queued.text() and "agent b2" in window.queued.text()
        assert window.agent.text().startswith("agent a1")  # not replaced: queued behind
        await _press(app, "deny")
        assert (await asyncio.wait_for(one, 30)).status_code == 403
        await wait_for(lambda: window.agent.text().startswith("agent b2"), what="the next question")
        assert not window.queued.isVisible()
        await _press(app, "allow_once")
        assert (await asyncio.wait_for(two, 30)).status_code == 200
        assert site.done == ["order"]


async def test_the_tray_menu_turns_asking_off_for_a_profile(
    qapp: Any, risky_config: config.Config, site: Site
) -> None:
    async with running_tray(qapp) as app, _agent(app.service, "a1") as agent:
        app.tray.rebuild()
        section = app.tray.profile_menus["agent"].approval
        assert section.choices["risky"].isChecked()
        assert "(risky)" in section.heading.text()
        await in_qt(section.choices["off"].trigger)
        await wait_for(
            lambda: app.service.config.profiles["agent"].approval == "off", what="the setting saved"
        )
        assert config.read().profiles["agent"].approval == "off"
        target, snap = await _open(agent, site.page("/shop.html"))
        done = await agent.post(
            "/act",
            json={"kind": "click", "ref": ref_in(snap, 'button "Pay $49.00"'), "targetId": target},
        )
        assert done.status_code == 200 and site.done == ["order"]
        assert app.approvals.asker.window is None  # nobody was asked
