"""Start at login: the XDG entry (really written here), the LaunchAgent and Run-key contents."""

from __future__ import annotations

import configparser
import plistlib
import sys
from pathlib import Path

import pytest

from browserdeck import autostart


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "autostart" / f"{autostart.APP_ID}.desktop"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG autostart is Linux")
def test_xdg_entry_follows_the_setting(xdg: Path, bd_home: Path) -> None:
    assert not autostart.is_enabled()
    assert autostart.sync(True) is True
    assert xdg.exists()
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(xdg)
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Icon"] == autostart.APP_ID
    # The launch reaches the same config: BROWSERDECK_HOME is carried over when set.
    assert entry["Exec"].startswith(f"env BROWSERDECK_HOME={bd_home} ")
    assert autostart.sync(True) is False  # already matches: nothing rewritten
    assert autostart.sync(False) is True
    assert not xdg.exists()
    assert autostart.sync(False) is False


def test_exec_line_quotes_and_escapes() -> None:
    text = autostart.xdg_desktop_entry(
        ["/opt/my apps/browserdeck"], {"BROWSERDECK_HOME": "/a b/100%"}
    )
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert exec_line == "Exec=env BROWSERDECK_HOME='/a b/100%%' '/opt/my apps/browserdeck'"


def test_launch_agent_plist() -> None:
    data = plistlib.loads(
        autostart.launch_agent_plist(
            ["/Applications/BrowserDeck.app/x"], {"BROWSERDECK_HOME": "/tmp/h"}
        )
    )
    assert data["Label"] == autostart.APP_ID
    assert data["ProgramArguments"] == ["/Applications/BrowserDeck.app/x"]
    assert data["RunAtLoad"] is True and data["KeepAlive"] is False
    assert data["EnvironmentVariables"] == {"BROWSERDECK_HOME": "/tmp/h"}


def test_launch_agent_written_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    where = autostart.set_enabled(True, platform="darwin")
    path = Path(where.location)
    assert path == tmp_path / "Library" / "LaunchAgents" / f"{autostart.APP_ID}.plist"
    assert plistlib.loads(path.read_bytes())["Label"] == autostart.APP_ID
    assert autostart.is_enabled("darwin")
    autostart.set_enabled(False, platform="darwin")
    assert not path.exists()


def test_windows_run_value_quotes_paths() -> None:
    value = autostart.windows_run_value([r"C:\Program Files\BrowserDeck\browserdeck.exe"])
    assert value == r'"C:\Program Files\BrowserDeck\browserdeck.exe"'
    assert autostart.entry("win32").location.endswith(r"CurrentVersion\Run\BrowserDeck")


def test_launch_command_prefers_the_installed_script() -> None:
    command = autostart.launch_command()
    assert command[0].endswith("browserdeck") or command[-1] == "browserdeck"
