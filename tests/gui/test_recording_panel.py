"""The panel's Sessions view, its live view and Take over, against a real service.

* Sessions: an agent's session is listed (agent, profile, calls), its steps follow as it
  works, a step shows its images before and after side by side, Export writes a file;
* Live: frames come while the panel is visible and stop while it is hidden (counted);
* Take over: the agent's call waits; the user clicks the page through the live view of a
  headless browser; Hand back lets the agent's call run, and its answer says the user acted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import QPoint, Qt
from tests.gui.conftest import in_qt, running_tray, wait_for
from tests.recording.site import serve_site
from tests.support.service import api_client


def _agent(app: Any, session: str) -> httpx.AsyncClient:
    """An HTTP client of the tray's API that is the agent session ``session``."""
    client = api_client(app.service)
    client.headers.update({"X-Browserdeck-Client": "panel-agent", "X-Browserdeck-Session": session})
    return client


async def _open(agent: httpx.AsyncClient, url: str) -> tuple[str, str]:
    """A tab at ``url`` and the ref of its "Sign in" button (or "")."""
    tab = (await agent.post("/tabs/open", json={"url": url})).json()["targetId"]
    snap = (await agent.get("/snapshot", params={"targetId": tab})).json()["snapshot"]
    ref = snap.split('button "Sign in" [ref=')[1].split("]")[0] if "Sign in" in snap else ""
    return tab, ref


async def _select_tab(app: Any, panel: Any, target: str) -> None:
    await wait_for(
        lambda: any(t.target_id == target for t in app.model.tabs.get("agent", [])),
        what="the tab in the panel",
    )
    panel.select_tab("agent", target)
    await wait_for(lambda: panel.selected_tab() == target, what="the tab selected")


