"""The typed front door: what a call into browserdeck does, whoever makes it.

API routes, MCP tools (served at ``/mcp`` inside the service) and the GUI call a
``Deck`` in-process; nothing in-process goes through HTTP to itself. Requests are the
engine's pydantic models (``engine/options.py``), the same ones the API's OpenAPI
spec publishes; answers are typed too (``results.py``; a tab is ``tabs.Tab``), and the
API's ``response_model`` s publish them. Errors are the core's ``BrowserdeckError`` s,
raised as they are: the API maps them to a status at its edge (``api/errors.py``),
MCP to a tool error; their hints are said in the caller's words there.

A ``Caller`` says who calls (the default tab is per caller; a pooled remote profile
gives each agent session its own browser) and collects what the call did for the
activity log (``Caller.note``): the API reports it with the HTTP call, MCP with the
tool call.

Why one module: it is the one class every way in calls, and each method is one
operation (resolve the profile and tab, apply the policies, call the engine, note what
was done); the typed overloads of ``on_tab`` repeat its signature once per answer.
Splitting the operations across files would scatter what one call does. The few reads
a view makes (``overview``, ``settings``, ``pairing``, ``api_token``, ``events``) sit
beside them so the tray app needs no other door.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import BaseModel, TypeAdapter, ValidationError

from browserdeck import confine, driverspecs, reconfig, remote, urls
from browserdeck import results as r
from browserdeck.engine import options as o
from browserdeck.errors import (
    SNAPSHOT,
    START,
    TABS,
    BrowserdeckError,
    Conflict,
    Hint,
    InvalidInput,
    Unavailable,
)
from browserdeck.events import CallNotes
from browserdeck.session import STOPPED_BY_USER, EndReason, SessionEnded, client_label
from browserdeck.tabs import QUIET_CLIENTS, Tab

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.engine import Engine
    from browserdeck.engine.state import RefInfo
    from browserdeck.events import ServiceEvents
    from browserdeck.profiles import ProfileContext
    from browserdeck.service import Service

M = TypeVar("M", bound=BaseModel)

# Clients that are the user, not an agent: the tray panel and the command line.
USER_CLIENTS = frozenset({"browserdeck-gui", "browserdeck-cli"})

# An engine call on one tab: (cdp_url, target_id, headers, options) -> its answer.
EngineCall = Callable[[str, str, dict[str, str], Any], Awaitable[dict[str, Any]]]

# The requests the engine answers with one call on the tab, and that call's name.
_PLAIN_CALLS: dict[type[Any], str] = {
    o.SnapshotOptions: "snapshot",
    o.ConsoleOptions: "console",
    o.ScreenshotOptions: "screenshot",
    o.OfflineOptions: "set_offline",
    o.PdfOptions: "pdf",
    o.DialogOptions: "arm_dialog",
}

# A request about one tab: the engine's option models.
TabRequest = (
    o.SnapshotOptions
    | o.AnyAct
    | o.NavigateOptions
    | o.ScreenshotOptions
    | o.ConsoleOptions
    | o.OfflineOptions
    | o.PdfOptions
    | o.FileChooserOptions
    | o.DialogOptions
)


@functools.cache
def _act_adapter() -> TypeAdapter[o.AnyAct]:
    # Built by the first act, not at import: it builds the validator of every act model,
    # which a service answering its first MCP client does not need yet (issue 14).
    return TypeAdapter(o.Act)


def build(model: type[M], values: dict[str, Any], *, hint: str) -> M:
    """``model`` from plain values (camelCase or snake_case names); None means "not given".

    Invalid values are an ``InvalidInput`` naming each field, with the caller's ``hint``
    (where the fields are documented for that caller).
    """
    try:
        return model.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise _invalid(exc, hint) from None


def build_act(values: dict[str, Any], *, hint: str) -> o.AnyAct:
    """The act its ``kind`` names, from plain values (as ``build``)."""
    try:
        return _act_adapter().validate_python({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        raise _invalid(exc, hint) from None


def _invalid(exc: ValidationError, hint: str) -> InvalidInput:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return InvalidInput(f"invalid request: {problems}", hint=hint)


@dataclass
class Caller:
    """Who calls, and what the call did (for the activity log)."""

    client: str | None = None  # X-Browserdeck-Client: "browserdeck-cli", "claude via MCP"
    session: str | None = None  # X-Browserdeck-Session: one agent session
    notes: CallNotes = field(default_factory=CallNotes)

    @property
    def key(self) -> str | None:
        """Whose default tab: the session if there is one (the CLI sends ``cli:<name>``),
        else the client."""
        return self.session or self.client

    @property
    def is_agent(self) -> bool:
        return self.client not in USER_CLIENTS

    def note(self, said: CallNotes) -> None:
        """Say what this call did; the fields ``said`` leaves None keep what was noted
        before. Never secrets: typed text goes in as its length only."""
        for f in dataclasses.fields(said):
            value = getattr(said, f.name)
            if value is not None:
                setattr(self.notes, f.name, value)


@dataclass
class BrowserTarget:
    """The profile's browser is up (started on demand for managed profiles) and the tab resolved."""

    ctx: ProfileContext
    cdp_url: str
    target_id: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Screenshot:
    """A PNG of a tab's viewport, the image agents get, with the labels drawn into it."""

    png: bytes
    target_id: str
    url: str
    width: int  # CSS pixels the image covers (the labels' boxes are in these)
    labels: list[r.ShotLabel]  # each with its role and name
    unplaced: list[str]  # refs in view whose badge found no room on the image


