"""The user takes a profile's browser over: agents' calls on it wait, then resume.

*Take over* (the panel) marks a profile as the user's for a while. This addon sits at the
front door before the recorder: an agent's call that would act on or read that browser
(every call on a tab, opening, focusing or closing one) waits there until the user
hands it back, up to ``takeOverWaitSeconds``; past that, or at once with 0, it is refused
with ``user_took_over`` ("the user has taken over this browser; try again later").
Reads that touch no page (status, the tab list, profiles) pass.

After the hand-back, each agent session that used the profile before is told once, with
its next answer's note, that the user acted in the browser meanwhile and that refs from
before may be stale. The user's own calls (the panel, the CLI) are never held.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browserdeck.door.request import TabRequest
from browserdeck.errors import SNAPSHOT, Hint, Unavailable
from browserdeck.recording.ends import SessionEnds
from browserdeck.session import SessionEndedError, session_key
from browserdeck.tabs import QUIET_CLIENTS

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.door.call import Call
    from browserdeck.events import ServiceEvents
    from browserdeck.session import EndReason, Session
    from browserdeck.sessions import Sessions

# The service's calls that act on a profile's browser (a tab's calls are all TabRequests).
HELD_OPS = frozenset({"open-tab", "close-tab", "focus-tab", "run-code"})
# Sessions remembered for the note after a hand-back (an ended session is forgotten at
# its end; clients without a session only past this).
SEEN_MAX = 10_000
NOTE = (
    "the user took this browser over{when} and may have changed its pages; refs from "
    "before may be stale: take a new snapshot first"
)


@dataclass
class Taken:
    """One take-over of a profile: since when, and the event its hand-back sets."""

    since: float
    released: asyncio.Event = field(default_factory=asyncio.Event)
    until: float | None = None


class TakeOvers:
    """Which profiles the user has taken over, and the addon that holds agents off them."""

    def __init__(
        self,
        events: ServiceEvents,
        settings: Callable[[], Config] | None = None,
        sessions: Callable[[], Sessions] | None = None,
    ) -> None:
        self.events = events
        self._settings = settings
        self._taken: dict[str, Taken] = {}
        self._last: dict[str, Taken] = {}  # per profile, the latest take-over (ended or not)
        self._seen: dict[tuple[str, str], float] = {}  # (profile, session) -> its last call
        self._told: dict[tuple[str, str], float] = {}  # (profile, session) -> take-over told
        # Calls waiting for the hand-back, by session: its end refuses them at once.
        self._holding: dict[str, set[asyncio.Future[EndReason]]] = {}
        # An ended session is not told any more: what was kept of it goes.
        self._ends = SessionEnds("take-over notes", self._session_ended, sessions)

    # --- what the panel does (through Deck) ----------------------------------------
    def take(self, profile: str) -> Taken:
        taken = self._taken.get(profile)
        if taken is None:
            taken = self._taken[profile] = self._last[profile] = Taken(time.time())
            self.events.takeover.send(profile=profile, taken=True, detail=None)
        return taken

    def hand_back(self, profile: str) -> bool:
        taken = self._taken.pop(profile, None)
        if taken is None:
            return False
        taken.until = time.time()
        taken.released.set()
        self.events.takeover.send(profile=profile, taken=False, detail=None)
        return True

    def taken(self, profile: str) -> Taken | None:
        return self._taken.get(profile)

    @property
    def wait_seconds(self) -> float:
        cfg = self._settings() if self._settings is not None else None
        return float(getattr(cfg, "take_over_wait_seconds", 30))

    # --- the addon -----------------------------------------------------------------
    async def before(self, call: Call[Any]) -> None:
        caller = call.caller
        if not caller.is_agent or caller.client in QUIET_CLIENTS or not call.profile:
            return
        if not isinstance(call.request, TabRequest) and call.name not in HELD_OPS:
            return
        self._ends.attach()
        # The session as the registry knows it (its end forgets it), else the client.
        profile, key = call.profile, session_key(caller.session) or caller.client or ""
        taken = self._taken.get(profile)
        if taken is not None:
            try:
                ended = await self._hold(taken, key)
            except TimeoutError:
                raise Unavailable(
                    f"the user has taken over this browser (profile {profile!r}); try again "
                    "later",
                    hint=Hint(
                        "wait a minute and retry; when the user hands it back, take a new "
                        "snapshot ({snapshot}) first: they may have changed the page",
                        snapshot=SNAPSHOT,
                    ),
                    code="user_took_over",
                ) from None
            if ended is not None:
                raise SessionEndedError(
                    "this agent session ended while its call waited for the user to hand "
                    f"the browser back: {ended.words}",
                    hint="start a new session to go on; take a new snapshot first",
                )
        last = self._last.get(profile)
        seen = self._seen.get((profile, key))
        if len(self._seen) > SEEN_MAX:  # sessions long gone: forget the oldest half
            for old in sorted(self._seen, key=self._seen.__getitem__)[: SEEN_MAX // 2]:
                del self._seen[old]
                self._told.pop(old, None)
        self._seen[(profile, key)] = time.time()
        if (
            last is not None
            and seen is not None
            and seen < (last.until or time.time())
            and self._told.get((profile, key)) != last.since
        ):
            self._told[(profile, key)] = last.since
            since = time.strftime("%H:%M:%S", time.localtime(last.since))
            call.note(NOTE.format(when=f" at {since}"))

    async def _hold(self, taken: Taken, key: str) -> EndReason | None:
        """Wait for the hand-back, up to ``takeOverWaitSeconds`` (TimeoutError past it);
        a session that ends meanwhile stops waiting at once: why it ended."""
        wait = self.wait_seconds
        if wait <= 0:
            raise TimeoutError
        ended: asyncio.Future[EndReason] = asyncio.get_running_loop().create_future()
        holding = self._holding.setdefault(key, set())
        holding.add(ended)
        released = asyncio.ensure_future(taken.released.wait())
        either: set[asyncio.Future[Any]] = {released, ended}
        try:
            await asyncio.wait(either, timeout=wait, return_when="FIRST_COMPLETED")
        finally:
            released.cancel()
            holding.discard(ended)
            if not holding and self._holding.get(key) is holding:
                del self._holding[key]
        if ended.done():
            return ended.result()
        if not taken.released.is_set():
            raise TimeoutError
        return None

    def _session_ended(self, session: Session, reason: EndReason) -> None:
        for held in self._holding.pop(session.id, set()):
            if not held.done():
                held.set_result(reason)
        for seen in [k for k in self._seen if k[1] == session.id]:
            del self._seen[seen]
            self._told.pop(seen, None)
