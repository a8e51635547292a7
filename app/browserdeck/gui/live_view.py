"""The panel's live view: the selected tab as it is now, from the browser's screencast.

``LiveFeed`` holds at most one ``Deck.watch_tab`` view (recording/live.py): the tab the
panel shows, while the panel is visible and Live is on. Each frame (a JPEG Chromium sends
when the page repaints, at most ``FPS`` a second) becomes the screenshot pane's capture.
Hidden, minimised or Live off, the view is closed: no frame is made, sent or decoded.

While the user has taken the profile's browser over, the pane passes clicks, the wheel
and keys on the image to the page through the same view (``click``, ``scroll``, ``key``,
``text``): a headless browser is used by hand here.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QImage

from browserdeck.errors import BrowserdeckError
from browserdeck.gui.model import DeckModel
from browserdeck.gui.screenshot import Capture
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.deck import Deck
    from browserdeck.recording.live import Frame, LiveView

log = logging.getLogger(__name__)

FPS = 8.0
Key = tuple[str, str]  # profile, targetId


class LiveFeed(QObject):
    """One tab's live frames as captures (``frameShown``), or none."""

    frameShown = Signal(object)  # Capture
    failed = Signal(str)  # why the view could not be opened

    def __init__(self, deck: Callable[[], Deck | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._deck = deck
        self.key: Key | None = None
        self.view: LiveView | None = None
        self.frames = 0  # frames shown since the panel opened (tests count them)
        self.css_width = 0.0  # the page's width in CSS pixels (input is sent in those)
        self.image_width = 0
        self._switch: asyncio.Task[None] | None = None

    def follow(self, key: Key | None) -> asyncio.Task[None] | None:
        """Watch ``key`` (profile, tab), or nothing; the previous view closes first."""
        if key == self.key:
            return self._switch
        self.key = key
        previous = self._switch

        async def switch() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await self._close()
            if key is None or key != self.key:
                return
            deck = self._deck()
            if deck is None or not deck.started:
                return
            try:
                view = await deck.watch_tab(
                    DeckModel.caller(), key[0], key[1], self._on_frame, fps=FPS
                )
            except BrowserdeckError as exc:
                if key == self.key and shiboken6.isValid(self):
                    self.failed.emit(exc.message)
                return
            if key != self.key or not shiboken6.isValid(self):
                await view.stop()  # the selection moved on meanwhile
                return
            self.view = view

        self._switch = aio.create_task(switch(), name="gui-live-view")
        return self._switch

    async def stop(self) -> None:
        """Close the view (the panel hides or quits) and wait until it is closed."""
        task = self.follow(None)
        if task is not None:
            await asyncio.wait([task])

    async def _close(self) -> None:
        view, self.view = self.view, None
        if view is not None:
            await view.stop()

    def _on_frame(self, frame: Frame) -> None:
        key = self.key
        if key is None or not shiboken6.isValid(self):
            return
        image = QImage()
        if not image.loadFromData(base64.b64decode(frame.jpeg), "JPEG"):
            return
        self.frames += 1
        self.css_width, self.image_width = frame.width, image.width()
        self.frameShown.emit(Capture(image=image, target_id=key[1], url=""))

    # --- the user's input while they have the browser -------------------------------
    def _css(self, x: float, y: float) -> tuple[float, float]:
        k = self.css_width / self.image_width if self.css_width and self.image_width else 1.0
        return x * k, y * k

    def click(self, x: float, y: float, count: int = 1) -> None:
        if self.view is not None:
            cx, cy = self._css(x, y)
            aio.create_task(self.view.click(cx, cy, count=count), name="gui-live-click")

    def scroll(self, x: float, y: float, dy: float) -> None:
        if self.view is not None:
            cx, cy = self._css(x, y)
            aio.create_task(self.view.scroll(cx, cy, 0, dy), name="gui-live-scroll")

    def key_press(self, qt_key: int, text: str) -> None:
        if self.view is None:
            return
        named = KEYS.get(qt_key)
        if named is not None:
            aio.create_task(self.view.key(*named), name="gui-live-key")
        elif text and text.isprintable():
            aio.create_task(self.view.text(text), name="gui-live-text")


# Keys that type no text, as CDP names them: DOM key, Windows key code, text typed.
KEYS: dict[int, tuple[str, int, str]] = {
    Qt.Key.Key_Return.value: ("Enter", 13, "\r"),
    Qt.Key.Key_Enter.value: ("Enter", 13, "\r"),
    Qt.Key.Key_Backspace.value: ("Backspace", 8, ""),
    Qt.Key.Key_Tab.value: ("Tab", 9, ""),
    Qt.Key.Key_Escape.value: ("Escape", 27, ""),
    Qt.Key.Key_Delete.value: ("Delete", 46, ""),
    Qt.Key.Key_Left.value: ("ArrowLeft", 37, ""),
    Qt.Key.Key_Up.value: ("ArrowUp", 38, ""),
    Qt.Key.Key_Right.value: ("ArrowRight", 39, ""),
    Qt.Key.Key_Down.value: ("ArrowDown", 40, ""),
    Qt.Key.Key_Home.value: ("Home", 36, ""),
    Qt.Key.Key_End.value: ("End", 35, ""),
    Qt.Key.Key_PageUp.value: ("PageUp", 33, ""),
    Qt.Key.Key_PageDown.value: ("PageDown", 34, ""),
}