@dataclass(frozen=True)
class AgentsStopped:
    """What "Stop all agents" did."""

    sessions: int  # agent sessions ended
    closed_tabs: int  # tabs agents had opened, closed
    unshared_tabs: int  # tabs of the user's Chrome no longer shared
    given_back_tabs: int = 0  # tabs agents reused (did not open), left open and unlabelled
    kept_tabs: int = 0  # tabs agents opened that the user marked keep, left open


@dataclass(frozen=True)
class ProfileEntry:
    """A configured profile as a view lists it (from the settings; no browser asked)."""

    name: str
    driver: str
    color: str


@dataclass(frozen=True)
class Overview:
    """The service as a view shows it without asking any browser: whether it runs, where
    its API listens, the profiles it is configured with and a problem with its config."""

    started: bool
    api_url: str  # the control API (MCP is at api_url + "/mcp")
    control_port: int
    default_profile: str
    profiles: dict[str, ProfileEntry]  # by name, in name order
    config_problem: str | None  # the config file was kept aside: why (the service runs on defaults)


@dataclass(frozen=True)
class Pairing:
    """What the extension's pairing page needs: the relay of the first profile that uses
    one (or the default relay port), its token, and a colour for the page."""

    relay_port: int
    token: str
    color: str
    profile: str | None  # the profile paired; None when no profile uses the relay yet


