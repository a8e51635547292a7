"""What the front door answers, typed: ``Deck``'s results.

Every way in reads the same objects: API routes return them (their ``response_model``
publishes each shape in the OpenAPI spec), MCP tools read their attributes. On the wire
they are exactly the JSON the engine and the service built: camelCase names, and only
the keys that were set (``wire()``; the API dumps with ``exclude_unset``), so no route
grows a ``null`` it did not send before. A tab is ``tabs.Tab`` itself.

The fields declared are the ones a caller may rely on; an answer may carry more (an
act kind's own fields, a driver's status details), kept as they came (``extra``),
and documented in docs/api.md.

What an answer lists is typed too, one model per concept, and the engine builds these
very objects where it records them (``engine/state.py``: console messages, page
errors, requests, dialogs; ``engine/screenshot.py``: labels): a console message is a
``ConsoleEntry`` from the page's event to the MCP tool that prints it.

Why one module: the answers are one vocabulary that the API's OpenAPI spec, MCP and the
generated ``cli/answers.py`` read together; each is a few declarative lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from browserdeck.tabs import Tab
from browserdeck.util.fastjson import LONE_SURROGATES
from browserdeck.util.labels import Rect


def well_formed(value: Any) -> Any:
    """``value`` with every lone surrogate in its text replaced by U+FFFD.

    A page's script can put one in its text or title (``'a\\uD800b'``) and the browser
    hands it over as it is; no UTF-8 can carry it, so the API's JSON, the CLI and a
    saved file would each fail on it ("surrogates not allowed"). Cleaned once, where
    page text becomes an answer (``Deck.on_tab``). Models are cleaned in place.
    """
    if isinstance(value, str):
        # Only a non-ASCII string can hold one: isascii() is a flag check, no scan.
        if value.isascii():
            return value
        try:
            value.encode()
        except UnicodeEncodeError:
            return value.translate(LONE_SURROGATES)
        return value
    if isinstance(value, dict):
        # A key is page text too (``{[el.textContent]: 1}`` from evaluate).
        if any(isinstance(key, str) and well_formed(key) is not key for key in value):
            items = list(value.items())
            value.clear()
            value.update((well_formed(key), well_formed(item)) for key, item in items)
            return value
        for key, item in value.items():
            value[key] = well_formed(item)
        return value
    if isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = well_formed(item)
        return value
    if isinstance(value, BaseModel):
        well_formed(value.__dict__)
        if value.__pydantic_extra__:
            well_formed(value.__pydantic_extra__)
    return value


class Answer(BaseModel):
    """An answer, or an entry of one: camelCase on the wire, the keys that were set, extra
    keys kept."""

    # defer_build: a model's validator is built when it is first used, not at import; a
    # service started for an MCP client uses a few of these before it answers.
    model_config = ConfigDict(
        extra="allow", alias_generator=to_camel, populate_by_name=True, defer_build=True
    )

    def wire(self) -> dict[str, Any]:
        """The JSON an HTTP client gets."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


# --- the service -----------------------------------------------------------------


class EngineStatus(Answer):
    state: str = Field(description="starting, running, restarting or stopped")
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
    enabled: bool | None = Field(default=None, description="browser control is on (settings)")
    driver: str = Field(description="managed, extension or remote")
    color: str | None = None
    state: str = Field(description="the state word (docs/api.md); stateText says it for people")
    state_text: str | None = Field(default=None, description="the state in the tray's words")
    running: bool
    tabs: int = 0
    pid: int | None = None
    cdp_url: str | None = None
    cdp_port: int | None = None
    detail: str | None = Field(default=None, description="why it is in this state, for people")
    headless: bool | None = Field(default=None, description="a headless browser (managed)")
    headless_reason: str | None = Field(default=None, description="why headless (managed)")
    extension_connected: bool | None = Field(default=None, description="(extension profiles)")
    relay: Any = Field(default=None, description="the relay's own status (extension profiles)")
    remote: Any = Field(default=None, description="a browser service's own status (remote profiles)")
    default: bool | None = Field(default=None, description="the default profile (in GET /profiles)")


class Status(ProfileStatus):
    default_profile: str
    config_problem: str | None = None
    engine: EngineStatus


class Profiles(Answer):
    profiles: list[ProfileStatus]
    default_profile: str


class ProfileReset(Answer):
    """What reset-profile freed: the profile's CDP port and the processes killed on it."""

    profile: str
    port: int | None = None
    killed_pids: list[int] = Field(default_factory=list)


class ProfileDeleted(Answer):
    deleted: str
    removed_data: str | None = Field(default=None, description="the browser data removed")


