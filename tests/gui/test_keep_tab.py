"""The panel's Keep mark: a tab an agent opened outlives the agent's session when the
user marked it in the tab list's context menu (sessions.py in the core)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from tests.gui.conftest import in_qt, running_tray, wait_for
from tests.support.service import api_client

from browserdeck.gui.tabkeep import KEEP_TEXT


def row_of(panel: Any, title: str) -> Any:
    for i in range(panel.tab_tree.topLevelItemCount()):
        item = panel.tab_tree.topLevelItem(i)
        if item.text(0) == title:
            return item
    return None


async def test_a_tab_kept_in_the_panel_outlives_the_agent_that_opened_it(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        service = app.service
        async with api_client(service) as agent:
            agent.headers.update({"X-Browserdeck-Client": "bot", "X-Browserdeck-Session": "run-7"})
            for title in ("Keep me", "Drop me"):
                r = await agent.post(
                    "/tabs/open", json={"url": f"data:text/html,<title>{title}</title>"}
                )
                assert r.status_code == 200, r.text
        await wait_for(
            lambda: row_of(panel, "Keep me") is not None and row_of(panel, "Drop me") is not None,
            what="the agent's tabs in the panel",
        )
        assert row_of(panel, "Keep me").text(2) == "bot (run-7)"

        # Right-click the row, tick Keep.
        item = row_of(panel, "Keep me")
        kept = item.data(0, Qt.ItemDataRole.UserRole)
        point = panel.tab_tree.visualItemRect(item).center()
        await in_qt(lambda: panel.tab_tree.customContextMenuRequested.emit(point))
        menu = panel.tab_tree.findChild(QMenu, "tabMenu")
        assert menu is not None
        action = next(a for a in menu.actions() if a.objectName() == "keepTab")
        assert action.text() == KEEP_TEXT and action.isCheckable() and not action.isChecked()
        await in_qt(action.trigger)
        await wait_for(
            lambda: (row := row_of(panel, "Keep me")) is not None and row.text(2).endswith("kept"),
            what="the Agent column to say kept",
        )
        assert app.model.deck.kept_tabs("agent") == {kept}

        # The agent's session ends (the user stops it): one tab closes, the kept one stays.
        did = await app.model.deck.end_session(app.model.caller(), "run-7")
        assert did is not None and (did.closed_tabs, did.kept_tabs) == (1, 1), did
        await wait_for(
            lambda: row_of(panel, "Drop me") is None and row_of(panel, "Keep me") is not None,
            what="the unkept tab to close and the kept one to stay",
        )
        assert row_of(panel, "Keep me").text(2) == "kept", "the ended agent is still named"
