"""The settings dialog's Secrets page (issue 36): the user adds, edits and removes secrets.

Real Qt (offscreen), the real vault on disk: a secret typed into the page is kept at once
(not with Save), listed by name, never shown again (its value field stays empty, its
placeholder says it is kept), edited without retyping it, and removed after a
question. A bad origin is said on the page and nothing is kept. The tray's question
box (gui/ask.py) answers what the user clicks.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox
from tests.gui.conftest import wait_for

from browserdeck.gui.settings import SettingsDialog
from browserdeck.secrets import vault

SITE = "https://bank.example"


async def _noop_apply(candidate: Any, deleted: list[str]) -> None:
    return None


def test_secrets_are_added_edited_and_removed(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    v = vault.shared()
    dialog = SettingsDialog(saved_config, _noop_apply)
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.secrets_page
    dialog.tabs.setCurrentWidget(page)
    assert page.names.count() == 0

    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(page.name_edit, "bank")
    page.origins_edit.setPlainText("ftp://bank.example")
    qtbot.keyClicks(page.value_edit, "typed-in-the-dialog")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert "not an http(s) origin" in page.message.text() and not v.entries()

    page.origins_edit.setPlainText(f"{SITE}\nhttps://*.bank.example")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert [e.name for e in v.entries()] == ["bank"]
    assert v.use("secret", "bank", SITE) == "typed-in-the-dialog"
    assert page.names.count() == 1 and page.names.currentItem().text() == "bank"
    # Never shown again: the field is empty, and says the value is kept.
    assert page.value_edit.text() == "" and "kept" in page.value_edit.placeholderText()
    assert page.name_edit.isReadOnly()

    # An edit of the origins keeps the value; a seed is added.
    page.origins_edit.setPlainText(SITE)
    qtbot.keyClicks(page.seed_edit, "JBSWY3DPEHPK3PXP")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    info = v.entries()[0]
    assert info.origins == (SITE,) and info.totp
    assert v.use("secret", "bank", SITE) == "typed-in-the-dialog"
    assert "typed-in-the-dialog" not in page.message.text()

    box = page.ask_remove()
    assert box is not None
    box.done(QMessageBox.StandardButton.Yes)
    assert not v.entries() and page.names.count() == 0
    dialog.close()


async def test_the_trays_question_box_answers_what_the_user_clicks(qapp: QApplication) -> None:
    from browserdeck.gui.ask import ask_user

    for button, expected in ((QMessageBox.StandardButton.Yes, True),
                             (QMessageBox.StandardButton.No, False)):
        asking = asyncio.ensure_future(ask_user("Load the logins?"))
        await wait_for(lambda: _box() is not None, what="the question box")
        box = _box()
        assert box is not None and "Load the logins?" in box.text()
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.No)
        box.button(button).click()
        assert await asyncio.wait_for(asking, 5) is expected


def _box() -> QMessageBox | None:
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, QMessageBox) and widget.objectName() == "askUser" and widget.isVisible():
            return widget
    return None