class TokenStored(Answer):
    profile: str
    stored: Literal["keyring", "file"] = Field(description="the OS keyring, or a 0600 file")


class SessionReleased(Answer):
    session: str
    released: list[str] = Field(description="the profiles whose pooled browser was released")


@dataclass(frozen=True)
class AgentsStopped:
    """What "Stop all agents" did."""

    sessions: int  # agent sessions ended
    closed_tabs: int  # tabs agents had opened, closed
    unshared_tabs: int  # tabs of the user's Chrome no longer shared
    given_back_tabs: int = 0  # tabs agents reused (did not open), left open and unlabelled
    kept_tabs: int = 0  # tabs agents opened that the user marked keep, left open

    @property
    def anything(self) -> bool:
        """Whether there was anything to stop."""
        return any(
            (self.sessions, self.closed_tabs, self.unshared_tabs, self.given_back_tabs, self.kept_tabs)
        )

    def said(self) -> str:
        """What happened, for a person: only what did happen, each count as it was."""
        done = []
        if self.sessions:
            done.append(f"stopped {_count(self.sessions, 'agent session')}")
        if self.closed_tabs:
            done.append(f"closed {_count(self.closed_tabs, 'tab')} agents opened")
        if self.given_back_tabs:
            done.append(f"left open {_count(self.given_back_tabs, 'tab')} agents only used")
        if self.kept_tabs:
            done.append(f"kept {_count(self.kept_tabs, 'tab')} you marked Keep")
        if self.unshared_tabs:
            done.append(f"stopped sharing {_count(self.unshared_tabs, 'Chrome tab')} of yours")
        if not self.anything:
            return "No agent was working in browserdeck: there was nothing to stop."
        words = ", ".join(done[:-1]) + (" and " if len(done) > 1 else "") + done[-1]
        return words[0].upper() + words[1:] + "."


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


# --- tabs -------------------------------------------------------------------------


class TabList(Answer):
    profile: str
    tabs: list[Tab]


class Focused(Answer):
    """The tab brought to the front: ``focused`` is its targetId, then the tab's fields."""

    focused: str


class Closed(Answer):
    closed: str


class Kept(Answer):
    """A tab's keep mark: ``kept`` tabs stay open when the agent that opened them ends."""

    target_id: str
    kept: bool


# --- what a tab recorded (the engine builds these as it records them) ----------------

ConsoleContext = Literal["page", "worker", "service-worker"]


class ConsoleEntry(Answer):
    """One console message of the tab, a worker of it or a service worker of its origin."""

    type: str = Field(description="the console method: log, info, warning, error, debug …")
    text: str
    url: str = Field(default="", description="the script that logged it")
    line: int | None = Field(default=None, description="its line in that script")
    time: float = Field(description="when it was logged (Unix seconds)")
    context: ConsoleContext = Field(description="where it ran")
    worker_url: str | None = Field(default=None, description="the worker's script (worker messages)")


class PageError(Answer):
    """An exception the page did not catch."""

    name: str
    message: str
    stack: str = ""
    time: float


class RequestEntry(Answer):
    """One network request of the tab; ``status`` and ``failure`` stay null while open."""

    index: int | None = Field(
        default=None, description="its number in the tab, 1 up (GET /network/requests/{index})"
    )
    method: str
    url: str
    resource_type: str = Field(description="document, script, fetch, image …")
    status: int | None = Field(default=None, description="the HTTP status, once answered")
    failure: str | None = Field(default=None, description="why it failed (net::ERR_…), if it did")
    time: float
    # The browser's request object, for its headers and body (never on the wire).
    _request: Any = PrivateAttr(default=None)


class ConsoleCounts(Answer):
    """How many entries matched, before ``limit`` cut the lists."""

    messages: int
    errors: int
    requests: int


class DialogEntry(Answer):
    """A dialog that opened (alert, confirm, prompt, beforeunload) or a file chooser
    (``type`` "filechooser", with ``files``), and how it was answered."""

    type: str
    action: str = Field(description="accepted, dismissed, files set, or failed: <why>")
    armed: bool = Field(description="answered as a hook asked (else by the default rule)")
    time: float
    message: str | None = Field(default=None, description="the dialog's text (dialogs)")
    default_value: str | None = Field(default=None, description="the prompt's default (prompts)")
    prompt_text: str | None = Field(default=None, description="what was typed in (accepted prompts)")
    files: list[str] | None = Field(default=None, description="the files set (file choosers)")


class SavedDownload(Answer):
    """A download a call started, and where it was saved (or why not)."""

    url: str
    suggested_filename: str
    path: str | None = None
    error: str | None = None


