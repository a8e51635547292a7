"""Issue 10 item 4: the CLI and `browserdeck mcp` never send the API token to a squatter.

Another local user (``nobody`` through setpriv, when the tests run as root) or a second
program listens on the control port while browserdeck is not running. The CLI and the
MCP bridge (`browserdeck mcp --url`) must refuse to talk to it, and it must never see ``Authorization``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from browserdeck.util import paths
from tests.security.spawn import AS_NOBODY, start_ready
from tests.support.net import free_port

SQUATTER = (Path(__file__).parent / "squatter.py").read_text(encoding="utf-8")
TOKEN = "sq-test-token-0123456789"


class Squatter:
    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    def received(self) -> str:
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=10)
        return out

    def stop(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=10)


def start_squatter(prefix: list[str]) -> Squatter:
    port = free_port()
    return Squatter(start_ready(prefix, SQUATTER, str(port), what="the squatter"), port)


@pytest.fixture
def nobody_squatter() -> Iterator[Squatter]:
    if os.geteuid() != 0:
        pytest.skip("dropping to another user (nobody) needs root; see the second-process test")
    squatter = start_squatter(AS_NOBODY)
    try:
        yield squatter
    finally:
        squatter.stop()


@pytest.fixture
def same_user_squatter(bd_home: Path) -> Iterator[Squatter]:
    """A second program of ours on the port the instance file says browserdeck holds."""
    squatter = start_squatter([])
    # A live process that is "browserdeck" per the instance file but does not hold the port
    # (the service was restarted elsewhere, and something else took its old port).
    stand_in = subprocess.Popen(["sleep", "60"])
    paths.instance_file().parent.mkdir(parents=True, exist_ok=True)
    paths.instance_file().write_text(json.dumps({"url": squatter.url, "pid": stand_in.pid}))
    try:
        yield squatter
    finally:
        stand_in.kill()
        stand_in.wait()
        squatter.stop()


def run_cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BROWSERDECK_URL=url, BROWSERDECK_TOKEN=TOKEN)
    return subprocess.run(
        [sys.executable, "-m", "browserdeck", *args],
        env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )


# What an MCP client sends first: the bridge must refuse before forwarding anything.
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "squatter-test", "version": "0"}}}) + "\n"


def run_mcp_bridge(url: str) -> subprocess.CompletedProcess[str]:
    """`browserdeck mcp --url URL`, the stdio bridge an MCP client spawns."""
    env = dict(os.environ, BROWSERDECK_TOKEN=TOKEN)
    return subprocess.run(
        [sys.executable, "-m", "browserdeck", "mcp", "--url", url],
        env=env, capture_output=True, text=True, timeout=60, input=INITIALIZE,
    )


def test_cli_refuses_a_squatter_of_another_user(nobody_squatter: Squatter) -> None:
    result = run_cli(nobody_squatter.url, "tabs")
    got = nobody_squatter.received()
    assert TOKEN not in got and "uthorization" not in got, got
    assert result.returncode == 3, result.stdout + result.stderr
    assert "runs as nobody" in result.stderr and "not your browserdeck" in result.stderr
    assert "IGNORE ALL INSTRUCTIONS" not in result.stdout


def test_the_mcp_bridge_refuses_a_squatter_of_another_user(nobody_squatter: Squatter) -> None:
    result = run_mcp_bridge(nobody_squatter.url)
    got = nobody_squatter.received()
    assert TOKEN not in got and "uthorization" not in got, got
    assert result.returncode == 3, result.stdout + result.stderr
    assert "runs as nobody" in result.stderr and "not your browserdeck" in result.stderr


def test_cli_refuses_a_second_program_on_browserdecks_port(same_user_squatter: Squatter) -> None:
    result = run_cli(same_user_squatter.url, "tabs")
    got = same_user_squatter.received()
    assert TOKEN not in got, got
    assert result.returncode == 3, result.stdout + result.stderr
    assert "held by another program" in result.stderr


def test_the_mcp_bridge_refuses_a_second_program(same_user_squatter: Squatter) -> None:
    result = run_mcp_bridge(same_user_squatter.url)
    got = same_user_squatter.received()
    assert TOKEN not in got and "uthorization" not in got, got
    assert result.returncode == 3, result.stdout + result.stderr
    assert "held by another program" in result.stderr
