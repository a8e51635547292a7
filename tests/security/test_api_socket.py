"""The control API's Unix socket (issue 14 item 2): this user only, no token, no stale file.

Real parts: an in-process Service with its real uvicorn on the socket, the real CLI as
a process, and a real second user (`nobody`, via setpriv) when the suite runs as root.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.service import running_service

# What another user runs: a raw HTTP request on the socket, with no token.
PROBE = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "try:\n"
    "    s.connect(sys.argv[1])\n"
    "except OSError as exc:\n"
    "    print('refused', type(exc).__name__); sys.exit(0)\n"
    "s.sendall(b'GET /profiles HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n')\n"
    "data = b''\n"
    "while chunk := s.recv(65536):\n"
    "    data += chunk\n"
    "print(data.decode(errors='replace'))\n"
)

as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to act as a second user (nobody)",
)


def raw_get(path: Path, route: str) -> tuple[int, dict[str, object]]:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(f"GET {route} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "browserdeck", *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})},
    )  # fmt: skip


@pytest.fixture
def short_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home under /tmp, so the test can open it to another user on purpose."""
    home = Path(tempfile.mkdtemp(prefix="bd-sock-"))
    monkeypatch.setenv("BROWSERDECK_HOME", str(home))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def test_the_socket_serves_this_user_without_a_token(short_home: Path) -> None:
    async with running_service() as (service, _client):
        assert service.api is not None
        sock = service.api.socket_path
        assert sock == short_home / "run" / "api.sock"
        assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
        status, body = await asyncio.to_thread(raw_get, sock, "/profiles")  # no Authorization header at all
        assert status == 200 and any(p["profile"] == "agent" for p in body["profiles"])  # type: ignore[union-attr]
        # The instance file names it, and the CLI uses it without a token anywhere.
        instance = json.loads((short_home / "state" / "instance.json").read_text())
        assert instance["socket"] == str(sock)
        # A wrong token in the environment: over TCP that is a 401; the socket needs none.
        result = await asyncio.to_thread(
            cli, "profiles", "--json", env={"BROWSERDECK_TOKEN": "wrong"}
        )
        assert result.returncode == 0, result.stderr
        assert any(p["profile"] == "agent" for p in json.loads(result.stdout)["profiles"])
    assert not sock.exists()  # removed at stop


@as_root
async def test_another_user_cannot_use_the_socket(short_home: Path) -> None:
    async with running_service() as (service, _client):
        assert service.api is not None and service.api.socket_path is not None
        sock = service.api.socket_path

        def as_nobody() -> str:
            return subprocess.run(
                ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                 "/usr/bin/python3", "-c", PROBE, str(sock)],
                capture_output=True, text=True, timeout=30, cwd="/",
            ).stdout  # fmt: skip

        # First lock: the folder is ours alone.
        assert (await asyncio.to_thread(as_nobody)).startswith("refused PermissionError")
        # Second lock, for a folder opened by mistake: the kernel names the caller's uid
        # (SO_PEERCRED) and the guard refuses anyone but us.
        for path, mode in ((short_home, 0o711), (sock.parent, 0o711), (sock, 0o666)):
            os.chmod(path, mode)
        answer = await asyncio.to_thread(as_nobody)
        assert answer.startswith("HTTP/1.1 403"), answer
        assert "forbidden_user" in answer and '"profiles"' not in answer
        status, _ = await asyncio.to_thread(raw_get, sock, "/profiles")
        assert status == 200  # and we still get in


async def test_a_stale_socket_from_a_dead_service_is_replaced(short_home: Path) -> None:
    run = short_home / "run"
    run.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(run / "api.sock"))  # bound, never listening, closed: what kill -9 leaves
    stale.close()
    assert (run / "api.sock").exists()
    # No service: the CLI says so plainly (not a connection error on the stale file).
    result = cli("status")
    assert result.returncode == 3 and "browserdeck is not running" in result.stderr
    assert "Traceback" not in result.stderr
    async with running_service() as (service, _client):
        assert service.api is not None and service.api.socket_path == run / "api.sock"
        status, _ = await asyncio.to_thread(raw_get, run / "api.sock", "/profiles")
        assert status == 200
        result = await asyncio.to_thread(cli, "profiles")
        assert result.returncode == 0 and "agent (managed" in result.stdout, result.stderr


def test_a_directory_at_the_socket_path_means_tcp_only(short_home: Path) -> None:
    """Whatever sits at the path and cannot be removed: the API serves TCP only, no traceback."""
    from browserdeck.api.server import bind_unix

    run = short_home / "run"
    run.mkdir(mode=0o700)
    (run / "api.sock").mkdir()
    assert bind_unix(run / "api.sock") is None
    assert (run / "api.sock").is_dir()  # left as it was


async def test_a_live_socket_is_not_taken_over(short_home: Path) -> None:
    async with running_service() as (first, _client):
        assert first.api is not None and first.api.socket_path is not None
        sock = first.api.socket_path
        inode = os.stat(sock).st_ino
        from browserdeck.api.server import bind_unix

        assert bind_unix(sock) is None  # a second service serves TCP only
        assert os.stat(sock).st_ino == inode
        status, _ = await asyncio.to_thread(raw_get, sock, "/profiles")
        assert status == 200
