"""The profile lock the launcher writes for Chromium's headless shell (``claim_profile``).

The shell keeps no process singleton, so the launcher writes Chromium's ``SingletonLock``
for it just after the spawn: two launches that both passed the check before the spawn
(two services starting at once) race there, on real files. The owners in the first tests
are stand-in processes (a Python sleeping with the profile's ``--user-data-dir`` in its
argv): the lock only reads a pid's liveness and argv, and a real shell takes about 0.3 s
to start, too slow to race many rounds. The last test races two real shells.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browserdeck.chrome import launcher
from browserdeck.chrome.launcher import launch
from browserdeck.chrome.process import ChromeProcess
from browserdeck.chrome.procs import pid_alive
from browserdeck.chrome.profile_lock import (
    LOCK_GUARD,
    claim_profile,
    profile_lock_owner,
    release_profile,
)
from browserdeck.errors import Conflict
from tests.chrome.conftest import OptionsFactory

SHELL = "/usr/lib/chromium/chromium-headless-shell"


def lock_target(udd: Path) -> str | None:
    try:
        return os.readlink(udd / "SingletonLock")
    except OSError:
        return None


def mine(pid: int) -> str:
    return f"{socket.gethostname()}-{pid}"


@pytest.fixture
def udd(tmp_path: Path) -> Path:
    path = tmp_path / "user-data"
    path.mkdir()
    return path


@pytest.fixture
def owners(udd: Path) -> Iterator[list[int]]:
    """Two live processes that read as browsers on ``udd`` (their argv names it)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)", f"--user-data-dir={udd}"]
        )
        for _ in range(2)
    ]
    yield [p.pid for p in procs]
    for proc in procs:
        proc.kill()
        proc.wait()


def test_two_claims_at_once_one_wins_and_the_losers_release_keeps_the_lock(
    udd: Path, owners: list[int]
) -> None:
    """A lock overwritten by the loser (then removed by its release) would leave the
    winner's shell running on a profile that reads as free."""

    def claim(pid: int, start: threading.Barrier, results: dict[int, Exception | None]) -> None:
        start.wait()
        try:
            claim_profile(udd, pid, "agent")
            results[pid] = None
        except Exception as exc:
            results[pid] = exc

    for _ in range(40):
        start = threading.Barrier(2)
        results: dict[int, Exception | None] = {}
        threads = [threading.Thread(target=claim, args=(pid, start, results)) for pid in owners]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [pid for pid, exc in results.items() if exc is None]
        assert len(winners) == 1, results
        (winner,) = winners
        (loser,) = set(owners) - {winner}
        refused = results[loser]
        assert isinstance(refused, Conflict) and refused.code == "profile_locked"
        assert f"pid {winner}" in str(refused) and "agent" in str(refused)
        assert f"kill {winner}" in str(refused.hint)
        assert lock_target(udd) == mine(winner)
        release_profile(udd, loser)  # the loser's shell stops: the winner's lock stays
        assert profile_lock_owner(udd) == winner
        release_profile(udd, winner)
        assert lock_target(udd) is None
    assert [p.name for p in udd.iterdir()] == [LOCK_GUARD]  # nothing left aside


def test_a_stale_lock_is_replaced_and_a_live_one_kept(udd: Path, owners: list[int]) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass", f"--user-data-dir={udd}"])
    dead.wait()
    assert not pid_alive(dead.pid)
    os.symlink(mine(dead.pid), udd / "SingletonLock")
    claim_profile(udd, owners[0])
    assert lock_target(udd) == mine(owners[0])
    claim_profile(udd, owners[0])  # its own lock: nothing to do
    with pytest.raises(Conflict):
        claim_profile(udd, owners[1])
    assert lock_target(udd) == mine(owners[0])
    # Releasing a pid the lock does not name leaves it alone.
    release_profile(udd, dead.pid)
    assert lock_target(udd) == mine(owners[0])


def test_a_release_racing_two_claims_over_a_stale_lock_leaves_one_owner(
    udd: Path, owners: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three parties: the stale lock's releaser reads it, a claim replaces it meanwhile,
    the releaser moves that live lock aside to check it, and a second claim, seeing no
    lock, writes its own; the put-back then fails and both claims would hold the
    profile. The releaser is slowed around its rename to open those windows every time;
    browserdeck's flock (``LOCK_GUARD``) makes the three take turns."""
    dead = subprocess.Popen([sys.executable, "-c", "pass", f"--user-data-dir={udd}"])
    dead.wait()
    real_rename = os.rename

    def slow_rename(src: Any, dst: Any) -> None:
        if threading.current_thread().name == "releaser":
            time.sleep(0.1)  # the claim replaces the stale lock meanwhile
            real_rename(src, dst)
            time.sleep(0.2)  # the second claim finds no lock meanwhile
            return
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", slow_rename)
    results: dict[int, Exception | None] = {}

    def claim(pid: int, delay: float) -> None:
        time.sleep(delay)
        try:
            claim_profile(udd, pid, "agent")
            results[pid] = None
        except Exception as exc:
            results[pid] = exc

    os.symlink(mine(dead.pid), udd / "SingletonLock")
    threads = [
        threading.Thread(target=release_profile, args=(udd, dead.pid), name="releaser"),
        threading.Thread(target=claim, args=(owners[0], 0.03)),
        threading.Thread(target=claim, args=(owners[1], 0.2)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [pid for pid, exc in results.items() if exc is None]
    assert len(winners) == 1, results
    (loser,) = set(owners) - set(winners)
    assert isinstance(results[loser], Conflict)
    assert lock_target(udd) == mine(winners[0])
    assert sorted(p.name for p in udd.iterdir()) == sorted([LOCK_GUARD, "SingletonLock"])


@pytest.mark.skipif(
    not os.access(SHELL, os.X_OK), reason="Debian's chromium-headless-shell is not installed"
)
async def test_two_launches_of_one_profile_at_once_leave_one_shell(
    options: OptionsFactory, launched: list[ChromeProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both pass the check before the spawn (held there until both have: launches that
    took turns would be refused by the check instead, "is already using it"); the one
    that loses the lock written after the spawn stops its shell and says so."""
    both_checked = threading.Barrier(2, timeout=30)
    real_prepare = launcher._prepare

    def prepare(opts: Any) -> Any:
        found = real_prepare(opts)
        both_checked.wait()
        return found

    monkeypatch.setattr(launcher, "_prepare", prepare)
    first = options("agent", executable=SHELL)
    second = options("agent", executable=SHELL, user_data_dir=first.user_data_dir)
    results = await asyncio.gather(launch(first), launch(second), return_exceptions=True)
    browsers = [r for r in results if isinstance(r, ChromeProcess)]
    launched.extend(browsers)
    refused = [r for r in results if not isinstance(r, ChromeProcess)]
    assert len(browsers) == 1 and len(refused) == 1, results
    assert isinstance(refused[0], Conflict) and refused[0].code == "profile_locked"
    assert "took it while this one was starting" in refused[0].message  # claim_profile's
    assert profile_lock_owner(first.user_data_dir) == browsers[0].pid
    assert [p for p in _shells_on(first.user_data_dir)] == [browsers[0].pid]


def _shells_on(udd: Path) -> list[int]:
    """Pids of headless shells (their main process) whose argv names ``udd``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            argv
            and argv[0].endswith(b"chromium-headless-shell")
            and f"--user-data-dir={udd}".encode() in argv
            and not any(a.startswith(b"--type=") for a in argv)
        ):
            found.append(int(entry))
    return found
