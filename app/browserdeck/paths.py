"""Every path browserdeck reads or writes, from one place.

``BROWSERDECK_HOME`` relocates all of them (tests point it at a temp dir):
``$BROWSERDECK_HOME/{config,data,state,cache}``.  Without it the platform's
own directories are used (platformdirs: ``~/.config/browserdeck`` etc. on Linux).
Nothing here ever points into the user's own Chrome profile.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "browserdeck"
HOME_ENV = "BROWSERDECK_HOME"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser().resolve() if value else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def config_dir() -> Path:
    home = _home()
    return _ensure(home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME)))


def data_dir() -> Path:
    home = _home()
    return _ensure(home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME)))


def state_dir() -> Path:
    home = _home()
    return _ensure(home / "state" if home else Path(platformdirs.user_state_dir(APP_NAME)))


def cache_dir() -> Path:
    home = _home()
    return _ensure(home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME)))


def config_file() -> Path:
    return config_dir() / "config.json"


def token_file(kind: str = "api") -> Path:
    """Fallback store for a secret when the OS keyring has no backend (0600)."""
    return config_dir() / f"{kind}-token"


def log_dir() -> Path:
    return _ensure(state_dir() / "log")


def browser_dir() -> Path:
    return _ensure(data_dir() / "browser")


def profile_dir(name: str) -> Path:
    """Root of a managed profile's own files (not created here)."""
    return browser_dir() / name


def profile_user_data_dir(name: str) -> Path:
    return profile_dir(name) / "user-data"


def artifacts_dir(kind: str) -> Path:
    """Screenshots, PDFs, offloaded tool output: ``<state>/<kind>``."""
    return _ensure(state_dir() / kind)


def instance_file() -> Path:
    """Where the running service writes its URL and pid for CLI/second-launch discovery."""
    return state_dir() / "instance.json"
