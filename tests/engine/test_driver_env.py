"""The Playwright driver gets Node's compile cache in a private folder of ours (issue 14).

Real engines (real Playwright drivers); the driver's environment is read from /proc.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from browserdeck import paths
from browserdeck.engine import Engine
from browserdeck.engine.driver_env import CACHE_VARIABLE

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the driver's environment from /proc"
)


def _driver_environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(): v.decode() for k, v in pairs}


def _cached_files(folder: Path) -> dict[Path, bytes]:
    return {f: f.read_bytes() for f in folder.rglob("*") if f.is_file()}


async def _start_and_stop() -> dict[str, str]:
    """Start a real engine, return its driver's environment, stop it (node writes the
    cache as it exits)."""
    engine = Engine()
    await engine.start()
    try:
        assert engine.driver_pid is not None
        return _driver_environ(engine.driver_pid)
    finally:
        await engine.stop()


async def test_the_driver_compiles_into_our_private_cache() -> None:
    folder = paths.node_compile_cache_dir()
    environ = await _start_and_stop()
    assert environ.get(CACHE_VARIABLE) == str(folder)
    assert _cached_files(folder), "the driver wrote no compile cache"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # Only the driver's: this process (and so Chromium, which it spawns) never had it.
    assert CACHE_VARIABLE not in os.environ


async def test_a_corrupt_cache_is_recompiled_not_run() -> None:
    await _start_and_stop()
    corrupted: dict[Path, bytes] = {}
    for path, data in _cached_files(paths.node_compile_cache_dir()).items():
        corrupted[path] = bytes(b ^ 0x5A for b in data)  # same size, every byte wrong
        path.write_bytes(corrupted[path])
    assert corrupted
    # The driver starts and answers: node rejected each file (its checksum) and compiled.
    await _start_and_stop()
    rewritten = _cached_files(paths.node_compile_cache_dir())
    assert all(rewritten[path] != data for path, data in corrupted.items())


async def test_a_cache_folder_that_is_not_ours_is_not_used(tmp_path: Path) -> None:
    elsewhere = tmp_path / "planted"
    elsewhere.mkdir()
    (paths.cache_dir() / "node-compile-cache").symlink_to(elsewhere)
    environ = await _start_and_stop()  # starts, uncached
    assert CACHE_VARIABLE not in environ
    assert not any(elsewhere.iterdir())
