"""Recorded sessions on disk, within the artifact limits.

Each session is a folder of ``<state dir>/recordings``: ``session.json`` (its summary,
rewritten as it changes), ``timeline.jsonl`` (a row per step, then patches: ``{"n": 7,
"diff": …}``) and its images (``0007-before.jpg``, ``0007-after.jpg``), all private to the
user. The folder as a whole is kept under the limits every folder of saved files has
(``artifactsMaxMb``, ``artifactsMaxAgeDays``: artifacts.py): sessions past the age limit
go, then the oldest ended sessions, whole; if the sessions still running are over the
limit by themselves, their oldest images go (their rows stay, saying the image was removed).

Sizes are counted as files are written, so keeping the limit costs no walk of the disk.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from browserdeck import artifacts
from browserdeck.recorded import RecordedStep, SessionSummary
from browserdeck.recording.timeline import patched
from browserdeck.util import files, paths

log = logging.getLogger(__name__)

INFO = "session.json"
TIMELINE = "timeline.jsonl"


@dataclass(frozen=True)
class Removed:
    """An image removed to keep the limit (its step says so)."""

    session: str
    step: int
    file: str


class Store:
    """The ``recordings`` folder: sessions written, read back, and kept within limits."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root
        self.sizes: dict[str, int] = {}  # per session: bytes on disk
        self._images: dict[str, deque[tuple[str, int]]] = {}  # per session, oldest first
        # Sessions' workers write from threads: the counts and the pruning take turns.
        self._lock = threading.RLock()

    @property
    def root(self) -> Path:
        return self._root or paths.artifacts_dir("recordings")

    def folder(self, session: str) -> Path:
        path = self.root / session
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- reading -------------------------------------------------------------------
    def load(self) -> list[SessionSummary]:
        """The sessions on disk (an earlier run's are ended as of their last call)."""
        found: list[SessionSummary] = []
        try:
            entries = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            return found
        for folder in entries:
            try:
                info = SessionSummary.model_validate_json((folder / INFO).read_text(encoding="utf-8"))
            except (OSError, ValueError, TypeError):
                continue
            if info.ended is None:
                info.ended = info.last
            images: list[tuple[float, str, int]] = []
            total = 0
            for path in folder.iterdir():
                try:
                    stat = path.stat()
                except OSError:
                    continue
                total += stat.st_size
                if path.suffix == ".jpg":
                    images.append((stat.st_mtime, path.name, stat.st_size))
            self.sizes[info.id] = info.bytes = total
            self._images[info.id] = deque((name, size) for _, name, size in sorted(images))
            found.append(info)
        return found

    def steps(self, session: str) -> list[RecordedStep]:
        """A session's steps, patches applied."""
        path = self.root / session / TIMELINE
        by_n: dict[int, RecordedStep] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a row cut short by a crash: the rest still reads
            if not isinstance(row, dict) or not isinstance(row.get("n"), int):
                continue
            step = by_n.get(row["n"])
            try:
                if "op" in row:
                    by_n[row["n"]] = RecordedStep.model_validate(row)
                elif step is not None:
                    by_n[row["n"]] = patched(step, row)
            except ValueError:
                continue
        return [by_n[n] for n in sorted(by_n)]

    def image(self, session: str, name: str) -> bytes | None:
        if not name or "/" in name or "\\" in name or name.startswith("."):
            return None
        try:
            return (self.root / session / name).read_bytes()
        except OSError:
            return None

    # --- writing -------------------------------------------------------------------
    def _grow(self, session: str, size: int) -> None:
        with self._lock:
            self.sizes[session] = self.sizes.get(session, 0) + size

    def write_info(self, info: SessionSummary) -> None:
        path = self.folder(info.id) / INFO
        before = path.stat().st_size if path.exists() else 0
        data = info.model_dump_json(by_alias=True)
        files.write_atomic(path, data)
        self._grow(info.id, len(data.encode()) - before)
        info.bytes = self.sizes.get(info.id, 0)

    def append(self, session: str, row: dict[str, Any]) -> None:
        line = (json.dumps(row, ensure_ascii=False) + "\n").encode()
        path = self.folder(session) / TIMELINE
        with files.open_private(path, append=True) as fh:
            fh.write(line)
        self._grow(session, len(line))

    def write_image(self, session: str, name: str, data: bytes) -> None:
        files.write_private(self.folder(session) / name, data)
        with self._lock:
            self._grow(session, len(data))
            self._images.setdefault(session, deque()).append((name, len(data)))

    # --- limits --------------------------------------------------------------------
    def total(self) -> int:
        with self._lock:
            return sum(self.sizes.values())

    def remove(self, session: str) -> None:
        shutil.rmtree(self.root / session, ignore_errors=True)
        with self._lock:
            self.sizes.pop(session, None)
            self._images.pop(session, None)

    def prune(self, infos: Iterable[SessionSummary], live: set[str]) -> tuple[list[str], list[Removed]]:
        """Keep the folder within the limits: (sessions removed, images removed)."""
        with self._lock:
            return self._prune(list(infos), live)

    def _prune(self, infos: list[SessionSummary], live: set[str]) -> tuple[list[str], list[Removed]]:
        limits = artifacts.LIMITS
        cutoff = time.time() - limits.max_age_seconds
        gone: list[str] = []
        ended = sorted((i for i in infos if i.id not in live), key=lambda i: i.last)
        for info in ended:
            if info.last < cutoff or self.total() > limits.max_bytes:
                self.remove(info.id)
                gone.append(info.id)
        removed: list[Removed] = []
        if self.total() > limits.max_bytes:
            queues = [(s, q) for s, q in self._images.items() if s in live and q]
            while self.total() > limits.max_bytes and queues:
                # The oldest image of all running sessions (names sort by step number).
                session, queue = min(queues, key=lambda sq: _age(self.root / sq[0] / sq[1][0][0]))
                name, size = queue.popleft()
                with contextlib.suppress(OSError):
                    (self.root / session / name).unlink()
                self._grow(session, -size)
                removed.append(Removed(session, int(name.split("-", 1)[0]), name))
                queues = [(s, q) for s, q in queues if q]
        if gone or removed:
            log.info(
                "recordings: removed %d session(s) and %d image(s) (disk limits)",
                len(gone),
                len(removed),
            )
        return gone, removed


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
