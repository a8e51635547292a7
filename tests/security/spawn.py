"""Start a small Python program for a security test (a squatter, a pipe), as ourselves or
as another local user, and wait until it says ``ready``."""

from __future__ import annotations

import subprocess

import pytest

# A second local user to be, when the tests run as root (CI does).
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]


def start_ready(prefix: list[str], script: str, *args: str, what: str) -> subprocess.Popen[str]:
    """``script`` (passed inline: ``nobody`` may not be able to read our worktree) run by
    the system Python under ``prefix``, once it printed ``ready``."""
    proc = subprocess.Popen(
        [*prefix, "/usr/bin/python3", "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd="/",
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        pytest.fail(f"{what} did not start: {line}{proc.communicate()[0]}")
    return proc
