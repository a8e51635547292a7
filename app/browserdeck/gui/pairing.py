"""“Pair extension…”: how to connect the user's Chrome to an extension profile.

Non-modal. Shows where the unpacked extension is, the pairing link (which hands
the relay token to the extension's options page, from ``relay.pairing``), and
the manual path (relay port + token) for when the link cannot be opened.
"""

from __future__ import annotations

import sys
from pathlib import Path

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


def pairing_link(port: int, token: str, profile: str | None = None) -> str | None:
    try:
        from browserdeck.relay.pairing import pairing_url
    except ImportError:  # a build without the relay
        return None
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
        self.setWindowTitle("Pair the browserdeck extension")
        self.setWindowIcon(icons.app_icon(color))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.link = pairing_link(relay_port, token, profile)
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
            "<li>Click <b>Open pairing page</b> (or paste the link into Chrome). It gives the "
            "extension the relay token.</li>"
            "<li>Click the extension's icon on a tab to share it with agents.</li></ol>"
        )
        steps.setWordWrap(True)
        steps.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(steps)
        grid = QGridLayout()
        for row, (label, value, copy_text) in enumerate(
            (
                (
                    "Extension folder",
                    str(folder) if folder else "not found in this install",
                    "Open",
                ),
                ("Pairing link", self.link or "not available in this build", "Copy"),
                ("Relay port", str(relay_port), None),
                ("Relay token", token, "Copy"),
            )
        ):
            grid.addWidget(QLabel(label + ":"), row, 0)
            edit = QLineEdit(value)
            edit.setReadOnly(True)
            edit.setObjectName(label.lower().replace(" ", "-"))
            if label == "Relay token":
                edit.setEchoMode(QLineEdit.EchoMode.Password)
            grid.addWidget(edit, row, 1)
            if copy_text and (label != "Pairing link" or self.link):
                button = QPushButton(copy_text)
                if copy_text == "Open" and folder is not None:
                    button.clicked.connect(
                        lambda *_, f=folder: QDesktopServices.openUrl(QUrl.fromLocalFile(str(f)))
                    )
                elif copy_text == "Copy":
                    button.clicked.connect(
                        lambda *_, v=value: QGuiApplication.clipboard().setText(v)
                    )
                else:
                    button.setEnabled(False)
                grid.addWidget(button, row, 2)
        layout.addLayout(grid)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.addButton(
            "Open pairing page", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.open_button.setEnabled(self.link is not None)
        self.open_button.clicked.connect(self.open_link)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.resize(620, self.sizeHint().height())

    def open_link(self) -> None:
        if self.link:
            QDesktopServices.openUrl(QUrl(self.link))
