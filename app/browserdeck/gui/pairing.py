"""“Pair extension…”: how to connect the user's Chrome to an extension profile.

Non-modal. Shows where the unpacked extension is, the pairing link (which hands
the relay token to the extension's options page, from ``relay.pairing``), and
the manual path (relay port + token) for when the link cannot be opened.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import shiboken6
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

import browserdeck
from browserdeck.gui import icons
from browserdeck.util import aio


def bundled_dir(name: str) -> Path | None:
    """A top-level folder shipped with the app (``extension``, ``resources``), if present."""
    candidates = []
    if getattr(sys, "frozen", False):  # PyInstaller onedir: data sits next to the code
        candidates.append(Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / name)
    # A source checkout: app/browserdeck/__init__.py -> repo root.
    candidates.append(Path(browserdeck.__file__).resolve().parents[2] / name)
    for path in candidates:
        if path.is_dir():
            return path
    return None


def pairing_link(port: int, token: str, profile: str | None = None) -> str:
    from browserdeck.relay.pairing import pairing_url

    return pairing_url(port, token, profile=profile)


class PairDialog(QDialog):
    def __init__(
        self,
        *,
        relay_port: int,
        token: str,
        color: str,
        profile: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("pairDialog")
        self.setWindowTitle("Pair the extension")  # Qt adds " — browserdeck"
        self.setWindowIcon(icons.app_icon(color))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.link = pairing_link(relay_port, token, profile)
        self.token = token
        folder = bundled_dir("extension")
        layout = QVBoxLayout(self)
        intro = QLabel(
            "<b>Let agents use your own Chrome.</b><br>The browserdeck extension connects "
            "Chrome to browserdeck's relay; it only shares the tabs you attach (click its "
            "icon on a tab)."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        steps = QLabel(
            "<ol style='margin-left:-20px'>"
            "<li>Open <code>chrome://extensions</code>, turn on <i>Developer mode</i>, click "
            "<i>Load unpacked</i> and choose the extension folder below.</li>"
            "<li>Click <b>Open pairing page</b>, then paste the pairing link (it is on your "
            "clipboard) into that tab's address bar. It gives the extension the relay "
            "token.</li>"
            "<li>Click the extension's icon on a tab to share it with agents.</li></ol>"
        )
        steps.setWordWrap(True)
        steps.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(steps)
        grid = QGridLayout()
        self.folder = folder
        # The token is a secret: masked wherever it shows (in the link too); Copy copies it.
        shown_link = mask_token(self.link, token)
        for row, (label, value, shown, copy_text) in enumerate(
            (
                (
                    "Extension folder",
                    str(folder) if folder else "",
                    str(folder) if folder else "not found in this install",
                    "Open",
                ),
                ("Pairing link", self.link or "", shown_link, "Copy"),
                ("Relay port", str(relay_port), str(relay_port), None),
                ("Relay token", token, "•" * 12, "Copy"),
            )
        ):
            grid.addWidget(QLabel(label + ":"), row, 0)
            edit = QLineEdit(shown)
            edit.setReadOnly(True)
            edit.setObjectName(label.lower().replace(" ", "-"))
            grid.addWidget(edit, row, 1)
            if copy_text and value:
                button = QPushButton(copy_text)
                if copy_text == "Open":
                    button.clicked.connect(lambda *_: self.open_folder())
                else:
                    button.clicked.connect(lambda *_, v=value: self.copy(v))
                grid.addWidget(button, row, 2)
        layout.addLayout(grid)
        # Why an Open did not work, and what to do instead (never a silent no-op).
        self.message = QLabel()
        self.message.setObjectName("pairMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.addButton(
            "Open pairing page", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.open_button.setEnabled(self.link is not None)
        self.open_button.clicked.connect(self.open_link)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.resize(620, self.sizeHint().height())

    def say(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()

    def copy(self, value: str) -> None:
        QGuiApplication.clipboard().setText(value)
        self.say("Copied.")

    def open_link(self) -> asyncio.Task[None] | None:
        """Open the extension's page in Chrome (only Chrome opens an extension's page) with
        the pairing link on the clipboard, and say how that went once Chrome has had a
        moment (desktop.py).

        Never the link itself on Chrome's command line: any local user can read a command
        line (/proc/*/cmdline), and the link carries the relay token (`browserdeck pair
        --open` does the same). Chrome is started directly, its output never shown:
        handing a link to the desktop's opener (xdg-open) printed it on stderr when no
        handler took it.
        """
        if not self.link:
            return None
        from browserdeck import desktop
        from browserdeck.relay.pairing import options_url

        token = self.token
        self.open_button.setEnabled(False)
        self.say("Opening the extension's page in Chrome…")

        async def go() -> None:
            opened = await asyncio.to_thread(desktop.open_in_chrome, options_url(), secret=token)
            if not shiboken6.isValid(self):
                return
            self.open_button.setEnabled(True)
            if opened.ok and self.link:
                QGuiApplication.clipboard().setText(self.link)
                self.say(
                    "Opened the extension's page in Chrome, and the pairing link is on your "
                    "clipboard: paste it into that tab's address bar and press Enter. The "
                    "page then says “Paired”."
                )
            else:
                self.say(
                    f"Chrome did not open the pairing page ({opened.why}). Click Copy next "
                    "to the pairing link, paste it into the address bar of the Chrome that "
                    "has the extension, and press Enter."
                )

        return aio.create_task(go(), name="gui-open-pairing-page")

    def open_folder(self) -> asyncio.Task[None] | None:
        if self.folder is None:
            return None
        folder = self.folder

        async def go() -> None:
            why = await open_path(folder)
            if not shiboken6.isValid(self):
                return
            if why is None:
                self.say(f"Opened {folder} in your file manager.")
            else:
                self.say(
                    f"Could not open it in a file manager ({why}). The extension folder is:\n"
                    f"{folder}\nIn chrome://extensions click “Load unpacked” and choose "
                    "that folder."
                )

        return aio.create_task(go(), name="gui-open-extension-folder")


def mask_token(text: str, token: str) -> str:
    """``text`` with the token hidden (the same dots as the token field)."""
    return text.replace(token, "•" * 12) if token else text


async def open_path(path: Path) -> str | None:
    """Open a folder in the desktop's file manager: None once it opened, else why not
    (on Linux xdg-open is run and judged by how it ended: Qt's own call reported success
    for an xdg-open that then said "no method available")."""
    from browserdeck import desktop

    opened = await asyncio.to_thread(desktop.open_folder, str(path))
    if opened is None:  # no xdg-open here: the toolkit's own opener
        ok = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
        return None if ok else "no file manager could be started"
    return None if opened.ok else opened.why
