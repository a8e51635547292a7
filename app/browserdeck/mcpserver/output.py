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
import time
from pathlib import Path

from browserdeck import paths

DEFAULT_MAX_CHARS = 20_000
MIN_MAX_CHARS = 500
# Offloaded files older than this are removed when a new one is written.
KEEP_SECONDS = 24 * 3600

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def output_dir() -> Path:
    return paths.artifacts_dir("mcp-output")


def saved_dir() -> Path:
    """Where a tool's ``filename`` lands when it is a bare name (never pruned)."""
    return paths.artifacts_dir("mcp-files")


def save_path(filename: str, *, transport: str) -> Path:
    """The file a tool's ``filename`` may write, or an InvalidInput saying why not.

    ``filename`` comes from the model, and a web page can talk the model into anything,
    so it must not reach ``~/.bashrc`` or ``/etc/passwd`` (browserdeck may run as root).
    Like Playwright MCP, writes stay inside known folders: browserdeck's ``mcp-files``
    folder (where bare names go) and, for stdio, the client's working directory, which
    is its workspace, unless that is ``/`` or the home directory itself.
    """
    from browserdeck.errors import InvalidInput

    out = saved_dir().resolve()
    roots = [out]
    raw = Path(filename).expanduser()
    if transport == "stdio":
        cwd = Path.cwd().resolve()
        if cwd != Path(cwd.anchor) and cwd != Path.home().resolve():
            roots.append(cwd)
    base = roots[-1]
    path = (raw if raw.is_absolute() else base / raw).resolve()
    if not any(path.is_relative_to(root) for root in roots):
        raise InvalidInput(
            f"filename {filename!r} is outside the folders MCP tools may write to "
            f"({', '.join(str(r) for r in roots)})",
            hint=f"use a bare name like 'page.png' (saved in {base}) or a path inside "
            "one of those folders",
            code="path_not_allowed",
        )
    if path.exists() and not path.is_file():
        raise InvalidInput(
            f"filename {filename!r}: {path} exists and is not a file",
            hint="pick another name",
            code="path_not_allowed",
        )
    return path


def offload(text: str, tool: str, suffix: str = ".txt") -> Path:
    """Write ``text`` to a fresh file under the output dir (and prune old ones)."""
    folder = output_dir()
    _prune(folder)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = _UNSAFE.sub("-", tool)[:40]
    path = folder / f"{base}-{stamp}-{os.getpid()}-{time.monotonic_ns() % 10**6}{suffix}"
    path.write_text(text, encoding="utf-8")
    return path


def _prune(folder: Path) -> None:
    cutoff = time.time() - KEEP_SECONDS
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                entry.unlink()
        except OSError:
            continue


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
