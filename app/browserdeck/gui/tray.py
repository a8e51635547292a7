"""The tray icon and its menu, rebuilt from ``DeckModel`` whenever state changes.

Menu layout (what a person sees, top to bottom)::

    browserdeck · API on 127.0.0.1:18791      (disabled header)
    ■ agent — running · 2 tabs             ▸  Start/Stop, New tab…, its tabs ▸ Focus/Close
    ■ chrome — waiting for the extension   ▸
    Open status panel
    Settings…
    Pair extension…
    Copy API token
    Copy MCP config
    Open logs folder
    Quit
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QSystemTrayIcon, QWidget

from browserdeck.gui import icons
from browserdeck.gui.model import DeckModel, profile_mark, state_text

if TYPE_CHECKING:
    from browserdeck.service import Tab

log = logging.getLogger(__name__)


def elide(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TrayController(QObject):
    """Owns the QSystemTrayIcon and its menu. Emits requests; the app decides what they do."""

    openPanelRequested = Signal()
    settingsRequested = Signal()
    pairRequested = Signal()
    copyTokenRequested = Signal()
    copyMcpRequested = Signal()
    openLogsRequested = Signal()
    retryRequested = Signal()
    quitRequested = Signal()
    visibleChanged = Signal(bool)

    def __init__(self, model: DeckModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.icon = QSystemTrayIcon(self)
        self.icon.setToolTip("browserdeck")
        self.menu = QMenu()
        self.menu.setObjectName("trayMenu")
        self.menu.setToolTipsVisible(True)
        self.menu.aboutToShow.connect(model.refresh)
        self.profile_menus: dict[str, QMenu] = {}
        self._dialogs: list[QWidget] = []
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)

        # The fixed actions belong to this controller, not to the menu: QMenu.clear()
        # deletes the actions the menu owns, and the menu is rebuilt on every change.
        self.header = QAction("browserdeck", self)
        self.header.setEnabled(False)
        self.retry_action = QAction("Retry starting browserdeck", self)
        self.retry_action.triggered.connect(self.retryRequested)
        self.panel_action = self._action("Open status panel", self.openPanelRequested)
        self.settings_action = self._action("Settings…", self.settingsRequested)
        self.pair_action = self._action("Pair extension…", self.pairRequested)
        self.token_action = self._action("Copy API token", self.copyTokenRequested)
        self.mcp_action = self._action("Copy MCP config", self.copyMcpRequested)
        self.logs_action = self._action("Open logs folder", self.openLogsRequested)
        self.quit_action = self._action("Quit browserdeck", self.quitRequested)
        self.quit_action.setShortcut("Ctrl+Q")
        self.panel_action.setFont(_bold(self.panel_action))

        model.profilesChanged.connect(self.rebuild)
        model.tabsChanged.connect(self._rebuild_profile)
        self.rebuild()

    def _action(self, text: str, signal: SignalInstance) -> QAction:
        action = QAction(text, self)
        action.triggered.connect(lambda *_: signal.emit())
        return action

    # --- visibility --------------------------------------------------------------
    def show(self) -> None:
        self.update_icon()
        self.icon.show()
        self.visibleChanged.emit(True)

    def hide(self) -> None:
        self.icon.hide()
        self.visibleChanged.emit(False)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        # Left click opens the panel, as on most desktops; right click shows the menu (Qt).
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.openPanelRequested.emit()

    # --- building ----------------------------------------------------------------
    def update_icon(self) -> None:
        model = self.model
        state = model.tray_state()
        color = model.color_of(model.default_profile)
        self.icon.setIcon(icons.tray_icon(color, state))
        lines = ["browserdeck"]
        if model.service_error:
            lines.append("could not start: " + elide(model.service_error, 80))
        for name in model.profile_names():
            status = model.statuses.get(name)
            if status is not None:
                lines.append(f"{name}: {state_text(status)}")
        self.icon.setToolTip("\n".join(lines))

    def rebuild(self) -> None:
        """Rebuild the whole menu (profiles added/removed, states changed)."""
        model = self.model
        self.update_icon()
        menu = self.menu
        menu.clear()
        service = model.service
        if service is not None and service.started:
            self.header.setText(f"browserdeck · API on 127.0.0.1:{service.control_port}")
        elif model.service_error:
            self.header.setText("browserdeck could not start")
        else:
            self.header.setText("browserdeck · starting…")
        menu.addAction(self.header)
        if model.service_error:
            error = QAction(elide(model.service_error, 70), menu)
            error.setEnabled(False)
            error.setToolTip(model.service_error)
            menu.addAction(error)
            menu.addAction(self.retry_action)
        menu.addSeparator()
        old_menus, self.profile_menus = self.profile_menus, {}
        for name in model.profile_names():
            sub = old_menus.pop(name, None) or QMenu(menu)
            sub.setToolTipsVisible(True)
            self.profile_menus[name] = sub
            self._fill_profile_menu(name, sub)
            menu.addMenu(sub)
        for gone in old_menus.values():
            gone.deleteLater()
        menu.addSeparator()
        for action in (self.panel_action, self.settings_action, self.pair_action):
            menu.addAction(action)
        menu.addSeparator()
        for action in (self.token_action, self.mcp_action, self.logs_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        running = service is not None and service.started
        for action in (self.token_action, self.mcp_action, self.pair_action):
            action.setEnabled(running)

    def _rebuild_profile(self, name: str) -> None:
        sub = self.profile_menus.get(name)
        if sub is None:
            self.rebuild()
        else:
            self._fill_profile_menu(name, sub)

    def _fill_profile_menu(self, name: str, sub: QMenu) -> None:
        model = self.model
        status = model.statuses.get(name, {})
        state = str(status.get("state", "stopped"))
        color = model.color_of(name)
        driver = str(status.get("driver") or _driver_of(model, name))
        default = " (default)" if name == model.default_profile else ""
        text = state_text(status) if status else "…"
        sub.setTitle(f"{name}{default} — {text}")
        sub.setIcon(icons.color_chip(color, profile_mark(status) if status else None))
        for old in sub.findChildren(QMenu):  # the tab submenus of the previous fill
            old.deleteLater()
        sub.clear()
        info = QAction(icons.color_chip(color), f"{name} · {driver} · {color}", sub)
        info.setEnabled(False)
        sub.addAction(info)
        if status.get("detail"):
            detail = QAction(elide(str(status["detail"]), 60), sub)
            detail.setEnabled(False)
            detail.setToolTip(str(status["detail"]))
            sub.addAction(detail)
        sub.addSeparator()
        active = state in ("running", "starting") or bool(status.get("running"))
        if driver == "extension":
            start_text, stop_text = "Start relay", "Stop relay"
        elif driver == "remote":
            start_text, stop_text = "Connect", "Disconnect"
        else:
            start_text, stop_text = "Start browser", "Stop browser"
        toggle = QAction(stop_text if active else start_text, sub)
        toggle.setObjectName(f"toggle-{name}")
        if active:
            toggle.triggered.connect(lambda *_, n=name: model.stop_profile(n))
        else:
            toggle.triggered.connect(lambda *_, n=name: model.start_profile(n))
        sub.addAction(toggle)
        new_tab = QAction("New tab…", sub)
        new_tab.setObjectName(f"newtab-{name}")
        new_tab.triggered.connect(lambda *_, n=name: self.ask_new_tab(n))
        new_tab.setEnabled(driver != "extension" or bool(status.get("extensionConnected")))
        sub.addAction(new_tab)
        tabs = model.tabs.get(name, [])
        if tabs:
            sub.addSeparator()
            heading = QAction(f"Open tabs ({len(tabs)})", sub)
            heading.setEnabled(False)
            sub.addAction(heading)
            for tab in tabs[:25]:
                sub.addMenu(self._tab_menu(name, tab, sub))
            if len(tabs) > 25:
                more = QAction(f"… {len(tabs) - 25} more in the status panel", sub)
                more.triggered.connect(lambda *_: self.openPanelRequested.emit())
                sub.addAction(more)

    def _tab_menu(self, profile: str, tab: Tab, parent: QMenu) -> QMenu:
        menu = QMenu(elide(tab.title or tab.url or "(untitled)", 44), parent)
        menu.setToolTipsVisible(True)
        menu.menuAction().setToolTip(tab.url)
        url = QAction(elide(tab.url, 60), menu)
        url.setEnabled(False)
        menu.addAction(url)
        focus = QAction("Focus", menu)
        focus.triggered.connect(lambda *_: self.model.focus_tab(profile, tab.target_id))
        close = QAction("Close", menu)
        close.triggered.connect(lambda *_: self.model.close_tab(profile, tab.target_id))
        menu.addAction(focus)
        menu.addAction(close)
        return menu

    # --- new tab (non-modal: no exec() while the asyncio loop is running) ---------
    def ask_new_tab(self, profile: str) -> QInputDialog:
        dialog = QInputDialog()
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.setWindowTitle(f"New tab — {profile}")
        dialog.setWindowIcon(icons.app_icon(self.model.color_of(profile)))
        dialog.setLabelText(f"Open a tab in profile “{profile}” at:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
        dialog.setTextValue("https://")
        dialog.setOkButtonText("Open")
        dialog.resize(420, dialog.sizeHint().height())
        dialog.textValueSelected.connect(lambda url: self.model.open_tab(profile, url))
        dialog.destroyed.connect(lambda *_: self._forget(dialog))
        self._dialogs.append(dialog)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def _forget(self, dialog: QWidget) -> None:
        if dialog in self._dialogs:
            self._dialogs.remove(dialog)

    def notify(self, title: str, message: str, level: str = "info") -> None:
        kind = {
            "error": QSystemTrayIcon.MessageIcon.Critical,
            "warning": QSystemTrayIcon.MessageIcon.Warning,
        }.get(level, QSystemTrayIcon.MessageIcon.Information)
        self.icon.showMessage(title, message, kind, 6000)

    def dispose(self) -> None:
        self.icon.hide()
        self.icon.setContextMenu(None)  # type: ignore[arg-type]
        self.menu.deleteLater()


def _bold(action: QAction) -> QFont:
    font = action.font()
    font.setBold(True)
    return font


def _driver_of(model: DeckModel, name: str) -> str:
    if model.service is not None and name in model.service.config.profiles:
        return model.service.config.profiles[name].driver
    return "?"
