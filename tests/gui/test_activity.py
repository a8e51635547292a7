"""Items 3 and 4 of issue 15: an activity log that says what the agent did, pushed live,
and a panel that follows the agent (and selects a tab the user opened)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for

FORM = (
    "data:text/html,<title>Sign-in form</title>"
    "<label for=u>User</label><input id=u><label for=p>Password</label>"
    "<input id=p type=password><button>Sign in</button>"
)


def _rows(panel: Any) -> list[list[str]]:
    out = []
    for i in range(panel.activity.topLevelItemCount()):
        item = panel.activity.topLevelItem(i)
        out.append([item.text(c) for c in range(7)] + ["hidden" if item.isHidden() else ""])
    return out


def _client(app: Any, name: str) -> httpx.AsyncClient:
    service = app.service
    return httpx.AsyncClient(
        base_url=service.url,
        trust_env=False,
        timeout=30,
        headers={"Authorization": f"Bearer {service.api_token}", "X-Browserdeck-Client": name},
    )


def _ref(snapshot: str, line: str) -> str:
    for text in snapshot.splitlines():
        if line in text and "[ref=" in text:
            return text.split("[ref=")[1].split("]")[0]
    raise AssertionError(f"{line!r} not in {snapshot}")


async def test_rows_say_kind_ref_element_tab_and_errors_live(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        # Nothing polls: no model poll, no screenshot timer. Rows must come from events.
        app.model._poll.stop()
        panel.auto_box.setChecked(False)
        panel.timer.stop()
        async with _client(app, "agent-one") as one, _client(app, "agent-two") as two:
            opened = (await one.post("/tabs/open", json={"url": FORM})).json()
            target = opened["targetId"]
            snap = (await one.get("/snapshot", params={"targetId": target})).json()["snapshot"]
            user, password = _ref(snap, 'textbox "User"'), _ref(snap, 'textbox "Password"')
            button = _ref(snap, 'button "Sign in"')
            await app.model.refresh_now()  # (titles for the Tab column; rows need no poll)
            secret = "hunter2-secret"
            on = {"targetId": target}
            await one.post("/act", json={"kind": "type", "ref": user, "text": "alice", **on})
            await one.post("/act", json={"kind": "type", "ref": password, "text": secret, **on})
            await two.post("/act", json={"kind": "click", "ref": button, **on})
            failed = await one.post("/act", json={"kind": "click", "ref": "e999", **on})
            assert failed.status_code >= 400
        await wait_for(lambda: len(_rows(panel)) >= 6, what="activity rows (pushed)")
        rows = _rows(panel)
        click = next(r for r in rows if r[1] == "agent-two")
        assert click[2] == "click" and click[3] == f"{button} · button “Sign in”"
        assert click[4] == "Sign-in form" and click[5] == "OK"
        typed = [r for r in rows if r[2] == "type"]
        assert any(r[3].startswith(f"{password} · textbox “Password”") for r in typed), rows
        # Typed text never reaches the activity data, so nothing to unmask: only its length.
        assert all(secret not in " ".join(r) for r in rows)
        assert all(secret not in a.details() for a in app.model.activity)
        assert any("typed 14 characters" in r[3] for r in typed)
        # A failure says what went wrong and what to do (details pane and tooltip).
        bad = rows[0]
        assert bad[2] == "click" and bad[5].startswith(("not found", "invalid input"))
        assert "e999" in bad[5]
        item = panel.activity.topLevelItem(0)
        panel.activity.setCurrentItem(item)
        assert panel.activity_details.isVisible()
        assert "What to do:" in panel.activity_details.text()
        assert "What to do:" in item.toolTip(5)
        # Filter by client.
        index = panel.client_filter.findData("agent-two")
        panel.client_filter.setCurrentIndex(index)
        visible = [r for r in _rows(panel) if not r[7]]
        assert visible and all(r[1] == "agent-two" for r in visible)


async def test_follow_agent_and_select_opened_tab(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        assert panel.follow_box.isChecked(), "Follow agent is on by default"
        # A tab the user opens from the panel is selected.
        panel.url_edit.setText("data:text/html,<title>Mine</title>")
        panel._open_tab()
        await wait_for(
            lambda: (
                panel.tab_tree.currentItem() is not None
                and panel.tab_tree.currentItem().text(0) == "Mine"
            ),
            what="the opened tab selected",
        )
        mine = panel.selected_tab()
        async with _client(app, "agent-one") as one:
            other = (
                await one.post("/tabs/open", json={"url": "data:text/html,<title>Agent's</title>"})
            ).json()["targetId"]
            await one.get("/snapshot", params={"targetId": other})
            await wait_for(lambda: panel.selected_tab() == other, what="the panel to follow")
            # Off: the panel stays where the user put it.
            panel.follow_box.setChecked(False)
            panel.select_tab("agent", mine)
            await one.get("/snapshot", params={"targetId": other})
            await asyncio.sleep(0.5)
            assert panel.selected_tab() == mine
