"""A tab's network requests as the engine lists them: numbered, with status or failure.

Each request gets the tab's next number (``index``, 1 up) and keeps it while the list
(the last ``REQUESTS_MAX``) moves on, so ``GET /network/requests/{index}`` and
``browser_network_request`` name it; the browser's request object stays beside the
entry (never on the wire) for its headers and body. A failure the origin rules caused
is said with the rule (``explain``, set by the tab's network, engine/network.py).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from browserdeck import results as r

if TYPE_CHECKING:
    from playwright.async_api import Request

REQUESTS_MAX = 500


class RequestLog:
    def __init__(self) -> None:
        self.entries: deque[r.RequestEntry] = deque(maxlen=REQUESTS_MAX)
        self.count = 0  # numbers the requests, 1 up
        self._open: dict[Request, r.RequestEntry] = {}
        # A failure in words: the rule or route that caused it (engine/network.py).
        self.explain: Callable[[str, str | None], str | None] | None = None

    def new(
        self, method: str, url: str, resource_type: str, *, failure: str | None = None
    ) -> r.RequestEntry:
        """An entry with the tab's next number (also for a request that never left)."""
        self.count += 1
        return r.RequestEntry(
            index=self.count,
            method=method,
            url=url[:2000],
            resource_type=resource_type,
            status=None,  # set: the answer says "null" (still open), not nothing
            failure=failure,
            time=time.time(),
        )

    def on_request(self, request: Request) -> None:
        entry = self.new(request.method, request.url, request.resource_type)
        entry._request = request
        self.entries.append(entry)
        if len(self._open) < REQUESTS_MAX:
            self._open[request] = entry

    async def on_finished(self, request: Request) -> None:
        entry = self._open.pop(request, None)
        if entry is None:
            return
        try:
            response = await request.response()
        except Exception:  # the page went away; the status is simply unknown
            return
        if response is not None:
            entry.status = response.status

    def on_failed(self, request: Request) -> None:
        entry = self._open.pop(request, None)
        if entry is not None:
            failure = request.failure
            entry.failure = self.explain(request.url, failure) if self.explain else failure

    def open_requests(self) -> list[tuple[Request, float]]:
        """Requests still open, each with its age in seconds (a wait for network quiet)."""
        now = time.time()
        return [(request, now - e.time) for request, e in self._open.items()]
