"""Disk limits for the files browserdeck saves (docs/reliability.md).

Screenshots, PDFs, downloads and MCP output land under ``<state dir>/<kind>``. Each such
folder is kept under two limits from the settings (one schema: ``config.SETTINGS``):
``artifactsMaxMb`` (its total size) and ``artifactsMaxAgeDays`` (the age of its files).
:func:`prune` runs after every write and removes the oldest files first; the file just
written always stays. Logs rotate on their own size limit (``logMaxMb``, logsetup).

Files written into an agent's own workspace (``<workspace>/browserdeck-output``) are the
agent's, and never pruned.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass
class Limits:
    max_bytes: int = 500 * 2**20
    max_age_seconds: float = 7 * 86400


LIMITS = Limits()


def configure(*, max_mb: int, max_age_days: int) -> None:
    """Apply the settings (the service calls this at start and when settings change)."""
    LIMITS.max_bytes = max_mb * 2**20
    LIMITS.max_age_seconds = max_age_days * 86400


def prune(folder: Path, keep: Path | None = None) -> list[Path]:
    """Remove files of ``folder`` past the age limit, then the oldest until the folder
    fits the size limit. ``keep`` (the file just written) is never removed."""
    try:
        entries = [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return []
    files: list[tuple[float, int, Path]] = []
    for path in entries:
        try:
            info = path.stat()
        except OSError:
            continue
        files.append((info.st_mtime, info.st_size, path))
    files.sort()  # oldest first
    cutoff = time.time() - LIMITS.max_age_seconds
    total = sum(size for _, size, _ in files)
    removed: list[Path] = []
    for mtime, size, path in files:
        if path == keep:
            continue
        if mtime >= cutoff and total <= LIMITS.max_bytes:
            break  # the rest are newer and the folder fits
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        removed.append(path)
    if removed:
        log.info("removed %d old file(s) from %s (disk limits)", len(removed), folder)
    return removed
