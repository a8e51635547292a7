"""Launch a managed Chrome/Chromium and return once it is ready.

``launch(opts)`` checks the port and the profile lock, bootstraps and decorates the
profile, spawns the browser in its own process group and returns once its CDP endpoint
answers. The parts live beside it: the command line and environment (``flags.py``), the
profile lock and orphans (``profile_lock.py``), the spawn and its pipe fds (``spawn.py``),
the running browser's output, readiness and stop (``process.py``). This module is also the
launch's face for the drivers: the names they use are re-exported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path

from browserdeck.chrome.cdp import CDPClient
from browserdeck.chrome.decorate import decorate_profile
from browserdeck.chrome.endpoint import fetch_version, normalize_ws_url
from browserdeck.chrome.executables import HEADLESS_SHELL, BrowserExecutable, find_browser
from browserdeck.chrome.flags import LaunchOptions, child_env, chrome_args, has_display
from browserdeck.chrome.gateway import CdpGateway
from browserdeck.chrome.pipe import BrowserPipe
from browserdeck.chrome.process import ChromeProcess, describe_exit
from browserdeck.chrome.procs import kill_port_owner, listening_pids, port_in_use, process_cmdline
from browserdeck.chrome.profile_lock import (
    claim_profile,
    close_orphan,
    profile_lock_owner,
    profile_locked,
)
from browserdeck.chrome.spawn import spawn
from browserdeck.errors import RESET_PROFILE, Conflict, Hint, Unavailable

__all__ = [
    "BrowserOnPort",
    "ChromeProcess",
    "LaunchOptions",
    "close_orphan",
    "describe_exit",
    "has_display",
    "is_cdp_ready",
    "kill_port_owner",
    "launch",
]

log = logging.getLogger(__name__)


class BrowserOnPort(Conflict):
    """A browser's DevTools endpoint already listens on the profile's CDP port (a leftover,
    or another in-process MCP server's browser): callers that know more say so by type."""


async def _port_conflict(port: int, profile: str) -> Conflict:
    try:
        version = await fetch_version(f"http://127.0.0.1:{port}", timeout=1.0)
    except Unavailable:
        version = None
    if version is not None:
        browser = version.get("Browser") or "unknown browser"
        return BrowserOnPort(
            f"cannot start profile '{profile}': a browser ({browser}) already answers on "
            f"127.0.0.1:{port}, its CDP port, probably one left over from an earlier run",
            hint=Hint(
                "reset the profile ({reset}) to kill it; or turn on attachOnly to use that "
                "browser as it is",
                reset=RESET_PROFILE.of(profile=profile),
            ),
            code="port_in_use",
        )
    pids = await asyncio.to_thread(listening_pids, port)
    owners = ", ".join(f"pid {pid} ({_process_name(pid)})" for pid in pids)
    return Conflict(
        f"cannot start profile '{profile}': another program{f' ({owners})' if owners else ''} "
        f"is already listening on 127.0.0.1:{port}, the profile's CDP port, and it is not "
        "a browser",
        hint="stop that program, or give the profile another CDP port (Settings › Profiles; "
        "cdpPort in the config file)",
        code="port_in_use",
    )


def _process_name(pid: int) -> str:
    argv = process_cmdline(pid)
    return os.path.basename(argv[0]) if argv else "?"


def _prepare(opts: LaunchOptions) -> tuple[BrowserExecutable, list[str], dict[str, str]]:
    """The blocking part of a launch (file system only), run in a worker thread."""
    executable = find_browser(opts.executable, headless=opts.headless)
    udd = Path(opts.user_data_dir)
    udd.mkdir(parents=True, exist_ok=True, mode=0o700)
    owner = profile_lock_owner(udd)
    if owner is not None:
        raise profile_locked(opts.profile, owner, udd)
    decorate_profile(udd, opts.profile, opts.color)
    return executable, chrome_args(opts), child_env(opts)


async def launch(opts: LaunchOptions) -> ChromeProcess:
    """Start a managed browser and return once its CDP endpoint is ready.

    With ``opts.pipe`` (everywhere but Windows) the browser gets no DevTools port: it
    talks over fds 3/4, and our CDP endpoint (chrome/gateway.py) listens on
    ``opts.port`` behind the API token. The endpoint binds first, so a taken port fails
    before any browser starts.

    Raises ``Conflict`` (``port_in_use``, ``profile_locked``), ``Unavailable``
    (``no_browser``, ``launch_failed`` with the exit code and the browser's last
    output) or ``InvalidInput`` (a bad colour).
    """
    gateway: CdpGateway | None = None
    if opts.pipe:
        gateway = CdpGateway(
            port=opts.port,
            token=opts.token,
            allow_file_urls=opts.allow_file_urls,
            upload_roots=opts.upload_roots,
            profile=opts.profile,
        )
        try:
            await gateway.bind()
        except Conflict:
            raise await _port_conflict(opts.port, opts.profile) from None
    elif await asyncio.to_thread(port_in_use, opts.port):
        raise await _port_conflict(opts.port, opts.profile)
    try:
        executable, args, env = await asyncio.to_thread(_prepare, opts)
        proc, pipe_ends = spawn(executable, args, env, pipe=opts.pipe, profile=opts.profile)
    except BaseException:
        if gateway is not None:
            await asyncio.shield(gateway.stop())
        raise
    chrome = ChromeProcess(proc, executable, opts, args)
    try:
        if executable.kind == HEADLESS_SHELL:
            # Inside the try: a launch that lost the race for the profile stops its shell.
            try:
                claim_profile(Path(opts.user_data_dir), proc.pid, opts.profile)
            except OSError as exc:
                log.warning("could not write the profile lock of %s: %s", opts.user_data_dir, exc)
        if pipe_ends is not None and gateway is not None:
            chrome.pipe = BrowserPipe(
                pipe_ends.parent_write, pipe_ends.parent_read, label=f"browser of {opts.profile!r}"
            )
            chrome.gateway = gateway
            await chrome.wait_pipe_ready(opts.ready_timeout)
        else:
            await chrome.wait_ready(opts.ready_timeout)
    except BaseException:
        chrome.kill_now()
        # Reaped before the error is raised: nothing of the failed launch is left running.
        with contextlib.suppress(BaseException):
            await asyncio.shield(chrome.wait_exit_for(5.0))
        if chrome.pipe is not None:
            chrome.pipe.close("the launch failed")
        elif pipe_ends is not None:
            pipe_ends.close_parent_ends()
        if gateway is not None:
            await asyncio.shield(gateway.stop())
        raise
    log.info(
        "started %s (%s) for profile %r: pid %d, %s",
        executable.path,
        chrome.version.get("Browser", "?"),
        opts.profile,
        chrome.pid,
        chrome.cdp_url,
    )
    return chrome


async def is_cdp_ready(
    cdp_url: str, timeout: float = 2.0, headers: dict[str, str] | None = None
) -> bool:
    """``/json/version`` answers and its browser WebSocket accepts a handshake."""
    try:
        async with asyncio.timeout(timeout):
            version = await fetch_version(cdp_url, timeout=timeout, headers=headers)
            ws_url = version.get("webSocketDebuggerUrl")
            if not isinstance(ws_url, str) or not ws_url:
                return False
            client = await CDPClient.connect(
                normalize_ws_url(ws_url, cdp_url), headers=headers, timeout=timeout
            )
            await client.close()
            return True
    except (TimeoutError, Unavailable):
        return False
