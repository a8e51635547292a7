"""Item 6 of issue 15: settings in human words, errors once, read-only looks read-only,
a port another program holds flagged inline, and the panel's profile selected."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from tests.gui.conftest import running_tray, wait_for
from tests.gui.xdisplay import missing_tools, xvfb_with_tray

from browserdeck import config
from browserdeck.gui.settings import SettingsDialog
from browserdeck.reconfig import Applied

JARGON = (
    "?profile=",
    "every browser route",
    "relayPort",
    "409",
    "single-active",
    "docs/",
    ".md",
    "`",  # a literal backtick: Markdown the dialog does not render
    "cdpPort",
    "BROWSERDECK_CLIENT",
    "ws(s)",
)


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
    # Qt adds " — browserdeck" itself: "browserdeck — Settings — browserdeck" was shown.
    assert dialog.windowTitle() == "Settings"
    for text in _texts(dialog):
        for word in JARGON:
            assert word not in text, f"{word!r} in {text!r}"
    # Every setting has a label written for people, not its key split up ("Artifacts max mb"),
    # and a help line in a person's words (the driver's choices explain themselves).
    declared = {**config.SETTING_KEYS, **config.PROFILE_KEYS}
    for key in [*dialog.fields, *dialog.profile_fields]:
        assert declared[key].label, f"no label for {key}"
        assert declared[key].help or key == "driver", f"no help line in a person's words for {key}"
    # A help line never just repeats its checkbox.
    for setting in config.SETTINGS:
        if setting.checkbox:
            assert setting.checkbox.lower() not in setting.help.lower(), setting.key


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


def _shown(saved_config: Any, qtbot: Any) -> SettingsDialog:
    dialog = SettingsDialog(saved_config, _noop_apply, running=False)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_a_busy_port_blocks_save_until_another_is_picked(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    dialog = _shown(saved_config, qtbot)
    assert dialog.save_button.isEnabled()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        dialog.fields["relayPort"].widget.setValue(busy)
        assert dialog.fields["relayPort"].error.text().startswith("⚠")
        # A start on a port another program holds fails: Save waits, and says why.
        assert not dialog.save_button.isEnabled()
        assert "in use by another program" in dialog.problem.text()
        assert dialog.problem.isVisible()
        dialog.fields["relayPort"].widget.setValue(saved_config.relay_port)
    assert not dialog.fields["relayPort"].error.isVisible()
    assert dialog.save_button.isEnabled()
    assert not dialog.problem.isVisible()


def test_a_shared_colour_is_warned_and_saving_stays_possible(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    dialog = _shown(saved_config, qtbot)
    dialog.select_profile("agent")
    other = saved_config.profiles["chrome"].color
    dialog.profile_fields["color"].widget.set_value(other.lower())
    dialog.validate()
    said = dialog.profile_fields["color"].error.text()
    assert said.startswith("⚠") and "“chrome” has this colour too" in said, said
    assert dialog.save_button.isEnabled(), "a warning, not an error"
    dialog.profile_fields["color"].widget.set_value("#123456")
    dialog.validate()
    assert not dialog.profile_fields["color"].error.isVisible()


def test_every_name_problem_at_once_and_the_list_shows_what_is_typed(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    dialog = _shown(saved_config, qtbot)
    dialog.tabs.setCurrentIndex(1)
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    dialog.name_edit.clear()
    qtbot.keyClicks(dialog.name_edit, "my")
    assert dialog.profile_list.currentItem().text() == "my"
    qtbot.keyClicks(dialog.name_edit, " Stuff!")
    said = dialog.name_error.text()
    assert "uppercase" in said and "a space and '!'" in said, said  # both, at once
    # The list says what is typed, marked, not the last name that could be used ("my").
    assert dialog.profile_list.currentItem().text() == "my Stuff! ✕"
    assert not dialog.save_button.isEnabled()


# Run on a real X display (the offscreen platform lays the page out again on show, and
# does not show the fault): prints whether each warned row is as tall as it needs.
_ROWS_FIT = """
import asyncio, json, socket, sys
from browserdeck import config
from browserdeck.gui.qtapp import make_qapp
from browserdeck.gui.qtloop import QtEventLoop
from browserdeck.gui.settings import SettingsDialog
from browserdeck.reconfig import Applied

qapp = make_qapp(["rows-fit"])
cfg = config.default_config()

async def apply(c, d, r):
    return Applied()

async def main():
    dialog = SettingsDialog(cfg, apply, running=False)
    dialog.resize(760, 640)
    dialog.show()
    await asyncio.sleep(0.4)
    dialog.select_profile("agent")  # laid out once, without warnings
    await asyncio.sleep(0.4)
    dialog.tabs.setCurrentIndex(0)  # then behind another tab
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    dialog.profile_fields["cdpPort"].widget.setValue(holder.getsockname()[1])
    dialog.profile_fields["color"].widget.set_value(cfg.profiles["chrome"].color.lower())
    dialog.validate()
    dialog.select_profile("agent")
    await asyncio.sleep(1.0)
    out = {}

    def measure(when):
        for key in ("color", "cdpPort"):
            error = dialog.profile_fields[key].error
            box = error.parentWidget()
            out[f"{when} {key}"] = {
                "visible": error.isVisible(),
                "height": box.height(),
                "needed": box.layout().totalHeightForWidth(box.width()),
                "errorBottom": error.geometry().bottom(),
                "lines": error.height() // max(1, error.fontMetrics().lineSpacing()),
                "text": error.text(),
            }

    measure("warned")
    # The colour's three-line warning becomes a one-line error: the row shrinks with it.
    dialog.profile_fields["color"].widget.set_value("#12345")
    dialog.validate()
    await asyncio.sleep(1.0)
    measure("then invalid")
    print(json.dumps(out))
    dialog.close()

loop = QtEventLoop(qapp)
asyncio.set_event_loop(loop)
with loop:
    loop.run_until_complete(main())
"""


@pytest.mark.skipif(bool(missing_tools()), reason="needs Xvfb (make system-deps)")
def test_a_warning_never_overlaps_the_help_above_it(bd_home: Any) -> None:
    """Warnings shown while the Profiles page is behind another tab, then the page shown
    again: each row is as tall as its wrapped lines need (it kept the height laid out
    before, and the warning overlapped the help text and was cut off)."""
    with xvfb_with_tray(tray=False) as x:
        done = subprocess.run(
            [sys.executable, "-c", _ROWS_FIT],
            env={**os.environ, **x.env()},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    for key, row in rows.items():
        assert row["visible"], key
        assert row["height"] >= row["needed"], f"{key}: squeezed {row}"
        assert row["errorBottom"] < row["height"], f"{key}: its warning is cut off {row}"
    # And no room kept for lines that went (a one-line error three lines tall).
    assert rows["then invalid color"]["lines"] == 1, rows["then invalid color"]
