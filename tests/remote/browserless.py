"""The real Browserless server (open source, from npm) for the remote-profile tests and bench.

``make test`` installs it (``python -m tests.remote.browserless install``) into
``.cache/browserless`` (gitignored, outside the tracked tree); the tests install it
too when it is missing. It runs through ``browserless_launcher.mjs`` (see there why), with
``PLAYWRIGHT_BROWSERS_PATH`` pointing at a folder where the Chromium build its own
playwright-core expects is a link to this machine's Chromium.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import httpx
import psutil

VERSION = "2.42.0"
ROOT = Path(__file__).resolve().parents[2]
DIR = Path(os.environ.get("BROWSERDECK_BROWSERLESS_DIR") or ROOT / ".cache" / "browserless")
LAUNCHER = Path(__file__).with_name("browserless_launcher.mjs")
PACKAGE = DIR / "node_modules" / "@browserless.io" / "browserless" / "package.json"


def npm_missing() -> str | None:
    """Why Browserless cannot run here (no node/npm), or None."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed, so Browserless (an npm package) cannot run"
    return None


def installed() -> bool:
    try:
        return json.loads(PACKAGE.read_text())["version"] == VERSION
    except (OSError, ValueError, KeyError):
        return False


def install(chromium: str | None = None) -> None:
    """npm install Browserless (no install scripts: they would download browsers) + the link."""
    if not installed():
        DIR.mkdir(parents=True, exist_ok=True)
        (DIR / "package.json").write_text('{"name": "bd-test-browserless", "private": true}\n')
        subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
                f"@browserless.io/browserless@{VERSION}",
            ],
            cwd=DIR,
            check=True,
        )
    link_chromium(chromium)


def browsers_path() -> Path:
    return DIR / "pw-browsers"


def link_chromium(chromium: str | None = None) -> Path:
    """Make Browserless's playwright-core find the system Chromium where it expects its build."""
    if chromium is None:
        from tests.support.browsers import find_chromium

        chromium = find_chromium()
        if chromium is None:
            raise RuntimeError("no Chromium found (make test installs Debian's chromium)")
    env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(browsers_path())}
    out = subprocess.run(
        [
            "node",
            "--input-type=module",
            "-e",
            "const m = await import('playwright-core'); console.log(m.chromium.executablePath())",
        ],
        cwd=DIR,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    expected = Path(out.stdout.strip())
    if not expected.is_relative_to(browsers_path()):
        raise RuntimeError(f"playwright-core expects Chromium at {expected}, outside the scratch dir")
    expected.parent.mkdir(parents=True, exist_ok=True)
    if expected.is_symlink() or expected.exists():
        expected.unlink()
    expected.symlink_to(os.path.realpath(chromium))
    return expected


class Browserless:
    """One Browserless server on a loopback port, in its own process group."""

    def __init__(self, port: int, token: str, *, concurrent: int = 10, queued: int = 10) -> None:
        self.port, self.token = port, token
        self.concurrent, self.queued = concurrent, queued
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = DIR / f"browserless-{port}.log"

    def ws_url(self, *, token: bool = True) -> str:
        launch: dict[str, object] = {"headless": True}
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            launch["args"] = ["--no-sandbox"]  # Chromium refuses to run as root otherwise
        query = {"launch": json.dumps(launch, separators=(",", ":"))}
        if token:
            query["token"] = self.token
        return f"ws://127.0.0.1:{self.port}/chromium?{urllib.parse.urlencode(query)}"

    def start(self, wait: float = 60.0) -> None:
        env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "TOKEN": self.token,
            "CONCURRENT": str(self.concurrent),
            "QUEUED": str(self.queued),
            # Its default ends every session after 30 s; tests and bench hold theirs longer.
            "TIMEOUT": "600000",
            "PLAYWRIGHT_BROWSERS_PATH": str(browsers_path()),
            "DEBUG": "-*",
        }
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                ["node", str(LAUNCHER), str(DIR)],
                cwd=DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its Chromiums are in the group: stop() ends them all
            )
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Browserless exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                r = httpx.get(
                    f"http://127.0.0.1:{self.port}/pressure",
                    params={"token": self.token},
                    timeout=1.0,
                    trust_env=False,
                )
                if r.status_code == 200:
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Browserless did not answer in {wait} s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        # Playwright launches Browserless's Chromiums detached (a session of their own),
        # so the process group does not reach them: find them first, then end them too.
        try:
            browsers = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            browsers = []
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        for child in browsers:
            with contextlib.suppress(psutil.Error):
                child.kill()
        psutil.wait_procs(browsers, timeout=10)

    def pressure(self) -> dict[str, object]:
        r = httpx.get(
            f"http://127.0.0.1:{self.port}/pressure",
            params={"token": self.token},
            timeout=5,
            trust_env=False,
        )
        data: dict[str, object] = r.json()["pressure"]
        return data


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        why = npm_missing()
        if why:
            print(f"skipping the Browserless install: {why}")
        else:
            install()
            print(f"Browserless {VERSION} in {DIR}")
