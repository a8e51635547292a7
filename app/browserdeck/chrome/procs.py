"""Processes and ports: who listens on a CDP port, is a pid alive, kill a browser's group.

All process and socket facts come from psutil (one cross-platform source instead of
hand-parsed ``/proc``, ``lsof``, ``netstat`` and ``ctypes``). Process groups are POSIX
(``os.getpgid``/``os.killpg``). Only the Linux paths are exercised by the test suite
on this machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass

import psutil

from browserdeck.policy.guard import is_loopback_address

__all__ = [
    "SIGKILL",
    "Listener",
    "is_chrome_process",
    "kill_port_owner",
    "listening_pids",
    "loopback_listeners",
    "owned_by_us",
    "parent_pid",
    "pid_alive",
    "port_in_use",
    "process_cmdline",
    "process_group_alive",
    "process_group_members",
    "process_uid",
    "signal_process_group",
    "sweep_group_blocking",
]

log = logging.getLogger(__name__)

# Windows has no SIGKILL; there the callers use Popen.kill() (TerminateProcess) anyway.
SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)

_BROWSER_WORDS = ("chrome", "chromium", "brave", "msedge", "microsoft-edge", "headless_shell")


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.settimeout(0.5)
        try:
            sock.connect((host, port))
        except OSError:
            return False
    return True


# -- who listens on a port -----------------------------------------------------------


@dataclass(frozen=True)
class Listener:
    """A TCP socket listening where a connection to loopback ``port`` could land.

    ``pid`` and ``uid`` are None when the socket's process is hidden from us: it is
    another user's (an unprivileged process sees only its own users' sockets' owners).
    """

    pid: int | None
    uid: int | None


def _takes_loopback(address: str) -> bool:
    """Whether a socket bound to ``address`` accepts connections to 127.0.0.1 / ::1."""
    return is_loopback_address(address) or address in ("0.0.0.0", "::", "::ffff:0.0.0.0")


def _listeners(port: int) -> list[Listener] | None:
    """Every LISTEN socket on ``port`` bound to loopback or a wildcard; None when the
    platform does not let us list other users' sockets (macOS without root)."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return None
    found: list[Listener] = []
    for conn in conns:
        if conn.status != psutil.CONN_LISTEN or not conn.laddr:
            continue
        if conn.laddr.port == port and _takes_loopback(conn.laddr.ip):
            found.append(Listener(conn.pid, process_uid(conn.pid) if conn.pid else None))
    return found


def loopback_listeners(port: int) -> list[Listener] | None:
    """Every socket that could take a connection to loopback ``port``, with its owner;
    None where the platform cannot tell (then the caller skips the ownership check)."""
    return _listeners(port)


def listening_pids(port: int) -> list[int]:
    """Pids of processes listening on loopback ``port`` that we can see (empty when unknown)."""
    listeners = _listeners(port)
    if listeners is not None:
        return sorted({lst.pid for lst in listeners if lst.pid})
    # No global socket table (macOS without root): our own processes' sockets.
    pids: set[int] = set()
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            for conn in proc.net_connections(kind="tcp"):
                if (
                    conn.status == psutil.CONN_LISTEN
                    and conn.laddr
                    and conn.laddr.port == port
                    and _takes_loopback(conn.laddr.ip)
                ):
                    pids.add(proc.pid)
                    break
    return sorted(pids)


# -- process facts -------------------------------------------------------------------


def process_cmdline(pid: int) -> list[str] | None:
    """The process's argv, or None when it cannot be read.

    An empty argv is "cannot be read" too: the kernel shows none for a zombie, and
    none for a moment while a process is in exec() (seen in CI right after Popen).
    """
    try:
        return list(psutil.Process(pid).cmdline()) or None
    except (psutil.Error, OSError):
        return None


def process_uid(pid: int) -> int | None:
    """The real uid the process runs as, or None when it cannot be told (Windows, gone)."""
    if sys.platform == "win32":
        return None
    try:
        return int(psutil.Process(pid).uids().real)
    except (psutil.Error, OSError):
        return None


