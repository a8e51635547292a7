"""Item 2 of issue 15: a legible labelled screenshot in the panel.

Zoom (fit / 100% / 200%) with panning, one hover display, click a box to copy its
ref, and refs whose badge found no room listed beside the image — with a real
service, a real Chromium and the same POST /screenshot agents call.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QToolTip
from tests.gui.conftest import in_qt, running_tray, wait_for

FORM = (
    "data:text/html,<title>Dense</title><style>body{font:14px sans-serif}</style>"
    "<label for=n>Full name</label><br><input id=n><table>"
    + "".join(f"<tr><td>Row {i}</td><td><button>Edit {i}</button></td></tr>" for i in range(30))
    + "</table>"
)
# One button fills the viewport: its badge fits nowhere on the image.
FULL = (
    "data:text/html,<title>Full</title><style>*{margin:0}</style>"
    "<button style='width:100vw;height:100vh'>Everything</button>"
)


def _message_bar_visible(panel: Any) -> bool:
    """True when the bottom 40 px of the visible screenshot area hold the dark message bar
    (what a user sees, from a grab of the scroll area: not the widget's own idea of it).

    Called from ``wait_for``, which lets Qt lay out and paint between calls; never
    ``QApplication.processEvents()`` here: run inside an asyncio task on qasync it runs
    other tasks' wakeups re-entrantly, asyncio refuses them and they are lost (it once
    left Playwright's reader asleep, so the test failed and the service never stopped).
    """
    viewport = panel.shot_scroll.viewport()
    image = panel.shot_scroll.grab(viewport.geometry()).toImage()
    w, h = image.width(), image.height()
    for y in range(max(0, h - 40), h):
        dark = sum(1 for x in range(8, w - 8, 4) if image.pixelColor(x, y).lightness() < 90)
        if dark > 0.8 * len(range(8, w - 8, 4)):
            return True
    return False


async def _shot_of(app: Any, panel: Any, url: str) -> Any:
    ctx = app.service.contexts["agent"]
    tab = await ctx.open_tab(url)
    await wait_for(
        lambda: any(t.target_id == tab.target_id for t in app.model.tabs.get("agent", [])),
        what="the tab in the model",
    )
    for i in range(panel.tab_tree.topLevelItemCount()):
        item = panel.tab_tree.topLevelItem(i)
        if item.data(0, Qt.ItemDataRole.UserRole) == tab.target_id:
            panel.tab_tree.setCurrentItem(item)
    panel.refresh_screenshot()
    await wait_for(
        lambda: panel.shot.capture is not None and panel.shot.capture.target_id == tab.target_id,
        what="a labelled screenshot",
    )
    await wait_for(lambda: not panel.capture_busy(), what="the capture to finish")
    return panel.shot.capture


async def test_zoom_pan_hover_and_click_to_copy(qapp: Any, saved_config: Any, qtbot: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        panel.resize(1200, 900)
        shot = await _shot_of(app, panel, FORM)
        assert shot.labels and not shot.unplaced
        # 100% by default: one page pixel is one screen pixel (badges at their real size).
        assert panel.zoom_buttons["100%"].isChecked()
        assert panel.shot.scale() == 1.0
        assert panel.shot.width() >= shot.image.width()
        panel.set_zoom("200%")
        assert panel.shot.scale() == 2.0 and panel.shot.width() >= 2 * shot.image.width()
        bar = panel.shot_scroll.verticalScrollBar()
        assert bar.maximum() > 0, "zoomed in, the view scrolls"
        # A drag pans.
        start = QPoint(300, 300)
        await in_qt(lambda: qtbot.mousePress(panel.shot, Qt.MouseButton.LeftButton, pos=start))
        await in_qt(lambda: qtbot.mouseMove(panel.shot, QPoint(300, 200)))
        await in_qt(
            lambda: qtbot.mouseRelease(panel.shot, Qt.MouseButton.LeftButton, pos=QPoint(300, 200))
        )
        await wait_for(lambda: bar.value() > 0, what="the drag to pan the view")
        # A message over the zoomed image stays at the bottom of what is visible,
        # wherever the view is scrolled (it scrolled away with the image).
        panel.shot.set_message("Showing the last screenshot: the agent is stopped")
        for value in (0, bar.maximum()):
            bar.setValue(value)
            await wait_for(lambda: _message_bar_visible(panel), what=f"the message at {value}")
        panel.shot.set_message("")
        await wait_for(lambda: not _message_bar_visible(panel), what="the message gone")
        panel.set_zoom("Fit")
        await wait_for(lambda: bar.maximum() == 0, what="fit: nothing to scroll")
        assert panel.shot.scale() <= 1.0
        panel.set_zoom("100%")

        # Hover a box: one display (the caption), no tooltip repeating it.
        button = next(lb for lb in shot.labels if lb.name == "Edit 0")
        center = panel.shot.view_rect_of(button).center().toPoint()
        await in_qt(lambda: qtbot.mouseMove(panel.shot, center))
        await wait_for(
            lambda: panel.hover_label.text().startswith(button.describe()), what="hover caption"
        )
        assert not QToolTip.isVisible()
        # A click on the box copies its ref.
        QGuiApplication.clipboard().clear()
        await in_qt(lambda: qtbot.mouseClick(panel.shot, Qt.MouseButton.LeftButton, pos=center))
        await wait_for(
            lambda: QGuiApplication.clipboard().text() == button.ref, what="the ref copied"
        )


async def test_refs_without_room_are_listed_beside_the_image(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        shot = await _shot_of(app, panel, FULL)
        assert [lb.name for lb in shot.labels] == ["Everything"]
        assert shot.unplaced == [shot.labels[0].ref]
        assert panel.unplaced_box.isVisible()
        assert panel.unplaced_list.count() == 1
        assert panel.unplaced_list.item(0).text().startswith(shot.labels[0].ref)
        # The hover caption does not outlive the image it named (item 10).
        panel.shot.hover = shot.labels[0]
        panel.shot_pane._on_hovered(shot.labels[0])
        panel._set_capture(None, "gone")
        assert panel.hover_label.text().strip() == ""
        assert not panel.unplaced_box.isVisible()


SHORT = "data:text/html,<title>Short</title><h1>Short page</h1>"


async def test_a_new_page_is_shown_from_its_top(qapp: Any, saved_config: Any) -> None:
    """Scrolled down a long page at 200%, then another page: the view starts at its top
    left (the old offset showed a short page scrolled past its end, blank). A new
    screenshot of the same page keeps where the user scrolled to."""
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        panel.resize(1200, 900)
        await _shot_of(app, panel, FORM)
        panel.set_zoom("200%")
        vbar, hbar = panel.shot_scroll.verticalScrollBar(), panel.shot_scroll.horizontalScrollBar()
        await wait_for(lambda: vbar.maximum() > 0 and hbar.maximum() > 0, what="room to scroll")
        vbar.setValue(vbar.maximum())
        hbar.setValue(hbar.maximum())
        # The same page again (auto-refresh): the user's place stays.
        panel.refresh_screenshot()
        await wait_for(lambda: not panel.capture_busy(), what="the capture to finish")
        assert vbar.value() == vbar.maximum() > 0
        # Another page: from its top-left corner.
        await _shot_of(app, panel, SHORT)
        await wait_for(lambda: (vbar.value(), hbar.value()) == (0, 0), what="the view at the top")
