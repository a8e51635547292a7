"""The settings dialog's editors: one ``Field`` per declared ``Setting``.

Every editor is made from a ``Setting``'s declaration: its type, bounds, choices and
the dialog's words (label, checkbox text, help, placeholder). Values are checked as you
type by ``config.check_setting`` (the same check the config loader and profile creation
use).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from browserdeck import config
from browserdeck.config import Setting
from browserdeck.errors import InvalidInput

log = logging.getLogger(__name__)

# The driver's choices in a person's words (the profile list's tooltip too).
DRIVER_TEXT = config.PROFILE_KEYS["driver"].choice_labels
INHERIT = "inherit"
# The global settings that are ports: probed as you type, flagged on a collision.
PORT_KEYS = tuple(s.key for s in config.SETTINGS if s.type == "port")
attr_of = config.attr_of


def label_of(key: str) -> str:
    """The dialog's label of a setting or profile field (its declaration's)."""
    setting = config.SETTING_KEYS.get(key) or config.PROFILE_KEYS.get(key)
    if setting is not None and setting.label:
        return setting.label
    return re.sub(r"(?<!^)([A-Z])", r" \1", key).capitalize()


class WrapLabel(QLabel):
    """A word-wrapped label that asks its layout for the height its lines take at its
    width, as its minimum.

    Qt's form layout sized the rows of a scrolled page for another width than the one
    they got (the label column is wider than it reckoned), so a warning shown under a
    field, or help text that wraps once more, overlapped the line under it and was cut
    off (docs/gui.md). A minimum height is honoured by every layout; it follows the width
    (resize) and the text (setText).
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.setWordWrap(True)

    def _fit(self) -> None:
        if self.width() <= 0:
            return
        held = self.minimumHeight()
        self.setMinimumHeight(0)  # a label's height for a width never goes under its minimum
        height = self.heightForWidth(self.width())
        self.setMinimumHeight(height if height > 0 else held)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()


def _hint_label(text: str) -> QLabel:
    label = WrapLabel(text)
    label.setObjectName("hint")
    label.setProperty("role", "hint")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
    return label


