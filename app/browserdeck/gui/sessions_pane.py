"""The panel's Sessions view: what each agent session did, step by step, with pictures.

The recorded sessions (agent, profile, start, duration, calls, errors) on the left; the
selected one's steps beside them; the selected step's images before and after side by
side below, with what it asked (typed text as its length), how it ended, the snapshot
lines it changed, the console errors and failed requests meanwhile. It follows the
recorder as it writes (``recording`` events, coalesced), while it is shown. **Export**
writes the session as a Playwright trace, one HTML file or a WebM and says where.

Everything comes from ``Deck`` (its recording reads and ``export_session``), never from
the service behind it.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPixmap, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from browserdeck.errors import BrowserdeckError
from browserdeck.gui.panel_parts import NAME_ROLE, section
from browserdeck.recording.timeline import step_facts

if TYPE_CHECKING:
    from browserdeck.gui.model import DeckModel
    from browserdeck.recorded import RecordedStep, SessionExport, SessionSummary

FAILED = QColor("#C62828")


def _when(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:.0f} s"


def step_details(step: RecordedStep) -> str:
    """Everything a step recorded, as text under its images."""
    lines = [f"{step.n}. {step.title or step.op}  —  {_when(step.started)}, {step.ms:g} ms"]
    if step.url:
        lines.append(f"page: {step.page_title + ' — ' if step.page_title else ''}{step.url}")
    if step.args:
        lines.append("asked: " + json.dumps(step.args, ensure_ascii=False))
    for what, text in step_facts(step):
        if "\n" in text or what in ("console errors", "failed requests", "snapshot changes"):
            lines.append(f"{what}:")
            lines.extend(f"  {line}" for line in text.splitlines())
        else:
            lines.append(f"{what}: {text}")
    return "\n".join(lines)


class ImageBox(QLabel):
    """An image scaled to fit the box, kept sharp as the box resizes."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = title
        self.pixmap_full: QPixmap | None = None
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(200, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setObjectName(f"sessionImage-{title}")
        self.show_image(None, f"no image {title}")

    def show_image(self, data: bytes | None, why: str = "") -> None:
        pixmap = QPixmap()
        if data and pixmap.loadFromData(data):
            self.pixmap_full = pixmap
            self._fit()
        else:
            self.pixmap_full = None
            self.setPixmap(QPixmap())
            self.setText(why or f"no image {self.title}")

    def _fit(self) -> None:
        if self.pixmap_full is not None:
            self.setPixmap(
                self.pixmap_full.scaled(
                    self.size(),
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()


class SessionsPane(QWidget):
    """The Sessions view (see the module's docstring)."""

    def __init__(self, model: DeckModel) -> None:
        super().__init__()
        self.model = model
        self.setObjectName("sessionsPane")
        self._steps: list[RecordedStep] = []
        self._dirty = True
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(250)  # a burst of steps is one redraw
        self._later.timeout.connect(self.refresh)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 6, 0, 0)
        col.addLayout(self._header())
        rows = QSplitter(Qt.Orientation.Vertical)
        top = QSplitter(Qt.Orientation.Horizontal)
        self.session_tree = self._tree(
            "sessions", ["Agent", "Profile", "Started", "Duration", "Calls", "Errors"]
        )
        self.session_tree.currentItemChanged.connect(lambda *_: self._on_session_selected())
        self.step_tree = self._tree("steps", ["#", "Time", "Step", "Result", "ms"])
        header = self.step_tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        # A long error would take the step's room: its width is set, its text a tooltip.
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(3, 220)
        self.step_tree.currentItemChanged.connect(lambda *_: self._on_step_selected())
        top.addWidget(self.session_tree)
        top.addWidget(self.step_tree)
        top.setSizes([380, 620])
        rows.addWidget(top)
        bottom = QWidget()
        detail = QVBoxLayout(bottom)
        detail.setContentsMargins(0, 0, 0, 0)
        pair = QHBoxLayout()
        self.before_box, self.after_box = ImageBox("before"), ImageBox("after")
        pair.addWidget(self.before_box)
        pair.addWidget(self.after_box)
        detail.addLayout(pair, 3)
        self.details = QPlainTextEdit()
        self.details.setObjectName("stepDetails")
        self.details.setReadOnly(True)
        detail.addWidget(self.details, 1)
        rows.addWidget(bottom)
        rows.setSizes([260, 520])
        col.addWidget(rows, 1)
        model.bridge.recording.connect(self._on_recording)

    def _header(self) -> QHBoxLayout:
        head = QHBoxLayout()
        head.addWidget(section("Sessions"))
        self.export_label = QLabel()
        self.export_label.setObjectName("exportPath")
        self.export_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.export_label, 1)
        self.export_buttons: dict[str, QPushButton] = {}
        for fmt, text, tip in (
            ("trace", "Export trace", "A Playwright trace (.zip): npx playwright show-trace FILE"),
            ("html", "Export HTML", "One HTML file, images inlined, for a bug or an audit"),
            ("video", "Export video", "A WebM of each action's images before and after"),
        ):
            button = QPushButton(text)
            button.setObjectName(f"export-{fmt}")
            button.setToolTip(tip)
            button.setEnabled(False)
            button.clicked.connect(lambda *_, f=fmt: self.export(f))
            head.addWidget(button)
            self.export_buttons[fmt] = button
        return head

    @staticmethod
    def _tree(name: str, headers: list[str]) -> QTreeWidget:
        tree = QTreeWidget()
        tree.setObjectName(name)
        tree.setHeaderLabels(headers)
        tree.setRootIsDecorated(False)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        return tree

    # --- following the recorder ------------------------------------------------------
    def _on_recording(self, session: object, step: object) -> None:
        self._dirty = True
        if self.isVisible() and not self._later.isActive():
            self._later.start()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.refresh()

    def selected_session(self) -> str | None:
        item = self.session_tree.currentItem()
        return str(item.data(0, NAME_ROLE)) if item is not None else None

    def refresh(self) -> None:
        """The sessions, and the selected one's steps, as the recorder has them now."""
        if not shiboken6.isValid(self):
            return
        self._dirty = False
        deck = self.model.deck
        sessions: list[SessionSummary] = []
        if deck is not None and deck.started:
            try:
                sessions = deck.recorded_sessions()
            except BrowserdeckError:
                sessions = []
        selected = self.selected_session()
        tree = self.session_tree
        tree.blockSignals(True)
        try:
            tree.clear()
            for info in sessions:
                item = QTreeWidgetItem([
                    info.agent, ", ".join(info.profiles), _when(info.started),
                    _duration(info.duration) + ("" if info.ended else " …"),
                    str(info.calls), str(info.errors) if info.errors else "",
                ])
                item.setData(0, NAME_ROLE, info.id)
                item.setToolTip(0, f"{info.id}\n{info.key} ({info.via})"
                                + ("" if info.ended else "\nrunning"))
                if info.errors:
                    item.setForeground(5, QBrush(FAILED))
                tree.addTopLevelItem(item)
                if info.id == selected:
                    tree.setCurrentItem(item)
            first = tree.topLevelItem(0)
            if tree.currentItem() is None and first is not None:
                tree.setCurrentItem(first)
        finally:
            tree.blockSignals(False)
        self._show_steps()

    def _on_session_selected(self) -> None:
        self._steps = []
        self.step_tree.clear()
        self._show_steps()

    def _show_steps(self) -> None:
        sid = self.selected_session()
        deck = self.model.deck
        for button in self.export_buttons.values():
            button.setEnabled(sid is not None)
        if sid is None or deck is None:
            self._steps = []
            self.step_tree.clear()
            self._on_step_selected()
            return
        try:
            steps = deck.recorded_session(sid).steps
        except BrowserdeckError:
            steps = []
        tree = self.step_tree
        current = tree.currentItem()
        chosen = current.data(0, NAME_ROLE) if current is not None else None
        tree.blockSignals(True)
        try:
            if len(steps) < tree.topLevelItemCount():
                tree.clear()
            for index, step in enumerate(steps):
                row = [str(step.n), _when(step.started), step.title or step.op,
                       "OK" if step.ok else (step.error or {}).get("message", "failed"),
                       f"{step.ms:g}"]
                item = tree.topLevelItem(index)
                if item is None:
                    item = QTreeWidgetItem(row)
                    tree.addTopLevelItem(item)
                else:
                    for column, text in enumerate(row):
                        item.setText(column, text)
                item.setData(0, NAME_ROLE, step.n)
                item.setToolTip(2, row[2])
                item.setToolTip(3, row[3])
                if not step.ok:
                    item.setForeground(3, QBrush(FAILED))
            follow = chosen is None or (self._steps and chosen == self._steps[-1].n)
            self._steps = steps
            newest = tree.topLevelItem(len(steps) - 1) if steps else None
            if newest is not None and follow:  # the newest step, while the agent works
                tree.setCurrentItem(newest)
        finally:
            tree.blockSignals(False)
        self._on_step_selected()

    def selected_step(self) -> RecordedStep | None:
        item = self.step_tree.currentItem()
        if item is None:
            return None
        n = item.data(0, NAME_ROLE)
        return next((s for s in self._steps if s.n == n), None)

    def _on_step_selected(self) -> None:
        step, sid, deck = self.selected_step(), self.selected_session(), self.model.deck
        if step is None or sid is None or deck is None:
            self.before_box.show_image(None, "select a step")
            self.after_box.show_image(None, "")
            self.details.setPlainText("")
            return
        for box, name in ((self.before_box, step.before), (self.after_box, step.after)):
            why = "waiting for the image…" if step.pending else (step.shot_note or "no image")
            box.show_image(deck.recorded_image(sid, name) if name else None, why)
        self.details.setPlainText(step_details(step))

    # --- export --------------------------------------------------------------------------
    def export(self, fmt: str) -> None:
        sid = self.selected_session()
        if sid is None:
            return
        for button in self.export_buttons.values():
            button.setEnabled(False)
        self.export_label.setText(f"writing the {fmt}…")

        def done(result: SessionExport) -> None:
            if shiboken6.isValid(self):
                self.export_label.setText(f"wrote {result.path}")
                self.export_label.setToolTip(result.path)

        task = self.model.export_session(sid, fmt, done)

        def finished(*_: Any) -> None:
            if shiboken6.isValid(self):
                for button in self.export_buttons.values():
                    button.setEnabled(self.selected_session() is not None)
                if self.export_label.text().endswith("…"):
                    self.export_label.setText("")

        if task is not None:
            task.add_done_callback(finished)
