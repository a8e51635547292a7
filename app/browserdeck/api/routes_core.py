"""Status, lifecycle, profiles and tabs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, Field

from browserdeck import __version__
from browserdeck.api.deps import client_of, note, profile_of, service_of

router = APIRouter()

ProfileQ = Annotated[str | None, Query(description="profile name; default: defaultProfile")]


def _engine_status(request: Request) -> dict[str, Any]:
    engine = service_of(request).engine
    if engine is None:
        return {"state": "stopped", "driverPid": None, "restarts": 0, "lastFailure": None}
    return engine.status()


@router.get(
    "/health",
    summary="Liveness and the browser engine's state; no token needed. ok is false while "
    "the engine (its Playwright driver) is restarting",
)
async def health(request: Request) -> dict[str, Any]:
    engine = _engine_status(request)
    return {"ok": engine["state"] == "running", "version": __version__, "engine": engine}


@router.get("/", summary="Status of a profile (and of the browser engine)")
async def status(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    service = service_of(request)
    out = await profile_of(request, profile).status()
    out["defaultProfile"] = service.config.default_profile
    out["configProblem"] = service.config_problem
    out["engine"] = _engine_status(request)
    return out


@router.post("/start", summary="Launch (managed), start the relay (extension) or attach (remote)")
async def start(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    return await profile_of(request, profile).start()


@router.post("/stop", summary="Stop the profile's browser (managed: Browser.close, then kill)")
async def stop(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    return await profile_of(request, profile).stop()


@router.post("/reset-profile", summary="Kill an orphaned browser holding the profile's CDP port")
async def reset_profile(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    return await profile_of(request, profile).reset()


@router.get("/profiles", summary="All profiles with their status")
async def profiles(request: Request) -> dict[str, Any]:
    service = service_of(request)
    return {"profiles": await service.list_profiles(), "defaultProfile": service.config.default_profile}


class CreateProfile(BaseModel):
    name: str = Field(description="lowercase letters, digits and '-', at most 64")
    color: str | None = Field(None, description="#RRGGBB; default: the next palette colour")
    cdpUrl: str | None = Field(None, description="makes a remote profile")
    driver: str | None = Field(None, description="managed (default), extension or remote")
    headless: bool | None = None
    token: str | None = Field(
        None, description="a browser service's token (kept in the secret store, not config)"
    )
    tokenParam: str | None = Field(None, description="the query parameter for the token")
    tokenHeader: str | None = Field(None, description="send the token in this header")
    pool: bool | None = Field(None, description="one browser from the service per agent session")
    poolIdleSeconds: int | None = None


@router.post("/profiles/create", summary="Create a profile (managed profiles get a CDP port)")
async def create_profile(request: Request, body: CreateProfile) -> dict[str, Any]:
    return await service_of(request).create_profile(
        body.name, color=body.color, cdp_url=body.cdpUrl, driver=body.driver,
        headless=body.headless, token=body.token, token_param=body.tokenParam, token_header=body.tokenHeader,
        pool=body.pool, pool_idle_seconds=body.poolIdleSeconds,
    )


class ServiceToken(BaseModel):
    token: str = Field(description="the browser service's token or API key", max_length=4096)


@router.post("/profiles/token", summary="Store a remote profile's service token (secret store)")
async def set_service_token(
    request: Request, body: ServiceToken, profile: ProfileQ = None
) -> dict[str, Any]:
    from browserdeck import remote

    ctx = profile_of(request, profile)
    if ctx.remote is None:
        from browserdeck.errors import InvalidInput

        raise InvalidInput(
            f"profile {ctx.name!r} is not a browser-service profile (a ws:// or wss:// cdpUrl)",
            hint="a token is only stored for remote profiles on a service endpoint",
        )
    where = remote.store_token(ctx.name, body.token)
    await ctx.stop()  # browsers connected with the old token are released
    return {"profile": ctx.name, "stored": "keyring" if where == "keyring" else "file"}


class ReleaseSession(BaseModel):
    session: str = Field(description="the X-Browserdeck-Session id whose browsers to release")


@router.post("/sessions/release", summary="Release an agent session's pooled remote browsers")
async def release_session(request: Request, body: ReleaseSession) -> dict[str, Any]:
    service = service_of(request)
    released = []
    for ctx in list(service.contexts.values()):
        if ctx.remote is not None and await ctx.remote.release(body.session[:200]):
            released.append(ctx.name)
    return {"session": body.session, "released": released}


@router.delete("/profiles/{name}", summary="Delete a profile (stops it; removes managed user data)")
async def delete_profile(request: Request, name: str) -> dict[str, Any]:
    return await service_of(request).delete_profile(name)


@router.get("/tabs", summary="Page tabs of the profile's browser")
async def tabs(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    ctx = profile_of(request, profile)
    return {"profile": ctx.name, "tabs": [t.to_json() for t in await ctx.list_tabs()]}


class OpenTab(BaseModel):
    url: str = "about:blank"


@router.post("/tabs/open", summary="Open a tab")
async def open_tab(
    request: Request, body: Annotated[OpenTab | None, Body()] = None, profile: ProfileQ = None
) -> dict[str, Any]:
    ctx = profile_of(request, profile)
    note(request, profile=ctx.name, url=(body or OpenTab()).url)
    tab = await ctx.open_tab((body or OpenTab()).url)
    ctx.note_opened(client_of(request), tab.target_id)
    note(request, targetId=tab.target_id, url=tab.url or None)
    if request.headers.get("x-browserdeck-client") not in USER_CLIENTS:
        ctx.agent_tabs.add(tab.target_id)  # "Stop all agents" closes it
    return tab.to_json()


# Clients that are the user, not an agent: the tray panel and the command line.
USER_CLIENTS = frozenset({"browserdeck-gui", "browserdeck-cli"})


class FocusTab(BaseModel):
    targetId: str = Field(description="a targetId or a unique prefix of one")


@router.post("/tabs/focus", summary="Bring a tab to the front")
async def focus_tab(request: Request, body: FocusTab, profile: ProfileQ = None) -> dict[str, Any]:
    ctx = profile_of(request, profile)
    note(request, profile=ctx.name, targetId=body.targetId)
    tab = await ctx.focus_tab(body.targetId)
    note(request, targetId=tab.target_id)
    return {"focused": tab.target_id, **tab.to_json()}


@router.delete("/tabs/{target_id}", summary="Close a tab by targetId or unique prefix")
async def close_tab(request: Request, target_id: str, profile: ProfileQ = None) -> dict[str, Any]:
    ctx = profile_of(request, profile)
    note(request, profile=ctx.name, targetId=target_id)
    closed = await ctx.close_tab(target_id)
    note(request, targetId=closed)
    return {"closed": closed}
