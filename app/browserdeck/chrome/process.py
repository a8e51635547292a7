"""A running managed browser: its output, exit, readiness and stop (``ChromeProcess``).

Threads, not asyncio subprocess pipes: the core runs on plain asyncio *and* on qasync's Qt
loop, and asyncio child watchers are not something to rely on there. Each browser gets two
small daemon threads: one drains its output into a bounded ring buffer (so a chatty
browser never blocks on a full pipe) and notices the "DevTools listening on ..." line; one
waits for the exit and reaps the process. Both wake asyncio waiters through
``call_soon_threadsafe``. ``stop()`` closes the browser through CDP ``Browser.close`` (a
signal would leave ``/tmp/org.chromium.Chromium.*`` behind and mark the exit as a crash),
then signals the process group as a fallback.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from browserdeck.chrome.cdp import CDPClient, CDPError
from browserdeck.chrome.endpoint import fetch_version, normalize_ws_url
from browserdeck.chrome.executables import HEADLESS_SHELL, BrowserExecutable
from browserdeck.chrome.flags import LaunchOptions
from browserdeck.chrome.gateway import CdpGateway
from browserdeck.chrome.pipe import BrowserPipe, PipeCallError
from browserdeck.chrome.procs import (
    SIGKILL,
    pid_alive,
    process_group_alive,
    signal_process_group,
    sweep_group_blocking,
)
from browserdeck.chrome.profile_lock import release_profile
from browserdeck.errors import RESET_PROFILE, STOP_OF, ActionTimeout, Conflict, Hint, Unavailable

__all__ = ["ChromeProcess", "describe_exit", "failure_hint"]

log = logging.getLogger(__name__)

_OUTPUT_LINES = 400  # ring buffer of the browser's stdout+stderr
_READY_POLL = 0.05
# Without a "DevTools listening" line (a wrapper that swallows stderr), fall back to
# polling /json/version after this long.
_NO_BANNER_GRACE = 1.0


class ChromeProcess:
    """A browser that ``launch()`` started: its pid, CDP endpoints, output and lifecycle."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        executable: BrowserExecutable,
        opts: LaunchOptions,
        args: list[str],
    ) -> None:
        self._proc = proc
        self.pid = proc.pid
        self.port = opts.port
        self.profile = opts.profile
        self.cdp_url = f"http://127.0.0.1:{opts.port}"
        self.ws_url = ""
        self.executable = executable
        self.headless = opts.headless
        self.user_data_dir = Path(opts.user_data_dir)
        self.args = args
        self.version: dict[str, Any] = {}
        self.started_at = time.time()
        self._output: collections.deque[str] = collections.deque(maxlen=_OUTPUT_LINES)
        self._output_done = threading.Event()
        self._banner_ws: str | None = None  # from "DevTools listening on ws://..."
        self._devtools_failed: str | None = None
        self._returncode: int | None = None
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._stop_lock: asyncio.Lock | None = None
        # Set by launch() when the browser runs on a pipe behind our CDP endpoint.
        self.pipe: BrowserPipe | None = None
        self.gateway: CdpGateway | None = None
        if proc.stdout is not None:
            threading.Thread(
                target=self._pump_output,
                args=(proc.stdout,),
                name=f"chrome-output-{self.pid}",
                daemon=True,
            ).start()
        threading.Thread(
            target=self._wait_thread, name=f"chrome-wait-{self.pid}", daemon=True
        ).start()

    def __repr__(self) -> str:
        state = "alive" if self.alive() else f"exited {self._returncode}"
        return f"<ChromeProcess {self.profile!r} pid={self.pid} port={self.port} {state}>"

    def auth_headers(self) -> dict[str, str]:
        """What a CDP client must send to this browser's endpoint (none for a plain port)."""
        return self.gateway.auth_headers() if self.gateway is not None else {}

    # -- state --

    def alive(self) -> bool:
        # The exit thread reaps the process a moment after it dies; a request in that
        # moment must not take a killed browser for a running one (zombie = gone).
        return self._returncode is None and pid_alive(self.pid)

    def returncode(self) -> int | None:
        return self._returncode

    def stderr_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the browser printed (stdout and stderr interleaved)."""
        with self._lock:
            output = list(self._output)
        return "\n".join(output[-lines:]) if lines > 0 else ""

    async def wait_exit(self) -> int:
        """Resolves with the exit code once the browser's main process has exited."""
        while self._returncode is None:
            future = self._next_change()
            if self._returncode is not None:
                future.cancel()
                break
            await future
        return self._returncode

    # -- stop --

    async def stop(self, timeout: float = 5.0) -> None:
        """``Browser.close``; after ``timeout`` SIGTERM, then SIGKILL, the process group.

        Idempotent.  Also kills anything left in the browser's process group (e.g. a
        crash handler) once the main process is gone, and reaps the main process.
        """
        if self._stop_lock is None:
            self._stop_lock = asyncio.Lock()
        async with self._stop_lock:
            if self.alive():
                await self._close_via_cdp(min(timeout, 3.0))
                if not await self.wait_exit_for(timeout):
                    log.warning("%r ignored Browser.close; sending SIGTERM", self)
                    self._signal(signal.SIGTERM)
                    if not await self.wait_exit_for(3.0):
                        log.warning("%r ignored SIGTERM; sending SIGKILL", self)
                        self._signal(SIGKILL)
                        await self.wait_exit_for(10.0)
            await self._sweep_group()
            await self._close_endpoint()

    async def _close_endpoint(self) -> None:
        if self.pipe is not None:
            self.pipe.close("the browser was stopped")
        if self.gateway is not None:
            await self.gateway.stop()

    async def _close_via_cdp(self, timeout: float) -> None:
        if self.pipe is not None:
            try:
                await self.pipe.call("Browser.close", timeout=timeout)
            except (Unavailable, ActionTimeout, PipeCallError) as exc:
                if not self.pipe.closed:  # closed: it went while closing, which is fine
                    log.warning("Browser.close on %r failed: %s", self, exc)
            return
        if not self.ws_url:
            return
        try:
            async with await CDPClient.connect(self.ws_url, timeout=timeout) as client:
                await client.send("Browser.close", timeout=timeout)
        except Unavailable:
            pass  # already gone, or it dropped the socket while closing: both fine
        except (ActionTimeout, CDPError) as exc:
            log.warning("Browser.close on %r failed: %s", self, exc)

    async def wait_exit_for(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self.wait_exit(), timeout)
        except TimeoutError:
            return False
        return True

    def _signal(self, sig: int) -> None:
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                self._proc.kill()
            return
        # start_new_session made the browser the leader of group == its pid.
        if not signal_process_group(self.pid, sig):
            with contextlib.suppress(OSError):
                self._proc.send_signal(sig)

    async def _sweep_group(self) -> None:
        """Kill what is left of the group after the main process exited."""
        if sys.platform != "win32" and process_group_alive(self.pid):
            await asyncio.to_thread(sweep_group_blocking, self.pid)

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (no grace); the waiter thread reaps it."""
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                self._proc.kill()
            return
        if not signal_process_group(self.pid, signal.SIGKILL):
            with contextlib.suppress(OSError):
                self._proc.kill()

    # -- readiness --

    async def wait_ready(self, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout
        last_error = "nothing answered yet"
        while True:
            if self._returncode is not None:
                raise self._launch_failed(
                    f"{describe_exit(self._returncode)} before it answered browserdeck"
                )
            if self._devtools_failed is not None:
                raise Conflict(
                    f"Chrome for profile '{self.profile}' could not open its DevTools port "
                    f"{self.port}: {self._devtools_failed}",
                    hint="another program took the port just now; retry, or give the profile "
                    "another CDP port (Settings › Profiles; cdpPort in the config file)",
                    code="port_in_use",
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise self._launch_failed(
                    f"did not get ready on {self.cdp_url} within {timeout:g} s ({last_error})"
                )
            if self._banner_ws is not None or loop.time() - started >= _NO_BANNER_GRACE:
                try:
                    await self._probe(min(2.0, remaining))
                    return
                except Unavailable as exc:
                    last_error = exc.message
            future = self._next_change()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(future, min(_READY_POLL, max(remaining, 0.001)))

    async def wait_pipe_ready(self, timeout: float) -> None:
        """Open the pipe and wait for ``Browser.getVersion`` (or the browser's exit)."""
        assert self.pipe is not None and self.gateway is not None
        await self.pipe.open()
        asked = asyncio.ensure_future(self.pipe.call("Browser.getVersion", timeout=timeout))
        exited = asyncio.ensure_future(self.wait_exit())
        try:
            done, _ = await asyncio.wait(
                {asked, exited}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for future in (asked, exited):
                if not future.done():
                    future.cancel()
                    with contextlib.suppress(BaseException):
                        await future
        failure = None
        if asked in done and not asked.cancelled():
            failure = asked.exception()
            if failure is None:
                await self.gateway.attach(self.pipe, asked.result())
                self.cdp_url = self.gateway.cdp_url
                self.ws_url = self.gateway.ws_url
                self.version = self.gateway.version_json()
                return
            # The pipe closed because the browser is exiting: report its exit code.
            await self.wait_exit_for(2.0)
        if self._returncode is not None:
            # Its last words are what the user needs; the output thread ends at EOF.
            await asyncio.to_thread(self._output_done.wait, 2.0)
            raise self._launch_failed(
                f"{describe_exit(self._returncode)} before its DevTools pipe answered"
            )
        raise self._launch_failed(
            f"did not get ready on its DevTools pipe within {timeout:g} s"
            + (f" ({failure})" if failure else "")
        )

    async def _probe(self, timeout: float) -> None:
        version = await fetch_version(self.cdp_url, timeout=timeout)
        ws_url = version.get("webSocketDebuggerUrl")
        if not isinstance(ws_url, str) or not ws_url:
            raise Unavailable("no webSocketDebuggerUrl in /json/version yet")
        ws_url = normalize_ws_url(ws_url, self.cdp_url)
        if self._banner_ws is not None and urlsplit(ws_url).path != urlsplit(self._banner_ws).path:
            raise Conflict(
                f"another browser answers on port {self.port}, not the one just started for "
                f"profile '{self.profile}' ({ws_url} vs {self._banner_ws})",
                hint=Hint(
                    "two browsers are fighting over the port; reset the profile ({reset}) "
                    "and start again",
                    reset=RESET_PROFILE.of(profile=self.profile),
                ),
                code="port_in_use",
            )
        client = await CDPClient.connect(ws_url, timeout=timeout)
        await client.close()
        self.ws_url = ws_url
        self.version = version

    def _launch_failed(self, reason: str) -> Unavailable:
        tail = self.stderr_tail(20)
        output = (
            f"\n--- last browser output ---\n{tail}" if tail.strip() else " (it printed nothing)"
        )
        return Unavailable(
            f"Chrome ({self.executable.path}) for profile '{self.profile}' {reason}.{output}",
            hint=failure_hint(tail, self.profile),
            code="launch_failed",
        )

    # -- threads --

    def _next_change(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiters.append((loop, future))
        return future

    def _notify(self) -> None:
        """Wake every asyncio waiter (called from the helper threads)."""
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(_resolve, future)

    def _pump_output(self, stream: IO[bytes]) -> None:
        try:
            # readline(limit): a pathological endless line is split, never buffered whole.
            for raw in iter(lambda: stream.readline(16384), b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                notify = False
                with self._lock:
                    self._output.append(line)
                if self._banner_ws is None and line.startswith("DevTools listening on "):
                    self._banner_ws = line.split(" on ", 1)[1].strip()
                    notify = True
                elif "Cannot start http server for devtools" in line:
                    self._devtools_failed = line.strip()
                    notify = True
                if notify:
                    self._notify()
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()
            self._output_done.set()

    def _wait_thread(self) -> None:
        code = self._proc.wait()
        if self.executable.kind == HEADLESS_SHELL:
            release_profile(self.user_data_dir, self.pid)
        self._returncode = code
        log.info("%r exited: %s (code %s)", self, describe_exit(code), code)
        self._notify()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# How a signal that ended the browser reads to a person (the signal's name stays in the
# log, where it helps; "SIGKILL (exit code -9)" told a user nothing).
_SIGNAL_WORDS = {
    "SIGKILL": "was killed outright (kill -9, or the system ran out of memory)",
    "SIGTERM": "was told to quit by another program (kill)",
    "SIGINT": "was interrupted (Ctrl+C)",
    "SIGHUP": "was stopped because the terminal it ran in closed",
    "SIGSEGV": "crashed (a memory error inside the browser)",
    "SIGBUS": "crashed (a memory error inside the browser)",
    "SIGABRT": "crashed (it stopped itself on an internal error)",
    "SIGTRAP": "crashed (it stopped itself on an internal error)",
    "SIGILL": "crashed (an illegal instruction)",
}


def describe_exit(code: int) -> str:
    """How the browser ended, after "the browser": 'was killed outright (kill -9, …)',
    'crashed (…)', 'exited with code 1'."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"was stopped by signal {-code}"
        return _SIGNAL_WORDS.get(name, f"was stopped by a signal ({name})")
    return f"exited with code {code}"


def failure_hint(tail: str, profile: str) -> str | Hint:
    if "No usable sandbox" in tail or "without --no-sandbox" in tail:
        return (
            "the browser's sandbox cannot start here (typical in containers): turn on "
            "noSandbox in settings"
        )
    if "Missing X server" in tail or "cannot open display" in tail.lower():
        return "there is no display: run the profile headless (settings, or `browserdeck serve --headless`)"
    if "existing browser session" in tail:
        return Hint(
            "another browser already uses this profile's user data dir and took over the "
            "launch; stop it ({stop}) and start again",
            stop=STOP_OF.of(profile=profile),
        )
    return (
        "check the output above; make sure the browser runs on its own "
        "(`<executable> --version`) or set executablePath to another Chrome/Chromium"
    )
