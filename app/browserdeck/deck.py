"""The front door: what a call into browserdeck does, whoever makes it.

API routes, MCP tools (at ``/mcp`` in the service), the CLI (through the API) and the
tray app call a ``Deck`` in-process. Each call is a typed request (a tab's in
``engine/options.py``, the service's in ``door/admin.py``) with a typed answer
(``results.py``), made by a ``Caller`` passed along, and passes the service's addons
(``door/addons.py``), the activity log first. Errors are the core's
``BrowserdeckError`` s, raised as they are; each way in says them in its own terms.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck import driverspecs, reconfig
from browserdeck import results as r
from browserdeck.deck_logins import LoginCalls
from browserdeck.deck_recording import RecordingCalls
from browserdeck.door import admin
from browserdeck.door.addons import Addons
from browserdeck.door.call import Call, Caller, TabInfo
from browserdeck.door.views import Overview, Pairing, ProfileEntry, Screenshot
from browserdeck.engine import options as o
from browserdeck.engine.network import Scope
from browserdeck.errors import (
    SNAPSHOT,
    TABS,
    BrowserdeckError,
    Conflict,
    Hint,
    InvalidInput,
    Unavailable,
)
from browserdeck.results import AgentsStopped
from browserdeck.secrets import redact
from browserdeck.session import STOPPED_BY_USER, EndReason, SessionEnded, client_label
from browserdeck.tabs import QUIET_CLIENTS, Tab

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.door.request import Request, TabRequest
    from browserdeck.engine import Engine
    from browserdeck.events import ServiceEvents
    from browserdeck.profiles import ProfileContext
    from browserdeck.service import Service
    from browserdeck.sessions import Sessions

__all__ = ["AgentsStopped", "Caller", "Deck", "Overview", "Pairing", "ProfileEntry", "Screenshot"]

A = TypeVar("A")


@dataclass
class BrowserTarget:
    """The profile's browser is up (started on demand for managed profiles) and the tab resolved."""

    ctx: ProfileContext
    cdp_url: str
    target_id: str
    headers: dict[str, str]


