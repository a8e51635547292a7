"""`browserdeck mcp` as a thin stdio <-> /mcp bridge (issue 14 items 1 and 4).

Real parts: the official SDK client spawns `python -m browserdeck mcp`; the service runs
in this test's process (its real uvicorn on the Unix socket) or is started by the
bridge itself as a real `browserdeck serve` process.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from PIL import Image

from browserdeck.chrome.procs import pid_alive
from mcp import Client, MCPError, StdioServerParameters
from tests.mcp.harness import call, call_error, mcp_config
from tests.support.service import instance_file_of, running_service

# Runs the real CLI entry point, then writes which modules the process had loaded.
WITH_MODULE_LIST = (
    "import atexit, sys\n"
    "out = sys.argv[1]\n"
    "def dump():\n"
    "    open(out, 'w').write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(dump)\n"
    "from browserdeck.cli.main import main\n"
    "sys.argv = ['browserdeck', *sys.argv[2:]]\n"
    "sys.exit(main())\n"
)


def env_for(home: Path, chromium: str) -> dict[str, str]:
    return {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
    }


def bridge_params(
    home: Path, chromium: str, cwd: Path, *args: str, modules: Path | None = None
) -> StdioServerParameters:
    if modules is not None:
        argv = ["-c", WITH_MODULE_LIST, str(modules), "mcp", *args]
    else:
        argv = ["-m", "browserdeck", "mcp", *args]
    return StdioServerParameters(
        command=sys.executable, args=argv, env=env_for(home, chromium), cwd=str(cwd)
    )


def image(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), "green").save(path)
    return path


def test_with_no_service_the_bridge_starts_one_before_it_loads_its_http_client(
    bd_home: Path, chromium_path: str
) -> None:
    """The service's boot is what the client waits for: it starts first, and the bridge's
    own imports (http.client, ~45 ms of CPU) run while it boots (issue 14), as do those
    of what it does not need to start it (argparse, json, socket.py, subprocess, the MCP
    output module). The spawn is replaced (the process boundary): this checks the order,
    test_bridge's others the rest."""
    code = (
        "import sys\n"
        "from browserdeck.cli import mcp as cli_mcp\n"
        "def spawn():\n"
        "    print(sorted(m for m in ('browserdeck.cli.bridge', 'http.client', 'argparse',\n"
        "                             'json', 'socket', 'browserdeck.mcpserver.output',\n"
        "                             'subprocess')\n"
        "                 if m in sys.modules), flush=True)\n"
        "    raise SystemExit(0)\n"
        "cli_mcp.spawn_service = spawn\n"
        "from browserdeck.cli.main import main\n"
        "sys.argv = ['browserdeck', 'mcp']\n"
        "sys.exit(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env_for(bd_home, chromium_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_serve_says_on_its_ready_fd_when_the_api_listens(
    bd_home: Path, chromium_path: str
) -> None:
    """`browserdeck mcp` waits on this pipe for the service it started, not on a poll of
    the socket (issue 14): one byte once the socket answers, then the pipe is closed while
    the service runs, so no browser or driver of it holds the pipe open."""
    mcp_config(bd_home)
    ready, told = os.pipe()
    serve = subprocess.Popen(
        [sys.executable, "-m", "browserdeck", "serve", "--headless", "--idle-exit",
         "--ready-fd", str(told)],
        env=env_for(bd_home, chromium_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(told,),
    )  # fmt: skip
    os.close(told)
    try:
        assert select.select([ready], [], [], 60)[0], "no word from the service"
        assert os.read(ready, 1) == b"1"
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(bd_home / "run" / "api.sock"))  # it listens by then
        probe.close()
        assert select.select([ready], [], [], 30)[0] and os.read(ready, 1) == b""
        assert serve.poll() is None
    finally:
        os.close(ready)
        serve.terminate()
        serve.wait(30)


