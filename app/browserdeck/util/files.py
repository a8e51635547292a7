"""Writing a file atomically: the one way browserdeck replaces a file on disk.

A reader (another browserdeck process, Chrome reading its prefs, the desktop
reading an autostart entry) sees either the old file or the new one, never half
of either, and a crash or power loss leaves the old one intact:

1. the data goes to a temp file with a unique name beside the target
   (``mkstemp``: two writers, or two threads, never share a temp file), created
   with its final mode from the first byte (so a token is never readable by others);
2. the file is fsynced, then ``os.replace``d over the target (atomic on POSIX and
   on Windows within one volume);
3. the directory is fsynced, so the rename itself survives a power loss.

A writer killed between 1 and 2 leaves ``.<name>.<random>.tmp`` behind;
``stale_temp_files`` finds those for a start-up clean-up.
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import sys
import tempfile
import time
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_prefix(path: Path) -> str:
    """The prefix of the temp files ``write_atomic`` makes for ``path``."""
    return f".{path.name}."


def write_atomic(path: Path, data: str | bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) so readers never see a torn file.

    ``mode`` is the new file's permission bits (default private to the user: what
    browserdeck writes is per-user state). Raises OSError as the write would.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode != 0o600:  # mkstemp creates 0600 already
                os.chmod(tmp, mode)
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by this user only (0600), never through a symlink.

    For what browserdeck saves from a page (screenshots, PDFs, offloaded tool output):
    page content can be private, and a folder opened to others by mistake must not
    expose it. An existing file is truncated and made 0600 as well.
    """
    with open_private(path) as fh:
        fh.write(data)


def open_private(path: Path, *, append: bool = False) -> io.BufferedWriter:
    """``path`` opened to write, as ``write_private`` writes (0600, never through a
    symlink): emptied first, or with ``append`` written at its end. For what is written
    in parts (a zip, a log of rows)."""
    end = os.O_APPEND if append else os.O_TRUNC
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | end | getattr(os, "O_NOFOLLOW", 0), 0o600)
    fh = os.fdopen(fd, "ab" if append else "wb")
    if hasattr(os, "fchmod"):
        os.fchmod(fd, 0o600)
    return fh


def _fsync_dir(directory: Path) -> None:
    # Windows cannot open a directory for fsync (and NTFS journals the rename); some
    # file systems refuse fsync on a directory: the data is written either way.
    if sys.platform == "win32":  # pragma: no cover - Windows only
        return
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def stale_temp_files(path: Path, *, older_than: float = 5.0) -> list[Path]:
    """Temp files of ``path`` that a killed ``write_atomic`` left behind.

    Files younger than ``older_than`` seconds are not listed: another process may
    be writing right now, and its ``os.replace`` must still find its file.
    """
    cutoff = time.time() - older_than
    out: list[Path] = []
    for tmp in path.parent.glob(f"{glob.escape(temp_prefix(path))}*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            if tmp.is_file() and tmp.stat().st_mtime < cutoff:
                out.append(tmp)
    return out
