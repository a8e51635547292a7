"""Issue 11 item 6: `serve` SIGKILLed leaves nothing that blocks the next run.

Two ways a browser could outlive its browserdeck: one from an earlier version (or any
browser started on the profile's user-data dir with a port, double-forked away from
us), and our own browser when `serve` is SIGKILLed. Either way a restarted `serve`
must start the profile at once, and half-written config temp files are cleaned up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from browserdeck import config
from browserdeck.chrome.procs import pid_alive
from browserdeck.secrets import tokens as secrets
from browserdeck.util import paths
from tests.support.browsers import base_flags
from tests.support.net import free_port
from tests.support.service import service_config


class Serve:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ, BROWSERDECK_HOME=str(self.home))
        log = (self.home / f"serve-{len(self.procs)}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "browserdeck", "serve", "--headless"],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        self.procs.append(proc)
        deadline = time.monotonic() + 60  # a no-hang bound; a loaded CI box is slow
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1, trust_env=False).status_code == 200:
                    return proc
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"serve did not come up: {self.logs()}")
            time.sleep(0.1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{config.load().config.control_port}"

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.home.glob("serve-*.log")))

    def post(self, path: str) -> httpx.Response:
        token = secrets.get_token("api", create=False)
        return httpx.post(self.url + path, headers={"Authorization": f"Bearer {token}"},
                          timeout=60, trust_env=False)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def serve(bd_home: Path) -> Iterator[Serve]:
    config.save(service_config())
    runner = Serve(bd_home)
    try:
        yield runner
    finally:
        runner.stop_all()


def wait_gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_restart_after_sigkill_starts_the_profile(serve: Serve) -> None:
    first = serve.start()
    started = serve.post("/start")
    assert started.status_code == 200, started.text
    browser_pid = started.json()["pid"]
    first.kill()
    first.wait()
    # On a pipe the browser cannot be adopted by the next run: it dies with its owner.
    assert wait_gone(browser_pid), "the browser outlived the SIGKILLed serve"
    # What a save killed half-way leaves behind (aged: see remove_stale_temp_files).
    stale = paths.config_file().parent / ".config-killed.tmp"
    stale.write_text("{")
    os.utime(stale, (time.time() - 60, time.time() - 60))

    serve.start()
    again = serve.post("/start")
    assert again.status_code == 200, again.text + serve.logs()
    assert again.json()["running"] is True
    assert again.json()["pid"] != browser_pid
    assert not pid_alive(browser_pid)
    assert not stale.exists()


def test_a_leftover_browser_on_the_profile_is_closed_at_start_up(
    serve: Serve, chromium_path: str
) -> None:
    cfg = config.load().config
    profile = cfg.profiles["agent"]
    udd = cfg.user_data_dir_of(profile)
    udd.mkdir(parents=True, exist_ok=True)
    # A browser as an earlier browserdeck left it: on the profile's dir with a CDP port,
    # re-parented away from us (double fork through sh), in a session of its own.
    flags = " ".join(base_flags(udd, free_port()))
    spawned = subprocess.run(
        ["sh", "-c", f"setsid {chromium_path} {flags} about:blank >/dev/null 2>&1 & echo $!"],
        capture_output=True, text=True, check=True,
    )
    orphan = int(spawned.stdout.strip())
    try:
        deadline = time.monotonic() + 15
        while not (udd / "SingletonLock").is_symlink():
            assert time.monotonic() < deadline, "the leftover browser never locked the profile"
            time.sleep(0.05)
        serve.start()
        assert wait_gone(orphan), serve.logs()
        started = serve.post("/start")
        assert started.status_code == 200, started.text + serve.logs()
        assert started.json()["running"] is True
    finally:
        if pid_alive(orphan):
            os.killpg(orphan, signal.SIGKILL)


# A browser that answers on its DevTools pipe but, unlike Chrome, ignores the pipe's end:
# what a hung browser looks like. Only the parent-death signal can end it. (A stand-in:
# a real Chrome cannot be made to hang on purpose.)
HUNG_BROWSER = """#!/usr/bin/python3
import json, os, time
buf = b""
while True:
    chunk = os.read(3, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\\0" in buf:
        raw, buf = buf.split(b"\\0", 1)
        msg = json.loads(raw)
        result = {"product": "Hung/1.0"} if msg["method"] == "Browser.getVersion" else {}
        os.write(4, json.dumps({"id": msg["id"], "result": result}).encode() + b"\\0")
time.sleep(3600)
"""

OWNER = """
import asyncio, sys
from pathlib import Path
from browserdeck.chrome.launcher import LaunchOptions, launch
async def main():
    chrome = await launch(LaunchOptions(
        profile="hung", port=int(sys.argv[1]), user_data_dir=Path(sys.argv[2]),
        color="#FF4500", headless=True, no_sandbox=True, executable=sys.argv[3],
        token=lambda: "t"))
    print(chrome.pid, flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def test_a_hung_browser_dies_with_its_owner(tmp_path: Path) -> None:
    fake = tmp_path / "hung-browser"
    fake.write_text(HUNG_BROWSER)
    fake.chmod(0o755)
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(free_port()), str(tmp_path / "udd"), str(fake)],
        stdout=subprocess.PIPE, text=True,
    )
    browser = 0
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline()
        assert line.strip().isdigit(), f"the owner did not launch the browser: {line!r}"
        browser = int(line)
        assert pid_alive(browser)
        owner.kill()
        owner.wait()
        assert wait_gone(browser), "the browser outlived its SIGKILLed owner"
    finally:
        if browser and pid_alive(browser):
            os.kill(browser, signal.SIGKILL)
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()
