"""Issue 13: the tray app reaches the core through the front door only (``Deck``, in-process).

No HTTP to its own API, no engine state, no MCP internals: a service built without any
control API still gives the panel its statuses, tabs, Start/Stop, a labelled screenshot
with each label's role and name, and who holds which tab.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt
from tests.gui.conftest import running_tray, wait_for
from tests.test_layers import MODULES, _imports

from browserdeck.mcpserver.claims import Owner, TabClaims

# Nothing of these is the GUI's business: HTTP clients (to itself or anyone), the API,
# MCP, the engine and the profiles behind the front door.
NOT_FOR_THE_GUI = (
    "browserdeck.api",
    "browserdeck.mcpserver",
    "browserdeck.engine",
    "browserdeck.profiles",
    "browserdeck.uds",
)


def test_the_gui_imports_only_the_front_door() -> None:
    found = []
    for module in MODULES:
        if not module.startswith("browserdeck.gui"):
            continue
        for target, line, typing_only in _imports(module):
            if not typing_only and target.startswith(NOT_FOR_THE_GUI):
                found.append(f"{module}:{line} imports {target}")
        source = MODULES[module].read_text(encoding="utf-8")
        if "import httpx" in source or "http.client" in source:
            found.append(f"{module} speaks HTTP itself (use client.py out of process)")
    assert not found, "\n".join(found)


PAGE = "data:text/html,<title>Door</title><button>Only button</button>"


async def test_the_panel_works_without_any_control_api(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    from browserdeck.master import build_service

    def no_api() -> Any:
        return build_service(force_headless=True, serve_api=False)

    async with running_tray(qapp, service_factory=no_api) as app:
        assert app.service.api is None, "this test is about a service with no API"
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        app.model.start_profile("agent")
        await wait_for(
            lambda: app.model.statuses.get("agent", {}).get("running"), what="agent running"
        )
        app.model.open_tab("agent", PAGE)
        await wait_for(
            lambda: any(t.title == "Door" for t in app.model.tabs.get("agent", [])),
            what="the tab in the model",
        )
        tab = next(t for t in app.model.tabs["agent"] if t.title == "Door")
        # Who holds the tab (an MCP server's claim) shows in its row.
        owner = Owner("door-test", "claude (stdio)", os.getpid())
        TabClaims().claim("agent", tab.target_id, owner)
        panel.select_tab("agent", tab.target_id)
        app.model.refresh()
        await wait_for(lambda: panel.selected_tab() == tab.target_id, what="the tab selected")
        await wait_for(lambda: _row_of(panel, tab.target_id) is not None, what="the tab's row")
        panel._on_tabs_changed("agent")
        row = _row_of(panel, tab.target_id)
        assert row is not None and row.text(2) == "claude (stdio)"

        panel.refresh_screenshot()
        try:
            await wait_for(
                lambda: (
                    panel.shot.capture is not None
                    and panel.shot.capture.target_id == tab.target_id
                ),
                what="a labelled screenshot",
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the view says {panel.shot.message!r}") from None
        shot = panel.shot.capture
        by_name = {lb.name: lb for lb in shot.labels}
        assert "Only button" in by_name, [lb.describe() for lb in shot.labels]
        assert by_name["Only button"].role == "button"

        app.model.stop_profile("agent")
        await wait_for(
            lambda: not app.model.statuses.get("agent", {}).get("running"), what="agent stopped"
        )


def _row_of(panel: Any, target_id: str) -> Any:
    for i in range(panel.tab_tree.topLevelItemCount()):
        item = panel.tab_tree.topLevelItem(i)
        if item.data(0, Qt.ItemDataRole.UserRole) == target_id:
            return item
    return None
