"""The settings dialog: built from the schema, validated as you type, saved and applied live."""

from __future__ import annotations

import json
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox
from tests.gui.conftest import in_qt, running_tray, wait_for
from tests.support.net import free_port

from browserdeck import autostart, config
from browserdeck.gui.settings import SettingsDialog, label_of
from browserdeck.reconfig import Applied
from browserdeck.util import paths


def _closed(dialog: Any) -> bool:
    return not shiboken6.isValid(dialog) or not dialog.isVisible()


async def _noop_apply(candidate: Any, deleted: list[str], restart: bool) -> Applied:
    return Applied()


def test_every_schema_setting_has_an_editor(qapp: Any, saved_config: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    try:
        assert set(dialog.fields) == {s.key for s in config.SETTINGS}
        assert set(dialog.profile_fields) == {s.key for s in config.PROFILE_FIELDS}
        assert isinstance(dialog.fields["controlPort"].widget, QSpinBox)
        assert isinstance(dialog.fields["startAtLogin"].widget, QCheckBox)
        combo = dialog.fields["relayClientMode"].widget
        assert isinstance(combo, QComboBox)
        assert [combo.itemData(i) for i in range(combo.count())] == [
            "single-active",
            "multi-client",
        ]
        assert label_of("controlPort") == "Control API port"
        assert not dialog.isModal()
    finally:
        dialog.deleteLater()


def test_an_unset_choice_says_what_it_stands_for(qapp: Any, saved_config: Any) -> None:
    # approval is unset by default, globally and per profile: the first item stands for
    # unset and names what holds then; the choices follow in a person's words.
    dialog = SettingsDialog(saved_config, _noop_apply)
    try:
        combo = dialog.fields["approval"].widget
        assert isinstance(combo, QComboBox)
        items = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
        assert [data for _, data in items] == ["inherit", "off", "risky", "all"]
        assert items[0][0].startswith("As the driver says") and items[1][0] == "Never"
        assert dialog.fields["approval"].value() is None
        dialog.select_profile("agent")
        own = dialog.profile_fields["approval"].widget
        assert isinstance(own, QComboBox)
        assert own.itemText(0) == "Use the driver's default (off)" and own.itemText(1) == "Never"
        assert dialog.profile_fields["approval"].value() is None
        own.setCurrentIndex(own.findData("risky"))
        assert dialog.working.profiles["agent"].approval == "risky"
    finally:
        dialog.deleteLater()


def test_name_is_validated_as_you_type(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentIndex(1)
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    assert dialog.current_profile == "profile-1"
    assert not dialog.name_edit.isReadOnly()
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, "Work Stuff")
    assert dialog.name_error.isVisible()
    assert "uppercase" in dialog.name_error.text()
    assert not dialog.save_button.isEnabled()
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, "chrome")
    assert "already exists" in dialog.name_error.text()
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, "work")
    assert not dialog.name_error.isVisible()
    assert dialog.save_button.isEnabled(), dialog.problem.text()
    assert "work" in dialog.working.profiles and "profile-1" not in dialog.working.profiles
    # An existing profile's name cannot change.
    dialog.select_profile("agent")
    assert dialog.name_edit.isReadOnly()


def test_port_collision_is_explained_inline(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    dialog.show()
    relay = dialog.fields["relayPort"]
    control = dialog.fields["controlPort"]
    control.widget.setValue(relay.value())
    assert not dialog.save_button.isEnabled()
    assert control.error.isVisible() and relay.error.isVisible()
    assert f"port {relay.value()} is used twice" in control.error.text()
    assert dialog.problem.isVisible()
    control.widget.setValue(saved_config.control_port)
    assert not control.error.isVisible()
    assert dialog.save_button.isEnabled()


def test_bad_colour_and_url_are_explained(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.select_profile("agent")
    color = dialog.profile_fields["color"]
    color.widget.text.setText("orange")
    assert color.error.isVisible() and "#RRGGBB" in color.error.text()
    assert not dialog.save_button.isEnabled()
    color.widget.text.setText("#123abc")
    assert not color.error.isVisible()
    driver = dialog.profile_fields["driver"].widget
    driver.setCurrentIndex(driver.findData("remote"))
    url = dialog.profile_fields["cdpUrl"]
    assert url.widget.isVisibleTo(dialog)
    assert not dialog.profile_fields["userDataDir"].widget.isVisibleTo(dialog)
    assert not dialog.save_button.isEnabled(), "a remote profile needs a URL"
    url.widget.setText("ftp://x")
    assert "http(s)://" in url.error.text()
    url.widget.setText("http://10.0.0.42:9222")
    assert not url.error.isVisible()
    assert dialog.save_button.isEnabled()


async def test_save_applies_live_without_restarting_for_a_colour(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    async with running_tray(qapp) as app:
        service = app.service
        agent = service.contexts["agent"]
        await agent.start()
        old_pid = agent.impl.chrome.pid
        relay_before = service.contexts["chrome"].impl.relay

        dialog = app.show_settings()
        assert dialog is app.show_settings(), "a second Settings… raises the same dialog"
        dialog.select_profile("agent")
        dialog.profile_fields["color"].widget.text.setText("#0066CC")
        dialog.fields["startAtLogin"].widget.setChecked(True)
        # A new managed profile, named as you type.
        await in_qt(lambda: qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton))
        dialog.name_edit.clear()
        await in_qt(lambda: qtbot.keyClicks(dialog.name_edit, "research"))
        # Not the allocated 18800+: other test runs on this machine may use those.
        dialog.profile_fields["cdpPort"].widget.setValue(free_port())
        assert dialog.save_button.isEnabled(), dialog.problem.text()
        await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
        await wait_for(lambda: _closed(dialog), what="the dialog to close after saving")

        on_disk = json.loads(paths.config_file().read_text(encoding="utf-8"))
        assert on_disk["profiles"]["agent"]["color"] == "#0066CC"
        assert on_disk["startAtLogin"] is True
        assert "research" in on_disk["profiles"]
        assert service.config.profiles["agent"].color == "#0066CC"
        assert "research" in service.contexts
        # Only its colour changed: the browser and its tabs stay; the notice says when the
        # window's tint follows.
        assert agent.impl.chrome is not None and agent.impl.chrome.pid == old_pid, "restarted for a colour"
        said = [n for n in app.notices if n[2] == "Settings saved"][-1][3]
        assert "takes its new colour at its next start; its tabs stay open" in said, said
        assert service.contexts["chrome"].impl.relay is relay_before, "the relay was not touched"
        assert autostart.is_enabled(), "start at login followed the setting"
        await wait_for(
            lambda: app.tray.profile_menus.get("research") is not None,
            what="the new profile in the tray menu",
        )

        # Delete it again (after it ran once): gone from the config, the service and disk.
        await service.contexts["research"].start()
        research_dir = paths.profile_dir("research")
        assert research_dir.exists()
        dialog = app.show_settings()
        dialog.select_profile("research")
        box = dialog.ask_delete_profile()
        assert box is not None
        delete = next(b for b in box.buttons() if b.text() == "Delete")
        await in_qt(lambda: qtbot.mouseClick(delete, Qt.MouseButton.LeftButton))
        assert "research" not in dialog.working.profiles
        await in_qt(lambda: qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton))
        await wait_for(lambda: _closed(dialog), what="the dialog to close after deleting")
        assert "research" not in service.config.profiles
        assert "research" not in service.contexts
        assert not research_dir.exists(), "a deleted managed profile's data is removed"
