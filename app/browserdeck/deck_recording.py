"""The front door's calls about recorded sessions, the live view and taking a browser over.

A part of ``Deck`` (deck.py), in a module of its own for the size rule: ``Deck`` inherits
these. The recorder and the take-over are addons the composition root adds to the
service (``recording/``); ``Deck`` finds them among the addons. The calls (list, read and
export sessions, take over, hand back) pass the addons as every call does; the views the
panel reads without a call (the sessions, a step's image, the live frames) do not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck import recorded as rec
from browserdeck.door import admin
from browserdeck.driverspecs import spec_or_default
from browserdeck.errors import Disabled, Forbidden
from browserdeck.recording.recorder import Recorder
from browserdeck.recording.takeover import TakeOvers

if TYPE_CHECKING:
    from browserdeck.door.addons import Addons
    from browserdeck.door.call import Call, Caller
    from browserdeck.door.request import Request
    from browserdeck.profiles import ProfileContext
    from browserdeck.recording.live import Frame, LiveView
    from browserdeck.service import Service

A = TypeVar("A")
T = TypeVar("T")


class RecordingCalls:
    """``Deck``'s calls about recorded sessions, live views and take-overs."""

    service: Service

    if TYPE_CHECKING:

        @property
        def addons(self) -> Addons: ...

        async def _through(
            self,
            caller: Caller,
            request: Request[A],
            perform: Callable[[Call[A], ProfileContext | None], Awaitable[A]],
            *,
            profile: str | None = None,
            scoped: bool = True,
        ) -> A: ...

    def _addon(self, kind: type[T], what: str) -> T:
        for addon in self.addons:
            if isinstance(addon, kind):
                return addon
        raise Disabled(
            f"{what} is not part of this browserdeck (its addon was not added)",
            hint="run browserdeck as `browserdeck serve` or the tray app",
            code="not_available",
        )

    @property
    def recorder(self) -> Recorder:
        return self._addon(Recorder, "session recording")

    @property
    def takeovers(self) -> TakeOvers:
        return self._addon(TakeOvers, "taking a browser over")

    # --- views: what the Sessions view reads (no call) ---------------------------------
    def recorded_sessions(self) -> list[rec.SessionSummary]:
        return self.recorder.sessions()

    def recorded_session(self, session: str) -> rec.RecordedSession:
        info, steps = self.recorder.timeline(session)
        return rec.RecordedSession(session=info, steps=steps)

    def recorded_image(self, session: str, name: str) -> bytes | None:
        """A step's image (``RecordedStep.before`` / ``after``), JPEG bytes."""
        return self.recorder.image(session, name)

    # --- calls ---------------------------------------------------------------------------
    async def list_sessions(self, caller: Caller) -> rec.RecordedSessions:
        async def perform(call: Call[rec.RecordedSessions], _: Any) -> rec.RecordedSessions:
            return rec.RecordedSessions(sessions=self.recorded_sessions())

        return await self._through(caller, admin.ListSessions(), perform, scoped=False)

    async def get_session(self, caller: Caller, session: str) -> rec.RecordedSession:
        async def perform(call: Call[rec.RecordedSession], _: Any) -> rec.RecordedSession:
            return self.recorded_session(session)

        request = admin.GetSession(session=session)
        return await self._through(caller, request, perform, scoped=False)

    async def export_session(self, caller: Caller, request: admin.ExportSession) -> rec.SessionExport:
        """Write a recorded session as a Playwright trace, an HTML report or a WebM."""
        from browserdeck.recording import exports

        async def perform(call: Call[rec.SessionExport], _: Any) -> rec.SessionExport:
            path = await exports.export(self.recorder, request.session, request.format, self)
            return rec.SessionExport(
                session=request.session, format=request.format, path=str(path),
                bytes=path.stat().st_size,
            )

        return await self._through(caller, request, perform, scoped=False)

    async def take_over(self, caller: Caller, profile: str | None) -> rec.TakeOverState:
        """The user takes the profile's browser: agents' calls on it wait (takeover.py)."""

        async def perform(call: Call[rec.TakeOverState], ctx: Any) -> rec.TakeOverState:
            taken = self.takeovers.take(ctx.name)
            return await self._take_over_state(ctx, taken.since)

        return await self._through(caller, admin.TakeOver(), perform, profile=profile)

    async def hand_back(self, caller: Caller, profile: str | None) -> rec.TakeOverState:
        async def perform(call: Call[rec.TakeOverState], ctx: Any) -> rec.TakeOverState:
            if caller.is_agent and self.takeovers.taken(ctx.name) is not None:
                # The person took the browser: an agent cannot take it back from them.
                raise Forbidden(
                    f"the user has taken over profile {ctx.name!r}; only they hand it back",
                    hint="wait: your calls on it go on once the user hands it back in the "
                    "tray's panel (Hand back)",
                    code="taken_over",
                )
            self.takeovers.hand_back(ctx.name)
            return await self._take_over_state(ctx, None)

        return await self._through(caller, admin.HandBack(), perform, profile=profile)

    def taken_over(self, profile: str) -> float | None:
        """Since when the user has the profile's browser (None: the agents have it)."""
        taken = self.takeovers.taken(profile)
        return taken.since if taken is not None else None

    async def _take_over_state(self, ctx: ProfileContext, since: float | None) -> rec.TakeOverState:
        status = await ctx.status()
        # Headless where browserdeck launched it: no window to hand the user.
        headless = bool(status.get("headless")) and spec_or_default(ctx.driver).launches
        why = None
        if headless:
            reason = status.get("headlessReason") or "the headless setting"
            why = (
                f"this browser runs headless ({reason}), so it has no window of its own: use "
                "it in the panel's live view, which passes your clicks, scrolling and typing "
                "to the page"
            )
        return rec.TakeOverState(
            profile=ctx.name, taken=since is not None, since=since, window=not headless, why=why
        )

    async def watch_tab(
        self, caller: Caller, profile: str | None, target: str | None,
        on_frame: Callable[[Frame], None], *, fps: float | None = None,
    ) -> LiveView:
        """A live view of the tab (recording/live.py) until its ``stop()``; never starts a
        browser. The panel opens one while it shows a tab."""
        # Imported here: its CDP client (websockets' client half) is not on serve's path.
        from browserdeck.recording.live import LiveView

        ctx = self.service.profile(profile)
        ctx.refuse_if_not_running()
        target_id = await ctx.resolve_target(target, caller)
        kwargs = {"fps": fps} if fps else {}
        view = LiveView(ctx.cdp_url, target_id, ctx.headers, on_frame, **kwargs)
        await view.start()
        return view
