"""A managed browser's launch options, command line and environment.

Pure functions of ``LaunchOptions`` (no process is started here), so the flags a profile
gets can be read and tested apart from the launch itself.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "HEADLESS_DISABLED_FEATURES",
    "HEADLESS_ENABLED_FEATURES",
    "LaunchOptions",
    "child_env",
    "child_home",
    "chrome_args",
    "has_display",
    "running_as_root",
]


@dataclass
class LaunchOptions:
    profile: str
    port: int
    user_data_dir: Path
    color: str
    headless: bool
    no_sandbox: bool
    executable: str | None = None
    extra_args: list[str] = field(default_factory=list)
    window_size: tuple[int, int] = (1280, 800)
    ready_timeout: float = 15.0
    # Linux: the browser's HOME/XDG dirs (see child_env). None = child_home(opts).
    home_dir: Path | None = None
    isolate_home: bool = True
    # DevTools over --remote-debugging-pipe behind our CDP endpoint on ``port``
    # (docs/security.md). Off only on Windows, where the pipe's fds 3/4 do not exist: there Chrome
    # listens on ``port`` itself, as before.
    pipe: bool = sys.platform != "win32"
    # The endpoint's token (the API token) and the URL policy it applies to clients.
    token: Callable[[], str] = lambda: ""
    allow_file_urls: Callable[[], bool] = lambda: False
    # Where the CDP endpoint's clients may take files from for a page (the uploadRoots
    # setting; chrome/policy.py).
    upload_roots: Callable[[], Sequence[str]] = tuple


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def has_display() -> bool:
    """Can a headed browser open a window here? (Linux: DISPLAY or WAYLAND_DISPLAY set.)"""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


# A headless browser has no omnibox to show, yet Chromium 15x preloads its two popup
# WebUIs (chrome://omnibox-popup.top-chrome/, browser_ui targets) at start: a renderer
# that took ~1.1 s of the ~2.3 s of CPU Chromium spends starting here, on the path of a
# service an MCP client waits for (measured in docs/performance.md). Headed browsers
# keep them: there a person types into the omnibox.
HEADLESS_DISABLED_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]
# The network service in the browser process instead of a utility process of its own: a
# process fewer to start, ~30 ms of the ~200 ms of CPU the headless shell spends in its
# first 2 s here (docs/performance.md). Headless only, like the above, and Linux only:
# Chromium runs the network service unsandboxed on Linux (NetworkServiceSandbox is off
# there), so moving it into the browser process crosses no sandbox boundary; on Windows
# and macOS it is sandboxed, and keeps its process. The cost: a crash in it takes the
# whole browser down instead of being restarted (the service then reports the browser
# gone, as for any crash).
HEADLESS_ENABLED_FEATURES = ["NetworkServiceInProcess2"]


def chrome_args(
    opts: LaunchOptions, *, system: str | None = None, as_root: bool | None = None
) -> list[str]:
    """The browser's command line (without the executable)."""
    system = system or platform.system()
    as_root = running_as_root() if as_root is None else as_root
    width, height = opts.window_size
    devtools = (
        ["--remote-debugging-pipe"]
        if opts.pipe
        else [f"--remote-debugging-port={opts.port}", "--remote-debugging-address=127.0.0.1"]
    )
    args = [
        *devtools,
        f"--user-data-dir={opts.user_data_dir}",
        "--no-first-run",
        "--no-default-browser-check",
        # Without these Chromium keeps trying the network (sync, component updates,
        # variations) — slow and noisy on a closed network, and not the agent's business.
        "--disable-sync",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-session-crashed-bubble",
        "--hide-crash-restore-bubble",
        "--password-store=basic",
        # Removes the "unsupported command-line flag" infobar (an invisible 56 px bar
        # that shrinks the viewport in headless mode).
        "--test-type",
        f"--window-size={width},{height}",
    ]
    # Chrome honours only the last --disable-features (and --enable-features), so merge
    # the caller's into ours.
    disabled = ["Translate", "MediaRouter"]
    enabled: list[str] = []
    if opts.headless:
        disabled += HEADLESS_DISABLED_FEATURES
        if system == "Linux":
            enabled += HEADLESS_ENABLED_FEATURES
    merged = {"--disable-features=": disabled, "--enable-features=": enabled}
    extra: list[str] = []
    for arg in opts.extra_args:
        prefix = next((p for p in merged if arg.startswith(p)), None)
        if prefix is None:
            extra.append(arg)
            continue
        for feature in arg[len(prefix) :].split(","):
            if feature and feature not in merged[prefix]:
                merged[prefix].append(feature)
    args.append("--disable-features=" + ",".join(disabled))
    if enabled:
        args.append("--enable-features=" + ",".join(enabled))
    if system == "Linux":
        # /dev/shm is 64 MB in many containers; Chromium crashes tabs when it fills.
        args.append("--disable-dev-shm-usage")
    if opts.headless:
        args.append("--headless=new")
    # Chromium refuses to run as root with its sandbox ("Running as root without
    # --no-sandbox is not supported", crbug.com/638180), so root implies no sandbox.
    if opts.no_sandbox or (as_root and system == "Linux"):
        args += ["--no-sandbox", "--disable-setuid-sandbox"]
    args += extra
    args.append("about:blank")
    return args


def child_home(opts: LaunchOptions) -> Path:
    """HOME for the browser on Linux: ``<profile dir>/home`` beside ``user-data``."""
    if opts.home_dir is not None:
        return Path(opts.home_dir)
    udd = Path(opts.user_data_dir)
    # The standard layout is <data>/browser/<name>/user-data; for a custom userDataDir
    # keep the home inside it rather than littering its parent.
    return udd.parent / "home" if udd.name == "user-data" else udd / ".home"


def child_env(opts: LaunchOptions, base: dict[str, str] | None = None) -> dict[str, str]:
    """The browser's environment.

    On Linux Chromium writes ``~/.config/chromium/Crash Reports``, ``~/.cache`` (dconf,
    fontconfig) and ``~/.pki`` even with ``--user-data-dir``; pointing HOME and the XDG
    dirs under the profile keeps the user's own Chromium/Chrome dirs untouched.  The
    X11 cookie is looked up through HOME, so XAUTHORITY is pinned to the real one.
    XDG_RUNTIME_DIR is left alone (the Wayland and D-Bus sockets live there).
    """
    env = dict(os.environ if base is None else base)
    if not (sys.platform.startswith("linux") and opts.isolate_home):
        return env
    home = child_home(opts)
    real_home = env.get("HOME") or str(Path.home())
    if "XAUTHORITY" not in env:
        cookie = Path(real_home) / ".Xauthority"
        if cookie.exists():
            env["XAUTHORITY"] = str(cookie)
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    env["HOME"] = str(home)
    env.update({key: str(path) for key, path in dirs.items()})
    return env
