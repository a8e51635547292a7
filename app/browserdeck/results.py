"""What the front door answers, typed (issue 13): ``Deck``'s results.

Every way in reads the same objects: API routes return them (their ``response_model``
publishes each shape in the OpenAPI spec), MCP tools read their attributes. On the wire
they are exactly the JSON the engine and the service built: camelCase names, and only
the keys that were set (``wire()``; the API dumps with ``exclude_unset``), so no route
grows a ``null`` it did not send before. A tab is ``tabs.Tab`` itself.

The fields declared are the ones a caller may rely on; an answer may carry more (an
act kind's own fields, a driver's status details), kept as they came (``extra``),
and documented in docs/api.md.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from browserdeck.tabs import Tab


class Answer(BaseModel):
    """An answer: camelCase on the wire, the keys that were set, extra keys kept."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The JSON an HTTP client gets."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- the service -----------------------------------------------------------------


class EngineStatus(Answer):
    state: str = Field(description="running, restarting or stopped")
    driver_pid: int | None = None
    restarts: int = 0
    last_failure: str | None = None


class Health(Answer):
    ok: bool
    version: str
    engine: EngineStatus


class ProfileStatus(Answer):
    """One profile (``GET /profiles`` lists these; ``GET /`` adds the service's state)."""

    profile: str
    driver: str = Field(description="managed, extension or remote")
    state: str = Field(description="the state word (docs/api.md); stateText says it for people")
    running: bool
    tabs: int = 0
    pid: int | None = None
    cdp_url: str | None = None
    detail: str | None = Field(None, description="why it is in this state, for people")
    remote: Any = Field(None, description="a browser service's own status (remote profiles)")
    default: bool | None = Field(None, description="the default profile (in GET /profiles)")


class Status(ProfileStatus):
    default_profile: str
    config_problem: str | None = None
    engine: EngineStatus


class Profiles(Answer):
    profiles: list[ProfileStatus]
    default_profile: str


# --- tabs -------------------------------------------------------------------------


class TabList(Answer):
    profile: str
    tabs: list[Tab]


class Focused(Answer):
    """The tab brought to the front: ``focused`` is its targetId, then the tab's fields."""

    focused: str


class Closed(Answer):
    closed: str


# --- one tab ------------------------------------------------------------------------


class TabResult(Answer):
    """What any call on a tab may answer besides its own fields: the page it left the tab
    on, and what it caused there."""

    ok: bool | None = None
    target_id: str | None = None
    url: str | None = None
    title: str | None = None
    navigated: bool | None = Field(None, description="the tab went to another page")
    outcome: str | None = Field(None, description="what the call caused (consequences)")
    note: str | None = Field(None, description="something the caller should know")
    dialogs: list[dict[str, Any]] | None = Field(
        None, description="dialogs that opened during the call, and how they were answered"
    )
    dialog: Any = Field(None, description="the dialog or file chooser a hook answered")
    download: Any = Field(None, description="a download the call started, and where it went")


class Snapshot(TabResult):
    format: str
    snapshot: str
    stats: dict[str, Any] | None = None
    truncated: bool | None = None


class ActResult(TabResult):
    """A click, type, press ... (``kind``); ``result`` is what evaluate returned."""

    kind: str
    ref: str | None = None
    closed: bool | None = Field(None, description="the action closed the tab")
    result: Any = Field(None, description="what evaluate returned")
    truncated: bool | None = None


class Navigated(TabResult):
    status: int | None = Field(None, description="the HTTP status of the page")


class Screenshot(TabResult):
    type: str
    width: int
    height: int
    size: int = Field(alias="bytes", description="bytes of the image")
    base64: str | None = None
    path: str | None = None
    labels: list[dict[str, Any]] | None = None
    unplaced: list[str] | None = None


class Pdf(TabResult):
    size: int = Field(alias="bytes", description="bytes of the PDF")
    base64: str | None = None
    path: str | None = None


class Offline(TabResult):
    offline: bool
    service_workers: list[str] = Field(
        [], description="the origin's service workers, offline too (for every tab of it)"
    )


class Console(TabResult):
    messages: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
