"""The session recorder: a front-door addon that gives every agent session a timeline.

Every call of an agent session (an MCP session, a client naming itself with
``X-Browserdeck-Session`` or ``X-Browserdeck-Client``, ``browserdeck --client NAME``) is
a step: what it asked (typed text as its length only), on which tab and page, what it
answered or why it failed. An action (a click, typing, a navigation …) also gets:

* a screenshot **before** it, taken in ``before`` on the action's path, so it shows the
  page as acted on: one capture with the boxes of the target and of the password inputs
  in the same round trip (engine/recshot.py); nothing else happens there;
* a screenshot **after** it, started as the call ends (a task of the recorder's own),
  with the console errors, page errors and failed requests since the action began;
* the changes of the page's snapshot it caused, once a snapshot of that tab comes next.

Masking, outlining, captioning, encoding and writing (shots.py, store.py) run in one
worker per session, in order, never on a call's path. The recordings stay within the
artifact limits (store.py). Which session a call belongs to is the ``Caller``'s; a
session ends when the service's sessions registry ends its agent session
(``Sessions.on_end``, ends.py), after ``IDLE_END`` without a call, or when the service
stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browserdeck import results as r
from browserdeck.door.call import Call, Caller
from browserdeck.engine import options as o
from browserdeck.errors import SESSIONS, BrowserdeckError, Hint, NotFound
from browserdeck.recorded import RecordedStep, SessionSummary
from browserdeck.recording.ends import SessionEnds
from browserdeck.recording.store import Removed, Store
from browserdeck.recording.timeline import (
    NO_CHANGE,
    hint_words,
    is_action,
    line_diff,
    recorded,
    redacted_args,
    row_of,
    scrub,
    session_id,
    session_key,
    snapshot_scope,
    summary_of,
    title_of,
    why_not,
)
from browserdeck.util import aio

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.events import ServiceEvents
    from browserdeck.session import EndReason, Session
    from browserdeck.sessions import Sessions

log = logging.getLogger(__name__)

KEY = "recording.step"
BEFORE_WAIT = 3.0  # the before shot's own bound: it never holds an action longer
AFTER_WAIT = 5.0
IDLE_END = 30 * 60.0  # a session with no call this long is ended
MEMORY_STEPS = 1000  # steps of a running session kept in memory (all are on disk)
INFO_EVERY = 2.0  # seconds between two writes of a running session's summary
SETTLE_WAIT = 15.0  # an export waits this long at most for the steps still being written


@dataclass
class Recording:
    """One session: its summary, its recent steps and the work still to do on them."""

    info: SessionSummary
    steps: deque[RecordedStep] = field(default_factory=lambda: deque(maxlen=MEMORY_STEPS))
    next_n: int = 1
    jobs: deque[Coroutine[Any, Any, None]] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    info_written: float = 0.0  # monotonic time its summary was last written
    snapshots: dict[tuple[str, str], str] = field(default_factory=dict)  # (tab, scope) -> text
    awaiting: dict[str, list[RecordedStep]] = field(default_factory=dict)  # tab -> actions since
    shooting: set[asyncio.Task[r.RecordedShot]] = field(default_factory=set)  # after shots

    @property
    def live(self) -> bool:
        return self.info.ended is None


@dataclass
class Pending:
    """What ``before`` left for ``after`` on the call (``call.data[KEY]``)."""

    recording: Recording
    step: RecordedStep
    since: float
    before: r.RecordedShot | None = None
    ref: str | None = None
    shoots: bool = False  # an action that ran past the addons: images before and after


class Recorder:
    """The addon (see the module's docstring); the Sessions view and the exports read it."""

    def __init__(
        self,
        events: ServiceEvents,
        settings: Callable[[], Config] | None = None,
        store: Store | None = None,
        sessions: Callable[[], Sessions] | None = None,
    ) -> None:
        self.events = events
        self._settings = settings
        self.store = store or Store()
        self.tasks = aio.Tasks()
        self.recordings: dict[str, Recording] = {}  # by session id
        self._live: dict[str, str] = {}  # agent session key -> its running recording's id
        self._loaded = False
        self._ends = SessionEnds("session recordings", self._session_ended, sessions)

    # Always on; a benchmark turns it off to compare (bench/bench_recording.py).
    enabled = True

    # --- the addon -----------------------------------------------------------------
    async def before(self, call: Call[Any]) -> None:
        if not self.enabled or not recorded(call.caller):
            return
        self._ends.attach()
        pending = call.data[KEY] = await self._begin(call)
        step = pending.step
        if is_action(step) and call.tab is not None:
            refs = call.request.element_refs() if hasattr(call.request, "element_refs") else []
            pending.ref = refs[0] if refs else None
            pending.shoots = True
            try:
                pending.before = await asyncio.wait_for(
                    call.aside(o.RecordShot(ref=pending.ref)), BEFORE_WAIT
                )
            except Exception as exc:  # never the action's failure: the step says why
                step.shot_note = f"no image before: {why_not(exc)}"
        self._changed(pending.recording, step.n)

    async def _begin(self, call: Call[Any]) -> Pending:
        rec = self._recording(call.caller)
        step = RecordedStep(n=rec.next_n, started=time.time(), op=call.name, pending=True)
        rec.next_n += 1
        rec.steps.append(step)
        rec.info.calls += 1
        rec.info.last = step.started
        step.args = redacted_args(call.request)
        element = await call.element() if call.tab is not None else None
        step.element = scrub(element.describe()) if element is not None else ""
        step.kind, step.title = title_of(call, step.element)
        self._used(rec, call.profile)
        return Pending(rec, step, time.time())

    @staticmethod
    def _used(rec: Recording, profile: str | None) -> None:
        if profile and profile not in rec.info.profiles:
            rec.info.profiles.append(profile)

    async def after(self, call: Call[Any]) -> None:
        pending: Pending | None = call.data.pop(KEY, None)
        if pending is None:
            # Refused before the recorder saw it (another addon, the tab's lookup): a step
            # all the same, the agent saw its error.
            if call.error is None or not self.enabled or not recorded(call.caller):
                return
            pending = await self._begin(call)
        rec, step = pending.recording, pending.step
        step.ms = round((time.perf_counter() - call.started) * 1000, 1)
        step.profile = call.profile or ""
        step.target_id = call.tab.target_id if call.tab is not None else ""
        self._used(rec, call.profile)
        answer, error = call.answer, call.error
        if error is not None:
            step.ok = False
            rec.info.errors += 1
            if isinstance(error, BrowserdeckError):
                step.error = {
                    "code": error.code,
                    "message": scrub(error.message),
                    # As it was told (the tray's calls are told in the API's words).
                    "hint": scrub(error.hint_for(hint_words(call.caller)) or ""),
                }
            elif isinstance(error, asyncio.CancelledError):
                step.error = {"code": "cancelled", "message": "the caller went away", "hint": ""}
            else:
                step.error = {"code": "internal", "message": scrub(str(error)), "hint": ""}
        step.result = summary_of(answer)
        step.url = scrub(str(getattr(answer, "url", None) or ""))
        step.page_title = scrub(str(getattr(answer, "title", None) or ""))
        notes = [getattr(answer, "note", None) or "", *call.notes]
        step.note = scrub("; ".join(dict.fromkeys(n for n in notes if n)))
        after: asyncio.Task[r.RecordedShot] | None = None
        if pending.shoots and call.tab is not None and not getattr(answer, "closed", False):
            # Taken now, as the call ends; processed in the session's order below.
            after = self.tasks.spawn(
                self._shot(call, pending.since), name=f"recording-after-{rec.info.id}-{step.n}"
            )
            rec.shooting.add(after)
            after.add_done_callback(rec.shooting.discard)
        text = getattr(answer, "snapshot", None) if call.name == "snapshot" else None
        scope = snapshot_scope(call.request) if isinstance(text, str) else ""
        self._queue(rec, self._finish(rec, pending, after, text, scope))

    async def stop(self) -> None:
        """The service stops: every session ends, what is queued is finished (up to 5 s)."""
        for key in list(self._live):
            self._end(key, "browserdeck stopped")
        waiting = [rec.idle.wait() for rec in self.recordings.values() if rec.worker is not None]
        if waiting:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waiting), 5.0)
        await self.tasks.cancel_all()

    # --- sessions ------------------------------------------------------------------
    def _recording(self, caller: Caller) -> Recording:
        key = session_key(caller)
        now = time.time()
        for other in list(self._live):  # sessions idle past IDLE_END end now
            rec = self.recordings.get(self._live[other])
            if rec is not None and now - rec.info.last > IDLE_END:
                self._end(other, "idle")
        sid = self._live.get(key)
        if sid is not None:
            return self.recordings[sid]
        sid = session_id(caller, key, now)
        while sid in self.recordings:
            sid += "-1"
        info = SessionSummary(id=sid, key=key, agent=scrub(caller.label or key), via=caller.via,
                           started=now, last=now)
        rec = Recording(info)
        rec.idle.set()
        self.recordings[sid] = rec
        self._live[key] = sid
        return rec  # its folder and summary are written with its first step (off the path)

    async def _session_ended(self, session: Session, reason: EndReason) -> None:
        rec = self.recordings.get(self._live.get(session.id, ""))
        if rec is None:
            return
        self._end(session.id, reason.words)
        # Its tabs close right after this: the last action's image after is taken first.
        if rec.shooting:
            await asyncio.wait(set(rec.shooting), timeout=AFTER_WAIT)

    def _end(self, key: str, why: str) -> None:
        sid = self._live.pop(key, None)
        rec = self.recordings.get(sid or "")
        if rec is None:
            return
        rec.info.ended = time.time()
        log.info("recording %s ended (%s): %d calls", rec.info.id, why, rec.info.calls)

        async def done() -> None:
            # After its last steps are written: the summary, and memory given back (an
            # ended session is read from its folder).
            await asyncio.to_thread(self.store.write_info, rec.info)
            rec.steps.clear()
            rec.snapshots.clear()
            rec.awaiting.clear()
            self._changed(rec, None)

        self._queue(rec, done())

    def _load(self, found: list[SessionSummary] | None = None) -> None:
        """The sessions on disk (an earlier run's), once."""
        if self._loaded:
            return
        self._loaded = True
        for info in self.store.load() if found is None else found:
            if info.id not in self.recordings:
                rec = Recording(info, next_n=info.calls + 1)
                rec.idle.set()
                self.recordings[info.id] = rec
        self._prune()

    # --- the worker ----------------------------------------------------------------
    def _queue(self, rec: Recording, job: Coroutine[Any, Any, None]) -> None:
        rec.jobs.append(job)
        rec.idle.clear()
        if rec.worker is None or rec.worker.done():
            rec.worker = self.tasks.spawn(self._work(rec), name=f"recording-{rec.info.id}")

    async def _work(self, rec: Recording) -> None:
        try:
            while rec.jobs:
                job = rec.jobs.popleft()
                try:
                    await job
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("recording %s: a step could not be written", rec.info.id)
        finally:
            while rec.jobs:  # cancelled: close what never ran (no "never awaited")
                rec.jobs.popleft().close()
            rec.idle.set()

    async def _shot(self, call: Call[Any], since: float) -> r.RecordedShot:
        shot: r.RecordedShot = await asyncio.wait_for(
            call.aside(o.RecordShot(since=since)), AFTER_WAIT
        )
        return shot

    async def _finish(
        self,
        rec: Recording,
        pending: Pending,
        after: asyncio.Task[r.RecordedShot] | None,
        snapshot: str | None,
        scope: str,
    ) -> None:
        step, sid = pending.step, rec.info.id
        if not self._loaded:  # the earlier runs' sessions, read once, off the loop
            self._load(await asyncio.to_thread(self.store.load))
        shot = None
        if after is not None:
            try:
                shot = await after
            except Exception as exc:
                step.shot_note = "; ".join(
                    n for n in (step.shot_note, f"no image after: {why_not(exc)}") if n
                )
        if pending.before is not None:
            step.before = await self._picture(sid, step, pending.before, "before", pending.ref)
            if pending.before.target is not None:
                t = pending.before.target
                step.target = [t.x, t.y, t.width, t.height]
        if shot is not None:
            step.after = await self._picture(sid, step, shot, "after", None)
            step.console = [scrub(f"{e.type}: {e.text}")[:500] for e in shot.console_errors]
            step.console += [scrub(f"{e.name}: {e.message}")[:500] for e in shot.page_errors]
            step.failed = [
                scrub(f"{e.method} {e.url} — {e.failure or e.status}")[:500]
                for e in shot.failed_requests
            ]
        if snapshot is not None and step.target_id:
            await self._diff(rec, step, scrub(snapshot), scope)
        elif is_action(step) and step.target_id and step.ok:
            rec.awaiting.setdefault(step.target_id, []).append(step)
        step.pending = False
        # The disk on a thread: the summary's atomic write syncs, and the loop serves the
        # agent's next call meanwhile. The summary is rewritten at most every INFO_EVERY s
        # (and when the session ends); the rows are the record.
        now = time.monotonic()
        summary = now - rec.info_written >= INFO_EVERY
        if summary:
            rec.info_written = now
        live = set(self._live.values())
        infos = [r.info for r in self.recordings.values()]

        def write() -> tuple[list[str], list[Removed]]:
            self.store.append(sid, row_of(step))
            if summary:
                self.store.write_info(rec.info)
            return self.store.prune(infos, live)

        self._pruned(*await asyncio.to_thread(write))
        self._changed(rec, step.n)

    async def _picture(
        self, sid: str, step: RecordedStep, shot: r.RecordedShot, which: str, ref: str | None
    ) -> str:
        if not shot.jpeg:
            return ""
        name = f"{step.n:05d}-{which}.jpg"
        caption = f"{step.n} · {which} · {step.title}"
        width = shot.viewport.width if shot.viewport is not None else None

        def work() -> None:
            from browserdeck.recording import shots  # Pillow: imported by the first image

            picture = shots.finish(
                shot.jpeg or "", css_width=width, masks=shot.masks,
                target=shot.target, ref=ref, caption=caption,
            )
            self.store.write_image(sid, name, picture.data)

        try:
            await asyncio.to_thread(work)
        except Exception as exc:
            step.shot_note = f"the {which} image could not be written: {exc}"
            return ""
        return name

    async def _diff(self, rec: Recording, step: RecordedStep, text: str, scope: str) -> None:
        tab = step.target_id
        previous = rec.snapshots.get((tab, scope))
        rec.snapshots[(tab, scope)] = text
        caused = rec.awaiting.pop(tab, []) if scope == "" else []
        if previous is None:
            return
        changes = await asyncio.to_thread(line_diff, previous, text) or NO_CHANGE
        if not caused:  # no action of this session since: the page changed by itself
            step.diff = changes
            return
        last, earlier = caused[-1], caused[:-1]
        if earlier:  # several actions, one snapshot after them: shown once, on the last
            steps = ", ".join(str(s.n) for s in earlier)
            changes = f"(with step{'s' if len(earlier) > 1 else ''} {steps}: no snapshot between)\n{changes}"
        for one, diff in [(s, f"(shown with step {last.n})") for s in earlier] + [(last, changes)]:
            one.diff = diff
            self.store.append(rec.info.id, {"n": one.n, "diff": diff})
            self._changed(rec, one.n)

    def _prune(self) -> None:
        live = set(self._live.values())
        self._pruned(*self.store.prune([rec.info for rec in self.recordings.values()], live))

    def _pruned(self, gone: list[str], removed: list[Removed]) -> None:
        """What keeping the limit removed: sessions forgotten, steps told."""
        for sid in gone:
            self.recordings.pop(sid, None)
        for item in removed:
            rec = self.recordings.get(item.session)
            if rec is None:
                continue
            note = "an image was removed to keep within artifactsMaxMb"
            patch: dict[str, Any] = {"n": item.step, "shotNote": note}
            for step in rec.steps:
                if step.n == item.step:
                    step.shot_note = note
                    for which in ("before", "after"):
                        if getattr(step, which) == item.file:
                            setattr(step, which, "")
            patch.update({w: "" for w in ("before", "after") if item.file.endswith(f"-{w}.jpg")})
            self.store.append(item.session, patch)
        if gone:
            self._changed(None, None)

    def _changed(self, rec: Recording | None, step: int | None) -> None:
        self.events.recording.send(session=rec.info.id if rec else None, step=step)

    # --- what views and exports read -----------------------------------------------
    def sessions(self) -> list[SessionSummary]:
        """Every recorded session, the newest first."""
        self._load()
        return sorted((rec.info for rec in self.recordings.values()), key=lambda i: -i.started)

    def timeline(self, sid: str) -> tuple[SessionSummary, list[RecordedStep]]:
        """A session and its steps (a running one's as they are now)."""
        rec = self._get(sid)
        steps = list(rec.steps)
        if rec.live and (not steps or steps[0].n == 1):
            return rec.info, steps  # all of it is still in memory
        on_disk = {s.n: s for s in self.store.steps(rec.info.id)}
        on_disk.update({s.n: s for s in steps if s.pending})
        return rec.info, [on_disk[n] for n in sorted(on_disk)]

    def image(self, sid: str, name: str) -> bytes | None:
        return self.store.image(self._get(sid).info.id, name)

    async def settled(self, sid: str, within: float = SETTLE_WAIT) -> None:
        """Once every step of the session so far is written (or ``within`` seconds passed:
        an agent that never pauses must not hold its export for ever)."""
        rec = self._get(sid)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(rec.idle.wait(), within)

    def _get(self, sid: str) -> Recording:
        self._load()
        rec = self.recordings.get(sid)
        if rec is None:
            # The key of a running session names it too (an agent asking for its own).
            rec = self.recordings.get(self._live.get(sid, ""))
        if rec is None:
            raise NotFound(
                f"no recorded session {sid!r}",
                hint=Hint("list the recorded sessions ({sessions})", sessions=SESSIONS)
                + ", or the panel's Sessions view",
                code="session_not_found",
            )
        return rec
