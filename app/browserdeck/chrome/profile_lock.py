"""The profile's ``SingletonLock``: who holds a user data dir, claiming it, orphans.

Chromium's own singleton guards a profile against a second browser; browserdeck reads and
writes the same lock (the headless shell writes none) and closes a browser an earlier
browserdeck left running on it. Kept apart from the launch: it is file-system and process
work that ``close_orphan`` and the drivers use without launching anything.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from browserdeck.chrome.procs import (
    SIGKILL,
    parent_pid,
    pid_alive,
    process_cmdline,
    process_uid,
    signal_process_group,
    sweep_group_blocking,
)
from browserdeck.errors import STOP_OF, Conflict, Hint

__all__ = [
    "LOCK_GUARD",
    "claim_profile",
    "close_orphan",
    "profile_lock_owner",
    "profile_locked",
    "release_profile",
]

log = logging.getLogger(__name__)


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
                raise profile_locked(profile, owner, udd, while_starting=True)
    raise Conflict(
        f"cannot start profile '{profile}': its lock {lock} could not be written (a stale "
        "lock that cannot be removed, or other launches on this profile writing it anew)",
        hint=f"check that {udd} is writable and that nothing else starts this profile, "
        "then start it again",
        code="profile_locked",
    )


def profile_locked(
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
    for sig in (signal.SIGTERM, SIGKILL):
        if not (target_group and signal_process_group(pid, sig)):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not pid_alive(pid):
            break
    if target_group:
        sweep_group_blocking(pid)
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
