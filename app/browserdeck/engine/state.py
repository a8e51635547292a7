"""Per-tab state: what the page logged, the refs of its latest snapshot, arming.

One ``PageState`` per Playwright ``Page``. Refs also live in a small LRU keyed
by ``cdpUrl::targetId`` so a new ``Page`` object for the same tab (after a
reconnect) starts with the refs the agent already holds, and ref numbers keep
growing instead of starting again at ``e1`` (which would let an old ref name a
new element).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from browserdeck import results as r
from browserdeck.engine.requestlog import RequestLog
from browserdeck.results import ConsoleContext
from browserdeck.util import aio

if TYPE_CHECKING:
    from playwright.async_api import (
        CDPSession,
        ConsoleMessage,
        Dialog,
        Download,
        Frame,
        Page,
        Request,
    )

    from browserdeck.engine.network import TabNet
    from browserdeck.engine.offline import WorkerOffline
    from browserdeck.engine.reftable import Build

log = logging.getLogger(__name__)

RefMode = Literal["aria", "role"]

CONSOLE_MAX = 500
ERRORS_MAX = 200
DIALOGS_MAX = 20
TARGET_MEMORY_MAX = 50
CONTEXTS_WAIT = 0.5  # s, once per tab: its execution contexts after Runtime.enable

_tokens = itertools.count(1)


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a URL ("" for about:blank and the like)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""


@dataclass(slots=True)
class RefInfo:
    """One ref of a snapshot: what the agent sees and how to find the element again."""

    ref: str  # what the agent sees, e.g. "e57" or "f2e57"
    pw_ref: str  # Playwright's own ref for the element (resolved with aria-ref=)
    role: str
    name: str  # "" when the element has no accessible name
    frame_chain: tuple[str, ...]  # Playwright refs of the enclosing <iframe>s, outermost first
    nth: int  # index among elements with this role+name in the same frame
    count: int | None  # how many such elements the snapshot saw; None = unknown (depth)
    interactive: bool

    def describe(self) -> str:
        return f'{self.role} "{self.name}"' if self.name else self.role


# One ref of a table as the snapshot's scan found it: RefInfo's fields after ``ref``
# (Playwright's ref, role, name, frame chain, nth, count, interactive).
RefRow = tuple[str, str, str, tuple[str, ...], int, int | None, bool]


class RefMap(Mapping[str, RefInfo]):
    """A snapshot's refs by the name the agent sees; each ``RefInfo`` is made when first
    asked for. A big page has thousands of refs and an action uses one: making an object
    for each was a third of the ref table's cost on the 2,000-element table
    (docs/performance.md, "Where a big snapshot's time goes"). Which refs exist is settled when
    the snapshot is taken, so nothing here can make a stale ref resolve."""

    __slots__ = ("_made", "_rows")

    def __init__(self, rows: dict[str, RefRow]) -> None:
        self._rows = rows
        self._made: dict[str, RefInfo] = {}

    def __getitem__(self, ref: str) -> RefInfo:
        info = self._made.get(ref)
        if info is None:
            info = self._made[ref] = RefInfo(ref, *self._rows[ref])
        return info

    def __contains__(self, ref: object) -> bool:
        return ref in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def interactive_count(self) -> int:
        return sum(1 for row in self._rows.values() if row[6])

    def pw_refs(self) -> dict[str, str]:
        """Playwright's ref -> the agent's, for every ref."""
        return {row[0]: ref for ref, row in self._rows.items()}


@dataclass
class RefTable:
    """The refs of a tab's latest snapshot: the only refs that tab accepts."""

    mode: RefMode
    refs: RefMap
    page_token: int  # which Page object the snapshot was taken on
    main_epoch: int  # main-frame documents seen when it was taken
    child_epoch: int  # iframe documents seen when it was taken
    selector: str | None = None
    frame: str | None = None
    depth_limited: bool = False
    url: str | None = None  # the page URL when it was taken
    taken_at: float = field(default_factory=time.time)
    # Refs given to an editor's box-less input (engine/actionable.py): the agent's ref ->
    # the input's (role, name), found inside the element the ref resolves to.
    inputs: dict[str, tuple[str, str]] = field(default_factory=dict)

    def scope_text(self) -> str:
        bits = [
            f"selector={self.selector!r}" if self.selector else "",
            f"frame={self.frame!r}" if self.frame else "",
        ]
        return " ".join(b for b in bits if b)