class Size(Answer):
    """A viewport's size in CSS pixels (what a resize set)."""

    width: int
    height: int


class SnapshotViewport(Size):
    """The viewport a ``viewport`` snapshot was cut to."""

    outside: int = Field(description="element lines left out: outside the viewport")


class SnapshotRef(Answer):
    """What a ref of a role-format snapshot points at: role, name and which of the
    elements with both it is (``nth``, only when there are several)."""

    role: str
    name: str
    nth: int | None = None


class FilledField(Answer):
    """One field a fill set, and what it holds now."""

    ref: str
    checked: bool | None = Field(default=None, description="checkbox or radio: checked now")
    selected: list[str] | None = Field(default=None, description="select: the options chosen")
    value: str | None = Field(default=None, description="the text set (a password's is masked)")


class SnapshotStats(Answer):
    lines: int
    chars: int
    refs: int
    interactive: int


class Truncated(Answer):
    """A snapshot was cut (by ``maxChars``, ``limit`` or the default cap): it shows
    ``shownLines`` of ``totalLines`` lines, ``shownChars`` of ``totalChars`` characters.
    The text ends with a marker that says the same and how to narrow it."""

    model_config = ConfigDict(frozen=True)

    shown_lines: int = Field(description="lines (aria: nodes) in the answer")
    total_lines: int = Field(description="lines (aria: nodes) before the cut")
    shown_chars: int = Field(description="characters in the answer, the marker left out")
    total_chars: int = Field(description="characters before the cut")


class ShotLabel(Answer):
    """One labelled element of a screenshot: its ref, its box (and badge) in image
    pixels, and what it is (role and accessible name, from the ref table the labels were
    drawn from)."""

    model_config = ConfigDict(frozen=True)

    ref: str
    box: Rect
    badge: Rect | None = Field(default=None, description="where its badge is; null: no room (unplaced)")
    leader: list[float] | None = Field(
        default=None, description="a line from a badge that moved away back to its box: x1, y1, x2, y2"
    )
    role: str = ""
    name: str = Field(default="", description="the accessible name; empty when it has none")

    def scaled(self, k: float) -> ShotLabel:
        """The same label with its geometry scaled by ``k`` (to the image's pixels)."""
        return self.model_copy(
            update={
                "box": _scaled(self.box, k),
                "badge": _scaled(self.badge, k) if self.badge is not None else None,
                "leader": [round(v * k, 1) for v in self.leader] if self.leader else self.leader,
            }
        )

    def describe(self) -> str:
        """What the label is, in a user's words: e12 · button · “Sign in”."""
        bits = [self.ref]
        if self.role:
            bits.append(self.role)
        if self.name:
            bits.append(f"“{self.name}”")
        return " · ".join(bits)


def _scaled(r: Rect, k: float) -> Rect:
    return Rect(round(r.x * k, 1), round(r.y * k, 1), round(r.width * k, 1), round(r.height * k, 1))


# --- one tab ------------------------------------------------------------------------


class TabResult(Answer):
    """What any call on a tab may answer besides its own fields: the page it left the tab
    on, and what it caused there."""

    ok: bool | None = None
    target_id: str | None = None
    url: str | None = None
    title: str | None = None
    navigated: bool | None = Field(default=None, description="the tab went to another page")
    outcome: str | None = Field(default=None, description="what the call caused (consequences)")
    note: str | None = Field(default=None, description="something the caller should know")
    dialogs: list[DialogEntry] | None = Field(
        default=None, description="dialogs and file choosers that opened since the tab's last answer"
    )
    download: SavedDownload | None = Field(default=None, description="a download the call started")
    popups: list[str] | None = Field(
        default=None, description="the addresses of popups or new tabs the call opened"
    )
    waited_ms: int | None = Field(default=None, description="how long it waited for what it caused")
    wait_bound_hit: bool | None = Field(
        default=None, description="it stopped waiting at its bound, with work still going on"
    )


class Snapshot(TabResult):
    format: str
    snapshot: str
    stats: SnapshotStats | None = None
    truncated: Truncated | None = Field(
        default=None, description="the text was cut: how much of it is shown"
    )
    refs_mode: str | None = Field(default=None, description="how refs were made: aria or role")
    viewport: SnapshotViewport | None = Field(
        default=None, description="the viewport it was cut to (viewport snapshots)"
    )
    refs: dict[str, SnapshotRef] | None = Field(
        default=None, description="what each ref points at (role format)"
    )


