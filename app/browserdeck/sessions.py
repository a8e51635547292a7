"""Agent sessions, and what ends with them: everything a session opened.

An *agent session* is one agent as the service sees it: an MCP session (one
``browserdeck mcp`` bridge, one ``/mcp`` HTTP session) or a named API/CLI client
(``X-Browserdeck-Session``; the CLI sends ``cli:NAME`` when ``BROWSERDECK_CLIENT`` is
set). The front door (``Deck``) tells ``Sessions`` which tabs each session opened
(a free blank tab it took counts: it was nobody's and showed nothing) and which it used
without opening (*reused*: a tab it selected, the user's tab it acted on).

A session ends, with a reason (``EndReason``), when:

- its client ends it (``DELETE /mcp``; a bridge does that as it exits);
- the process it lives as long as exits (a bridge killed with ``-9``; ``pidwatch``);
- it makes no call for ``agentIdleMinutes`` (named API/CLI clients) or 30 minutes
  (MCP sessions over HTTP on the stateless protocol; handshake sessions idle out in
  their transport, mcpserver/http.py);
- the user presses *Stop all agents* (``end_all(STOPPED_BY_USER)``).

``Sessions.end`` is the one way a session ends: it runs every clean-up registered with
``on_end`` (the MCP server ends the session's transport and tab claims; pooled remote
browsers are released; recordings and the take-over end theirs, recording/ends.py;
later: routes, pending approvals), then closes the tabs the session opened, except
those the user marked *keep* (``keep``) and those another live session uses now (handed
to it), and gives back the tabs it reused (their holder label goes). A browser's last
tab is never closed: a blank one is opened first (a headed Chromium, and the user's own
Chrome, would quit with its last window).

Its next call is then refused with the reason (``SessionEndedError``), so an agent learns
that the user stopped it rather than acting in a fresh session somewhere else; a named
client is told once and may then go on in a new session of the same name.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from browserdeck.errors import CLOSE_TAB, BrowserdeckError, Conflict, Hint
from browserdeck.pidwatch import PidWatch
from browserdeck.session import (
    ENDED_KEPT,
    PROCESS_EXITED,
    STOPPED_BY_USER,
    AgentReleaser,
    EndReason,
    Hook,
    Kind,
    Session,
    SessionEnded,
    SessionEndedError,
    idle,
    session_key,
)

if TYPE_CHECKING:
    from browserdeck.service import Service
    from browserdeck.tabs import Tab

log = logging.getLogger(__name__)

# The longest one clean-up step may take before the others go on without it.
HOOK_SECONDS = 10.0
BLANK = frozenset({"about:blank", ""})


class Sessions:
    """The service's agent sessions: who holds which tab, and the one way a session ends."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.live: dict[str, Session] = {}
        self._hooks: list[tuple[str, Hook]] = []
        # Ended sessions whose next call is told why: id -> (kind, reason).
        self._ended: OrderedDict[str, tuple[Kind, EndReason]] = OrderedDict()
        self._kept: set[tuple[str, str]] = set()  # (profile, targetId) marked keep
        self._being_closed: set[tuple[str, str]] = set()  # being closed by a session's end
        self._pids = PidWatch(self._pid_exited)
        self._reaper: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._closing = False
        self.on_end("pooled remote browsers", self._release_leases)
        # A new agentIdleMinutes applies at once: sessions past it end now.
        service.events.config_changed.connect(self._wake_reaper)

    # --- the hook point ------------------------------------------------------------
    def on_end(self, name: str, hook: Hook) -> Callable[[], None]:
        """Run ``hook(session, reason)`` whenever a session ends, before its tabs are
        closed (the hooks of one end run side by side); returns what unregisters it. A
        hook that fails or takes more than ``HOOK_SECONDS`` is logged and the others
        still run."""
        entry = (name, hook)
        self._hooks.append(entry)

        def unregister() -> None:
            with contextlib.suppress(ValueError):
                self._hooks.remove(entry)

        return unregister

    # --- sessions begin and are used ------------------------------------------------
    def begin(
        self,
        raw_id: str,
        *,
        label: str,
        kind: Kind = "client",
        pid: int | None = None,
        idle_after: float | None = None,
    ) -> Session:
        """Register a session the way its way in knows it (MCP: its label, its bridge's
        pid); a session already known is returned as it is."""
        sid = session_key(raw_id)
        session = self.live.get(sid)
        if session is None:
            session = self.live[sid] = Session(sid, label, kind, pid, idle_after)
            if pid is not None:
                self._pids.watch(pid)
            self._ensure_reaper()
        return session

    def touch(self, raw_id: str, *, label: str) -> Session:
        """A call of session ``raw_id`` begins: its session (new for a first call).

        A call of an ended session is refused with the reason (``SessionEndedError``):
        an MCP session's every call (its id is never used again), a named client's first
        call after the end, which then begins a new session of that name.
        """
        sid = session_key(raw_id)
        session = self.live.get(sid)
        if session is None:
            ended = self._ended.get(sid)
            if ended is not None:
                kind, reason = ended
                if kind == "client":
                    del self._ended[sid]
                raise self._refusal(sid, kind, reason)
            session = self.begin(sid, label=label)
        session.last_used = time.monotonic()
        return session

    def opened(self, raw_id: str, profile: str, target_id: str) -> None:
        """Session ``raw_id`` opened ``target_id``: it closes when the session ends."""
        session = self.live.get(session_key(raw_id))
        if session is None:
            # Ended while the tab was being opened: it ends now, as the rest did.
            self.service.tasks.spawn(self._close_late(profile, target_id), name="session-late-tab")
            return
        session.opened.setdefault(profile, set()).add(target_id)
        session.reused.get(profile, set()).discard(target_id)

    def used(self, raw_id: str, profile: str, target_id: str) -> None:
        """Session ``raw_id`` acted on ``target_id``; one it did not open is reused."""
        session = self.live.get(session_key(raw_id))
        if session is not None and target_id not in session.opened.get(profile, ()):
            session.reused.setdefault(profile, set()).add(target_id)

    def tab_closed(self, profile: str, target_id: str) -> None:
        """``target_id`` is gone: no session holds it, and its keep mark goes."""
        for session in self.live.values():
            session.opened.get(profile, set()).discard(target_id)
            session.reused.get(profile, set()).discard(target_id)
        self._kept.discard((profile, target_id))

    # --- keep -------------------------------------------------------------------------
    def keep(self, profile: str, target_id: str, keep: bool = True) -> None:
        """Mark a tab to stay open when the session that opened it ends (or unmark it)."""
        if keep:
            self._kept.add((profile, target_id))
        else:
            self._kept.discard((profile, target_id))
        self.service.events.tabs_changed.send(profile=profile)

    def kept(self, profile: str) -> set[str]:
        return {t for p, t in self._kept if p == profile}

    def closing(self, profile: str) -> set[str]:
        """Tabs an ended session's clean-up is closing now: no agent may take them."""
        return {t for p, t in self._being_closed if p == profile}

    # --- who holds what ---------------------------------------------------------------
    def holders(self, profile: str) -> dict[str, str]:
        """targetId -> the label of the session holding it (the latest to begin wins)."""
        out: dict[str, str] = {}
        for session in self.live.values():
            for target_id in session.reused.get(profile, ()):
                out[target_id] = session.label
            for target_id in session.opened.get(profile, ()):
                out[target_id] = session.label
        return out

    def too_many_tabs(self, profile: str, listed: list[Tab], limit: int) -> Conflict:
        """maxTabs' refusal, saying which sessions hold how many of the open tabs."""
        held = self.held_by(profile, {t.target_id for t in listed})
        return Conflict(
            f"profile {profile!r} already has {len(listed)} tabs open; the limit is "
            f"{limit} (maxTabs)" + (f": {held}" if held else ""),
            hint=Hint(
                "close tabs you no longer need ({close}), end agent sessions you no longer "
                "use, or raise maxTabs in Settings",
                close=CLOSE_TAB,
            ),
            code="too_many_tabs",
        )

    def held_by(self, profile: str, open_ids: set[str]) -> str:
        """Who holds how many of ``open_ids``, in words (for the maxTabs refusal)."""
        counts: dict[str, int] = {}
        held: set[str] = set()
        for session in self.live.values():
            mine = (session.opened.get(profile, set()) | session.reused.get(profile, set()))
            mine &= open_ids
            if mine:
                counts[session.label] = counts.get(session.label, 0) + len(mine)
                held |= mine
        parts = [f"{label} holds {n}" for label, n in sorted(counts.items(), key=lambda x: -x[1])]
        rest = len(open_ids - held)
        if rest:
            parts.append(f"{rest} {'is' if rest == 1 else 'are'} held by no agent session")
        return "; ".join(parts)

    # --- ending -----------------------------------------------------------------------
    async def end(self, raw_id: str, reason: EndReason) -> SessionEnded | None:
        """End session ``raw_id`` (None if no such session is live): every clean-up
        hook, then its tabs. The session is gone for callers before the first hook."""
        sid = session_key(raw_id)
        session = self.live.pop(sid, None)
        if session is None:
            return None
        if session.pid is not None and not any(s.pid == session.pid for s in self.live.values()):
            self._pids.forget(session.pid)
        if reason.tell or session.kind == "mcp":
            self._ended[sid] = (session.kind, reason)
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
        if self._closing:  # the service's stop: its browsers close with it
            return SessionEnded(sid, session.label, session.kind, reason)
        log.info("agent session %s ended: %s", session.label, reason.words)
        # Side by side: the hooks are separate concerns, and one that waits (the recorder's
        # last picture) must not hold back the others (a waiting approval withdrawn).
        await asyncio.gather(*(self._run_hook(n, h, session, reason) for n, h in self._hooks))
        ended = await self._release_tabs(session, reason)
        self.service.events.session_ended.send(ended=ended)
        return ended

    async def end_all(self, reason: EndReason) -> list[SessionEnded]:
        """End every live session (Stop all agents), one after the other."""
        done = []
        for sid in list(self.live):
            ended = await self.end(sid, reason)
            if ended is not None:
                done.append(ended)
        return done

    async def stop_all(self, releasers: list[AgentReleaser]) -> dict[str, int]:
        """The tray's *Stop all agents*: every session ends as stopped by the user (what
        the ways in hold besides, through ``releasers``), then what agents without a
        session opened closes and the user's Chrome stops sharing its tabs."""
        ended = await self.end_all(STOPPED_BY_USER)
        others = 0
        for release in releasers:
            others += await release(STOPPED_BY_USER)
        closed = unshared = 0
        for ctx in list(self.service.contexts.values()):
            n_closed, n_unshared = await ctx.impl.stop_agents(self.kept(ctx.name))
            closed += n_closed
            unshared += n_unshared
        return {
            "sessions": len(ended) + others,
            "closedTabs": closed + sum(e.closed_tabs for e in ended),
            "unsharedTabs": unshared,
            "givenBackTabs": sum(e.given_back for e in ended),
            "keptTabs": sum(e.kept_tabs for e in ended),
        }

    async def reap(self) -> list[SessionEnded]:
        """End the sessions whose process is gone or that idled past their limit now
        (the maxTabs check asks before it refuses: those tabs are not live work)."""
        from browserdeck.chrome.procs import pid_alive

        done = []
        now = time.monotonic()
        for sid, session in list(self.live.items()):
            reason: EndReason | None = None
            if session.pid is not None and not pid_alive(session.pid):
                reason = PROCESS_EXITED
            elif (limit := self._idle_limit(session)) is not None and now - session.last_used > limit:
                reason = self._idle_reason(session, limit)
            if reason is not None and (ended := await self.end(sid, reason)) is not None:
                done.append(ended)
        return done

    def why_ended(self, raw_id: str) -> EndReason | None:
        """Why a session that ended did, if it is remembered (without using up the telling)."""
        ended = self._ended.get(session_key(raw_id))
        return ended[1] if ended is not None else None

    @property
    def closed(self) -> bool:
        return self._closing

    def close(self) -> None:
        """The service stops: no clean-up from now on (the browsers close with it)."""
        self._closing = True
        self.service.events.config_changed.disconnect(self._wake_reaper)
        self._pids.close()
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    # --- inside --------------------------------------------------------------------
    @staticmethod
    def _refusal(sid: str, kind: Kind, reason: EndReason) -> SessionEndedError:
        if kind == "mcp":
            hint = "start a new MCP session (reconnect browserdeck's MCP server) to go on"
        else:
            hint = (
                "call again to go on in a new session (the tabs it opened were closed, "
                "unless kept)"
            )
        return SessionEndedError(
            f"this agent session ({sid[:40]}) was ended: {reason.words}", hint=hint
        )

    async def _run_hook(self, name: str, hook: Hook, session: Session, reason: EndReason) -> None:
        try:
            result = hook(session, reason)
            if inspect.isawaitable(result):
                await asyncio.wait_for(result, HOOK_SECONDS)
        except Exception:
            log.exception("session end: the %r clean-up of %s failed", name, session.label)

    async def _release_tabs(self, session: Session, reason: EndReason) -> SessionEnded:
        closed = kept = given_back = 0
        for profile in set(session.opened) | set(session.reused):
            ctx = self.service.contexts.get(profile)
            if ctx is None:
                continue
            if ctx.impl.per_session():
                continue  # its tabs went with the session's own browser (released by a hook)
            try:
                listed = await ctx.peek_tabs()
            except BrowserdeckError:
                listed = None
            # Not running (None), or nothing open: its tabs went with its browser.
            open_ids = {t.target_id for t in listed or []}
            doomed = [
                t for t in session.opened.get(profile, set()) & open_ids if (profile, t) not in self._kept
            ]
            kept += len(session.opened.get(profile, set()) & open_ids) - len(doomed)
            given_back += len(session.reused.get(profile, set()) & open_ids)
            if doomed and not open_ids - set(doomed) and ctx.impl.lists_every_tab:
                # Never the browser's last tab: a headed Chromium quits with its last
                # window. A blank tab stays instead, free for the next agent: one of the
                # session's if it shows nothing, else a new one.
                blanks = [t.target_id for t in listed or [] if t.url in BLANK]
                blank = next((t for t in blanks if t in doomed), None)
                try:
                    if blank is None:
                        await ctx.open_tab("about:blank")
                except BrowserdeckError as exc:
                    log.info("session end: keeping one tab open (%s)", exc)
                    blank = doomed[-1]
                if blank is not None:
                    doomed.remove(blank)
                    given_back += 1
            for target_id in doomed:
                # Asked at each close (the closes before it took time): a live session
                # that works there now (an agent took it as its own) gets it instead.
                heir = next((s for s in self.live.values() if s.holds(profile, target_id)), None)
                if heir is not None:
                    heir.opened.setdefault(profile, set()).add(target_id)
                    heir.reused.get(profile, set()).discard(target_id)
                    given_back += 1
                    continue
                self._being_closed.add((profile, target_id))
                try:
                    await ctx.close_tab(target_id)
                    closed += 1
                except BrowserdeckError as exc:  # closed meanwhile, or the browser went
                    log.info("session end: closing tab %s: %s", target_id[:8], exc)
                finally:
                    self._being_closed.discard((profile, target_id))
            # The holder labels went: views redraw.
            self.service.events.tabs_changed.send(profile=profile)
        return SessionEnded(
            session.id, session.label, session.kind, reason, closed, kept, given_back
        )

    async def _release_leases(self, session: Session, reason: EndReason) -> None:
        """A browser held for this session alone (a pooled service's) is given back."""
        for ctx in list(self.service.contexts.values()):
            await ctx.impl.release_session(session.id)

    async def _close_late(self, profile: str, target_id: str) -> None:
        ctx = self.service.contexts.get(profile)
        if ctx is None or (profile, target_id) in self._kept:
            return
        with contextlib.suppress(BrowserdeckError):
            await ctx.close_tab(target_id)

    def _pid_exited(self, pid: int) -> None:
        for sid in [s.id for s in self.live.values() if s.pid == pid]:
            self.service.tasks.spawn(self.end(sid, PROCESS_EXITED), name="session-process-exited")

    def _idle_limit(self, session: Session) -> float | None:
        if session.idle_after is not None:
            return session.idle_after
        if session.kind == "client":
            minutes = self.service.config.agent_idle_minutes
            return minutes * 60.0 if minutes > 0 else None
        return None

    @staticmethod
    def _idle_reason(session: Session, limit: float) -> EndReason:
        return idle(limit, "agentIdleMinutes" if session.idle_after is None else None)

    def _ensure_reaper(self) -> None:
        if self._reaper is None and not self._closing:
            self._reaper = self.service.tasks.spawn(self._reap_idle(), name="agent-sessions-idle")
        self._wake.set()

    def _wake_reaper(self) -> None:
        self._wake.set()

    async def _reap_idle(self) -> None:
        """End sessions as they pass their idle limit (a timer to the next deadline)."""
        while True:
            now = time.monotonic()
            deadlines = [
                s.last_used + limit
                for s in self.live.values()
                if (limit := self._idle_limit(s)) is not None
            ]
            # Woken early by a new session and by a change of the setting.
            wait = min((d - now for d in deadlines), default=None)
            self._wake.clear()
            if wait is None:
                await self._wake.wait()
                continue
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
                continue
            for sid, session in list(self.live.items()):
                limit = self._idle_limit(session)
                if limit is not None and time.monotonic() - session.last_used > limit:
                    await self.end(sid, self._idle_reason(session, limit))
