"""The settings dialog: edits, validation as a whole, and Save (non-modal, never blocks)."""

from __future__ import annotations

import copy
import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from browserdeck import config
from browserdeck import driverspecs as drivers
from browserdeck.config import Config, ProfileConfig
from browserdeck.errors import BrowserdeckError, InvalidInput
from browserdeck.gui import icons
from browserdeck.gui.settings.fields import (
    PORT_KEYS,
    Field,
    attr_of,
    port_holder,
)
from browserdeck.gui.settings.pages import SettingsPages
from browserdeck.gui.settings.restart import ask_restart
from browserdeck.gui.settings.secrets_page import SecretsPage
from browserdeck.secrets import vault as vaults
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.reconfig import Applied, Restart
    from browserdeck.secrets.vault import Vault

log = logging.getLogger(__name__)

# Saves the candidate (deleted profiles go with their data); restart: the running
# browsers whose new settings need a restart restart now, else at their next start.
Apply = Callable[[Config, list[str], bool], Awaitable["Applied"]]
# The running browsers saving a candidate would restart (asked before saving).
Restarts = Callable[[Config], Awaitable[list["Restart"]]]


class SettingsDialog(SettingsPages):
    """Non-modal: show() it; Save runs ``apply`` as a task and closes on success."""

    saved = Signal(object)  # what saving did to running browsers (reconfig.Applied)

    def __init__(
        self,
        current: Config,
        apply: Apply,
        parent: QWidget | None = None,
        *,
        running: bool = True,
        restarts: Restarts | None = None,
        vault: Vault | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        # Qt adds " — browserdeck" (the application's display name) to every title.
        self.setWindowTitle("Settings")
        self.setWindowIcon(
            icons.app_icon(current.profiles.get(current.default_profile, ProfileConfig("x")).color)
        )
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.original = current
        self.running = running
        self.working = copy.deepcopy(current)
        self.deleted: list[str] = []
        self._apply = apply
        self._restarts = restarts
        self.restart_box: QMessageBox | None = None
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
        # The user's secrets, kept at once in the vault (not with Save: no value in ``working``).
        self.secrets_page = SecretsPage(vault or vaults.shared())
        self.tabs.addTab(self.secrets_page, "Secrets")

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
        spec = drivers.spec_of(p.driver)
        # Fields the new driver does not use are cleared (the dialog hides them).
        for key in drivers.DRIVER_FIELDS:
            if key not in spec.fields:
                setattr(p, attr_of(key), None)
        if spec.port == "cdp" and p.cdp_port is None:
            p.cdp_port = config.allocate_cdp_port(self._without(p.name))
        elif spec.port == "relay":
            p.cdp_port = None  # the relay port, unless the user sets one
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
            self.name_error.show_error(exc.message)  # every problem of the name at once
            self._show_typed_name(text)
            self._update_save()
            return
        if text != old and text in self.working.profiles:
            self.name_error.show_error(f"a profile named {text!r} already exists")
            self._show_typed_name(text)
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

    def _show_typed_name(self, text: str) -> None:
        """The list shows the name as typed, marked, while it cannot be used (not the last
        name that could, a stale part of what the user is typing)."""
        item = self.profile_list.currentItem()
        if item is not None:
            item.setText(f"{text or '(no name)'} ✕")

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
        if drivers.spec_of(p.driver).launches and not p.user_data_dir:
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
        self._warn_shared_colour()
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

    def _warn_shared_colour(self) -> None:
        """A warning (Save stays possible) when another profile has the same colour: the
        two browsers' windows and icons would look alike."""
        name = self.current_profile
        field = self.profile_fields.get("color")
        if name is None or field is None or field.error.text().startswith("✕"):
            return
        colour = str(self.working.profiles[name].color or "").upper()
        same = sorted(
            other
            for other, p in self.working.profiles.items()
            if other != name and str(p.color or "").upper() == colour
        )
        if same:
            who = " and ".join(f"“{n}”" for n in same)
            field.error.show_error(
                f"{who} {'has' if len(same) == 1 else 'have'} this colour too: their windows "
                "and icons would look the same. Pick another to tell them apart.",
                warning=True,
            )
        elif field.error.text().startswith("⚠"):
            field.error.show_error(None)

    def _mark_collision(self, message: str) -> bool:
        """Show a port collision under each port field holding that port (True: shown)."""
        match = re.search(r"port (\d+) is used twice", message)
        if not match:
            return False
        port = int(match.group(1))
        shown = False
        for key in PORT_KEYS:
            if self.fields[key].value() == port:
                self.fields[key].error.show_error(message)
                shown = True
        if self.current_profile is not None:
            field = self.profile_fields["cdpPort"]
            p = self.working.profiles[self.current_profile]
            effective = self.working.port_of(p)
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
            for key in PORT_KEYS
        ]
        if self.current_profile is not None:
            p = self.working.profiles[self.current_profile]
            before = self.original.profiles.get(self.current_profile)
            if drivers.spec_of(p.driver).port == "cdp":
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

    def busy_ports(self) -> list[Field]:
        """The port fields that another program holds (probed as you type)."""
        fields = [self.fields[key] for key in PORT_KEYS]
        if self.current_profile is not None:
            fields.append(self.profile_fields["cdpPort"])
        return [f for f in fields if f.warned]

    def _update_save(self) -> None:
        # A port another program holds is a start that fails: Save waits for another port.
        busy = self.busy_ports()
        blocked = (
            bool(getattr(self, "_problems", [])) or self.name_error.isVisible() or bool(busy)
        )
        self.save_button.setEnabled(not blocked and not self._saving)
        if busy and not getattr(self, "_problems", []):
            self.problem.setText(
                "A port is in use by another program: pick another one (marked ⚠) to save."
            )
            self.problem.show()

    # --- saving --------------------------------------------------------------------
    def candidate(self) -> Config:
        return copy.deepcopy(self.working)

    def save(self) -> None:
        """Save; first, if running browsers would restart, ask: now, at their next start,
        or not at all (Cancel)."""
        if self._saving or self.validate():
            return
        self._saving = True
        self._set_busy(True)
        candidate = self.candidate()
        deleted = list(self.deleted)

        async def ask() -> None:
            needs: list[Restart] = []
            if self._restarts is not None:
                try:
                    needs = await self._restarts(candidate)
                except BrowserdeckError:
                    log.exception("asking which browsers would restart")
            if needs:
                self._ask_restart(needs, candidate, deleted)
            else:
                self._apply_task(candidate, deleted, restart=True)

        aio.create_task(ask(), name="gui-settings-restarts")

    def _ask_restart(self, needs: list[Restart], candidate: Config, deleted: list[str]) -> None:
        def chosen(restart: bool | None) -> None:
            if restart is None:  # Cancel: nothing saved, the dialog stays open as it was
                self._saving = False
                self._set_busy(False)
            else:
                self._apply_task(candidate, deleted, restart=restart)

        box = ask_restart(self, needs, chosen)
        box.destroyed.connect(lambda *_: setattr(self, "restart_box", None))
        self.restart_box = box

    def _apply_task(self, candidate: Config, deleted: list[str], *, restart: bool) -> None:
        async def go() -> None:
            try:
                applied = await self._apply(candidate, deleted, restart)
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
            self.saved.emit(applied)
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
