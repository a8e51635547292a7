"""Spawning the browser process: its own process group, and the DevTools pipe's fds 3/4.

The fd juggling of ``--remote-debugging-pipe`` (the pipe ends, keeping fds 3 and 4 taken
while Popen runs, the parent-death signal) is the one part of a launch that runs in the
forked child; it lives here so ``launcher.py`` reads as the launch's steps.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from browserdeck.chrome.executables import BrowserExecutable
from browserdeck.chrome.process import failure_hint
from browserdeck.chrome.procs import SIGKILL
from browserdeck.errors import Unavailable

__all__ = ["PipeEnds", "spawn"]


def spawn(
    executable: BrowserExecutable, args: list[str], env: dict[str, str], *, pipe: bool, profile: str
) -> tuple[subprocess.Popen[bytes], PipeEnds | None]:
    """Start the browser in a session of its own; with ``pipe``, on fds 3/4 (``PipeEnds``).

    The child's pipe ends are closed here once it runs; the parent's are closed here too if
    the spawn fails, else they are the caller's. Raises ``Unavailable`` (``launch_failed``).
    """
    popen_kwargs: dict[str, Any] = {}
    if sys.platform == "win32":
        popen_kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        # Its own session and process group: stop() can signal every helper process,
        # and a Ctrl-C in our terminal does not hit the browser.
        popen_kwargs["start_new_session"] = True
    pipe_ends = PipeEnds() if pipe else None
    if pipe_ends is not None:
        popen_kwargs["preexec_fn"] = pipe_ends.in_child
        popen_kwargs["pass_fds"] = (3, 4)
    try:
        # Spawning in the loop is deliberate (~2 ms): in a worker thread, a cancelled
        # launch could not kill the browser the thread was still starting; and the
        # parent-death signal is tied to the thread that spawns (see PipeEnds).
        with _low_fds_taken() if pipe_ends is not None else contextlib.nullcontext():
            proc = subprocess.Popen(
                [executable.path, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                close_fds=True,
                **popen_kwargs,
            )
    except BaseException as exc:
        if pipe_ends is not None:
            pipe_ends.close_parent_ends()
        if isinstance(exc, OSError):
            raise Unavailable(
                f"cannot start the browser {executable.path} for profile '{profile}': {exc}",
                hint=failure_hint("", profile),
                code="launch_failed",
            ) from None
        raise
    finally:
        if pipe_ends is not None:
            pipe_ends.close_child_ends()
    return proc, pipe_ends


# PR_SET_PDEATHSIG (linux/prctl.h): the kernel signals the child when the thread that
# spawned it exits, so a browser on a pipe (which no later process can adopt) dies with
# its browserdeck even after a SIGKILL.
_PR_SET_PDEATHSIG = 1
_prctl: Any = None
if sys.platform.startswith("linux"):
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(None, use_errno=True).prctl


class PipeEnds:
    """The two pipes of ``--remote-debugging-pipe``: Chrome reads fd 3, writes fd 4."""

    def __init__(self) -> None:
        import fcntl

        to_child_read, self.parent_write = os.pipe()
        self.parent_read, from_child_write = os.pipe()
        # The child's ends are moved above fd 9, so dup2 onto 3 and 4 in the child can
        # never overwrite one of them.
        self.child_read = fcntl.fcntl(to_child_read, fcntl.F_DUPFD_CLOEXEC, 10)
        self.child_write = fcntl.fcntl(from_child_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_child_read)
        os.close(from_child_write)
        self._parent_pid = os.getpid()

    def in_child(self) -> None:
        """preexec_fn: runs in the forked child, before exec; async-signal-safe calls only."""
        os.dup2(self.child_read, 3)
        os.dup2(self.child_write, 4)
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, int(SIGKILL), 0, 0, 0)
        if os.getppid() != self._parent_pid:
            os._exit(1)  # the parent died before the death signal was armed

    def close_child_ends(self) -> None:
        for fd in (self.child_read, self.child_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def close_parent_ends(self) -> None:
        for fd in (self.parent_write, self.parent_read):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def _low_fds_taken() -> Iterator[None]:
    """Keep fds 3 and 4 occupied while Popen runs.

    Popen's own error pipe must not land on 3 or 4, where the child's dup2 would replace
    it (a failed exec would then go unreported). A busy service has them taken anyway.
    """
    placeholders: list[int] = []
    try:
        while True:
            fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            if fd > 4:
                os.close(fd)
                break
            placeholders.append(fd)
        yield
    finally:
        for fd in placeholders:
            os.close(fd)
