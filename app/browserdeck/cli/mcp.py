"""``browserdeck mcp``: MCP over stdio (registered by cli/main.py).

The process is a thin bridge (cli/bridge.py) to the service's ``/mcp``: over the API's
Unix socket when a service runs, after starting one (headless, the way ``serve``
does) when none does; where there is no such socket (macOS, Windows) over TCP, and
then nothing is started. That service outlives this process on purpose and exits by
itself once no MCP client has used it for ``mcpIdleMinutes`` (docs/mcp.md says why).
Only ``--list-tools`` and ``--print-config`` load the MCP server code here.
"""

from __future__ import annotations

import os
import sys
import time

# Not `from typing import`: typing costs a CLI call about a fifth of its start-up.
# Nor argparse and json here: this module declares `mcp` to the parser, and the MCP
# client waits for the service that `browserdeck mcp` starts after that.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

# How long a service we started may take to answer before we give up.
START_TIMEOUT = 60.0


def _offline(args: argparse.Namespace) -> int:
    """``--print-config`` and ``--list-tools``: answered here, no service needed."""
    import json

    from browserdeck import config
    from browserdeck.errors import BrowserdeckError
    from browserdeck.mcpserver import client_config_snippet
    from browserdeck.mcpserver.server import McpApp, select_tools

    if args.print_config:
        snippet = client_config_snippet(
            transport=args.transport, tools=args.tools, profile=args.profile, url=args.url
        )
        print(json.dumps(snippet, indent=2))
        return 0
    try:
        chosen = select_tools(args.tools, run_code=config.read_cached().mcp_run_code)
    except BrowserdeckError as exc:
        print(
            f"error: {exc.message}"
            + (f"\n  hint: {exc.hint_for('cli')}" if exc.what_next else ""),
            file=sys.stderr,
        )
        return 2
    listed = McpApp.tool_list(chosen)
    for item in listed:
        print(f"{item['name']:28} {len(json.dumps(item)):6,} chars  {item['description']}")
    print(f"{len(listed)} tools, tools/list JSON {len(json.dumps(listed)):,} chars")
    return 0


def _socket_answers(path: str) -> bool:
    # socket.py's C half, as util/uds.py: socket.py's enums would cost the spawn ~3 ms.
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return True
    except OSError:
        return False
    finally:
        sock.close()


def serve_command() -> list[str]:
    """How to run ``browserdeck serve`` with this very installation."""
    if getattr(sys, "frozen", False):  # the PyInstaller bundle: the executable is the CLI
        return [sys.executable, "serve"]
    return [sys.executable, "-m", "browserdeck", "serve"]


def start_service(socket_path: str) -> str | None:
    """Start ``browserdeck serve --headless --idle-exit`` and wait until its socket
    answers; None when it does, else why it did not. While the tray app takes the
    service over, its own service is waited for instead."""
    if await_takeover(socket_path):
        return None
    return wait_for_service(spawn_service(), socket_path)


def _takeover_pid() -> int | None:
    """The tray app taking over the service (gui/takeover.py), if it is alive."""
    from browserdeck.util import paths

    try:
        with open(paths.takeover_path(), encoding="ascii") as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def await_takeover(socket_path: str) -> bool:
    """While the tray app takes over (it stopped the service started for MCP clients and
    starts its own), wait for its socket rather than start a service that would race it
    for the ports: True once the socket answers; False when no take-over is under way
    or it ended without one (then the caller starts a service, as ever)."""
    deadline = time.monotonic() + START_TIMEOUT
    while _takeover_pid() is not None:
        if _socket_answers(socket_path):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return _socket_answers(socket_path)


class Spawned:
    """The ``serve`` process ``spawn_service`` started: what ``wait_for_service`` needs of
    a ``subprocess.Popen``, over ``os.posix_spawn``. Importing subprocess (locale, re,
    enum) cost the bridge ~9 ms before it could start the service."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def wait(self) -> int:
        code = self._reap(0)
        assert code is not None
        return code

    def _reap(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere: its code is unknown
                self.returncode = -1
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def terminate(self) -> None:
        self._signal("SIGTERM")

    def kill(self) -> None:
        self._signal("SIGKILL")

    def _signal(self, name: str) -> None:
        import signal

        if self.poll() is None:
            os.kill(self.pid, getattr(signal, name))


# The services this process started, until each is reaped: one that died is polled at the
# next start (the restart of a service gone mid-session), as Popen reaped its dead ones.
_spawned: list[Spawned] = []

# What ``spawn_service`` started: the process, where its stderr goes, and the read end of
# the pipe on which it says that its API listens (closed by ``wait_for_service``).
Started = tuple[Spawned, str, int]


def _inherited_fds(keep: int) -> list[int]:
    """Descriptors above stdio that a child would inherit (ones our own parent passed us
    open): ``subprocess``'s ``close_fds``, which ``os.posix_spawn`` does not do."""
    where = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    found = []
    for name in os.listdir(where):
        fd = int(name)
        if fd > 2 and fd != keep:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the listing's own descriptor, closed by now
                pass
    return found


