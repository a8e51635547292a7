"""Item 8 of issue 15: pairing and "Open logs" never fail silently, and the relay token
is masked everywhere it shows and never printed."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit
from tests.gui.conftest import running_tray, wait_for


async def test_pairing_masks_the_token_and_explains_failures(
    qapp: Any, saved_config: Any, monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    # Where the real thing cannot run here: no Chrome to hand the link to, no file manager.
    # Faked at the process boundary only (the functions that start those programs).
    monkeypatch.setattr("browserdeck.cli_relay.open_in_chrome", lambda url: False)
    monkeypatch.setattr("browserdeck.gui.pairing.open_path", lambda path: False)
    async with running_tray(qapp) as app:
        token = app.service.relay_token
        assert token
        dialog = app.show_pairing()
        shown = [edit.text() for edit in dialog.findChildren(QLineEdit)]
        assert all(token not in text for text in shown), "the token shows in clear"
        link_field = dialog.findChild(QLineEdit, "pairing-link")
        assert "••••" in link_field.text(), "the link masks the token like the token field"
        dialog.open_link()
        assert dialog.message.isVisible() and "Copy next to the pairing link" in (
            dialog.message.text()
        )
        dialog.copy(dialog.link)
        assert QGuiApplication.clipboard().text() == dialog.link  # Copy gives the real link
        dialog.open_folder()
        assert str(dialog.folder) in dialog.message.text()
        dialog.close()

        app.open_logs()
        await wait_for(
            lambda: any(t == "Could not open the logs folder" for _, _, t, _ in app.notices),
            what="the logs notice",
        )
        _, level, _, message = app.notices[-1]
        assert level == "warning" and "logs are in" in message
    out, err = capfd.readouterr()
    assert token not in out and token not in err, "the relay token was printed"
