"""The screenshot view of the panel: the page as the agent sees it, with its ref labels.

Captures come from ``Deck.screenshot``, in-process: the same engine call agents make
through ``POST /screenshot`` or MCP, so the panel shows exactly what they get. With
``labels`` the engine draws its ref boxes into the image and the front door returns
each box with its role and name, which this view uses to name the element under the
mouse and to outline it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QWidget

from browserdeck.deck import Caller
from browserdeck.errors import BrowserdeckError
from browserdeck.gui.model import GUI_CLIENT
from browserdeck.results import ShotLabel

if TYPE_CHECKING:
    from browserdeck.deck import Deck

log = logging.getLogger(__name__)


@dataclass
class Capture:
    image: QImage
    labels: list[ShotLabel] = field(default_factory=list)
    # Refs in view whose badge found no room on the image (labels.place): listed beside it.
    unplaced: list[str] = field(default_factory=list)
    target_id: str = ""
    url: str = ""
    taken: float = field(default_factory=time.time)


class CaptureError(Exception):
    """A screenshot could not be taken; ``str()`` is the message to show in the view."""


async def capture(deck: Deck, profile: str, target_id: str | None, *, labels: bool) -> Capture:
    """Take a screenshot through the front door, in-process (labelled or plain)."""
    try:
        shot = await deck.screenshot(Caller(client=GUI_CLIENT), profile, target_id, labels=labels)
    except BrowserdeckError as exc:
        raise CaptureError(exc.message + (f"\n{exc.hint}" if exc.hint else "")) from None
    image = QImage()
    image.loadFromData(shot.png)
    if image.isNull():
        raise CaptureError("the screenshot held no readable image")
    # Boxes are in CSS pixels of the page; the image may be larger (device scale): scale
    # the boxes to the image.
    scale = image.width() / shot.width if shot.width else 1.0
    return Capture(
        image=image,
        labels=[
lb.scaled(scale) for lb in shot.labels
        ],
        unplaced=shot.unplaced,
        target_id=shot.target_id,
        url=shot.url,
    )


ZOOMS = {"Fit": None, "100%": 1.0, "200%": 2.0}


class ScreenshotView(QWidget):
    """Paints a capture (fit, or at a zoom inside a scroll area); outlines and names the
    label under the mouse; a click on a box copies its ref; a drag pans."""

    hovered = Signal(object)  # ShotLabel | None
    refClicked = Signal(str)  # the ref of the box that was clicked
    panned = Signal(int, int)  # dx, dy of a drag (the scroll area moves by it)
    # While the user has the browser (``interactive``): input on the image, in its pixels.
    pageClicked = Signal(float, float, int)  # x, y, click count
    pageScrolled = Signal(float, float, float)  # x, y, wheel pixels down
    pageKey = Signal(int, str)  # Qt key, the text it types

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("screenshotView")
        self.setMouseTracking(True)
        self.setMinimumSize(320, 200)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.capture: Capture | None = None
        self.message = "No screenshot yet."
        self.hover: ShotLabel | None = None
        self.accent = QColor("#FF4500")
        self.zoom: float | None = 1.0  # None: fit the widget
        self._press: QPointF | None = None
        self._dragged = False
        self.interactive = False
        # The message over a (stale) capture: a widget of its own, not painted into the
        # image, so that zoomed inside a scroll area it stays at the bottom of what is
        # visible instead of scrolling away with the page (attach_message_bar).
        self.message_bar = QLabel(self)
        self.message_bar.setObjectName("shotMessage")
        self.message_bar.setStyleSheet(
            "QLabel#shotMessage { background: rgba(30, 30, 30, 200); color: white;"
            " border-radius: 4px; padding: 4px 8px; }"
        )
        self.message_bar.hide()
        self._bar_host: QWidget = self

    def sizeHint(self) -> QSize:
        if self.capture is not None and self.zoom is not None:
            img = self.capture.image
            return QSize(int(img.width() * self.zoom) + 16, int(img.height() * self.zoom) + 16)
        return QSize(640, 400)

    def attach_message_bar(self, scroll: QScrollArea) -> None:
        """Keep the message bar fixed at the bottom of ``scroll``'s visible area."""
        self._bar_host = scroll
        self.message_bar.setParent(scroll)
        scroll.installEventFilter(self)
        self._place_message_bar()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._bar_host and event.type() == QEvent.Type.Resize:
            self._place_message_bar()
        return False

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self._bar_host is self:
            self._place_message_bar()

    def _place_message_bar(self) -> None:
        bar = self.message_bar
        show = bool(self.capture is not None and self.message)
        if not show:
            bar.hide()
            return
        host = self._bar_host
        area = host.viewport().geometry() if isinstance(host, QScrollArea) else host.rect()
        fm = bar.fontMetrics()
        height = fm.height() + 10
        width = max(0, area.width() - 16)
        bar.setText(fm.elidedText(self.message, Qt.TextElideMode.ElideRight, max(0, width - 16)))
        bar.setToolTip(self.message)
        bar.setGeometry(area.x() + 8, area.y() + area.height() - height - 8, width, height)
        bar.show()
        bar.raise_()

    def set_zoom(self, zoom: float | None) -> None:
        self.zoom = zoom
        self._fit_size()
        self.update()

    def _fit_size(self) -> None:
        if self.zoom is None or self.capture is None:
            self.setMinimumSize(320, 200)
            self.setMaximumSize(16777215, 16777215)
        else:
            self.setFixedSize(self.sizeHint())
        self.updateGeometry()

    def set_capture(self, capture: Capture | None, message: str = "") -> None:
        self.capture = capture
        self.message = message
        self._fit_size()
        # The caption must not outlive the image it named: name what is under the mouse
        # in the new image, or nothing.
        hover = (
            self.label_at(QPointF(self.mapFromGlobal(QCursor.pos()))) if self.underMouse() else None
        )
        if hover != self.hover:
            self.hover = hover
            self.hovered.emit(hover)
        self._place_message_bar()
        self.update()

    def set_message(self, message: str) -> None:
        """Show ``message`` instead of (no capture) or over (a stale capture) the image."""
        self.message = message
        self._place_message_bar()
        self.update()

    # --- geometry -------------------------------------------------------------------
    def _target_rect(self) -> QRectF:
        assert self.capture is not None
        img = self.capture.image
        area = QRectF(self.rect()).adjusted(8, 8, -8, -8)
        if img.width() == 0 or img.height() == 0:
            return area
        if self.zoom is not None:
            return QRectF(area.x(), area.y(), img.width() * self.zoom, img.height() * self.zoom)
        scale = min(area.width() / img.width(), area.height() / img.height(), 1.0)
        w, h = img.width() * scale, img.height() * scale
        return QRectF(area.x() + (area.width() - w) / 2, area.y() + (area.height() - h) / 2, w, h)

    def scale(self) -> float:
        """Screen pixels per image pixel as drawn now."""
        assert self.capture is not None
        return self._target_rect().width() / max(1, self.capture.image.width())

    def label_at(self, pos: QPointF) -> ShotLabel | None:
        if self.capture is None or not self.capture.labels:
            return None
        target = self._target_rect()
        s = self.scale()
        x = (pos.x() - target.x()) / s
        y = (pos.y() - target.y()) / s
        hits = [lb for lb in self.capture.labels if QRectF(*lb.box.as_list()).contains(QPointF(x, y))]
        # The smallest box under the mouse is the most specific element.
        return min(hits, key=lambda lb: lb.box.width * lb.box.height) if hits else None

    def view_rect_of(self, label: ShotLabel) -> QRectF:
        target, s, box = self._target_rect(), self.scale(), label.box
        return QRectF(target.x() + box.x * s, target.y() + box.y * s, box.width * s, box.height * s)

    def set_interactive(self, on: bool) -> None:
        """Pass clicks, the wheel and keys to the page (the user has taken it over)."""
        self.interactive = on
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus if on else Qt.FocusPolicy.NoFocus)
        if on:
            self.setCursor(Qt.CursorShape.CrossCursor)
        else:
            self.unsetCursor()

    def image_point(self, pos: QPointF) -> QPointF | None:
        """Where ``pos`` (widget pixels) falls on the image, in image pixels."""
        if self.capture is None:
            return None
        target = self._target_rect()
        if not target.contains(pos):
            return None
        s = self.scale()
        return QPointF((pos.x() - target.x()) / s, (pos.y() - target.y()) / s)

    # --- events ---------------------------------------------------------------------
    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        point = self.image_point(event.position()) if self.interactive else None
        if point is not None:
            self.pageClicked.emit(point.x(), point.y(), 2)
            return
        super().mouseDoubleClickEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        point = self.image_point(event.position()) if self.interactive else None
        if point is None:
            super().wheelEvent(event)
            return
        self.pageScrolled.emit(point.x(), point.y(), -event.angleDelta().y() / 120 * 100)
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self.interactive:
            super().keyPressEvent(event)
            return
        self.pageKey.emit(int(event.key()), event.text())
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.interactive:
            point = self.image_point(event.position())
            if point is not None and event.button() == Qt.MouseButton.LeftButton:
                self.setFocus()
                self.pageClicked.emit(point.x(), point.y(), 1)
                return
        if event.button() == Qt.MouseButton.LeftButton:
            self._press, self._dragged = event.globalPosition(), False
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._press is not None:
            if not self._dragged:
                label = self.label_at(event.position())
                if label is not None:
                    self.refClicked.emit(label.ref)
            self._press = None
            self.unsetCursor()
        super().mouseReleaseEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and self.zoom is not None:
            delta = event.globalPosition() - self._press
            if self._dragged or abs(delta.x()) + abs(delta.y()) > 4:
                self._dragged = True
                self.setCursor(Qt.CursorShape.ClosedHandCursor)
                self.panned.emit(int(-delta.x()), int(-delta.y()))
                self._press = event.globalPosition()
                return
        label = self.label_at(event.position())
        if label != self.hover:
            self.hover = label
            self.hovered.emit(label)
            if label is not None:
                self.setCursor(Qt.CursorShape.PointingHandCursor)
            else:
                self.unsetCursor()
            self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: Any) -> None:
        if self.hover is not None:
            self.hover = None
            self.hovered.emit(None)
            self.update()
        super().leaveEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.fillRect(self.rect(), self.palette().color(self.backgroundRole()).darker(104))
            if self.capture is None:
                self._paint_message(p, self.message or "No screenshot yet.")
                return
            target = self._target_rect()
            # A soft shadow and a border make the page read as a page.
            p.fillRect(target.translated(2, 3), QColor(0, 0, 0, 40))
            p.drawImage(target, self.capture.image)
            p.setPen(QPen(QColor(0, 0, 0, 60), 1))
            p.drawRect(target.adjusted(-0.5, -0.5, 0.5, 0.5))
            if self.hover is not None:
                # Only an outline here: the caption under the view names it (one display).
                rect = self.view_rect_of(self.hover)
                p.setPen(QPen(self.accent, 2))
                p.setBrush(QColor(self.accent.red(), self.accent.green(), self.accent.blue(), 40))
                p.drawRect(rect)
        finally:
            p.end()

    def _paint_message(self, p: QPainter, text: str) -> None:
        p.setPen(self.palette().color(self.foregroundRole()).lighter(160))
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.05)
        p.setFont(font)
        p.drawText(
            QRectF(self.rect()).adjusted(24, 24, -24, -24),
            Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
            text,
        )
