"""The panel's screenshot pane: the selected tab live, or as the agent sees it, labelled.

The view itself (painting, hover, click to copy, drag to pan) is ``gui/screenshot.py``;
this pane is what sits around it: the header (when it was taken, Fit / 100% / 200%,
Labels, Live, Refresh), the scroll area, the refs that found no room on the image, the
caption naming what is under the mouse, and the capture itself (one at a time, through
the front door). With **Live** on (the default) the tab shows as it is now, from the
browser's screencast while the panel is visible (``gui/live_view.py``; no polling);
**Refresh** takes a still, labelled with **Labels**, which stays until the page next
changes. While the user has taken the browser over, input on the live image goes to
the page.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from browserdeck.gui.live_view import LiveFeed
from browserdeck.gui.panel_parts import NAME_ROLE, section
from browserdeck.gui.screenshot import ZOOMS, Capture, CaptureError, ScreenshotView, capture
from browserdeck.results import ShotLabel
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.deck import Deck

class ScreenshotPane(QWidget):
    """Header, scrolled view, unplaced refs and caption; ``refresh()`` takes a capture of
    the tab ``selection()`` names through ``deck()``."""

    refCopied = Signal(str)  # a ref the user clicked (on the image or in the list)

    def __init__(
        self,
        deck: Callable[[], Deck | None],
        selection: Callable[[], tuple[str | None, str | None]],
        no_tab_message: Callable[[], str],
    ) -> None:
        super().__init__()
        self._deck, self._selection, self._no_tab_message = deck, selection, no_tab_message
        self._capturing: asyncio.Task[None] | None = None
        self._watching = False  # the panel is visible (set_watching)
        self.live = LiveFeed(deck, self)
        self.live.frameShown.connect(self._on_live_frame)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 6, 0, 0)
        col.addLayout(self._header())
        body = QHBoxLayout()
        self.view = ScreenshotView()
        self.view.hovered.connect(self._on_hovered)
        self.view.refClicked.connect(self.refCopied)
        self.scroll_area = QScrollArea()
        self.scroll_area.setObjectName("screenshotScroll")
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.scroll_area.setWidget(self.view)
        self.view.attach_message_bar(self.scroll_area)
        self.view.panned.connect(self._pan)
        self.view.pageClicked.connect(self.live.click)
        self.view.pageScrolled.connect(self.live.scroll)
        self.view.pageKey.connect(self.live.key_press)
        self.live.failed.connect(lambda why: self.view.set_message(f"no live view: {why}"))
        body.addWidget(self.scroll_area, 1)
        # Refs whose badge found no room on the image: listed, never silently dropped.
        self.unplaced_box = QWidget()
        side = QVBoxLayout(self.unplaced_box)
        side.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Not labelled in the image (no room):")
        title.setObjectName("hint")
        title.setWordWrap(True)
        self.unplaced_list = QListWidget()
        self.unplaced_list.setObjectName("unplaced")
        self.unplaced_list.setToolTip("Click a ref to copy it")
        self.unplaced_list.itemClicked.connect(
            lambda item: self.refCopied.emit(str(item.data(NAME_ROLE)))
        )
        side.addWidget(title)
        side.addWidget(self.unplaced_list, 1)
        self.unplaced_box.setFixedWidth(220)
        self.unplaced_box.hide()
        body.addWidget(self.unplaced_box)
        col.addLayout(body, 1)
        self.hover_label = QLabel(" ")
        self.hover_label.setObjectName("hoverLabel")
        self.hover_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.hover_label)
        self.set_zoom("100%")

    def _header(self) -> QHBoxLayout:
        head = QHBoxLayout()
        head.addWidget(section("Screenshot"))
        self.info = QLabel()
        self.info.setObjectName("shotInfo")
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.addWidget(self.info, 1)
        self.labels_box = QCheckBox("Labels")
        self.labels_box.setObjectName("labels")
        self.labels_box.setChecked(True)
        self.labels_box.setToolTip("Draw the element refs (e12…) an agent would act on")
        self.labels_box.toggled.connect(lambda *_: self.refresh(still=True))
        self.live_box = QCheckBox("Live")
        self.live_box.setObjectName("live")
        self.live_box.setChecked(True)
        self.live_box.setToolTip(
            "Show the tab as it is now (the browser's screencast) while this window is "
            "visible; off: screenshots on demand (Refresh)"
        )
        self.live_box.toggled.connect(lambda *_: self.refresh())
        self.auto_box = self.live_box  # what the panel and its tests call it
        self.refresh_button = QToolButton()
        self.refresh_button.setObjectName("refreshShot")
        self.refresh_button.setText("Refresh")
        self.refresh_button.setToolTip("Take a screenshot now (labelled with Labels)")
        self.refresh_button.clicked.connect(lambda *_: self.refresh(still=True))
        self.zoom_buttons: dict[str, QToolButton] = {}
        group = QButtonGroup(self)
        group.setExclusive(True)
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
            group.addButton(button)
            self.zoom_buttons[text] = button
            head.addWidget(button)
        head.addSpacing(8)
        head.addWidget(self.labels_box)
        head.addWidget(self.live_box)
        head.addWidget(self.refresh_button)
        return head

    # --- live -------------------------------------------------------------------------
    @property
    def live_on(self) -> bool:
        return self._watching and self.live_box.isChecked()

    def set_watching(self, visible: bool) -> None:
        """The panel is (or is no longer) visible: the live view follows."""
        self._watching = visible
        self.sync_live()

    def sync_live(self) -> None:
        name, target = self._selection()
        deck = self._deck()
        ready = deck is not None and deck.started and name is not None and target is not None
        self.live.follow((name, target) if self.live_on and ready else None)  # type: ignore[arg-type]

    def set_interactive(self, on: bool) -> None:
        """The user has the browser: input on the live image goes to the page."""
        self.view.set_interactive(on)

    def _on_live_frame(self, shot: Capture) -> None:
        if shot.target_id != self._selection()[1] or self.busy():
            return
        self.set_capture(shot)
        image = shot.image
        stamp = time.strftime("%H:%M:%S", time.localtime(shot.taken))
        self.info.setText(f"  live · {stamp} · {image.width()}×{image.height()}")

    async def stop_live(self) -> None:
        await self.live.stop()

    # --- capturing ------------------------------------------------------------------
    def refresh(self, *, still: bool = False) -> asyncio.Task[None] | None:
        """Show the selected tab: live (Live on), else, or with ``still``, a new screenshot
        (skipped if one is in flight)."""
        self.sync_live()
        deck = self._deck()
        name, target = self._selection()
        if deck is None or not deck.started or name is None or target is None:
            if self.busy():
                return None
            self.set_capture(None, self._no_tab_message())
            self.info.setText("")
            return None
        if self.live_on and not still:
            return None
        if self.busy():
            return self._capturing
        labels = self.labels_box.isChecked()
        self.refresh_button.setEnabled(False)

        async def go() -> None:
            try:
                shot = await capture(deck, name, target, labels=labels)
                if not shiboken6.isValid(self):
                    return  # the panel was closed for good meanwhile (the app quits)
            except CaptureError as exc:
                if (name, target) == self._selection():
                    self.set_capture(None, str(exc))
                    self.info.setText("")
            else:
                if (name, target) == self._selection():
                    self.set_capture(shot)
                    stamp = time.strftime("%H:%M:%S", time.localtime(shot.taken))
                    n = len(shot.labels)
                    self.info.setText(
                        f"  {stamp} · {shot.image.width()}×{shot.image.height()}"
                        + (f" · {n} label{'s' if n != 1 else ''}" if labels else "")
                    )
            finally:
                self._capturing = None
                if not shiboken6.isValid(self):
                    return  # noqa: B012 (nothing of it is left to update)
                self.refresh_button.setEnabled(True)
                # The selection moved while this capture ran: take one of the new tab.
                if (name, target) != self._selection():
                    self.refresh()

        self._capturing = aio.create_task(go(), name="gui-screenshot")
        return self._capturing

    def busy(self) -> bool:
        return self._capturing is not None and not self._capturing.done()

    def set_capture(self, shot: Capture | None, message: str = "") -> None:
        before = self.view.capture
        self.view.set_capture(shot, message)
        if shot is not None and (
            before is None or (before.target_id, before.url) != (shot.target_id, shot.url)
        ):
            # Another tab or another page: from its top-left corner. The last one's
            # offset left a short page scrolled past its end, looking blank.
            self.scroll_area.horizontalScrollBar().setValue(0)
            self.scroll_area.verticalScrollBar().setValue(0)
        self._show_unplaced(shot)

    def set_accent(self, color: str) -> None:
        self.view.accent = QColor(color)

    def set_zoom(self, text: str) -> None:
        """Fit, 100% or 200%; zoomed, the view scrolls and a drag pans."""
        zoom = ZOOMS[text]
        self.zoom_buttons[text].setChecked(True)
        self.view.set_zoom(zoom)  # first: fit mode lifts the fixed size the zoom set
        self.scroll_area.setWidgetResizable(zoom is None)

    def _pan(self, dx: int, dy: int) -> None:
        for bar, d in (
            (self.scroll_area.horizontalScrollBar(), dx),
            (self.scroll_area.verticalScrollBar(), dy),
        ):
            bar.setValue(bar.value() + d)

    def _on_hovered(self, label: ShotLabel | None) -> None:
        if label is None:
            self.hover_label.setText(" ")
        else:
            self.hover_label.setText(f"{label.describe()}  —  click to copy {label.ref}")

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
