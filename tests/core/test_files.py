"""files.write_atomic: the one atomic write (unique temp, fsync file and directory, replace)."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from browserdeck import config
from browserdeck.util import files


def test_write_replaces_the_file_privately_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    files.write_atomic(target, "one")
    files.write_atomic(target, b"two")
    assert target.read_text() == "two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]
    files.write_atomic(target, "three", mode=0o644)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_each_write_has_its_own_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers at once (threads, or the tray beside serve) never share a temp name."""
    target = tmp_path / "claims.json"
    sources: list[str] = []
    real_replace = os.replace

    def recording_replace(src: str, dst: object) -> None:
        sources.append(os.path.basename(src))
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", recording_replace)
    threads = [threading.Thread(target=files.write_atomic, args=(target, str(i))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(sources) == 8
    assert len(set(sources)) == 8, sources
    assert all(s.startswith(".claims.json.") and s.endswith(".tmp") for s in sources)


def test_the_file_and_its_directory_are_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    files.write_atomic(tmp_path / "x.json", "{}")
    assert synced == ["file", "dir"]


def test_a_failed_replace_keeps_the_old_file_and_removes_its_temp(tmp_path: Path) -> None:
    where = tmp_path / "d"
    (where / "blocked" / "inner").mkdir(parents=True)
    (where / "config.json").write_text("old")
    # The replace fails (a non-empty directory is in the way): its temp file goes too.
    with pytest.raises(OSError):
        files.write_atomic(where / "blocked", "new")
    assert (where / "config.json").read_text() == "old"
    assert sorted(p.name for p in where.iterdir()) == ["blocked", "config.json"]


def test_start_up_removes_old_temp_files_of_a_killed_save_but_not_a_live_one(
    bd_home: Path,
) -> None:
    path = config.load().path
    old = time.time() - 60
    killed_new = path.parent / f"{files.temp_prefix(path)}abc123.tmp"
    killed_legacy = path.parent / ".config-xyz.tmp"  # the name before write_atomic
    live = path.parent / f"{files.temp_prefix(path)}live.tmp"
    other = path.parent / ".other.json.abc.tmp"
    for p in (killed_new, killed_legacy, live, other):
        p.write_text("{")
    for p in (killed_new, killed_legacy, other):
        os.utime(p, (old, old))
    removed = config.remove_stale_temp_files(path)
    assert sorted(p.name for p in removed) == sorted([killed_new.name, killed_legacy.name])
    assert live.exists() and other.exists()
    assert not killed_new.exists() and not killed_legacy.exists()