@dataclass
class TargetMemory:
    """What outlives a Page object: the latest refs and the ref numbering."""

    table: RefTable | None = None
    issued_max: int = 0
    # Playwright frame prefix ("" or "f2") -> (offset added to its numbers, document key)
    bases: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    # The ref table's last build (reftable.build_table): what it was built from (the text
    # and its lines' readings, the options, the document), the numbering it left, and its
    # rows and renames.
    last_build: Build | None = None
    # The agent sessions (or clients) that worked in the tab: their routes apply to it
    # (engine/network.py). "" stands for callers without a session.
    owners: set[str] = field(default_factory=set)


class TargetMemories:
    """LRU of TargetMemory by ``cdpUrl::targetId`` (at most 50 tabs)."""

    def __init__(self, size: int = TARGET_MEMORY_MAX) -> None:
        self._size = size
        self._items: OrderedDict[str, TargetMemory] = OrderedDict()

    def get(self, cdp_url: str, target_id: str) -> TargetMemory:
        key = f"{cdp_url}::{target_id}"
        memory = self._items.pop(key, None) or TargetMemory()
        self._items[key] = memory
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return memory

    def forget(self, cdp_url: str, target_id: str) -> None:
        self._items.pop(f"{cdp_url}::{target_id}", None)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class PreparedSnapshot:
    """A first snapshot of a new document, taken right after the navigation (docs/engine.md).

    It makes the agent's next snapshot cheap (Playwright's injected script is compiled
    for the document by then); it is never handed out in place of a new snapshot.
    """

    actions: int  # PageState.actions when it was started
    task: asyncio.Task[dict[str, Any] | None] | None = None


@dataclass
class DialogArm:
    accept: bool
    prompt_text: str | None
    expires: float


