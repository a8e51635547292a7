"""The front door's requests about logins: the vault's names, saved auth states.

Typed both ways like the others (door/admin.py): each names its answer and its name in
the activity log, and its MCP tool (``mcp``; mcpserver/tools/storage.py) where agents
have one. No request reads or sets a secret's value: only the user does, outside the
service (secrets/vault.py). The CLI's ``state`` command takes these models' ``name``
(cli/schema.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import Field, field_validator

from browserdeck import results as r
from browserdeck.door.request import Mcp, Request
from browserdeck.errors import Forbidden
from browserdeck.secrets import vault

if TYPE_CHECKING:
    from browserdeck.door.call import Call

A = TypeVar("A")

_NAME = Field(
    pattern=vault.NAME_RULE.pattern,
    max_length=64,
    description="the saved state's name (letters, digits, '_', '.', '-'); kept in browserdeck's "
    "data folder, never in a file you can read",
)


class _Login(Request[A]):
    mcp: ClassVar[Mcp | None] = None


class _OnState(_Login[A]):
    """A call on one saved auth state, by its name."""

    name: str = _NAME

    @field_validator("name", mode="before")
    @classmethod
    def _a_name(cls, value: object) -> object:
        # Before the pattern: an agent reads what a name may hold, not a regular expression.
        problem = vault.name_problem(value, "an auth state name") if isinstance(value, str) else None
        if problem:
            raise ValueError(f"{problem} (e.g. github-login)")
        return value


class ListSecrets(_Login[r.Secrets]):
    op = "secrets"
    mcp = Mcp(
        "browser_secrets",
        "List the user's stored secrets (names and allowed origins, never values). To use one, "
        "write <secret>NAME</secret> (or <totp>NAME</totp> for its one-time code) as the text "
        "of browser_type, browser_fill_form or browser_press_key (with ref); it is typed only "
        "on an allowed origin.",
        (),
        group="all",
    )


class SaveAuthState(_OnState[r.AuthState]):
    op = "state-save"
    mcp = Mcp(
        "browser_storage_state",
        "Save the profile's logins under a name: all its cookies, and localStorage, "
        "sessionStorage and IndexedDB of the sites open in its tabs. Load them later or into "
        "another profile with browser_set_storage_state.",
        ("name",),
        group="all",
    )


class LoadAuthState(_OnState[r.AuthStateLoaded]):
    op = "state-load"
    mcp = Mcp(
        "browser_set_storage_state",
        "Load saved logins (browser_storage_state) into this profile: cookies and site "
        "storage are merged in (same names replaced). Into the user's own Chrome, the user "
        "is asked first.",
        ("name",),
        group="all",
    )


class ListAuthStates(_Login[r.AuthStates]):
    op = "states"


class DeleteAuthState(_OnState[r.AuthStateDeleted]):
    op = "state-rm"


# --- asking the user before their own browser's logins change -------------------------

# A question for the person at this machine; True: they said yes. The composition root
# hands one in (the tray's dialog; later the approval channel), or none: then refused.
AskUser = Callable[[str], Awaitable[bool]]
# Set in ``call.data`` once the user said yes (the addon's dialog, or the CLI's prompt).
CONFIRMED = "logins.user-confirmed"
ASK_WITHIN = 120.0


def needs_consent(call: Call[Any]) -> bool:
    """A load of logins into the user's own browser (an extension profile)."""
    from browserdeck import driverspecs

    if not isinstance(call.request, LoadAuthState) or call.driver is None:
        return False
    return driverspecs.spec_of(call.driver).users_own


def refused(profile: str | None, why: str) -> Forbidden:
    return Forbidden(
        f"loading saved logins into {profile!r}, the user's own Chrome, needs the user's yes: "
        f"{why}",
        hint="the user runs `browserdeck state load NAME --profile PROFILE` at a terminal "
        "(it asks there), or answers the tray's question; or load into a managed profile",
        code="needs_user_consent",
    )


class AskBeforeLoginsChange:
    """The addon that asks the user before saved logins go into their own browser."""

    def __init__(self, ask: AskUser | None, *, within: float = ASK_WITHIN) -> None:
        self.ask, self.within = ask, within

    async def before(self, call: Call[Any]) -> None:
        if not needs_consent(call) or call.data.get(CONFIRMED):
            return
        if self.ask is None:
            raise refused(call.profile, "no one can be asked here (no tray app)")
        assert isinstance(call.request, LoadAuthState)
        question = (
            f"{call.caller.label or 'A client'} wants to load the saved logins "
            f"{call.request.name!r} into your own Chrome ({call.profile}). Its cookies and site "
            "storage replace yours for the same sites. Allow?"
        )
        try:
            yes = await asyncio.wait_for(self.ask(question), self.within)
        except TimeoutError:
            yes = False
        if not yes:
            raise refused(call.profile, "the user did not allow it")
        call.data[CONFIRMED] = True
