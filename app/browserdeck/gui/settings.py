"""The settings dialog, built from the declared schema (``config.SETTINGS``/``PROFILE_FIELDS``).

Every editor is made from a ``Setting``'s type, default, description and
choices; the only GUI-side knowledge is which page a key sits on and a
friendlier label. Values are checked as you type with the same validators the
service uses, and a candidate ``Config`` is checked as a whole
(``config.check_consistency``: port collisions, default profile) before Save is
enabled. Save hands the candidate to the service, which writes it atomically and
restarts only what changed; the dialog never blocks the loop (no ``exec()``).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from browserdeck import aio, config
from browserdeck.config import PROFILE_FIELDS, SETTINGS, Config, ProfileConfig, Setting
from browserdeck.errors import BrowserdeckError, InvalidInput
from browserdeck.gui import icons

log = logging.getLogger(__name__)

# Presentation only: friendlier labels than the camelCase keys, and where keys sit.
LABELS: dict[str, str] = {
    "enabled": "Browser control",
    "controlPort": "Control API port",
    "relayPort": "Extension relay port",
    "defaultProfile": "Default profile",
    "headless": "Run browsers headless",
    "noSandbox": "No sandbox",
    "attachOnly": "Attach only",
    "executablePath": "Browser executable",
    "relayClientMode": "Relay clients",
    "startDefaultProfile": "Start the default profile at launch",
    "startAtLogin": "Start browserdeck at login",
    "mcpIdleMinutes": "Close idle MCP browser after (minutes)",
    "mcpRunCode": "Allow MCP to run Python code",
    "screenshotMaxDimension": "Largest MCP screenshot side (px)",
    "actionWaitMs": "Longest wait for an action's effects (ms)",
    # profile fields
    "driver": "Driver",
    "color": "Colour",
    "cdpPort": "CDP port",
    "cdpUrl": "CDP URL",
    "userDataDir": "User data directory",
}
CHECKBOX_TEXT: dict[str, str] = {
    "enabled": "Let agents use browsers",
    "headless": "No visible windows",
    "noSandbox": "Run browsers without the sandbox",
    "attachOnly": "Never launch a browser",
    "startDefaultProfile": "Start it when browserdeck starts",
    "startAtLogin": "Start when I log in",
    "mcpRunCode": "Let MCP clients run Python code",
    "allowFileUrls": "Let agents open files on this computer",
}
# The help line under each field, in a user's words. The schema's descriptions (the
# API, the CLI and the config reference use them) name routes and JSON keys; a person
# in this dialog needs what the setting does for them, never a repeat of its checkbox.
HELP: dict[str, str] = {
    "enabled": "When this is off, agents cannot open or drive any browser; browserdeck "
    "keeps running and tells them browser control is switched off.",
    "controlPort": "Agents, the command line and MCP clients connect to browserdeck on "
    "this port. Only programs on this computer can reach it.",
    "relayPort": "The browserdeck extension in your Chrome connects on this port (unless "
    "a Chrome profile below sets its own).",
    "defaultProfile": "The browser agents get when they do not ask for a particular one.",
    "headless": "Agents still get screenshots. On Linux without a desktop, browsers always "
    "run this way.",
    "noSandbox": "Only for machines where Chromium's sandbox cannot start, such as "
    "containers or running as root; it makes the browser less safe.",
    "attachOnly": "browserdeck then only connects to a browser you started yourself with "
    "remote debugging on.",
    "executablePath": "The Chrome or Chromium program to start. Leave empty to use the one "
    "browserdeck finds.",
    "relayClientMode": "Whether several agents may use your Chrome at the same time, or "
    "one at a time (the next one waits until the first is done).",
    "startDefaultProfile": "Its browser is ready before the first agent asks for it.",
    "startAtLogin": "It waits in the tray, so agents can connect as soon as you are logged in.",
    "mcpIdleMinutes": "A browser started for an MCP client closes after this long without "
    "use (0: never).",
    "mcpRunCode": "The code they send runs with full control of the browser. Only turn "
    "this on for agents you trust.",
    "screenshotMaxDimension": "Screenshots sent to AI models are scaled down to at most "
    "this many pixels wide or high.",
    "allowFileUrls": "With file:// links an agent could read any file you can read. Off "
    "unless you need it.",
    "color": "Tints this profile's browser window and its icon, so you can tell them apart.",
    "cdpPort": "The port browserdeck uses to control this browser (for Chrome profiles: "
    "the port the extension connects to).",
    "cdpUrl": "The address of a browser on another machine or container, with remote "
    "debugging on.",
    "userDataDir": "Where this browser keeps its cookies, logins and history. Leave empty "
    "for browserdeck's own folder.",
}
RELAY_MODES = {
    "single-active": "One agent at a time",
    "multi-client": "Several agents at once",
}
# Keys of SETTINGS shown on the Profiles page (they apply to every managed profile).
BROWSER_KEYS = ("executablePath", "noSandbox")
NETWORK_KEYS = ("controlPort", "relayPort")
DRIVER_TEXT = {
    "managed": "Managed: browserdeck launches it",
    "extension": "Extension: your own Chrome",
    "remote": "Remote: a CDP URL",
}
INHERIT = "inherit"


def attr_of(key: str) -> str:
    """The Config/ProfileConfig attribute of a camelCase schema key (controlPort → control_port)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def label_of(key: str) -> str:
    return LABELS.get(key) or re.sub(r"(?<!^)([A-Z])", r" \1", key).capitalize()


