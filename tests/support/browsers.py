"""Launch a real Chromium for tests, independently of browserdeck's own launcher."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.support.net import free_port

CANDIDATES = (
    "/usr/lib/chromium/chromium",  # Debian's real binary (/usr/bin/chromium is a wrapper)
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
)


def find_chromium() -> str | None:
    override = os.environ.get("BROWSERDECK_CHROME")
    if override:
        return override
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def base_flags(user_data_dir: Path, port: int, *, headless: bool = True) -> list[str]:
    flags = [
        f"--remote-debugging-port={port}",
        "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={user_data_dir}",
        *(["--headless=new"] if headless else []),
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--test-type",
        "--window-size=1280,800",
        "--password-store=basic",
    ]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    return flags


@dataclass
class RawChromium:
    proc: subprocess.Popen[bytes]
    port: int
    cdp_url: str
    ws_url: str

    async def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(self.proc.wait, 10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                await asyncio.to_thread(self.proc.wait, 10)


async def launch_raw_chromium(
    executable: str,
    user_data_dir: Path,
    extra_flags: list[str] | None = None,
    *,
    port: int | None = None,
    headless: bool = True,
) -> RawChromium:
    user_data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    env = dict(os.environ, HOME=str(user_data_dir.parent))
    proc = subprocess.Popen(
        [
            executable,
            *base_flags(user_data_dir, port, headless=headless),
            *(extra_flags or []),
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    cdp_url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode} before it was ready")
        try:
            body = await asyncio.to_thread(_get, f"{cdp_url}/json/version")
            return RawChromium(proc, port, cdp_url, json.loads(body)["webSocketDebuggerUrl"])
        except OSError:
            await asyncio.sleep(0.05)
    proc.kill()
    raise RuntimeError("chromium did not answer /json/version within 15 s")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=1) as resp:
        return bytes(resp.read())
