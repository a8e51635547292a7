"""The status panel: profiles, the selected profile's tabs, a live screenshot, recent API calls.

Everything shown comes from ``DeckModel`` (in-process service calls) except the
screenshot, which goes through the control API's ``POST /screenshot`` so the
panel shows exactly what an agent gets (those calls are tagged as the GUI's own
and hidden from the activity list).

Why one module (about 900 lines): it is one window, ``StatusPanel``, whose parts (profile
list, tabs, screenshot, activity) refresh each other on one selection; the pieces that
stand alone are small classes here (``ProfileDelegate``, ``Banner``) and the data comes
from ``gui/model.py``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QCloseEvent, QColor, QFont, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from browserdeck import __version__, aio, states
from browserdeck.gui import icons
from browserdeck.gui.model import Activity, DeckModel, short_id
from browserdeck.gui.screenshot import (
    ZOOMS,
    Capture,
    CaptureError,
    ScreenshotView,
    capture,
)
from browserdeck.results import ProfileStatus, ShotLabel

NAME_ROLE = Qt.ItemDataRole.UserRole
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1  # a ProfileRow
AUTO_REFRESH_MS = 4000


@dataclass(frozen=True)
class ProfileRow:
    """What the profile list draws for one profile: its status (None until the first
    refresh), the colour it is shown in, and whether it is the default profile."""

    status: ProfileStatus | None
    color: str
    default: bool


class ProfileDelegate(QStyledItemDelegate):
    """Two lines per profile: colour chip + name (+ default), then driver · state."""

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        fm = option.fontMetrics
        return QSize(200, fm.height() * 2 + 18)

    def paint(
        self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row: ProfileRow | None = index.data(STATUS_ROLE)
        status = row.status if row is not None else None
        name = str(index.data(NAME_ROLE))
        p.save()
        try:
            style = option.widget.style() if option.widget else None
            if style is not None:
                style.drawPrimitive(
                    QStyle.PrimitiveElement.PE_PanelItemViewItem, option, p, option.widget
                )
            selected = bool(option.state & QStyle.StateFlag.State_Selected)
            pal = option.palette
            text_color = pal.color(
                QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
            )
            rect = QRect(option.rect).adjusted(10, 6, -8, -6)
            chip = QRect(rect.x(), rect.y() + 2, 14, 14)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            color = QColor(row.color if row is not None else "#8A8F98")
            p.setPen(color.darker(130))
            p.setBrush(color)
            p.drawRoundedRect(chip, 3, 3)
            bold = QFont(option.font)
            bold.setBold(True)
            p.setFont(bold)
            p.setPen(text_color)
            fm = p.fontMetrics()
            x = chip.right() + 8
            p.drawText(x, rect.y() + fm.ascent(), name)
            if row is not None and row.default:
                small = QFont(option.font)
                small.setPointSizeF(option.font.pointSizeF() * 0.8)
                p.setFont(small)
                sfm = p.fontMetrics()
                px = x + fm.horizontalAdvance(name) + 6
                pill = QRect(px, rect.y() + 1, sfm.horizontalAdvance("default") + 10, sfm.height())
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor(127, 127, 127, 60))
                p.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
                p.setPen(text_color)
                p.drawText(pill, Qt.AlignmentFlag.AlignCenter, "default")
            p.setFont(option.font)
            fm = p.fontMetrics()
            mark = states.mark(status) if status is not None else "stopped"
            dot = QRect(chip.x() + 3, rect.y() + fm.height() + 10, 8, 8)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(icons.state_color(mark))
            p.drawEllipse(dot)
            sub = f"{status.driver} · {states.label(status)}" if status is not None else "…"
            muted = QColor(text_color)
            if not selected:
                muted.setAlpha(160)
            p.setPen(muted)
            p.drawText(
                QRect(x, rect.y() + fm.height() + 4, rect.width() - x, fm.height() + 4),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                fm.elidedText(sub, Qt.TextElideMode.ElideRight, rect.right() - x),
            )
        finally:
            p.restore()


class Banner(QFrame):
    """A one-line message strip at the top of the panel (no tray, config problem, errors)."""

    actionTriggered = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.button = QPushButton()
        self.button.clicked.connect(self.actionTriggered)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.button)
        self.hide()

    def show_message(self, text: str, level: str = "info", action: str | None = None) -> None:
        colors = {
            "info": ("#E8F1FD", "#1B4F8C", "#B9D3F5"),
            "warning": ("#FFF6E0", "#6B4E00", "#F1D58A"),
            "error": ("#FDECEC", "#8C1B1B", "#F2B8B8"),
        }
        bg, fg, border = colors.get(level, colors["info"])
        self.setStyleSheet(
            f"#banner {{ background: {bg}; border: 1px solid {border}; "
            f"border-radius: 6px; }} #banner QLabel {{ color: {fg}; }}"
        )
        self.text.setText(text)
        self.button.setVisible(action is not None)
        self.button.setText(action or "")
        self.show()


def _section(title: str) -> QLabel:
    label = QLabel(title)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.05)
    label.setFont(font)
    label.setObjectName("sectionTitle")
    return label


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

        splitter = QSplitter(Qt.Orientation.Horizontal)
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

        self.timer = QTimer(self)
        self.timer.setInterval(AUTO_REFRESH_MS)
        self.timer.timeout.connect(self._auto_refresh)

        model.profilesChanged.connect(self._on_profiles_changed)
        model.tabsChanged.connect(self._on_tabs_changed)
        model.activityAdded.connect(self._add_activity)
        model.tabOpened.connect(self.select_tab)
        # Follow agent: the service says which tab an agent's call acted on (agent_tab).
        model.bridge.agentTab.connect(self._follow)
        self._pending_tab: tuple[str, str] | None = None
        for activity in model.activity:
            self._add_activity(activity)
        self.resize(1220, 820)
        self._on_profiles_changed()

    # --- layout -----------------------------------------------------------------------
    def _profiles_column(self) -> QWidget:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.addWidget(_section("Profiles"))
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
        settings = QPushButton("Settings…")
        settings.clicked.connect(self.settingsRequested)
        row.addWidget(self.toggle_button, 1)
        row.addWidget(settings)
        col.addLayout(row)
        return box

    def _main_column(self) -> QWidget:
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)

        # Tabs
        tabs_box = QWidget()
        col = QVBoxLayout(tabs_box)
        col.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.tabs_title = _section("Tabs")
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
        col.addWidget(self.tab_tree, 1)
        splitter.addWidget(tabs_box)

        # Screenshot
        shot_box = QWidget()
        col = QVBoxLayout(shot_box)
        col.setContentsMargins(0, 6, 0, 0)
        head = QHBoxLayout()
        head.addWidget(_section("Screenshot"))
        self.shot_info = QLabel()
        self.shot_info.setObjectName("shotInfo")
        self.shot_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.shot_info, 1)
        self.labels_box = QCheckBox("Labels")
        self.labels_box.setObjectName("labels")
        self.labels_box.setChecked(True)
        self.labels_box.setToolTip("Draw the element refs (e12…) an agent would act on")
        self.labels_box.toggled.connect(lambda *_: self.refresh_screenshot())
        self.auto_box = QCheckBox("Auto-refresh")
        self.auto_box.setObjectName("autoRefresh")
        self.auto_box.setChecked(True)
        self.auto_box.setToolTip(
            f"Take a new screenshot every {AUTO_REFRESH_MS // 1000} s while this window is visible"
        )
        self.auto_box.toggled.connect(self._update_timer)
        self.refresh_button = QToolButton()
        self.refresh_button.setObjectName("refreshShot")
        self.refresh_button.setText("Refresh")
        self.refresh_button.clicked.connect(lambda *_: self.refresh_screenshot())
        self.zoom_buttons: dict[str, QToolButton] = {}
        zoom_group = QButtonGroup(self)
        zoom_group.setExclusive(True)
        for text in ZOOMS:
            button = QToolButton()
            button.setText(text)
            button.setObjectName(f"zoom-{text}")
            button.setCheckable(True)
            button.setToolTip(
                "Fit the page into the view"
                if ZOOMS[text] is None
                else f"Show the page at {text} (drag to pan)"
            )
            button.clicked.connect(lambda *_, t=text: self.set_zoom(t))
            zoom_group.addButton(button)
            self.zoom_buttons[text] = button
            head.addWidget(button)
        head.addSpacing(8)
        head.addWidget(self.labels_box)
        head.addWidget(self.auto_box)
        head.addWidget(self.refresh_button)
        col.addLayout(head)
        body = QHBoxLayout()
        self.shot = ScreenshotView()
        self.shot.hovered.connect(self._on_label_hovered)
        self.shot.refClicked.connect(self._copy_ref)
        self.shot_scroll = QScrollArea()
        self.shot_scroll.setObjectName("screenshotScroll")
        self.shot_scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.shot_scroll.setWidget(self.shot)
        self.shot.attach_message_bar(self.shot_scroll)
        self.shot.panned.connect(self._pan)
        body.addWidget(self.shot_scroll, 1)
        # Refs whose badge found no room on the image: listed, never silently dropped.
        self.unplaced_box = QWidget()
        side = QVBoxLayout(self.unplaced_box)
        side.setContentsMargins(0, 0, 0, 0)
        self.unplaced_title = QLabel("Not labelled in the image (no room):")
        self.unplaced_title.setObjectName("hint")
        self.unplaced_title.setWordWrap(True)
        self.unplaced_list = QListWidget()
        self.unplaced_list.setObjectName("unplaced")
        self.unplaced_list.setToolTip("Click a ref to copy it")
        self.unplaced_list.itemClicked.connect(
            lambda item: self._copy_ref(str(item.data(NAME_ROLE)))
        )
        side.addWidget(self.unplaced_title)
        side.addWidget(self.unplaced_list, 1)
        self.unplaced_box.setFixedWidth(220)
        self.unplaced_box.hide()
        body.addWidget(self.unplaced_box)
        col.addLayout(body, 1)
        self.hover_label = QLabel(" ")
        self.hover_label.setObjectName("hoverLabel")
        self.hover_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.hover_label)
        splitter.addWidget(shot_box)
        self.set_zoom("100%")

        # Activity
        act_box = QWidget()
        col = QVBoxLayout(act_box)
        col.setContentsMargins(0, 6, 0, 0)
        head = QHBoxLayout()
        head.addWidget(_section("Activity"))
        self.activity_hint = QLabel("What agents, the CLI and MCP clients did, newest first")
        self.activity_hint.setObjectName("hint")
        head.addWidget(self.activity_hint, 1)
        self.client_filter = QComboBox()
        self.client_filter.setObjectName("clientFilter")
        self.client_filter.addItem("All clients", "")
        self.client_filter.setToolTip("Show the calls of one client only")
        self.client_filter.currentIndexChanged.connect(lambda *_: self._apply_client_filter())
        head.addWidget(self.client_filter)
        clear = QToolButton()
        clear.setText("Clear")
        clear.clicked.connect(self._clear_activity)
        head.addWidget(clear)
        col.addLayout(head)
        self.activity = QTreeWidget()
        self.activity.setObjectName("activity")
        self.activity.setHeaderLabels(
            ["Time", "Client", "Action", "Element", "Tab", "Result", "ms"]
        )
        self.activity.setRootIsDecorated(False)
        self.activity.setUniformRowHeights(True)
        self.activity.setAlternatingRowColors(True)
        header = self.activity.header()
        for i, width in enumerate((64, 150, 90, 240, 150, 200, 44)):
            self.activity.setColumnWidth(i, width)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.activity.currentItemChanged.connect(lambda *_: self._show_activity_details())
        # The empty state sits inside the list's own box (a page of the same stack).
        self.activity_empty = QLabel(
            "No API calls yet. When an agent drives a browser, each call shows up here."
        )
        self.activity_empty.setObjectName("activityEmpty")
        self.activity_empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.activity_empty.setWordWrap(True)
        self.activity_empty.setFrameShape(QFrame.Shape.StyledPanel)
        self.activity_stack = QStackedWidget()
        self.activity_stack.addWidget(self.activity_empty)
        self.activity_stack.addWidget(self.activity)
        col.addWidget(self.activity_stack, 1)
        self.activity_details = QLabel()
        self.activity_details.setObjectName("activityDetails")
        self.activity_details.setWordWrap(True)
        self.activity_details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.activity_details.hide()
        col.addWidget(self.activity_details)
        splitter.addWidget(act_box)
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
        driver = status.driver if status is not None else "managed"
        self.toggle_button.setEnabled(name is not None and self.model.deck is not None)
        verbs = states.verbs_of(driver)
        self.toggle_button.setText(verbs.stop if running else verbs.start)
        lines = []
        if status is not None:
            where = (status.cdp_url or "").removeprefix("http://")
            lines.append(("Relay " if driver == "extension" else "CDP ") + where)
            bits = []
            if status.pid:
                bits.append(f"pid {status.pid}")
            if status.headless and driver == "managed":
                bits.append("headless")
            if bits:
                lines.append(" · ".join(bits))
            if status.detail:
                lines.append(status.detail)
            if status.remote:
                lines.extend(states.remote_lines(status.remote))
        self.detail_label.setText("\n".join(lines))
        connected = status is not None and bool(status.extension_connected)
        can_open = running and (driver != "extension" or connected)
        can_open = can_open or (driver == "managed" and self.model.deck is not None)
        self.url_edit.setEnabled(can_open)
        self.open_button.setEnabled(can_open)
        self.tabs_title.setText(f"Tabs of {name}" if name else "Tabs")
        self.shot.accent = QColor((status.color if status is not None else None) or "#FF4500")

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
        self.tab_tree.blockSignals(True)
        try:
            self.tab_tree.clear()
            for tab in tabs:
                holder = holders.get(tab.target_id, "")
                item = QTreeWidgetItem([tab.title or "(untitled)", tab.url, holder, ""])
                if holder:
                    item.setToolTip(2, f"{holder} holds this tab (MCP tab claim)")
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
        status = self._status()
        if status is None:
            return "No profile selected."
        state = states.of(status)
        name = self.selected_profile
        verb = states.toggle_text(status)
        if state in (states.State.CRASHED, states.State.ERROR, states.State.UNREACHABLE):
            what = status.detail or states.label(status)
            return f"{name}: {states.label(status)} — {what}. Click “{verb}” to try again."
        if state == states.State.DISABLED:
            return "Browser control is disabled in Settings."
        if status.driver == "extension" and not status.extension_connected:
            return (
                "Chrome is not connected. Click the browserdeck extension's icon in Chrome "
                "(pair it first from the tray: Pair extension…)."
            )
        if not self._running():
            return f"{name} is stopped. Click “{verb}” to see its pages."
        return "No open tabs. Open one above."

    # --- screenshot --------------------------------------------------------------------
    def refresh_screenshot(self) -> asyncio.Task[None] | None:
        """Take a new screenshot of the selected tab (skipped if one is in flight)."""
        deck = self.model.deck
        name, target = self.selected_profile, self.selected_tab()
        if deck is None or not deck.started or name is None or target is None:
            if self.capture_busy():
                return None
            self._set_capture(None, self._no_tab_message())
            self.shot_info.setText("")
            return None
        if self.capture_busy():
            return self._capturing
        labels = self.labels_box.isChecked()
        self.refresh_button.setEnabled(False)

        async def go() -> None:
            try:
                shot = await capture(deck, name, target, labels=labels)
            except CaptureError as exc:
                if (name, target) == (self.selected_profile, self.selected_tab()):
                    self._set_capture(None, str(exc))
                    self.shot_info.setText("")
            else:
                if (name, target) == (self.selected_profile, self.selected_tab()):
                    self._set_capture(shot)
                    stamp = time.strftime("%H:%M:%S", time.localtime(shot.taken))
                    n = len(shot.labels)
                    self.shot_info.setText(
                        f"  {stamp} · {shot.image.width()}×{shot.image.height()}"
                        + (f" · {n} label{'s' if n != 1 else ''}" if labels else "")
                    )
            finally:
                self.refresh_button.setEnabled(True)
                self._capturing = None
                # The selection moved while this capture ran: take one of the new tab.
                if (name, target) != (self.selected_profile, self.selected_tab()):
                    self.refresh_screenshot()

        self._capturing = aio.create_task(go(), name="gui-screenshot")
        return self._capturing

    def capture_busy(self) -> bool:
        return self._capturing is not None and not self._capturing.done()

    def _auto_refresh(self) -> None:
        if self.isVisible() and not self.isMinimized() and self.auto_box.isChecked():
            self.refresh_screenshot()

    def _update_timer(self) -> None:
        active = self.isVisible() and self.auto_box.isChecked()
        if active and not self.timer.isActive():
            self.timer.start()
        elif not active:
            self.timer.stop()
        self.model.set_fast_poll(self.isVisible())

    def _on_label_hovered(self, label: ShotLabel | None) -> None:
        if label is None:
            self.hover_label.setText(" ")
        else:
            self.hover_label.setText(f"{label.describe()}  —  click to copy {label.ref}")

    def _set_capture(self, shot: Capture | None, message: str = "") -> None:
        self.shot.set_capture(shot, message)
        self._show_unplaced(shot)

    def set_zoom(self, text: str) -> None:
        """Fit, 100% or 200%; zoomed, the view scrolls and a drag pans."""
        zoom = ZOOMS[text]
        self.zoom_buttons[text].setChecked(True)
        self.shot.set_zoom(zoom)  # first: fit mode lifts the fixed size the zoom set
        self.shot_scroll.setWidgetResizable(zoom is None)

    def _pan(self, dx: int, dy: int) -> None:
        for bar, d in (
            (self.shot_scroll.horizontalScrollBar(), dx),
            (self.shot_scroll.verticalScrollBar(), dy),
        ):
            bar.setValue(bar.value() + d)

    def _copy_ref(self, ref: str) -> None:
        QGuiApplication.clipboard().setText(ref)
        self.statusBar().showMessage(f"Copied {ref} to the clipboard", 4000)

    def _show_unplaced(self, shot: Capture | None) -> None:
        self.unplaced_list.clear()
        refs = shot.unplaced if shot is not None else []
        by_ref = {lb.ref: lb for lb in shot.labels} if shot is not None else {}
        for ref in refs:
            label = by_ref.get(ref)
            item = QListWidgetItem(label.describe() if label is not None else ref)
            item.setData(NAME_ROLE, ref)
            self.unplaced_list.addItem(item)
        self.unplaced_box.setVisible(bool(refs))

    # --- activity ---------------------------------------------------------------------
    def _add_activity(self, activity: Activity) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(activity.time))
        tab = self._tab_title(activity.profile, activity.target_id)
        item = QTreeWidgetItem(
            [
                stamp,
                activity.client,
                activity.action,
                activity.target,
                tab,
                activity.result,
                f"{activity.ms:.0f}",
            ]
        )
        item.setData(0, NAME_ROLE, activity)
        details = activity.details()
        for column in range(7):
            item.setToolTip(column, details)
        if not activity.ok:
            brush = QBrush(QColor("#C62828"))
            item.setForeground(2, brush)
            item.setForeground(5, brush)
        item.setTextAlignment(6, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.activity.insertTopLevelItem(0, item)
        while self.activity.topLevelItemCount() > 300:
            self.activity.takeTopLevelItem(self.activity.topLevelItemCount() - 1)
        if self.client_filter.findData(activity.client) < 0:
            self.client_filter.addItem(activity.client, activity.client)
        wanted = self.client_filter.currentData()
        item.setHidden(bool(wanted) and activity.client != wanted)
        self.activity_stack.setCurrentWidget(self.activity)

    def _tab_title(self, profile: str, target_id: str) -> str:
        """The tab's title as the panel knows it (one short form of an id otherwise)."""
        if not target_id:
            return ""
        for tab in self.model.tabs.get(profile, []):
            if tab.target_id == target_id:
                return tab.title or tab.url or short_id(target_id)
        return short_id(target_id)

    def _apply_client_filter(self) -> None:
        wanted = self.client_filter.currentData()
        for i in range(self.activity.topLevelItemCount()):
            item = self.activity.topLevelItem(i)
            if item is None:
                continue
            activity: Activity = item.data(0, NAME_ROLE)
            item.setHidden(bool(wanted) and activity.client != wanted)

    def _show_activity_details(self) -> None:
        item = self.activity.currentItem()
        activity: Activity | None = item.data(0, NAME_ROLE) if item is not None else None
        if activity is None or activity.ok:
            self.activity_details.hide()
            return
        self.activity_details.setText(activity.details())
        self.activity_details.show()

    def _clear_activity(self) -> None:
        self.activity.clear()
        self.model.activity.clear()
        self.activity_details.hide()
        self.activity_stack.setCurrentWidget(self.activity_empty)

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

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.tray_available:
            event.accept()  # hidden, not destroyed: the tray keeps running
            self.hide()
        else:
            # No tray: this window is the app, so closing it is Quit (one shutdown path).
            event.ignore()
            self.quitRequested.emit()
