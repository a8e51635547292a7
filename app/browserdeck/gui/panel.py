"""The status panel: profiles, their tabs, the tab live, recent calls, recorded sessions.

Everything shown comes from ``DeckModel`` (in-process, through the front door); the
screenshot is ``Deck.screenshot``, the engine call agents make, so the panel shows
exactly what an agent gets (the panel's own calls are tagged as the GUI's and hidden
from the activity list).

The window is ``StatusPanel``: the profile list and the tabs here, the screenshot pane
(live) in ``gui/shot_pane.py``, the activity pane in ``gui/activity_pane.py``, the
Sessions view in ``gui/sessions_pane.py``, the profile rows, the banner and the words
for an empty tab list in ``gui/panel_parts.py``. Its size, its splitters and the recent
activity are kept across restarts (``gui/keep.py``). What stays here is the one
selection the panes share (which profile, which tab) and what follows from it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QHideEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from browserdeck import __version__, states
from browserdeck.driverspecs import spec_or_default
from browserdeck.gui import icons, keep, tabkeep
from browserdeck.gui.activity_pane import ActivityPane
from browserdeck.gui.model import Activity, DeckModel
from browserdeck.gui.panel_parts import (
    NAME_ROLE,
    STATUS_ROLE,
    Banner,
    ProfileDelegate,
    ProfileRow,
    detail_text,
    no_tab_message,
    section,
)
from browserdeck.gui.screenshot import Capture
from browserdeck.gui.sessions_pane import SessionsPane
from browserdeck.gui.shot_pane import ScreenshotPane
from browserdeck.recorded import TakeOverState
from browserdeck.results import ProfileStatus


class StatusPanel(QMainWindow):
    """The panel window. With no system tray it is the app's main window."""

    settingsRequested = Signal()
    retryRequested = Signal()
    quitRequested = Signal()
    firstPaint = Signal()

    def __init__(
        self, model: DeckModel, *, tray_available: bool = True, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.tray_available = tray_available
        self.setObjectName("statusPanel")
        self.setWindowTitle("browserdeck")
        self.setWindowIcon(icons.app_icon(model.color_of(model.default_profile)))
        self._painted = False
        self._capturing: asyncio.Task[None] | None = None
        self.selected_profile: str | None = None

        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(10, 10, 10, 6)
        outer.setSpacing(8)
        self.banner = Banner()
        self.banner.actionTriggered.connect(self._banner_action)
        self._banner_kind = ""
        outer.addWidget(self.banner)

        splitter = self.columns = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self._profiles_column())
        splitter.addWidget(self._main_column())
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, 950])
        outer.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.api_label = QLabel()
        self.api_label.setObjectName("apiLabel")
        self.statusBar().addWidget(self.api_label, 1)
        self.statusBar().addPermanentWidget(QLabel(f"browserdeck {__version__}"))

        model.profilesChanged.connect(self._on_profiles_changed)
        model.tabsChanged.connect(self._on_tabs_changed)
        model.activityAdded.connect(self._add_activity)
        model.tabsChanged.connect(self.activity_pane.retitle)
        model.tabOpened.connect(self.select_tab)
        model.takeoverChanged.connect(lambda *_: self._update_profile_controls())
        # Follow agent: the service says which tab an agent's call acted on (agent_tab).
        model.bridge.agentTab.connect(self._follow)
        self._pending_tab: tuple[str, str] | None = None
        self.resize(1220, 820)
        self._restore_layout()
        self._on_profiles_changed()

    # --- layout -----------------------------------------------------------------------
    def _profiles_column(self) -> QWidget:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.addWidget(section("Profiles"))
        self.profile_list = QListWidget()
        self.profile_list.setObjectName("profiles")
        self.profile_list.setItemDelegate(ProfileDelegate(self.profile_list))
        self.profile_list.setMinimumWidth(240)
        self.profile_list.currentItemChanged.connect(self._on_profile_selected)
        col.addWidget(self.profile_list, 1)
        self.detail_label = QLabel()
        self.detail_label.setObjectName("profileDetail")
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.detail_label)
        row = QHBoxLayout()
        self.toggle_button = QPushButton("Start")
        self.toggle_button.setObjectName("toggleProfile")
        self.toggle_button.clicked.connect(self._toggle_profile)
        # Take over: agents' calls on this browser wait while the user uses it.
        self.takeover_button = QPushButton("Take over")
        self.takeover_button.setObjectName("takeOver")
        self.takeover_button.clicked.connect(self._toggle_takeover)
        settings = QPushButton("Settings…")
        settings.clicked.connect(self.settingsRequested)
        row.addWidget(self.toggle_button, 1)
        row.addWidget(self.takeover_button)
        row.addWidget(settings)
        col.addLayout(row)
        return box

    def _main_column(self) -> QWidget:
        """Browser (tabs, the tab live, activity) and Sessions (what agents did)."""
        self.views = QTabWidget()
        self.views.setObjectName("views")
        self.views.addTab(self._browser_view(), "Browser")
        self.sessions_pane = SessionsPane(self.model)
        self.views.addTab(self.sessions_pane, "Sessions")
        return self.views

    def _browser_view(self) -> QWidget:
        splitter = self.rows = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)

        # Tabs
        tabs_box = QWidget()
        col = QVBoxLayout(tabs_box)
        col.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.tabs_title = section("Tabs")
        head.addWidget(self.tabs_title)
        head.addStretch(1)
        self.url_edit = QLineEdit()
        self.url_edit.setObjectName("newTabUrl")
        self.url_edit.setPlaceholderText("Open a new tab at… (URL)")
        self.url_edit.setClearButtonEnabled(True)
        self.url_edit.setMinimumWidth(280)
        self.url_edit.returnPressed.connect(self._open_tab)
        self.open_button = QPushButton("Open tab")
        self.open_button.setObjectName("openTab")
        self.open_button.clicked.connect(self._open_tab)
        head.addWidget(self.url_edit)
        head.addWidget(self.open_button)
        self.follow_box = QCheckBox("Follow agent")
        self.follow_box.setObjectName("followAgent")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip(
            "Select the profile and tab an agent acts on, as it acts (its screenshot follows)"
        )
        head.addWidget(self.follow_box)
        col.addLayout(head)
        self.tab_tree = QTreeWidget()
        self.tab_tree.setObjectName("tabs")
        self.tab_tree.setHeaderLabels(["Title", "URL", "Agent", ""])
        self.tab_tree.setRootIsDecorated(False)
        self.tab_tree.setUniformRowHeights(True)
        self.tab_tree.setAlternatingRowColors(True)
        self.tab_tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tab_tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.tab_tree.currentItemChanged.connect(lambda *_: self._on_tab_selected())
        self.tab_tree.itemDoubleClicked.connect(lambda *_: self._focus_selected())
        self._kept: set[str] = set()  # tabs of the shown profile marked keep
        tabkeep.install(
            self.tab_tree,
            lambda p: (i.data(0, NAME_ROLE) if (i := self.tab_tree.itemAt(p)) else None),
            lambda target: target in self._kept,
            lambda target, on: self.model.keep_tab(self.selected_profile or "", target, on),
        )
        col.addWidget(self.tab_tree, 1)
        splitter.addWidget(tabs_box)

        # Screenshot
        self.shot_pane = ScreenshotPane(
            lambda: self.model.deck,
            lambda: (self.selected_profile, self.selected_tab()),
            self._no_tab_message,
        )
        self.shot_pane.refCopied.connect(self._copy_ref)
        splitter.addWidget(self.shot_pane)
        # What tests and the screenshot script reach into.
        pane = self.shot_pane
        self.shot, self.shot_scroll, self.shot_info = pane.view, pane.scroll_area, pane.info
        self.labels_box, self.auto_box, self.refresh_button = (
            pane.labels_box,
            pane.auto_box,
            pane.refresh_button,
        )
        self.zoom_buttons, self.hover_label = pane.zoom_buttons, pane.hover_label
        self.unplaced_box, self.unplaced_list = pane.unplaced_box, pane.unplaced_list

        # Activity
        self.activity_pane = ActivityPane(self.model)
        splitter.addWidget(self.activity_pane)
        act = self.activity_pane
        self.activity, self.client_filter = act.tree, act.client_filter
        self.activity_stack, self.activity_empty = act.stack, act.empty
        self.activity_details = act.details
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        splitter.setStretchFactor(2, 2)
        # The tabs pane shows about five rows before it scrolls (it showed three).
        self.tab_tree.setMinimumHeight(self.tab_tree.fontMetrics().height() * 9)
        splitter.setSizes([150, 440, 250])
        return splitter

    # --- profiles --------------------------------------------------------------------
    def _on_profiles_changed(self) -> None:
        model = self.model
        names = model.profile_names()
        self.setWindowIcon(icons.app_icon(model.color_of(model.default_profile)))
        current = self.selected_profile or model.default_profile
        self.profile_list.blockSignals(True)
        try:
            existing = {
                self.profile_list.item(i).data(NAME_ROLE): self.profile_list.item(i)
                for i in range(self.profile_list.count())
            }
            if list(existing) != names:
                self.profile_list.clear()
                existing = {}
                for name in names:
                    item = QListWidgetItem()
                    item.setData(NAME_ROLE, name)
                    self.profile_list.addItem(item)
                    existing[name] = item
            for name, item in existing.items():
                status = model.statuses.get(name)
                color = (status.color if status is not None else None) or model.color_of(name)
                row = ProfileRow(status, color, name == model.default_profile)
                item.setData(STATUS_ROLE, row)
                if status is not None:
                    item.setToolTip(status.detail or states.label(status))
            if current in existing:
                self.profile_list.setCurrentItem(existing[current])
        finally:
            self.profile_list.blockSignals(False)
        self.profile_list.viewport().update()
        if self.selected_profile != current or current not in names:
            self.selected_profile = current if current in names else (names[0] if names else None)
            self._on_tabs_changed(self.selected_profile or "")
        self._update_profile_controls()
        self._update_api_label()

    def _on_profile_selected(self, item: QListWidgetItem | None, _prev: Any = None) -> None:
        self.selected_profile = item.data(NAME_ROLE) if item else None
        self._update_profile_controls()
        self._on_tabs_changed(self.selected_profile or "")
        self._set_capture(None, "")
        self.refresh_screenshot()

    def _status(self) -> ProfileStatus | None:
        return self.model.statuses.get(self.selected_profile or "")

    def _running(self) -> bool:
        status = self._status()
        return status is not None and states.is_active(status)

    def _update_profile_controls(self) -> None:
        name = self.selected_profile
        status = self._status()
        running = self._running()
        spec = spec_or_default(status.driver if status is not None else None)
        self.toggle_button.setEnabled(name is not None and self.model.deck is not None)
        verbs = states.verbs_of(spec.name)
        self.toggle_button.setText(verbs.stop if running else verbs.start)
        self.detail_label.setText(detail_text(status, self.model.sites(name) if name else None))
        connected = status is not None and bool(status.extension_connected)
        can_open = running and (not spec.via_extension or connected)
        # A browser browserdeck launches starts on demand for the tab.
        can_open = can_open or (spec.launches and self.model.deck is not None)
        self.url_edit.setEnabled(can_open)
        self.open_button.setEnabled(can_open)
        self.tabs_title.setText(f"Tabs of {name}" if name else "Tabs")
        self.shot_pane.set_accent((status.color if status is not None else None) or "#FF4500")
        taken = name is not None and name in self.model.taken
        self.takeover_button.setText("Hand back" if taken else "Take over")
        self.takeover_button.setEnabled(running or taken)
        self.takeover_button.setToolTip(
            "Give the browser back to the agents; their next answer says you acted"
            if taken
            else "Use this browser yourself: agents' calls on it wait until you hand it back"
        )
        self.shot_pane.set_interactive(taken)
        if self.selected_tab() is None:  # the state changed: say it (no poll says it later)
            self._set_capture(None, self._no_tab_message())

    def _toggle_profile(self) -> None:
        name = self.selected_profile
        if name is None:
            return
        self.toggle_button.setEnabled(False)
        if self._running():
            self.model.stop_profile(name)
        else:
            self.model.start_profile(name)

    # --- tabs ----------------------------------------------------------------------------
    def _on_tabs_changed(self, profile: str) -> None:
        if profile != (self.selected_profile or ""):
            return
        tabs = self.model.tabs.get(profile, [])
        selected = self.selected_tab()
        deck = self.model.deck
        holders = deck.tab_holders(profile) if deck is not None else {}
        self._kept = deck.kept_tabs(profile) if deck is not None else set()
        self.tab_tree.blockSignals(True)
        try:
            self.tab_tree.clear()
            for tab in tabs:
                holder = holders.get(tab.target_id, "")
                agent = tabkeep.agent_column(holder, tab.target_id in self._kept)
                item = QTreeWidgetItem([tab.title or "(untitled)", tab.url, agent, ""])
                if holder:
                    item.setToolTip(2, f"{holder} holds this tab (an agent session)")
                item.setData(0, NAME_ROLE, tab.target_id)
                item.setToolTip(0, f"{tab.title}\n{tab.target_id}")
                item.setToolTip(1, tab.url)
                self.tab_tree.addTopLevelItem(item)
                self.tab_tree.setItemWidget(item, 3, self._tab_buttons(tab.target_id))
                if tab.target_id == selected:
                    self.tab_tree.setCurrentItem(item)
            pending = self._pending_tab
            if pending is not None and pending[0] == profile:
                for i in range(self.tab_tree.topLevelItemCount()):
                    row = self.tab_tree.topLevelItem(i)
                    if row is not None and row.data(0, NAME_ROLE) == pending[1]:
                        self.tab_tree.setCurrentItem(row)
                        self._pending_tab = None
            first = self.tab_tree.topLevelItem(0)
            if self.tab_tree.currentItem() is None and first is not None:
                self.tab_tree.setCurrentItem(first)
        finally:
            self.tab_tree.blockSignals(False)
        if self.selected_tab() != selected:
            self._on_tab_selected()
        self._update_profile_controls()
        if not tabs:
            self._set_capture(None, self._no_tab_message())

    def _tab_buttons(self, target_id: str) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(2, 0, 2, 0)
        row.setSpacing(2)
        for text, tip, slot in (
            ("Focus", "Bring this tab to the front", self._focus),
            ("Close", "Close this tab", self._close),
        ):
            button = QToolButton()
            button.setText(text)
            button.setObjectName(f"{text.lower()}-{target_id}")
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.clicked.connect(lambda *_, t=target_id, s=slot: s(t))
            row.addWidget(button)
        return box

    def selected_tab(self) -> str | None:
        item = self.tab_tree.currentItem()
        return item.data(0, NAME_ROLE) if item is not None else None

    def _on_tab_selected(self) -> None:
        self._set_capture(None, "")
        self.refresh_screenshot()

    def select_tab(self, profile: str, target_id: str) -> None:
        """Show this profile and tab (a tab just opened, or the one an agent acts on)."""
        if profile != self.selected_profile:
            for i in range(self.profile_list.count()):
                row = self.profile_list.item(i)
                if row.data(NAME_ROLE) == profile:
                    self.profile_list.setCurrentItem(row)
        if self.selected_tab() == target_id:
            return
        for i in range(self.tab_tree.topLevelItemCount()):
            item = self.tab_tree.topLevelItem(i)
            if item is not None and item.data(0, NAME_ROLE) == target_id:
                self._pending_tab = None
                self.tab_tree.setCurrentItem(item)
                return
        # Not listed yet (the tab list refreshes on the tabs-changed event): select it then.
        self._pending_tab = (profile, target_id)
        self.model.refresh()

    def _follow(self, profile: str, target_id: str, client: object) -> None:
        from browserdeck.gui.model import GUI_CLIENT

        if not self.follow_box.isChecked() or client == GUI_CLIENT:
            return  # the panel's own screenshots must not move the selection
        self.select_tab(profile, target_id)

    def _focus(self, target_id: str) -> None:
        if self.selected_profile:
            self.model.focus_tab(self.selected_profile, target_id)

    def _close(self, target_id: str) -> None:
        if self.selected_profile:
            self.model.close_tab(self.selected_profile, target_id)

    def _focus_selected(self) -> None:
        tab = self.selected_tab()
        if tab:
            self._focus(tab)

    def _open_tab(self) -> None:
        url = self.url_edit.text().strip() or "about:blank"
        if self.selected_profile:
            self.model.open_tab(self.selected_profile, url)
            self.url_edit.clear()

    def _no_tab_message(self) -> str:
        return no_tab_message(self._status(), self.selected_profile, self._running())

    # --- screenshot (gui/shot_pane.py) ---------------------------------------------
    def refresh_screenshot(self) -> asyncio.Task[None] | None:
        """Take a new screenshot of the selected tab (skipped if one is in flight)."""
        return self.shot_pane.refresh()

    def capture_busy(self) -> bool:
        return self.shot_pane.busy()

    def _set_capture(self, shot: Capture | None, message: str = "") -> None:
        self.shot_pane.set_capture(shot, message)

    def set_zoom(self, text: str) -> None:
        self.shot_pane.set_zoom(text)

    def _update_timer(self) -> None:
        """Visible or not: the live view runs only while someone can see it."""
        self.shot_pane.set_watching(self.isVisible() and not self.isMinimized())
        self.model.set_fast_poll(self.isVisible())

    # --- take over (recording/takeover.py) ------------------------------------------
    def _toggle_takeover(self) -> None:
        name = self.selected_profile
        if name is None:
            return
        if name in self.model.taken:
            self.model.hand_back(name)
            self.statusBar().showMessage(f"Handed {name} back to the agents", 6000)
        else:
            self.model.take_over(name, done=self._took_over)

    def _took_over(self, state: TakeOverState) -> None:
        self.views.setCurrentIndex(0)
        tab = self.selected_tab()
        if state.window and tab:  # its window comes to the front for you
            self.model.focus_tab(state.profile, tab)
        elif not state.window:  # headless: the live view is its window
            self.auto_box.setChecked(True)
        why = state.why or "agents wait until you click Hand back"
        self.statusBar().showMessage(f"You have {state.profile}: {why}", 15000)

    def _copy_ref(self, ref: str) -> None:
        QGuiApplication.clipboard().setText(ref)
        self.statusBar().showMessage(f"Copied {ref} to the clipboard", 4000)

    # --- activity (gui/activity_pane.py) ---------------------------------------------
    def _add_activity(self, activity: Activity) -> None:
        self.activity_pane.add(activity)

    # --- banner, status bar -----------------------------------------------------------
    def _update_api_label(self) -> None:
        overview = self.model.overview()
        if overview is not None and overview.started:
            url = overview.api_url
            self.api_label.setText(f"Control API {url}  ·  MCP {url}/mcp")
        elif self.model.service_error:
            self.api_label.setText("Not running")
        else:
            self.api_label.setText("Starting…")
        self.update_banner()

    def update_banner(self) -> None:
        overview = self.model.overview()
        if self.model.service_error:
            self._banner_kind = "retry"
            self.banner.show_message(
                "browserdeck could not start: " + self.model.service_error, "error", "Retry"
            )
        elif overview is not None and overview.config_problem:
            self._banner_kind = "settings"
            self.banner.show_message(overview.config_problem, "warning", "Settings…")
        elif not self.tray_available:
            self._banner_kind = ""
            self.banner.show_message(
                "Your desktop has no system tray, so browserdeck runs in this window. "
                "Closing it quits browserdeck (and stops its browsers).",
                "info",
            )
        else:
            self._banner_kind = ""
            self.banner.hide()

    def _banner_action(self) -> None:
        if self._banner_kind == "retry":
            self.retryRequested.emit()
        elif self._banner_kind == "settings":
            self.settingsRequested.emit()

    def show_notice(self, title: str, message: str, level: str = "info") -> None:
        """Without a tray there are no balloon messages: use the status bar."""
        self.statusBar().showMessage(f"{title}: {message}", 10000)

    # --- window events -----------------------------------------------------------------
    def present(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()
        self.model.refresh()
        self.refresh_screenshot()

    def event(self, event: QEvent) -> bool:
        result = super().event(event)
        if event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            self.firstPaint.emit()
        elif event.type() in (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.WindowStateChange):
            self._update_timer()
        return result

    def _restore_layout(self) -> None:
        """The size and splitters it had when it was last shown (gui/keep.py)."""
        keep.restore_layout(self, [self.columns, self.rows])

    def keep_layout(self) -> None:
        """Keep its size and splitters for the next start."""
        keep.keep_layout(self, [self.columns, self.rows])

    def hideEvent(self, event: QHideEvent) -> None:
        self.keep_layout()
        super().hideEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.tray_available:
            event.accept()  # hidden, not destroyed: the tray keeps running
            self.hide()
        else:
            # No tray: this window is the app, so closing it is Quit (one shutdown path).
            event.ignore()
            self.quitRequested.emit()