class ActResult(TabResult):
    """A click, type, press ... (``kind``); ``result`` is what evaluate returned."""

    kind: str
    ref: str | None = None
    closed: bool | None = Field(default=None, description="the action closed the tab")
    result: Any = Field(default=None, description="what evaluate returned")
    truncated: bool | None = None
    selected: list[str] | None = Field(default=None, description="select: the options chosen")
    filled: list[FilledField] | None = Field(default=None, description="fill: each field set")
    viewport: Size | None = Field(default=None, description="resize: the viewport's size now")
    waited: list[str] | None = Field(default=None, description="wait: the conditions that held")


class Navigated(TabResult):
    status: int | None = Field(default=None, description="the HTTP status of the page")


class Screenshot(TabResult):
    type: str
    width: int
    height: int
    size: int = Field(alias="bytes", description="bytes of the image")
    base64: str | None = None
    path: str | None = None
    scale: float | None = Field(default=None, description="image pixels per CSS pixel")
    labels: list[ShotLabel] | None = None
    unplaced: list[str] | None = Field(
        default=None, description="labelled refs whose badge found no room on the image"
    )
    skipped: int | None = Field(default=None, description="refs not labelled: out of view or cap")


class RecordedShot(TabResult):
    """The recorder's picture of a tab (engine/recshot.py): a JPEG of the viewport (device
    pixels) and, in CSS pixels of that viewport, what to mask and what to outline."""

    jpeg: str | None = Field(default=None, description="the image, base64")
    viewport: Size | None = Field(default=None, description="the viewport in CSS pixels")
    target: Rect | None = Field(default=None, description="the element acted on")
    masks: list[Rect] = Field(default_factory=list, description="password inputs in view")
    console_errors: list[ConsoleEntry] = Field(default_factory=list)
    page_errors: list[PageError] = Field(default_factory=list)
    failed_requests: list[RequestEntry] = Field(default_factory=list)


class Armed(TabResult):
    """A hook: a file chooser or dialog armed for what comes next, or files set now."""

    armed: bool | None = Field(default=None, description="waiting for the next one")
    files: list[str] | None = Field(default=None, description="the files' names (file chooser)")
    via: str | None = Field(default=None, description="set now: input or chooser")
    ref: str | None = Field(default=None, description="the element clicked to open the chooser")
    accept: bool | None = Field(default=None, description="the dialog will be accepted")
    expires_in_ms: int | None = Field(default=None, description="the arm lapses after this")
    hint: str | None = Field(default=None, description="what to do next")


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
    messages: list[ConsoleEntry] = []
    errors: list[PageError] = []
    requests: list[RequestEntry] = []
    counts: ConsoleCounts | None = None


# --- secrets, cookies, site storage, auth states --------------------------------------


class SecretEntry(Answer):
    """A secret of the vault as agents see it: never its value."""

    name: str
    origins: list[str] = Field(description="where it may be typed (https://*.x: x and subdomains)")
    value: bool = Field(description="it holds a value: type <secret>NAME</secret>")
    totp: bool = Field(description="it holds a one-time code seed: type <totp>NAME</totp>")


class Secrets(Answer):
    secrets: list[SecretEntry]


class Cookie(Answer):
    name: str
    value: str
    domain: str
    path: str
    expires: float = Field(default=-1, description="Unix seconds; -1: a session cookie")
    http_only: bool = False
    secure: bool = False
    same_site: str | None = None


class StorageItem(Answer):
    key: str
    value: str


class Stored(TabResult):
    """What a cookie or web-storage call found or did (``kind`` names the call)."""

    kind: str
    origin: str | None = Field(default=None, description="the page's origin (web storage)")
    cookies: list[Cookie] | None = None
    items: list[StorageItem] | None = Field(default=None, description="localStorage/sessionStorage")
    found: bool | None = Field(default=None, description="get: the cookie or key exists")
    removed: int | None = Field(default=None, description="delete/clear: how many went")


class AuthState(Answer):
    """A saved auth state: what it holds, never the cookies' or items' values."""

    name: str
    profile: str = Field(description="the profile it was saved from")
    saved_at: float = Field(description="Unix seconds")
    cookies: int
    origins: list[str] = Field(description="origins whose site storage it holds")
    session_storage: list[str] = Field([], description="origins whose sessionStorage it holds")
    indexed_db: list[str] = Field([], description="origins whose IndexedDB it holds")
    problems: list[str] = Field(
        default_factory=list, description="what could not be saved or restored, and why"
    )


class AuthStates(Answer):
    states: list[AuthState]


class AuthStateLoaded(AuthState):
    loaded_into: str = Field(description="the profile it was loaded into")


class AuthStateDeleted(Answer):
    deleted: str
