"""The settings dialog's pages (General, Profiles, Advanced) and how a profile is shown.

``SettingsPages`` builds the widgets and loads values into them; ``SettingsDialog``
(dialog.py) adds what happens on an edit, validation and Save.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from browserdeck import driverspecs as drivers
from browserdeck.config import PROFILE_FIELDS, SETTINGS, Config, Setting
from browserdeck.gui import icons
from browserdeck.gui.settings.fields import (
    DRIVER_TEXT,
    Field,
    FieldError,
    _form_row,
    _hint_label,
    _scrolled,
    attr_of,
)


def list_column(
    names: tuple[str, str, str],
    remove_text: str,
    on_select: Callable[[QListWidgetItem | None, QListWidgetItem | None], None],
    on_add: Callable[[], object],
    on_remove: Callable[[], object],
) -> tuple[QVBoxLayout, QListWidget, QPushButton, QPushButton]:
    """A page's left column: a list of what it edits, Add and Remove under it; ``names``:
    the object names of the list and the two buttons (tests find them by these)."""
    column = QVBoxLayout()
    items = QListWidget()
    items.setObjectName(names[0])
    items.setMaximumWidth(220)
    items.currentItemChanged.connect(on_select)
    column.addWidget(items, 1)
    buttons = QHBoxLayout()
    add = QPushButton("Add")
    add.setObjectName(names[1])
    add.clicked.connect(on_add)
    remove = QPushButton(remove_text)
    remove.setObjectName(names[2])
    remove.clicked.connect(on_remove)
    buttons.addWidget(add)
    buttons.addWidget(remove)
    column.addLayout(buttons)
    return column, items, add, remove



class SettingsPages(QDialog):
    """The dialog's widgets: built from the schema, filled from ``working``."""

    working: Config
    fields: dict[str, Field]
    profile_fields: dict[str, Field]
    current_profile: str | None
    new_profiles: set[str]
    _loading: bool

    # Handlers the dialog (dialog.py) defines; the pages connect their widgets to them.
    def _on_global_changed(self, key: str) -> None:
        raise NotImplementedError

    def _on_profile_field_changed(self, key: str) -> None:
        raise NotImplementedError

    def _on_name_edited(self, text: str) -> None:
        raise NotImplementedError

    def add_profile(self) -> None:
        raise NotImplementedError

    def ask_delete_profile(self) -> QMessageBox | None:
        raise NotImplementedError

    def validate(self) -> list[str]:
        raise NotImplementedError

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
            if setting.group in ("general", "ports"):
                _form_row(net if setting.group == "ports" else form, self._make_field(setting))
        outer.addLayout(form)
        group = QGroupBox("Ports (127.0.0.1 only)")
        group.setLayout(net)
        outer.addWidget(group)
        outer.addStretch(1)
        return _scrolled(page)

    def _advanced_page(self) -> QWidget:
        page = QWidget()
        outer = QVBoxLayout(page)
        note = _hint_label(
            "Rarely needed. Every setting is also in the config file (the command "
            "“browserdeck paths” shows where it is)."
        )
        outer.addWidget(note)
        form = QFormLayout()
        for setting in SETTINGS:
            if setting.group == "advanced":
                _form_row(form, self._make_field(setting))
        outer.addLayout(form)
        outer.addStretch(1)
        return _scrolled(page)

    def _profiles_page(self) -> QWidget:
        page = QWidget()
        outer = QHBoxLayout(page)
        left, self.profile_list, self.add_button, self.delete_button = list_column(
            ("profileList", "addProfile", "deleteProfile"),
            "Delete…",
            self._on_profile_selected,
            self.add_profile,
            self.ask_delete_profile,
        )
        self.profile_list.setMinimumWidth(170)
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
            field = Field(setting, self)
            field.changed.connect(lambda key=setting.key: self._on_profile_field_changed(key))
            self.profile_fields[setting.key] = field
            _form_row(form, field)
        self.stack = QStackedWidget()
        empty = QLabel("Select a profile, or add one.")
        empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(empty)
        self.stack.addWidget(_scrolled(self.editor))
        right.addWidget(self.stack, 1)

        group = QGroupBox("All managed browsers")
        browser_form = QFormLayout(group)
        for setting in SETTINGS:
            if setting.group == "browsers":
                _form_row(browser_form, self._make_field(setting))
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
            inherited = self.working.approval or drivers.spec_of(p.driver).approval
            source = "global setting" if self.working.approval else "driver's default"
            self.profile_fields["approval"].widget.setItemText(  # type: ignore[attr-defined]
                0, f"Use the {source} ({inherited})"
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
        # Only the driver's own fields: the others are noise on this profile.
        spec = drivers.spec_of(driver)
        visible = {k: k in spec.fields for k in drivers.DRIVER_FIELDS if k in self.profile_fields}
        for key, show in visible.items():
            form.setRowVisible(self._row_of(key), show)
        spin = self.profile_fields["cdpPort"].widget
        assert isinstance(spin, QSpinBox)
        if spec.port == "cdp":  # its own port, required
            spin.setSpecialValueText("")
            spin.setMinimum(1024)
        else:
            spin.setMinimum(1023)
            spin.setSpecialValueText(f"Use the relay port ({self.working.relay_port})")
        label = form.labelForField(self._row_of("cdpPort"))
        if isinstance(label, QLabel):
            label.setText("Relay port:" if spec.port == "relay" else "CDP port:")

    def _row_of(self, key: str) -> QWidget:
        """The box holding a profile field's editor, hint and error (one form row)."""
        row = self.profile_fields[key].widget.parentWidget()
        assert row is not None
        return row
