"""Item 6 of issue 15: settings in human words, errors once, read-only looks read-only,
a port another program holds flagged inline, and the panel's profile selected."""

from __future__ import annotations

import socket
from typing import Any

from PySide6.QtWidgets import QLabel
from tests.gui.conftest import running_tray, wait_for

from browserdeck.gui.settings import CHECKBOX_TEXT, HELP, SettingsDialog
from browserdeck.reconfig import Applied

JARGON = ("?profile=", "every browser route", "relayPort", "409", "single-active", "docs/", ".md")


async def _noop_apply(candidate: Any, deleted: list[str], restart: bool) -> Applied:
    return Applied()


def _texts(dialog: SettingsDialog) -> list[str]:
    out = [label.text() for label in dialog.findChildren(QLabel)]
    for field in [*dialog.fields.values(), *dialog.profile_fields.values()]:
        widget = field.widget
        out.append(widget.toolTip())
        if hasattr(widget, "count"):
            out += [widget.itemText(i) for i in range(widget.count())]
    return out


def test_words_a_person_knows(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "browserdeck — Settings"
    for text in _texts(dialog):
        for word in JARGON:
            assert word not in text, f"{word!r} in {text!r}"
    # A help line never just repeats its checkbox.
    for key, box in CHECKBOX_TEXT.items():
        help_text = HELP.get(key, "").lower()
        assert help_text and box.lower() not in help_text, key


def test_bad_value_once_readonly_and_port_in_use(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply, running=False)
    qtbot.addWidget(dialog)
    dialog.show()
    # Another program listens on a port: flagged under the field, before any start.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        dialog.fields["controlPort"].widget.setValue(busy)
        error = dialog.fields["controlPort"].error
        assert error.isVisible() and f"port {busy} is in use by another program" in error.text()
    # A bad colour: its error shows once (under the field), not again at the bottom.
    dialog.tabs.setCurrentIndex(1)
    dialog.profile_fields["color"].widget.set_value("#12345")
    dialog.validate()
    message = dialog.profile_fields["color"].error.text()
    assert message
    assert "#12345" not in dialog.problem.text(), dialog.problem.text()
    assert dialog.problem.text() == "Fix the field marked ✕ to save."
    assert not dialog.save_button.isEnabled()
    # An existing profile's name is read-only, and looks it (the read-only style applies).
    assert dialog.name_edit.isReadOnly()
    base = dialog.name_edit.palette().color(dialog.name_edit.backgroundRole())
    assert base == dialog.palette().color(dialog.backgroundRole())


async def test_settings_from_the_panel_land_on_its_profile(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.profile_list.setCurrentRow(1)
        assert panel.selected_profile == "chrome"
        panel.settingsRequested.emit()
        await wait_for(lambda: app.settings_dialog is not None, what="the settings dialog")
        dialog = app.settings_dialog
        assert dialog.tabs.currentIndex() == 1 and dialog.current_profile == "chrome"
        dialog.close()