class Deck:
    """The service's operations, typed, for every way in.

    The tray app holds only a ``Deck``: what it shows comes from the reads below
    (``overview``, ``settings``, ``pairing``, ``api_token``, ``events``) and what it
    does from the operations, never from the ``Service``'s own attributes.
    """

    def __init__(self, service: Service) -> None:
        self.service = service

    # --- reads for views (no I/O) ----------------------------------------------------
    @property
    def started(self) -> bool:
        """The service runs (its API answers; the engine may still be starting)."""
        return self.service.started

    @property
    def events(self) -> ServiceEvents:
        """The core's signals (profile states, tabs, API calls, notices), to subscribe to."""
        return self.service.events

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

    @property
    def engine(self) -> Engine:
        """The engine, for a call that has been through ``target()`` (which waits for it:
        the API listens before the engine is even imported; issue 14)."""
        engine = self.service.engine
        assert engine is not None, "the engine is read only after target() waited for it"
        return engine

    # --- profiles ----------------------------------------------------------------
    def profile(self, caller: Caller, name: str | None) -> ProfileContext:
        """The profile (default: defaultProfile), with the caller's agent session set."""
        session = (caller.session or "").strip()[:200]
        label = f"{(caller.client or 'client')[:60]} {session[:24]}"
        # A contextvar in the caller's task: every ProfileContext method this call runs
        # sees it. Set even when absent: an in-process call runs in its caller's context.
        remote.CURRENT_AGENT.set((session, label) if session else None)
        if session:  # a call of an ended session is refused here, saying why
            self.service.sessions.touch(session, label=client_label(caller.client, session))
        return self.service.profile(name)

    def engine_status(self) -> r.EngineStatus:
        engine = self.service.engine
        if engine is None:
            status = r.EngineStatus(state="stopped", driver_pid=None, restarts=0, last_failure=None)
        else:
            status = r.EngineStatus.model_validate(engine.status())
        # The API listens before the engine is imported and while its driver starts
        # (issue 14): "stopped" then would say the engine is down when a page call would
        # in fact wait for it.
        if status.state == "stopped" and self.service.engine_starting:
            status.state = "starting"
        return status

    async def status(self, caller: Caller, profile: str | None) -> r.Status:
        out = await self.profile(caller, profile).status()
        out["defaultProfile"] = self.service.config.default_profile
        out["configProblem"] = self.service.config_problem
        out["engine"] = self.engine_status()
        return r.Status.model_validate(out)

    async def profiles(self) -> r.Profiles:
        return r.Profiles(
            profiles=[r.ProfileStatus.model_validate(s) for s in await self.service.list_profiles()],
            default_profile=self.service.config.default_profile,
        )

    async def start(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        return r.ProfileStatus.model_validate(await self.profile(caller, profile).start())

    async def stop(self, caller: Caller, profile: str | None) -> r.ProfileStatus:
        return r.ProfileStatus.model_validate(await self.profile(caller, profile).stop())

    async def stop_all_agents(self) -> AgentsStopped:
        """End every agent session as stopped by the user (sessions.py): the tabs they
        opened close unless kept, the tabs they reused are given back."""
        done = await self.service.stop_all_agents()
        return AgentsStopped(
            done["sessions"],
            done["closedTabs"],
            done["unsharedTabs"],
            given_back_tabs=done["givenBackTabs"],
            kept_tabs=done["keptTabs"],
        )

    async def end_session(self, session: str, reason: EndReason = STOPPED_BY_USER) -> SessionEnded | None:
        """End one agent session (None: no such session is live), as ``stop_all_agents``
        ends each."""
        return await self.service.sessions.end(session, reason)

    async def restarts(self, new: Config) -> list[reconfig.Restart]:
        """The running browsers saving ``new`` would restart (asked before saving)."""
        return await reconfig.restarts_with_tabs(self.service, new)

    async def apply_config(
        self, new: Config, deleted: Sequence[str] = (), *, restart: bool = True
    ) -> reconfig.Applied:
        """Save ``new`` and apply it live (``restart=False``: a browser that needs a restart
        runs as it is until its next start); the profiles in ``deleted`` (left out of
        ``new``) are deleted with their browser data (``reconfig.save``)."""
        return await reconfig.save(self.service, new, deleted, restart=restart)

    async def release_session(self, session: str) -> list[str]:
        """Give back the pooled remote browsers of one agent session; the profiles released."""
        released = []
        for ctx in list(self.service.contexts.values()):
            if ctx.remote is not None and await ctx.remote.release(session[:200]):
                released.append(ctx.name)
        return released

    # --- tabs --------------------------------------------------------------------
    async def tabs(self, caller: Caller, profile: str | None) -> r.TabList:
        ctx = self.profile(caller, profile)
        return r.TabList(profile=ctx.name, tabs=await ctx.list_tabs())

    async def peek_tabs(self, caller: Caller, profile: str | None) -> list[Tab]:
        """The profile's tabs if its browser answers now; never starts a browser.

        For views that only watch: a refresh racing the user's Stop must not relaunch
        the browser just stopped (``tabs`` starts a stopped managed browser on demand).
        """
        return await self.profile(caller, profile).peek_tabs() or []

    def agents_present(self) -> bool:
        """Whether "Stop all agents" would stop anything (sessions, agents' tabs, shares)."""
        if self.service.agent_sessions() or self.service.sessions.live:
            return True
        for ctx in self.service.contexts.values():
            shared = ctx.relay is not None and bool(ctx.relay.relay.shared_tabs())
            pooled = ctx.remote is not None and bool(ctx.remote.leases)
            if ctx.agent_tabs or self.service.tab_holders(ctx.name) or shared or pooled:
                return True
        return False

    def tab_holders(self, profile: str) -> dict[str, str]:
        """targetId -> the agent session that holds the tab, for views."""
        return {**self.service.tab_holders(profile), **self.service.sessions.holders(profile)}

    def kept_tabs(self, profile: str) -> set[str]:
        """The tabs of ``profile`` the user marked to outlive the agent that opened them."""
        return self.service.sessions.kept(self.service.profile(profile).name)

    async def keep_tab(self, caller: Caller, profile: str | None, target: str, keep: bool) -> str:
        """Mark a tab (an open one's id or unique prefix) to stay open when the agent
        session that opened it ends, or unmark it; its full id."""
        ctx = self.profile(caller, profile)
        caller.note(CallNotes(profile=ctx.name, target_id=target))
        target_id = await ctx.resolve_target(target, caller.key)
        self.service.sessions.keep(ctx.name, target_id, keep)
        return target_id

    async def open_tab(self, caller: Caller, profile: str | None, url: str) -> Tab:
        ctx = self.profile(caller, profile)
        caller.note(CallNotes(profile=ctx.name, url=url))
        label = f"{caller.client} · {ctx.name}" if caller.is_agent and caller.client else None
        with self.service.focus.hold(ctx.impl.window_owner(), label=label):  # chrome/xfocus.py
            tab = await ctx.open_tab(url)
        ctx.note_opened(caller.key, tab.target_id)
        caller.note(CallNotes(target_id=tab.target_id, url=tab.url or None))
        if caller.session:  # it closes when the session ends (sessions.py)
            self.service.sessions.opened(caller.session, ctx.name, tab.target_id)
        elif caller.is_agent:
            ctx.agent_tabs.add(tab.target_id)  # "Stop all agents" closes it
        return tab

    async def focus_tab(self, caller: Caller, profile: str | None, target: str) -> Tab:
        ctx = self.profile(caller, profile)
        caller.note(CallNotes(profile=ctx.name, target_id=target))
        tab = await ctx.focus_tab(target)
        caller.note(CallNotes(target_id=tab.target_id))
        return tab

    async def close_tab(self, caller: Caller, profile: str | None, target: str) -> str:
        ctx = self.profile(caller, profile)
        caller.note(CallNotes(profile=ctx.name, target_id=target))
        closed = await ctx.close_tab(target)
        caller.note(CallNotes(target_id=closed))
        return closed

    async def target(
        self, caller: Caller, profile: str | None, target_id: str | None
    ) -> BrowserTarget:
        """The profile's browser, started if need be, and the tab: ``target_id`` (or a
        unique prefix), else the caller's last used tab."""
        ctx = self.profile(caller, profile)
        if caller.client in QUIET_CLIENTS:
            # The panel only watches: it never starts a browser on demand. Its capture of a
            # tab whose browser the user just closed must not relaunch that browser (and, in
            # the moment before the exit watcher runs, swallow the "browser closed" notice).
            ctx.refuse_if_not_running()
        cdp_url = await ctx.ensure_browser()
        # Every page call comes through here: the engine may still be starting beside the
        # API (Service.start; issue 14), and the browser above started meanwhile.
        await self.service.engine_ready()
        if target_id and self.engine.holds(cdp_url, target_id):
            # A full id of a tab the engine holds open (an MCP session's tab, an agent's
            # next call on the same tab): it exists, so no listing of the browser's tabs
            # (an HTTP request and a browser round trip before every call; issue 14).
            resolved = target_id
        else:
            resolved = await ctx.resolve_target(target_id, caller.key)
        ctx.note_used(caller.key, resolved)
        if caller.session:
            self.service.sessions.used(caller.session, ctx.name, resolved)
        caller.note(CallNotes(profile=ctx.name, target_id=resolved))
        return BrowserTarget(ctx, cdp_url, resolved, ctx.headers)

    async def screenshot(
        self, caller: Caller, profile: str | None, target_id: str | None, *, labels: bool
    ) -> Screenshot:
        """The tab's viewport as a PNG, through the same engine call agents make; each
        label says its role and name (the engine reads them from the ref table it drew
        the labels from)."""
        # inline: the image comes back in the answer; a file per auto-refresh would pile
        # up in the state dir.
        request = o.ScreenshotOptions(labels=labels, type="png", inline=True)
        try:
            t = await self.target(caller, profile, target_id)
            out = await self.engine.screenshot(t.cdp_url, t.target_id, t.headers, request)
        except BrowserdeckError as exc:
            gone = await self._browser_gone(caller, profile, exc)
            if gone is None:
                raise
            raise gone from None
        shot = r.Screenshot.model_validate(out)
        return Screenshot(
            png=base64.b64decode(shot.base64 or ""),
            target_id=t.target_id,
            url=shot.url or "",
            width=shot.width,
            labels=list(shot.labels or []),
            unplaced=list(shot.unplaced or []),
        )

    async def _ref_infos(self, t: BrowserTarget) -> Mapping[str, RefInfo]:
        """The tab's current refs by the name agents see (empty if the tab went).

        The table's own map, not a copy: an action names one ref, and copying a big
        page's thousands cost every action a millisecond or more (issue 14)."""
        try:
            state = await self.engine.pool.page(t.cdp_url, t.target_id, t.headers)
        except Exception:  # the tab or browser went: names are extra, the caller goes on
            return {}
        table = state.table
        return table.refs if table is not None else {}

    # --- one tab -----------------------------------------------------------------
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.SnapshotOptions
    ) -> r.Snapshot: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.NavigateOptions
    ) -> r.Navigated: ...
    @overload
    async def on_tab(
        self,
        caller: Caller,
        profile: str | None,
        target_id: str | None,
        request: o.ScreenshotOptions,
    ) -> r.Screenshot: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.ConsoleOptions
    ) -> r.Console: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.PdfOptions
    ) -> r.Pdf: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.OfflineOptions
    ) -> r.Offline: ...
    @overload
    async def on_tab(
        self,
        caller: Caller,
        profile: str | None,
        target_id: str | None,
        request: o.FileChooserOptions | o.DialogOptions,
    ) -> r.Armed: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: o.AnyAct
    ) -> r.ActResult: ...
    @overload
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: TabRequest
    ) -> r.TabResult: ...
    async def on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: TabRequest
    ) -> r.TabResult:
        """Carry out one request about a tab (its model says which); the typed answer
        (``answer_type``).

        ``target_id`` is the tab when the request does not name one itself.
        """
        try:
            out = await self._on_tab(caller, profile, target_id, request)
        except BrowserdeckError as exc:
            gone = await self._browser_gone(caller, profile, exc)
            if gone is not None:
                raise gone from None
            named = getattr(request, "target_id", None) or target_id
            if exc.code == "tab_closed" and named:
                # A held tab is not looked up first (``target``), so a tab closed a moment
                # ago reaches the engine: say it as the lookup would ("tab_not_found",
                # which MCP reads as "this session's tab is gone") once it is unlisted.
                # Only "not listed any more" replaces the engine's error: an ambiguous
                # prefix or an unreachable browser says nothing about this tab.
                with contextlib.suppress(Conflict, Unavailable):
                    await self.service.profile(profile).resolve_target(named, caller.key)
            raise
        return answer_type(request).model_validate(r.well_formed(out))

    async def _browser_gone(
        self, caller: Caller, profile: str | None, exc: BrowserdeckError
    ) -> BrowserdeckError | None:
        """ "The tab was closed" (or "navigated": its context went) is all the engine sees
        when the browser was stopped, crashed or lost its extension: say which, since every
        tab and ref went with it."""
        if exc.code not in ("tab_closed", "browser_gone", "navigated"):
            return None
        try:
            ctx = self.service.profile(profile)
            why = await ctx.why_gone()
        except BrowserdeckError:
            return None
        if why is None:
            return None
        if ctx.driver == "extension":
            again = Hint("reconnect the extension in Chrome (click its icon)")
        else:
            again = Hint("start it again ({start})", start=START)
        return Unavailable(
            why,
            hint=again
            + Hint(
                ", then list tabs ({tabs}) and take a new snapshot ({snapshot}): tabs and refs "
                "from before are gone",
                tabs=TABS,
                snapshot=SNAPSHOT,
            ),
            code="browser_gone",
        )

    async def _on_tab(
        self, caller: Caller, profile: str | None, target_id: str | None, request: TabRequest
    ) -> dict[str, Any]:
        if isinstance(request, o.NavigateOptions):
            return await self._navigate(caller, profile, target_id, request)
        if isinstance(request, o.FileChooserOptions):
            return await self._file_chooser(caller, profile, target_id, request)
        method = _PLAIN_CALLS.get(type(request))
        if method is None:
            return await self._act(caller, profile, target_id, request)  # type: ignore[arg-type]
        # A request that names its tab (targetId in a body) wins over the caller's.
        own = getattr(request, "target_id", None)
        t = await self.target(caller, profile, own or target_id)  # waits for the engine
        call: EngineCall = getattr(self.engine, method)
        return await call(t.cdp_url, t.target_id, t.headers, request)

    async def _act(
        self, caller: Caller, profile: str | None, target_id: str | None, body: o.AnyAct
    ) -> dict[str, Any]:
        caller.note(act_details(body))
        if body.wait_ms is None:  # the actionWaitMs setting bounds the wait for consequences
            body = body.model_copy(update={"wait_ms": self.service.config.action_wait_ms})
        t = await self.target(caller, profile, body.target_id or target_id)
        try:
            with self.service.focus.hold(t.ctx.impl.window_owner()):  # chrome/xfocus.py
                out = await self.engine.act(t.cdp_url, t.target_id, t.headers, body)
        finally:
            await self._note_elements(caller, t, body)
        if out.get("closed") or out.get("navigated"):
            self.service.events.tabs_changed.send(profile=t.ctx.name)
        return out

    async def _note_elements(self, caller: Caller, t: BrowserTarget, body: o.AnyAct) -> None:
        """The role and name of the element(s) acted on, from the tab's ref table."""
        refs = [getattr(body, f, None) for f in ("ref", "start_ref")]
        wanted = [r for r in refs if isinstance(r, str) and r]
        if not wanted:
            return
        from browserdeck.engine.refs import normalize

        info = (await self._ref_infos(t)).get(normalize(wanted[0]))
        if info is not None:
            caller.note(CallNotes(element=info.describe()))

    async def _navigate(
        self, caller: Caller, profile: str | None, target_id: str | None, body: o.NavigateOptions
    ) -> dict[str, Any]:
        if body.action == "goto":
            allow = self.service.config.allow_file_urls
            body = body.model_copy(update={"url": urls.prepare(body.url, allow_file_urls=allow)})
        caller.note(CallNotes(kind=body.action, url=body.url if body.action == "goto" else None))
        t = await self.target(caller, profile, body.target_id or target_id)
        out = await self.engine.navigate(t.cdp_url, t.target_id, t.headers, body)
        self.service.events.tabs_changed.send(profile=t.ctx.name)
        return out

    async def _file_chooser(
        self,
        caller: Caller,
        profile: str | None,
        target_id: str | None,
        body: o.FileChooserOptions,
    ) -> dict[str, Any]:
        # Only files inside the caller's roots and uploadRoots (issue 10 item 5).
        allowed = confine.allowed_roots(body.roots, self.service.config.upload_roots)
        files = [str(confine.readable_file(p, allowed)) for p in body.paths]
        body = body.model_copy(update={"paths": files})
        if body.wait_ms is None:  # setting files is an action: the actionWaitMs setting bounds it
            body = body.model_copy(update={"wait_ms": self.service.config.action_wait_ms})
        t = await self.target(caller, profile, body.target_id or target_id)
        return await self.engine.arm_file_chooser(t.cdp_url, t.target_id, t.headers, body)


