"""Start browserdeck at login: XDG autostart (Linux), a LaunchAgent (macOS), the Run key (Windows).

Behind the ``startAtLogin`` setting; the tray calls :func:`sync` at launch and
whenever the config changes, so the entry on disk always matches the setting,
whichever front-end changed it. Only an entry this module wrote is ever removed
(each carries our app id), never one the user made by hand under another name.

Qt-free on purpose: it is plain file/registry work, testable without a display.
"""

from __future__ import annotations

import contextlib
import logging
import os
import plistlib
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from browserdeck.util.files import write_atomic

log = logging.getLogger(__name__)

APP_ID = "io.github.browserdeck.BrowserDeck"
RUN_VALUE = "BrowserDeck"  # name of the value under HKCU\...\Run
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


def launch_command() -> list[str]:
    """How to start the tray app from a login session: the bundle, the script, or python -m."""
    if getattr(sys, "frozen", False):  # PyInstaller bundle: the executable is the app
        return [sys.executable]
    script = shutil.which("browserdeck")
    if script:
        return [script]
    return [sys.executable, "-m", "browserdeck"]


def _environment() -> dict[str, str]:
    """Variables the login-time launch needs to reach the same config (tests, portable use)."""
    value = os.environ.get("BROWSERDECK_HOME")
    return {"BROWSERDECK_HOME": value} if value else {}


@dataclass(frozen=True)
class Entry:
    """Where the autostart entry lives on this platform, for messages and tests."""

    platform: str
    location: str


def _xdg_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autostart" / f"{APP_ID}.desktop"


def _launch_agent_file() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{APP_ID}.plist"


def entry(platform: str | None = None) -> Entry:
    platform = platform or sys.platform
    if platform.startswith("linux") or platform.startswith("freebsd"):
        return Entry("xdg", str(_xdg_file()))
    if platform == "darwin":
        return Entry("launchagent", str(_launch_agent_file()))
    if platform == "win32":
        return Entry("runkey", rf"HKEY_CURRENT_USER\{RUN_KEY}\{RUN_VALUE}")
    return Entry("unsupported", "")


def xdg_desktop_entry(command: list[str], env: dict[str, str]) -> str:
    exec_line = shlex.join(command)
    if env:
        exec_line = (
            "env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + exec_line
        )
    # `%` is special in Exec lines (field codes): escape it.
    exec_line = exec_line.replace("%", "%%")
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Name=browserdeck",
            "Comment=A real browser for AI agents (tray)",
            f"Exec={exec_line}",
            "Icon=" + APP_ID,
            "Terminal=false",
            "X-GNOME-Autostart-enabled=true",
            "X-GNOME-Autostart-Delay=3",
            f"X-Browserdeck-Id={APP_ID}",
            "",
        ]
    )


def launch_agent_plist(command: list[str], env: dict[str, str]) -> bytes:
    data: dict[str, object] = {
        "Label": APP_ID,
        "ProgramArguments": command,
        "RunAtLoad": True,
        # Quit means quit: launchd must not restart the app when the user closes it.
        "KeepAlive": False,
        "ProcessType": "Interactive",
    }
    if env:
        data["EnvironmentVariables"] = env
    return plistlib.dumps(data)


def windows_run_value(command: list[str]) -> str:
    import subprocess

    return subprocess.list2cmdline(command)


def is_enabled(platform: str | None = None) -> bool:
    where = entry(platform)
    if where.platform in ("xdg", "launchagent"):
        return Path(where.location).exists()
    if where.platform == "runkey":
        return _read_run_value() is not None
    return False


def set_enabled(enabled: bool, platform: str | None = None) -> Entry:
    """Create or remove the autostart entry; returns where it is (or was)."""
    where = entry(platform)
    command, env = launch_command(), _environment()
    if where.platform == "xdg":
        _write_or_remove(
            Path(where.location), enabled, xdg_desktop_entry(command, env).encode("utf-8")
        )
    elif where.platform == "launchagent":
        _write_or_remove(Path(where.location), enabled, launch_agent_plist(command, env))
    elif where.platform == "runkey":
        if env:
            # The Run key has no environment of its own; a per-user env var would leak to
            # every program, so portable installs get a plain launch and a log line.
            log.warning("autostart on Windows ignores BROWSERDECK_HOME=%s", env)
        _write_run_value(windows_run_value(command) if enabled else None)
    else:
        log.warning("start at login is not supported on %s", sys.platform)
    return where


def sync(enabled: bool, platform: str | None = None) -> bool:
    """Make the entry match the setting. Returns True when something changed."""
    if is_enabled(platform) == enabled:
        return False
    where = set_enabled(enabled, platform)
    log.info("start at login %s (%s)", "enabled" if enabled else "disabled", where.location)
    return True


def _write_or_remove(path: Path, enabled: bool, content: bytes) -> None:
    if not enabled:
        path.unlink(missing_ok=True)
        return
    # 0644 as a desktop entry / LaunchAgent usually is (launchd refuses group/world-writable).
    write_atomic(path, content, mode=0o644)


def _read_run_value() -> str | None:  # pragma: no cover - Windows only
    if sys.platform != "win32":
        return None
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            value, _kind = winreg.QueryValueEx(key, RUN_VALUE)
    except OSError:
        return None
    return str(value)


def _write_run_value(value: str | None) -> None:  # pragma: no cover - Windows only
    if sys.platform != "win32":
        raise OSError("the Windows Run key exists only on Windows")
    import winreg

    with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
        if value is None:
            with contextlib.suppress(FileNotFoundError):
                winreg.DeleteValue(key, RUN_VALUE)
        else:
            winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, value)
