"""Every path browserdeck reads or writes, from one place.

``BROWSERDECK_HOME`` relocates all of them (tests point it at a temp dir):
``$BROWSERDECK_HOME/{config,data,state,cache}``.  Without it the platform's
own directories are used (platformdirs: ``~/.config/browserdeck`` etc. on Linux).
Nothing here ever points into the user's own Chrome profile.
"""

from __future__ import annotations

import os
import stat
import sys

# pathlib only where a Path is made: a CLI call over the API socket needs just the
# socket's path, as a string (api_socket_path), and pathlib is ~2 ms of it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

APP_NAME = "browserdeck"
HOME_ENV = "BROWSERDECK_HOME"


def _home_str() -> str | None:
    value = os.environ.get(HOME_ENV)
    # What Path(value).expanduser().resolve() gives, without pathlib.
    return os.path.realpath(os.path.expanduser(value)) if value else None


def _home() -> Path | None:
    from pathlib import Path

    home = _home_str()
    return Path(home) if home else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def _platform(kind: str) -> Path:
    # Imported here: the CLI's hot path (a call over the API socket) never needs it.
    from pathlib import Path

    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME))


def config_dir() -> Path:
    home = _home()
    return _ensure(home / "config" if home else _platform("config"))


def data_dir() -> Path:
    home = _home()
    return _ensure(home / "data" if home else _platform("data"))


def state_dir() -> Path:
    home = _home()
    return _ensure(home / "state" if home else _platform("state"))


def cache_dir() -> Path:
    home = _home()
    return _ensure(home / "cache" if home else _platform("cache"))


def config_file() -> Path:
    return config_dir() / "config.json"


def token_file(kind: str = "api") -> Path:
    """Fallback store for a secret when the OS keyring has no backend (0600)."""
    return config_dir() / f"{kind}-token"


def vault_dir() -> Path:
    """The secrets' names and origins, and their values when no OS keyring works (0700)."""
    return _private_path(data_dir() / "vault")


def auth_states_dir() -> Path:
    """Saved auth states (``browserdeck state save``): cookies and site storage (0700).

    In the data folder, never under the output folders an agent reads back."""
    return _private_path(data_dir() / "auth-states")


def _private_path(path: Path) -> Path:
    from pathlib import Path

    return Path(_private(str(path)))


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


# sun_path holds 108 bytes on Linux (104 on macOS); a longer socket path cannot be bound.
MAX_SOCKET_PATH = 100


def linux_state_dir() -> str:
    """``platformdirs.user_state_dir(APP_NAME)`` on Linux: ``$XDG_STATE_HOME`` when it is
    an absolute path, else ``~/.local/state``; tests/test_config.py holds them equal."""
    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.expanduser("~/.local/state")
    return os.path.join(base, APP_NAME)


def runtime_path() -> str:
    """A folder only we can enter (0700, owned by us), for the API's Unix socket.

    ``$BROWSERDECK_HOME/run``; else ``$XDG_RUNTIME_DIR/browserdeck`` (a per-user tmpfs);
    else ``<state>/run``. Raises ``PermissionError`` when the folder is not a plain
    directory of ours: nobody else may have put the socket's folder there.
    """
    home = _home_str()
    if home is not None:
        base = os.path.join(home, "run")
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR", "")
        if xdg and os.path.isdir(xdg):
            base = os.path.join(xdg, APP_NAME)
        elif sys.platform.startswith("linux"):
            # No per-user tmpfs (a container, a su shell): the state folder, found as
            # platformdirs finds it but without importing it and pathlib (~15 ms of a
            # CLI call), made as state_dir() makes it.
            state = linux_state_dir()
            os.makedirs(state, mode=0o700, exist_ok=True)
            base = os.path.join(state, "run")
        else:
            base = os.path.join(state_dir(), "run")
    return _private(base)


def _private(path: str) -> str:
    """``path`` created if missing (0700), checked to be a plain directory of ours
    (``PermissionError`` if not: a symlink, another user's), made 0700 if it was not."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise PermissionError(
            f"{path} is not a directory owned by this user: browserdeck keeps its socket and "
            "its compile cache only in a folder nobody else can write. Remove it (or give "
            "it to this user with chown), or set BROWSERDECK_HOME to a folder of yours"
        )
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def node_compile_cache_dir() -> Path:
    """Node's compile cache for the Playwright driver we spawn (``NODE_COMPILE_CACHE``).

    ``<cache>/node-compile-cache``, private like the runtime folder and for the same
    reason: node runs the compiled code it finds there, so nobody else may have put any
    there. Node itself rejects a cache file whose checksum or node version does not
    match. Raises ``PermissionError`` when the folder is not a plain directory of ours.
    """
    from pathlib import Path

    return Path(_private(os.path.join(cache_dir(), "node-compile-cache")))


def api_socket_path() -> str | None:
    """The control API's Unix socket (Linux: the peer's uid is checked, SO_PEERCRED).

    None where it is not served: other systems, or a path too long for a socket. A
    string, not a Path: the CLI's hot path (client.py) imports no pathlib.
    """
    if not sys.platform.startswith("linux"):
        return None
    path = os.path.join(runtime_path(), "api.sock")
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def takeover_path() -> str:
    """Where the tray app, taking over a service started for MCP clients, writes its pid
    while its own service starts: ``browserdeck mcp`` then waits for that service rather
    than start another (cli/mcp.py)."""
    return os.path.join(runtime_path(), "takeover.pid")


def api_socket() -> Path | None:
    """``api_socket_path()`` as a Path."""
    from pathlib import Path

    path = api_socket_path()
    return Path(path) if path is not None else None
