"""The panel's activity pane: what agents did, newest first, pushed as it happens.

One row per ``Activity`` (gui/model.py): time, client, profile, action, element, tab,
result and duration. The tab is named by its title as the panel knows it *now* (a row
is renamed when its tab's title changes, e.g. after the agent navigated), not as it was
when the call ended. A failure's row is red; its tooltip and the details line under the
list add the hint. Filter by client; Clear empties the list and the model's store.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from browserdeck.gui.model import Activity, DeckModel, short_id
from browserdeck.gui.panel_parts import NAME_ROLE, section

COLUMNS = ("Time", "Client", "Profile", "Action", "Element", "Tab", "Result", "ms")
TIME, CLIENT, PROFILE, ACTION, ELEMENT, TAB, RESULT, MS = range(len(COLUMNS))
ROWS = 300


class ActivityPane(QWidget):
    def __init__(self, model: DeckModel) -> None:
        super().__init__()
        self.model = model
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 6, 0, 0)
        head = QHBoxLayout()
        head.addWidget(section("Activity"))
        self.hint = QLabel("What agents, the CLI and MCP clients did, newest first")
        self.hint.setObjectName("hint")
        head.addWidget(self.hint, 1)
        self.client_filter = QComboBox()
        self.client_filter.setObjectName("clientFilter")
        self.client_filter.addItem("All clients", "")
        self.client_filter.setToolTip("Show the calls of one client only")
        self.client_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.client_filter.currentIndexChanged.connect(lambda *_: self._apply_filter())
        head.addWidget(self.client_filter)
        clear = QToolButton()
        clear.setText("Clear")
        clear.clicked.connect(self.clear)
        head.addWidget(clear)
        col.addLayout(head)

        self.tree = QTreeWidget()
        self.tree.setObjectName("activity")
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        fm = self.tree.fontMetrics()
        # Wide enough for what they hold: "claude-code via MCP", "12:34:56", "12345".
        widths = {
            TIME: fm.horizontalAdvance("00:00:00") + 16,
            CLIENT: fm.horizontalAdvance("shopping-agent via MCP") + 16,
            PROFILE: fm.horizontalAdvance("research-2") + 16,
            ACTION: fm.horizontalAdvance("scroll into view") + 12,
            ELEMENT: 230,
            TAB: 160,
            RESULT: 190,
            MS: fm.horizontalAdvance("99999") + 18,
        }
        for column, width in widths.items():
            self.tree.setColumnWidth(column, width)
        header.setSectionResizeMode(ELEMENT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(RESULT, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.tree.headerItem().setTextAlignment(
            MS, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.tree.currentItemChanged.connect(lambda *_: self._show_details())
        # The empty state: a plain line in the list's place (no frame of its own, no
        # scroll bar: there is nothing to scroll), a page of the same stack.
        self.empty = QLabel(
            "No agent has used a browser yet. Each call an agent makes shows up here."
        )
        self.empty.setObjectName("activityEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setFrameShape(QFrame.Shape.NoFrame)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.tree)
        col.addWidget(self.stack, 1)
        self.details = QLabel()
        self.details.setObjectName("activityDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.hide()
        col.addWidget(self.details)
        for activity in model.activity:
            self.add(activity)

    # --- rows -----------------------------------------------------------------------
    def add(self, activity: Activity) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(activity.time))
        item = QTreeWidgetItem(
            [
                stamp,
                activity.client,
                activity.profile,
                activity.action,
                activity.target,
                self._tab_title(activity.profile, activity.target_id),
                activity.result,
                f"{activity.ms:.0f}",
            ]
        )
        item.setData(0, NAME_ROLE, activity)
        details = activity.details()
        for column in range(len(COLUMNS)):
            item.setToolTip(column, details)
        item.setToolTip(CLIENT, f"{activity.client}\n{details}")
        if not activity.ok:
            brush = QBrush(QColor("#C62828"))
            item.setForeground(ACTION, brush)
            item.setForeground(RESULT, brush)
        item.setTextAlignment(MS, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.tree.insertTopLevelItem(0, item)
        while self.tree.topLevelItemCount() > ROWS:
            self.tree.takeTopLevelItem(self.tree.topLevelItemCount() - 1)
        if self.client_filter.findData(activity.client) < 0:
            self.client_filter.addItem(activity.client, activity.client)
        wanted = self.client_filter.currentData()
        item.setHidden(bool(wanted) and activity.client != wanted)
        self.stack.setCurrentWidget(self.tree)

    def retitle(self, profile: str) -> None:
        """The tabs of ``profile`` were listed anew: rows name each tab by its title now."""
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            activity: Activity | None = item.data(0, NAME_ROLE) if item is not None else None
            if item is None or activity is None or activity.profile != profile:
                continue
            title = self._tab_title(profile, activity.target_id, item.text(TAB))
            if title != item.text(TAB):
                item.setText(TAB, title)

    def _tab_title(self, profile: str, target_id: str, known: str = "") -> str:
        """The tab's title as the panel knows it; what the row said before, once the tab
        is gone; one short form of its id otherwise."""
        if not target_id:
            return ""
        for tab in self.model.tabs.get(profile, []):
            if tab.target_id == target_id:
                return tab.title or tab.url or short_id(target_id)
        return known or short_id(target_id)

    def clear(self) -> None:
        self.tree.clear()
        self.model.activity.clear()
        self.details.hide()
        self.stack.setCurrentWidget(self.empty)

    def _apply_filter(self) -> None:
        wanted = self.client_filter.currentData()
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is None:
                continue
            activity: Activity = item.data(0, NAME_ROLE)
            item.setHidden(bool(wanted) and activity.client != wanted)

    def _show_details(self) -> None:
        item = self.tree.currentItem()
        activity: Activity | None = item.data(0, NAME_ROLE) if item is not None else None
        if activity is None or activity.ok:
            self.details.hide()
            return
        self.details.setText(activity.details())
        self.details.show()