class FieldError(WrapLabel):
    """The inline explanation under a field; hidden when the field is valid."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("fieldError")
        self.hide()

    def show_error(self, message: str | None, *, warning: bool = False) -> None:
        if not message:
            self.clear()
            self.hide()
            return
        color = "#9A6700" if warning else "#C62828"
        self.setStyleSheet(f"color: {color};")
        self.setText(("⚠ " if warning else "✕ ") + message)
        self.show()


class Field(QObject):
    """One editor for one ``Setting``: the widget, its value, and its inline error."""

    changed = Signal()

    def __init__(self, setting: Setting, parent: QWidget) -> None:
        super().__init__(parent)
        self.setting = setting
        self.error = FieldError()
        self.warned = False  # the error line shows a port-in-use warning (not an error)
        self.widget: QWidget
        self._tristate = setting.type in ("bool", "choice") and setting.default is None
        kind = setting.type
        if kind == "bool" and not self._tristate:
            box = QCheckBox(setting.checkbox or label_of(setting.key))
            box.toggled.connect(lambda *_: self.changed.emit())
            self.widget = box
        elif kind == "bool":
            combo = QComboBox()
            combo.setMaximumWidth(420)
            # The pages name the global value where there is one (headless, attachOnly).
            combo.addItem("Use the global setting (off)", INHERIT)
            combo.addItem("Yes", True)
            combo.addItem("No", False)
            combo.currentIndexChanged.connect(lambda *_: self.changed.emit())
            self.widget = combo
        elif kind in ("port", "int"):
            spin = QSpinBox()
            lo = 1024 if kind == "port" else (setting.minimum or 0)
            hi = 65535 if kind == "port" else (setting.maximum or 2**31 - 1)
            if setting.placeholder is not None:
                # One below the minimum stands for "not set" (e.g. use the global relay port).
                spin.setRange(lo - 1, hi)
                spin.setSpecialValueText(setting.placeholder)
            else:
                spin.setRange(lo, hi)
            spin.setAccelerated(True)
            spin.setGroupSeparatorShown(False)
            spin.valueChanged.connect(lambda *_: self.changed.emit())
            spin.setMinimumWidth(110)
            spin.setMaximumWidth(150)
            self.widget = spin
        elif kind in ("choice", "profile-ref"):
            combo = QComboBox()
            combo.setMaximumWidth(420)
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(18)
            if self._tristate:  # unset: what it stands for (a profile's page names it)
                combo.addItem(setting.placeholder or "Use the global setting", INHERIT)
            for choice in setting.choices:
                combo.addItem(setting.choice_labels.get(choice, choice), choice)
            combo.currentIndexChanged.connect(lambda *_: self.changed.emit())
            self.widget = combo
        elif kind == "color":
            self.widget = ColorEdit()
            self.widget.changed.connect(self.changed)
        elif kind == "path":
            self.widget = PathEdit(setting.placeholder or "Not set (automatic)")
            self.widget.changed.connect(self.changed)
        else:  # url and anything textual
            edit = QLineEdit()
            edit.setPlaceholderText(setting.placeholder or "")
            edit.textChanged.connect(lambda *_: self.changed.emit())
            self.widget = edit
        self.widget.setObjectName(f"field-{setting.key}")

    # --- value ------------------------------------------------------------------
    def value(self) -> Any:
        w = self.widget
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QComboBox):
            data = w.currentData()
            return None if data == INHERIT else data
        if isinstance(w, QSpinBox):
            return None if w.value() < w.minimum() + 1 and w.specialValueText() else w.value()
        if isinstance(w, ColorEdit | PathEdit):
            return w.value()
        if isinstance(w, QLineEdit):
            text = w.text().strip()
            if self.setting.type == "origins" and (text or self.setting.default is not None):
                return config.split_rules(text)  # a profile's empty list: the global one
            return text or None
        raise AssertionError(type(w))

    def set_value(self, value: Any) -> None:
        w = self.widget
        blocker = [w.blockSignals(True)]
        try:
            if isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            elif isinstance(w, QComboBox):
                index = w.findData(INHERIT if value is None and self._tristate else value)
                if index < 0 and value is not None:
                    w.addItem(str(value), value)
                    index = w.count() - 1
                w.setCurrentIndex(max(index, 0))
            elif isinstance(w, QSpinBox):
                w.setValue(w.minimum() if value is None else int(value))
            elif isinstance(w, ColorEdit | PathEdit):
                w.set_value(value)
            elif isinstance(w, QLineEdit):
                if isinstance(value, list):  # "paths" (uploadRoots); "words", "origins"
                    listed = self.setting.type in ("words", "origins")
                    value = (", " if listed else os.pathsep).join(value)
                w.setText("" if value is None else str(value))
        finally:
            w.blockSignals(blocker[0])

    def set_choices(self, choices: list[str], labels: dict[str, str] | None = None) -> None:
        w = self.widget
        assert isinstance(w, QComboBox)
        current = w.currentData()
        w.blockSignals(True)
        try:
            w.clear()
            for choice in choices:
                w.addItem((labels or {}).get(choice, choice), choice)
            index = w.findData(current)
            w.setCurrentIndex(max(index, 0))
        finally:
            w.blockSignals(False)

    def validate(self) -> str | None:
        """Check the value; show and return the message when it is invalid."""
        try:
            config.check_setting(self.setting, self.value(), label_of(self.setting.key))
        except InvalidInput as exc:
            self.error.show_error(exc.message)
            return exc.message
        self.error.show_error(None)
        return None


class ColorEdit(QWidget):
    """A colour swatch button (opens a non-modal colour picker) plus the #RRGGBB text."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.swatch = QToolButton()
        self.swatch.setObjectName("colorSwatch")
        self.swatch.setFixedSize(34, 24)
        self.swatch.setToolTip("Pick a colour")
        self.swatch.clicked.connect(self.pick)
        self.text = QLineEdit()
        self.text.setMaxLength(7)
        self.text.setFixedWidth(90)
        self.text.setPlaceholderText("#RRGGBB")
        self.text.textChanged.connect(self._on_text)
        layout.addWidget(self.swatch)
        layout.addWidget(self.text)
        layout.addStretch(1)
        self._picker: QColorDialog | None = None

    def value(self) -> str:
        return self.text.text().strip()

    def set_value(self, value: Any) -> None:
        self.text.setText(str(value or ""))
        self._paint()

    def _on_picked(self, color: QColor) -> None:
        self.set_value(color.name().upper())
        self.changed.emit()

    def _on_text(self) -> None:
        self._paint()
        self.changed.emit()

    def _paint(self) -> None:
        value = self.value()
        color = value if config.COLOR_RE.match(value) else "#FFFFFF"
        self.swatch.setStyleSheet(
            f"QToolButton {{ background: {color}; border: 1px solid #7A7A7A; border-radius: 4px; }}"
        )

    def pick(self) -> QColorDialog:
        picker = QColorDialog(QColor(self.value() or "#FF4500"), self)
        picker.setWindowTitle("Profile colour")
        picker.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        picker.colorSelected.connect(self._on_picked)
        self._picker = picker
        picker.open()
        return picker


class PathEdit(QWidget):
    """A path line edit with a Browse… button (non-modal file dialog)."""

    changed = Signal()

    def __init__(self, placeholder: str) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(placeholder)
        self.edit.textChanged.connect(lambda *_: self.changed.emit())
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def value(self) -> str | None:
        return self.edit.text().strip() or None

    def set_value(self, value: Any) -> None:
        self.edit.setText(str(value or ""))

    def browse(self) -> QFileDialog:
        dialog = QFileDialog(self, "Choose a file", os.path.dirname(self.value() or "/"))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.edit.setText)
        dialog.open()
        return dialog


def _form_row(form: QFormLayout, field: Field, *, label: str | None = None) -> None:
    """A row: label | editor, then the help line and the inline error under the editor."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 2)
    column.setSpacing(2)
    column.addWidget(field.widget)
    if field.setting.help:
        column.addWidget(_hint_label(field.setting.help))
    column.addWidget(field.error)
    title = QLabel(label if label is not None else label_of(field.setting.key) + ":")
    title.setBuddy(field.widget)
    form.addRow(title, box)


def port_holder(port: int) -> str | None:
    """Why ``port`` cannot be used on 127.0.0.1 right now (another program holds it), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the service binds (asyncio and its API set SO_REUSEADDR): a port left in
        # TIME_WAIT by a closed connection is free for it, not "in use".
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        with contextlib.suppress(OSError):
            sock.bind(("127.0.0.1", port))
            return None
    who = ""
    try:
        from browserdeck.chrome import procs

        pids = [pid for pid in procs.listening_pids(port) if pid != os.getpid()]
        if pids:
            argv = procs.process_cmdline(pids[0]) or ["?"]
            who = f" ({os.path.basename(argv[0])}, pid {pids[0]})"
    except Exception:  # naming the program is a courtesy; the port is busy either way
        log.debug("who holds port %s", port, exc_info=True)
    return f"port {port} is in use by another program{who}: pick another port"


def _scrolled(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    # Fit the width: hints wrap instead of pushing the form sideways.
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    page.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    return area
