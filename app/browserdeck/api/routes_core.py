"""Status, lifecycle, profiles and tabs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from browserdeck import __version__, config, remote, urls
from browserdeck import results as r
from browserdeck.api.deps import caller_of, deck_of, profile_of, service_of
from browserdeck.engine.fields import Url
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


@router.post("/reset-profile", summary="Kill an orphaned browser holding the profile's CDP port")
async def reset_profile(request: Request, profile: ProfileQ = None) -> dict[str, Any]:
    return await profile_of(request, profile).reset()


@router.get(
    "/profiles", summary="All profiles with their status", response_model=r.Profiles, **WIRE
)
async def profiles(request: Request) -> r.Profiles:
    return await deck_of(request).profiles()


def _with_profile_settings(schema: dict[str, Any]) -> None:
    # The settings a new profile takes, as config.py declares them (types, choices,
    # bounds and descriptions from the same pydantic type the check uses); null is "not
    # given", as the service reads it.
    properties: dict[str, Any] = schema.setdefault("properties", {})
    for setting in config.CREATE_FIELDS:
        declared: dict[str, Any] = config.setting_schema(setting)
        kept = {k: declared.pop(k) for k in ("description", "default") if k in declared}
        if declared.get("anyOf") is None:
            declared = {"anyOf": [declared, {"type": "null"}]}
        properties[setting.key] = {**declared, **kept}
    schema["additionalProperties"] = False
    schema["anyOf"] = _driver_rules()


def _driver_rules() -> list[dict[str, Any]]:
    """What the service's create_profile requires of each kind of profile, as schema: the
    other drivers' fields left out (or null), remote's cdpUrl, and the token and its
    parameter or header only for a browser service's ws(s):// endpoint."""
    from browserdeck.driverspecs import DRIVER_FIELDS, SPECS

    null = {"type": "null"}
    creatable = {s.key for s in config.CREATE_FIELDS} | {"token"}

    def only(kind: str, *, extra: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
        allowed = (set(SPECS[kind].fields) | extra) & creatable
        return {k: null for k in sorted((set(DRIVER_FIELDS) | {"token"}) & creatable - allowed)}

    service = "remote"
    return [
        # No driver and no cdpUrl is a managed profile.
        {"properties": {"driver": {"enum": ["managed", None]}, **only("managed")}},
        {"required": ["driver"], "properties": {"driver": {"const": "extension"}, **only("extension")}},
        {
            "required": ["cdpUrl"],
            "properties": {
                "driver": {"enum": [service, None]},
                **only(service),
                "tokenParam": null,
                "tokenHeader": null,
                "pool": null,
                "cdpUrl": {"type": "string", "pattern": urls.HTTP_CDP_URL},
            },
        },
        {
            "required": ["cdpUrl"],
            "properties": {
                "driver": {"enum": [service, None]},
                **only(service, extra={"token"}),
                "cdpUrl": {"type": "string", "pattern": urls.WS_CDP_URL},
                "tokenParam": {"anyOf": [{"type": "string", "pattern": r"^[A-Za-z0-9_.-]{1,64}$"}, null]},
                "tokenHeader": {"anyOf": [{"type": "string", "pattern": r"^[A-Za-z0-9_-]{1,64}$"}, null]},
            },
        },
    ]


# What remote.store_token takes.
TOKEN: dict[str, Any] = {"pattern": remote.TOKEN_RE.pattern}


class CreateProfile(BaseModel):
    """A new profile: its name, a service token, and the profile settings that
    ``config.CREATE_FIELDS`` declares (checked by the service with ``check_setting``)."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_with_profile_settings)

    name: str = Field(
        description="lowercase letters, digits and '-', at most 64",
        json_schema_extra={"pattern": config.PROFILE_NAME_RE.pattern},
    )

    @model_validator(mode="after")
    def _settings_as_declared(self) -> CreateProfile:
        # Each setting given is checked now, as its declaration says (a non-null value the
        # service would not read, such as an object for cdpUrl, is refused too); JSON's
        # 300.0 is the integer 300 (JSON Schema's "integer"), which the check takes as 300.
        extra = self.model_extra or {}
        for key, value in extra.items():
            if isinstance(value, float) and value.is_integer():
                extra[key] = value = int(value)
            setting = config.PROFILE_KEYS.get(key)
            if value is not None and setting is not None and setting.at_create:
                extra[key] = config.check_setting(setting, value, key)
        return self
    token: str | None = Field(
        None,
        description="a browser service's token (kept in the secret store, not config)",
        json_schema_extra=TOKEN,
    )


@router.post("/profiles/create", summary="Create a profile (managed profiles get a CDP port)")
async def create_profile(request: Request, body: CreateProfile) -> dict[str, Any]:
    from browserdeck.errors import Conflict, InvalidInput

    try:
        return await service_of(request).create_profile(
            body.name, token=body.token, **(body.model_extra or {})
        )
    except InvalidInput as exc:
        if exc.code != "port_collision":
            raise
        # The request is fine; another profile holds the port (a second extension profile
        # on the relay port): a conflict with what exists.
        raise Conflict(exc.message, hint=exc.hint, code=exc.code) from None


class ServiceToken(BaseModel):
    token: str = Field(
        description="the browser service's token or API key",
        max_length=4096,
        json_schema_extra=TOKEN,
    )


@router.post("/profiles/token", summary="Store a remote profile's service token (secret store)")
async def set_service_token(
    request: Request, body: ServiceToken, profile: ProfileQ = None
) -> dict[str, Any]:
    ctx = profile_of(request, profile)
    if ctx.remote is None:
        from browserdeck.errors import Conflict

        # A well-formed request this profile's kind does not take: a conflict.
        raise Conflict(
            f"profile {ctx.name!r} is not a browser-service profile (a ws:// or wss:// cdpUrl)",
            hint="a token is only stored for remote profiles on a service endpoint",
            code="not_remote",
        )
    where = remote.store_token(ctx.name, body.token)
    await ctx.stop()  # browsers connected with the old token are released
    return {"profile": ctx.name, "stored": "keyring" if where == "keyring" else "file"}


class ReleaseSession(BaseModel):
    session: str = Field(description="the X-Browserdeck-Session id whose browsers to release")


@router.post("/sessions/release", summary="Release an agent session's pooled remote browsers")
async def release_session(request: Request, body: ReleaseSession) -> dict[str, Any]:
    released = await deck_of(request).release_session(body.session)
    return {"session": body.session, "released": released}


@router.delete("/profiles/{name}", summary="Delete a profile (stops it; removes managed user data)")
async def delete_profile(request: Request, name: str) -> dict[str, Any]:
    return await service_of(request).delete_profile(name)


@router.get(
    "/tabs", summary="Page tabs of the profile's browser", response_model=r.TabList, **TABS
)
async def tabs(request: Request, profile: ProfileQ = None) -> r.TabList:
    return await deck_of(request).tabs(caller_of(request), profile)


class OpenTab(BaseModel):
    url: Url = "about:blank"


@router.post("/tabs/open", summary="Open a tab", response_model=Tab, **TABS)
async def open_tab(
    request: Request, body: Annotated[OpenTab | None, Body()] = None, profile: ProfileQ = None
) -> Tab:
    return await deck_of(request).open_tab(caller_of(request), profile, (body or OpenTab()).url)


class FocusTab(BaseModel):
    targetId: str = Field(description="a targetId or a unique prefix of one")


@router.post(
    "/tabs/focus", summary="Bring a tab to the front", response_model=r.Focused, **WIRE
)
async def focus_tab(request: Request, body: FocusTab, profile: ProfileQ = None) -> r.Focused:
    tab = await deck_of(request).focus_tab(caller_of(request), profile, body.targetId)
    return r.Focused.model_validate({"focused": tab.target_id, **tab.to_json()})


@router.delete(
    "/tabs/{target_id}",
    summary="Close a tab by targetId or unique prefix",
    response_model=r.Closed,
    **WIRE,
)
async def close_tab(request: Request, target_id: str, profile: ProfileQ = None) -> r.Closed:
    closed = await deck_of(request).close_tab(caller_of(request), profile, target_id)
    return r.Closed(closed=closed)


class KeepTab(BaseModel):
    targetId: str = Field(min_length=1, description="a targetId or a unique prefix of one")
    keep: bool = Field(
        default=True,
        strict=True,  # a mark the user sets: true or false, not 0 or "no"
        description="true: the tab stays open when the agent session that opened it ends; "
        "false: it closes with that session again",
    )


@router.post(
    "/tabs/keep",
    summary="Keep a tab open when the agent that opened it ends (or not)",
    response_model=r.Kept,
    **WIRE,
)
async def keep_tab(request: Request, body: KeepTab, profile: ProfileQ = None) -> r.Kept:
    deck = deck_of(request)
    target_id = await deck.keep_tab(caller_of(request), profile, body.targetId, body.keep)
    return r.Kept(target_id=target_id, kept=body.keep)
