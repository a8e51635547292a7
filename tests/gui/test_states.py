"""Items 1 and 5 of issue 15: one vocabulary of states in tray, panel and CLI; a clean
browser exit (the user closed it) is "stopped", a kill is "crashed", in plain words."""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

import httpx
from tests.gui.conftest import running_tray, wait_for

from browserdeck.chrome import endpoint
from browserdeck.chrome.cdp import CDPClient
from browserdeck.cli.main import _status_text


async def _api_status(app: Any, profile: str) -> dict[str, Any]:
    service = app.service
    async with httpx.AsyncClient(base_url=service.url, trust_env=False) as client:
        resp = await client.get(
            "/",
            params={"profile": profile},
            headers={"Authorization": f"Bearer {service.api_token}"},
        )
    resp.raise_for_status()
    data: dict[str, Any] = resp.json()
    return data


async def test_tray_panel_and_cli_say_the_same_words(qapp: Any, saved_config: Any) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        # The extension profile: its relay listens, no Chrome is connected.
        status = await _api_status(app, "chrome")
        assert (status["state"], status["stateText"]) == ("waiting", "waiting for Chrome")
        assert "waiting for Chrome" in _status_text(status)
        assert "unreachable" not in _status_text(status)
        menu = app.tray.profile_menus["chrome"]
        await wait_for(
            lambda: menu.menu.title() == "chrome — waiting for Chrome", what="tray menu title"
        )
        assert menu.toggle.text() == "Stop relay", "the relay runs: Stop is the action"
        panel.profile_list.setCurrentRow(1)
        assert panel.selected_profile == "chrome"
        assert panel.toggle_button.text() == "Stop relay"
        tip = panel.profile_list.currentItem().toolTip()
        assert tip in ("waiting for Chrome", status.get("detail"))


async def test_user_closing_the_browser_is_stopped_not_crashed(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        ctx = app.service.contexts["agent"]
        await ctx.start()
        await wait_for(lambda: app.model.tray_state() == "running", what="running mark")
        # Browser.close from outside: what closing its last window does (a clean exit, 0).
        version = await endpoint.devtools_json(ctx.cdp_url, "/json/version", headers=ctx.headers)
        client = await CDPClient.connect(
            str(version["webSocketDebuggerUrl"]), headers=ctx.headers
        )
        with contextlib.suppress(Exception):  # the socket may drop before the answer
            await client.send("Browser.close", {})
        await client.close()
        await wait_for(
            lambda: any(t == "agent: browser quit" for _, _, t, _ in app.notices),
            what="a 'browser quit' notification",
        )
        _, level, _, message = next(n for n in app.notices if n[2] == "agent: browser quit")
        assert level == "info" and "POST" not in message
        assert not any("crashed" in t for _, _, t, _ in app.notices)
        await wait_for(lambda: app.model.tray_state() == "stopped", what="the stopped mark")
        menu = app.tray.profile_menus["agent"].menu
        await wait_for(lambda: menu.title() == "agent (default) — stopped", what="menu: stopped")
        status = await _api_status(app, "agent")
        assert status["state"] == "stopped" and status["detail"] == "the browser quit"
        assert panel.toggle_button.text() == "Start browser"


async def test_a_killed_browser_is_crashed_in_words_a_user_knows(
    qapp: Any, saved_config: Any
) -> None:
    async with running_tray(qapp) as app:
        panel = app.show_panel()
        ctx = app.service.contexts["agent"]
        await ctx.start()
        os.killpg(ctx.impl.chrome.pid, signal.SIGKILL)
        await wait_for(
            lambda: any(t == "agent: browser crashed" for _, _, t, _ in app.notices),
            what="a crash notification",
        )
        _, level, _, message = next(n for n in app.notices if n[2] == "agent: browser crashed")
        assert level == "error"
        assert "killed outright (kill -9" in message and "exit code" not in message
        assert "POST" not in message and "tray menu" in message
        await wait_for(lambda: panel.toggle_button.text() == "Start browser", what="Start")
        # The panel says what happened, not "agent is stopped".
        await wait_for(lambda: "crashed" in panel.shot.message, what="the crash in the panel")
        assert "killed outright" in panel.shot.message and "is stopped" not in panel.shot.message


async def test_a_browser_told_to_quit_is_not_said_to_be_closed_by_you(
    qapp: Any, saved_config: Any
) -> None:
    """`kill -TERM` ends Chrome with code 0, as closing its last window does: nothing may
    claim the user closed a window (this headless browser has none)."""
    async with running_tray(qapp) as app:
        ctx = app.service.contexts["agent"]
        await ctx.start()
        os.kill(ctx.impl.chrome.pid, signal.SIGTERM)
        await wait_for(
            lambda: any(t == "agent: browser quit" for _, _, t, _ in app.notices),
            what="the quit notification",
        )
        _, level, _, message = next(n for n in app.notices if n[2] == "agent: browser quit")
        assert level == "info"
        assert "told to quit by another program" in message, message
        assert "window was closed" not in message.lower()


async def test_a_busy_port_says_what_would_help(qapp: Any, saved_config: Any) -> None:
    """Start again on a port another program holds fails again: the panel says to pick
    another port (or stop that program), not "click Start browser to try again"."""
    import socket

    async with running_tray(qapp) as app:
        panel = app.show_panel()
        panel.auto_box.setChecked(False)
        ctx = app.service.contexts["agent"]
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", ctx.profile.cdp_port))
            holder.listen()
            app.model.start_profile("agent")
            await wait_for(lambda: ctx.state == "error", what="the start to fail")
            await app.model.refresh_now()
            panel.refresh_screenshot()
            await wait_for(lambda: "could not start" in panel.shot.message, what="the words")
        said = panel.shot.message
        assert "Pick another port for it in Settings" in said, said
        assert "to try again" not in said
        assert "cdpPort" not in said and "DevTools" not in said, said
