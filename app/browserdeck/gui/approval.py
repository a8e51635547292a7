"""The tray's approval window: the person allows or denies an agent's risky action.

``TrayAsker`` is the tray's channel at the front door's approvals (door/approval/): each
question waits in its queue and is shown in turn in ``ApprovalWindow``, a small window
that never takes the keyboard focus from what the person is typing in
(``Qt.WindowDoesNotAcceptFocus``, shown without activating), with the agent, the action
in words, why it counts as risky, the money and the destination found on its form, a crop
of the page with the element outlined and labelled, a countdown, and three buttons:
*Allow once*, *Allow on this site for this agent*, *Deny*. The decision is made here,
in-process: nothing an agent can call answers it. ``ApprovalDesk`` plugs the asker into
each service the app runs, and ``ApprovalMenu`` is the per-profile "Ask before agents
act" section of the tray menu.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QColor,
    QFont,
    QGuiApplication,
    QPainter,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from browserdeck import config
from browserdeck.door.approval import hub_of, rules

if TYPE_CHECKING:
    from browserdeck.door.approval.asking import Answer, Picture, Question
    from browserdeck.gui.model import DeckModel

log = logging.getLogger(__name__)

OUTLINE = QColor("#D93025")
PICTURE_WIDTH = 460
# The approval modes in a person's words (the setting's own: config/profile.py).
MODE_WORDS = config.PROFILE_KEYS["approval"].choice_labels


class ApprovalWindow(QWidget):
    """Shows one question at a time; ``answered`` is called with the person's answer."""

    def __init__(self, asker: TrayAsker) -> None:
        super().__init__(
            None,
            Qt.WindowType.Tool
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus,
        )
        self.asker = asker
        self.question: Question | None = None
        self.setObjectName("approvalWindow")
        self.setWindowTitle("browserdeck: allow this?")
        # Never steal the keyboard from the person's own window: shown, not activated.
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMinimumWidth(PICTURE_WIDTH + 24)
        layout = QVBoxLayout(self)
        self.agent = self._label("approvalAgent")
        self.action = self._label("approvalAction")
        font = QFont(self.action.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.action.setFont(font)
        self.why = self._label("approvalWhy")
        self.details = self._label("approvalDetails")
        self.picture = QLabel()
        self.picture.setObjectName("approvalPicture")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.countdown = self._label("approvalCountdown")
        self.queued = self._label("approvalQueued")
        for widget in (
            self.agent,
            self.action,
            self.why,
            self.details,
            self.picture,
            self.countdown,
            self.queued,
        ):
            layout.addWidget(widget)
        row = QHBoxLayout()
        self.allow_once = self._button("allowOnce", "Allow once", "once")
        self.allow_site = self._button("allowSite", "Allow on this site for this agent", "site")
        self.deny = self._button("deny", "Deny", "deny")
        for button in (self.allow_once, self.allow_site):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.deny)
        layout.addLayout(row)
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self._tick)

    def _label(self, name: str) -> QLabel:
        label = QLabel()
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        return label

    def _button(self, name: str, text: str, answer: Answer) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.clicked.connect(lambda *_: self.asker.answer(answer))
        return button

    def show_question(self, question: Question, waiting: list[Question]) -> None:
        self.question = question
        self.agent.setText(f"{question.agent} (profile {question.profile}) wants to:")
        self.action.setText(question.words())
        self.why.setText(f"Asked because {question.why}.")
        details = question.details()
        self.details.setText("\n".join(details))
        self.details.setVisible(bool(details))
        self.allow_site.setText(
            f"Allow on {question.site} for this agent"
            if question.site
            else "Allow on this site for this agent"
        )
        self.allow_site.setEnabled(bool(question.origin))
        pixmap = outlined(question.picture) if question.picture is not None else None
        self.picture.setVisible(pixmap is not None)
        if pixmap is not None:
            self.picture.setPixmap(pixmap)
        if waiting:
            names = ", ".join(sorted({q.agent for q in waiting}))
            self.queued.setText(f"{len(waiting)} more waiting after this one ({names})")
        self.queued.setVisible(bool(waiting))
        self._tick()
        self.timer.start()
        self.adjustSize()
        if not self.isVisible():
            self._place()
            self.show()  # WA_ShowWithoutActivating: the focus stays where it is

    def _tick(self) -> None:
        question = self.question
        if question is None:
            return
        left = question.remaining()
        self.countdown.setText(f"Denied in {left:.0f} s if you do not answer.")

    def _place(self) -> None:
        screen = QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        size = self.sizeHint()
        self.move(area.right() - size.width() - 16, area.bottom() - size.height() - 16)

    def done_showing(self) -> None:
        self.question = None
        self.timer.stop()
        self.hide()


