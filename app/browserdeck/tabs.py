"""A tab as every layer sees it: the service lists them, drivers (remote.py) build them.

Its own module so a driver below the service can build one without importing the
service (tests/test_layers.py forbids the cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Tab:
    target_id: str
    title: str
    url: str
    type: str = "page"
    status: int | None = None  # the HTTP status of the page it was opened on, when known

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "targetId": self.target_id,
            "title": self.title,
            "url": self.url,
            "type": self.type,
        }
        if self.status is not None:
            out["status"] = self.status
        return out
