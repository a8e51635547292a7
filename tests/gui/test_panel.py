"""The status panel against a real service: profiles, tabs, activity, no-tray mode."""

from __future__ import annotations

from typing import Any

import httpx
from PySide6.QtCore import Qt
from tests.gui.conftest import in_qt, running_tray, wait_for

from browserdeck.gui.activity_pane import ACTION, CLIENT, PROFILE, RESULT, TAB


def _agent(app: Any, name: str) -> httpx.AsyncClient:
    """An HTTP client of the tray's API that says it is the agent ``name``."""
    return httpx.AsyncClient(
        base_url=app.service.url,
        trust_env=False,
        headers={
            "Authorization": f"Bearer {app.service.api_token}",
            "X-Browserdeck-Client": name,
        },
    )


async def test_panel_without_tray_is_the_main_window(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp, tray=False) as app:
        panel = app.panel
        assert panel is not None and panel.isVisible(), "no tray: the panel opens at start"
        assert app.tray is None
        assert panel.banner.isVisible()
        assert "no system tray" in panel.banner.text.text()
        names = [
            panel.profile_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(panel.profile_list.count())
        ]
        assert names == ["agent", "chrome"]
        assert panel.selected_profile == "agent"
        # Closing the window is Quit when there is no tray (one shutdown path).
        panel.close()
        await wait_for(lambda: app.quit_requested.is_set(), what="quit after closing the window")


async def test_panel_tabs_and_activity(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        assert panel.isVisible()
        assert not panel.banner.isVisible(), "with a tray there is nothing to explain"
        assert panel.toggle_button.text() == "Start browser"
        await in_qt(lambda: qtbot.mouseClick(panel.toggle_button, Qt.MouseButton.LeftButton))
        await wait_for(
            lambda: (
                panel.toggle_button.text() == "Stop browser"
                and app.model.statuses["agent"].running
            ),
            what="the panel to show agent running",
        )

        panel.url_edit.setText("data:text/html,<title>Panel tab</title><button>Go</button>")
        await in_qt(lambda: qtbot.keyClick(panel.url_edit, Qt.Key.Key_Return))
        await wait_for(
            lambda: any(
                panel.tab_tree.topLevelItem(i).text(0) == "Panel tab"
                for i in range(panel.tab_tree.topLevelItemCount())
            ),
            what="the new tab in the panel",
        )

        # An agent's API call shows in the activity list: who, what, where, result.
        async with _agent(app, "test-agent") as client:
            resp = await client.get("/tabs", params={"profile": "agent"})
            assert resp.status_code == 200
            missing = await client.delete("/tabs/NOPE", params={"profile": "agent"})
            assert missing.status_code == 404
        await wait_for(lambda: panel.activity.topLevelItemCount() >= 2, what="activity rows")
        newest, older = panel.activity.topLevelItem(0), panel.activity.topLevelItem(1)
        assert [older.text(c) for c in (CLIENT, PROFILE, ACTION, RESULT)] == [
            "test-agent",
            "agent",
            "list tabs",
            "OK",
        ]
        assert [newest.text(c) for c in (ACTION, TAB)] == ["close tab", "NOPE"]
        assert newest.text(RESULT).startswith("not found: no tab 'NOPE'")
        assert panel.activity_stack.currentWidget() is panel.activity

        # Close the tab from its row's Close button.
        item = next(
            panel.tab_tree.topLevelItem(i)
            for i in range(panel.tab_tree.topLevelItemCount())
            if panel.tab_tree.topLevelItem(i).text(0) == "Panel tab"
        )
        target = item.data(0, Qt.ItemDataRole.UserRole)
        button = panel.tab_tree.itemWidget(item, 3).findChild(
            type(panel.refresh_button), f"close-{target}"
        )
        await in_qt(lambda: qtbot.mouseClick(button, Qt.MouseButton.LeftButton))
        await wait_for(
            lambda: all(t.target_id != target for t in app.model.tabs.get("agent", [])),
            what="the tab to close",
        )

        # Hidden with a tray (not destroyed), the app keeps running.
        panel.close()
        assert not panel.isVisible()
        assert not app.quit_requested.is_set()


PAGE = (
    "data:text/html,<title>Sign in</title><h1>Acme</h1>"
    "<input aria-label='Email'><input aria-label='Password' type=password>"
    "<button>Sign in</button><a href='#'>Forgot password?</a>"
)


async def test_labelled_screenshot_names_the_hovered_element(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)  # this test takes its screenshots itself
        ctx = app.service.contexts["agent"]
        tab = await ctx.open_tab(PAGE)
        await wait_for(
            lambda: (
                panel.selected_tab() is not None
                and any(t.target_id == tab.target_id for t in app.model.tabs.get("agent", []))
            ),
            what="the tab in the panel",
        )
        for i in range(panel.tab_tree.topLevelItemCount()):
            item = panel.tab_tree.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole) == tab.target_id:
                panel.tab_tree.setCurrentItem(item)
        assert panel.labels_box.isChecked()
        panel.refresh_screenshot()
        await wait_for(
            lambda: (
                (panel.shot.capture is not None and panel.shot.capture.target_id == tab.target_id)
                or "could not" in panel.shot.message
            ),
            what="a labelled screenshot",
        )
        shot = panel.shot.capture
        assert shot is not None, panel.shot.message
        assert shot.target_id == tab.target_id
        assert not shot.image.isNull() and shot.image.width() > 300
        by_name = {label.name: label for label in shot.labels}
        assert "Sign in" in by_name, [lb.describe() for lb in shot.labels]
        button = by_name["Sign in"]
        assert button.role == "button" and button.ref
        assert "label" in panel.shot_info.text()

        # Hover the button's box: the panel names it (ref · role · name).
        panel.shot.resize(800, 500)
        center = panel.shot.view_rect_of(button).center().toPoint()
        await in_qt(lambda: qtbot.mouseMove(panel.shot, center))
        await wait_for(
            lambda: panel.hover_label.text().startswith(button.describe()),
            what="the hovered label's description",
        )
        assert panel.hover_label.text().startswith(button.ref + " · button")

        # Plain mode: no labels.
        panel.labels_box.setChecked(False)  # takes a new screenshot by itself
        await wait_for(
            lambda: panel.shot.capture is not None and not panel.shot.capture.labels,
            what="a plain screenshot",
        )


async def test_size_splitters_and_recent_activity_are_kept_across_restarts(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        panel.resize(1010, 730)
        panel.rows.setSizes([120, 300, 310])
        await wait_for(lambda: panel.size().width() == 1010, what="the new size")
        rows = panel.rows.sizes()
        async with _agent(app, "kept-agent") as client:
            assert (await client.get("/tabs")).status_code == 200
        await wait_for(lambda: panel.activity.topLevelItemCount() >= 1, what="a row")
    # The next start of the app: the same size and splitters, the same rows.
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        assert (panel.size().width(), panel.size().height()) == (1010, 730)
        assert panel.rows.sizes() == rows
        kept = [panel.activity.topLevelItem(i) for i in range(panel.activity.topLevelItemCount())]
        assert any(item.text(CLIENT) == "kept-agent" for item in kept)
        assert panel.activity_stack.currentWidget() is panel.activity