def check_value(setting: Setting, value: Any, where: str | None = None) -> Any:
    """Validate one value the way the config loader does; raises InvalidInput."""
    where = where or setting.key
    if value is None and setting.default is None:
        return None
    kind = setting.type
    if kind == "port":
        return config.validate_port(value, where)
    if kind == "color":
        return config.validate_color(value, where)
    if kind == "url":
        return config.validate_cdp_url(value, where)
    if kind == "int":
        lo = setting.minimum if setting.minimum is not None else value
        hi = setting.maximum if setting.maximum is not None else value
        if not isinstance(value, int) or not lo <= value <= hi:
            raise InvalidInput(f"{where} must be a whole number from {lo} to {hi}")
        return value
    if kind == "choice" and value not in setting.choices:
        raise InvalidInput(f"{where} must be one of {', '.join(setting.choices)}")
    return value


def _hint_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setObjectName("hint")
    label.setProperty("role", "hint")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
    return label


class FieldError(QLabel):
    """The inline explanation under a field; hidden when the field is valid."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
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

    def __init__(
        self,
        setting: Setting,
        parent: QWidget,
        *,
        tristate_base: bool | None = None,
        empty_text: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setting = setting
        self.error = FieldError()
        self.warned = False  # the error line shows a port-in-use warning (not an error)
        self.widget: QWidget
        self._tristate = setting.type == "bool" and setting.default is None
        kind = setting.type
        if kind == "bool" and not self._tristate:
            box = QCheckBox(CHECKBOX_TEXT.get(setting.key, label_of(setting.key)))
            box.toggled.connect(lambda *_: self.changed.emit())
            self.widget = box
        elif kind == "bool":
            combo = QComboBox()
            combo.setMaximumWidth(420)
            base = "on" if tristate_base else "off"
            combo.addItem(f"Use the global setting ({base})", INHERIT)
            combo.addItem("Yes", True)
            combo.addItem("No", False)
            combo.currentIndexChanged.connect(lambda *_: self.changed.emit())
            self.widget = combo
        elif kind in ("port", "int"):
            spin = QSpinBox()
            lo = 1024 if kind == "port" else (setting.minimum or 0)
            hi = 65535 if kind == "port" else (setting.maximum or 2**31 - 1)
            if empty_text is not None:
                # One below the minimum stands for "not set" (e.g. use the global relay port).
                spin.setRange(lo - 1, hi)
                spin.setSpecialValueText(empty_text)
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
            for choice in setting.choices:
                combo.addItem(DRIVER_TEXT.get(choice) or RELAY_MODES.get(choice, choice), choice)
            combo.currentIndexChanged.connect(lambda *_: self.changed.emit())
            self.widget = combo
        elif kind == "color":
            self.widget = ColorEdit()
            self.widget.changed.connect(self.changed)
        elif kind == "path":
            self.widget = PathEdit(empty_text or "Not set (automatic)")
            self.widget.changed.connect(self.changed)
        else:  # url and anything textual
            edit = QLineEdit()
            edit.setPlaceholderText(empty_text or "")
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
                if isinstance(value, list):  # "paths" settings (uploadRoots)
                    value = os.pathsep.join(value)
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
            check_value(self.setting, self.value(), label_of(self.setting.key))
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


def _form_row(
    form: QFormLayout, field: Field, *, label: str | None = None, hint: bool = True
) -> None:
    """A row: label | editor, then the description and the inline error under the editor."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 2)
    column.setSpacing(2)
    column.addWidget(field.widget)
    if hint:
        column.addWidget(_hint_label(HELP.get(field.setting.key, field.setting.description)))
    column.addWidget(field.error)
    title = QLabel(label if label is not None else label_of(field.setting.key) + ":")
    title.setBuddy(field.widget)
    form.addRow(title, box)


