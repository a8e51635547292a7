"""Pairing and "Open logs" never say "Opened" when nothing opened, never fail silently,
and the relay token is masked everywhere it shows and never printed.

Real programs: the system's Chromium (as root it needs --no-sandbox, and without a
display it cannot start at all) and the system's xdg-open (with no desktop it finds
"no method available"); under Xvfb the pairing page really opens.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit
from tests.gui.conftest import running_tray
from tests.gui.xdisplay import missing_tools, xvfb_with_tray

from browserdeck import desktop


@pytest.fixture
def no_display(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # a browser we start writes there


def _gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


async def test_pairing_masks_the_token_and_says_what_did_not_open(
    qapp: Any, saved_config: Any, no_display: None, capfd: Any
) -> None:
    async with running_tray(qapp) as app:
        token = app.service.relay_token
        assert token
        dialog = app.show_pairing()
        shown = [edit.text() for edit in dialog.findChildren(QLineEdit)]
        assert all(token not in text for text in shown), "the token shows in clear"
        link_field = dialog.findChild(QLineEdit, "pairing-link")
        assert "••••" in link_field.text(), "the link masks the token like the token field"
        # No display: Chrome cannot start. Not "Opened": what went wrong, what to do.
        await dialog.open_link()
        said = dialog.message.text()
        assert "did not open the pairing page" in said and "Copy next to the pairing link" in said
        assert "Missing X server" in said or "display" in said.lower(), said
        assert "Opened" not in said and token not in said
        dialog.copy(dialog.link)
        assert QGuiApplication.clipboard().text() == dialog.link  # Copy gives the real link
        # xdg-open with no desktop: "no method available", said in the dialog.
        await dialog.open_folder()
        said = dialog.message.text()
        assert str(dialog.folder) in said and "no method available" in said, said
        dialog.close()

        await app.open_logs()
        _, level, title, message = app.notices[-1]
        assert (level, title) == ("warning", "Could not open the logs folder")
        assert "no method available" in message and "logs are in" in message
    out, err = capfd.readouterr()
    assert token not in out and token not in err, "the relay token was printed"


def test_a_chrome_that_cannot_start_is_reaped_and_says_why(no_display: None) -> None:
    opened = desktop.open_in_chrome("about:blank")
    assert not opened.ok and opened.pid is not None
    assert opened.why, "a reason for a person"
    assert _gone(opened.pid), "the failed Chrome stayed a zombie"


@pytest.mark.skipif(bool(missing_tools()), reason="needs Xvfb (make system-deps)")
def test_the_pairing_page_really_opens_on_a_display(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As root, Chrome starts only with --no-sandbox: with it, the page opens."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with xvfb_with_tray(tray=False, window_manager=True) as x:
        monkeypatch.setenv("DISPLAY", x.display)
        opened = desktop.open_in_chrome("data:text/html,<title>Pairing stand-in</title>")
        try:
            assert opened.ok, opened.why
            assert opened.pid is not None and not _gone(opened.pid)
        finally:
            if opened.pid is not None and not _gone(opened.pid):
                os.killpg(opened.pid, signal.SIGTERM)  # its own session: our start, our end

        def reaped() -> bool:
            return opened.pid is None or _gone(opened.pid)

        deadline = time.monotonic() + 20
        while not reaped() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reaped(), "the Chrome it started was not reaped after it ended"
