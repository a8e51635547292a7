"""The real `browserdeck` process: one instance, one shutdown path, nothing left behind.

Run offscreen (no system tray there, so the panel is the main window); the Xvfb
test with a real tray host is test_e2e_xvfb.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.gui.apprun import (
    app_env,
    chromium_pids,
    port_is_free,
    run_cli,
    running_app,
    start_app,
    wait_until,
)
from tests.gui.conftest import gui_config

from browserdeck import config
from browserdeck.util import paths


@pytest.fixture(autouse=True)
def _chrome(chromium_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSERDECK_CHROME", chromium_path)


def _save_config(**overrides: Any) -> config.Config:
    cfg = gui_config(**{"start_default_profile": True, "headless": True, **overrides})
    config.save(cfg)
    return cfg


def _agent_running(url: str) -> bool:
    token = (paths.token_file("api")).read_text().strip()
    try:
        resp = httpx.get(
            f"{url}/",
            params={"profile": "agent"},
            trust_env=False,
            timeout=5,
            headers={"Authorization": f"Bearer {token}"},
        )
    except httpx.HTTPError:
        return False
    return resp.status_code == 200 and bool(resp.json().get("running"))


def _assert_nothing_left(home: Path, cfg: config.Config) -> None:
    wait_until(
        lambda: not chromium_pids(str(home)), timeout=10, what="every Chromium of this home to exit"
    )
    assert port_is_free(cfg.control_port), "the control API port is still taken"
    assert port_is_free(cfg.profiles["agent"].cdp_port or 0), "the CDP port is still taken"
    assert port_is_free(cfg.relay_port), "the relay port is still taken"
    assert not paths.instance_file().exists(), "the instance file was left behind"


def test_window_mode_second_launch_and_sigterm(bd_home: Path) -> None:
    cfg = _save_config()
    with running_app() as app:  # `browserdeck` with no command starts the tray app
        app.wait_event("tray-unavailable")
        started = app.wait_event("service-started")
        assert started["url"] == f"http://127.0.0.1:{cfg.control_port}"
        app.wait_event("panel-painted")
        wait_until(
            lambda: _agent_running(started["url"]),
            timeout=30,
            what="the default profile's browser (startDefaultProfile)",
        )
        assert chromium_pids(str(bd_home))

        # A second launch hands over to the running one and exits at once.
        shown = app.count("panel-shown")
        second = run_cli()
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stderr
        wait_until(lambda: app.count("panel-shown") > shown, what="the panel to be shown again")
        assert app.proc.poll() is None

        assert app.terminate() == 0
        assert app.count("shutdown-done") == 1
    _assert_nothing_left(bd_home, cfg)


def test_second_launch_next_to_serve_is_refused(bd_home: Path) -> None:
    cfg = gui_config()
    config.save(cfg)
    env = app_env()
    with running_app("serve", env=env) as serve:
        wait_until(
            lambda: paths.instance_file().exists(), timeout=90, what="serve to write its instance file"
        )
        wait_until(lambda: any("serving" in line for line in serve.output), what="serve to start")
        tray = run_cli("tray", env=env)
        assert tray.returncode == 1
        assert "already running" in tray.stderr and "without a tray" in tray.stderr
        assert serve.terminate() == 0


def test_quit_from_qt_runs_the_same_shutdown(bd_home: Path, tmp_path: Path) -> None:
    """QApplication.quit() (e.g. session logout) stops browsers and servers like Quit does."""
    cfg = _save_config()
    script = tmp_path / "quit_from_qt.py"
    script.write_text(
        textwrap.dedent("""
        import asyncio, sys
        from PySide6.QtWidgets import QApplication
        import browserdeck.gui.app as gui

        original = gui.TrayApp.start_service

        async def start_then_quit(self):
            ok = await original(self)
            ctx = self.service.contexts["agent"]
            while ctx.state != "running":
                await asyncio.sleep(0.05)
            QApplication.instance().quit()  # not request_quit(): Qt's own quit
            return ok

        gui.TrayApp.start_service = start_then_quit
        from browserdeck.cli.main import main
        sys.exit(main(["tray"]))
    """)
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=app_env(), timeout=90
    )
    events = [json.loads(line)["event"] for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0, out.stdout + out.stderr
    assert "quit-requested" in events and events[-1] == "shutdown-done", events
    _assert_nothing_left(bd_home, cfg)


def test_sigint_is_quit_too(bd_home: Path) -> None:
    cfg = _save_config(start_default_profile=False)
    app = start_app("tray", "--no-tray")
    try:
        app.wait_event("service-started")
        app.proc.send_signal(signal.SIGINT)
        assert app.proc.wait(30) == 0
        assert app.count("shutdown-done") == 1
    finally:
        if app.proc.poll() is None:
            app.proc.kill()
            app.proc.wait(10)
        app.close()
    _assert_nothing_left(bd_home, cfg)


def test_quit_while_the_service_still_starts_calls_the_start_off(
    bd_home: Path, tmp_path: Path
) -> None:
    """Quit during the start (here a Playwright driver that never answers: stopped with
    SIGSTOP, as a hung one cannot be had on demand) ends the app at once, its browser and
    driver with it, instead of after the driver's 30 s deadline; and tells of no failure."""
    cfg = _save_config()
    stuck = tmp_path / "stuck-driver-pid"
    script = tmp_path / "quit_while_starting.py"
    script.write_text(
        textwrap.dedent(f"""
        import asyncio, os, signal, sys
        from browserdeck.engine import pwdriver

        real_early = pwdriver.start_early

        async def start_early():
            await real_early()
            pid = pwdriver.early_pid()
            if pid is not None:
                os.kill(pid, signal.SIGSTOP)  # it never answers Playwright's handshake
                open({str(stuck)!r}, "w").write(str(pid))
                # Quit once the start is well under way (the API listens by then).
                asyncio.get_running_loop().call_later(2, os.kill, os.getpid(), signal.SIGTERM)

        pwdriver.start_early = start_early
        from browserdeck.cli.main import main
        sys.exit(main(["tray", "--no-tray"]))
    """)
    )
    # Well under the driver's 30 s deadline, which the quit must not wait for.
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=app_env(), timeout=25
    )
    events = [json.loads(line)["event"] for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0, out.stdout + out.stderr
    assert stuck.exists(), "the driver was not spawned early"
    assert "quit-requested" in events and events[-1] == "shutdown-done", events
    assert "service-started" not in events and "service-failed" not in events, events
    wait_until(lambda: not Path(f"/proc/{stuck.read_text()}").exists() or _zombie(stuck),
               timeout=10, what="the stuck driver to be gone")
    _assert_nothing_left(bd_home, cfg)


def _zombie(pid_file: Path) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid_file.read_text()}/status").read_text()
    except OSError:
        return True


