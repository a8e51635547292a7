"""What the tray and the panel show, kept current from the service.

``DeckModel`` is the GUI's one view of the service: profile statuses, each
profile's tabs and the recent API calls. It refreshes itself from service
events (through ``ServiceBridge``) and from a slow poll (a browser closed by hand
or a tab navigated by an agent sends no event), and runs every user action as a
named background task on the shared asyncio loop, so no Qt slot ever blocks and
no coroutine ever waits on a modal dialog.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from browserdeck import config, states
from browserdeck.deck import AgentsStopped, Caller, Deck, Overview
from browserdeck.door import admin
from browserdeck.driverspecs import spec_or_default
from browserdeck.errors import BrowserdeckError
from browserdeck.events import ActivityEntry, ApprovalEvent
from browserdeck.gui.bridge import ServiceBridge
from browserdeck.results import ProfileStatus
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.recorded import SessionExport, TakeOverState
    from browserdeck.tabs import Tab

log = logging.getLogger(__name__)

GUI_CLIENT = "browserdeck-gui"  # the Caller.client of the tray's and panel's own calls
ACTIVITY_LIMIT = 300


@dataclass(frozen=True)
class Activity:
    """One API call, as a person reads it in the panel."""

    time: float
    client: str
    action: str  # "click", "type", "navigate", "open tab", …
    target: str  # the element: "e12 · button “Save”" (or a URL for navigations)
    result: str  # "OK", or what went wrong in a few words
    ok: bool
    ms: float
    profile: str
    target_id: str = ""  # the tab (full id); the panel shows its title
    error: str = ""  # the error's message, for the details pane / tooltip
    hint: str = ""  # what to do about it

    def details(self) -> str:
        """The full story of a failure (or of a success): for a tooltip or details pane."""
        # The result line names the outcome; the message follows once, on its own line.
        outcome = self.result.split(":", 1)[0] if self.error else self.result
        lines = [f"{self.action} {self.target}".strip() + f" — {outcome}"]
        if self.error:
            lines.append(self.error)
        if self.hint:
            lines.append("What to do: " + self.hint)
        return "\n".join(lines)


# Each call at the front door (its request's ``op``) → the verb a person understands; an
# unknown one shows as it is.
_ACTIONS: dict[str, str] = {
    "status": "status",
    "start": "start browser",
    "stop": "stop browser",
    "reset-profile": "reset profile",
    "profiles": "list profiles",
    "create-profile": "create profile",
    "delete-profile": "delete profile",
    "store-token": "store service token",
    "release-session": "release session",
    "stop-all-agents": "stop all agents",
    "end-session": "end agent session",
    "refused": "refused",  # a stopped agent's call; the row names the tool it asked for
    "keep-tab": "keep tab",
    "apply-config": "save settings",
    "run-code": "run code",
    "tabs": "list tabs",
    "open-tab": "open tab",
    "focus-tab": "focus tab",
    "close-tab": "close tab",
    "navigate": "navigate",
    "snapshot": "snapshot",
    "act": "act",
    "screenshot": "screenshot",
    "console": "read console",
    "set-offline": "set offline",
    "pdf": "save PDF",
    "file-chooser": "arm file chooser",
    "dialog": "arm dialog",
    "sessions": "list recorded sessions",
    "session": "read a recorded session",
    "export-session": "export a session",
    "take-over": "take over",
    "hand-back": "hand back",
    "route": "add route",
    "routes": "list routes",
    "unroute": "remove routes",
    "network-state": "set network state",
    "har-start": "start HAR",
    "har-stop": "stop HAR",
    "network-requests": "list requests",
    "network-request": "read request",
}

# Navigate's kinds in words.
_NAV_KINDS = {"goto": "navigate", "back": "go back", "forward": "go forward", "reload": "reload"}

_REASONS = {
    400: "invalid input",
    401: "no token",
    403: "refused",
    404: "not found",
    409: "conflict",
    500: "internal error",
    503: "unavailable",
    504: "timed out",
}


def short_id(target_id: str) -> str:
    """The one way a tab id is shortened anywhere in the GUI: its first 8 characters."""
    return target_id[:8] + "…" if len(target_id) > 9 else target_id


def describe_call(entry: ActivityEntry, default_profile: str = "") -> Activity:
    """Turn an ``api_call`` event's entry into a row of the activity list."""
    detail = entry.detail
    profile = detail.profile or entry.profile or default_profile
    target_id = detail.target_id or ""
    call = entry.call
    action = _ACTIONS.get(call, call)
    kind = detail.kind or ""
    if call in ("act", "refused") and kind:  # refused: the tool an ended agent asked for
        action = kind
    elif call == "navigate" and kind:
        action = _NAV_KINDS.get(kind, kind)
    target = ""
    if detail.ref:
        target = detail.ref
        if detail.element:
            target += f" · {_element_words(detail.element)}"
    if detail.end_ref:
        target = f"{detail.start_ref or ''} → {detail.end_ref}"
    if detail.key:
        target = (target + " · " if target else "") + f"key {detail.key}"
    if detail.typed_chars is not None:
        # Never the text itself: it may be a password.
        n = detail.typed_chars
        target += f" · typed {n} character{'s' if n != 1 else ''}"
    if detail.values:
        target += " · " + ", ".join(f"“{v}”" for v in detail.values)
    if detail.url and not target:
        target = detail.url
    status = entry.status
    ok = 0 < status < 400
    message = entry.error.message if entry.error else ""
    hint = (entry.error.hint or "") if entry.error else ""
    if ok:
        result = "OK"
    elif not status:
        result = "no answer"
    else:
        result = _REASONS.get(status, f"HTTP {status}")
        if message:
            result = f"{result}: {message}"
    return Activity(
        time=entry.time,
        client=entry.client or "?",
        action=action,
        target=target,
        result=result,
        ok=ok,
        ms=entry.ms,
        profile=profile,
        target_id=target_id,
        error=message,
        hint=hint,
    )


