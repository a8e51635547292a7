"""Where agents may go, in the settings dialog and the panel: allowedOrigins and
blockedOrigins, global and per profile."""

from __future__ import annotations

import json
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from tests.gui.conftest import in_qt, running_tray, wait_for

from browserdeck.gui.settings import SettingsDialog
from browserdeck.reconfig import Applied
from browserdeck.util import paths


async def _noop_apply(candidate: Any, deleted: list[str], restart: bool) -> Applied:
    return Applied()


def test_the_origin_lists_are_edited_as_text(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    dialog.show()
    allowed = dialog.fields["allowedOrigins"]
    assert isinstance(allowed.widget, QLineEdit)
    allowed.widget.setText("https://example.com, *.corp.test  localhost:*")
    assert dialog.working.allowed_origins == ["https://example.com", "*.corp.test", "localhost:*"]
    assert dialog.save_button.isEnabled(), dialog.problem.text()
    allowed.widget.setText("https://example.com/path")
    assert allowed.error.isVisible() and "without a path" in allowed.error.text()
    assert not dialog.save_button.isEnabled()
    allowed.widget.setText("")
    assert dialog.working.allowed_origins == [] and dialog.save_button.isEnabled()
    # A profile's own list; left empty it is the global one.
    dialog.tabs.setCurrentIndex(1)
    dialog.select_profile("agent")
    own = dialog.profile_fields["blockedOrigins"]
    assert isinstance(own.widget, QLineEdit) and "global" in own.widget.placeholderText()
    own.widget.setText("ads.test")
    assert dialog.working.profiles["agent"].blocked_origins == ["ads.test"]
    own.widget.setText("")
    assert dialog.working.profiles["agent"].blocked_origins is None


async def test_saved_rules_show_in_the_panel_and_restart_no_browser(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    async with running_tray(qapp) as app:
        service = app.service
        agent = service.contexts["agent"]
        await agent.start()
        old_pid = agent.impl.chrome.pid
        panel = app.show_panel()
        assert "Sites agents may visit" not in panel.detail_label.text()
        dialog = app.show_settings()
        dialog.fields["blockedOrigins"].widget.setText("ads.test")
        dialog.select_profile("agent")
        dialog.profile_fields["allowedOrigins"].widget.setText("example.com")
        await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
        await wait_for(
            lambda: not shiboken6.isValid(dialog) or not dialog.isVisible(), what="the dialog to close"
        )
        on_disk = json.loads(paths.config_file().read_text(encoding="utf-8"))
        assert on_disk["blockedOrigins"] == ["ads.test"]
        assert on_disk["profiles"]["agent"]["allowedOrigins"] == ["example.com"]
        assert agent.impl.chrome is not None and agent.impl.chrome.pid == old_pid, "restarted for a rule"
        await wait_for(
            lambda: "Sites agents may visit: only example.com; never ads.test"
            in panel.detail_label.text(),
            what="the panel to show the profile's rules",
        )