def spawn_service() -> Started:
    """Start ``browserdeck serve --headless --idle-exit`` (for ``wait_for_service``)."""
    from browserdeck.util import paths

    _spawned[:] = [proc for proc in _spawned if proc.poll() is None]

    err_path = os.path.join(paths.runtime_path(), "mcp-serve.err")
    # `serve --ready-fd`: a byte on this pipe once the API listens, so the wait below is
    # woken then (a poll would add up to its interval to every start).
    ready, told = os.pipe()
    try:
        err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            try:
                # No stdio of ours: the client waits for our pipes to close, and a service
                # holding them would stall it. Nothing else of ours either, but the pipe.
                actions = [
                    (os.POSIX_SPAWN_DUP2, null, 0),
                    (os.POSIX_SPAWN_DUP2, null, 1),
                    (os.POSIX_SPAWN_DUP2, err, 2),
                    *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds(told)),
                ]
                os.set_inheritable(told, True)
                command = [*serve_command(), "--headless", "--idle-exit", "--ready-fd", str(told)]
                # Its own session (setsid): the MCP client's signals and its terminal are
                # not its own, and it outlives this process (see the module docstring).
                pid = os.posix_spawn(
                    command[0], command, os.environ, file_actions=actions, setsid=True
                )
            finally:
                os.close(null)
        finally:
            os.close(err)
    except BaseException:
        os.close(ready)
        raise
    finally:
        # Ours closed: the pipe ends (EOF) when the service closes its end or exits.
        os.close(told)
    _spawned.append(Spawned(pid))
    return _spawned[-1], err_path, ready


def wait_for_service(started: Started, socket_path: str) -> str | None:
    """Wait until the socket of the service ``spawn_service`` started answers; None when
    it does, else why it did not."""
    import select

    proc, err_path, ready = started
    deadline = time.monotonic() + START_TIMEOUT
    told: int | None = ready
    try:
        while time.monotonic() < deadline:
            if _socket_answers(socket_path):
                return None
            if proc.poll() is not None:
                # Another `browserdeck mcp` may have started one at the same moment: its
                # socket wins, ours stopped on the taken port.
                if _socket_answers(socket_path):
                    return None
                with open(err_path, encoding="utf-8", errors="replace") as err:
                    text = err.read().strip()
                return text or f"`browserdeck serve` exited with code {proc.returncode}"
            if told is None:
                # The service is exiting (EOF without its byte): wait for its exit above.
                time.sleep(0.01)
            elif select.select([told], [], [], max(0.0, deadline - time.monotonic()))[0]:
                said = os.read(told, 1)  # its byte, or EOF: the service closed its end
                os.close(told)
                told = None
                if said:
                    if _socket_answers(socket_path):
                        return None
                    return _listening_elsewhere(proc, err_path, socket_path)
        return f"`browserdeck serve` did not answer within {START_TIMEOUT:.0f} s"
    finally:
        if told is not None:
            os.close(told)


def _listening_elsewhere(proc: Spawned, err_path: str, socket_path: str) -> str:
    """Why the service we started is of no use: it listens (its ready byte came), but not
    on ``socket_path``: it could not bind it and serves TCP only (api/server.py
    ``bind_unix``; its stderr says why). Waiting longer would not change that, and it would
    hold the control port and a browser until its idle exit, so it is stopped."""
    proc.terminate()
    try:
        with open(err_path, encoding="utf-8", errors="replace") as err:
            said = "; ".join(err.read().strip().splitlines()[-3:])
    except OSError:
        said = ""
    return (
        f"the service it started listens, but not on its API socket {socket_path}"
        + (f" (it said: {said})" if said else "")
        + f", so it was stopped; its output is in {err_path}. Check that "
        f"{os.path.dirname(socket_path)} is a folder of yours where a socket can be made "
        "and that nothing but browserdeck's socket is at that path (remove it if so), "
        "then start the MCP client again"
    )


