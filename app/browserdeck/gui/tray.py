"""The tray icon and its menu, rebuilt from ``DeckModel`` whenever state changes.

Menu layout (what a person sees, top to bottom)::

    browserdeck · API on 127.0.0.1:18791      (disabled header)
    ■ agent — running · 2 tabs             ▸  Start/Stop, New tab…, Ask before agents act
                                              (4 choices), its tabs ▸ Focus/Close
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

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QSystemTrayIcon, QWidget

from browserdeck import states
from browserdeck.driverspecs import SPECS, spec_or_default
from browserdeck.gui import icons, trace
from browserdeck.gui.approval import ApprovalMenu
from browserdeck.gui.model import DeckModel

if TYPE_CHECKING:
    from browserdeck.tabs import Tab

log = logging.getLogger(__name__)


MAX_MENU_TABS = 25


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
    stopAgentsRequested = Signal()
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
        self.profile_menus: dict[str, ProfileMenu] = {}
        self._separators: dict[str, QAction] = {}
        self._dialogs: list[QWidget] = []
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._on_activated)

        # The fixed actions belong to this controller, not to the menu: QMenu.clear()
        # deletes the actions the menu owns, and the menu is rebuilt on every change.
        self.header = QAction("browserdeck", self)
        self.header.setEnabled(False)
        self.error_action = QAction("", self)
        self.error_action.setEnabled(False)
        self.retry_action = QAction("Retry starting browserdeck", self)
        self.retry_action.triggered.connect(self.retryRequested)
        self.stop_agents_action = self._action("Stop all agents", self.stopAgentsRequested)
        self.stop_agents_action.setObjectName("stopAllAgents")
        self.stop_agents_action.setToolTip(
            "End every agent session, close the tabs agents opened and stop sharing "
            "your Chrome tabs"
        )
        self.panel_action = self._action("Open status panel", self.openPanelRequested)
        self.settings_action = self._action("Settings…", self.settingsRequested)
        self.pair_action = self._action("Pair extension…", self.pairRequested)
        self.token_action = self._action("Copy API token", self.copyTokenRequested)
        self.mcp_action = self._action("Copy MCP config", self.copyMcpRequested)
        self.logs_action = self._action("Open logs folder", self.openLogsRequested)
        # No shortcut shown: a key sequence does nothing in a tray menu (docs/gui.md).
        self.quit_action = self._action("Quit browserdeck", self.quitRequested)
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

    def icon_rect(self) -> list[int]:
        """Where the icon sits on the screen: x, y, width, height (empty if not in a tray)."""
        r = self.icon.geometry()
        return [r.x(), r.y(), r.width(), r.height()]

    def watch_embedding(self) -> None:
        """Report (trace) when the icon really sits in a tray: it then has a geometry."""
        timer = QTimer(self)
        timer.setInterval(20)
        ticks = [0]

        def check() -> None:
            ticks[0] += 1
            geometry = self.icon.geometry()
            if geometry.isValid() and not geometry.isEmpty():
                timer.stop()
                trace.emit("tray-visible", geometry=self.icon_rect())
            elif ticks[0] > 500:  # 10 s: report it, the icon may still show later
                timer.stop()
                trace.emit("tray-not-embedded")

        timer.timeout.connect(check)
        timer.start()

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
        self.icon.setIcon(icons.tray_icon(color, state, model.trouble_elsewhere()))
        lines = ["browserdeck"]
        if model.service_error:
            lines.append("could not start: " + elide(model.service_error, 80))
        for name in model.profile_names():
            status = model.statuses.get(name)
            if status is not None:
                lines.append(f"{name}: {states.label(status)}")
        self.icon.setToolTip("\n".join(lines))

    def _separator(self, key: str) -> QAction:
        action = self._separators.get(key)
        if action is None:
            action = self._separators[key] = QAction(self)
            action.setSeparator(True)
        return action

    def rebuild(self) -> None:
        """Bring the menu up to date, in place.

        A visible QMenu that is cleared closes (it is empty for a moment), and an open
        submenu closes when its action is removed: so existing actions are kept and
        only what changed is inserted or removed (``sync_actions``). The menu can stay
        open while profiles start, stop and open tabs.
        """
        model = self.model
        self.update_icon()
        overview = model.overview()
        running = overview is not None and overview.started
        if overview is not None and running:
            self.header.setText(f"browserdeck · API on 127.0.0.1:{overview.control_port}")
        elif model.service_error:
            self.header.setText("browserdeck could not start")
        else:
            self.header.setText("browserdeck · starting…")
        desired: list[QAction] = [self.header]
        if model.service_error:
            self.error_action.setText(elide(model.service_error, 70))
            self.error_action.setToolTip(model.service_error)
            desired += [self.error_action, self.retry_action]
        desired.append(self._separator("profiles"))
        names = model.profile_names()
        for gone in set(self.profile_menus) - set(names):
            self.profile_menus.pop(gone).dispose()
        for name in names:
            pm = self.profile_menus.get(name)
            if pm is None:
                pm = self.profile_menus[name] = ProfileMenu(self, name)
            pm.update()
            desired.append(pm.menu.menuAction())
        desired += [
            self._separator("agents"),
            self.stop_agents_action,
            self._separator("windows"),
            self.panel_action,
            self.settings_action,
        ]
        # Offered only when it does something: pairing is for a profile on your Chrome.
        if model.has_extension_profile():
            desired.append(self.pair_action)
        desired += [
            self._separator("copy"),
            self.token_action,
            self.mcp_action,
            self.logs_action,
            self._separator("quit"),
            self.quit_action,
        ]
        sync_actions(self.menu, desired)
        for action in (self.token_action, self.mcp_action, self.pair_action):
            action.setEnabled(running)
        # Offered only when there is something to stop; greyed, it says why not.
        agents = running and model.agents_present
        self.stop_agents_action.setEnabled(agents)
        self.stop_agents_action.setText("Stop all agents" if agents else "Stop all agents (none)")
        self.stop_agents_action.setToolTip(
            "End every agent session, close the tabs agents opened and stop sharing your "
            "Chrome tabs"
            if agents
            else "No agent is connected and no tab is an agent's: nothing to stop"
        )

    def _rebuild_profile(self, name: str) -> None:
        pm = self.profile_menus.get(name)
        if pm is None:
            self.rebuild()
        else:
            pm.update()

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
        for dialog in list(self._dialogs):  # New tab… dialogs delete themselves on close
            dialog.close()
        self.icon.hide()
        self.icon.setContextMenu(None)  # type: ignore[arg-type]
        for pm in self.profile_menus.values():
            pm.dispose()
        self.profile_menus.clear()
        self.menu.deleteLater()


def sync_actions(menu: QMenu, desired: list[QAction]) -> None:
    """Make ``menu.actions()`` equal ``desired``, touching only what differs.

    New actions are inserted before stale ones are removed, so the menu is never
    empty (an empty visible QMenu closes itself).
    """
    if menu.actions() == desired:
        return
    for i, action in enumerate(desired):
        current = menu.actions()
        if i < len(current) and current[i] is action:
            continue
        if action in current:
            menu.removeAction(action)
            current = menu.actions()
        before = current[i] if i < len(current) else None
        menu.insertAction(before, action)  # type: ignore[arg-type]
    for extra in menu.actions()[len(desired) :]:
        menu.removeAction(extra)


class ProfileMenu(QObject):
    """One profile's submenu: colour chip and state in its title, Start/Stop, New tab…,
    and a submenu per open tab (Focus, Close). Updated in place, like the main menu."""

    def __init__(self, tray: TrayController, name: str) -> None:
        super().__init__(tray)
        self.tray, self.name = tray, name
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)
        self.menu.setObjectName(f"profileMenu-{name}")
        self.info = QAction(self)
        self.info.setEnabled(False)
        self.detail = QAction(self)
        self.detail.setEnabled(False)
        self.sep_actions = QAction(self)
        self.sep_actions.setSeparator(True)
        self.toggle = QAction(self)
        self.toggle.setObjectName(f"toggle-{name}")
        self.toggle.triggered.connect(self._toggle)
        self.new_tab = QAction("New tab…", self)
        self.new_tab.setObjectName(f"newtab-{name}")
        self.new_tab.triggered.connect(lambda *_: tray.ask_new_tab(name))
        self.approval = ApprovalMenu(tray.model, name, self)
        self.sep_tabs = QAction(self)
        self.sep_tabs.setSeparator(True)
        self.heading = QAction(self)
        self.heading.setEnabled(False)
        self.more = QAction(self)
        self.more.triggered.connect(lambda *_: tray.openPanelRequested.emit())
        self.tab_menus: dict[str, TabAction] = {}
        # A browser-service profile: browsers held, the service's health, who holds which.
        self.remote_actions: list[QAction] = []
        self._active = False

    def _toggle(self) -> None:
        # Decided at click time from the current state, not when the menu was built.
        if self._active:
            self.tray.model.stop_profile(self.name)
        else:
            self.tray.model.start_profile(self.name)

    def update(self) -> None:
        model, name = self.tray.model, self.name
        status = model.statuses.get(name)
        color = model.color_of(name)
        driver = status.driver if status is not None else model.driver_of(name)
        default = " (default)" if name == model.default_profile else ""
        self.menu.setTitle(f"{name}{default} — {states.label(status) if status else '…'}")
        self.menu.setIcon(icons.color_chip(color, states.mark(status) if status else None))
        self.info.setIcon(icons.color_chip(color))
        known = SPECS.get(driver)
        self.info.setText(f"{name} · {known.summary if known else driver}")
        desired = [self.info]
        detail = status.detail if status is not None else None
        if detail:
            self.detail.setText(elide(detail, 60))
            self.detail.setToolTip(detail)
            desired.append(self.detail)
        remote = status.remote if status is not None else None
        remote_lines = states.remote_lines(remote) if remote else []
        while len(self.remote_actions) < len(remote_lines):
            action = QAction(self)
            action.setEnabled(False)
            action.setObjectName(f"remote-{name}-{len(self.remote_actions)}")
            self.remote_actions.append(action)
        for action, line in zip(self.remote_actions, remote_lines, strict=False):
            action.setText(elide(line, 60))
            action.setToolTip(line)
            desired.append(action)
        self._active = status is not None and states.is_active(status)
        verbs = states.verbs_of(driver)
        self.toggle.setText(verbs.stop if self._active else verbs.start)
        connected = status is not None and bool(status.extension_connected)
        self.new_tab.setEnabled(not spec_or_default(driver).via_extension or connected)
        self.approval.update()
        desired += [self.sep_actions, self.toggle, self.new_tab, *self.approval.actions()]
        tabs = model.tabs.get(name, [])
        shown = tabs[:MAX_MENU_TABS]
        for gone in set(self.tab_menus) - {t.target_id for t in shown}:
            self.tab_menus.pop(gone).dispose()
        if tabs:
            self.heading.setText(f"Open tabs ({len(tabs)}) — click one to bring it to the front")
            desired += [self.sep_tabs, self.heading]
            for tab in shown:
                tm = self.tab_menus.get(tab.target_id)
                if tm is None:
                    tm = self.tab_menus[tab.target_id] = TabAction(self, tab)
                tm.update(tab)
                desired.append(tm.action)
            if len(tabs) > MAX_MENU_TABS:
                self.more.setText(f"… {len(tabs) - MAX_MENU_TABS} more in the status panel")
                desired.append(self.more)
        sync_actions(self.menu, desired)

    def dispose(self) -> None:
        self.approval.dispose()
        for tm in self.tab_menus.values():
            tm.dispose()
        self.tab_menus.clear()
        self.menu.deleteLater()
        self.deleteLater()


class TabAction(QObject):
    """One open tab in a profile's submenu: click brings it to the front.

    An action, not a third-level submenu: a submenu of a submenu opened over the main
    menu at the screen's edge (docs/gui.md). Tabs are closed from the status panel.
    """

    def __init__(self, parent: ProfileMenu, tab: Tab) -> None:
        super().__init__(parent)
        model, profile, target = parent.tray.model, parent.name, tab.target_id
        self.action = QAction(self)
        self.action.triggered.connect(lambda *_: model.focus_tab(profile, target))

    def update(self, tab: Tab) -> None:
        self.action.setText(elide(tab.title or tab.url or "(untitled)", 44))
        self.action.setToolTip(f"{tab.url}\nClick to bring it to the front")

    def dispose(self) -> None:
        self.deleteLater()


def _bold(action: QAction) -> QFont:
    font = action.font()
    font.setBold(True)
    return font
