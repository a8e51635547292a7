"""Item 11 of issue 15: `browserdeck` with no display says so in one line and runs the
headless service (as `serve` does) instead of aborting inside Qt."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from tests.gui.apprun import app_env, running_app, wait_until
from tests.gui.conftest import gui_config

from browserdeck import config
from browserdeck.cli.gui import display_problem


def test_display_problem_names_what_is_missing(tmp_path: Path) -> None:
    assert display_problem({}) == "no display: DISPLAY and WAYLAND_DISPLAY are unset"
    # A display number nobody serves (Qt would abort on it).
    assert "does not answer" in (display_problem({"DISPLAY": ":987654"}) or "")
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    missing = {"WAYLAND_DISPLAY": "wayland-77", "XDG_RUNTIME_DIR": str(tmp_path)}
    assert "Wayland display wayland-77" in (display_problem(missing) or "")


def test_no_display_runs_the_headless_service(bd_home: Path, chromium_path: str) -> None:
    cfg = gui_config()
    config.save(cfg)
    env = app_env(BROWSERDECK_CHROME=chromium_path)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        env.pop(name, None)
    with running_app(env=env) as app:
        wait_until(
            lambda: any("serving http://127.0.0.1" in line for line in app.output),
            timeout=60,
            what=f"the service to start\n{app.log()}",
        )
        first = app.output[0]
        assert first.startswith("browserdeck: no display") and "headless" in first
        assert not any("Aborted" in line or "qt.qpa" in line for line in app.output)
        health = httpx.get(f"http://127.0.0.1:{cfg.control_port}/health", trust_env=False)
        assert health.status_code == 200
        assert app.terminate() == 0
    assert os.environ.get("QT_QPA_PLATFORM") == "offscreen"  # the test process is untouched