class Deck(RecordingCalls, LoginCalls):
    """The service's calls, typed, for every way in, each through the service's addons.

    The tray app holds only a ``Deck``: what it shows comes from the reads for views
    (``overview``, ``settings``, ``pairing``, ``api_token``, ``events``, ``peek_tabs``)
    and what it does from the calls, never from the ``Service``'s own attributes.
    """

    def __init__(self, service: Service) -> None:
        self.service = service

    @property
    def addons(self) -> Addons:
        """The addons every call passes (the composition root adds them to the service)."""
        return self.service.addons

    # --- reads for views (no call: no addon sees them) --------------------------------
    @property
    def started(self) -> bool:
        """The service runs (its API answers; the engine may still be starting)."""
        return self.service.started

    @property
    def events(self) -> ServiceEvents:
        """The core's signals (profile states, tabs, calls, notices), to subscribe to."""
        return self.service.events

    async def stopped(self) -> None:
        """Return once the service has stopped."""
        await self.service.stopped.wait()

    def overview(self) -> Overview:
        service, cfg = self.service, self.service.config
        return Overview(
            started=service.started,
            api_url=service.url,
            control_port=service.control_port,
            default_profile=cfg.default_profile,
            profiles={
                name: ProfileEntry(name, p.driver, p.color)
                for name, p in sorted(cfg.profiles.items())
            },
            config_problem=service.config_problem,
        )

    def settings(self) -> Config:
        """The settings the service runs with (the settings dialog edits a copy)."""
        return self.service.config

    def api_token(self) -> str:
        """The API token, for the user who copies it to a client ("Copy API token")."""
        return self.service.api_token

    def pairing(self) -> Pairing:
        cfg, token = self.service.config, self.service.relay_token
        relayed = [p for p in cfg.profiles.values() if driverspecs.spec_of(p.driver).port == "relay"]
        if not relayed:
            return Pairing(cfg.relay_port, token, cfg.profiles[cfg.default_profile].color, None)
        first = relayed[0]
        return Pairing(cfg.relay_port_of(first), token, first.color, first.name)

    def engine_status(self) -> r.EngineStatus:
        engine = self.service.engine
        if engine is None:
            status = r.EngineStatus(state="stopped", driver_pid=None, restarts=0, last_failure=None)
        else:
            status = r.EngineStatus.model_validate(engine.status())
        # The API listens before the engine is imported and while its driver starts:
        # "stopped" then would say the engine is down when a page call would wait for it.
        if status.state == "stopped" and self.service.engine_starting:
            status.state = "starting"
        return status

    async def peek_tabs(self, caller: Caller, profile: str | None) -> list[Tab]:
        """The profile's tabs if its browser answers now; never starts a browser (a view's
        refresh racing the user's Stop must not relaunch the browser just stopped)."""
        return redact.value(await self.service.profile(profile).peek_tabs(caller) or [])

    def agents_present(self) -> bool:
        """Whether "Stop all agents" would stop anything (sessions, agents' tabs, shares)."""
        if self.service.agent_sessions() or self.service.sessions.live:
            return True
        for ctx in self.service.contexts.values():
            if ctx.agent_tabs or self.service.tab_holders(ctx.name) or ctx.impl.agents_hold():
                return True
        return False

    def cdp_credentials(self, profile: str | None) -> dict[str, str]:
        """What a CDP client of the profile's endpoint must send: that endpoint's own
        ``Authorization`` (the API token to a managed browser's gateway, the relay token to
        the relay), and nothing to an endpoint browserdeck does not serve (attach-only,
        remote): whoever listens there is not ours to hand a token."""
        headers = self.service.profile(profile).headers
        return {k: v for k, v in headers.items() if k.lower() == "authorization"}

    def tab_holders(self, profile: str) -> dict[str, str]:
        """targetId -> the agent session that holds the tab, for views."""
        return {**self.service.tab_holders(profile), **self.service.sessions.holders(profile)}

    @property
    def sessions(self) -> Sessions:
        """The service's agent sessions (sessions.py): how an MCP session begins and ends."""
        return self.service.sessions

    def kept_tabs(self, profile: str) -> set[str]:
        """The tabs of ``profile`` the user marked to outlive the agent that opened them."""
        return self.service.sessions.kept(self.service.profile(profile).name)

    @property
    def engine(self) -> Engine:
        """The engine, for a call that has waited for it (``Service.engine_ready``)."""
        engine = self.service.engine
        assert engine is not None, "the engine is read only after engine_ready()"
        return engine

    # --- the way every call goes ---------------------------------------------------
    async def _through(
        self,
        caller: Caller,
        request: Request[A],
        perform: Callable[[Call[A], ProfileContext | None], Awaitable[A]],
        *,
        profile: str | None = None,
        scoped: bool = True,
        data: dict[str, Any] | None = None,
    ) -> A:
        """``request`` through the addons; ``scoped``: on ``profile``; ``data``: in call.data."""
        call = Call(caller, request, profile)
        call.data.update(data or {})
        ctx: ProfileContext | None = None

        async def prepare() -> None:
            nonlocal ctx
            if scoped:
                ctx = self._context(call)

        # A tab's title or address may quote a secret.
        return await self.addons.run(call, lambda: redact.awaited(perform(call, ctx)), prepare)

    async def _on_profile(
        self,
        caller: Caller,
        request: Request[A],
        profile: str | None,
        perform: Callable[[Call[A], ProfileContext], Awaitable[A]],
    ) -> A:
        async def on(call: Call[A], ctx: ProfileContext | None) -> A:
            assert ctx is not None
            return await perform(call, ctx)

        return await self._through(caller, request, on, profile=profile)

    def _context(self, call: Call[Any]) -> ProfileContext:
        """The call's profile (default: defaultProfile), named on the call; a call of an
        agent session that has ended is refused here, saying why (sessions.py)."""
        caller = call.caller
        session = (caller.session or "").strip()[:200]
        if session:
            self.service.sessions.touch(session, label=client_label(caller.client, session))
        ctx = self.service.profile(call.profile)
        call.profile, call.driver = ctx.name, ctx.driver
        return ctx

    async def run(
        self,
        caller: Caller,
        request: Request[A],
        perform: Callable[[], Awaitable[A]],
        *,
        profile: str | None = None,
        target: str | None = None,
    ) -> A:
        """A way in's own operation, through the addons like any call (MCP's run-code);
        with ``target``, on that tab (addons see it and may make engine calls there)."""
        call = Call(caller, request, profile)

        async def prepare() -> None:
            ctx = self._context(call)
            if target is not None:
                self._bind(call, await self._target(call, ctx, target))

        return await self.addons.run(call, perform, prepare)

    def _bind(self, call: Call[Any], t: BrowserTarget) -> None:
        """The call is on tab ``t``: its element, URL and engine calls reach that tab."""
        settings = self.service.config
        call.tab = TabInfo(t.ctx.name, t.target_id)
        engine, where = self.engine, (t.cdp_url, t.target_id, t.headers)
        call.bind(
            element=lambda ref, detail: engine.element(*where, ref, detail=detail),
            url=lambda: engine.page_url(*where),
            aside=lambda side: engine.run(*where, side.prepared(settings)),
        )

    # --- the service and its profiles ----------------------------------------------
    async def status(self, caller: Caller, profile: str | None) -> r.Status:
        async def perform(call: Call[r.Status], ctx: ProfileContext) -> r.Status:
            out = await ctx.status()
            out["defaultProfile"] = self.service.config.default_profile
            out["configProblem"] = self.service.config_problem
            out["engine"] = self.engine_status()
            return r.Status.model_validate(out)

        return await self._on_profile(caller, admin.Status(), profile, perform)

    async def profiles(self, caller: Caller) -> r.Profiles:
        async def perform(call: Call[r.Profiles], _: ProfileContext | None) -> r.Profiles:
            return r.Profiles(
                profiles=[
                    r.ProfileStatus.model_validate(s) for s in await self.service.list_profiles()
                ],
                default_profile=self.service.config.default_profile,
            )

        return await self._through(caller, admin.ListProfiles(), perform, scoped=False)

    async def start(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        async def perform(call: Call[r.ProfileStatus], ctx: ProfileContext) -> r.ProfileStatus:
            return r.ProfileStatus.model_validate(await ctx.start(caller))

        return await self._on_profile(caller, admin.Start(), profile, perform)

    async def stop(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        async def perform(call: Call[r.ProfileStatus], ctx: ProfileContext) -> r.ProfileStatus:
            return r.ProfileStatus.model_validate(await ctx.stop(caller))

        return await self._on_profile(caller, admin.Stop(), profile, perform)

    async def reset_profile(self, caller: Caller, profile: str | None) -> r.ProfileReset:
        async def perform(call: Call[r.ProfileReset], ctx: ProfileContext) -> r.ProfileReset:
            return r.ProfileReset.model_validate(await ctx.reset())

        return await self._on_profile(caller, admin.ResetProfile(), profile, perform)

    async def create_profile(self, caller: Caller, request: admin.CreateProfile) -> r.ProfileStatus:
        async def perform(call: Call[r.ProfileStatus], _: ProfileContext | None) -> r.ProfileStatus:
            try:
                made = await self.service.create_profile(
                    request.name, token=request.token, **request.settings()
                )
            except InvalidInput as exc:
                if exc.code != "port_collision":
                    raise
                # The request is fine; another profile holds the port (a second extension
                # profile on the relay port): a conflict with what exists.
                raise Conflict(exc.message, hint=exc.hint, code=exc.code) from None
            return r.ProfileStatus.model_validate(made)

        return await self._through(caller, request, perform, profile=request.name, scoped=False)

    async def delete_profile(self, caller: Caller, name: str) -> r.ProfileDeleted:
        async def perform(call: Call[r.ProfileDeleted], _: ProfileContext) -> r.ProfileDeleted:
            return r.ProfileDeleted.model_validate(await self.service.delete_profile(name))

        return await self._on_profile(caller, admin.DeleteProfile(name=name), name, perform)

    async def store_token(self, caller: Caller, profile: str | None, token: str) -> r.TokenStored:
        """Keep a remote profile's service token in the secret store; its browsers
        connected with the old token are released."""

        async def perform(call: Call[r.TokenStored], ctx: ProfileContext) -> r.TokenStored:
            from browserdeck.drivers import leases as remote

            if not ctx.impl.takes_token:
                # A well-formed request this profile's kind does not take: a conflict.
                raise Conflict(
                    f"profile {ctx.name!r} is not a browser-service profile (a ws:// or wss:// "
                    "cdpUrl)",
                    hint="a token is only stored for remote profiles on a service endpoint",
                    code="not_remote",
                )
            where = remote.store_token(ctx.name, token)
            await ctx.stop()
            return r.TokenStored(profile=ctx.name, stored="keyring" if where == "keyring" else "file")

        return await self._on_profile(caller, admin.StoreToken(token=token), profile, perform)

    async def release_session(self, caller: Caller, session: str) -> r.SessionReleased:
        """Give back the pooled remote browsers of one agent session. A session that holds
        none (every MCP session, as it ends, asks) releases nothing and is no call."""
        agent = session[:200]
        held = [c for c in self.service.contexts.values() if c.impl.holds_session(agent)]
        if not held:
            return r.SessionReleased(session=session, released=[])

        async def perform(call: Call[r.SessionReleased], _: ProfileContext | None) -> r.SessionReleased:
            released = [c.name for c in held if await c.impl.release_session(agent)]
            return r.SessionReleased(session=session, released=released)

        request = admin.ReleaseSession(session=session)
        return await self._through(caller, request, perform, scoped=False)

    async def stop_all_agents(self, caller: Caller) -> AgentsStopped:
        """End every agent session and close or unshare every tab agents hold."""

        async def perform(call: Call[AgentsStopped], _: ProfileContext | None) -> AgentsStopped:
            done = await self.service.stop_all_agents()
            return AgentsStopped(
                done["sessions"],
                done["closedTabs"],
                done["unsharedTabs"],
                given_back_tabs=done["givenBackTabs"],
                kept_tabs=done["keptTabs"],
            )

        return await self._through(caller, admin.StopAllAgents(), perform, scoped=False)

    async def end_session(
        self, caller: Caller, session: str, reason: EndReason = STOPPED_BY_USER
    ) -> SessionEnded | None:
        """End one agent session (None: no such session is live), as ``stop_all_agents``
        ends each: the tabs it opened close unless kept, those it reused are given back."""

        async def perform(call: Call[SessionEnded | None], _: ProfileContext | None) -> SessionEnded | None:
            return await self.service.sessions.end(session, reason)

        request = admin.EndSession(session=session)
        return await self._through(caller, request, perform, scoped=False)

    async def refuse(self, caller: Caller, asked: str, error: BrowserdeckError) -> None:
        """Refuse ``asked`` with ``error`` before it runs (an ended MCP session's call,
        which never reaches the door otherwise): raises ``error`` once the addons saw it."""

        async def perform(call: Call[None], _: ProfileContext | None) -> None:
            raise error

        await self._through(caller, admin.Refused(kind=asked), perform, scoped=False)

    async def restarts(self, new: Config) -> list[reconfig.Restart]:
        """The running browsers saving ``new`` would restart (asked before saving)."""
        return await reconfig.restarts_with_tabs(self.service, new)

    async def apply_config(
        self, caller: Caller, new: Config, deleted: Sequence[str] = (), *, restart: bool = True
    ) -> reconfig.Applied:
        """Save ``new`` and apply it live (``restart=False``: a browser that needs a restart
        runs as it is until its next start); the profiles in ``deleted`` (left out of
        ``new``) are deleted with their browser data (``reconfig.save``)."""

        async def perform(call: Call[reconfig.Applied], _: ProfileContext | None) -> reconfig.Applied:
            return await reconfig.save(self.service, new, deleted, restart=restart)

        request = reconfig.ApplyConfig(config=new, deleted=list(deleted), restart=restart)
        return await self._through(caller, request, perform, scoped=False)

    # --- tabs --------------------------------------------------------------------
    async def tabs(self, caller: Caller, profile: str | None) -> r.TabList:
        async def perform(call: Call[r.TabList], ctx: ProfileContext) -> r.TabList:
            return r.TabList(profile=ctx.name, tabs=await ctx.list_tabs(caller))

        return await self._on_profile(caller, admin.ListTabs(), profile, perform)

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> Tab:
        async def perform(call: Call[Tab], ctx: ProfileContext) -> Tab:
            label = f"{caller.client} · {ctx.name}" if caller.is_agent and caller.client else None
            with self.service.focus.hold(ctx.impl.window_owner(), label=label):  # chrome/xfocus.py
                tab = await ctx.open_tab(url, caller)
            call.tab = TabInfo(ctx.name, tab.target_id)
            ctx.note_opened(caller.key, tab.target_id)
            if caller.session:  # it closes when the session ends (sessions.py)
                self.service.sessions.opened(caller.session, ctx.name, tab.target_id)
            elif caller.is_agent:
                ctx.agent_tabs.add(tab.target_id)  # "Stop all agents" closes it
            return tab

        return await self._on_profile(caller, admin.OpenTab(url=url), profile, perform)

    async def focus_tab(self, caller: Caller, profile: str | None, target: str) -> r.Focused:
        async def perform(call: Call[r.Focused], ctx: ProfileContext) -> r.Focused:
            tab = await ctx.focus_tab(target, caller)
            call.tab = TabInfo(ctx.name, tab.target_id)
            return r.Focused.model_validate({"focused": tab.target_id, **tab.to_json()})

        return await self._on_profile(caller, admin.FocusTab(target_id=target), profile, perform)

    async def keep_tab(self, caller: Caller, profile: str | None, target: str, keep: bool) -> r.Kept:
        """Mark a tab (an open one's id or unique prefix) to stay open when the agent
        session that opened it ends, or unmark it."""

        async def perform(call: Call[r.Kept], ctx: ProfileContext) -> r.Kept:
            target_id = await ctx.resolve_target(target, caller)
            call.tab = TabInfo(ctx.name, target_id)
            self.service.sessions.keep(ctx.name, target_id, keep)
            return r.Kept(target_id=target_id, kept=keep)

        request = admin.KeepTab(target_id=target, keep=keep)
        return await self._on_profile(caller, request, profile, perform)

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> r.Closed:
        async def perform(call: Call[r.Closed], ctx: ProfileContext) -> r.Closed:
            closed = await ctx.close_tab(target, caller)
            call.tab = TabInfo(ctx.name, closed)
            return r.Closed(closed=closed)

        return await self._on_profile(caller, admin.CloseTab(target_id=target), profile, perform)

    async def _target(self, call: Call[Any], ctx: ProfileContext, target_id: str | None) -> BrowserTarget:
        """The profile's browser, started if need be, and the tab: ``target_id`` (or a
        unique prefix), else the caller's last used tab."""
        caller = call.caller
        if caller.client in QUIET_CLIENTS:
            # The panel only watches: it never starts a browser on demand. Its capture of a
            # tab whose browser the user just closed must not relaunch that browser (and, in
            # the moment before the exit watcher runs, swallow the "browser closed" notice).
            ctx.refuse_if_not_running()
        cdp_url = await ctx.ensure_browser(caller)
        # The engine may still be starting beside the API, and the browser above started
        # meanwhile.
        engine = await self.service.engine_ready()
        if target_id and engine.holds(cdp_url, target_id):
            # A full id of a tab the engine holds open (an MCP session's tab, an agent's
            # next call on the same tab): it exists, so no listing of the browser's tabs
            # (an HTTP request and a browser round trip before every call).
            resolved = target_id
        else:
            resolved = await ctx.resolve_target(target_id, caller)
        ctx.note_used(caller.key, resolved)
        if caller.session:
            self.service.sessions.used(caller.session, ctx.name, resolved)
        return BrowserTarget(ctx, cdp_url, resolved, ctx.headers)

    # --- one tab -----------------------------------------------------------------
    async def on_tab(
        self,
        caller: Caller,
        request: TabRequest[A],
        *,
        profile: str | None = None,
        target: str | None = None,
    ) -> A:
        """Carry out ``request`` on a tab: the one it names, else ``target`` (an id or a
        unique prefix), else the caller's last used tab; the answer its model declares."""
        call = Call(caller, request, profile)
        t: BrowserTarget | None = None
        named = request.named_tab() or target

        async def prepare() -> None:
            nonlocal t
            # The settings' policies first: a refused URL or file starts no browser.
            call.request = request.prepared(self.service.config)
            ctx = self._context(call)
            try:
                t = await self._target(call, ctx, named)
            except BrowserdeckError as exc:
                raise await self._explained(call, ctx, exc, named) from None
            self._bind(call, t)

        async def perform() -> A:
            assert t is not None
            request: TabRequest[A] = call.request  # type: ignore[assignment]
            # An action may raise the browser's window (a popup, a focus()): the user keeps
            # theirs (chrome/xfocus.py).
            owner = t.ctx.impl.window_owner() if request.raises_window else None
            scope = Scope(t.ctx.name, caller.key)  # whose routes the tab takes (network.py)
            try:
                with self.service.focus.hold(owner):
                    answer = await self.engine.run(
                        t.cdp_url, t.target_id, t.headers, request, scope=scope
                    )
            except BrowserdeckError as exc:
                raise await self._explained(call, t.ctx, exc, named) from None
            if request.changes_tabs or getattr(answer, "closed", None) or getattr(
                answer, "navigated", None
            ):
                self.service.events.tabs_changed.send(profile=t.ctx.name)
            return answer

        return await self.addons.run(call, perform, prepare)

    async def _explained(
        self, call: Call[Any], ctx: ProfileContext, exc: BrowserdeckError, named: str | None
    ) -> BrowserdeckError:
        """``exc``, or what it means for the caller: the whole browser went (stopped,
        crashed, its extension disconnected), or the tab ``named`` is no longer listed."""
        gone = await self._browser_gone(call.caller, ctx, exc)
        if gone is not None:
            return gone
        if exc.code == "tab_closed" and named:
            # A held tab is not looked up first (``_target``), so a tab closed a moment ago
            # reaches the engine: say it as the lookup would ("tab_not_found", which MCP
            # reads as "this session's tab is gone") once it is unlisted. Only "not listed
            # any more" replaces the engine's error: an ambiguous prefix or an unreachable
            # browser says nothing about this tab.
            try:
                with contextlib.suppress(Conflict, Unavailable):
                    await ctx.resolve_target(named, call.caller)
            except BrowserdeckError as lookup:
                return lookup
        return exc

    async def _browser_gone(
        self, caller: Caller, ctx: ProfileContext, exc: BrowserdeckError
    ) -> BrowserdeckError | None:
        """ "The tab was closed" (or "navigated": its context went) is all the engine sees
        when the browser was stopped, crashed or lost its extension: say which, since every
        tab and ref went with it."""
        if exc.code not in ("tab_closed", "browser_gone", "navigated"):
            return None
        try:
            why = await ctx.why_gone(caller)
        except BrowserdeckError:
            return None
        if why is None:
            return None
        return Unavailable(
            why,
            hint=ctx.restart_hint()
            + Hint(
                ", then list tabs ({tabs}) and take a new snapshot ({snapshot}): tabs and refs "
                "from before are gone",
                tabs=TABS,
                snapshot=SNAPSHOT,
            ),
            code="browser_gone",
        )

    async def screenshot(
        self, caller: Caller, profile: str | None, target_id: str | None, *, labels: bool
    ) -> Screenshot:
        """The tab's viewport as a PNG, through the same engine call agents make; each
        label says its role and name (the engine reads them from the ref table it drew
        the labels from)."""
        # inline: the image comes back in the answer; a file per auto-refresh would pile
        # up in the state dir.
        request = o.ScreenshotOptions(labels=labels, type="png", inline=True)
        shot = await self.on_tab(caller, request, profile=profile, target=target_id)
        return Screenshot(
            png=base64.b64decode(shot.base64 or ""),
            target_id=shot.target_id or target_id or "",
            url=shot.url or "",
            width=shot.width,
            labels=list(shot.labels or []),
            unplaced=list(shot.unplaced or []),
        )
