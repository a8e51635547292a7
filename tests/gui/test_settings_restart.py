"""Settings that need a browser restart say so before saving, and the user chooses: restart
now (the tabs close) or at the next start (the browser and its tabs stay as they are)."""

from __future__ import annotations

import json
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from tests.gui.conftest import in_qt, running_tray, wait_for
from tests.support.net import free_port

from browserdeck.util import paths


def _closed(widget: Any) -> bool:
    return not shiboken6.isValid(widget) or not widget.isVisible()


def _button(box: QMessageBox, text: str) -> Any:
    return next(b for b in box.buttons() if b.text().replace("&", "") == text)


async def _change_port_and_save(app: Any, qtbot: Any) -> tuple[Any, QMessageBox, int]:
    dialog = app.show_settings()
    dialog.select_profile("agent")
    port = free_port()
    dialog.profile_fields["cdpPort"].widget.setValue(port)
    await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
    box = await wait_for(lambda: dialog.restart_box, what="the question before saving")
    return dialog, box, port


async def test_a_port_change_asks_first_and_at_next_start_keeps_the_tabs(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    async with running_tray(qapp) as app:
        service, agent = app.service, app.service.contexts["agent"]
        await agent.start()
        old_pid, old_port = agent.impl.chrome.pid, agent.profile.cdp_port
        await app.model.deck.open_tab(app.model.caller(), "agent", "about:blank#one")
        await app.model.deck.open_tab(app.model.caller(), "agent", "about:blank#two")
        tabs = len(await agent.peek_tabs() or [])

        # Cancel: nothing saved, nothing restarted, the dialog still open to edit.
        dialog, box, port = await _change_port_and_save(app, qtbot)
        text = box.text() + "\n" + box.informativeText()
        assert "only when it starts again" in text, text
        assert f"agent: its {tabs} open tabs would close (CDP port changed)" in text, text
        await in_qt(lambda: qtbot.mouseClick(_button(box, "Cancel"), Qt.MouseButton.LeftButton))
        await wait_for(lambda: dialog.save_button.isEnabled(), what="Save enabled again")
        assert dialog.isVisible()
        on_disk = json.loads(paths.config_file().read_text(encoding="utf-8"))
        assert on_disk["profiles"]["agent"]["cdpPort"] == old_port

        # At next start: saved, but the browser runs on as it is, tabs and all.
        await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
        box = await wait_for(lambda: dialog.restart_box, what="the question again")
        later = _button(box, "At next start")
        await in_qt(lambda: qtbot.mouseClick(later, Qt.MouseButton.LeftButton))
        await wait_for(lambda: _closed(dialog), what="the dialog to close after saving")
        on_disk = json.loads(paths.config_file().read_text(encoding="utf-8"))
        assert on_disk["profiles"]["agent"]["cdpPort"] == port
        assert agent.impl.chrome is not None and agent.impl.chrome.pid == old_pid
        assert agent.profile.cdp_port == old_port, "the running browser keeps its endpoint"
        assert len(await agent.peek_tabs() or []) == tabs
        said = [n for n in app.notices if n[2] == "Settings saved"][-1][3]
        assert "“agent” keeps running as before; the new settings apply at the next start" in said

        # Its next start takes the new port.
        await agent.stop()
        await agent.start()
        assert agent.profile.cdp_port == port and agent.cdp_url.endswith(f":{port}")
        assert service.config.profiles["agent"].cdp_port == port


async def test_restart_now_restarts_and_says_so(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    async with running_tray(qapp) as app:
        agent = app.service.contexts["agent"]
        await agent.start()
        old_pid = agent.impl.chrome.pid
        dialog, box, port = await _change_port_and_save(app, qtbot)
        now = _button(box, "Restart now")
        await in_qt(lambda: qtbot.mouseClick(now, Qt.MouseButton.LeftButton))
        await wait_for(lambda: _closed(dialog), what="the dialog to close after saving")
        assert agent.impl.chrome is not None and agent.impl.chrome.pid != old_pid
        assert agent.profile.cdp_port == port
        said = [n for n in app.notices if n[2] == "Settings saved"][-1][3]
        assert "“agent” restarted with the new settings" in said, said


async def test_nothing_to_restart_asks_nothing(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    """A stopped browser, or a change a running one takes at once, is saved straight away."""
    async with running_tray(qapp) as app:
        dialog = app.show_settings()
        dialog.select_profile("agent")
        dialog.profile_fields["cdpPort"].widget.setValue(free_port())  # agent is stopped
        await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
        await wait_for(lambda: _closed(dialog), what="the dialog to close after saving")
        assert dialog.restart_box is None if shiboken6.isValid(dialog) else True
        said = [n for n in app.notices if n[2] == "Settings saved"][-1][3]
        assert said == "Saved."
