"""The settings dialog's Secrets page: the user adds, edits and removes the vault's secrets.

Each change is kept at once, in the vault (secrets/vault.py: the OS keyring or a 0600 file), not
with the dialog's Save: a value typed here never sits in the dialog's copy of the
settings. A stored value is never shown or read back into the page: editing a secret
changes its origins, and its value or seed only when a new one is typed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from browserdeck.errors import BrowserdeckError
from browserdeck.gui.settings.fields import _hint_label
from browserdeck.gui.settings.pages import list_column
from browserdeck.secrets.vault import SecretInfo, Vault

NEW = "(new secret)"


class SecretsPage(QWidget):
    def __init__(self, vault: Vault, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("secretsPage")
        self.vault = vault
        outer = QVBoxLayout(self)
        outer.addWidget(
            _hint_label(
                "Agents type a secret by its name, <secret>NAME</secret> (or <totp>NAME</totp> "
                "for its one-time code), and browserdeck puts the value in, only on the "
                "origins you allow. Agents see names and origins, never values. Changes here "
                "are kept at once."
            )
        )
        row = QHBoxLayout()
        left, self.names, self.add_button, self.remove_button = list_column(
            ("secretList", "addSecret", "removeSecret"),
            "Remove…",
            self._selected,
            self.new_secret,
            self.ask_remove,
        )
        row.addLayout(left)

        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("secretName")
        self.name_edit.setPlaceholderText("e.g. bank-password")
        form.addRow("Name:", self.name_edit)
        self.origins_edit = QPlainTextEdit()
        self.origins_edit.setObjectName("secretOrigins")
        self.origins_edit.setPlaceholderText("https://bank.example\nhttps://*.bank.example")
        self.origins_edit.setFixedHeight(80)
        form.addRow("Origins (one a line):", self.origins_edit)
        self.value_edit = QLineEdit()
        self.value_edit.setObjectName("secretValue")
        self.value_edit.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("Value:", self.value_edit)
        self.seed_edit = QLineEdit()
        self.seed_edit.setObjectName("secretSeed")
        self.seed_edit.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("One-time code seed:", self.seed_edit)
        self.drop_seed = QCheckBox("Remove the one-time code seed")
        self.drop_seed.setObjectName("secretDropSeed")
        form.addRow("", self.drop_seed)
        self.save_button = QPushButton("Keep this secret")
        self.save_button.setObjectName("saveSecret")
        self.save_button.clicked.connect(self.save_secret)
        form.addRow("", self.save_button)
        self.message = QLabel()
        self.message.setObjectName("secretMessage")
        self.message.setWordWrap(True)
        form.addRow("", self.message)
        right = QVBoxLayout()
        right.addLayout(form)
        right.addStretch(1)
        row.addLayout(right, 1)
        outer.addLayout(row, 1)
        self.reload()

    def reload(self, select: str | None = None) -> None:
        self.names.blockSignals(True)
        try:
            self.names.clear()
            for info in self.vault.entries():
                item = QListWidgetItem(info.name)
                item.setData(Qt.ItemDataRole.UserRole, info.name)
                item.setToolTip(", ".join(info.origins))
                self.names.addItem(item)
                if info.name == select:
                    self.names.setCurrentItem(item)
        finally:
            self.names.blockSignals(False)
        current = self.names.currentItem()
        self._show(self._info(current.data(Qt.ItemDataRole.UserRole)) if current else None)

    def _info(self, name: str) -> SecretInfo | None:
        return next((i for i in self.vault.entries() if i.name == name), None)

    def _selected(self, item: QListWidgetItem | None, _previous: object = None) -> None:
        self._show(self._info(item.data(Qt.ItemDataRole.UserRole)) if item else None)

    def _show(self, info: SecretInfo | None) -> None:
        """``info``'s name and origins in the form; the value and seed fields stay empty
        (a stored value is never read back)."""
        self.name_edit.setText(info.name if info else "")
        self.name_edit.setReadOnly(info is not None)
        self.origins_edit.setPlainText("\n".join(info.origins) if info else "")
        self.value_edit.clear()
        self.seed_edit.clear()
        self.drop_seed.setChecked(False)
        self.drop_seed.setEnabled(bool(info and info.totp))
        kept = "(kept; type to replace)"
        self.value_edit.setPlaceholderText(kept if info and info.value else "the password")
        self.seed_edit.setPlaceholderText(
            kept if info and info.totp else "optional: base32, or otpauth://totp/…"
        )
        self.remove_button.setEnabled(info is not None)

    def new_secret(self) -> None:
        self.names.clearSelection()
        self.names.setCurrentRow(-1)
        self._show(None)
        self.message.clear()
        self.name_edit.setFocus()

    def save_secret(self) -> bool:
        name = self.name_edit.text().strip()
        origins = [o for o in self.origins_edit.toPlainText().split() if o]
        existing = self._info(name)
        value = self.value_edit.text() or None
        if existing is None and value is None and not self.seed_edit.text():
            self._say("give a value (or a one-time code seed) for the new secret", error=True)
            return False
        try:
            saved = self.vault.set(
                name,
                origins,
                value,
                totp_seed=self.seed_edit.text() or None,
                drop_totp=self.drop_seed.isChecked(),
            )
        except BrowserdeckError as exc:
            self._say(exc.message + (f" ({exc.hint})" if exc.hint else ""), error=True)
            return False
        self.reload(select=saved.name)
        self._say(f"kept {saved.name}: usable on {', '.join(saved.origins)}")
        return True

    def ask_remove(self) -> QMessageBox | None:
        item = self.names.currentItem()
        if item is None:
            return None
        name = item.data(Qt.ItemDataRole.UserRole)
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Remove secret",
            f"Remove the secret {name!r}? Agents can no longer type it.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("confirmRemoveSecret")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def done(result: int) -> None:
            if result == QMessageBox.StandardButton.Yes:
                self.vault.remove(name)
                self.reload()
                self._say(f"removed {name}")

        box.finished.connect(done)
        box.open()
        return box

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setStyleSheet("color: #C62828;" if error else "")
        self.message.setText(text)
