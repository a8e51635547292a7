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

from browserdeck import config, paths, secrets
from browserdeck.chrome.procs import pid_alive
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
        deadline = time.monotonic() + 30
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
