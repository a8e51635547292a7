"""Opening things on the user's desktop: a page in Chrome, a folder in the file manager.

Each says whether it worked, and why not, instead of "Opened…" on a program that
failed a moment later: the program is started, given a moment (``WAIT_S``), and
judged by how it ended. A Chrome handing the page to the one already running exits 0
at once; one that starts a window of its own is still running then (a win too); one
that cannot start (as root without ``--no-sandbox``, no display) exits with an error,
and its last line says why. A process still running is reaped by a thread of its own
when it ends, never left a zombie. What a program prints never reaches our output: a
URL it echoes may carry a token, so only its last line is kept, with ``secret`` blanked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

WAIT_S = 3.0
CHROMES = ("google-chrome", "google-chrome-stable", "chromium", "chromium-browser", "chrome")


@dataclass(frozen=True)
class Opened:
    """How an open went: ``ok``, else ``why`` (for a person); ``pid`` of what was started."""

    ok: bool
    why: str = ""
    pid: int | None = None


def run_briefly(argv: list[str], *, secret: str = "", wait: float = WAIT_S) -> Opened:
    """Start ``argv`` detached from us; its outcome once it ended or ``wait`` passed."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Opened(False, f"{os.path.basename(argv[0])} could not be started ({exc.strerror})")
    try:
        _, err = proc.communicate(timeout=wait)
    except subprocess.TimeoutExpired:
        # Still running: it opened a window of its own. Reaped when it ends; its output
        # (which nobody reads any more) drained so that it never blocks on a full pipe.
        threading.Thread(target=proc.communicate, name="desktop-reap", daemon=True).start()
        return Opened(True, pid=proc.pid)
    if proc.returncode == 0:
        return Opened(True, pid=proc.pid)
    said = _reason(err.decode("utf-8", "replace")) or f"it exited with code {proc.returncode}"
    if secret:
        said = said.replace(secret, "•" * 12)
    return Opened(False, f"{os.path.basename(argv[0])}: {said}", proc.pid)


# Chromium logs a line per subsystem that failed on its way down (D-Bus, GPU…); the
# reason it could not start at all is the one to tell.
_DECISIVE = re.compile(r"(?i)missing x server|\$display|cannot open display|no-sandbox|fatal")
_LOG_PREFIX = re.compile(r"^\[[^\]]*\]\s*")


def _reason(err: str) -> str:
    lines = [_LOG_PREFIX.sub("", line).strip() for line in err.splitlines()]
    lines = [line for line in lines if line]
    decisive = [line for line in lines if _DECISIVE.search(line)]
    return (decisive or lines or [""])[-1]


def chrome() -> str | None:
    for name in CHROMES:
        exe = shutil.which(name)
        if exe:
            return exe
    return None


def open_in_chrome(url: str, *, secret: str = "") -> Opened:
    """Chrome opens chrome-extension:// URLs passed on its command line; a default browser
    may not. As root Chrome starts only without its sandbox (it refuses otherwise)."""
    exe = chrome()
    if exe is None:
        return Opened(False, "no Chrome or Chromium was found on this computer")
    flags = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return run_briefly([exe, *flags, url], secret=secret)


def open_folder(path: str) -> Opened | None:
    """Open a folder with the desktop's opener (xdg-open), judged by how it ended; None
    where there is no xdg-open (macOS, Windows: the caller's toolkit opens it)."""
    if not sys.platform.startswith("linux"):
        return None
    opener = shutil.which("xdg-open")
    if opener is None:
        return None
    return run_briefly([opener, path])
