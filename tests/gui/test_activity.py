"""Items 3 and 4 of issue 15: an activity log that says what the agent did, pushed live,
and a panel that follows the agent (and selects a tab the user opened)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for

from browserdeck.gui.activity_pane import COLUMNS, RESULT

FORM = (
    "data:text/html,<title>Sign-in form</title>"
    "<label for=u>User</label><input id=u><label for=p>Password</label>"
    "<input id=p type=password><button>Sign in</button>"
)


def _rows(panel: Any) -> list[dict[str, Any]]:
    """Each row by column name ("Time", "Client", "Profile", …), and whether it is hidden."""
    out = []
    for i in range(panel.activity.topLevelItemCount()):
        item = panel.activity.topLevelItem(i)
        row: dict[str, Any] = {name: item.text(c) for c, name in enumerate(COLUMNS)}
        row["hidden"] = item.isHidden()
        out.append(row)
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
        # Nothing polls: no model poll, no live view. Rows must come from events.
        app.model._poll.stop()
        panel.auto_box.setChecked(False)
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
        click = next(r for r in rows if r["Client"] == "agent-two")
        assert click["Action"] == "click" and click["Element"] == f"{button} · button “Sign in”"
        assert click["Tab"] == "Sign-in form" and click["Result"] == "OK"
        assert click["Profile"] == "agent"
        typed = [r for r in rows if r["Action"] == "type"]
        assert any(r["Element"].startswith(f"{password} · textbox “Password”") for r in typed)
        # Typed text never reaches the activity data, so nothing to unmask: only its length.
        assert all(secret not in " ".join(map(str, r.values())) for r in rows)
        assert all(secret not in a.details() for a in app.model.activity)
        assert any("typed 14 characters" in r["Element"] for r in typed)
        # A failure says what went wrong and what to do (details pane and tooltip).
        bad = rows[0]
        assert bad["Action"] == "click" and bad["Result"].startswith(("not found", "invalid input"))
        assert "e999" in bad["Result"]
        item = panel.activity.topLevelItem(0)
        panel.activity.setCurrentItem(item)
        assert panel.activity_details.isVisible()
        assert "What to do:" in panel.activity_details.text()
        assert "What to do:" in item.toolTip(RESULT)
        # Filter by client.
        index = panel.client_filter.findData("agent-two")
        panel.client_filter.setCurrentIndex(index)
        visible = [r for r in _rows(panel) if not r["hidden"]]
        assert visible and all(r["Client"] == "agent-two" for r in visible)


async def test_the_tab_column_names_each_tab_as_it_is_now(qapp: Any, saved_config: Any) -> None:
    """A row names its tab by the tab's title now, not at the time of the call."""
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        async with _client(app, "agent-one") as one:
            target = (await one.post("/tabs/open", json={"url": FORM})).json()["targetId"]
            await app.model.refresh_now()
            await one.get("/snapshot", params={"targetId": target})
            await wait_for(
                lambda: any(r["Tab"] == "Sign-in form" for r in _rows(panel)),
                what="a row naming the tab",
            )
            await one.post(
                "/navigate",
                json={"targetId": target, "url": "data:text/html,<title>Renamed</title>"},
            )
            await app.model.refresh_now()
        await wait_for(
            lambda: all(r["Tab"] in ("Renamed", "") for r in _rows(panel)),
            what="every row of that tab to say its title now",
        )


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
