"""Launch a managed Chrome/Chromium, wait until it is ready, watch it, stop it.

``launch(opts)`` checks the port and the profile lock, bootstraps and decorates
the profile, spawns the browser in its own process group and returns once
``/json/version`` answers *and* a WebSocket handshake to the browser endpoint
succeeds.  ``ChromeProcess.stop()`` closes it through CDP ``Browser.close`` (a
signal would leave ``/tmp/org.chromium.Chromium.*`` behind and mark the exit as a
crash), then signals the process group as a fallback.

Threads, not asyncio subprocess pipes: the core runs on plain asyncio *and* on
qasync's Qt loop, and asyncio child watchers are not something to rely on there.
Each browser gets two small daemon threads: one drains its output into a bounded
ring buffer (so a chatty browser never blocks on a full pipe) and notices the
"DevTools listening on ..." line; one waits for the exit and reaps the process.
Both wake asyncio waiters through ``call_soon_threadsafe``.

Why one module (about 1,100 lines): launching, watching and stopping a managed browser is
one lifecycle around ``ChromeProcess`` (arguments and environment, the profile lock and
orphans, the pipe ends, readiness, exit reasons and their hints); each part reads the
state the others set, and the CDP side already lives apart (``pipe.py``, ``gateway.py``,
``procs.py``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.chrome.decorate import decorate_profile
from browserdeck.chrome.endpoint import fetch_version, list_targets, normalize_ws_url
from browserdeck.chrome.executables import HEADLESS_SHELL, BrowserExecutable, find_browser
from browserdeck.chrome.gateway import CdpGateway
from browserdeck.chrome.pipe import BrowserPipe, PipeCallError
from browserdeck.chrome.procs import (
    kill_port_owner,
    listening_pids,
    parent_pid,
    pid_alive,
    port_in_use,
    process_cmdline,
    process_group_alive,
    process_uid,
    signal_process_group,
)
from browserdeck.errors import (
    RESET_PROFILE,
    STOP_OF,
    ActionTimeout,
    Conflict,
    Hint,
    Unavailable,
)

__all__ = [
    "LOCK_GUARD",
    "ChromeProcess",
    "LaunchOptions",
    "child_env",
    "child_home",
    "chrome_args",
    "claim_profile",
    "close_orphan",
    "fetch_version",
    "has_display",
    "is_cdp_ready",
    "kill_port_owner",
    "launch",
    "list_targets",
    "port_in_use",
    "profile_lock_owner",
    "release_profile",
    "running_as_root",
]

log = logging.getLogger(__name__)

_OUTPUT_LINES = 400  # ring buffer of the browser's stdout+stderr
_READY_POLL = 0.05
# Without a "DevTools listening" line (a wrapper that swallows stderr), fall back to
# polling /json/version after this long.
_NO_BANNER_GRACE = 1.0
# Windows has no SIGKILL; _signal() uses Popen.kill() (TerminateProcess) there anyway.
_SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)


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


# -- flags and environment -----------------------------------------------------------


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


# -- profile lock --------------------------------------------------------------------


def profile_lock_owner(user_data_dir: Path) -> int | None:
    """Pid of a live browser holding ``user_data_dir`` (its ``SingletonLock``), else None.

    A stale lock (dead pid, a pid now running something else, or a lock written on
    another host, e.g. a container whose hostname changed) is removed: Chrome would
    otherwise refuse the profile ("in use on another computer") or hand our launch
    over to a process that is not there.
    """
    udd = Path(user_data_dir)
    with _lock_guard(udd):
        return _lock_owner(udd)


# Beside the lock in the user data dir: browserdeck's own parties (a launch's check, a
# shell's claim, its release, close_orphan) flock it around their read-judge-write of
# ``SingletonLock``. Without it, three of them could lose a live lock: one moves it aside
# to check it, a second (seeing no lock) writes its own, the put-back then fails, and two
# browsers run on the profile.
LOCK_GUARD = ".browserdeck-lock"


@contextlib.contextmanager
def _lock_guard(udd: Path) -> Iterator[None]:
    """Hold the flock on ``udd``'s ``LOCK_GUARD`` (every thread and process of ours)."""
    if sys.platform == "win32":  # no SingletonLock symlink there to judge
        yield
        return
    import fcntl

    try:
        fd = os.open(udd / LOCK_GUARD, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        fd = -1  # no such dir (then no lock either), or a read-only one: unguarded
    if fd < 0:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a new open file description: threads exclude too
        yield
    finally:
        os.close(fd)  # releases the flock


def _lock_owner(udd: Path) -> int | None:
    """``profile_lock_owner`` under the guard."""
    lock = udd / "SingletonLock"
    try:
        target = os.readlink(lock)
    except OSError:
        return None  # no lock (or not a symlink: Windows keeps a "lockfile" instead)
    host, _, pid_text = target.rpartition("-")
    pid = int(pid_text) if pid_text.isdigit() else 0
    if host == socket.gethostname() and pid_alive(pid):
        argv = process_cmdline(pid)
        if argv is None or _uses_user_data_dir(argv, udd):
            return pid
    if not _unlink_lock_if(lock, target):
        with contextlib.suppress(OSError):
            if os.readlink(lock) != target:
                return _lock_owner(udd)  # replaced meanwhile: judge the new one
        return None  # could not be removed (a read-only dir): Chrome's error says so
    log.info("removed stale browser lock %s -> %s", lock, target)
    for name in ("SingletonSocket", "SingletonCookie"):
        with contextlib.suppress(OSError):
            os.unlink(udd / name)
    return None


def _unlink_lock_if(lock: Path, target: str) -> bool:
    """Remove ``lock`` only if it still points at ``target``; whether it did.

    Called under ``_lock_guard``, so no party of ours writes the lock meanwhile; a full
    Chromium still may (its own singleton takes no flock of ours). POSIX has no
    compare-and-delete, so the lock is first renamed to a name of this thread's own (of
    two renames of one entry only one succeeds) and checked there; one that turns out
    not to be ``target`` is put back, and a put-back that finds a new lock is logged
    (that browser's lock is then lost).
    """
    try:
        if os.readlink(lock) != target:
            return False
    except OSError:
        return False
    aside = lock.with_name(f"{lock.name}.{os.getpid()}-{threading.get_ident()}")
    try:
        os.rename(lock, aside)
    except OSError:
        return False  # another launch took it first
    try:
        taken = os.readlink(aside)
        if taken != target:
            try:
                os.symlink(taken, lock)
            except FileExistsError:
                log.warning(
                    "browser lock %s -> %s was replaced while checked (now -> %s); "
                    "two browsers may be using this profile",
                    lock,
                    taken,
                    _readlink(lock),
                )
            return False
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(aside)


def _readlink(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def claim_profile(user_data_dir: Path, pid: int, profile: str = "?") -> None:
    """Write the ``SingletonLock`` Chromium writes, for a browser that writes none.

    Chromium's headless shell has no process singleton, so nothing would tell a second
    launch (or ``close_orphan``, or a full Chromium started later on the same profile)
    that the profile is in use. The same symlink (``<host>-<pid>``) makes it read as any
    Chromium's lock, and a lock left by a shell that died is stale to
    ``profile_lock_owner`` as any other. It is written just after the spawn, so two
    launches that both passed ``_prepare``'s check (two services starting at once) race
    here: the symlink is created atomically (it fails if a lock exists), a stale lock
    is replaced, and a live one raises ``Conflict`` (``profile_locked``): the caller
    stops its browser, which has not used the profile for more than its first moments.
    """
    udd = Path(user_data_dir)
    lock = udd / "SingletonLock"
    owner: int | None = None
    with _lock_guard(udd):
        for _ in range(3):  # a stale lock removed, then written anew by a full Chromium
            try:
                os.symlink(f"{socket.gethostname()}-{pid}", lock)
                return
            except FileExistsError:
                owner = _lock_owner(udd)  # removes the lock if it is stale
            if owner == pid:
                return
            if owner is not None:
                raise _profile_locked(profile, owner, udd, while_starting=True)
    raise Conflict(
        f"cannot start profile '{profile}': its lock {lock} could not be written (a stale "
        "lock that cannot be removed, or other launches on this profile writing it anew)",
        hint=f"check that {udd} is writable and that nothing else starts this profile, "
        "then start it again",
        code="profile_locked",
    )


def _profile_locked(
    profile: str, owner: int, udd: Path, *, while_starting: bool = False
) -> Conflict:
    when = "took it while this one was starting" if while_starting else "is already using it"
    return Conflict(
        f"cannot start profile '{profile}': another browser (pid {owner}) {when} "
        f"(its user data dir {udd})",
        hint=Hint(
            "stop that browser first ({stop}, or "
            + f"`kill {owner}` if browserdeck did not start it), or use the one running; "
            "two browsers cannot share a profile directory",
            stop=STOP_OF.of(profile=profile),
        ),
        code="profile_locked",
    )


def release_profile(user_data_dir: Path, pid: int) -> None:
    """Remove the lock ``claim_profile`` wrote for ``pid``, only if it is still that one:
    once the shell has exited its lock is stale, and another launch may have replaced it."""
    udd = Path(user_data_dir)
    with _lock_guard(udd):
        _unlink_lock_if(udd / "SingletonLock", f"{socket.gethostname()}-{pid}")


def close_orphan(user_data_dir: Path, timeout: float = 5.0) -> int | None:
    """Close a browser an earlier browserdeck left running on this profile; its pid, or None.

    Called at start-up, before any browser of ours runs (docs/reliability.md): the profile's
    ``SingletonLock`` names the pid. Only a browser of our own uid whose parent is no
    longer a browserdeck is touched (another user's Chrome, or one that a live
    browserdeck still owns, is left alone, and ``launch`` then reports the lock).
    SIGTERM first, to the browser's group when it leads one, which Chrome treats as a
    clean shutdown (profile saved, no crash bubble); SIGKILL after ``timeout``.
    """
    pid = profile_lock_owner(user_data_dir)
    if pid is None or sys.platform == "win32":
        return None
    uid = process_uid(pid)
    if uid is not None and uid != os.getuid():
        return None  # unknown (gone, hidden): the lock lives in our own profile dir anyway
    parent = parent_pid(pid)
    if parent is not None and parent > 1 and _is_browserdeck(parent):
        return None
    log.warning(
        "closing browser pid %d left over on %s by an earlier browserdeck", pid, user_data_dir
    )
    group: int | None = None
    with contextlib.suppress(OSError):
        group = os.getpgid(pid)
    target_group = group == pid and group != os.getpgrp()
    for sig in (signal.SIGTERM, _SIGKILL):
        if not (target_group and signal_process_group(pid, sig)):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not pid_alive(pid):
            break
    if target_group:
        _sweep_group_blocking(pid)
    profile_lock_owner(user_data_dir)  # removes the lock it left behind
    return pid


def _is_browserdeck(pid: int) -> bool:
    argv = process_cmdline(pid) or []
    return any("browserdeck" in part for part in argv[:3])


def _uses_user_data_dir(argv: list[str], udd: Path) -> bool:
    wanted = os.path.realpath(udd)
    for arg in argv:
        if arg.startswith("--user-data-dir="):
            return os.path.realpath(arg.split("=", 1)[1]) == wanted
    return False


# -- the running browser -------------------------------------------------------------


class ChromeProcess:
    """A browser that ``launch()`` started: its pid, CDP endpoints, output and lifecycle."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        executable: BrowserExecutable,
        opts: LaunchOptions,
        args: list[str],
    ) -> None:
        self._proc = proc
        self.pid = proc.pid
        self.port = opts.port
        self.profile = opts.profile
        self.cdp_url = f"http://127.0.0.1:{opts.port}"
        self.ws_url = ""
        self.executable = executable
        self.headless = opts.headless
        self.user_data_dir = Path(opts.user_data_dir)
        self.args = args
        self.version: dict[str, Any] = {}
        self.started_at = time.time()
        self._output: collections.deque[str] = collections.deque(maxlen=_OUTPUT_LINES)
        self._output_done = threading.Event()
        self._banner_ws: str | None = None  # from "DevTools listening on ws://..."
        self._devtools_failed: str | None = None
        self._returncode: int | None = None
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._stop_lock: asyncio.Lock | None = None
        # Set by launch() when the browser runs on a pipe behind our CDP endpoint.
        self.pipe: BrowserPipe | None = None
        self.gateway: CdpGateway | None = None
        if proc.stdout is not None:
            threading.Thread(
                target=self._pump_output,
                args=(proc.stdout,),
                name=f"chrome-output-{self.pid}",
                daemon=True,
            ).start()
        threading.Thread(
            target=self._wait_thread, name=f"chrome-wait-{self.pid}", daemon=True
        ).start()

    def __repr__(self) -> str:
        state = "alive" if self.alive() else f"exited {self._returncode}"
        return f"<ChromeProcess {self.profile!r} pid={self.pid} port={self.port} {state}>"

    def auth_headers(self) -> dict[str, str]:
        """What a CDP client must send to this browser's endpoint (none for a plain port)."""
        return self.gateway.auth_headers() if self.gateway is not None else {}

    # -- state --

    def alive(self) -> bool:
        # The exit thread reaps the process a moment after it dies; a request in that
        # moment must not take a killed browser for a running one (zombie = gone).
        return self._returncode is None and pid_alive(self.pid)

    def returncode(self) -> int | None:
        return self._returncode

    def stderr_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the browser printed (stdout and stderr interleaved)."""
        with self._lock:
            output = list(self._output)
        return "\n".join(output[-lines:]) if lines > 0 else ""

    async def wait_exit(self) -> int:
        """Resolves with the exit code once the browser's main process has exited."""
        while self._returncode is None:
            future = self._next_change()
            if self._returncode is not None:
                future.cancel()
                break
            await future
        return self._returncode

    # -- stop --

    async def stop(self, timeout: float = 5.0) -> None:
        """``Browser.close``; after ``timeout`` SIGTERM, then SIGKILL, the process group.

        Idempotent.  Also kills anything left in the browser's process group (e.g. a
        crash handler) once the main process is gone, and reaps the main process.
        """
        if self._stop_lock is None:
            self._stop_lock = asyncio.Lock()
        async with self._stop_lock:
            if self.alive():
                await self._close_via_cdp(min(timeout, 3.0))
                if not await self._wait_exit_for(timeout):
                    log.warning("%r ignored Browser.close; sending SIGTERM", self)
                    self._signal(signal.SIGTERM)
                    if not await self._wait_exit_for(3.0):
                        log.warning("%r ignored SIGTERM; sending SIGKILL", self)
                        self._signal(_SIGKILL)
                        await self._wait_exit_for(10.0)
            await self._sweep_group()
            await self._close_endpoint()

    async def _close_endpoint(self) -> None:
        if self.pipe is not None:
            self.pipe.close("the browser was stopped")
        if self.gateway is not None:
            await self.gateway.stop()

    async def _close_via_cdp(self, timeout: float) -> None:
        if self.pipe is not None:
            try:
                await self.pipe.call("Browser.close", timeout=timeout)
            except (Unavailable, ActionTimeout, PipeCallError) as exc:
                if not self.pipe.closed:  # closed: it went while closing, which is fine
                    log.warning("Browser.close on %r failed: %s", self, exc)
            return
        if not self.ws_url:
            return
        try:
            async with await CDPClient.connect(self.ws_url, timeout=timeout) as client:
                await client.send("Browser.close", timeout=timeout)
        except Unavailable:
            pass  # already gone, or it dropped the socket while closing: both fine
        except (ActionTimeout, CDPError) as exc:
            log.warning("Browser.close on %r failed: %s", self, exc)

    async def _wait_exit_for(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self.wait_exit(), timeout)
        except TimeoutError:
            return False
        return True

    def _signal(self, sig: int) -> None:
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                self._proc.kill()
            return
        # start_new_session made the browser the leader of group == its pid.
        if not signal_process_group(self.pid, sig):
            with contextlib.suppress(OSError):
                self._proc.send_signal(sig)

    async def _sweep_group(self) -> None:
        """Kill what is left of the group after the main process exited."""
        if sys.platform != "win32" and process_group_alive(self.pid):
            await asyncio.to_thread(_sweep_group_blocking, self.pid)

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (no grace); the waiter thread reaps it."""
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                self._proc.kill()
            return
        if not signal_process_group(self.pid, signal.SIGKILL):
            with contextlib.suppress(OSError):
                self._proc.kill()

    # -- readiness --

    async def _wait_ready(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout
        last_error = "nothing answered yet"
        while True:
            if self._returncode is not None:
                raise self._launch_failed(
                    f"{describe_exit(self._returncode)} before it answered browserdeck"
                )
            if self._devtools_failed is not None:
                raise Conflict(
                    f"Chrome for profile '{self.profile}' could not open its DevTools port "
                    f"{self.port}: {self._devtools_failed}",
                    hint="another program took the port just now; retry, or give the profile "
                    "another CDP port (Settings › Profiles; cdpPort in the config file)",
                    code="port_in_use",
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise self._launch_failed(
                    f"did not get ready on {self.cdp_url} within {timeout:g} s ({last_error})"
                )
            if self._banner_ws is not None or loop.time() - started >= _NO_BANNER_GRACE:
                try:
                    await self._probe(min(2.0, remaining))
                    return
                except Unavailable as exc:
                    last_error = exc.message
            future = self._next_change()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(future, min(_READY_POLL, max(remaining, 0.001)))

    async def _wait_pipe_ready(self, timeout: float) -> None:
        """Open the pipe and wait for ``Browser.getVersion`` (or the browser's exit)."""
        assert self.pipe is not None and self.gateway is not None
        await self.pipe.open()
        asked = asyncio.ensure_future(self.pipe.call("Browser.getVersion", timeout=timeout))
        exited = asyncio.ensure_future(self.wait_exit())
        try:
            done, _ = await asyncio.wait(
                {asked, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for future in (asked, exited):
                if not future.done():
                    future.cancel()
                    with contextlib.suppress(BaseException):
                        await future
        failure = None
        if asked in done and not asked.cancelled():
            failure = asked.exception()
            if failure is None:
                await self.gateway.attach(self.pipe, asked.result())
                self.cdp_url = self.gateway.cdp_url
                self.ws_url = self.gateway.ws_url
                self.version = self.gateway.version_json()
                return
            # The pipe closed because the browser is exiting: report its exit code.
            await self._wait_exit_for(2.0)
        if self._returncode is not None:
            # Its last words are what the user needs; the output thread ends at EOF.
            await asyncio.to_thread(self._output_done.wait, 2.0)
            raise self._launch_failed(
                f"{describe_exit(self._returncode)} before its DevTools pipe answered"
            )
        raise self._launch_failed(
            f"did not get ready on its DevTools pipe within {timeout:g} s"
            + (f" ({failure})" if failure else "")
        )

    async def _probe(self, timeout: float) -> None:
        version = await fetch_version(self.cdp_url, timeout=timeout)
        ws_url = version.get("webSocketDebuggerUrl")
        if not isinstance(ws_url, str) or not ws_url:
            raise Unavailable("no webSocketDebuggerUrl in /json/version yet")
        ws_url = normalize_ws_url(ws_url, self.cdp_url)
        if self._banner_ws is not None and urlsplit(ws_url).path != urlsplit(self._banner_ws).path:
            raise Conflict(
                f"another browser answers on port {self.port}, not the one just started for "
                f"profile '{self.profile}' ({ws_url} vs {self._banner_ws})",
                hint=Hint(
                    "two browsers are fighting over the port; reset the profile ({reset}) "
                    "and start again",
                    reset=RESET_PROFILE.of(profile=self.profile),
                ),
                code="port_in_use",
            )
        client = await CDPClient.connect(ws_url, timeout=timeout)
        await client.close()
        self.ws_url = ws_url
        self.version = version

    def _launch_failed(self, reason: str) -> Unavailable:
        tail = self.stderr_tail(20)
        output = (
            f"\n--- last browser output ---\n{tail}" if tail.strip() else " (it printed nothing)"
        )
        return Unavailable(
            f"Chrome ({self.executable.path}) for profile '{self.profile}' {reason}.{output}",
            hint=_failure_hint(tail, self.profile),
            code="launch_failed",
        )

    # -- threads --

    def _next_change(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiters.append((loop, future))
        return future

    def _notify(self) -> None:
        """Wake every asyncio waiter (called from the helper threads)."""
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_resolve, future)

    def _pump_output(self, stream: IO[bytes]) -> None:
        try:
            # readline(limit): a pathological endless line is split, never buffered whole.
            for raw in iter(lambda: stream.readline(16384), b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                notify = False
                with self._lock:
                    self._output.append(line)
                if self._banner_ws is None and line.startswith("DevTools listening on "):
                    self._banner_ws = line.split(" on ", 1)[1].strip()
                    notify = True
                elif "Cannot start http server for devtools" in line:
                    self._devtools_failed = line.strip()
                    notify = True
                if notify:
                    self._notify()
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()
            self._output_done.set()

    def _wait_thread(self) -> None:
        code = self._proc.wait()
        if self.executable.kind == HEADLESS_SHELL:
            release_profile(self.user_data_dir, self.pid)
        self._returncode = code
        log.info("%r exited: %s (code %s)", self, describe_exit(code), code)
        self._notify()


def _sweep_group_blocking(pgid: int) -> None:
    # The group's other members are not our children, so there is no exit event to
    # await: poll briefly, letting helpers notice the browser is gone, then SIGKILL.
    deadline = time.monotonic() + 0.5
    while process_group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if signal_process_group(pgid, signal.SIGKILL):
        deadline = time.monotonic() + 5.0
        while process_group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# How a signal that ended the browser reads to a person (the signal's name stays in the
# log, where it helps; "SIGKILL (exit code -9)" told a user nothing).
_SIGNAL_WORDS = {
    "SIGKILL": "was killed outright (kill -9, or the system ran out of memory)",
    "SIGTERM": "was told to quit by another program (kill)",
    "SIGINT": "was interrupted (Ctrl+C)",
    "SIGHUP": "was stopped because the terminal it ran in closed",
    "SIGSEGV": "crashed (a memory error inside the browser)",
    "SIGBUS": "crashed (a memory error inside the browser)",
    "SIGABRT": "crashed (it stopped itself on an internal error)",
    "SIGTRAP": "crashed (it stopped itself on an internal error)",
    "SIGILL": "crashed (an illegal instruction)",
}


def describe_exit(code: int) -> str:
    """How the browser ended, after "the browser": 'was killed outright (kill -9, …)',
    'crashed (…)', 'exited with code 1'."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"was stopped by signal {-code}"
        return _SIGNAL_WORDS.get(name, f"was stopped by a signal ({name})")
    return f"exited with code {code}"


def _failure_hint(tail: str, profile: str) -> str | Hint:
    if "No usable sandbox" in tail or "without --no-sandbox" in tail:
        return (
            "the browser's sandbox cannot start here (typical in containers): turn on "
            "noSandbox in settings"
        )
    if "Missing X server" in tail or "cannot open display" in tail.lower():
        return "there is no display: run the profile headless (settings, or `browserdeck serve --headless`)"
    if "existing browser session" in tail:
        return Hint(
            "another browser already uses this profile's user data dir and took over the "
            "launch; stop it ({stop}) and start again",
            stop=STOP_OF.of(profile=profile),
        )
    return (
        "check the output above; make sure the browser runs on its own "
        "(`<executable> --version`) or set executablePath to another Chrome/Chromium"
    )


# -- launch --------------------------------------------------------------------------


class BrowserOnPort(Conflict):
    """A browser's DevTools endpoint already listens on the profile's CDP port (a leftover,
    or another in-process MCP server's browser): callers that know more say so by type."""


async def _port_conflict(port: int, profile: str) -> Conflict:
    try:
        version = await fetch_version(f"http://127.0.0.1:{port}", timeout=1.0)
    except Unavailable:
        version = None
    if version is not None:
        browser = version.get("Browser") or "unknown browser"
        return BrowserOnPort(
            f"cannot start profile '{profile}': a browser ({browser}) already answers on "
            f"127.0.0.1:{port}, its CDP port, probably one left over from an earlier run",
            hint=Hint(
                "reset the profile ({reset}) to kill it; or turn on attachOnly to use that "
                "browser as it is",
                reset=RESET_PROFILE.of(profile=profile),
            ),
            code="port_in_use",
        )
    pids = await asyncio.to_thread(listening_pids, port)
    owners = ", ".join(f"pid {pid} ({_process_name(pid)})" for pid in pids)
    return Conflict(
        f"cannot start profile '{profile}': another program{f' ({owners})' if owners else ''} "
        f"is already listening on 127.0.0.1:{port}, the profile's CDP port, and it is not "
        "a browser",
        hint="stop that program, or give the profile another CDP port (Settings › Profiles; "
        "cdpPort in the config file)",
        code="port_in_use",
    )


def _process_name(pid: int) -> str:
    argv = process_cmdline(pid)
    return os.path.basename(argv[0]) if argv else "?"


def _prepare(opts: LaunchOptions) -> tuple[BrowserExecutable, list[str], dict[str, str]]:
    """The blocking part of a launch (file system only), run in a worker thread."""
    executable = find_browser(opts.executable, headless=opts.headless)
    udd = Path(opts.user_data_dir)
    udd.mkdir(parents=True, exist_ok=True, mode=0o700)
    owner = profile_lock_owner(udd)
    if owner is not None:
        raise _profile_locked(opts.profile, owner, udd)
    decorate_profile(udd, opts.profile, opts.color)
    return executable, chrome_args(opts), child_env(opts)


async def launch(opts: LaunchOptions) -> ChromeProcess:
    """Start a managed browser and return once its CDP endpoint is ready.

    With ``opts.pipe`` (everywhere but Windows) the browser gets no DevTools port: it
    talks over fds 3/4, and our CDP endpoint (chrome/gateway.py) listens on
    ``opts.port`` behind the API token. The endpoint binds first, so a taken port fails
    before any browser starts.

    Raises ``Conflict`` (``port_in_use``, ``profile_locked``), ``Unavailable``
    (``no_browser``, ``launch_failed`` with the exit code and the browser's last
    output) or ``InvalidInput`` (a bad colour).
    """
    gateway: CdpGateway | None = None
    if opts.pipe:
        gateway = CdpGateway(
            port=opts.port,
            token=opts.token,
            allow_file_urls=opts.allow_file_urls,
            upload_roots=opts.upload_roots,
            profile=opts.profile,
        )
        try:
            await gateway.bind()
        except Conflict:
            raise await _port_conflict(opts.port, opts.profile) from None
    elif await asyncio.to_thread(port_in_use, opts.port):
        raise await _port_conflict(opts.port, opts.profile)
    pipe_ends: _PipeEnds | None = None
    try:
        executable, args, env = await asyncio.to_thread(_prepare, opts)
        popen_kwargs: dict[str, Any] = {}
        if sys.platform == "win32":
            popen_kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            # Its own session and process group: stop() can signal every helper process,
            # and a Ctrl-C in our terminal does not hit the browser.
            popen_kwargs["start_new_session"] = True
        if opts.pipe:
            pipe_ends = _PipeEnds()
            popen_kwargs["preexec_fn"] = pipe_ends.in_child
            popen_kwargs["pass_fds"] = (3, 4)
        try:
            # Spawning in the loop is deliberate (~2 ms): in a worker thread, a cancelled
            # launch could not kill the browser the thread was still starting; and the
            # parent-death signal is tied to the thread that spawns (see _PipeEnds).
            with _low_fds_taken() if opts.pipe else contextlib.nullcontext():
                proc = subprocess.Popen(
                    [executable.path, *args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=env,
                    close_fds=True,
                    **popen_kwargs,
                )
        except OSError as exc:
            raise Unavailable(
                f"cannot start the browser {executable.path} for profile '{opts.profile}': {exc}",
                hint=_failure_hint("", opts.profile),
                code="launch_failed",
            ) from None
        finally:
            if pipe_ends is not None:
                pipe_ends.close_child_ends()
    except BaseException:
        if pipe_ends is not None:
            pipe_ends.close_parent_ends()
        if gateway is not None:
            await asyncio.shield(gateway.stop())
        raise
    chrome = ChromeProcess(proc, executable, opts, args)
    try:
        if executable.kind == HEADLESS_SHELL:
            # Inside the try: a launch that lost the race for the profile stops its shell.
            try:
                claim_profile(Path(opts.user_data_dir), proc.pid, opts.profile)
            except OSError as exc:
                log.warning("could not write the profile lock of %s: %s", opts.user_data_dir, exc)
        if pipe_ends is not None and gateway is not None:
            chrome.pipe = BrowserPipe(
                pipe_ends.parent_write, pipe_ends.parent_read, label=f"browser of {opts.profile!r}"
            )
            chrome.gateway = gateway
            await chrome._wait_pipe_ready(opts.ready_timeout)
        else:
            await chrome._wait_ready(opts.ready_timeout)
    except BaseException:
        chrome.kill_now()
        # Reaped before the error is raised: nothing of the failed launch is left running.
        with contextlib.suppress(BaseException):
            await asyncio.shield(chrome._wait_exit_for(5.0))
        if chrome.pipe is not None:
            chrome.pipe.close("the launch failed")
        elif pipe_ends is not None:
            pipe_ends.close_parent_ends()
        if gateway is not None:
            await asyncio.shield(gateway.stop())
        raise
    log.info(
        "started %s (%s) for profile %r: pid %d, %s",
        executable.path,
        chrome.version.get("Browser", "?"),
        opts.profile,
        chrome.pid,
        chrome.cdp_url,
    )
    return chrome


# PR_SET_PDEATHSIG (linux/prctl.h): the kernel signals the child when the thread that
# spawned it exits, so a browser on a pipe (which no later process can adopt) dies with
# its browserdeck even after a SIGKILL.
_PR_SET_PDEATHSIG = 1
_prctl: Any = None
if sys.platform.startswith("linux"):
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(None, use_errno=True).prctl


class _PipeEnds:
    """The two pipes of ``--remote-debugging-pipe``: Chrome reads fd 3, writes fd 4."""

    def __init__(self) -> None:
        import fcntl

        to_child_read, self.parent_write = os.pipe()
        self.parent_read, from_child_write = os.pipe()
        # The child's ends are moved above fd 9, so dup2 onto 3 and 4 in the child can
        # never overwrite one of them.
        self.child_read = fcntl.fcntl(to_child_read, fcntl.F_DUPFD_CLOEXEC, 10)
        self.child_write = fcntl.fcntl(from_child_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_child_read)
        os.close(from_child_write)
        self._parent_pid = os.getpid()

    def in_child(self) -> None:
        """preexec_fn: runs in the forked child, before exec; async-signal-safe calls only."""
        os.dup2(self.child_read, 3)
        os.dup2(self.child_write, 4)
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, int(_SIGKILL), 0, 0, 0)
        if os.getppid() != self._parent_pid:
            os._exit(1)  # the parent died before the death signal was armed

    def close_child_ends(self) -> None:
        for fd in (self.child_read, self.child_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def close_parent_ends(self) -> None:
        for fd in (self.parent_write, self.parent_read):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def _low_fds_taken() -> Iterator[None]:
    """Keep fds 3 and 4 occupied while Popen runs.

    Popen's own error pipe must not land on 3 or 4, where the child's dup2 would replace
    it (a failed exec would then go unreported). A busy service has them taken anyway.
    """
    placeholders: list[int] = []
    try:
        while True:
            fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            if fd > 4:
                os.close(fd)
                break
            placeholders.append(fd)
        yield
    finally:
        for fd in placeholders:
            os.close(fd)


async def is_cdp_ready(
    cdp_url: str, timeout: float = 2.0, headers: dict[str, str] | None = None
) -> bool:
    """``/json/version`` answers and its browser WebSocket accepts a handshake."""
    try:
        async with asyncio.timeout(timeout):
            version = await fetch_version(cdp_url, timeout=timeout, headers=headers)
            ws_url = version.get("webSocketDebuggerUrl")
            if not isinstance(ws_url, str) or not ws_url:
                return False
            client = await CDPClient.connect(
                normalize_ws_url(ws_url, cdp_url), headers=headers, timeout=timeout
            )
            await client.close()
            return True
    except (TimeoutError, Unavailable):
        return False