def test_serve_refuses_a_ready_fd_that_is_not_a_pipe_of_its_own(
    bd_home: Path, chromium_path: str
) -> None:
    """`--ready-fd` is internal to `browserdeck mcp`; given by hand, -1 or a closed fd
    ended in an OSError traceback, and 1 wrote the byte into stdout and closed it. Each
    is one line saying what was given and what to do, with argparse's usage exit code."""
    closed_read, closed = os.pipe()
    os.close(closed_read)
    os.close(closed)  # a descriptor number this process does not have open
    for fd in ("-1", "0", "1", "2", str(closed)):
        done = subprocess.run(
            [sys.executable, "-m", "browserdeck", "serve", "--headless", "--ready-fd", fd],
            env=env_for(bd_home, chromium_path), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, (fd, done.stderr)
        assert done.stdout == "", fd
        [line] = done.stderr.splitlines()
        assert f"--ready-fd {fd}:" in line and "internal to `browserdeck mcp`" in line, line
        assert "without it" in line, line


def test_the_bridge_stops_at_once_when_the_service_listens_but_not_on_its_socket(
    bd_home: Path, chromium_path: str
) -> None:
    """A service that cannot bind the API socket serves TCP only (api/server.py), and
    still says on its ready pipe that it listens: the bridge then polled the socket for
    60 s and said only that it "did not answer". It now stops at the service's word,
    says why with the service's own line and where its output is, and stops the service
    it started, which would hold the control port and a browser for nothing. A real
    service; its socket is made unbindable by a symlink to itself at that path (the
    socket's probe gets ELOOP), since the tests run as root, for whom no folder is
    read-only."""
    cfg = mcp_config(bd_home)
    run = bd_home / "run"
    run.mkdir(mode=0o700)
    (run / "api.sock").symlink_to("api.sock")
    done = subprocess.run(
        [sys.executable, "-m", "browserdeck", "mcp"], env=env_for(bd_home, chromium_path),
        input="", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"not on its API socket {run / 'api.sock'}" in done.stderr, done.stderr
    assert "serving TCP only" in done.stderr  # the service's own words
    assert str(run / "mcp-serve.err") in done.stderr
    # Stopped: its control port refuses before long.
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", cfg.control_port), timeout=1).close()
        except ConnectionRefusedError:
            break
        assert time.monotonic() < deadline, "the service the bridge started still runs"
        time.sleep(0.1)


def test_the_service_it_starts_gets_no_descriptor_but_stdio_and_its_ready_pipe(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The service outlives the bridge: a descriptor the MCP client left open to the bridge
    (inheritable) must not stay open in it, nor may the bridge's stdio, which the client
    waits on. The service is replaced (the process boundary) by one that lists its fds."""
    from browserdeck.cli import mcp as cli_mcp

    listing = tmp_path / "fds.json"
    fake = (
        "import json, os, sys\n"
        "fds = {int(n): os.readlink(f'/proc/self/fd/{n}') for n in os.listdir('/proc/self/fd')\n"
        "       if os.path.exists(f'/proc/self/fd/{n}')}\n"
        f"open({str(listing)!r}, 'w').write(json.dumps(fds))\n"
        "os.write(int(sys.argv[-1]), b'1')\n"
    )
    monkeypatch.setattr(cli_mcp, "serve_command", lambda: [sys.executable, "-c", fake])
    left_open, other_end = os.pipe()
    os.set_inheritable(left_open, True)
    try:
        proc, _err, ready = cli_mcp.spawn_service()
        try:
            assert os.read(ready, 1) == b"1"
            assert proc.wait() == 0
        finally:
            os.close(ready)
    finally:
        os.close(left_open)
        os.close(other_end)
    fds = {int(fd): target for fd, target in json.loads(listing.read_text()).items()}
    assert fds[0] == fds[1] == os.devnull
    assert fds[2].endswith("mcp-serve.err")
    pipes = {fd for fd, target in fds.items() if target.startswith("pipe:")}
    assert len(pipes) == 1, fds  # the ready pipe; not the one left open to the bridge


def test_a_service_it_started_that_died_is_reaped_at_the_next_start(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Popen reaped its dead children: a service gone mid-session is started again
    (the restart), and the one that died does not stay a zombie for the bridge's life.
    The service is replaced (the process boundary) by one that exits at once."""
    import psutil

    from browserdeck.cli import mcp as cli_mcp

    monkeypatch.setattr(cli_mcp, "serve_command", lambda: [sys.executable, "-c", "pass"])
    first, _err, ready = cli_mcp.spawn_service()
    os.close(ready)
    deadline = time.monotonic() + 10
    while psutil.Process(first.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the fake service did not exit"
        time.sleep(0.01)
    second, _err, ready = cli_mcp.spawn_service()
    os.close(ready)
    try:
        assert not psutil.pid_exists(first.pid) or (
            psutil.Process(first.pid).status() != psutil.STATUS_ZOMBIE
        )
    finally:
        second.wait()


def test_the_bridge_is_woken_by_the_service_not_by_a_poll(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the spawn and the service's word on its ready pipe, the bridge does not
    probe the socket (a poll adds up to its interval to every start; issue 14). The
    service is replaced (the process boundary) by one that listens after 0.5 s."""
    from browserdeck.cli import mcp as cli_mcp
    from browserdeck.util import paths

    fake = (
        "import os, socket, sys, time\n"
        "time.sleep(0.5)\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "s.bind(os.environ['SOCK']); s.listen(8)\n"
        "os.write(int(sys.argv[-1]), b'1'); os.close(int(sys.argv[-1]))\n"
        "time.sleep(30)\n"
    )
    sock = paths.api_socket_path()
    assert sock is not None
    monkeypatch.setenv("SOCK", sock)
    monkeypatch.setattr(cli_mcp, "serve_command", lambda: [sys.executable, "-c", fake])
    probes = []
    answers = cli_mcp._socket_answers

    def counted(path: str) -> bool:
        probes.append(path)
        return answers(path)

    monkeypatch.setattr(cli_mcp, "_socket_answers", counted)
    started = cli_mcp.spawn_service()
    try:
        assert cli_mcp.wait_for_service(started, sock) is None
        assert len(probes) <= 2, len(probes)  # once before its word, once after
    finally:
        started[0].kill()
        started[0].wait()


async def test_the_bridge_loads_no_sdk_and_no_engine(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    modules = tmp_path / "modules.txt"
    async with running_service(mcp_config(bd_home)):
        params = bridge_params(bd_home, chromium_path, tmp_path, modules=modules)
        async with Client(params, read_timeout_seconds=90) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"browser_navigate", "browser_snapshot", "browser_click"} <= names
            text = await call(
                client, "browser_navigate", {"url": "data:text/html,<button>Go</button>"}
            )
            assert "page:" in text
            snap = await call(client, "browser_snapshot")
            assert 'button "Go"' in snap
    loaded = set(modules.read_text().split())
    assert "browserdeck.cli.bridge" in loaded  # it really was the bridge that ran
    heavy = {
        name
        for name in loaded
        if name.split(".")[0] in ("mcp", "mcp_types", "httpx", "fastapi", "pydantic", "playwright")
        or name.startswith(("browserdeck.engine", "browserdeck.service", "browserdeck.mcpserver.server"))
        or name in ("asyncio", "keyring")
    }
    assert not heavy, sorted(heavy)


async def test_the_bridge_forwards_the_clients_roots_else_its_working_directory(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    declared = image(tmp_path / "declared" / "a.png")
    in_cwd = image(tmp_path / "cwd" / "b.png")

    async def roots(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=f"file://{declared.parent}", name="declared")]
        )

    async with running_service(mcp_config(bd_home)):
        params = bridge_params(bd_home, chromium_path, in_cwd.parent, "--tools", "all")
        # A client that declares roots (handshake protocol: the service asks over the
        # bridge's GET stream): those count, the bridge's working directory does not.
        async with Client(
            params, read_timeout_seconds=90, mode="legacy", list_roots_callback=roots
        ) as client:
            ok = await client.call_tool("browser_read_image", {"path": str(declared)})
            assert not ok.is_error, ok.content[0].text  # type: ignore[union-attr]
            error = await call_error(client, "browser_read_image", {"path": str(in_cwd)})
            assert "only existing files inside the allowed folders" in error
        # A client without roots: the bridge's working directory is the workspace, as
        # the stdio server's own was.
        async with Client(params, read_timeout_seconds=90) as client:
            ok = await client.call_tool("browser_read_image", {"path": str(in_cwd)})
            assert not ok.is_error, ok.content[0].text  # type: ignore[union-attr]
            error = await call_error(client, "browser_read_image", {"path": str(declared)})
            assert "only existing files inside the allowed folders" in error
            # `filename` outputs land in that workspace too.
            saved = await call(client, "browser_read_image", {"path": str(in_cwd), "filename": "x.png"})
            assert str(in_cwd.parent / "browserdeck-output") in saved


def _claims(home: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((home / "state" / "mcp-tab-claims.json").read_text()))
    except (OSError, ValueError):
        return {}


async def test_the_bridge_exits_at_once_and_gives_its_tab_back(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    async with running_service(mcp_config(bd_home)):
        params = bridge_params(bd_home, chromium_path, tmp_path)
        proc = subprocess.Popen(
            [params.command, *params.args],
            env=params.env,
            cwd=params.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None

        def send(msg: dict[str, Any]) -> dict[str, Any] | None:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
            if "id" not in msg:
                return None
            return dict(json.loads(proc.stdout.readline()))

        init = await asyncio.to_thread(
            send,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "1"},
                },
            },
        )
        assert init is not None and init["result"]["serverInfo"]["name"] == "browserdeck"
        await asyncio.to_thread(send, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = await asyncio.to_thread(
            send,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "browser_navigate", "arguments": {"url": "about:blank#x"}},
            },
        )
        assert answer is not None and not answer["result"].get("isError"), answer
        held = [c for c in _claims(bd_home).values() if "raw-test" in str(c)]
        assert held and all(c["pid"] == proc.pid for c in held), _claims(bd_home)
        started = time.monotonic()
        proc.stdin.close()  # what an MCP client does first to stop its server
        await asyncio.to_thread(proc.wait, 10)
        assert proc.returncode == 0
        assert time.monotonic() - started < 5  # "no hang"; the bench measures the speed
        proc.stdout.close()
        # Its session was deleted on the way out: its tab is free for the next agent.
        assert not [c for c in _claims(bd_home).values() if "raw-test" in str(c)]


async def test_without_a_service_it_starts_one_that_outlives_it(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    mcp_config(bd_home)
    params = bridge_params(bd_home, chromium_path, tmp_path)
    async with Client(params, read_timeout_seconds=90) as client:
        assert (await client.list_tools()).tools
    instance = json.loads(await asyncio.to_thread(instance_file_of, bd_home))
    pid = int(instance["pid"])
    assert pid_alive(pid)  # still there for the next MCP client, on purpose

    def browser_running() -> bool:
        from browserdeck.util import uds

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            _, _, body = uds.request(str(bd_home / "run" / "api.sock"), "GET", "/profiles")
            if any(p["profile"] == "agent" and p["running"] for p in json.loads(body)["profiles"]):
                return True
            time.sleep(0.1)
        return False

    # It launched the default browser by itself, beside the Playwright driver (item 3):
    # no tool call asked for a page.
    assert await asyncio.to_thread(browser_running)
    assert os.getsid(pid) == pid  # in a session of its own, not the client's
    # The next client uses it (the same process answers).
    async with Client(params, read_timeout_seconds=90) as client:
        assert (await client.list_tools()).tools
    assert json.loads((bd_home / "state" / "instance.json").read_text())["pid"] == pid
    os.kill(pid, signal.SIGTERM)

    def gone() -> bool:
        deadline = time.monotonic() + 20
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return not pid_alive(pid)

    assert await asyncio.to_thread(gone)


def test_a_service_started_for_mcp_exits_once_no_client_lives(
    bd_home: Path, tmp_path: Path
) -> None:
    mcp_config(bd_home)
    env = {**os.environ, "BROWSERDECK_HOME": str(bd_home)}
    serve = subprocess.Popen(
        [sys.executable, "-m", "browserdeck", "serve", "--headless", "--idle-exit", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = subprocess.Popen(["sleep", "60"])  # stands for a `browserdeck mcp` process
    try:
        sock = bd_home / "run" / "api.sock"
        deadline = time.monotonic() + 60
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        from browserdeck.cli.bridge import UnixHTTPConnection

        conn = UnixHTTPConnection(str(sock), 10)
        conn.request("GET", "/profiles", headers={"X-Browserdeck-Bridge": str(client.pid)})
        assert conn.getresponse().status == 200
        conn.close()
        time.sleep(3)  # three times the idle limit: its client still lives
        assert serve.poll() is None
        client.kill()
        client.wait()
        assert serve.wait(20) == 0  # then it stops by itself, cleanly
        assert not sock.exists()
    finally:
        for proc in (client, serve):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _service_pid(home: Path) -> int:
    return int(json.loads(instance_file_of(home))["pid"])


def _kill_and_wait(pid: int, sock: Path) -> None:
    os.kill(pid, signal.SIGKILL)  # no clean stop: the socket file stays, refusing
    # Until its socket refuses: the main thread may show as a zombie while the others
    # still hold the process's files, and a connection then is reset, not refused.
    from browserdeck.util import uds

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            uds.request(str(sock), "GET", "/health", timeout=5)
        except (ConnectionRefusedError, FileNotFoundError):
            if not pid_alive(pid):
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the service {pid} is still there")


async def test_a_service_killed_mid_session_is_started_again_with_the_session(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    declared = image(tmp_path / "declared" / "a.png")
    in_cwd = image(tmp_path / "cwd" / "b.png")
    asked = 0

    async def roots(_context: Any) -> types.ListRootsResult:
        nonlocal asked
        asked += 1
        return types.ListRootsResult(
            roots=[types.Root(uri=f"file://{declared.parent}", name="declared")]
        )

    mcp_config(bd_home)
    params = bridge_params(bd_home, chromium_path, in_cwd.parent, "--tools", "all")
    # The handshake protocol: a session, opened with the client's own initialize.
    async with (
        Client(
            params, read_timeout_seconds=90, mode="legacy", list_roots_callback=roots
        ) as client,
        Client(params, read_timeout_seconds=90, mode="legacy") as other,
    ):
        await call(client, "browser_navigate", {"url": "data:text/html,<button>One</button>"})
        await call(other, "browser_navigate", {"url": "about:blank#other"})
        first = _service_pid(bd_home)
        await asyncio.to_thread(_kill_and_wait, first, bd_home / "run" / "api.sock")
        # The next call works, on a service the bridge started again.
        text = await call(
            client, "browser_navigate", {"url": "data:text/html,<button>Two</button>"}
        )
        assert "page:" in text
        assert 'button "Two"' in await call(client, "browser_snapshot")
        second = _service_pid(bd_home)
        assert second != first and pid_alive(second)
        # The new service asked the client for its roots again: they still rule.
        ok = await client.call_tool("browser_read_image", {"path": str(declared)})
        assert not ok.is_error, ok.content[0].text  # type: ignore[union-attr]
        error = await call_error(client, "browser_read_image", {"path": str(in_cwd)})
        assert "only existing files inside the allowed folders" in error
        assert asked >= 2
        # The other client's bridge finds a new service that does not know its session
        # (the first bridge started it): it opens its session there anew, too.
        assert "page:" in await call(other, "browser_navigate", {"url": "about:blank#again"})


async def test_a_service_that_cannot_start_again_is_an_error_in_plain_words(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    cfg = mcp_config(bd_home)
    params = bridge_params(bd_home, chromium_path, tmp_path)
    async with Client(params, read_timeout_seconds=90) as client:
        await call(client, "browser_navigate", {"url": "about:blank#one"})
        await asyncio.to_thread(
            _kill_and_wait, _service_pid(bd_home), bd_home / "run" / "api.sock"
        )
        # Another program takes the control port meanwhile: the restart fails.
        import socket

        squatter = socket.socket()
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", cfg.control_port))
        squatter.listen()
        try:
            with pytest.raises(MCPError) as failed:
                await client.call_tool("browser_navigate", {"url": "about:blank#two"})
        finally:
            squatter.close()
    error = str(failed.value)
    assert "went away and could not be started again" in error, error
    assert f"port {cfg.control_port}" in error and "already in use" in error, error
    assert "Traceback" not in error
