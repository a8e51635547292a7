"""The managed driver: browserdeck launches its own Chromium on the profile's CDP port.

It keeps the browser's process (``chrome``), the task watching it exit and the note
that a restart made tab ids from before name nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from browserdeck.chrome import launcher, procs
from browserdeck.chrome.xfocus import WindowOwner
from browserdeck.drivers.base import ProfileDriver
from browserdeck.errors import START_OF, BrowserdeckError, Conflict, Hint, Unavailable
from browserdeck.util import aio, paths

if TYPE_CHECKING:
    from browserdeck.door.call import Caller
    from browserdeck.drivers.host import ProfileHost

log = logging.getLogger(__name__)

# The detail of a managed profile whose browser exited cleanly without being asked to.
CLOSED_BY_USER = "the browser quit"  # exit code 0: its window closed, its menu, or SIGTERM


def runs_headless(ctx: ProfileHost) -> tuple[bool, str | None]:
    """Whether the profile's browser runs headless, and why when it is forced."""
    if ctx.host.force_headless:
        return True, "forced by --headless"
    if not launcher.has_display():
        return True, "no display: DISPLAY and WAYLAND_DISPLAY are unset"
    return ctx.config.is_headless(ctx.profile), None


def _wait_released(pgid: int, port: int, within: float) -> None:
    """Until a killed browser's process group is gone and its CDP port is free again."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and (
        procs.process_group_alive(pgid) or procs.port_in_use(port)
    ):
        time.sleep(0.02)


class Driver(ProfileDriver):
    name = "managed"

    def __init__(self, ctx: ProfileHost) -> None:
        super().__init__(ctx)
        self.chrome: launcher.ChromeProcess | None = None
        self.watch: asyncio.Task[None] | None = None
        # Why tab ids from before name nothing: the browser was restarted after it went.
        self.restart_note: str | None = None

    async def start(self, caller: Caller | None = None) -> None:
        ctx = self.ctx
        p = ctx.profile
        if self.chrome is not None and self.chrome.alive():
            if await launcher.is_cdp_ready(ctx.cdp_url, timeout=2.0, headers=ctx.headers):
                return
            # Alive by our records but not answering: it is dying (a crash a few ms ago
            # that the exit watcher has not reaped yet). Wait for the exit and relaunch,
            # rather than answer "started" with a dead pid.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.chrome.wait_exit(), 5.0)
            if self.chrome.alive():
                return  # alive and hung: the status says "unreachable"
            await ctx.drop_connections()
            log.warning("profile %s: the browser exited just before /start; relaunching", p.name)
        assert p.cdp_port is not None
        if not ctx.config.may_launch(p):
            if await launcher.is_cdp_ready(ctx.cdp_url):
                ctx.set_state("running", "attached to an existing browser (attach-only)")
                return
            raise Unavailable(
                f"profile {p.name!r} is attach-only and nothing answers at {ctx.cdp_url}",
                hint="start that browser with --remote-debugging-port="
                f"{p.cdp_port}, or turn attachOnly off so browserdeck launches it",
                code="attach_failed",
            )
        headless, _why = runs_headless(ctx)
        if self.chrome is not None and not ctx.stopping:
            # A browser that exited without a stop, and this request got here before the
            # exit watcher (it waits for this lock): record the exit now, as the watcher
            # would (closed or crashed, with its notice), or the user is never told and
            # a window the user closed reads as a crash.
            dead = self.chrome
            with contextlib.suppress(TimeoutError):
                # alive() is already false for a zombie the exit thread has not reaped.
                await asyncio.wait_for(dead.wait_exit(), 5.0)
            code = dead.returncode()
            await self._exited(dead, -9 if code is None else code)
            # Its helpers (same process group) die a moment after it and may hold the
            # CDP port until then: "port in use" would be a false answer.
            await asyncio.to_thread(_wait_released, dead.pid, p.cdp_port, 10.0)
        crashed = ctx.state == "crashed"
        closed = ctx.state == "stopped" and ctx.detail == CLOSED_BY_USER
        ctx.set_state("starting", None)
        try:
            self.chrome = await launcher.launch(
                launcher.LaunchOptions(
                    profile=p.name,
                    port=p.cdp_port,
                    user_data_dir=ctx.config.user_data_dir_of(p),
                    color=p.color,
                    headless=headless,
                    no_sandbox=ctx.config.no_sandbox,
                    executable=ctx.config.executable_path or os.environ.get("BROWSERDECK_CHROME"),
                    token=lambda: ctx.host.api_token,
                    allow_file_urls=lambda: ctx.config.allow_file_urls,
                    upload_roots=lambda: ctx.config.upload_roots,
                )
            )
        except BrowserdeckError as exc:
            ctx.set_state("error", exc.message)
            ctx.host.events.notice.send(
                level="error", title=f"{p.name}: browser did not start", message=exc.message
            )
            raise
        ctx.stopping = False
        self.watch = aio.create_task(self._watch_exit(self.chrome), name=f"watch-chrome-{p.name}")
        ctx.set_state("running", None)
        if crashed or closed:
            # Requests restart a crashed browser on demand; a tab id from before then names
            # nothing, and "it may have been closed" would hide why.
            self.restart_note = (
                "the browser "
                + ("quit" if closed else "crashed or was killed")
                + f" and was restarted at {time.strftime('%H:%M:%S')}, so tabs from before are gone"
            )


    async def _watch_exit(self, chrome: launcher.ChromeProcess) -> None:
        ctx = self.ctx
        code = await chrome.wait_exit()
        # Under the lock: a request that restarts the browser meanwhile must neither be
        # marked "crashed" afterwards nor lose its new connections to this cleanup. Such a
        # request records the exit itself (start), so ``chrome`` is no longer ours.
        async with ctx.lock:
            if ctx.stopping or chrome is not self.chrome:
                return
            await self._exited(chrome, code)


    async def _exited(self, chrome: launcher.ChromeProcess, code: int) -> None:
        """``chrome`` exited without being asked to (under the lock): say so, once.

        A clean exit (code 0: the user closed its last window or quit it from its menu)
        is a stop, not a crash (docs/gui.md); a signal or an error code is a crash.
        """
        ctx = self.ctx
        self.chrome = None
        # Reaps what is left and frees the CDP endpoint's port for a restart.
        await chrome.stop()
        clean = code == 0
        if clean:
            ctx.set_state("stopped", CLOSED_BY_USER)
        else:
            ctx.set_state("crashed", f"the browser {launcher.describe_exit(code)}")
        # Connections to the dead browser must not be taken for ones to a new browser on
        # the same port.
        await ctx.drop_connections()
        if clean:
            # Exit code 0 is its last window closed, its menu's Exit, or a SIGTERM (kill):
            # the code does not say which, so neither do we (a headless one has no window).
            how = (
                "It was told to quit by another program (it has no window)."
                if chrome.headless
                else "Its last window was closed, or another program told it to quit."
            )
            ctx.host.events.notice.send(
                level="info",
                title=f"{ctx.name}: browser quit",
                message=f"{how} It starts again when an agent needs it, or from the tray menu.",
            )
        else:
            ctx.host.events.notice.send(
                level="error",
                title=f"{ctx.name}: browser crashed",
                message=f"The browser {launcher.describe_exit(code)}. Its tabs are gone. "
                "Start it again from the tray menu; an agent's next request also restarts it.",
            )


    async def stop(self) -> None:
        if self.chrome is not None:
            chrome, self.chrome = self.chrome, None
            await chrome.stop()
        await aio.cancel_and_wait(self.watch)
        self.watch = None
        self.restart_note = None

    async def ensure(self, caller: Caller | None = None) -> str:
        ctx = self.ctx
        if self.chrome is None or not self.chrome.alive():
            if ctx.config.may_launch(ctx.profile):
                await ctx.start(caller)
            elif not await launcher.is_cdp_ready(ctx.cdp_url):
                await ctx.start(caller)  # raises the precise attach-only error
        return ctx.cdp_url

    def headers(self) -> dict[str, str]:
        # The API token, for the managed browser's CDP endpoint (none when attach-only).
        return self.chrome.auth_headers() if self.chrome is not None else {}

    def cdp_port(self) -> int | None:
        return self.ctx.profile.cdp_port

    def window_owner(self) -> WindowOwner | None:
        ctx = self.ctx
        if self.chrome is not None:
            return None if self.chrome.headless else WindowOwner(pid=self.chrome.pid)
        # Attach-only: a browser the user started (no pid of ours): any Chrome window.
        return None if ctx.config.may_launch(ctx.profile) else WindowOwner(chrome_class=True)

    async def status(self, out: dict[str, Any]) -> bool | None:
        ctx, p = self.ctx, self.ctx.profile
        headless, why = runs_headless(ctx)
        out["headless"] = self.chrome.headless if self.chrome else headless
        out["headlessReason"] = why
        out["userDataDir"] = str(ctx.config.user_data_dir_of(p))
        out["attachOnly"] = not ctx.config.may_launch(p)
        if self.chrome is not None and self.chrome.alive():
            out["pid"] = self.chrome.pid
            out["executable"] = self.chrome.executable.path
        return None

    def not_running_hint(self) -> str | Hint:
        return Hint("start it ({start})", start=START_OF.of(profile=self.ctx.name))

    def must_be_started(self) -> bool:
        return self.chrome is None or not self.chrome.alive()

    def launched(self) -> object | None:
        return self.chrome if self.ctx.config.may_launch(self.ctx.profile) else None

    def gone_note(self, caller: Caller | None = None) -> str | None:
        return self.restart_note

    async def reset(self) -> dict[str, Any]:
        """Kill whatever holds this profile's CDP port (an orphaned browser), then report."""
        ctx = self.ctx
        async with ctx.lock:
            await ctx.stop_locked()
            assert ctx.profile.cdp_port is not None
            await asyncio.to_thread(self._refuse_non_browser_owner, ctx.profile.cdp_port)
            killed = await asyncio.to_thread(launcher.kill_port_owner, ctx.profile.cdp_port)
            orphan = await asyncio.to_thread(
                launcher.close_orphan, ctx.config.user_data_dir_of(ctx.profile)
            )
            if orphan is not None and orphan not in killed:
                killed.append(orphan)
        return {"profile": ctx.name, "port": ctx.profile.cdp_port, "killedPids": killed}

    def _refuse_non_browser_owner(self, port: int) -> None:
        ctx = self.ctx
        """reset-profile clears orphaned browsers; any other program on the port is not ours."""
        holders = [pid for pid in procs.listening_pids(port) if pid != os.getpid()]
        strangers = [pid for pid in holders if not procs.owned_by_us(pid)]
        # A listener whose process is hidden from us (not root) is another user's.
        foreign = [
            lst for lst in procs.loopback_listeners(port) or [] if lst.uid != os.getuid()
        ]
        if strangers or foreign:
            # Another user's process: never killed, whatever it is.
            who = f"pid {strangers[0]}" if strangers else "a process"
            raise Conflict(
                f"profile {ctx.name!r}: port {port} is held by {who} of another user; "
                "reset-profile only kills this user's orphaned browsers",
                hint="give the profile another cdpPort (Settings), or ask that user to stop it",
                code="port_held_by_other_user",
            )
        others = [pid for pid in holders if not procs.is_chrome_process(pid)]
        if others:
            argv = procs.process_cmdline(others[0]) or ["?"]
            raise Conflict(
                f"profile {ctx.name!r}: port {port} is held by pid {others[0]} "
                f"({os.path.basename(argv[0])}), which is not a browser; reset-profile only "
                "kills orphaned browsers",
                hint="stop that program yourself, or give the profile another cdpPort",
                code="port_held_by_other_program",
            )


    async def stop_agents(self, spare: set[str]) -> tuple[int, int]:
        ctx = self.ctx
        wanted = ctx.agent_tabs - spare
        ctx.agent_tabs = set()
        open_now = {t.target_id for t in await ctx.peek_tabs() or []}
        closed = 0
        for target_id in wanted & open_now:
            try:
                await ctx.close_tab(target_id)
                closed += 1
            except BrowserdeckError as exc:
                log.info("stop all agents: %s", exc)
        return closed, 0

    def own_data_dir(self) -> Path | None:
        # Only our own directory is ever removed, never a user-supplied userDataDir.
        return None if self.ctx.profile.user_data_dir else paths.profile_dir(self.ctx.name)

    def leftover_check(self) -> None:
        ctx = self.ctx
        if ctx.config.may_launch(ctx.profile):
            try:
                launcher.close_orphan(ctx.config.user_data_dir_of(ctx.profile))
            except OSError as exc:
                log.warning("could not close a leftover browser of profile %s: %s", ctx.name, exc)
