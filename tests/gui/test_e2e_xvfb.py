"""End to end under Xvfb with a real tray host (trayer): the app as a person starts it.

`browserdeck` starts, its icon embeds in the tray, a second launch opens the panel
of the running instance, a screenshot of the screen is saved, and SIGTERM leaves
no Chromium and no port behind.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QImage
from tests.gui.apprun import app_env, chromium_pids, port_is_free, run_cli, running_app, wait_until
from tests.gui.conftest import gui_config
from tests.gui.xdisplay import missing_tools, xvfb_with_tray

from browserdeck import config
from browserdeck.util import paths

# Outside CI a developer without Xvfb/trayer gets a skip; in CI (`make test` installs
# them) a missing tool must fail, never silently skip the only real-tray test.
pytestmark = pytest.mark.skipif(
    bool(missing_tools()) and not os.environ.get("CI"),
    reason=f"needs {', '.join(missing_tools())} (make system-deps)",
)


def test_tray_panel_screenshot_and_clean_exit(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    cfg = gui_config(start_default_profile=True, headless=True)
    config.save(cfg)
    with xvfb_with_tray() as x:
        env = app_env(BROWSERDECK_CHROME=chromium_path, **x.env())
        with running_app(env=env) as app:
            visible = app.wait_event("tray-visible")
            left, top, width, height = visible["geometry"]
            assert width > 0 and height > 0
            # The icon really sits in trayer's panel: one of its embedded windows is ours.
            wait_until(
                lambda: app.pid in [x.window_pid(w) for w in x.tray_children()],
                what="our icon window inside trayer's panel",
            )
            app.wait_event("service-started")
            assert app.count("panel-shown") == 0, "with a tray the panel waits to be asked"

            second = run_cli(env=env)
            assert second.returncode == 0, second.stderr
            app.wait_event("panel-shown")
            app.wait_event("panel-painted")
            wait_until(lambda: '"browserdeck"' in x.tree(), what="the panel window on screen")
            wait_until(
                lambda: chromium_pids(str(bd_home)),
                timeout=30,
                what="the default profile's browser",
            )

            shot = tmp_path / "screen.png"
            x.grab(str(shot))
            image = QImage(str(shot))
            assert not image.isNull() and image.width() == 1280
            # The tray icon is drawn in the profile colour (#FF4500) where the tray put it.
            icon_pixels = [
                QColor(image.pixel(left + dx, top + dy))
                for dx in range(width)
                for dy in range(height)
            ]
            assert any(
                c.red() > 200 and 40 < c.green() < 120 and c.blue() < 60 for c in icon_pixels
            ), "no orange tray icon in the screenshot"

            assert app.terminate() == 0
            assert app.count("shutdown-done") == 1
    wait_until(lambda: not chromium_pids(str(bd_home)), timeout=10, what="Chromium to exit")
    assert port_is_free(cfg.control_port)
    assert port_is_free(cfg.profiles["agent"].cdp_port or 0)
    assert not paths.instance_file().exists()


def test_user_closing_the_browser_window_is_stopped_not_crashed(
    bd_home: Path, chromium_path: str
) -> None:
    """Issue 15 item 1, as a person does it: the × of the agent's browser window."""
    cfg = gui_config(start_default_profile=True, headless=False)
    config.save(cfg)
    with xvfb_with_tray() as x:
        env = app_env(BROWSERDECK_CHROME=chromium_path, **x.env())
        with running_app(env=env) as app:
            app.wait_event("service-started", timeout=90)
            pids = wait_until(
                lambda: chromium_pids(str(bd_home)), timeout=60, what="the headed browser"
            )

            def browser_windows() -> list[str]:
                # Its normal top-level windows (not the hidden client-leader window).
                return [
                    w
                    for w in x.window_ids()
                    if x.window_pid(w) in pids
                    and "_NET_WM_WINDOW_TYPE_NORMAL" in x.run("xprop", "-id", w)
                ]

            windows = wait_until(browser_windows, timeout=30, what="the browser's window")
            for window in windows:
                x.close_window(window)
            wait_until(
                lambda: not chromium_pids(str(bd_home)),
                timeout=30,
                what=f"it to exit (closed {windows}, left {browser_windows()})\n{app.log()}",
            )

            def closed_notice() -> dict[str, Any] | None:
                return next(
                    (
                        e
                        for e in list(app.events)
                        if e.get("event") == "notice" and e.get("title") == "agent: browser quit"
                    ),
                    None,
                )

            notice = wait_until(closed_notice, timeout=30, what=f"the closed notice\n{app.log()}")
            assert notice["level"] == "info" and "POST" not in notice["message"]
            assert "Its last window was closed, or another program told it to quit" in (
                notice["message"]
            )
            assert not any(
                e.get("event") == "notice" and "crashed" in str(e.get("title")) for e in app.events
            )
            assert app.terminate() == 0
