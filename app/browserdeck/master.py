"""The composition root: builds the service with its ways in and wires them together.

Everything below this module is built without knowing what sits on top of it: the
service (profiles, browsers, relays, engine) never imports the API, the API never
imports MCP. Here they meet: the service gets a factory for its control API, the
API gets MCP mounted at ``/mcp``, and the tray's "stop all agents" gets a way to end
MCP sessions and release their tab claims. ``browserdeck serve`` runs here (``serve``),
and the tray app builds its service here (tests/test_layers.py keeps it on top).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browserdeck import __version__
from browserdeck.errors import BrowserdeckError
from browserdeck.util import heap

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from browserdeck.api.server import ApiServer
    from browserdeck.door.activity import ActivityLog
    from browserdeck.door.approval.addon import Approval
    from browserdeck.door.logins import AskUser
    from browserdeck.engine.origin_guard import OriginGuard
    from browserdeck.service import Service
    from browserdeck.session import EndReason

log = logging.getLogger(__name__)

# The API and MCP are imported where they are built, not here: `serve` starts the
# Playwright driver and Chromium first and imports the web stack beside them.


def control_api(
    service: Service,
    port: int,
    *,
    build_routes_now: bool = True,
    on_listening: Callable[[], None] | None = None,
) -> ApiServer:
    """The control API on ``port`` with MCP over streamable HTTP at ``/mcp``.

    ``/mcp`` answers as soon as the API listens, before FastAPI is built (api/staged.py):
    a service started for an MCP client is waited for until it does, and
    ``on_listening`` tells that client so.
    """
    from browserdeck.api.server import ApiServer
    from browserdeck.mcpserver import http as mcp_http

    return ApiServer(
        service,
        port=port,
        routes=lambda deck: {mcp_http.PATH: mcp_http.McpHttpEndpoint(deck)},
        build_routes_now=build_routes_now,
        # End MCP streams first: an open event stream would otherwise hold uvicorn's
        # graceful shutdown for its whole timeout.
        before_stop=mcp_http.shutdown,
        on_listening=on_listening,
    )


async def release_agents(service: Service, reason: EndReason) -> int:
    """End the ``/mcp`` sessions ``Sessions`` does not know yet (no call made; each told
    ``reason`` on its next request) and drop every tab claim left (the tabs are given
    back); how many sessions ended."""
    from browserdeck.api.server import ApiServer
    from browserdeck.mcpserver import claims
    from browserdeck.mcpserver import http as mcp_http

    api = service.api
    endpoint = mcp_http.endpoint_of(api.app) if isinstance(api, ApiServer) else None
    ended = await endpoint.end_all_sessions(reason) if endpoint is not None else 0
    claims.release_all()
    return ended


def build_service(
    *,
    force_headless: bool = False,
    control_port: int | None = None,
    serve_api: bool = True,
    run_relays: bool = True,
    config_path: Path | None = None,
    prelaunch: bool = False,
    on_listening: Callable[[], None] | None = None,
    ask_user: AskUser | None = None,
) -> Service:
    """The service as ``browserdeck serve`` and the tray app run it (not started yet).

    ``ask_user``: how to ask the person at this machine a yes/no question (the tray's
    dialog); without it, what needs their yes (logins loaded into their own Chrome) is
    refused, unless they said yes at a terminal (the CLI's prompt)."""
    from functools import partial

    from browserdeck.door.logins import AskBeforeLoginsChange
    from browserdeck.service import Service

    # A service started for MCP clients builds the other routes only if one is used.
    front_end = partial(control_api, build_routes_now=not prelaunch, on_listening=on_listening)
    service = Service(
        force_headless=force_headless,
        control_port=control_port,
        front_end=front_end if serve_api else None,
        run_relays=run_relays,
        config_path=config_path,
        prelaunch=prelaunch,
    )
    service.agent_releasers.append(lambda reason: release_agents(service, reason))
    service.tab_holders = tab_holders
    service.agent_sessions = lambda: agent_sessions(service)
    service.addons.add(activity_log(service))
    # Where agents may go is checked first (a refused navigation asks nobody); then the
    # person decides before anything is recorded as run: approval, the logins' question,
    # then the take-over and the recorder (a held call's screenshot before is taken once
    # it may run).
    service.addons.add(origin_guard(service))
    service.addons.add(approval(service))
    service.addons.add(AskBeforeLoginsChange(ask_user))
    add_recording(service)
    return service


def approval(service: Service) -> Approval:
    """The addon that asks the person before an agent's risky action (docs/approval.md);
    after the activity log, which so notes the call's element before it is asked."""
    from browserdeck.door.approval.addon import Approval
    from browserdeck.door.approval.asking import Approvals

    return Approval(Approvals(lambda: service.config, service.events), lambda: service.sessions)


def add_recording(service: Service) -> None:
    """The take-over (agents wait while the user has a browser) and the session recorder,
    after the activity log and in this order: a held call is recorded as it runs, its
    screenshot before taken once it may run (recording/)."""
    from browserdeck.recording.recorder import Recorder
    from browserdeck.recording.takeover import TakeOvers

    settings = lambda: service.config  # noqa: E731 (read at each call: settings change)
    registry = lambda: service.sessions  # noqa: E731 (made anew when the service restarts)
    service.addons.add(TakeOvers(service.events, settings, sessions=registry))
    service.addons.add(Recorder(service.events, settings, sessions=registry))


def agent_sessions(service: Service) -> int:
    """How many MCP sessions are open on the service's ``/mcp``."""
    from browserdeck.api.server import ApiServer
    from browserdeck.mcpserver import http as mcp_http

    api = service.api
    endpoint = mcp_http.endpoint_of(api.app) if isinstance(api, ApiServer) else None
    return endpoint.session_count() if endpoint is not None else 0


def origin_guard(service: Service) -> OriginGuard:
    """Navigations and new tabs to an origin the settings refuse are refused at the door."""
    from browserdeck.engine.origin_guard import OriginGuard

    return OriginGuard(lambda: service.config)


def activity_log(service: Service) -> ActivityLog:
    """The first addon: one activity entry per call (``api_call`` events, for the tray),
    with the status the API would answer, whichever way the call came in."""
    from browserdeck.api.errors import status_of
    from browserdeck.door.activity import ActivityLog

    return ActivityLog(lambda entry: service.events.api_call.send(entry=entry), status_of)


def mcp_client_config() -> str:
    """The ``mcpServers`` JSON that runs browserdeck's MCP server (stdio), for the clipboard."""
    import json

    if getattr(sys, "frozen", False):
        # In the PyInstaller bundle the executable *is* browserdeck: `<exe> mcp`.
        data: dict[str, Any] = {
            "mcpServers": {"browserdeck": {"command": sys.executable, "args": ["mcp"]}}
        }
    else:
        from browserdeck.mcpserver import client_config_snippet

        data = client_config_snippet()
    return json.dumps(data, indent=2)


def tab_holders(profile: str) -> dict[str, str]:
    """targetId -> the agent holding that tab (the MCP servers' tab claims)."""
    from browserdeck.mcpserver import claims

    try:
        return {c.target_id: c.label for c in claims.read_claims(profile)}
    except (OSError, ValueError):  # an unreadable claims file: nobody shown, nothing fails
        log.debug("reading tab claims", exc_info=True)
        return {}


# --- `browserdeck serve` (and the tray without a display) ------------------------


async def _exit_when_idle(service: Any, stop: Any, seconds: float) -> None:
    """``serve --idle-exit``: set ``stop`` once nothing has used the API for ``seconds``
    (negative: the mcpIdleMinutes setting, read each time; 0 never)."""
    import asyncio

    while not stop.is_set():
        limit = seconds if seconds >= 0 else service.config.mcp_idle_minutes * 60.0
        activity = service.api.activity if service.api is not None else None
        if limit > 0 and activity is not None and activity.idle_seconds() >= limit:
            print("browserdeck: no MCP client for a while; stopping", file=sys.stderr)
            stop.set()
            return
        await asyncio.sleep(min(5.0, max(limit / 4, 0.2)) if limit > 0 else 5.0)


def _tell_when_listening(fd: int) -> Callable[[], None]:
    """``serve --ready-fd FD``: a byte on that pipe once the API listens, then it is
    closed. ``browserdeck mcp`` waits on it for the service it started (cli/mcp.py); a
    service that stops before closes it by exiting, which the bridge sees as well."""
    import os

    # Ours alone: a browser or driver holding it would keep the bridge from seeing us exit.
    os.set_inheritable(fd, False)

    def tell() -> None:
        nonlocal fd
        if fd < 0:
            return
        try:
            os.write(fd, b"1")
        except OSError:  # the bridge went away meanwhile: nobody is waiting
            pass
        finally:
            os.close(fd)
            fd = -1

    return tell


async def serve(
    *, headless: bool, port: int | None, idle_exit: float | None = None,
    ready_fd: int | None = None,
) -> int:
    """``browserdeck serve``: a process's whole life (it ends right after this returns)."""
    import logging

    # The first mark of the boot timeline (bench/boot_timeline.py): imports are done.
    logging.getLogger(__name__).info("browserdeck %s starting", __version__)
    from browserdeck.engine import pwdriver

    # Node's start runs on the core that the imports below leave idle (engine/pwdriver.py).
    await pwdriver.start_early()
    try:
        return await _serve(headless=headless, port=port, idle_exit=idle_exit,
                            ready_fd=ready_fd)
    finally:
        await pwdriver.discard_early()  # the engine's start did not take it


async def _serve(
    *, headless: bool, port: int | None, idle_exit: float | None, ready_fd: int | None
) -> int:
    import asyncio
    import contextlib
    import gc
    import signal

    # Starting imports the service, the engine, the MCP SDK and the web stack: objects
    # that live as long as the process. The cyclic collector's passes over them while
    # they are made are CPU that an MCP client waits for, so it is off until
    # the service runs; heap.settle then freezes them (later collections skip them too).
    collecting = gc.isenabled()  # an in-process caller (a test) may have it off already
    gc.disable()
    try:
        # A service started for MCP clients (--idle-exit) launches its browser at once.
        service = build_service(
            force_headless=headless,
            control_port=port,
            prelaunch=idle_exit is not None,
            on_listening=_tell_when_listening(ready_fd) if ready_fd is not None else None,
        )
    except BaseException:
        if collecting:
            gc.enable()
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # SIGHUP too: closing the terminal that runs `serve` must not orphan the browsers.
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)):
        with contextlib.suppress(NotImplementedError):  # Windows
            loop.add_signal_handler(sig, stop.set)
    try:
        if not await _started(service, stop):
            # A signal during the start: it was called off, and stopped what had started.
            print("browserdeck stopped before it had finished starting", file=sys.stderr)
            _exit_without_collecting()
            return 0
    except BrowserdeckError as exc:
        print(
            f"error: {exc.message}"
            + (f"\n  hint: {exc.hint_for('cli')}" if exc.what_next else ""),
            file=sys.stderr,
        )
        return 1
    else:
        # Frozen before the collector is on again: its first pass would otherwise walk
        # every object the start made (~100,000, ~30 ms) just as the first page call
        # waits for the engine. A big snapshot's temporaries no longer set off
        # collections either (util/heap.py). Not on a failed start: nothing is kept then.
        heap.settle()
    finally:
        if collecting:
            gc.enable()
    print(f"browserdeck {__version__} serving {service.url} (Ctrl+C to stop)", flush=True)
    if idle_exit is not None:
        service.tasks.spawn(_exit_when_idle(service, stop, idle_exit), name="idle-exit")
    if service.config_problem:
        print(f"warning: {service.config_problem}", file=sys.stderr)
    try:
        await stop.wait()
    finally:
        await service.stop()
        _exit_without_collecting()
    return 0


async def _started(service: Service, stop: asyncio.Event) -> bool:
    """``service.start()``, unless ``stop`` is set first (SIGTERM while the browser or the
    driver is still starting): then the start is cancelled, which stops what it started,
    and False. A start's own failure is raised."""
    import asyncio

    starting = asyncio.ensure_future(service.start())
    signalled = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([starting, signalled], return_when=asyncio.FIRST_COMPLETED)
    finally:
        signalled.cancel()
        if not starting.done():
            starting.cancel()
            await asyncio.wait([starting])
    if starting.cancelled():
        return False
    starting.result()
    return True


def _exit_without_collecting() -> None:
    """For a process that ends right after: make its teardown skip the garbage collector.

    The interpreter's teardown runs full collections over every object of the loaded
    libraries (Playwright, the MCP SDK, pydantic, FastAPI); that took 0.4-3 s after the
    service had already stopped, so a stopped service looked alive (the MCP harness, a
    script waiting for the process, a restart reusing the ports). Frozen objects are
    left to the OS; files and sockets are already closed by ``Service.stop``, and atexit
    handlers (logging's flush) still run.
    """
    import gc

    gc.freeze()
