"""What the front door answers about recorded sessions and taking a browser over.

The answers of ``recording/`` (the Sessions view, GET /sessions, the exports, Take over),
typed like every answer (``results.py``, whose ``Answer`` they extend): camelCase on the
wire, the keys that were set.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from browserdeck.results import Answer


class SessionSummary(Answer):
    """One recorded agent session, as the Sessions view lists it."""

    id: str = Field(description="the recording's id (GET /sessions/{id})")
    key: str = Field(description="the agent session: an MCP session, X-Browserdeck-Session …")
    agent: str = Field(description="who: the MCP client's name, the client's own")
    via: str = Field(description="how it came in: mcp, api, cli")
    started: float = Field(description="its first call (Unix seconds)")
    last: float = Field(description="its latest call (Unix seconds)")
    calls: int = 0
    errors: int = Field(default=0, description="calls that failed")
    profiles: list[str] = Field(default_factory=list, description="the profiles it used")
    ended: float | None = Field(default=None, description="when it ended; null: running")
    bytes: int = Field(default=0, description="its size on disk")

    @property
    def duration(self) -> float:
        return max(0.0, (self.ended or self.last) - self.started)


class RecordedStep(Answer):
    """One call of a recorded session; an action has images before and after it."""

    n: int = Field(description="its number in the session, from 1")
    started: float = Field(description="Unix seconds")
    op: str = Field(description="the call: act, navigate, snapshot, open-tab …")
    kind: str = Field(default="", description="an act's kind: click, type …")
    title: str = Field(default="", description="what it did, in a line (typed text: its length)")
    args: dict[str, Any] = Field(default_factory=dict, description="its arguments, redacted")
    ms: float = 0.0
    profile: str = ""
    target_id: str = ""
    url: str = Field(default="", description="the page it left the tab on")
    page_title: str = ""
    ok: bool = True
    error: dict[str, str] | None = Field(default=None, description="code, message, hint")
    result: dict[str, Any] = Field(default_factory=dict, description="what it answered, in short")
    note: str = ""
    element: str = Field(default="", description="what its ref named: role and name")
    target: list[float] | None = Field(
        default=None, description="the element's box in the page (CSS pixels: x, y, w, h)"
    )
    before: str = Field(default="", description="its image before (a file of the recording)")
    after: str = Field(default="", description="its image after")
    shot_note: str = Field(default="", description="why an image is missing")
    diff: str = Field(default="", description="the snapshot lines it changed (- went, + came)")
    console: list[str] = Field(default_factory=list, description="console and page errors")
    failed: list[str] = Field(default_factory=list, description="requests that failed meanwhile")
    pending: bool = Field(default=False, description="its after-image is not in yet")


class RecordedSessions(Answer):
    sessions: list[SessionSummary]


class RecordedSession(Answer):
    session: SessionSummary
    steps: list[RecordedStep]


class SessionExport(Answer):
    session: str
    format: str
    path: str = Field(description="the file written (absolute)")
    bytes: int


class TakeOverState(Answer):
    """Whether the user has a profile's browser (the panel's Take over / Hand back)."""

    profile: str
    taken: bool
    since: float | None = None
    window: bool = Field(description="the browser has a window the user can use")
    why: str | None = Field(default=None, description="why not, and what to use instead")
