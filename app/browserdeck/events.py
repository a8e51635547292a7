"""Plain-Python signals: how the core tells front-ends (tray, panel) what happened.

The core never imports Qt. The GUI connects to these and re-emits them as Qt
signals on its own thread (see gui/bridge.py). Receivers must be quick and must
not raise; an exception in one receiver is logged and does not stop the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

Receiver = Callable[..., None]


@dataclass
class Signal:
    name: str
    _receivers: list[Receiver] = field(default_factory=list)

    def connect(self, receiver: Receiver) -> None:
        if receiver not in self._receivers:
            self._receivers.append(receiver)

    def disconnect(self, receiver: Receiver) -> None:
        if receiver in self._receivers:
            self._receivers.remove(receiver)

    def send(self, **kwargs: Any) -> None:
        for receiver in list(self._receivers):
            try:
                receiver(**kwargs)
            except Exception:
                log.exception("receiver %r of signal %s failed", receiver, self.name)


class ServiceEvents:
    """Every event the service emits. Keyword arguments are documented per signal."""

    def __init__(self) -> None:
        # profile=str, state=str ("stopped"|"starting"|"running"|"crashed"|"error"), detail=str|None
        self.profile_state = Signal("profile_state")
        # profile=str (tabs of that profile changed: opened/closed/navigated)
        self.tabs_changed = Signal("tabs_changed")
        # profile=str, target_id=str, client=str|None: an agent's call acted on (or opened)
        # that tab; the latest one is "the tab the agent last acted on" ("follow agent")
        self.agent_tab = Signal("agent_tab")
        # profile=str, connected=bool, detail=str|None
        self.extension = Signal("extension")
        # entry=dict {time, client, method, path, profile, target, status, ms}
        self.api_call = Signal("api_call")
        # level=str ("info"|"warning"|"error"), title=str, message=str
        self.notice = Signal("notice")
        # (no kwargs) config saved and applied
        self.config_changed = Signal("config_changed")