def outlined(picture: Picture) -> QPixmap | None:
    """The crop with the element outlined in red and labelled, at most ``PICTURE_WIDTH``."""
    pixmap = QPixmap()
    if not pixmap.loadFromData(picture.png, "PNG") or pixmap.isNull():
        return None
    ratio = pixmap.width() / max(picture.size[0], 1.0)
    x, y, w, h = (v * ratio for v in picture.outline)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(OUTLINE)
        pen.setWidthF(3 * ratio)
        painter.setPen(pen)
        pad = 4 * ratio
        box = QRectF(x - pad, y - pad, w + 2 * pad, h + 2 * pad)
        painter.drawRoundedRect(box, 4 * ratio, 4 * ratio)
        font = painter.font()
        font.setPixelSize(max(11, int(12 * ratio)))
        font.setBold(True)
        painter.setFont(font)
        text = picture.label[:60]
        metrics = painter.fontMetrics()
        tag = QRectF(
            box.left(),
            max(0.0, box.top() - metrics.height() - 4),
            metrics.horizontalAdvance(text) + 10,
            metrics.height() + 4,
        )
        painter.fillRect(tag, OUTLINE)
        painter.setPen(QColor("white"))
        painter.drawText(tag, Qt.AlignmentFlag.AlignCenter, text)
    finally:
        painter.end()
    if pixmap.width() > PICTURE_WIDTH:
        pixmap = pixmap.scaledToWidth(PICTURE_WIDTH, Qt.TransformationMode.SmoothTransformation)
    return pixmap


class TrayAsker:
    """The tray as a channel: questions queue and are shown one at a time."""

    name = "the tray"

    def __init__(self) -> None:
        self.queue: list[tuple[Question, asyncio.Future[Answer]]] = []
        self.window: ApprovalWindow | None = None

    async def ask(self, question: Question) -> Answer:
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.queue.append((question, answer))
        self._show()
        try:
            return await answer
        finally:
            # Answered, timed out or its call cancelled: it leaves the queue either way.
            self.queue = [(q, f) for q, f in self.queue if f is not answer]
            self._show()

    def answer(self, answer: Answer) -> None:
        """The person's answer to the question shown."""
        if self.queue:
            _, future = self.queue[0]
            if not future.done():
                future.set_result(answer)

    def _show(self) -> None:
        if not self.queue:
            if self.window is not None:
                self.window.done_showing()
            return
        if self.window is None:
            self.window = ApprovalWindow(self)
        # The first question in full, and how many wait behind it.
        self.window.show_question(self.queue[0][0], [q for q, _ in self.queue[1:]])

    def close(self) -> None:
        for _, future in self.queue:
            if not future.done():
                future.cancel()
        if self.window is not None:
            self.window.close()
            self.window.deleteLater()
            self.window = None


class ApprovalDesk(QObject):
    """Puts the tray's asker at the approvals of each service the app runs."""

    def __init__(self, model: DeckModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.asker = TrayAsker()
        model.deckChanged.connect(self._attach)

    def _attach(self) -> None:
        deck = self.model.deck
        hub = hub_of(deck.addons) if deck is not None else None
        if hub is not None:
            hub.set_tray(self.asker)

    def close(self) -> None:
        deck = self.model.deck
        hub = hub_of(deck.addons) if deck is not None else None
        if hub is not None and hub.tray is self.asker:
            hub.set_tray(None)
        self.asker.close()


class ApprovalMenu(QObject):
    """A profile's "Ask before agents act" section of its tray submenu: a heading and
    four choices, the profile's own value or the one for all profiles (entries, not a
    submenu: a third-level submenu opens over the main menu at the screen's edge)."""

    VALUES: tuple[str | None, ...] = (None, "off", "risky", "all")

    def __init__(self, model: DeckModel, profile: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model, self.profile = model, profile
        self.separator = QAction(self)
        self.separator.setSeparator(True)
        self.heading = QAction("Ask before agents act", self)
        self.heading.setEnabled(False)
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.choices: dict[str | None, QAction] = {}
        for value in self.VALUES:
            action = QAction(self)
            action.setCheckable(True)
            action.setObjectName(f"approval-{profile}-{value or 'inherit'}")
            action.triggered.connect(lambda *_, v=value: self._choose(v))
            self.group.addAction(action)
            self.choices[value] = action

    def actions(self) -> list[QAction]:
        return [self.separator, self.heading, *self.choices.values()]

    def update(self) -> None:
        deck = self.model.deck
        settings = deck.settings() if deck is not None else None
        known = settings is not None and self.profile in settings.profiles
        for action in self.choices.values():
            action.setEnabled(known)
        if settings is None or not known:
            return
        own = settings.profiles[self.profile].approval
        inherited = rules.mode_of(_without(settings, self.profile), self.profile, None)
        for value, action in self.choices.items():
            if value is None:
                action.setText(
                    f"As for all profiles: {MODE_WORDS[inherited].split(' (')[0].lower()}"
                )
            else:
                action.setText(MODE_WORDS[value])
            action.setChecked(value == own)
        effective = rules.mode_of(settings, self.profile, None)
        self.heading.setText(f"Ask before agents act ({effective})")

    def _choose(self, value: str | None) -> None:
        self.model.set_approval(self.profile, value)

    def dispose(self) -> None:
        self.deleteLater()


def _without(settings: config.Config, profile: str) -> config.Config:
    """``settings`` as if the profile had no value of its own (what "as set for all" means)."""
    import copy

    other = copy.copy(settings)
    other.profiles = dict(settings.profiles)
    other.profiles[profile] = copy.copy(settings.profiles[profile])
    other.profiles[profile].approval = None
    return other
