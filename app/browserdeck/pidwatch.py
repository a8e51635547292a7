"""Be told when a process that is not our child exits.

On Linux a pidfd (``os.pidfd_open``, kernel 5.3+) becomes readable the moment its
process exits, so the event loop wakes for it like for a socket: no polling, and no
confusion with a later process that reuses the pid (the pidfd names *that* process).
Elsewhere, or where the kernel refuses a pidfd, the watcher falls back to asking
``pid_alive`` every ``POLL_SECONDS``.

Used for the ``browserdeck mcp`` bridges an agent session lives as long as
(sessions.py): a bridge killed with ``-9`` never says goodbye.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable

from browserdeck.chrome.procs import pid_alive

log = logging.getLogger(__name__)

# How often a pid without a pidfd is looked at.
POLL_SECONDS = 2.0


class PidWatch:
    """Calls ``on_exit(pid)`` once, on the loop, when a watched process has exited."""

    def __init__(self, on_exit: Callable[[int], None]) -> None:
        self._on_exit = on_exit
        self._fds: dict[int, int] = {}  # pid -> its pidfd, watched by the loop
        self._polled: set[int] = set()
        self._poller: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, pid: int) -> None:
        """Watch ``pid`` (again: nothing new); a pid already gone is reported soon."""
        if pid in self._fds or pid in self._polled:
            return
        loop = self._loop = asyncio.get_running_loop()
        opener = getattr(os, "pidfd_open", None)
        if opener is not None:
            try:
                fd = opener(pid)
            except ProcessLookupError:
                loop.call_soon(self._on_exit, pid)
                return
            except OSError as exc:  # no pidfd here (old kernel, seccomp): poll it
                log.debug("pidfd_open(%d): %s; polling it", pid, exc)
            else:
                try:
                    loop.add_reader(fd, self._exited, pid)
                except (NotImplementedError, OSError, ValueError):
                    os.close(fd)  # a loop that cannot watch file descriptors: poll it
                else:
                    self._fds[pid] = fd
                    return
        self._polled.add(pid)
        self._schedule_poll()

    def forget(self, pid: int) -> None:
        """Stop watching ``pid`` (nothing lives as long as it any more)."""
        fd = self._fds.pop(pid, None)
        if fd is not None:
            self._close(fd)
        self._polled.discard(pid)

    def close(self) -> None:
        """Stop watching everything (the service's stop)."""
        for pid in list(self._fds):
            self.forget(pid)
        self._polled.clear()
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None

    @property
    def watched(self) -> set[int]:
        return set(self._fds) | self._polled

    def _exited(self, pid: int) -> None:
        self.forget(pid)
        self._on_exit(pid)

    def _close(self, fd: int) -> None:
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.remove_reader(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _schedule_poll(self) -> None:
        if self._poller is None and self._polled and self._loop is not None:
            self._poller = self._loop.call_later(POLL_SECONDS, self._poll)

    def _poll(self) -> None:
        self._poller = None
        for pid in [p for p in self._polled if not pid_alive(p)]:
            self._polled.discard(pid)
            self._on_exit(pid)
        self._schedule_poll()
