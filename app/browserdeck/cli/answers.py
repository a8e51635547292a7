"""Generated from results.py by cli/schema.py (`make cli-args`): do not edit.

The answers the CLI reads, as TypedDicts with the wire's key names, so mypy checks
every key the CLI reads against the models. Imported only under TYPE_CHECKING: a
CLI call reads plain JSON and imports neither this nor pydantic.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class DialogEntry(TypedDict):
    type: str
    action: str
    armed: bool
    time: float
    message: NotRequired[str | None]
    defaultValue: NotRequired[str | None]
    promptText: NotRequired[str | None]
    files: NotRequired[list[str] | None]


class SavedDownload(TypedDict):
    url: str
    suggestedFilename: str
    path: NotRequired[str | None]
    error: NotRequired[str | None]


class SnapshotStats(TypedDict):
    lines: int
    chars: int
    refs: int
    interactive: int


class Truncated(TypedDict):
    shownLines: int
    totalLines: int
    shownChars: int
    totalChars: int


class SnapshotViewport(TypedDict):
    width: int
    height: int
    outside: int


class SnapshotRef(TypedDict):
    role: str
    name: str
    nth: NotRequired[int | None]


class Snapshot(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    format: str
    snapshot: str
    stats: NotRequired[SnapshotStats | None]
    truncated: NotRequired[Truncated | None]
    refsMode: NotRequired[str | None]
    viewport: NotRequired[SnapshotViewport | None]
    refs: NotRequired[dict[str, SnapshotRef] | None]


class FilledField(TypedDict):
    ref: str
    checked: NotRequired[bool | None]
    selected: NotRequired[list[str] | None]
    value: NotRequired[str | None]


class Size(TypedDict):
    width: int
    height: int


class ActResult(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    kind: str
    ref: NotRequired[str | None]
    closed: NotRequired[bool | None]
    result: NotRequired[Any]
    truncated: NotRequired[bool | None]
    selected: NotRequired[list[str] | None]
    filled: NotRequired[list[FilledField] | None]
    viewport: NotRequired[Size | None]
    waited: NotRequired[list[str] | None]


class Navigated(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    status: NotRequired[int | None]


class Rect(TypedDict):
    x: float
    y: float
    width: float
    height: float


class ShotLabel(TypedDict):
    ref: str
    box: Rect
    badge: NotRequired[Rect | None]
    leader: NotRequired[list[float] | None]
    role: NotRequired[str]
    name: NotRequired[str]


class Screenshot(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    type: str
    width: int
    height: int
    bytes: int
    base64: NotRequired[str | None]
    path: NotRequired[str | None]
    scale: NotRequired[float | None]
    labels: NotRequired[list[ShotLabel] | None]
    unplaced: NotRequired[list[str] | None]
    skipped: NotRequired[int | None]


class ConsoleEntry(TypedDict):
    type: str
    text: str
    url: NotRequired[str]
    line: NotRequired[int | None]
    time: float
    context: Literal['page', 'worker', 'service-worker']
    workerUrl: NotRequired[str | None]


class PageError(TypedDict):
    name: str
    message: str
    stack: NotRequired[str]
    time: float


class RequestEntry(TypedDict):
    index: NotRequired[int | None]
    method: str
    url: str
    resourceType: str
    status: NotRequired[int | None]
    failure: NotRequired[str | None]
    time: float


class ConsoleCounts(TypedDict):
    messages: int
    errors: int
    requests: int


class Console(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    messages: NotRequired[list[ConsoleEntry]]
    errors: NotRequired[list[PageError]]
    requests: NotRequired[list[RequestEntry]]
    counts: NotRequired[ConsoleCounts | None]


class Pdf(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    bytes: int
    base64: NotRequired[str | None]
    path: NotRequired[str | None]


class Armed(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    armed: NotRequired[bool | None]
    files: NotRequired[list[str] | None]
    via: NotRequired[str | None]
    ref: NotRequired[str | None]
    accept: NotRequired[bool | None]
    expiresInMs: NotRequired[int | None]
    hint: NotRequired[str | None]


class TabResult(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]


class EngineStatus(TypedDict):
    state: str
    driverPid: NotRequired[int | None]
    restarts: NotRequired[int]
    lastFailure: NotRequired[str | None]


class Status(TypedDict):
    profile: str
    enabled: NotRequired[bool | None]
    driver: str
    color: NotRequired[str | None]
    state: str
    stateText: NotRequired[str | None]
    running: bool
    tabs: NotRequired[int]
    pid: NotRequired[int | None]
    cdpUrl: NotRequired[str | None]
    cdpPort: NotRequired[int | None]
    detail: NotRequired[str | None]
    headless: NotRequired[bool | None]
    headlessReason: NotRequired[str | None]
    extensionConnected: NotRequired[bool | None]
    relay: NotRequired[Any]
    remote: NotRequired[Any]
    default: NotRequired[bool | None]
    defaultProfile: str
    configProblem: NotRequired[str | None]
    engine: EngineStatus


class ProfileStatus(TypedDict):
    profile: str
    enabled: NotRequired[bool | None]
    driver: str
    color: NotRequired[str | None]
    state: str
    stateText: NotRequired[str | None]
    running: bool
    tabs: NotRequired[int]
    pid: NotRequired[int | None]
    cdpUrl: NotRequired[str | None]
    cdpPort: NotRequired[int | None]
    detail: NotRequired[str | None]
    headless: NotRequired[bool | None]
    headlessReason: NotRequired[str | None]
    extensionConnected: NotRequired[bool | None]
    relay: NotRequired[Any]
    remote: NotRequired[Any]
    default: NotRequired[bool | None]


class Profiles(TypedDict):
    profiles: list[ProfileStatus]
    defaultProfile: str


class AuthState(TypedDict):
    name: str
    profile: str
    savedAt: float
    cookies: int
    origins: list[str]
    sessionStorage: NotRequired[list[str]]
    indexedDb: NotRequired[list[str]]
    problems: NotRequired[list[str]]


class AuthStates(TypedDict):
    states: list[AuthState]


class AuthStateLoaded(TypedDict):
    name: str
    profile: str
    savedAt: float
    cookies: int
    origins: list[str]
    sessionStorage: NotRequired[list[str]]
    indexedDb: NotRequired[list[str]]
    problems: NotRequired[list[str]]
    loadedInto: str


class Offline(TypedDict):
    ok: NotRequired[bool | None]
    targetId: NotRequired[str | None]
    url: NotRequired[str | None]
    title: NotRequired[str | None]
    navigated: NotRequired[bool | None]
    outcome: NotRequired[str | None]
    note: NotRequired[str | None]
    dialogs: NotRequired[list[DialogEntry] | None]
    download: NotRequired[SavedDownload | None]
    popups: NotRequired[list[str] | None]
    waitedMs: NotRequired[int | None]
    waitBoundHit: NotRequired[bool | None]
    offline: bool
    serviceWorkers: NotRequired[list[str]]
