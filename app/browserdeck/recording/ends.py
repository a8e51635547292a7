"""The recorder and the take-over learn of a session's end from the sessions registry.

``Sessions.end`` (sessions.py) is the one way an agent session ends; its clean-ups are
registered with ``on_end``. The service makes a new registry when it starts again after
a stop, so an addon hooks the registry it finds at its next call, not once at build time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from browserdeck.session import Hook
    from browserdeck.sessions import Sessions


class SessionEnds:
    """Runs ``hook(session, reason)`` as the service's current registry ends a session."""

    def __init__(self, name: str, hook: Hook, registry: Callable[[], Sessions] | None) -> None:
        self._name, self._hook, self._registry = name, hook, registry
        self._hooked: Sessions | None = None

    def attach(self) -> None:
        """Hook the registry now in use, once (a call's ``before`` calls this: cheap)."""
        if self._registry is None:
            return
        sessions = self._registry()
        if sessions is not self._hooked:
            sessions.on_end(self._name, self._hook)
            self._hooked = sessions
