"""Status, lifecycle, profiles and tabs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from browserdeck import __version__
from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of
from browserdeck.door import admin
from browserdeck.tabs import Tab

router = APIRouter()

# Only the keys the answer set (results.py): the JSON is the service's, no null it did not
# send. A tab leaves out a status it does not know.
WIRE: dict[str, Any] = {"response_model_exclude_unset": True}
TABS: dict[str, Any] = {"response_model_exclude_none": True}

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]


@router.get(
    "/health",
    summary="Liveness and the browser engine's state; no token needed. ok is false while "
    "the engine (its Playwright driver) is starting or restarting",
    response_model=r.Health,
    **WIRE,
)
async def health(request: Request) -> r.Health:
    engine = deck_of(request).engine_status()
    return r.Health(ok=engine.state == "running", version=__version__, engine=engine)


@router.get(
    "/", summary="Status of a profile (and of the browser engine)", response_model=r.Status, **WIRE
)
async def status(request: Request, profile: ProfileQ = None) -> r.Status:
    return await deck_of(request).status(caller_of(request), profile)


@router.post(
    "/start",
    summary="Launch (managed), start the relay (extension) or attach (remote)",
    response_model=r.ProfileStatus,
    **WIRE,
)
async def start(request: Request, profile: ProfileQ = None) -> r.ProfileStatus:
    return await deck_of(request).start(caller_of(request), profile)


@router.post(
    "/stop",
    summary="Stop the profile's browser (managed: Browser.close, then kill)",
    response_model=r.ProfileStatus,
    **WIRE,
)
async def stop(request: Request, profile: ProfileQ = None) -> r.ProfileStatus:
    return await deck_of(request).stop(caller_of(request), profile)


@router.post(
    "/reset-profile",
    summary="Kill an orphaned browser holding the profile's CDP port",
    response_model=r.ProfileReset,
    **WIRE,
)
async def reset_profile(request: Request, profile: ProfileQ = None) -> r.ProfileReset:
    return await deck_of(request).reset_profile(caller_of(request), profile)


@router.get(
    "/profiles", summary="All profiles with their status", response_model=r.Profiles, **WIRE
)
async def profiles(request: Request) -> r.Profiles:
    return await deck_of(request).profiles(caller_of(request))


@router.post(
    "/profiles/create",
    summary="Create a profile (managed profiles get a CDP port)",
    response_model=r.ProfileStatus,
    **WIRE,
)
async def create_profile(request: Request, body: admin.CreateProfile) -> r.ProfileStatus:
    return await deck_of(request).create_profile(caller_of(request), body)


@router.post(
    "/profiles/token",
    summary="Store a remote profile's service token (secret store)",
    response_model=r.TokenStored,
    **WIRE,
)
async def set_service_token(
    request: Request, body: admin.StoreToken, profile: ProfileQ = None
) -> r.TokenStored:
    return await deck_of(request).store_token(caller_of(request), profile, body.token)


@router.post(
    "/sessions/release",
    summary="Release an agent session's pooled remote browsers",
    response_model=r.SessionReleased,
    **WIRE,
)
async def release_session(request: Request, body: admin.ReleaseSession) -> r.SessionReleased:
    return await deck_of(request).release_session(caller_of(request), body.session)


@router.delete(
    "/profiles/{name}",
    summary="Delete a profile (stops it; removes managed user data)",
    response_model=r.ProfileDeleted,
    **WIRE,
)
async def delete_profile(request: Request, name: str) -> r.ProfileDeleted:
    return await deck_of(request).delete_profile(caller_of(request), name)


@router.get(
    "/tabs", summary="Page tabs of the profile's browser", response_model=r.TabList, **TABS
)
async def tabs(request: Request, profile: ProfileQ = None) -> r.TabList:
    return await deck_of(request).tabs(caller_of(request), profile)


@router.post("/tabs/open", summary="Open a tab", response_model=Tab, **TABS)
async def open_tab(
    request: Request,
    body: Annotated[admin.OpenTab | None, Body()] = None,
    profile: ProfileQ = None,
) -> Tab:
    url = (body or admin.OpenTab()).url
    return await deck_of(request).open_tab(caller_of(request), profile, url)


@router.post(
    "/tabs/focus", summary="Bring a tab to the front", response_model=r.Focused, **WIRE
)
async def focus_tab(request: Request, body: admin.FocusTab, profile: ProfileQ = None) -> r.Focused:
    return await deck_of(request).focus_tab(caller_of(request), profile, body.target_id)


@router.delete(
    "/tabs/{target_id}",
    summary="Close a tab by targetId or unique prefix",
    response_model=r.Closed,
    **WIRE,
)
async def close_tab(request: Request, target_id: str, profile: ProfileQ = None) -> r.Closed:
    return await deck_of(request).close_tab(caller_of(request), profile, target_id)


@router.post(
    "/tabs/keep",
    summary="Keep a tab open when the agent that opened it ends (or not)",
    response_model=r.Kept,
    **WIRE,
)
async def keep_tab(request: Request, body: admin.KeepTab, profile: ProfileQ = None) -> r.Kept:
    deck = deck_of(request)
    return await deck.keep_tab(caller_of(request), profile, body.target_id, body.keep)
