"""Secrets (names only), cookies and web storage, saved auth states.

No route reads or sets a secret's value: ``GET /secrets`` lists names and origins; the
user sets values with the CLI, which writes the vault itself, or in the settings
dialog (secrets/vault.py). ``POST /states/load`` into the user's own Chrome needs their yes: the
tray asks (an addon), or the CLI asked at its terminal, which it says with
``X-Browserdeck-Confirmed: state-load``, believed only over the API's Unix socket (the
kernel vouches that the caller runs as the user) from the CLI.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Request

from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.api.routes_engine import WIRE, ProfileQ, TargetQ, _on_tab
from browserdeck.api.security import PEER_UID
from browserdeck.door import logins
from browserdeck.engine import storage as s
from browserdeck.secrets import vault

router = APIRouter(tags=["logins"])

CONFIRMED_HEADER = "x-browserdeck-confirmed"


@router.get("/secrets", summary="The user's secrets: names and origins, never values", **WIRE)
async def secrets(request: Request) -> r.Secrets:
    return await deck_of(request).secrets(caller_of(request))


@router.post(
    "/storage",
    summary="Cookies and localStorage/sessionStorage of a tab: "
    + ", ".join(s.KINDS),
    response_model=r.Stored,
    **WIRE,
)
async def storage(
    request: Request,
    body: Annotated[s.Storage, Body()],
    profile: ProfileQ = None,
    target_id: TargetQ = None,
) -> r.Stored:
    return await _on_tab(request, profile, target_id, body)


@router.get("/states", summary="Saved auth states (what each holds, no values)", **WIRE)
async def states(request: Request) -> r.AuthStates:
    return await deck_of(request).auth_states(caller_of(request))


@router.post(
    "/states/save",
    summary="Save the profile's cookies and its open sites' storage under a name",
    response_model=r.AuthState,
    **WIRE,
)
async def save_state(
    request: Request, body: logins.SaveAuthState, profile: ProfileQ = None
) -> r.AuthState:
    return await deck_of(request).save_auth_state(caller_of(request), profile, body)


@router.post(
    "/states/load",
    summary="Merge a saved auth state into a profile (the user's own Chrome: asks them)",
    response_model=r.AuthStateLoaded,
    **WIRE,
)
async def load_state(
    request: Request, body: logins.LoadAuthState, profile: ProfileQ = None
) -> r.AuthStateLoaded:
    caller = caller_of(request)
    confirmed = (
        request.headers.get(CONFIRMED_HEADER) == "state-load"
        and PEER_UID in request.scope
        and caller.via == "cli"
    )
    deck = deck_of(request)
    return await deck.load_auth_state(caller, profile, body, confirmed=confirmed)


@router.delete("/states/{name}", summary="Delete a saved auth state", **WIRE)
async def delete_state(
    request: Request,
    name: Annotated[str, Path(pattern=vault.NAME_RULE.pattern, max_length=64)],
) -> r.AuthStateDeleted:
    return await deck_of(request).delete_auth_state(caller_of(request), name)