class PageState:
    """Everything the engine tracks about one Page."""

    def __init__(
        self, page: Page, cdp_url: str, target_id: str, cdp: CDPSession | None, memory: TargetMemory
    ) -> None:
        self.page = page
        self.cdp_url = cdp_url
        self.target_id = target_id
        self.cdp = cdp
        self.memory = memory
        self.token = next(_tokens)
        self.console: deque[r.ConsoleEntry] = deque(maxlen=CONSOLE_MAX)
        self.errors: deque[r.PageError] = deque(maxlen=ERRORS_MAX)
        self.log = RequestLog()  # its network requests, numbered
        self.requests = self.log.entries
        # Routes and origin rules this tab's session obeys (engine/network.py), once any.
        self.net: TabNet | None = None
        self.unreported_dialogs: deque[r.DialogEntry] = deque(maxlen=DIALOGS_MAX)
        self.dialog_arm: DialogArm | None = None
        self.chooser_arm: asyncio.Task[None] | None = None
        self.downloads: deque[Download] = deque(maxlen=10)
        self.download_seen = asyncio.Event()
        self.main_epoch = 0  # main-frame cross-document navigations
        self.child_epoch = 0  # iframe cross-document navigations
        self.lock = asyncio.Lock()  # snapshot and labelled screenshot take it
        # Execution contexts our own CDP session sees (labels use Playwright's utility world).
        self.contexts: dict[int, dict[str, Any]] = {}
        self.runtime_enabled = False
        self.contexts_seen = asyncio.Event()
        self.cleanup: asyncio.Task[None] | None = None  # label overlay removal in flight
        # Engine calls that may change the page (act, navigate, arming, offline, labels).
        self.actions = 0
        self.prepared: PreparedSnapshot | None = None
        self.hidpi = False  # screenshots of this tab need a clip to come out in CSS pixels
        # POST /set/offline: this tab's emulation, and its origin's service workers.
        self.offline = False
        self.offline_workers: WorkerOffline | None = None
        self.offline_lock = asyncio.Lock()
        self._watched: set[Frame] = set()
        # Set when the tab's renderer crashed (Playwright's "crash"): Playwright keeps this
        # Page dead for good, so only a navigation on a fresh connection revives the tab.
        self.crashed = asyncio.Event()
        # Set when the page does not answer even with its scripts stopped (engine/hung.py).
        self.hung = False

    async def title(self) -> str:
        """The page's title; "" while it cannot be read (navigating).

        Read over the tab's own CDP session: ``page.title()`` is an evaluate in the main
        world, and Playwright's first evaluate in a new document first compiles its
        utility script there (about 20 ms, on the critical path of every navigation).
        """
        if self.cdp is not None:
            try:
                answer = await self.cdp.send(
                    "Runtime.evaluate", {"expression": "document.title", "returnByValue": True}
                )
                value = (answer.get("result") or {}).get("value")
                if isinstance(value, str) and "exceptionDetails" not in answer:
                    return value
            except Exception:  # navigating right now: fall back to Playwright's way
                log.debug("title over CDP failed", exc_info=True)
        try:
            return await self.page.title()
        except Exception:  # navigating right now: the title is not essential
            return ""

    async def settle(self) -> None:
        """Wait for work a previous call left running on the page (the label overlay)."""
        task, self.cleanup = self.cleanup, None
        if task is not None and not task.done():
            await asyncio.shield(task)

    # --- refs ------------------------------------------------------------
    @property
    def table(self) -> RefTable | None:
        return self.memory.table

    @table.setter
    def table(self, value: RefTable | None) -> None:
        self.memory.table = value

    def epoch_key(self, main: bool) -> tuple[int, ...]:
        """A value that changes whenever Playwright's ref counter for such a frame restarts."""
        return (
            (self.token, self.main_epoch)
            if main
            else (self.token, self.main_epoch, self.child_epoch)
        )

    # --- wiring ----------------------------------------------------------
    def attach(self) -> None:
        """Subscribe to the page's events (once, when the state is created)."""
        page = self.page
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("request", self.log.on_request)
        page.on("requestfinished", self.log.on_finished)
        page.on("requestfailed", self.log.on_failed)
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        page.on("frameattached", self._watch_frame)
        for frame in page.frames:
            self._watch_frame(frame)
        if self.cdp is not None:
            self.cdp.on("Runtime.executionContextCreated", self._on_context_created)
            self.cdp.on("Runtime.executionContextDestroyed", self._on_context_destroyed)
            self.cdp.on("Runtime.executionContextsCleared", self._on_contexts_cleared)

    def _watch_frame(self, frame: Frame) -> None:
        if frame in self._watched:
            return
        self._watched.add(frame)
        is_main = frame.parent_frame is None

        def on_navigated(event: dict[str, Any]) -> None:
            # Only a new document restarts Playwright's ref numbering and empties its ref
            # map; same-document navigations (pushState, #hash) keep both. Theirs have no
            # newDocument (None); a new document's is a dict, empty when no request
            # fetched it (a data: URL, about:blank), so its being there is what counts.
            if event.get("error") or event.get("newDocument") is None:
                return
            if is_main:
                self.main_epoch += 1
            else:
                self.child_epoch += 1

        # The public "framenavigated" event does not say whether the document changed;
        # the frame's internal "navigated" event does (playwright==1.65 pinned).
        emitter = getattr(getattr(frame, "_impl_obj", None), "_event_emitter", None)
        if emitter is not None:
            emitter.on("navigated", on_navigated)
        else:  # pragma: no cover - a Playwright without it: treat every navigation as new

            def fallback(f: Frame) -> None:
                if f is frame:
                    on_navigated({"newDocument": True})

            self.page.on("framenavigated", fallback)

    # --- console, errors, requests ----------------------------------------
    def _on_console(self, msg: ConsoleMessage) -> None:
        if msg.page is None:
            # A service worker's message: Playwright hands it to every page under the
            # worker's script folder, and only with a context "console" listener at all.
            # The connection's context listener records those, by origin (BrowserPool).
            return
        self.record_console(msg, "page" if msg.worker is None else "worker")

    def record_console(self, msg: ConsoleMessage, context: ConsoleContext) -> None:
        """Keep one console message, tagged with where it ran: the page or a worker."""
        loc = msg.location
        entry = r.ConsoleEntry(
            type=msg.type,
            text=msg.text[:4000],
            url=loc.get("url", "") if loc else "",
            line=loc.get("lineNumber") if loc else None,
            time=time.time(),
            context=context,
        )
        if msg.worker is not None:
            entry.worker_url = msg.worker.url[:2000]
        self.console.append(entry)

    def _on_page_error(self, error: Exception) -> None:
        self.errors.append(
            r.PageError(
                name=getattr(error, "name", type(error).__name__),
                message=str(getattr(error, "message", error))[:4000],
                stack=(getattr(error, "stack", None) or "")[:4000],
                time=time.time(),
            )
        )

    def open_requests(self) -> list[tuple[Request, float]]:
        """Requests still open, each with its age in seconds (a wait for network quiet)."""
        return self.log.open_requests()

    # --- dialogs and downloads ---------------------------------------------
    def _on_dialog(self, dialog: Dialog) -> None:
        aio.create_task(self._handle_dialog(dialog), name=f"dialog-{self.target_id[:8]}")

    async def _handle_dialog(self, dialog: Dialog) -> None:
        arm = self.dialog_arm
        if arm is not None and arm.expires < time.monotonic():
            arm = self.dialog_arm = None
        self.dialog_arm = None  # an arm answers one dialog
        if arm is not None:
            accept, prompt_text = arm.accept, arm.prompt_text or ""
        else:
            # Nothing armed: never leave the page blocked; the next response reports it.
            # beforeunload is accepted: leaving the page is what the agent asked for.
            accept, prompt_text = dialog.type == "beforeunload", ""
        record = r.DialogEntry(
            type=dialog.type,
            message=dialog.message[:2000],
            time=time.time(),
            armed=arm is not None,
            action="accepted" if accept else "dismissed",
        )
        if dialog.type == "prompt":
            record.default_value = dialog.default_value
            if accept:
                record.prompt_text = prompt_text
        # Recorded before answering: the page resumes as soon as the dialog is answered,
        # and the response that observes that must already see the record.
        self.unreported_dialogs.append(record)
        try:
            if not accept:
                await dialog.dismiss()
            elif dialog.type == "prompt":
                await dialog.accept(prompt_text)
            else:
                await dialog.accept()
        except Exception as exc:  # the page closed under the dialog
            record.action = f"failed: {exc}"

    def _on_download(self, download: Download) -> None:
        self.downloads.append(download)
        self.download_seen.set()

    def take_dialogs(self) -> list[r.DialogEntry]:
        out = list(self.unreported_dialogs)
        self.unreported_dialogs.clear()
        return out

    def cancel_arms(self) -> None:
        self.dialog_arm = None
        if self.chooser_arm is not None:
            self.chooser_arm.cancel()
            self.chooser_arm = None

    # --- Playwright's utility world, as seen by our CDP session --------------
    def _on_context_created(self, event: dict[str, Any]) -> None:
        ctx = event.get("context") or {}
        if isinstance(ctx.get("id"), int):
            self.contexts[ctx["id"]] = ctx
            self.contexts_seen.set()

    def _on_context_destroyed(self, event: dict[str, Any]) -> None:
        self.contexts.pop(event.get("executionContextId", -1), None)

    def _on_contexts_cleared(self, _event: dict[str, Any]) -> None:
        self.contexts.clear()

    def utility_context(self) -> int | None:
        """The main frame's Playwright utility world of *our* connection, if it exists yet."""
        return next(iter(self.utility_contexts(self.target_id)), None)

    async def enable_runtime(self) -> None:
        """Runtime events on *our* session (once per tab), its contexts known: they come in
        one burst before the answer, which Playwright may hand over first."""
        if self.runtime_enabled or self.cdp is None:
            return
        await self.cdp.send("Runtime.enable")
        self.runtime_enabled = True
        if not self.contexts:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.contexts_seen.wait(), CONTEXTS_WAIT)

    def utility_contexts(self, frame_id: str | None = None) -> list[int]:
        """Playwright's utility world in every frame *our* session sees (the main frame,
        the iframes in its process), or in one frame: where its snapshot tagged elements."""
        guid = str(getattr(getattr(self.page, "_impl_obj", None), "_guid", ""))
        return [
            ctx_id
            for ctx_id, ctx in self.contexts.items()
            if str(ctx.get("name", "")).startswith("__playwright_utility_world_")
            and str(ctx.get("name", "")).endswith(guid)
            and (frame_id is None or (ctx.get("auxData") or {}).get("frameId") == frame_id)
        ]