async def test_a_start_asked_for_as_quit_comes_starts_nothing(
    qapp: Any, saved_config: Any
) -> None:
    """Retry clicked (a queued Qt signal) just as Quit's shutdown runs: the shutdown has
    already read which service to stop, so a service started now would outlive the app.
    None is made."""
    import asyncio

    from browserdeck.gui.app import TrayApp
    from browserdeck.master import build_service, mcp_client_config

    made: list[Any] = []

    def factory() -> Any:
        made.append(build_service(force_headless=True))
        return made[-1]

    app = TrayApp(qapp, service_factory=factory, mcp_config=mcp_client_config, tray=False)
    app.quit_requested = asyncio.Event()
    try:
        shutting = asyncio.ensure_future(app.shutdown())
        await asyncio.sleep(0)  # the shutdown is under way
        assert await app.start_service() is False
        await asyncio.wait_for(shutting, 30)
        assert made == []
    finally:
        for service in made:
            await service.stop()
        app.deleteLater()


async def test_a_start_that_cannot_build_its_service_ends_the_app(
    qapp: Any, saved_config: Any
) -> None:
    """What start_service does not turn into a notice (here the composition root fails
    to build the service) ends the app at once, through the one shutdown, rather than
    leave it waiting for a Quit with nothing running."""
    import asyncio

    from browserdeck.gui.app import TrayApp
    from browserdeck.master import mcp_client_config

    def broken() -> Any:
        raise RuntimeError("no service (test)")

    app = TrayApp(qapp, service_factory=broken, mcp_config=mcp_client_config, tray=False)
    try:
        with pytest.raises(RuntimeError, match="no service"):
            await asyncio.wait_for(app.run(), 20)  # "no hang"
        assert app._shutdown_task is not None and app._shutdown_task.done()
    finally:
        app.deleteLater()