def parent_pid(pid: int) -> int | None:
    """The parent's pid, or None when the process is gone or hidden."""
    try:
        return int(psutil.Process(pid).ppid())
    except (psutil.Error, OSError):
        return None


def owned_by_us(pid: int) -> bool:
    """True when ``pid`` runs as our user (unknown counts as not ours)."""
    if sys.platform == "win32":
        try:
            return bool(psutil.Process(pid).username() == psutil.Process().username())
        except (psutil.Error, OSError):
            return False
    uid = process_uid(pid)
    return uid is not None and uid == os.getuid()


def is_chrome_process(pid: int) -> bool:
    argv = process_cmdline(pid)
    if not argv:
        return False
    exe = os.path.basename(argv[0]).lower()
    return any(word in exe for word in _BROWSER_WORDS) or any(
        arg.startswith("--remote-debugging-port") for arg in argv
    )


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, i.e. exited but not reaped, counts as gone)."""
    if pid <= 0:
        return False
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
    except (psutil.Error, OSError):
        return True  # it exists, we may just not look at it


def process_group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids in process group ``pgid`` (POSIX; [] on Windows)."""
    if sys.platform == "win32" or pgid <= 0:
        return []
    members = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
    return members


def process_group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` runs.

    Zombies do not count: once the browser exits, its helpers are re-parented to
    init, and an init that reaps lazily (containers, microVMs) can leave them as
    zombies for seconds although they are long dead.
    """
    if sys.platform == "win32" or pgid <= 0:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return bool(process_group_members(pgid))


def signal_process_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to group ``pgid``; False when the group is gone. Never our own group."""
    if sys.platform == "win32" or pgid <= 0 or pgid == os.getpgrp():
        return False
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def sweep_group_blocking(pgid: int) -> None:
    """Kill what is left of a browser's process group once its main process is gone.

    The group's other members are not our children, so there is no exit event to await:
    poll briefly, letting helpers notice the browser is gone, then SIGKILL."""
    deadline = time.monotonic() + 0.5
    while process_group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if signal_process_group(pgid, SIGKILL):
        deadline = time.monotonic() + 5.0
        while process_group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)


# -- reset-profile -------------------------------------------------------------------


def kill_port_owner(port: int, timeout: float = 5.0) -> list[int]:
    """Kill whatever listens on loopback ``port``; returns the pids that were killed.

    A Chrome that leads its own process group (as browserdeck starts it) is killed
    with its whole group (renderers, GPU, crashpad); anything else by pid.  SIGTERM
    first, SIGKILL after ``timeout / 2``.  This process and its own group are never
    touched.  Used by ``reset-profile`` to clear an orphan from an earlier run.
    """
    me = os.getpid()
    # Another user's process is never ours to kill, even when we are root: it may be their
    # own Chrome on the same port (docs/security.md).
    pids = [pid for pid in listening_pids(port) if pid != me and owned_by_us(pid)]
    if not pids:
        return []
    groups: dict[int, int | None] = {}
    for pid in pids:
        groups[pid] = None
        if sys.platform != "win32" and is_chrome_process(pid):
            with contextlib.suppress(OSError):
                pgid = os.getpgid(pid)
                if pgid == pid and pgid != os.getpgrp():
                    groups[pid] = pgid
    log.warning("killing %s listening on 127.0.0.1:%d", pids, port)
    _signal_all(groups, signal.SIGTERM)
    if not _wait_gone(pids, timeout / 2):
        _signal_all(groups, SIGKILL)
        _wait_gone(pids, timeout / 2)
    # The group's other members (renderers, crashpad) get no SIGTERM grace of their own.
    for pgid in {g for g in groups.values() if g is not None}:
        signal_process_group(pgid, SIGKILL)
    return pids


def _signal_all(groups: dict[int, int | None], sig: int) -> None:
    for pid, pgid in groups.items():
        if sys.platform == "win32":  # no process groups: the process and its descendants
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                for child in proc.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        child.kill()
                proc.kill()
            continue
        if pgid is not None and signal_process_group(pgid, sig):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_gone(pids: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if not any(pid_alive(pid) for pid in pids):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
