"""One app whoever starts first: the tray takes over a service started for MCP clients.

An MCP client's ``browserdeck mcp`` starts a headless ``serve --idle-exit`` when nothing
runs (the common order: the agent first). The tray app started afterwards must host the
service itself (its panel and menu call the front door in-process), so it stops that
one and starts its own on the same home, ports and socket:

1. it writes its pid to ``paths.takeover_path()``: a ``browserdeck mcp`` that needs a
   service meanwhile (its own start, or a request that finds none) waits for the tray's
   rather than start one that would race it for the ports (cli.mcp.await_takeover);
2. it stops the old service (SIGTERM: its one shutdown path) and waits until the process
   is gone, so its ports and socket are free;
3. it starts its own service; then the file goes.

Each agent's bridge opens its session again on the new service with the client's own
handshake (cli/bridge.py), so the agents go on; their tabs were in the old service's
browser and are gone (a call in flight is told so).

A ``browserdeck serve`` the user started is not taken over: the tray says so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from browserdeck.util import paths


@dataclass(frozen=True)
class McpService:
    """A running service that ``browserdeck mcp`` started (its instance record)."""

    pid: int
    url: str

    @classmethod
    def of(cls, record: dict[str, Any] | None) -> McpService | None:
        if not record or not record.get("forMcpClients"):
            return None
        try:
            return cls(int(record["pid"]), str(record.get("url") or ""))
        except (KeyError, TypeError, ValueError):
            return None


def _gone(pid: int) -> bool:
    """The process exited (a zombie its parent has not reaped counts: it holds nothing)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            return "\nState:\tZ" in f.read()
    except FileNotFoundError:
        return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def begin(old: McpService, timeout: float = 30.0) -> str | None:
    """Steps 1 and 2 (blocking: run it on a thread); None once the old service is gone,
    else why not (the take-over file is removed then)."""
    marker = paths.takeover_path()
    tmp = f"{marker}.{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(str(os.getpid()))
    os.replace(tmp, marker)
    try:
        os.kill(old.pid, signal.SIGTERM)
    except ProcessLookupError:
        return None
    except OSError as exc:
        end()
        return f"it could not be stopped ({exc.strerror or exc})"
    deadline = time.monotonic() + timeout
    while not _gone(old.pid):
        if time.monotonic() > deadline:
            end()
            return f"it did not stop within {timeout:.0f} s (pid {old.pid})"
        time.sleep(0.05)
    return None


def end() -> None:
    """Step 3's end: the tray's own service runs (or could not start)."""
    marker = paths.takeover_path()
    with contextlib.suppress(OSError, ValueError):
        with open(marker, encoding="ascii") as f:
            if int(f.read().strip()) != os.getpid():
                return
        os.unlink(marker)
