"""Run the real `browserdeck` app as a subprocess and follow its JSON trace lines.

The app prints one JSON object per milestone on stdout when BROWSERDECK_GUI_TRACE=1
(``{"event": "tray-visible", ...}``); tests wait for those instead of sleeping.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class AppProcess:
    proc: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    _queue: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            line = line.strip()
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                self.events.append(event)
                self._queue.put(event)
        self._queue.put(None)

    def close(self) -> None:
        """Reap the process's output pipe (after it exited)."""
        if self._thread is not None:
            self._thread.join(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def wait_event(self, name: str, timeout: float = 90.0) -> dict[str, Any]:
        """The first event called ``name`` (already seen or still to come)."""
        for event in self.events:
            if event.get("event") == name:
                return event
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no {name!r} event within {timeout} s; seen: "
                    f"{[e.get('event') for e in self.events]}\n{self.log()}"
                )
            try:
                event = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                raise AssertionError(
                    f"the app exited ({self.proc.poll()}) before {name!r}; "
                    f"seen: {[e.get('event') for e in self.events]}\n{self.log()}"
                )
            if event.get("event") == name:
                return event

    def count(self, name: str) -> int:
        return sum(1 for e in self.events if e.get("event") == name)

    def log(self) -> str:
        return "".join(self.output[-60:])

    def terminate(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
            self.close()
            return code
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(
                f"the app did not exit within {timeout} s of SIGTERM\n{self.log()}"
            ) from None


def app_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["BROWSERDECK_GUI_TRACE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def start_app(*args: str, env: dict[str, str] | None = None) -> AppProcess:
    proc = subprocess.Popen(
        [sys.executable, "-m", "browserdeck", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env or app_env(),
    )
    app = AppProcess(proc)
    app._thread = threading.Thread(target=app._pump, name="app-stdout", daemon=True)
    app._thread.start()
    return app


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "browserdeck", *args],
        capture_output=True,
        text=True,
        env=env or app_env(),
        timeout=timeout,
    )


def chromium_pids(marker: str) -> list[int]:
    """Live processes whose command line mentions ``marker`` (e.g. our BROWSERDECK_HOME)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
            status = (entry / "status").read_text()
        except OSError:
            continue
        if "\nState:\tZ" in status:  # a zombie holds no port and no files
            continue
        if marker in cmdline and "chrom" in cmdline:
            found.append(int(entry.name))
    return found


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_until(predicate: Any, timeout: float = 20.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def running_app(*args: str, env: dict[str, str] | None = None) -> Any:
    app = start_app(*args, env=env)
    try:
        yield app
    finally:
        if app.proc.poll() is None:
            app.proc.kill()
            app.proc.wait(10)
        app.close()
