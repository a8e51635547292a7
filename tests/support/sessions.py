"""Wait for agent sessions to end in a real in-process service (its ``session_ended``
event), rather than polling the browser's tab list."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from browserdeck.service import Service
from browserdeck.session import SessionEnded


class SessionEnds:
    """Every ``session_ended`` of ``service`` from now on (it lives as long as the service)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.ended: list[SessionEnded] = []
        self._changed = asyncio.Event()
        service.events.session_ended.connect(self._on_ended)

    def _on_ended(self, ended: SessionEnded) -> None:
        self.ended.append(ended)
        self._changed.set()

    async def wait(
        self, matching: Callable[[SessionEnded], bool] = lambda _e: True, *, count: int = 1,
        timeout: float = 30,
    ) -> list[SessionEnded]:
        """The first ``count`` ends that match (waiting for them: "no hang")."""

        async def enough() -> list[SessionEnded]:
            while True:
                found = [e for e in self.ended if matching(e)]
                if len(found) >= count:
                    return found[:count]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(enough(), timeout)