# The typed answer of each request; any other request is an act.
ANSWERS: dict[type[Any], type[r.TabResult]] = {
    o.SnapshotOptions: r.Snapshot,
    o.NavigateOptions: r.Navigated,
    o.ScreenshotOptions: r.Screenshot,
    o.ConsoleOptions: r.Console,
    o.OfflineOptions: r.Offline,
    o.PdfOptions: r.Pdf,
    o.FileChooserOptions: r.Armed,
    o.DialogOptions: r.Armed,
}


def answer_type(request: TabRequest) -> type[r.TabResult]:
    return ANSWERS.get(type(request), r.ActResult)


# What the activity log calls each request (``call`` in an ``api_call`` entry made
# in-process; the GUI says it in words); any other request is an act, whose ``kind`` the
# entry's detail names.
CALLS: dict[type[Any], str] = {
    o.SnapshotOptions: "snapshot",
    o.NavigateOptions: "navigate",
    o.ScreenshotOptions: "screenshot",
    o.ConsoleOptions: "console",
    o.OfflineOptions: "set-offline",
    o.PdfOptions: "pdf",
    o.FileChooserOptions: "file-chooser",
    o.DialogOptions: "dialog",
}


def call_name(request: TabRequest) -> str:
    return CALLS.get(type(request), "act")


def act_details(body: o.AnyAct) -> CallNotes:
    """Kind, ref(s) and what was typed (its length only: it may be a password)."""
    notes = CallNotes(kind=body.kind)
    for name in ("ref", "start_ref", "end_ref", "key"):
        value = getattr(body, name, None)
        if isinstance(value, str) and value:
            setattr(notes, name, value)
    text = getattr(body, "text", None)
    if body.kind in ("type", "fill") and isinstance(text, str):
        notes.typed_chars = len(text)
    values = getattr(body, "values", None)
    if body.kind == "select" and isinstance(values, list):
        notes.values = [str(v)[:60] for v in values[:5]]
    return notes
