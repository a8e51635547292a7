"""Issue 10 item 8: `browserdeck pair --open` never puts the relay token on a command line.

Any local user can read every process's argv (/proc/*/cmdline). The "Chrome" here is a
stand-in script first on PATH that records the argv it was started with: the real
browser would open a window on a machine without a display, and the point is only
what browserdeck hands to the process it launches.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from browserdeck.secrets import tokens as secrets


def test_pair_open_keeps_the_token_off_the_command_line(bd_home: Path, tmp_path: Path) -> None:
    token = secrets.get_token("relay")
    assert token
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "argv.txt"
    fake = bin_dir / "chromium"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        [sys.executable, "-m", "browserdeck", "pair", "--open"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert token in done.stdout  # the user still gets what to paste
    deadline = time.monotonic() + 10
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    argv = record.read_text()
    assert "chrome-extension://" in argv and "options.html" in argv
    assert token not in argv