class SettingsDialog(QDialog):
    """Non-modal: show() it; Save runs ``apply`` as a task and closes on success."""

    saved = Signal(object)  # the Config that was applied

    def __init__(
        self,
        current: Config,
        apply: Callable[[Config, list[str]], Awaitable[None]],
        parent: QWidget | None = None,
        *,
        running: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("browserdeck — Settings")
        self.setWindowIcon(
            icons.app_icon(current.profiles.get(current.default_profile, ProfileConfig("x")).color)
        )
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.original = current
        self.running = running
        self.working = copy.deepcopy(current)
        self.deleted: list[str] = []
        self._apply = apply
        self._saving = False
        self._loading = False
        self.fields: dict[str, Field] = {}
        self.profile_fields: dict[str, Field] = {}
        self.current_profile: str | None = None
        self.new_profiles: set[str] = set()

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._general_page(), "General")
        self.tabs.addTab(self._profiles_page(), "Profiles")
        self.tabs.addTab(self._advanced_page(), "Advanced")

        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #C62828;")
        self.problem.hide()
        self.status = QLabel(
            ""
            if running
            else "browserdeck is not running: changes are saved and used at the next start."
        )
        self.status.setObjectName("status")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setDefault(True)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.problem)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.buttons)
        layout.addLayout(bottom)
        self.resize(760, 660)
        self._load_globals()
        self._refresh_profile_list(select=current.default_profile)
        self.validate()

    # --- pages -------------------------------------------------------------------
    def _make_field(self, setting: Setting) -> Field:
        field = Field(setting, self)
        field.changed.connect(lambda key=setting.key: self._on_global_changed(key))
        self.fields[setting.key] = field
        return field

    def _general_page(self) -> QWidget:
        page = QWidget()
        outer = QVBoxLayout(page)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        net = QFormLayout()
        for setting in SETTINGS:
            if setting.advanced or setting.key in BROWSER_KEYS:
                continue
            field = self._make_field(setting)
            _form_row(net if setting.key in NETWORK_KEYS else form, field)
        outer.addLayout(form)
        group = QGroupBox("Ports (127.0.0.1 only)")
        group.setLayout(net)
        outer.addWidget(group)
        outer.addStretch(1)
        return _scrolled(page)

    def _advanced_page(self) -> QWidget:
        page = QWidget()
        outer = QVBoxLayout(page)
        note = _hint_label("Rarely needed. Every setting is also in the config file (`browserdeck paths` shows where).")
        outer.addWidget(note)
        form = QFormLayout()
        for setting in SETTINGS:
            if setting.advanced and setting.key not in BROWSER_KEYS:
                _form_row(form, self._make_field(setting))
        outer.addLayout(form)
        outer.addStretch(1)
        return _scrolled(page)

    def _profiles_page(self) -> QWidget:
        page = QWidget()
        outer = QHBoxLayout(page)
        left = QVBoxLayout()
        self.profile_list = QListWidget()
        self.profile_list.setObjectName("profileList")
        self.profile_list.setMinimumWidth(170)
        self.profile_list.setMaximumWidth(220)
        self.profile_list.currentItemChanged.connect(self._on_profile_selected)
        left.addWidget(self.profile_list, 1)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add")
        self.add_button.setObjectName("addProfile")
        self.add_button.clicked.connect(self.add_profile)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("deleteProfile")
        self.delete_button.clicked.connect(self.ask_delete_profile)
        row.addWidget(self.add_button)
        row.addWidget(self.delete_button)
        left.addLayout(row)
        outer.addLayout(left)

        right = QVBoxLayout()
        self.editor = QWidget()
        form = QFormLayout(self.editor)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("field-name")
        self.name_edit.setMaxLength(64)
        self.name_edit.setPlaceholderText("e.g. work")
        self.name_edit.textEdited.connect(self._on_name_edited)
        self.name_error = FieldError()
        name_box = QWidget()
        name_col = QVBoxLayout(name_box)
        name_col.setContentsMargins(0, 0, 0, 2)
        name_col.setSpacing(2)
        name_col.addWidget(self.name_edit)
        self.name_hint = _hint_label(
            "Lowercase letters, digits and '-'. A profile's name cannot change once it is saved."
        )
        name_col.addWidget(self.name_hint)
        name_col.addWidget(self.name_error)
        form.addRow("Name:", name_box)
        for setting in PROFILE_FIELDS:
            kwargs: dict[str, Any] = {}
            if setting.key == "cdpPort":
                kwargs["empty_text"] = "Use the relay port"
            if setting.key == "userDataDir":
                kwargs["empty_text"] = "Not set (browserdeck's own directory)"
            if setting.key == "cdpUrl":
                kwargs["empty_text"] = "http://127.0.0.1:9222"
            if setting.key in ("headless", "attachOnly"):
                kwargs["tristate_base"] = False
            field = Field(setting, self, **kwargs)
            field.changed.connect(lambda key=setting.key: self._on_profile_field_changed(key))
            self.profile_fields[setting.key] = field
            # The driver's choices already explain themselves; its description would repeat them.
            _form_row(form, field, hint=setting.key != "driver")
        self.stack = QStackedWidget()
        empty = QLabel("Select a profile, or add one.")
        empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(empty)
        self.stack.addWidget(_scrolled(self.editor))
        right.addWidget(self.stack, 1)

        group = QGroupBox("All managed browsers")
        browser_form = QFormLayout(group)
        for key in BROWSER_KEYS:
            _form_row(browser_form, self._make_field(config.SETTING_KEYS[key]))
        right.addWidget(group)
        outer.addLayout(right, 1)
        return page

    # --- loading -------------------------------------------------------------------
    def _load_globals(self) -> None:
        self._loading = True
        try:
            self.fields["defaultProfile"].set_choices(sorted(self.working.profiles))
            for key, field in self.fields.items():
                field.set_value(getattr(self.working, attr_of(key)))
        finally:
            self._loading = False

    def _refresh_profile_list(self, select: str | None = None) -> None:
        select = select or self.current_profile
        self.profile_list.blockSignals(True)
        try:
            self.profile_list.clear()
            for name in sorted(self.working.profiles):
                p = self.working.profiles[name]
                suffix = " (default)" if name == self.working.default_profile else ""
                item = QListWidgetItem(icons.color_chip(p.color), f"{name}{suffix}")
                item.setData(Qt.ItemDataRole.UserRole, name)
                item.setToolTip(DRIVER_TEXT.get(p.driver, p.driver))
                self.profile_list.addItem(item)
                if name == select:
                    self.profile_list.setCurrentItem(item)
        finally:
            self.profile_list.blockSignals(False)
        current = self.profile_list.currentItem()
        self._show_profile(current.data(Qt.ItemDataRole.UserRole) if current else None)
        self.fields["defaultProfile"].set_choices(sorted(self.working.profiles))
        self.fields["defaultProfile"].set_value(self.working.default_profile)

    def _on_profile_selected(self, item: QListWidgetItem | None, _prev: Any = None) -> None:
        self._show_profile(item.data(Qt.ItemDataRole.UserRole) if item else None)
        self.validate()

    def _show_profile(self, name: str | None) -> None:
        self.current_profile = name
        if name is None or name not in self.working.profiles:
            self.stack.setCurrentIndex(0)
            self.delete_button.setEnabled(False)
            return
        self.stack.setCurrentIndex(1)
        p = self.working.profiles[name]
        self._loading = True
        try:
            self.name_edit.setText(name)
            is_new = name in self.new_profiles
            self.name_edit.setReadOnly(not is_new)
            # The app's style sheet greys read-only fields (a [readOnly] selector): re-apply it.
            self.name_edit.style().unpolish(self.name_edit)
            self.name_edit.style().polish(self.name_edit)
            self.name_edit.setToolTip(
                "" if is_new else "Names cannot change; add a new profile instead."
            )
            self.profile_fields["headless"].widget.setItemText(  # type: ignore[attr-defined]
                0, f"Use the global setting ({'on' if self.working.headless else 'off'})"
            )
            self.profile_fields["attachOnly"].widget.setItemText(  # type: ignore[attr-defined]
                0, f"Use the global setting ({'on' if self.working.attach_only else 'off'})"
            )
            for key, field in self.profile_fields.items():
                field.set_value(getattr(p, attr_of(key)))
        finally:
            self._loading = False
        self._driver_visibility(p.driver)
        self.delete_button.setEnabled(name != self.working.default_profile)
        self.delete_button.setToolTip(
            ""
            if name != self.working.default_profile
            else "The default profile cannot be deleted; make another one the default first."
        )

    def _driver_visibility(self, driver: str) -> None:
        form = self.editor.layout()
        assert isinstance(form, QFormLayout)
        visible = {
            "cdpPort": driver in ("managed", "extension"),
            "cdpUrl": driver == "remote",
            "headless": driver == "managed",
            "attachOnly": driver == "managed",
            "userDataDir": driver == "managed",
            # A remote browser service's settings: noise on any other profile.
            "tokenParam": driver == "remote",
            "tokenHeader": driver == "remote",
            "pool": driver == "remote",
            "poolIdleSeconds": driver == "remote",
        }
        visible = {k: v for k, v in visible.items() if k in self.profile_fields}
        for key, show in visible.items():
            form.setRowVisible(self._row_of(key), show)
        spin = self.profile_fields["cdpPort"].widget
        assert isinstance(spin, QSpinBox)
        if driver == "managed":
            spin.setSpecialValueText("")
            spin.setMinimum(1024)
        else:
            spin.setMinimum(1023)
            spin.setSpecialValueText(f"Use the relay port ({self.working.relay_port})")
        label = form.labelForField(self._row_of("cdpPort"))
        if isinstance(label, QLabel):
            label.setText("Relay port:" if driver == "extension" else "CDP port:")

    def _row_of(self, key: str) -> QWidget:
        """The box holding a profile field's editor, hint and error (one form row)."""
        row = self.profile_fields[key].widget.parentWidget()
        assert row is not None
        return row

    # --- edits ---------------------------------------------------------------------
    def _on_global_changed(self, key: str) -> None:
        if self._loading:
            return
        value = self.fields[key].value()
        setattr(self.working, attr_of(key), value)
        if key in ("defaultProfile", "headless", "attachOnly", "relayPort"):
            self._refresh_profile_list()
        self.validate()

    def _on_profile_field_changed(self, key: str) -> None:
        if self._loading or self.current_profile is None:
            return
        p = self.working.profiles[self.current_profile]
        value = self.profile_fields[key].value()
        setattr(p, attr_of(key), value)
        if key == "driver":
            self._on_driver_changed(p)
        if key == "color" and config.COLOR_RE.match(str(value or "")):
            item = self.profile_list.currentItem()
            if item is not None:
                item.setIcon(icons.color_chip(str(value)))
        self.validate()

    def _on_driver_changed(self, p: ProfileConfig) -> None:
        # Keep the profile consistent with its new driver, as POST /profiles/create would.
        if p.driver == "managed":
            p.cdp_url = None
            if p.cdp_port is None:
                p.cdp_port = config.allocate_cdp_port(self._without(p.name))
        elif p.driver == "extension":
            p.cdp_url, p.cdp_port = None, None
            p.headless = p.attach_only = p.user_data_dir = None
        else:
            p.cdp_port = None
            p.headless = p.attach_only = p.user_data_dir = None
        self._show_profile(p.name)

    def _without(self, name: str) -> Config:
        other = copy.deepcopy(self.working)
        other.profiles.pop(name, None)
        return other

    def _on_name_edited(self, text: str) -> None:
        old = self.current_profile
        if old is None or old not in self.new_profiles:
            return
        try:
            config.validate_profile_name(text)
        except InvalidInput as exc:
            self.name_error.show_error(exc.message)
            self._update_save()
            return
        if text != old and text in self.working.profiles:
            self.name_error.show_error(f"a profile named {text!r} already exists")
            self._update_save()
            return
        self.name_error.show_error(None)
        if text != old:
            p = self.working.profiles.pop(old)
            p.name = text
            self.working.profiles[text] = p
            self.new_profiles.discard(old)
            self.new_profiles.add(text)
            if self.working.default_profile == old:
                self.working.default_profile = text
            self.current_profile = text
            self._refresh_profile_list(select=text)
            self.name_edit.setFocus()
        self.validate()

    def add_profile(self) -> None:
        n = 1
        while f"profile-{n}" in self.working.profiles:
            n += 1
        name = f"profile-{n}"
        profile = ProfileConfig(
            name,
            "managed",
            config.next_color(self.working),
            cdp_port=config.allocate_cdp_port(self.working),
        )
        self.working.profiles[name] = profile
        self.new_profiles.add(name)
        self._refresh_profile_list(select=name)
        self.name_edit.setFocus()
        self.name_edit.selectAll()
        self.validate()

    def ask_delete_profile(self) -> QMessageBox | None:
        name = self.current_profile
        if name is None:
            return None
        if name in self.new_profiles:
            self.delete_profile(name)
            return None
        p = self.working.profiles[name]
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete profile")
        box.setText(f"Delete the profile “{name}”?")
        if p.driver == "managed" and not p.user_data_dir:
            box.setInformativeText(
                "Its browser is stopped and its browser data (history, "
                "cookies, logins) is removed when you save."
            )
        else:
            box.setInformativeText(
                "Its browser is stopped when you save. No browser data is removed."
            )
        box.setStandardButtons(QMessageBox.StandardButton.Cancel)
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(lambda b: self.delete_profile(name) if b is delete else None)
        box.open()  # never exec(): the asyncio loop keeps running
        return box

    def delete_profile(self, name: str) -> None:
        if name not in self.working.profiles or name == self.working.default_profile:
            return
        del self.working.profiles[name]
        if name in self.new_profiles:
            self.new_profiles.discard(name)
        elif name not in self.deleted:
            self.deleted.append(name)
        self.current_profile = None
        self._refresh_profile_list(select=self.working.default_profile)
        self.validate()

    # --- validation ----------------------------------------------------------------
    def validate(self) -> list[str]:
        """Check every field and the whole candidate; returns the problems (empty = OK)."""
        problems: list[str] = []
        inline: list[str] = []  # shown under their field already: not repeated below
        for field in self.fields.values():
            message = field.validate()
            if message:
                problems.append(message)
                inline.append(message)
        exe = self.fields["executablePath"].value()
        if exe and not problems and not os.access(os.path.expanduser(exe), os.X_OK):
            self.fields["executablePath"].error.show_error(
                "no executable file at this path; the browser would fail to start", warning=True
            )
        if self.current_profile is not None:
            for field in self.profile_fields.values():
                form = self.editor.layout()
                assert isinstance(form, QFormLayout)
                if not form.isRowVisible(self._row_of(field.setting.key)):
                    field.error.show_error(None)
                    continue
                message = field.validate()
                if message:
                    problems.append(f"{self.current_profile}: {message}")
                    inline.append(problems[-1])
        if self.name_error.isVisible():
            problems.append(self.name_error.text())
            inline.append(problems[-1])
        for name, p in self.working.profiles.items():
            try:
                config.parse_profile(name, p.to_json(), f"profile {name!r}")
            except InvalidInput as exc:
                shown_here = name == self.current_profile and any(
                    p.startswith(f"{name}: ") for p in inline
                )
                if not shown_here:  # else its field already says it, once
                    problems.append(exc.message)
        if not problems:
            try:
                config.check_consistency(self.working)
            except InvalidInput as exc:
                problems.append(exc.message)
                if self._mark_collision(exc.message):
                    inline.append(exc.message)
        self._problems = problems
        # Each problem is shown once: under its field when it has one, else here.
        rest = [p for p in dict.fromkeys(problems) if p not in inline]
        if problems and not rest:
            rest = ["Fix the field marked ✕ to save."]
        self.problem.setText("\n".join(rest))
        self.problem.setVisible(bool(problems))
        self._probe_ports()
        self._update_save()
        return problems

    def _mark_collision(self, message: str) -> bool:
        """Show a port collision under each port field holding that port (True: shown)."""
        match = re.search(r"port (\d+) is used twice", message)
        if not match:
            return False
        port = int(match.group(1))
        shown = False
        for key in NETWORK_KEYS:
            if self.fields[key].value() == port:
                self.fields[key].error.show_error(message)
                shown = True
        if self.current_profile is not None:
            field = self.profile_fields["cdpPort"]
            p = self.working.profiles[self.current_profile]
            effective = self.working.relay_port_of(p) if p.driver == "extension" else p.cdp_port
            if effective == port:
                field.error.show_error(message)
                shown = True
        return shown

    def _probe_ports(self) -> None:
        """Flag, under its field, a port another program already holds (probed now).

        A port this browserdeck holds itself (the saved value, while it runs) is not a
        problem; any other port that cannot be bound on 127.0.0.1 would fail at start.
        """
        checks: list[tuple[Field, int | None, int | None]] = [
            (self.fields[key], self.fields[key].value(), getattr(self.original, attr_of(key)))
            for key in NETWORK_KEYS
        ]
        if self.current_profile is not None:
            p = self.working.profiles[self.current_profile]
            before = self.original.profiles.get(self.current_profile)
            if p.driver == "managed":
                checks.append(
                    (self.profile_fields["cdpPort"], p.cdp_port, before.cdp_port if before else None)
                )
        for field, port, saved in checks:
            if not isinstance(port, int) or (field.error.text() and not field.warned):
                continue  # a real error is already shown there
            ours = self.running and port == saved
            holder = None if ours else port_holder(port)
            if holder is not None:
                field.error.show_error(holder, warning=True)
                field.warned = True
            elif field.warned:
                field.error.show_error(None)
                field.warned = False

    def _update_save(self) -> None:
        blocked = bool(getattr(self, "_problems", [])) or self.name_error.isVisible()
        self.save_button.setEnabled(not blocked and not self._saving)

    # --- saving --------------------------------------------------------------------
    def candidate(self) -> Config:
        return copy.deepcopy(self.working)

    def save(self) -> None:
        if self._saving or self.validate():
            return
        self._saving = True
        self._set_busy(True)
        candidate = self.candidate()
        deleted = list(self.deleted)

        async def go() -> None:
            try:
                await self._apply(candidate, deleted)
            except BrowserdeckError as exc:
                self._saving = False
                self._set_busy(False)
                self.problem.setText(f"Not saved: {exc}")
                self.problem.show()
                self._update_save()
                return
            except Exception as exc:
                log.exception("saving settings")
                self._saving = False
                self._set_busy(False)
                self.problem.setText(f"Not saved: {type(exc).__name__}: {exc}")
                self.problem.show()
                self._update_save()
                return
            self._saving = False
            self.saved.emit(candidate)
            self.accept()

        aio.create_task(go(), name="gui-save-settings")

    def _set_busy(self, busy: bool) -> None:
        self.tabs.setEnabled(not busy)
        self.status.setText("Saving and applying…" if busy else "")
        self._update_save()

    def select_profile(self, name: str) -> None:
        """Open the Profiles page on ``name`` (used by the tray and tests)."""
        self.tabs.setCurrentIndex(1)
        self._refresh_profile_list(select=name)


def port_holder(port: int) -> str | None:
    """Why ``port`` cannot be used on 127.0.0.1 right now (another program holds it), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            pass
        else:
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
