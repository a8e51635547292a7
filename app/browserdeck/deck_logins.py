"""The front door's calls about logins: the vault's names and saved auth states.

A part of ``Deck`` (deck.py), in a module of its own for the size rule: ``Deck``
inherits these. Each call passes the addons as every call does. Loading logins into
the user's own browser needs their yes (``door/logins.py``: the addon that asks; here
the check that someone did), which the CLI's own prompt may give (``confirmed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from browserdeck import authstates
from browserdeck import results as r
from browserdeck.door import logins
from browserdeck.door.call import Call, Caller
from browserdeck.secrets import vault as vaults

if TYPE_CHECKING:
    from browserdeck.door.request import Request
    from browserdeck.engine import Engine
    from browserdeck.profiles import ProfileContext
    from browserdeck.service import Service

A = TypeVar("A")
# A whole save or load: every page's part is bounded on its own (engine/authstate.py).
STATE_DEADLINE = 60.0


class LoginCalls:
    """``Deck``'s calls about secrets and auth states."""

    service: Service

    if TYPE_CHECKING:

        async def _through(
            self,
            caller: Caller,
            request: Request[A],
            perform: Callable[[Call[A], ProfileContext | None], Awaitable[A]],
            *,
            profile: str | None = None,
            scoped: bool = True,
            data: dict[str, Any] | None = None,
        ) -> A: ...

    async def _engine(self, ctx: ProfileContext, caller: Caller) -> tuple[Engine, str]:
        cdp_url = await ctx.ensure_browser(caller)
        return await self.service.engine_ready(), cdp_url

    async def secrets(self, caller: Caller) -> r.Secrets:
        """The vault's names and origins (never a value)."""

        async def perform(call: Call[r.Secrets], _: ProfileContext | None) -> r.Secrets:
            return r.Secrets(
                secrets=[
                    r.SecretEntry(name=s.name, origins=list(s.origins), value=s.value, totp=s.totp)
                    for s in vaults.shared().entries()
                ]
            )

        return await self._through(caller, logins.ListSecrets(), perform, scoped=False)

    async def save_auth_state(
        self, caller: Caller, profile: str | None, request: logins.SaveAuthState
    ) -> r.AuthState:
        """The profile's cookies and its open origins' storage, saved as ``request.name``."""
        authstates.check_name(request.name)

        async def perform(call: Call[r.AuthState], ctx: ProfileContext | None) -> r.AuthState:
            assert ctx is not None
            engine, cdp_url = await self._engine(ctx, caller)
            from browserdeck.engine import authstate

            async with asyncio.timeout(STATE_DEADLINE):
                state = await authstate.collect(engine.pool, cdp_url, ctx.headers)
            problems = state.pop("problems")
            saved = authstates.save(request.name, ctx.name, state)
            saved.problems = problems
            return saved

        return await self._through(caller, request, perform, profile=profile)

    async def load_auth_state(
        self,
        caller: Caller,
        profile: str | None,
        request: logins.LoadAuthState,
        *,
        confirmed: bool = False,
    ) -> r.AuthStateLoaded:
        """Merge the saved state ``request.name`` into the profile. Into the user's own
        browser only with their yes (an addon asked, or ``confirmed``: the CLI did)."""
        authstates.check_name(request.name)

        async def perform(
            call: Call[r.AuthStateLoaded], ctx: ProfileContext | None
        ) -> r.AuthStateLoaded:
            assert ctx is not None
            if logins.needs_consent(call) and not call.data.get(logins.CONFIRMED):
                raise logins.refused(ctx.name, "no one asked them")
            state = authstates.load(request.name)
            engine, cdp_url = await self._engine(ctx, caller)
            from browserdeck.engine import authstate

            async with asyncio.timeout(STATE_DEADLINE):
                problems = await authstate.restore(engine.pool, cdp_url, ctx.headers, state)
            summary = authstates.summary(state)
            self.service.events.tabs_changed.send(profile=ctx.name)
            return r.AuthStateLoaded(
                **summary.model_dump(exclude={"problems"}), loaded_into=ctx.name, problems=problems
            )

        # The user said yes at their terminal (the CLI's prompt): no one else is asked.
        data = {logins.CONFIRMED: True} if confirmed else None
        return await self._through(caller, request, perform, profile=profile, data=data)

    async def auth_states(self, caller: Caller) -> r.AuthStates:
        async def perform(call: Call[r.AuthStates], _: ProfileContext | None) -> r.AuthStates:
            return r.AuthStates(states=authstates.listed())

        return await self._through(caller, logins.ListAuthStates(), perform, scoped=False)

    async def delete_auth_state(self, caller: Caller, name: str) -> r.AuthStateDeleted:
        request = logins.DeleteAuthState.of({"name": name}, where="state rm")

        async def perform(
            call: Call[r.AuthStateDeleted], _: ProfileContext | None
        ) -> r.AuthStateDeleted:
            if not authstates.delete(name):
                authstates.load(name)  # says plainly which names there are
            return r.AuthStateDeleted(deleted=name)

        return await self._through(caller, request, perform, scoped=False)
