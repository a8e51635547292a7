"""Issue 10 item 8: reset-profile and allocate_cdp_port never take another user's port.

A second local user is real here: as root the test drops to `nobody` with setpriv and
starts a listener that looks like a Chrome (`--remote-debugging-port` in its argv, what
reset-profile looks for). reset-profile must refuse and leave it running;
allocate_cdp_port must skip its port. Without root there is no second user to be, so
the test is skipped (CI runs as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from browserdeck import config
from browserdeck.chrome import procs
from tests.support.net import free_port
from tests.support.service import running_service, service_config

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run a listener as a second user (nobody)",
)

LISTENER = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('ready', flush=True)\n"
    "time.sleep(300)\n"
)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


def nobody_listener(port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
            "/usr/bin/python3", "-c", LISTENER, str(port), f"--remote-debugging-port={port}",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture
def foreign() -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = free_port()
    proc = nobody_listener(port)
    try:
        yield port, proc
    finally:
        stop(proc)


async def test_reset_profile_leaves_another_users_chrome_alone(
    foreign: tuple[int, subprocess.Popen[str]],
) -> None:
    port, proc = foreign
    assert procs.is_chrome_process(proc.pid) or any(
        procs.is_chrome_process(p) for p in procs.listening_pids(port)
    )
    cfg = service_config()
    cfg.profiles["agent"].cdp_port = port
    async with running_service(cfg) as (_service, client):
        resp = await client.post("/reset-profile", params={"profile": "agent"})
        assert resp.status_code == 409, resp.text
        assert resp.json()["error"]["code"] == "port_held_by_other_user"
        assert proc.poll() is None, "another user's process was killed"
    # The low-level kill refuses too, whoever calls it.
    assert procs.kill_port_owner(port, timeout=1) == []
    assert proc.poll() is None


def test_allocate_cdp_port_skips_a_port_another_user_listens_on() -> None:
    # Every port of the range but one is reserved; another user listens on that one.
    candidates = [p for p in config.MANAGED_PORT_RANGE if not procs.port_in_use(p)]
    if not candidates:
        pytest.skip("every port of 18800-18899 is busy on this machine")
    port = candidates[-1]
    proc = nobody_listener(port)
    try:
        cfg = config.default_config()
        cfg.profiles = {}
        reserved = [p for p in config.MANAGED_PORT_RANGE if p != port]
        with pytest.raises(Exception, match="no free CDP port"):
            config.allocate_cdp_port(cfg, reserved)
    finally:
        stop(proc)
    assert config.allocate_cdp_port(cfg, reserved) == port
