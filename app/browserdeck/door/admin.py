"""The front door's requests about the service, its profiles and their tabs.

Typed both ways like the requests about a tab (engine/options.py): each names its answer
(``Request[r.ProfileStatus]``) and its name in the activity log (``op``). The profile a
call is about travels beside the request (``?profile=``), as for every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from browserdeck import recorded as rec
from browserdeck import results as r
from browserdeck.config import PROFILE_NAME_RE
from browserdeck.door.request import Request
from browserdeck.engine.fields import Url
from browserdeck.secrets.tokens import TOKEN_RE
from browserdeck.session import SessionEnded
from browserdeck.tabs import Tab

if TYPE_CHECKING:
    from typing import Self


class Status(Request[r.Status]):
    op = "status"


class ListProfiles(Request[r.Profiles]):
    op = "profiles"


class Start(Request[r.ProfileStatus]):
    op = "start"


class Stop(Request[r.ProfileStatus]):
    op = "stop"


class ResetProfile(Request[r.ProfileReset]):
    op = "reset-profile"


def _with_profile_settings(schema: dict[str, Any]) -> None:
    # The settings a new profile takes, as config/profile.py declares them (types, choices,
    # bounds and descriptions from the same pydantic type the check uses); null is "not
    # given", as the service reads it.
    from browserdeck import config

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
    from browserdeck import config
    from browserdeck.driverspecs import DRIVER_FIELDS, SPECS
    from browserdeck.policy import urls

    null = {"type": "null"}
    creatable = {s.key for s in config.CREATE_FIELDS} | {"token"}

    def only(kind: str, *, extra: frozenset[str] = frozenset()) -> dict[str, Any]:
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
                **only(service, extra=frozenset({"token"})),
                "cdpUrl": {"type": "string", "pattern": urls.WS_CDP_URL},
                "tokenParam": {"anyOf": [{"type": "string", "pattern": r"^[A-Za-z0-9_.-]{1,64}$"}, null]},
                "tokenHeader": {"anyOf": [{"type": "string", "pattern": r"^[A-Za-z0-9_-]{1,64}$"}, null]},
            },
        },
    ]


# What a service token may be (secrets.TOKEN_RE, which remote.store_token checks).
TOKEN: dict[str, Any] = {"pattern": TOKEN_RE.pattern}


class CreateProfile(Request[r.ProfileStatus]):
    """A new profile: its name, a service token, and the profile settings that
    ``config.CREATE_FIELDS`` declares (checked now, as each is declared)."""

    op = "create-profile"
    model_config = ConfigDict(extra="allow", json_schema_extra=_with_profile_settings)

    name: str = Field(
        description="lowercase letters, digits and '-', at most 64",
        json_schema_extra={"pattern": PROFILE_NAME_RE.pattern},
    )
    token: str | None = Field(
        None,
        description="a browser service's token (kept in the secret store, not config)",
        json_schema_extra=TOKEN,
    )

    @model_validator(mode="after")
    def _settings_as_declared(self) -> Self:
        # Each setting given is checked now, as its declaration says (a non-null value the
        # service would not read, such as an object for cdpUrl, is refused too); JSON's
        # 300.0 is the integer 300 (JSON Schema's "integer"), which the check takes as 300.
        from browserdeck import config

        extra = self.model_extra or {}
        for key, value in extra.items():
            if isinstance(value, float) and value.is_integer():
                extra[key] = value = int(value)
            setting = config.PROFILE_KEYS.get(key)
            if value is not None and setting is not None and setting.at_create:
                extra[key] = config.check_setting(setting, value, key)
        return self

    def settings(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class DeleteProfile(Request[r.ProfileDeleted]):
    op = "delete-profile"

    name: str


class StoreToken(Request[r.TokenStored]):
    op = "store-token"

    token: str = Field(
        description="the browser service's token or API key",
        max_length=4096,
        json_schema_extra=TOKEN,
    )

    def __repr_args__(self) -> Any:  # never the token, in a log or a traceback
        return [("token", "***")]


class ReleaseSession(Request[r.SessionReleased]):
    op = "release-session"

    session: str = Field(description="the X-Browserdeck-Session id whose browsers to release")


class StopAllAgents(Request[r.AgentsStopped]):
    op = "stop-all-agents"


class EndSession(Request[SessionEnded | None]):
    """End one agent session as "Stop all agents" ends each (None: none such is live)."""

    op = "end-session"

    session: str


class Refused(Request[None]):
    """A call of an agent whose session had ended, refused before it ran: it passes the
    addons all the same, so the activity log names who tried and what they were told."""

    op = "refused"

    kind: str = Field(description="what the agent asked for: an MCP tool's name")


class ListTabs(Request[r.TabList]):
    op = "tabs"


class OpenTab(Request[Tab]):
    op = "open-tab"

    url: Url = "about:blank"


class FocusTab(Request[r.Focused]):
    op = "focus-tab"

    target_id: str = Field(description="a targetId or a unique prefix of one")


class KeepTab(Request[r.Kept]):
    op = "keep-tab"

    target_id: str = Field(min_length=1, description="a targetId or a unique prefix of one")
    keep: bool = Field(
        default=True,
        description="true: the tab stays open when the agent session that opened it ends; "
        "false: it closes with that session again",
    )


class CloseTab(Request[r.Closed]):
    op = "close-tab"

    target_id: str


# --- recorded sessions and take-over (recording/) ---------------------------------


class ListSessions(Request[rec.RecordedSessions]):
    op = "sessions"


class GetSession(Request[rec.RecordedSession]):
    op = "session"

    session: str = Field(description="a recorded session's id (GET /sessions)")


class ExportSession(Request[rec.SessionExport]):
    op = "export-session"

    session: str = Field(
        default="", description="a recorded session's id (GET /sessions); the API takes it in the path"
    )
    format: Literal["trace", "html", "video"] = Field(
        default="html",
        description="trace: a Playwright trace (.zip, `playwright show-trace`); html: one "
        "self-contained report; video: a WebM of the steps",
    )


class TakeOver(Request[rec.TakeOverState]):
    op = "take-over"


class HandBack(Request[rec.TakeOverState]):
    op = "hand-back"
