"""Loading and saving the config: JSON with camelCase keys, written atomically.

``<config dir>/config.json``::

    {"enabled": true, "controlPort": 18791, "defaultProfile": "agent",
     "profiles": {"agent": {"driver": "managed", "cdpPort": 18800, "color": "#FF4500"}}}

A file that fails to parse is never replaced silently: it is moved aside to
``config.json.bad-<time>`` and the error says where it went.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from browserdeck.config.model import Config, check_consistency, default_config, from_json
from browserdeck.errors import BrowserdeckError, ConfigError, InvalidInput
from browserdeck.util import paths
from browserdeck.util.files import stale_temp_files, write_atomic


@dataclass
class LoadResult:
    config: Config
    path: Path
    # Set when the file on disk could not be used; says what happened and where it went.
    problem: str | None = None


def load(path: Path | None = None) -> LoadResult:
    """Read the config; create it with defaults when missing.

    A file that is not valid JSON, or has an invalid value, is moved aside to
    ``config.json.bad-<time>`` (never overwritten in place) and defaults are used
    for this run; ``problem`` says so, and the service reports it on ``GET /``.
    """
    path = path or paths.config_file()
    if not path.exists():
        config = default_config()
        save(config, path)
        return LoadResult(config, path)
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text)
        config = from_json(raw)
        return LoadResult(config, path)
    except (json.JSONDecodeError, UnicodeDecodeError, InvalidInput) as exc:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.bad-{stamp}")
        n = 1
        while aside.exists():
            aside = path.with_name(f"{path.name}.bad-{stamp}-{n}")
            n += 1
        os.replace(path, aside)
        reason = exc.message if isinstance(exc, InvalidInput) else f"not valid JSON ({exc})"
        problem = (
            f"config file {path} could not be used: {reason}. It was kept as {aside}; "
            "browserdeck is running with default settings. Fix that file and move it back, "
            "or re-apply your settings."
        )
        config = default_config()
        save(config, path)
        return LoadResult(config, path, problem)


def read(path: Path | None = None) -> Config:
    """The config as saved, for a program that only looks (CLI helpers, the tray's peek).

    Unlike ``load`` it never writes: a missing file gives the defaults, and a broken
    one raises ConfigError saying what is wrong, without moving it aside (that is the
    service's job, at its start, where the problem is reported).
    """
    path = path or paths.config_file()
    try:
        return from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return default_config()
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check the file's permissions"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, InvalidInput) as exc:
        reason = exc.message if isinstance(exc, InvalidInput) else f"not valid JSON ({exc})"
        raise ConfigError(
            f"config file {path} cannot be used: {reason}",
            hint="fix that file; or start browserdeck, which keeps it aside as "
            "config.json.bad-<time>, runs on defaults and says so",
        ) from None


# read_cached's last read of each config file: (its mtime, what it held).
_read_cache: dict[str, tuple[int, Config]] = {}


def read_cached(path: Path | None = None) -> Config:
    """The config as saved, for a caller that consults it on every call (MCP tools).

    Re-read only when the file changed (its mtime). Never raises: a missing or broken
    file gives the defaults, since reporting a broken file is the service's job
    (``load``), not every reader's.
    """
    path = path or paths.config_file()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return default_config()
    cached = _read_cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        loaded = read(path)
    except (BrowserdeckError, ValueError):
        loaded = default_config()
    _read_cache[str(path)] = (stamp, loaded)
    return loaded


def save(config: Config, path: Path | None = None) -> None:
    """Write atomically (``files.write_atomic``: unique temp, fsync, replace, fsync dir)."""
    path = path or paths.config_file()
    check_consistency(config)
    write_atomic(path, json.dumps(config.to_json(), indent=2, sort_keys=False) + "\n")


# A temp file younger than this may belong to a save in flight in another process.
TEMP_FILE_GRACE = 5.0


def remove_stale_temp_files(path: Path | None = None) -> list[Path]:
    """Delete the temp files that a save killed half-way left behind.

    Called at start-up and once more a few seconds later (8 were left
    in 20 SIGKILLs of ``serve``).
    Those are ``write_atomic``'s ``.config.json.<random>.tmp``, and the
    ``.config-<random>.tmp`` that versions before it wrote. Files younger than a few
    seconds are kept: another browserdeck process (the tray beside ``serve``) may be
    saving right now, and its ``os.replace`` must still find its file.
    """
    path = path or paths.config_file()
    cutoff = time.time() - TEMP_FILE_GRACE
    legacy = [
        tmp
        for tmp in path.parent.glob(".config-*.tmp")
        if tmp.is_file() and tmp.stat().st_mtime < cutoff
    ]
    removed: list[Path] = []
    for tmp in [*stale_temp_files(path, older_than=TEMP_FILE_GRACE), *legacy]:
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed.append(tmp)
    return removed


def updated(config: Config, change: Callable[[Config], None]) -> Config:
    """Apply ``change`` to a copy, validate the result, and return it (the original is untouched)."""
    candidate = copy.deepcopy(config)
    change(candidate)
    check_consistency(candidate)
    return candidate