async def test_the_sessions_view_follows_an_agent_and_shows_a_step_before_and_after(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    with serve_site() as site:
        async with running_tray(qapp) as app, _agent(app, "view-1") as agent:
            panel = app.show_panel()
            pane = panel.sessions_pane
            panel.views.setCurrentWidget(pane)
            tab, ref = await _open(agent, f"{site}/login.html")
            await wait_for(lambda: pane.session_tree.topLevelItemCount() == 1, what="the session")
            row = pane.session_tree.topLevelItem(0)
            assert row.text(0) == "panel-agent" and row.text(1) == "agent"
            await wait_for(lambda: pane.step_tree.topLevelItemCount() == 2, what="two steps")
            # It follows the agent as it works.
            done = await agent.post("/act", json={"kind": "click", "ref": ref, "targetId": tab})
            assert done.status_code == 200
            # Its next snapshot says what the click changed.
            assert (await agent.get("/snapshot", params={"targetId": tab})).status_code == 200
            await wait_for(
                lambda: pane.step_tree.topLevelItemCount() == 4
                and pane.session_tree.topLevelItem(0).text(4) == "4",
                what="the click and the snapshot in the view",
            )
            step = pane.step_tree.topLevelItem(2)
            assert step.text(2).startswith(f"click {ref}") and step.text(3) == "OK"
            pane.step_tree.setCurrentItem(step)
            await wait_for(
                lambda: pane.before_box.pixmap_full is not None
                and pane.after_box.pixmap_full is not None
                and "Welcome back" in pane.details.toPlainText(),
                what="the click's images before and after, and the changes it caused",
            )
            assert pane.before_box.pixmap_full.width() >= 800
            assert "audit log unreachable" in pane.details.toPlainText()

            await in_qt(lambda: qtbot.mouseClick(pane.export_buttons["html"], Qt.MouseButton.LeftButton))
            await wait_for(lambda: pane.export_label.text().startswith("wrote "), what="an export")
            written = Path(pane.export_label.text().removeprefix("wrote "))
            assert written.is_file() and written.suffix == ".html"


async def test_live_frames_come_while_the_panel_is_visible_and_none_while_hidden(
    qapp: Any, saved_config: Any
) -> None:
    with serve_site() as site:
        async with running_tray(qapp) as app, _agent(app, "live-1") as agent:
            panel = app.show_panel()
            assert panel.auto_box is panel.shot_pane.live_box and panel.auto_box.isChecked()
            tab, _ = await _open(agent, f"{site}/anim.html")
            await _select_tab(app, panel, tab)
            live = panel.shot_pane.live
            start = live.frames
            await wait_for(lambda: live.frames >= start + 5, what="live frames", timeout=30)
            assert panel.shot.capture is not None and panel.shot.capture.target_id == tab
            assert "live" in panel.shot_info.text()
            panel.hide()
            await wait_for(lambda: live.view is None, what="the live view to close")
            hidden = live.frames
            await asyncio.sleep(1.5)
            assert live.frames == hidden, "frames came while nobody could see them"
            panel.show()
            await wait_for(lambda: live.frames >= hidden + 3, what="frames again", timeout=30)
            # Live off: nothing streams; a screenshot is taken on demand.
            panel.auto_box.setChecked(False)
            await wait_for(lambda: live.view is None, what="the live view to close")
            off = live.frames
            await asyncio.sleep(1.0)
            assert live.frames == off


async def test_take_over_holds_the_agent_while_the_user_clicks_the_live_page(
    qapp: Any, saved_config: Any, qtbot: Any
) -> None:
    with serve_site() as site:
        async with running_tray(qapp) as app, _agent(app, "take-1") as agent:
            panel = app.show_panel()
            tab, _ = await _open(agent, f"{site}/login.html")
            await _select_tab(app, panel, tab)
            await wait_for(lambda: panel.shot_pane.live.view is not None, what="the live view")
            await in_qt(lambda: qtbot.mouseClick(panel.takeover_button, Qt.MouseButton.LeftButton))
            await wait_for(lambda: panel.takeover_button.text() == "Hand back", what="taken over")
            assert panel.shot.interactive  # headless: the live view is its window
            await wait_for(
                lambda: "live view" in panel.statusBar().currentMessage(), what="why: headless"
            )
            held = asyncio.ensure_future(
                agent.get("/snapshot", params={"targetId": tab})
            )
            await asyncio.sleep(1.0)
            assert not held.done(), "the agent's call ran while the user had the browser"
            # The user clicks "Sign in" on the live image: the page gets the click.
            await wait_for(lambda: panel.shot.capture is not None, what="a live frame")
            x, y, w, h = await _user_eval(app, tab, _BUTTON_BOX)
            view = panel.shot
            target = view._target_rect()
            k = view.scale() * (view.capture.image.width() / panel.shot_pane.live.css_width)
            where = QPoint(int(target.x() + (x + w / 2) * k), int(target.y() + (y + h / 2) * k))
            await in_qt(lambda: qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=where))
            await wait_for_async(
                lambda: _user_eval(app, tab, "() => document.getElementById('banner').textContent"),
                "Welcome back",
            )
            await in_qt(lambda: qtbot.mouseClick(panel.takeover_button, Qt.MouseButton.LeftButton))
            answer = await asyncio.wait_for(held, 30)
            assert answer.status_code == 200, answer.text
            data = answer.json()
            assert "Welcome back" in data["snapshot"], "the user's click did not reach the page"
            assert "the user took this browser over" in data["note"]
            assert not panel.shot.interactive and panel.takeover_button.text() == "Take over"


_BUTTON_BOX = (
    "() => { const b = document.getElementById('go').getBoundingClientRect(); "
    "return [b.x, b.y, b.width, b.height]; }"
)


async def _user_eval(app: Any, tab: str, fn: str) -> Any:
    """The user's own evaluate on the tab (the panel's calls are never held)."""
    from browserdeck.engine import options as o

    done = await app.model.deck.on_tab(
        app.model.caller(), o.EvaluateAct(kind="evaluate", fn=fn), target=tab
    )
    return done.result


async def wait_for_async(read: Any, expected: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while (got := await read()) != expected:
        assert asyncio.get_running_loop().time() < deadline, f"still {got!r}, not {expected!r}"
        await asyncio.sleep(0.1)