def _mcp_path(args: argparse.Namespace) -> str:
    """``/mcp`` with the options that differ from the defaults as its query."""
    from urllib.parse import urlencode

    from browserdeck.mcpserver.limits import DEFAULT_MAX_CHARS

    query = {
        "tools": args.tools if args.tools != "core" else None,
        "profile": args.profile,
        "maxChars": args.max_chars if args.max_chars != DEFAULT_MAX_CHARS else None,
    }
    path = "/mcp"
    if any(v is not None for v in query.values()):
        path += "?" + urlencode({k: v for k, v in query.items() if v is not None})
    return path


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config or args.list_tools:
        return _offline(args)
    if args.url:
        return _bridge_tcp(args.url.rstrip("/"), _mcp_path(args))
    from browserdeck.util import paths

    try:
        socket_path = paths.api_socket_path()
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if socket_path is None:
        from browserdeck.client import discover_url

        return _bridge_tcp(discover_url(), _mcp_path(args))
    # No service: start one before importing the bridge (~45 ms of CPU, http.client),
    # which then loads while the service boots: that boot is what the MCP client waits
    # for.
    answers = _socket_answers(socket_path) or await_takeover(socket_path)
    started = None if answers else spawn_service()
    from browserdeck.cli import bridge

    path = _mcp_path(args)
    if started is not None:
        problem = wait_for_service(started, socket_path)
        if problem is not None:
            print(f"error: could not start browserdeck for MCP: {problem}", file=sys.stderr)
            return 1
    link = bridge.Bridge(
        lambda: bridge.UnixHTTPConnection(socket_path),
        path,
        where=f"the browserdeck service (socket {socket_path})",
        # A service that goes away mid-session is started again, as at the start.
        restart=lambda: start_service(socket_path),
        identity=lambda: _socket_identity(socket_path),
    )
    return bridge.run(link)


def _socket_identity(path: str) -> tuple[int, int] | None:
    """Tells one service from the next: each binds its socket file anew."""
    import os

    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_ctime_ns


def _bridge_tcp(url: str, path: str) -> int:
    """The bridge over a TCP URL: the bearer token goes only to a server proven ours."""
    from urllib.parse import urlsplit

    from browserdeck.cli import bridge
    from browserdeck.client import NOT_OURS_HINT, stored_token, tcp_connection, unproven_server

    problem = unproven_server(url)
    if problem is not None:
        hint = "start browserdeck (`browserdeck serve` or the tray app)" if problem[0] == (
            "not_running") else NOT_OURS_HINT
        print(f"error: {problem[1]}\n  hint: {hint}", file=sys.stderr)
        return 3
    link = bridge.Bridge(
        lambda: tcp_connection(url, bridge.TIMEOUT),
        urlsplit(url).path.rstrip("/") + path,
        headers={"Authorization": f"Bearer {stored_token()}"},
        where=f"the browserdeck service at {url}",
    )
    return bridge.run(link)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from browserdeck.mcpserver.limits import DEFAULT_MAX_CHARS

    p = sub.add_parser(
        "mcp",
        help="MCP server over stdio (a bridge to the running service; on Linux, starts one if "
        "none runs)",
        description="Serve MCP over stdio: a thin bridge to the browserdeck service's /mcp. "
        "When no service runs (Linux), starts a headless one (as `browserdeck serve "
        "--headless`) that stays up for the next MCP client and exits after mcpIdleMinutes "
        "without one.",
    )
    p.add_argument(
        "--tools", default="core", help="core (default), all, or a comma list of tool names"
    )
    p.add_argument(
        "--profile", "-p", help="profile for this server's sessions (default: the default profile)"
    )
    p.add_argument(
        "--url", help="control API URL of the service to use (nothing is started then)"
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        help=f"cap on a tool result's text; beyond it the text goes to a file "
        f"(default {DEFAULT_MAX_CHARS})",
    )
    p.add_argument(
        "--list-tools",
        action="store_true",
        help="print the selected tools and their schema size, then exit",
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print an mcpServers config snippet for MCP clients, then exit",
    )
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="with --print-config: the snippet's transport",
    )
    p.set_defaults(local=cmd_mcp)
