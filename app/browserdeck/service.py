"""The orchestrator: ``Service`` owns every long-lived part and its shutdown path.

It owns the config, the engine, the relays, the managed browsers (one
``profiles.ProfileContext`` per profile) and the control API, starts them in order and
stops them in reverse, on one shutdown path, whichever front-end runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from browserdeck import __version__, artifacts, config, reconfig
from browserdeck.chrome.xfocus import FocusKeeper
from browserdeck.config import Config
from browserdeck.door.addons import Addons
from browserdeck.drivers import creating
from browserdeck.drivers import leases as remote
from browserdeck.engine import pwdriver
from browserdeck.errors import BrowserdeckError, Conflict, Unavailable
from browserdeck.events import ServiceEvents
from browserdeck.profiles import ProfileContext
from browserdeck.secrets import tokens
from browserdeck.session import AgentReleaser
from browserdeck.sessions import Sessions
from browserdeck.util import aio, logsetup, paths
from browserdeck.util.files import write_atomic

if TYPE_CHECKING:
    from browserdeck.engine import Engine

log = logging.getLogger(__name__)


class FrontEnd(Protocol):
    """A way in that the service starts before its engine's import and stops first: the
    control API. The composition root hands the service a factory for one, so the service
    never imports the API (nor the MCP server mounted on it)."""

    port: int

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class Service:
    """Owns config, engine, relays, managed browsers and the control API; one shutdown path."""

    def __init__(
        self,
        *,
        force_headless: bool = False,
        control_port: int | None = None,
        front_end: Callable[[Service, int], FrontEnd] | None = None,
        run_relays: bool = True,
        config_path: Path | None = None,
        prelaunch: bool = False,
    ) -> None:
        self.events = ServiceEvents()
        # Launch the default managed profile's browser at start, once the API listens:
        # a service started for an MCP client will be asked for a page at once.
        self._prelaunch = prelaunch
        self.force_headless = force_headless
        self._control_port_override = control_port
        # The control API, built by the composition root; None: no API socket (the
        # in-process MCP fallback).
        self._front_end = front_end
        # Registered by the composition root; run by stop_all_agents().
        self.agent_releasers: list[AgentReleaser] = []
        # The agent sessions, and what ends with each (tabs it opened; sessions.py).
        self.sessions = Sessions(self)
        # From the composition root: targetId -> the agent holding it (MCP tab claims), and
        # how many MCP sessions are open (what "Stop all agents" would end).
        self.tab_holders: Callable[[str], dict[str, str]] = lambda _profile: {}
        self.agent_sessions: Callable[[], int] = lambda: 0
        self.addons = Addons()  # every call at the front door passes them (deck.Deck)
        # The in-process MCP fallback runs without relays (and without starting the default
        # profile): it must not hold the relay port the tray or `serve` will want.
        self._run_relays = run_relays
        self._config_path = config_path
        self.config: Config = config.default_config()
        self.config_problem: str | None = None
        # The config file as this service last read or wrote it, so a save never
        # overwrites an edit made meanwhile by hand or by another program.
        self._config_on_disk: bytes | None = None
        self.contexts: dict[str, ProfileContext] = {}
        self.engine: Engine | None = None
        # The engine's start, while it runs beside the API's (see start()).
        self._engine_start: asyncio.Task[None] | None = None
        # The engine taking in the prelaunched browser ahead of the first call (tests).
        self.early_attach: asyncio.Task[None] | None = None
        self.api: FrontEnd | None = None
        self.api_token = ""
        self.relay_token = ""
        # Reading them (on a thread) once the API listens: see tokens_read().
        self._tokens: asyncio.Future[None] | None = None
        # start()'s work while it runs: a stop() from elsewhere calls it off.
        self._starting: asyncio.Task[None] | None = None
        self.started = False
        self.stopped = asyncio.Event()
        # Background work the service started; stop() cancels what is still running.
        self.tasks = aio.Tasks()
        # Gives the keyboard focus back when an agent's click activates a browser window.
        self.focus = FocusKeeper()

    @property
    def config_path(self) -> Path:
        return self._config_path or paths.config_file()

    @property
    def control_port(self) -> int:
        if self.api is not None:
            return self.api.port
        return self._control_port_override or self.config.control_port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.control_port}"

    # --- lifecycle -------------------------------------------------------------
    async def start(self) -> None:
        """Start everything; on any failure, stop what did start and re-raise.

        A stop() from another task meanwhile (the tray's Quit) calls the start off: it
        stops what had started, and this raises Unavailable (``stopped_while_starting``).
        Cancelling the caller cancels the start the same way."""
        starting = self._starting = asyncio.ensure_future(self._start())
        try:
            await starting
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if starting.cancelled() and (caller is None or not caller.cancelling()):
                raise Unavailable(
                    "browserdeck was stopped before it had finished starting",
                    hint="start it again when you want it",
                    code="stopped_while_starting",
                ) from None
            raise
        finally:
            if self._starting is starting:
                self._starting = None

    async def _start(self) -> None:
        if self.sessions.closed:  # started again after a stop: no session carries over
            self.sessions = Sessions(self)
        loaded = config.load(self.config_path)
        self.config, self.config_problem = loaded.config, loaded.problem
        self._config_on_disk = self._read_config_bytes()
        self._apply_disk_limits()
        if self.config_problem:
            log.error("%s", self.config_problem)
            self.events.notice.send(
                level="error", title="Config file problem", message=self.config_problem
            )
        self.contexts = {name: ProfileContext(self, p) for name, p in self.config.profiles.items()}
        await asyncio.to_thread(self._clean_leftovers)
        # A save killed just before this start left a temp file too young to remove now
        # (another process may be saving): look again once it is old enough.
        self.tasks.spawn(self._clean_temp_files_later(), name="clean-config-temp-files")
        try:
            # The Playwright driver (unless `serve` spawned it before its imports): node's
            # start runs beside everything below, and the engine's start takes it.
            await pwdriver.start_early()
            default = self.contexts.get(self.config.default_profile)
            # The engine starts once the API listens, its driver already starting. A
            # client that only needs the handshake (MCP `initialize`) is not held up by
            # the engine's import (~90 ms of CPU), nor by Chromium's start (below) on the
            # other core, and a page call waits for the engine (engine_ready).
            listening = asyncio.Event()
            self._engine_start = aio.create_task(
                self._start_engine(listening), name="engine-start"
            )
            # The tokens once it listens: reading them imports keyring (~50 ms of CPU
            # here), and neither the Unix socket's peer check nor MCP's handshake needs
            # them. What does (a token checked on TCP, a profile's start: the relay's and
            # a managed browser's endpoint check them, the engine's) waits for them
            # (tokens_read). Set before the API can let in a request, and not
            # one of self.tasks: a stop cannot cancel the thread, nor must it turn into
            # the start's error.
            self._tokens = aio.create_task(self._read_tokens_aside(listening), name="read-tokens")
            if self._front_end is not None:
                # Built on a thread: building it imports the web stack (uvicorn).
                self.api = await asyncio.to_thread(self._front_end, self, self.control_port)
                await self.api.start()
            listening.set()
            if self._prelaunch and default is not None and default.impl.spec.launches:
                # Chromium starts while the engine is imported and the driver finishes
                # its start; a page route waits for it under the profile's lock, and
                # never for what the first page does not need.
                prelaunch = self.tasks.spawn(
                    self.start_quietly(default), name="prelaunch-default-profile"
                )
                self.early_attach = self.tasks.spawn(
                    self._attach_early(default, prelaunch, self._engine_start),
                    name="attach-default-profile",
                )
            # A TCP client finds the service by the instance file, and then needs the token
            # (which a first run creates only now).
            await self.tokens_read()
            if self.api is not None:
                # On a thread: its two fsyncs (2-6 ms here, more on a busy disk) held this
                # loop, and with it the first request the listening API let in (the
                # `initialize` of the MCP client that started this service).
                # Finished even if cancelled meanwhile: stop() removes it once it is there.
                await aio.finish(
                    asyncio.ensure_future(asyncio.to_thread(self._write_instance_file)),
                    "writing the instance file",
                )
            await asyncio.shield(self._engine_start)
            if self.config.enabled and self._run_relays:
                await self._start_relays()
                if self.config.start_default_profile:
                    default = self.contexts.get(self.config.default_profile)
                    if default is not None and default.impl.spec.launches:
                        self.tasks.spawn(self.start_quietly(default), name="start-default-profile")
            self.started = True
        except BaseException as failure:
            # To its end even if cancelled meanwhile (a signal to `serve`): a stop cut
            # half-way leaves a browser behind, and a start that failed must say why
            # rather than end as if it had been called off. Not called off by that stop
            # (which runs in a task of its own): it would wait for this start to end.
            self._starting = None
            try:
                await aio.finish(asyncio.ensure_future(self.stop()), "stopping a failed start")
            except asyncio.CancelledError:
                if isinstance(failure, asyncio.CancelledError):
                    raise
                if (this := asyncio.current_task()) is not None:
                    this.uncancel()
            raise

    async def _start_engine(self, after: asyncio.Event) -> None:
        """The engine's start, once ``after`` is set (the API listens). Until the driver's
        start begins, stop() may cancel it: nothing of it runs yet."""
        await after.wait()
        await self.tokens_read()  # its connections to a managed browser carry the API token
        # Imported on a thread: this loop serves the API (and connects Chromium) meanwhile.
        # The import holds the GIL, and each time this loop wants it back it waits up to
        # the switch interval (5 ms): the MCP client's `tools/list`, sent right after
        # `initialize`, was answered ~16 ms later with it (bench/boot_timeline.py).
        with _short_switch_interval():
            engine_module = await asyncio.to_thread(
                importlib.import_module, "browserdeck.engine.engine"
            )
        # Set right before the driver's start begins (no await between): stop() reads it
        # to tell whether the start may still be cancelled.
        self.engine = engine_module.Engine(
            events=self.events,
            file_urls_allowed=lambda: self.config.allow_file_urls,
            origin_rules=lambda profile: self.config.origin_rules(profile),
            redact_network=lambda: self.config.redact_network_secrets,
        )
        network = self.engine.network  # a session's routes go with it, its HARs are written
        self.sessions.on_end("network routes and HARs", lambda s, _r: network.end_owner(s.id))
        await self.engine.start()

    def _read_tokens(self) -> None:
        self.api_token = tokens.get_token("api") or ""
        self.relay_token = tokens.get_token("relay") or ""

    async def _read_tokens_aside(self, after: asyncio.Event) -> None:
        await after.wait()
        with _short_switch_interval():  # the loop answers requests meanwhile
            await asyncio.to_thread(self._read_tokens)

    async def tokens_read(self) -> None:
        """Until the API and relay tokens are read (a start reads them once the API
        listens); Unavailable if that failed (the start fails with it, too)."""
        reading = self._tokens
        if reading is None:
            return  # no start yet
        if not reading.done():
            await asyncio.wait([reading])
        if reading.cancelled():  # by stop(): the start that would read them is called off
            raise asyncio.CancelledError
        problem = reading.exception()
        if problem is not None:
            if isinstance(problem, BrowserdeckError):
                raise problem
            raise Unavailable(
                f"browserdeck could not read its API and relay tokens ({problem})",
                hint="see the log (`browserdeck paths` shows where), then start browserdeck again",
            )

    @property
    def engine_starting(self) -> bool:
        """The engine's start is under way (a page call now waits for it)."""
        return self._engine_start is not None and not self._engine_start.done()

    async def engine_ready(self) -> Engine:
        """The engine once its driver runs: the API listens before it does."""
        starting = self._engine_start
        if starting is not None and not starting.done():
            await asyncio.wait([starting])
        why: BaseException | str | None = None
        if starting is not None and starting.done():
            why = "it was cancelled" if starting.cancelled() else starting.exception()
        engine = self.engine
        if engine is None or why is not None:
            raise Unavailable(
                "the browser engine is not running"
                + (f": it did not start ({why})" if why else ""),
                hint="the service is stopping or could not start Playwright; see its log "
                "(`browserdeck paths`) and start browserdeck again",
                code="engine_stopped",
            )
        return engine

    async def _clean_temp_files_later(self) -> None:
        await asyncio.sleep(config.TEMP_FILE_GRACE + 1.0)
        for tmp in await asyncio.to_thread(config.remove_stale_temp_files, self.config_path):
            log.info("removed %s, left by a save that was interrupted", tmp)

    def _clean_leftovers(self) -> None:
        """What an earlier run killed mid-way left: half-written config temp files, and a
        browser still holding a profile (docs/reliability.md), so ``/start`` works at once."""
        for tmp in config.remove_stale_temp_files(self.config_path):
            log.info("removed %s, left by a save that was interrupted", tmp)
        for ctx in self.contexts.values():
            ctx.impl.leftover_check()

    async def _start_relays(self) -> None:
        for ctx in self.contexts.values():
            if ctx.impl.start_with_service():
                try:
                    await ctx.start()
                except BrowserdeckError as exc:
                    # A busy relay port must not keep the API from coming up: report it.
                    ctx.set_state("error", exc.message)
                    log.error("relay for profile %s: %s", ctx.name, exc)
                    self.events.notice.send(
                        level="error", title=f"{ctx.name}: relay not started", message=str(exc)
                    )

    async def _attach_early(
        self, ctx: ProfileContext, launched: asyncio.Task[None], engine_start: asyncio.Task[None]
    ) -> None:
        """The engine's connection to the prelaunched browser and its tabs, made as soon as
        both run, so the first page call does not make it (docs/performance.md).

        Only a browser this service launched itself: an attach-only profile "starts" by
        finding the user's own browser on its port, whose tabs are never taken in unasked.
        Checked again once connected (``keep_if``): the profile may have been stopped, or
        its browser replaced, meanwhile."""
        await asyncio.wait([launched, engine_start])
        engine = self.engine
        if engine is None or engine_start.cancelled() or engine_start.exception() is not None:
            return
        browser = ctx.impl.launched()
        if launched.cancelled() or browser is None or ctx.state != "running":
            return

        def still_ours() -> bool:
            return (
                self.engine is engine
                and ctx.impl.launched() is browser
                and ctx.state == "running"
                and not ctx.stopping
            )

        try:
            await engine.attach(ctx.cdp_url, ctx.headers, still_ours, profile=ctx.name)
        except Exception as exc:  # the first page call connects (and says why) itself
            log.info("early connection to profile %s: %s", ctx.name, exc)

    async def start_quietly(self, ctx: ProfileContext) -> None:
        try:
            await ctx.start()
        except BrowserdeckError as exc:
            log.error("starting %s: %s", ctx.name, exc)

    async def stop(self) -> None:
        """Stop in reverse order of start; every step runs even if an earlier one fails."""
        starting = self._starting
        if starting is not None and starting is not asyncio.current_task():
            # A start still under way is called off: it stops what it had started.
            starting.cancel()
            await asyncio.wait([starting])
        try:
            self.sessions.close()  # sessions end with their browsers, nothing to clean
            await self.tasks.cancel_all()
            if self.api is not None:
                api, self.api = self.api, None
                try:
                    await api.stop()
                finally:
                    self._remove_instance_file()
            await self.addons.stop()  # no call comes any more; the browsers are still up
            # Side by side: the profiles' browsers close (each 0.2-0.5 s of Chromium's own
            # shutdown) while the engine lets go of every connection and stops its driver
            # (the profiles find no engine to drop their connection from).
            starting, self._engine_start = self._engine_start, None
            if starting is not None and self.engine is None:
                # Still waiting for the API, or importing the engine: nothing of it runs
                # yet, and cancelled there it never sets self.engine.
                starting.cancel()
            # Set once the driver's start has begun (and then never cancelled half-way).
            engine, self.engine = self.engine, None
            await asyncio.gather(
                *(_logged(c.stop(), f"stopping profile {c.name}") for c in self.contexts.values()),
                _logged(self._stop_engine(engine, starting), "stopping the engine"),
                _logged(pwdriver.discard_early(), "stopping the unused Playwright driver"),
            )
        finally:
            self.focus.close()
            if self._tokens is not None:
                self._tokens.cancel()  # still waiting for an API that never listened
            self.started = False
            self.stopped.set()

    async def _stop_engine(
        self, engine: Engine | None, starting: asyncio.Task[None] | None
    ) -> None:
        if starting is not None:  # never cancelled half-way: that could leave the driver behind
            if engine is not None and not starting.done():
                # Its driver is killed instead: one that never answers would hold this
                # stop (and `serve`'s exit) until the start's own timeout.
                await engine.abort_start()
            await asyncio.wait([starting])
        if engine is not None:
            await engine.stop()

    def _read_config_bytes(self) -> bytes | None:
        try:
            return self.config_path.read_bytes()
        except OSError:  # gone: saving recreates it and overwrites nothing
            return None

    # --- instance discovery (CLI, second launch) -------------------------------
    def _write_instance_file(self) -> None:
        data: dict[str, Any] = {"url": self.url, "pid": os.getpid(), "version": __version__}
        if self._prelaunch:
            # Started by `browserdeck mcp` (only it prelaunches): the tray app may take
            # it over (gui/takeover.py).
            data["forMcpClients"] = True
        socket_path = getattr(self.api, "socket_path", None)
        if socket_path is not None:
            data["socket"] = str(socket_path)
        write_atomic(paths.instance_file(), json.dumps(data))

    def _remove_instance_file(self) -> None:
        path = paths.instance_file()
        with contextlib.suppress(FileNotFoundError, ValueError, OSError):
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
                path.unlink()

    # --- profiles --------------------------------------------------------------
    def profile(self, name: str | None) -> ProfileContext:
        p = self.config.profile(name)  # raises the precise unknown-profile error
        if p.name not in self.contexts:
            self.contexts[p.name] = ProfileContext(self, p)
        return self.contexts[p.name]

    async def list_profiles(self) -> list[dict[str, Any]]:
        statuses = await asyncio.gather(*(c.status() for c in self.contexts.values()))
        for status in statuses:
            status["default"] = status["profile"] == self.config.default_profile
        return sorted(statuses, key=lambda s: str(s["profile"]))

    async def create_profile(
        self, name: object, *, token: str | None = None, **settings: Any
    ) -> dict[str, Any]:
        """A new profile ``name`` with ``settings``: profile settings by their config key
        (``cdpUrl``), those ``config.CREATE_FIELDS`` declares; ``token``: a browser
        service's, kept in the secret store. Each value is checked as its declaration says
        (``config.parse_profile``)."""
        profile, token = creating.new_profile(self.config, name, token, settings)
        name = profile.name

        def add(c: Config) -> None:
            c.profiles[name] = profile

        if token is not None:
            remote.store_token(name, token)
        try:
            await self.apply_config(config.updated(self.config, add))
        except BaseException:
            if token is not None:
                tokens.delete_token(remote.secret_kind(name))
            raise
        return await self.contexts[name].status()

    async def delete_profile(self, name: str) -> dict[str, Any]:
        ctx = self.profile(name)
        if name == self.config.default_profile:
            raise Conflict(
                f"profile {name!r} is the default profile",
                hint="make another profile the default first (defaultProfile)",
                code="default_profile",
            )
        await ctx.stop()
        removed: str | None = None
        target = ctx.impl.own_data_dir()
        if target is not None and target.exists():
            await asyncio.to_thread(shutil.rmtree, target)
            removed = str(target)

        def drop(c: Config) -> None:
            del c.profiles[name]

        await self.apply_config(config.updated(self.config, drop))
        tokens.delete_token(remote.secret_kind(name))
        return {"deleted": name, "removedData": removed}

    async def apply_config(self, new: Config, *, restart: bool = True) -> reconfig.Applied:
        """Save ``new`` atomically, then restart the running profiles whose settings need it
        (``reconfig.restarts``), or keep them as they are until their next start
        (``restart=False``); the others take the new settings at once."""
        config.check_consistency(new)
        current = self._read_config_bytes()
        if current is not None and current != self._config_on_disk:
            raise Conflict(
                f"{self.config_path} was changed by another program (or by hand) since "
                "browserdeck read it; saving this change would overwrite that edit",
                hint="restart browserdeck to load the edited file (a file that fails to "
                "parse is kept aside and reported), or undo that edit; then try again",
                code="config_changed_on_disk",
            )
        config.save(new, self.config_path)
        self._config_on_disk = self._read_config_bytes()
        old, self.config = self.config, new
        applied = await reconfig.apply_profiles(self, old, new, restart=restart)
        if not new.enabled:
            for ctx in self.contexts.values():
                await ctx.stop()
        if new.enabled and self._run_relays:
            await self._start_relays()
        if self.api is not None and new.control_port != old.control_port:
            self.events.notice.send(
                level="info",
                title="Control port changed",
                message=f"the API moves to port {new.control_port} at the "
                "next start of browserdeck",
            )
        self._apply_disk_limits()
        if self.engine is not None:  # the origin rules hold for open tabs at once
            await self.engine.network.rules_changed()
        self.events.config_changed.send()
        return applied

    async def stop_all_agents(self) -> dict[str, int]:
        """End every agent session as stopped by the user (the tray's one-click switch):
        what each opened closes unless kept, what each reused is given back, pooled
        remote browsers go back, each agent's next call is told why (sessions.py), and
        every tab of the user's Chrome stops being shared."""
        return await self.sessions.stop_all(self.agent_releasers)

    def _apply_disk_limits(self) -> None:
        artifacts.configure(
            max_mb=self.config.artifacts_max_mb, max_age_days=self.config.artifacts_max_age_days
        )
        logsetup.set_max_mb(self.config.log_max_mb)

    async def update_settings(self, change: Callable[[Config], None]) -> None:
        await self.apply_config(config.updated(self.config, change))


_short_switches = [0, 0.0]  # how many hold it short, and the interval before the first


@contextlib.contextmanager
def _short_switch_interval() -> Iterator[None]:
    """A 0.5 ms GIL switch interval while held; the one before comes back when the last
    holder lets go (two services' starts in one process may overlap)."""
    if _short_switches[0] == 0:
        _short_switches[1] = sys.getswitchinterval()
        sys.setswitchinterval(min(_short_switches[1], 0.0005))
    _short_switches[0] += 1
    try:
        yield
    finally:
        _short_switches[0] -= 1
        if _short_switches[0] == 0:
            sys.setswitchinterval(_short_switches[1])


async def _logged(step: Awaitable[Any], what: str) -> None:
    """One step of the stop: a failure is logged and the other steps still run."""
    try:
        await step
    except Exception:
        log.exception(what)
