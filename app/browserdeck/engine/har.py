"""HAR recordings of a tab, or of every tab an agent session works in.

Written by the engine from the requests it sees (Playwright's request events, with each
request's timing, headers and body), not by Playwright's ``tracing.start_har``: that
records a whole browser context (every tab of the profile, other agents' too), one
recording at a time, and on a browser we attached to, ``route_from_har``'s recording
is written only when the context closes, which disconnects the browser. Here each
recording is the caller's own, several run side by side, and ``stop`` writes the file
(HAR 1.2) at once, closing nothing.

While ``redactNetworkSecrets`` is on (the default), credential headers and stored
secrets are replaced (``secrets/redaction.py``) before anything is written.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, urlsplit

from browserdeck import __version__
from browserdeck.engine.actions import write_artifact
from browserdeck.secrets import redaction

if TYPE_CHECKING:
    from collections.abc import Sequence

    from playwright.async_api import Request

    from browserdeck.engine.state import PageState

log = logging.getLogger(__name__)

BODY_MAX = 5 * 1024 * 1024  # larger response bodies are left out of the file (said so)
STOP_WAIT = 10.0  # how long a stop waits for the entries still being read
TEXT_TYPES = ("text/", "json", "javascript", "xml", "html", "css", "svg", "x-www-form-urlencoded")


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="milliseconds")


def is_text(mime: str) -> bool:
    mime = mime.lower()
    return any(t in mime for t in TEXT_TYPES)


def timings(timing: dict[str, float]) -> dict[str, float]:
    """HAR's phases from Playwright's request timing (ms after ``startTime``, -1: none)."""

    def span(start: str, end: str) -> float:
        a, b = timing.get(start, -1), timing.get(end, -1)
        return round(b - a, 3) if a >= 0 and b >= 0 else -1

    request_start = timing.get("requestStart", -1)
    firsts = [timing.get(k, -1) for k in ("domainLookupStart", "connectStart", "requestStart")]
    blocked = next((round(v, 3) for v in firsts if v >= 0), -1)
    return {
        "blocked": blocked,
        "dns": span("domainLookupStart", "domainLookupEnd"),
        "connect": span("connectStart", "connectEnd"),
        "ssl": span("secureConnectionStart", "connectEnd"),
        "send": 0 if request_start >= 0 else -1,
        "wait": span("requestStart", "responseStart"),
        "receive": span("responseStart", "responseEnd"),
    }


@dataclass(frozen=True)
class Saved:
    """A recording written: where, and what it holds."""

    path: str
    entries: int
    pages: int
    pending: int  # requests still open when it stopped (left out)


class HarRecording:
    """One recording: the tabs it watches, the entries so far."""

    def __init__(self, owner: str, *, session: bool, bodies: bool, redact: bool) -> None:
        self.owner = owner
        self.session = session  # every tab the session works in, not one tab
        self.bodies = bodies
        self.redact = redact
        self.started = time.time()
        self.pages: dict[PageState, dict[str, Any]] = {}
        self.entries: list[dict[str, Any]] = []
        self._open: dict[Request, PageState] = {}
        self._reading: set[asyncio.Task[None]] = set()
        self._listeners: list[tuple[PageState, str, Any]] = []
        self.stopped = False

    # --- watching ----------------------------------------------------------------
    def watch(self, state: PageState) -> None:
        if state in self.pages or self.stopped:
            return
        self.pages[state] = {
            "startedDateTime": _iso(time.time()),
            "id": f"page_{len(self.pages) + 1}",
            "title": state.page.url,
            "pageTimings": {"onContentLoad": -1, "onLoad": -1},
        }
        page = state.page

        def on_request(request: Request) -> None:
            self._open[request] = state

        def on_finished(request: Request) -> None:
            self._read(state, request, None)

        def on_failed(request: Request) -> None:
            self._read(state, request, request.failure or "failed")

        page.on("request", on_request)
        page.on("requestfinished", on_finished)
        page.on("requestfailed", on_failed)
        self._listeners += [
            (state, "request", on_request),
            (state, "requestfinished", on_finished),
            (state, "requestfailed", on_failed),
        ]

    def _read(self, state: PageState, request: Request, failure: str | None) -> None:
        if self._open.pop(request, None) is None or self.stopped:
            return  # started before the recording (or after its stop)
        task = asyncio.get_running_loop().create_task(
            self._entry(state, request, failure), name="har-entry"
        )
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)

    # --- one entry ----------------------------------------------------------------
    def _headers(self, pairs: Sequence[Any]) -> list[dict[str, str]]:
        out = [(h["name"], h["value"]) for h in pairs]
        if self.redact:
            out = redaction.headers(out)
        return [{"name": n, "value": v} for n, v in out]

    def _text(self, text: str) -> str:
        return redaction.redact_secrets(text) if self.redact else text

    async def _entry(self, state: PageState, request: Request, failure: str | None) -> None:
        try:
            entry = await self._build(state, request, failure)
        except Exception as exc:  # the tab closed under it: what is known is kept
            log.debug("HAR entry of %s: %s", request.url[:200], exc)
            return
        self.entries.append(entry)

    async def _build(self, state: PageState, request: Request, failure: str | None) -> dict[str, Any]:
        response = None if failure else await request.response()
        timing = cast("dict[str, float]", dict(request.timing or {}))
        started = timing.get("startTime", 0) / 1000 or time.time()
        url = self._text(request.url)
        request_headers = self._headers(await request.headers_array())
        out_request: dict[str, Any] = {
            "method": request.method,
            "url": url,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": request_headers,
            "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query)],
            "headersSize": -1,
            "bodySize": -1,
        }
        post = request.post_data
        if post is not None:
            mime = next((h["value"] for h in request_headers if h["name"].lower() == "content-type"), "")
            out_request["postData"] = {"mimeType": mime, "text": self._text(post)}
            out_request["bodySize"] = len(post.encode())
        phases = timings(timing)
        entry: dict[str, Any] = {
            "pageref": self.pages[state]["id"],
            "startedDateTime": _iso(started),
            "time": round(sum(v for k, v in phases.items() if v > 0 and k != "ssl"), 3),
            "request": out_request,
            "response": await self._response(response, failure),
            "cache": {},
            "timings": phases,
            "_resourceType": request.resource_type,
        }
        if failure:
            entry["_failureText"] = failure
        return entry

    async def _response(self, response: Any, failure: str | None) -> dict[str, Any]:
        if response is None:
            return {
                "status": 0, "statusText": failure or "", "httpVersion": "", "cookies": [],
                "headers": [], "content": {"size": 0, "mimeType": ""}, "redirectURL": "",
                "headersSize": -1, "bodySize": -1,
            }  # fmt: skip
        headers = self._headers(await response.headers_array())
        lower = {h["name"].lower(): h["value"] for h in headers}
        mime = lower.get("content-type", "")
        content: dict[str, Any] = {"size": 0, "mimeType": mime}
        status = response.status
        if self.bodies and status not in (204, 304) and not 300 <= status < 400:
            with contextlib.suppress(Exception):  # a body Chromium no longer holds
                body = await response.body()
                content["size"] = len(body)
                if len(body) > BODY_MAX:
                    content["comment"] = f"body of {len(body)} bytes left out (over {BODY_MAX})"
                elif is_text(mime):
                    content["text"] = self._text(body.decode("utf-8", "replace"))
                else:
                    content["text"] = base64.b64encode(body).decode("ascii")
                    content["encoding"] = "base64"
        return {
            "status": status,
            "statusText": response.status_text,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": headers,
            "content": content,
            "redirectURL": lower.get("location", ""),
            "headersSize": -1,
            "bodySize": content["size"] or -1,
        }

    # --- the end ------------------------------------------------------------------
    async def stop(self) -> Saved:
        """Stop watching, wait for the entries being read, write the file."""
        self.stopped = True
        for state, event, handler in self._listeners:
            with contextlib.suppress(Exception):
                state.page.remove_listener(event, handler)
        self._listeners.clear()
        if self._reading:
            await asyncio.wait(list(self._reading), timeout=STOP_WAIT)
        pending = len(self._open)
        for state, page in self.pages.items():
            with contextlib.suppress(Exception):
                if not state.page.is_closed():
                    page["title"] = await state.title() or state.page.url
        entries = sorted(self.entries, key=lambda e: e["startedDateTime"])
        log_doc: dict[str, Any] = {
            "version": "1.2",
            "creator": {"name": "browserdeck", "version": __version__},
            "pages": list(self.pages.values()),
            "entries": entries,
        }
        if self.redact:
            log_doc["comment"] = (
                "credential headers and stored secrets are [redacted] (redactNetworkSecrets)"
            )
        first = next(iter(self.pages), None)
        data = json.dumps({"log": log_doc}, ensure_ascii=False).encode()
        tab = first.target_id if first is not None else "none"
        path = await asyncio.to_thread(write_artifact, "har", tab, "har", data)
        return Saved(str(path.resolve()), len(entries), len(self.pages), pending)
