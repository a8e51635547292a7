"""The tray menu against a real service: profiles, live state, tabs, actions."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu
from tests.gui.conftest import in_qt, running_tray, wait_for


def _texts(menu: QMenu) -> list[str]:
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def _submenus(menu: QMenu) -> list[QMenu]:
    return [a.menu() for a in menu.actions() if isinstance(a.menu(), QMenu)]


def _tab_titles(tray: Any) -> list[str]:
    pm = tray.profile_menus["agent"]
    return [t.action.text() for t in pm.tab_menus.values() if t.action in pm.menu.actions()]


def _action(menu: QMenu, text: str) -> QAction:
    for action in menu.actions():
        if action.text() == text:
            return action
    raise AssertionError(f"no {text!r} in {_texts(menu)}")


async def test_menu_lists_profiles_and_commands(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as tray_app:
        tray = tray_app.tray
        texts = _texts(tray.menu)
        assert texts[0] == f"browserdeck · API on 127.0.0.1:{tray_app.service.control_port}"
        assert any(t.startswith("agent (default) — ") for t in texts)
        assert any(t.startswith("chrome — ") for t in texts)
        for command in (
            "Open status panel",
            "Settings…",
            "Pair extension…",
            "Copy API token",
            "Copy MCP config",
            "Open logs folder",
            "Quit browserdeck",
        ):
            assert command in texts
        agent = tray.profile_menus["agent"].menu
        assert "Start browser" in _texts(agent)
        assert "New tab…" in _texts(agent)
        # Extension profile: its relay runs, Chrome is not connected yet.
        chrome = tray.profile_menus["chrome"].menu
        assert chrome.title() == "chrome — waiting for Chrome"


async def test_menu_follows_state_live_and_lists_tabs(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as tray_app:
        tray, model = tray_app.tray, tray_app.model
        agent = tray.profile_menus["agent"].menu
        _action(agent, "Start browser").trigger()
        await wait_for(
            lambda: (
                tray.profile_menus["agent"].menu.title().startswith("agent (default) — running")
            ),
            what="the menu to show the profile running",
        )
        assert "Stop browser" in _texts(tray.profile_menus["agent"].menu)
        assert tray_app.model.tray_state() == "running"

        model.open_tab("agent", "data:text/html,<title>Hello tray</title><p>hi")
        await wait_for(lambda: "Hello tray" in _tab_titles(tray), what="the new tab in the menu")
        # Tabs are plain entries (no third-level submenu that opens over the main menu).
        assert _submenus(tray.profile_menus["agent"].menu) == []
        tab = _action(tray.profile_menus["agent"].menu, "Hello tray")
        assert tab.toolTip().startswith("data:text/html")
        tab.trigger()  # brings it to the front
        target = next(t.target_id for t in tray_app.model.tabs["agent"] if t.title == "Hello tray")
        await tray_app.service.contexts["agent"].close_tab(target)
        await wait_for(
            lambda: "Hello tray" not in _tab_titles(tray), what="the closed tab to leave the menu"
        )

        # A stop from elsewhere (the API/CLI) reaches the menu through service events.
        await tray_app.service.contexts["agent"].stop()
        await wait_for(
            lambda: "Start browser" in _texts(tray.profile_menus["agent"].menu),
            what="the menu to show Start browser again",
        )


async def test_menu_glitches_fixed(qapp: Any, saved_config: Any) -> None:
    """Item 10: no dead Ctrl+Q, a coloured header chip with words (not '#FF4500')."""
    from PySide6.QtGui import QColor, QIcon

    async with running_tray(qapp) as tray_app:
        tray = tray_app.tray
        quit_action = _action(tray.menu, "Quit browserdeck")
        assert quit_action.shortcut().isEmpty()
        info = tray.profile_menus["agent"].info
        assert "#" not in info.text() and "browserdeck's own browser" in info.text()
        assert not info.isEnabled()
        pixmap = info.icon().pixmap(16, 16, QIcon.Mode.Disabled)
        center = QColor(pixmap.toImage().pixel(8, 8))
        assert center.red() > 200 and center.green() < 120, "the disabled chip keeps its colour"


async def test_copy_token_and_mcp_config(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as tray_app:
        import json

        from PySide6.QtGui import QGuiApplication

        _action(tray_app.tray.menu, "Copy API token").trigger()
        assert QGuiApplication.clipboard().text() == tray_app.service.api_token
        _action(tray_app.tray.menu, "Copy MCP config").trigger()
        snippet = json.loads(QGuiApplication.clipboard().text())
        entry = snippet["mcpServers"]["browserdeck"]
        # `browserdeck mcp`, through the installed script or `python -m browserdeck`.
        assert entry["args"][-1] == "mcp" or "mcp" in entry["args"]
        assert entry["command"].endswith(("browserdeck", "python", "python3"))


async def test_new_tab_dialog_is_not_modal(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as tray_app:
        dialog = tray_app.tray.ask_new_tab("agent")
        assert not dialog.isModal()
        dialog.setTextValue("data:text/html,<title>From dialog</title>")
        dialog.accept()
        await wait_for(
            lambda: any(t.title == "From dialog" for t in tray_app.model.tabs.get("agent", [])),
            what="the tab opened from the dialog",
        )


async def test_open_menu_stays_open_while_state_changes(qapp: Any, saved_config: Any) -> None:
    """Updates happen in place: an open menu (and submenu) does not close under the user."""
    from PySide6.QtCore import QPoint

    async with running_tray(qapp) as tray_app:
        tray = tray_app.tray
        agent = tray.profile_menus["agent"].menu
        await in_qt(lambda: tray.menu.popup(QPoint(10, 10)))
        await wait_for(tray.menu.isVisible, what="the menu to open")
        await in_qt(lambda: agent.popup(QPoint(300, 40)))
        await wait_for(agent.isVisible, what="the submenu to open")
        before = list(tray.menu.actions())
        await tray_app.service.contexts["agent"].start()
        await wait_for(
            lambda: agent.title().startswith("agent (default) — running"),
            what="the open submenu to show the new state",
        )
        assert tray.menu.isVisible() and agent.isVisible()
        assert tray.menu.actions() == before, "the main menu's entries were kept, not rebuilt"
        assert "Stop browser" in _texts(agent)
        tray.menu.hide()


async def test_a_crash_is_notified_and_marked(qapp: Any, saved_config: Any) -> None:
    import os
    import signal

    async with running_tray(qapp) as tray_app:
        ctx = tray_app.service.contexts["agent"]
        await ctx.start()
        await wait_for(lambda: tray_app.model.tray_state() == "running", what="running mark")
        os.killpg(ctx.impl.chrome.pid, signal.SIGKILL)  # the browser dies under us
        await wait_for(
            lambda: any("crashed" in title for _, _, title, _ in tray_app.notices),
            what="a crash notification",
        )
        level = next(lv for _, lv, title, _ in tray_app.notices if "crashed" in title)
        assert level == "error"
        await wait_for(lambda: tray_app.model.tray_state() == "error", what="the error mark")
        agent = tray_app.tray.profile_menus["agent"].menu
        await wait_for(
            lambda: agent.title() == "agent (default) — crashed", what="the menu to say crashed"
        )
        assert "Start browser" in _texts(agent)


async def test_pair_extension_dialog(qapp: Any, saved_config: Any) -> None:
    from urllib.parse import parse_qs, urlparse

    async with running_tray(qapp) as tray_app:
        _action(tray_app.tray.menu, "Pair extension…").trigger()
        dialog = tray_app.dialogs[-1]
        assert dialog.objectName() == "pairDialog" and dialog.isVisible()
        assert not dialog.isModal()
        link = urlparse(dialog.link)
        assert link.scheme == "chrome-extension" and link.path == "/options.html"
        fragment = parse_qs(link.fragment)
        assert fragment["port"] == [str(saved_config.relay_port)]
        assert fragment["token"] == [tray_app.service.relay_token]
        assert fragment["profile"] == ["chrome"]
        dialog.close()


async def test_quitting_deletes_every_window_and_lets_the_app_go(
    qapp: Any, saved_config: Any
) -> None:
    """Windows left open at Quit are deleted by the shutdown path itself (in the Qt
    thread), and nothing on the QApplication keeps the app alive afterwards."""
    async with running_tray(qapp) as tray_app:
        windows = [
            tray_app.show_panel(),
            tray_app.show_settings(),
            tray_app.show_pairing(),
            tray_app.tray.ask_new_tab("agent"),
        ]
        gone = weakref.ref(tray_app)
    await wait_for(
        _all_deleted([*windows, tray_app]),
        what="the windows open at Quit, and the app, to be deleted",
    )
    del tray_app, windows
    gc.collect()
    assert gone() is None, [type(r).__name__ for r in gc.get_referrers(gone())]


def _all_deleted(objects: list[Any]) -> Callable[[], bool]:
    return lambda: not any(shiboken6.isValid(o) for o in objects)


async def test_pair_extension_is_offered_only_with_a_profile_on_your_chrome(
    qapp: Any, saved_config: Any, bd_home: Any
) -> None:
    from browserdeck import config

    cfg = config.load().config
    cfg.profiles.pop("chrome")
    config.save(cfg)
    async with running_tray(qapp) as tray_app:
        assert "Pair extension…" not in _texts(tray_app.tray.menu)


async def test_another_profiles_trouble_does_not_hide_that_the_default_runs(
    qapp: Any, saved_config: Any
) -> None:
    """The extension profile's relay cannot listen (its port is taken) while the default
    profile runs: the mark stays "running", the trouble is a red dot of its own."""
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", saved_config.relay_port))
        holder.listen()
        async with running_tray(qapp) as tray_app:
            await tray_app.service.contexts["agent"].start()
            await tray_app.model.refresh_now()
            assert tray_app.model.statuses["chrome"].state == "error"
            assert tray_app.model.tray_state() == "running"  # it was a red "!"
            assert tray_app.status()["trayTrouble"] is True
            tooltip = tray_app.tray.icon.toolTip()
            assert "agent: running" in tooltip and "chrome: could not start" in tooltip