def _element_words(element: str) -> str:
    """'button "Save"' (the engine's RefInfo.describe) -> 'button “Save”'."""
    role, _, name = element.partition(" ")
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        return f"{role} “{name[1:-1]}”"
    return element


class DeckModel(QObject):
    profilesChanged = Signal()  # statuses refreshed (names, states, colours)
    tabsChanged = Signal(str)  # the tabs of one profile were refreshed
    activityAdded = Signal(object)  # an Activity
    actionFailed = Signal(str, str)  # title, message (with the hint) of a failed user action
    tabOpened = Signal(str, str)  # profile, targetId of a tab the user opened (panel/tray)
    takeoverChanged = Signal(str)  # profile: the user took its browser over or handed it back
    deckChanged = Signal()  # a service started (or stopped): ``deck`` is its front door

    POLL_MS = 5000

    def __init__(self, bridge: ServiceBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        # The front door the tray and panel read and call, in-process (never HTTP to
        # themselves, never the Service behind it); None while no service runs.
        self.deck: Deck | None = None
        # Per profile: the tab holders and keep marks last shown (see refresh).
        self._marks: dict[str, tuple[dict[str, str], set[str]]] = {}
        self.service_error: str | None = None  # set when the service could not start
        self.statuses: dict[str, ProfileStatus] = {}
        self.tabs: dict[str, list[Tab]] = {}
        self.activity: deque[Activity] = deque(maxlen=ACTIVITY_LIMIT)
        self.agents_present = False  # whether "Stop all agents" has anything to stop
        self.taken: set[str] = set()  # profiles whose browser the user has taken over
        self.show_own_calls = False
        self._refresh_task: asyncio.Task[None] | None = None
        self._dirty = False
        self._closed = False
        bridge.profileState.connect(lambda *_: self.refresh())
        bridge.tabsChanged.connect(lambda *_: self.refresh())
        bridge.extension.connect(lambda *_: self.refresh())
        bridge.configChanged.connect(self.refresh)
        bridge.apiCall.connect(self._on_api_call)
        bridge.takeover.connect(self._on_takeover)
        bridge.approval.connect(self._on_approval)
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self.refresh)

    # --- service --------------------------------------------------------------
    def set_deck(self, deck: Deck | None, error: str | None = None) -> None:
        """The running service's front door (None: none runs; ``error`` says why)."""
        self.deck, self.service_error = deck, error
        if deck is not None:
            self.bridge.attach(deck.events)
            self._poll.start()
        else:
            self.bridge.detach()
            self._poll.stop()
        self.deckChanged.emit()
        self.refresh()

    def overview(self) -> Overview | None:
        """The service as the views show it; None while no service runs."""
        return self.deck.overview() if self.deck is not None else None

    @property
    def running(self) -> bool:
        return self.deck is not None and self.deck.started

    def sites(self, profile: str) -> str | None:
        """Where agents may go in ``profile`` (allowedOrigins / blockedOrigins), in a line."""
        if self.deck is None or profile not in self.deck.settings().profiles:
            return None
        return self.deck.settings().origin_rules(profile).summary()

    @property
    def default_profile(self) -> str:
        overview = self.overview()
        return overview.default_profile if overview is not None else "agent"

    def profile_names(self) -> list[str]:
        overview = self.overview()
        return list(overview.profiles) if overview is not None else []

    def color_of(self, name: str) -> str:
        overview = self.overview()
        if overview is not None and name in overview.profiles:
            return overview.profiles[name].color
        status = self.statuses.get(name)
        return (status.color if status is not None else None) or "#8A8F98"

    def has_extension_profile(self) -> bool:
        """Whether a profile uses the user's own Chrome (what "Pair extension…" is for)."""
        overview = self.overview()
        return overview is not None and any(
            spec_or_default(p.driver).via_extension for p in overview.profiles.values()
        )

    def driver_of(self, name: str) -> str:
        overview = self.overview()
        if overview is not None and name in overview.profiles:
            return overview.profiles[name].driver
        return "?"

    @staticmethod
    def caller() -> Caller:
        """Who calls the front door: the user, through the tray app (never an agent)."""
        return Caller(client=GUI_CLIENT, via="gui")

    def tray_state(self) -> str:
        return states.overall(self.statuses, self.default_profile, self.service_error is not None)

    def trouble_elsewhere(self) -> bool:
        """Another profile than the default one crashed or could not start."""
        return states.trouble_elsewhere(self.statuses, self.default_profile)

    def set_fast_poll(self, fast: bool) -> None:
        """Poll more often while someone looks (the panel is visible)."""
        self._poll.setInterval(2000 if fast else self.POLL_MS)

    def close(self) -> None:
        self._closed = True
        self._poll.stop()
        self.bridge.detach()

    # --- refresh --------------------------------------------------------------
    def refresh(self) -> None:
        """Refresh statuses and tabs soon; calls during a refresh coalesce into one more."""
        if self._closed:
            return
        if self._refresh_task is not None and not self._refresh_task.done():
            self._dirty = True
            return
        try:
            self._refresh_task = aio.create_task(self._refresh_loop(), name="gui-refresh")
        except RuntimeError:  # no running loop (e.g. during teardown)
            return

    async def _refresh_loop(self) -> None:
        while True:
            self._dirty = False
            await self.refresh_now()
            if not self._dirty or self._closed:
                return

    async def refresh_now(self) -> None:
        deck = self.deck
        if deck is None or not deck.started:
            if self.statuses or self.tabs:
                self.statuses, self.tabs = {}, {}
                self.profilesChanged.emit()
            else:
                self.profilesChanged.emit()
            return
        try:
            statuses = (await deck.profiles(self.caller())).profiles
        except Exception:  # the refresh must never die; the next one will retry
            log.exception("refreshing profile status")
            return
        if self._closed:
            return
        self.statuses = {s.profile: s for s in statuses}
        self.agents_present = deck.agents_present()
        self.profilesChanged.emit()
        for name, status in self.statuses.items():
            tabs: list[Tab] = []
            if status.running and deck.started:
                try:
                    # Never starts a browser: a poll racing a Stop must not relaunch it.
                    tabs = await deck.peek_tabs(self.caller(), name)
                except Exception:
                    log.exception("listing tabs of %s", name)
            if self._closed:
                return
            old = [(t.target_id, t.title, t.url) for t in self.tabs.get(name, [])]
            self.tabs[name] = tabs
            # Who holds which tab, and the keep marks: an agent's end clears its label
            # from tabs that stay open, which changes no tab.
            marks = (deck.tab_holders(name), deck.kept_tabs(name))
            if old != [(t.target_id, t.title, t.url) for t in tabs] or marks != self._marks.get(
                name
            ):
                self._marks[name] = marks
                self.tabsChanged.emit(name)
        for gone in set(self.tabs) - set(self.statuses):
            del self.tabs[gone]

    # --- activity ---------------------------------------------------------------
    def _on_api_call(self, entry: ActivityEntry) -> None:
        activity = describe_call(entry, self.default_profile)
        if activity.client == GUI_CLIENT and not self.show_own_calls:
            return
        self.activity.append(activity)
        self.activityAdded.emit(activity)

    def _on_approval(self, entry: ApprovalEvent) -> None:
        """A risky action waiting for the person, then who decided what: activity rows."""
        waiting = entry.state == "waiting"
        result = {
            "waiting": "waiting for your approval",
            "once": f"allowed once ({entry.by})",
            "site": f"allowed on this site for this agent ({entry.by})",
            "denied": f"denied ({entry.by})",
            "cancelled": "no longer asked: the agent's call ended",
            "asked": f"{entry.by}; waiting for the answer",
        }.get(entry.state, entry.state)
        activity = Activity(
            time=entry.time,
            client=entry.agent,
            action="approval",
            target=entry.action,
            result=result,
            ok=waiting or entry.state in ("once", "site"),
            ms=0.0,
            profile=entry.profile,
            target_id=entry.target_id,
            hint=f"asked because {entry.why}",
        )
        self.activity.append(activity)
        self.activityAdded.emit(activity)

    def set_approval(self, profile: str, value: str | None) -> asyncio.Task[None] | None:
        """Ask before this profile's agents act: ``value`` (None: as set for all profiles).
        Taken at once; no browser restarts for it (reconfig.LIVE_PROFILE_KEYS)."""

        def change(cfg: Any) -> None:
            cfg.profiles[profile].approval = value

        return self._deck_call(
            f"Could not change approval for {profile}",
            lambda d, c: d.apply_config(c, config.updated(d.settings(), change), restart=False),
        )

    # --- actions (each a named task; failures become actionFailed) ---------------
    def run(
        self, coro: Coroutine[Any, Any, Any], title: str, done: Callable[[Any], None] | None = None
    ) -> asyncio.Task[None]:
        async def runner() -> None:
            try:
                result = await coro
            except BrowserdeckError as exc:
                self.actionFailed.emit(title, str(exc))
            except Exception as exc:
                log.exception("%s", title)
                self.actionFailed.emit(title, f"{type(exc).__name__}: {exc}")
            else:
                if done is not None:
                    done(result)
            finally:
                self.refresh()

        return aio.create_task(runner(), name=f"gui-{title}")

    def _deck_call(
        self,
        title: str,
        call: Callable[[Deck, Caller], Awaitable[Any]],
        done: Callable[[Any], None] | None = None,
    ) -> asyncio.Task[None] | None:
        """Run ``call`` on the front door as the user; a failure becomes actionFailed."""
        deck = self.deck
        if deck is None:
            self.actionFailed.emit(title, self.service_error or "browserdeck is not running")
            return None

        async def go() -> Any:
            return await call(deck, self.caller())

        return self.run(go(), title, done)

    def start_profile(self, name: str) -> asyncio.Task[None] | None:
        return self._deck_call(f"Could not start {name}", lambda d, c: d.start(c, name))

    def stop_profile(self, name: str) -> asyncio.Task[None] | None:
        return self._deck_call(f"Could not stop {name}", lambda d, c: d.stop(c, name))

    def open_tab(self, name: str, url: str) -> asyncio.Task[None] | None:
        """Open a tab; the panel selects it (tabOpened) once it is open."""
        return self._deck_call(
            f"Could not open a tab in {name}",
            lambda d, c: d.open_tab(c, name, url),
            done=lambda tab: self.tabOpened.emit(name, str(tab.target_id)),
        )

    def focus_tab(self, name: str, target_id: str) -> asyncio.Task[None] | None:
        return self._deck_call(
            "Could not focus the tab", lambda d, c: d.focus_tab(c, name, target_id)
        )

    def close_tab(self, name: str, target_id: str) -> asyncio.Task[None] | None:
        return self._deck_call(
            "Could not close the tab", lambda d, c: d.close_tab(c, name, target_id)
        )

    def keep_tab(self, name: str, target_id: str, keep: bool) -> asyncio.Task[None] | None:
        """Mark a tab to stay open when the agent session that opened it ends (or not)."""
        return self._deck_call(
            "Could not change the tab's keep mark",
            lambda d, c: d.keep_tab(c, name, target_id, keep),
        )

    def stop_all_agents(
        self, done: Callable[[AgentsStopped], None] | None = None
    ) -> asyncio.Task[None] | None:
        """End every agent session; agent tabs close, the user's Chrome tabs are unshared."""
        return self._deck_call("Could not stop all agents", lambda d, c: d.stop_all_agents(c), done)

    # --- taking a browser over; recorded sessions (recording/) ------------------------
    def _on_takeover(self, profile: str, taken: bool) -> None:
        (self.taken.add if taken else self.taken.discard)(profile)
        self.takeoverChanged.emit(profile)

    def take_over(
        self, name: str, done: Callable[[TakeOverState], None] | None = None
    ) -> asyncio.Task[None] | None:
        """The user takes the profile's browser: agents' calls on it wait until hand_back."""
        return self._deck_call(f"Could not take over {name}", lambda d, c: d.take_over(c, name), done)

    def hand_back(self, name: str) -> asyncio.Task[None] | None:
        return self._deck_call(f"Could not hand {name} back", lambda d, c: d.hand_back(c, name))

    def export_session(
        self, session: str, fmt: str, done: Callable[[SessionExport], None]
    ) -> asyncio.Task[None] | None:
        """Write a recorded session as a trace, an HTML report or a video (its path: done)."""
        request = admin.ExportSession.of({"session": session, "format": fmt})
        return self._deck_call(
            "Could not export the session", lambda d, c: d.export_session(c, request), done
        )
