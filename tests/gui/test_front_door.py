"""Issue 13: the tray app reaches the core through the front door only (``Deck``, in-process).

No HTTP to its own API, no engine state, no MCP internals: a service built without any
control API still gives the panel its statuses, tabs, Start/Stop, a labelled screenshot
with each label's role and name, and who holds which tab. Nor does it read the
``Service`` behind the door: the composition root (``TrayApp.start_service``) builds and
starts it and ``_shutdown`` stops it; everything the views show (profiles, colours,
drivers, the API's URL, the token to copy, a config problem, events) comes from
``Deck``'s reads.
"""

from __future__ import annotations

import ast
import os
import sys
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
    "browserdeck.util.uds",
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


async def _door_tab(app: Any) -> Any:
    """Start the agent profile from the model and open PAGE in it: its tab, once listed."""
    app.model.start_profile("agent")
    await wait_for(lambda: _running(app, "agent"), what="agent running")
    app.model.open_tab("agent", PAGE)
    await wait_for(
        lambda: any(t.title == "Door" for t in app.model.tabs.get("agent", [])),
        what="the tab in the model",
    )
    return next(t for t in app.model.tabs["agent"] if t.title == "Door")


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
        tab = await _door_tab(app)
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
        await wait_for(lambda: not _running(app, "agent"), what="agent stopped")


def _running(app: Any, name: str) -> bool:
    """The model holds each profile's typed status (results.ProfileStatus)."""
    status = app.model.statuses.get(name)
    return status is not None and status.running


def _row_of(panel: Any, target_id: str) -> Any:
    for i in range(panel.tab_tree.topLevelItemCount()):
        item = panel.tab_tree.topLevelItem(i)
        if item.data(0, Qt.ItemDataRole.UserRole) == target_id:
            return item
    return None


# The composition root's functions in gui/app.py: the only GUI code that holds the
# Service (builds it, starts it, stops it).
ROOT = {("browserdeck.gui.app", "__init__"), ("browserdeck.gui.app", "start_service"),
        ("browserdeck.gui.app", "_shutdown")}


def test_no_gui_code_names_the_service_outside_the_composition_root() -> None:
    found = []
    for module in MODULES:
        if not module.startswith("browserdeck.gui"):
            continue
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if (module, func.name) in ROOT:
                continue
            for node in ast.walk(func):
                # `x.service` (a Deck's too) or a variable named service.
                if (isinstance(node, ast.Attribute) and node.attr == "service") or (
                    isinstance(node, ast.Name) and node.id == "service"
                ):
                    found.append(f"{module}:{node.lineno} in {func.name}()")
    assert not found, "GUI code reads the Service, not the front door:\n" + "\n".join(found)


# The only reads of the Service that GUI code may make: starting and stopping it.
ALLOWED = {
    ("browserdeck.gui.app", "start_service", "start"),
    ("browserdeck.gui.app", "_shutdown", "stop"),
}


async def test_the_tray_and_panel_never_read_the_service(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    """Every attribute read on the running Service is recorded with the module and
    function that made it; the tray, the panel and their dialogs go through Deck."""
    from PySide6.QtGui import QGuiApplication

    from browserdeck.master import build_service

    reads: list[tuple[str, str, str]] = []

    def watched_getattribute(self: Any, name: str) -> Any:
        caller = sys._getframe(1)
        module = str(caller.f_globals.get("__name__", ""))
        if module.startswith("browserdeck.gui"):
            reads.append((module, caller.f_code.co_name, name))
        return object.__getattribute__(self, name)

    def watched() -> Any:
        service = build_service(force_headless=True)
        # The real Service, its attribute reads recorded (a subclass: nothing else differs).
        service.__class__ = type(
            "WatchedService", (type(service),), {"__getattribute__": watched_getattribute}
        )
        return service

    async with running_tray(qapp, service_factory=watched) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        app.tray.rebuild()
        tab = await _door_tab(app)
        panel.select_tab("agent", tab.target_id)
        panel.refresh_screenshot()
        await wait_for(lambda: panel.shot.capture is not None, what="a screenshot")
        app.tray.rebuild()
        panel._update_api_label()
        assert panel.api_label.text() == (
            f"Control API {app.service.url}  ·  MCP {app.service.url}/mcp"
        )
        assert app.tray.header.text() == f"browserdeck · API on 127.0.0.1:{app.service.control_port}"
        assert app.model.color_of("agent") == app.service.config.profiles["agent"].color
        assert app.model.driver_of("agent") == "managed"
        app.copy_token()
        assert QGuiApplication.clipboard().text() == app.service.api_token
        pairing = app.show_pairing()
        assert pairing is not None
        pairing.close()
        settings = app.show_settings()
        await app.apply_settings(app.service.config, [], True)
        settings.close()
        status = app.status()
        assert status["url"] == app.service.url and status["serviceStarted"] is True
        app.stop_all_agents()
        app.model.stop_profile("agent")
        await wait_for(lambda: not _running(app, "agent"), what="agent stopped")
    strays = sorted({read for read in reads if read not in ALLOWED})
    assert not strays, "GUI code read the Service itself: " + ", ".join(
        f"{m}.{f}() read .{a}" for m, f, a in strays
    )
    assert set(reads) == ALLOWED, reads  # the watch saw the root start and stop it
