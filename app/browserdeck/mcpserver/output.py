"""Bounded tool output: a result over the cap goes to a file, and the result says where.

Agents pay for every character a tool returns (playwright-mcp #1216/#1131,
chrome-devtools-mcp #726: one post-click snapshot cost 211k tokens). So every text
result is capped; beyond the cap the full text is written under
``<state dir>/mcp-output/`` and the result keeps the head, says how much was left
out, where the rest is, and how to ask for less next time.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from browserdeck.errors import InvalidInput
from browserdeck.mcpserver.limits import DEFAULT_MAX_CHARS as DEFAULT_MAX_CHARS
from browserdeck.mcpserver.limits import MIN_MAX_CHARS as MIN_MAX_CHARS
from browserdeck.policy import confine
from browserdeck.util import files, paths
from browserdeck.util.fastjson import utf8

# Offloaded files older than this are removed when a new one is written.
KEEP_SECONDS = 24 * 3600

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def output_dir() -> Path:
    return paths.artifacts_dir("mcp-output")


def saved_dir() -> Path:
    """Where a tool's ``filename`` lands without a usable workspace (never pruned)."""
    from browserdeck.policy import confine

    return confine.output_folder(None)


# A folder is listed (and its old files removed) at most every PRUNE_EVERY seconds while
# what it holds, as last listed plus what was written since, fits the size limit: every
# listing stats each file, and a day of over-the-cap snapshots leaves hundreds (300
# files: 6 ms per snapshot, growing with each). The size limit holds as before.
PRUNE_EVERY = 60.0
_listed: dict[Path, tuple[float, int]] = {}  # folder -> (when listed, bytes it holds)


def offload(text: str, tool: str, suffix: str = ".txt") -> Path:
    """Write ``text`` to a fresh file under the output dir (and prune old ones)."""
    folder = output_dir()
    data = utf8(text)  # page text may hold a lone surrogate: U+FFFD, not a failed call
    _prune(folder, len(data))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = _UNSAFE.sub("-", tool)[:40]
    path = folder / f"{base}-{stamp}-{os.getpid()}-{time.monotonic_ns() % 10**6}{suffix}"
    files.write_private(path, data)
    return path


def _prune(folder: Path, adding: int = 0) -> None:
    """Make room for ``adding`` bytes: the service's disk limits (artifactsMaxMb), and at
    most a day for offloaded output."""
    from browserdeck import artifacts

    now = time.monotonic()
    listed = _listed.get(folder)
    if (
        listed is not None
        and now - listed[0] < PRUNE_EVERY
        and listed[1] + adding <= artifacts.LIMITS.max_bytes
    ):
        _listed[folder] = (listed[0], listed[1] + adding)
        return
    artifacts.prune(folder)
    cutoff = time.time() - KEEP_SECONDS
    try:
        entries = list(folder.iterdir())
    except OSError:
        _listed.pop(folder, None)
        return
    held = 0
    for entry in entries:
        try:
            info = entry.stat()
            if not stat.S_ISREG(info.st_mode):
                continue
            if info.st_mtime < cutoff:
                entry.unlink()
            else:
                held += info.st_size
        except OSError:
            continue
    _listed[folder] = (now, held + adding)


def cap(text: str, *, tool: str, max_chars: int, narrow: str | None = None) -> str:
    """``text`` itself when it fits; else its head, a marker, and the path of the whole."""
    if len(text) <= max_chars:
        return text
    path = offload(text, tool)
    room = max(MIN_MAX_CHARS // 2, max_chars - 400)
    head = text[:room]
    cut = head.rfind("\n")
    if cut > room // 2:  # end on a line boundary when that keeps most of the room
        head = head[:cut]
    left = len(text) - len(head)
    marker = (
        f"\n[output cut: {left:,} of {len(text):,} characters not shown; the full text is in {path}"
    )
    marker += f". {narrow}]" if narrow else "]"
    return head + marker


def write_output(folder: Path, name: str, data: bytes) -> Path:
    """confine.write_new with a clear error when the folder cannot be written."""
    try:
        return confine.write_new(folder, name, data)
    except OSError as exc:
        raise InvalidInput(
            f"cannot write {name!r} in {folder}: {exc.strerror or exc}",
            hint="leave filename out to get the result inline",
            code="write_failed",
        ) from None
