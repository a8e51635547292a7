"""Processes and ports: who listens on a CDP port, is a pid alive, kill a browser's group.

Linux reads ``/proc`` (no psutil dependency); macOS uses ``lsof``/``ps``;
Windows uses ``netstat``/``taskkill``.  The non-Linux paths are best effort and
are not exercised by the test suite on this machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = [
    "is_chrome_process",
    "kill_port_owner",
    "listening_pids",
    "loopback_listeners",
    "owned_by_us",
    "pid_alive",
    "pid_holds_socket",
    "port_in_use",
    "process_cmdline",
    "process_group_alive",
    "process_group_members",
    "process_uid",
    "signal_process_group",
]

log = logging.getLogger(__name__)

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


def _linux_listeners(port: int) -> list[tuple[str, int]]:
    """(inode, owner uid) of LISTEN sockets on ``port`` bound to loopback or a wildcard."""
    found: list[tuple[str, int]] = []
    ok_v4 = {"0100007F", "00000000"}  # 127.0.0.1, 0.0.0.0 (little-endian hex)
    ok_v6 = {
        "00000000000000000000000000000000",  # ::
        "00000000000000000000000001000000",  # ::1
        "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
    }
    for table, allowed in (("/proc/net/tcp", ok_v4), ("/proc/net/tcp6", ok_v6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "0A":  # 0A = TCP_LISTEN
                continue
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and address.upper() in allowed:
                found.append((fields[9], int(fields[7])))
    return found


def _linux_listen_inodes(port: int) -> set[str]:
    """Inodes of LISTEN sockets on ``port`` bound to loopback or a wildcard address."""
    return {inode for inode, _uid in _linux_listeners(port)}


def loopback_listeners(port: int) -> list[tuple[str, int]] | None:
    """``(socket inode, owner uid)`` of every socket that could take a connection to
    loopback ``port``; None where the platform cannot tell (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    return _linux_listeners(port)


def pid_holds_socket(pid: int, inode: str) -> bool:
    """Whether process ``pid`` has the socket ``inode`` open (Linux; False when unreadable)."""
    wanted = f"socket:[{inode}]"
    try:
        fds = os.scandir(f"/proc/{pid}/fd")
    except OSError:
        return False
    with fds:
        for fd in fds:
            try:
                if os.readlink(fd.path) == wanted:
                    return True
            except OSError:
                continue
    return False


def _linux_pids_with_sockets(inodes: set[str]) -> list[int]:
    wanted = {f"socket:[{inode}]" for inode in inodes}
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) in wanted:
                        pids.append(int(entry.name))
                        break
                except OSError:
                    continue
    return sorted(pids)


def listening_pids(port: int) -> list[int]:
    """Pids of processes listening on loopback ``port`` (empty when unknown)."""
    if sys.platform.startswith("linux"):
        inodes = _linux_listen_inodes(port)
        return _linux_pids_with_sockets(inodes) if inodes else []
    if sys.platform == "darwin":
        out = _run(["lsof", "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-t"])
        return sorted({int(tok) for tok in out.split() if tok.isdigit()})
    if sys.platform == "win32":
        pids = set()
        for line in _run(["netstat", "-ano", "-p", "TCP"]).splitlines():
            parts = line.split()
            if len(parts) >= 5 and parts[3].upper() == "LISTENING":
                local = parts[1]
                if local.rsplit(":", 1)[-1] == str(port) and parts[4].isdigit():
                    pids.add(int(parts[4]))
        return sorted(pids)
    return []


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


# -- process facts -------------------------------------------------------------------


def process_cmdline(pid: int) -> list[str] | None:
    """The process's argv, or None when it cannot be read."""
    if sys.platform.startswith("linux"):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
    if sys.platform == "darwin":
        out = _run(["ps", "-o", "command=", "-p", str(pid)]).strip()
        return out.split() if out else None
    return None


def process_uid(pid: int) -> int | None:
    """The real uid the process runs as, or None when it cannot be told (not Linux, gone)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def owned_by_us(pid: int) -> bool:
    """True when ``pid`` runs as our uid (unknown counts as ours only off Linux)."""
    uid = process_uid(pid)
    if uid is None:
        return not sys.platform.startswith("linux") and hasattr(os, "getuid")
    return hasattr(os, "getuid") and uid == os.getuid()


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
    if sys.platform == "win32":
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform.startswith("linux"):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        # Field 3, after the parenthesised command name (which may contain spaces).
        state = stat.rpartition(")")[2].split()[:1]
        return state != ["Z"]
    return True


def _windows_pid_alive(pid: int) -> bool:
    if sys.platform != "win32":  # keeps mypy's platform narrowing happy
        return False
    import ctypes

    # os.kill(pid, 0) would *terminate* the process on Windows; ask the kernel instead.
    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def process_group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids in process group ``pgid`` (Linux; elsewhere [] or [pgid])."""
    if sys.platform == "win32" or pgid <= 0:
        return []
    if not sys.platform.startswith("linux"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        # After the parenthesised command name: state, ppid, pgrp, ...
        fields = stat.rpartition(")")[2].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] != "Z":
            members.append(int(entry.name))
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
    return bool(process_group_members(pgid)) if sys.platform.startswith("linux") else True


def signal_process_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to group ``pgid``; False when the group is gone. Never our own group."""
    if sys.platform == "win32" or pgid <= 0 or pgid == os.getpgrp():
        return False
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


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
    # own Chrome on the same port (issue 10 item 8).
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
        _signal_all(groups, getattr(signal, "SIGKILL", signal.SIGTERM))
        _wait_gone(pids, timeout / 2)
    # The group's other members (renderers, crashpad) get no SIGTERM grace of their own.
    for pgid in {g for g in groups.values() if g is not None}:
        signal_process_group(pgid, getattr(signal, "SIGKILL", signal.SIGTERM))
    return pids


def _signal_all(groups: dict[int, int | None], sig: int) -> None:
    for pid, pgid in groups.items():
        if sys.platform == "win32":
            _run(["taskkill", "/PID", str(pid), "/T", "/F"])
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
