"""One agent session as the service knows it, and why a session ends (plain data).

The registry that begins and ends sessions is ``sessions.py``; these types are apart so
that every layer can name a session's end (the MCP transport tells an agent why its
session ended) without the registry.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from browserdeck.errors import Conflict

Kind = Literal["mcp", "client"]
# A session names itself with at most this many characters (the pooled remote
# profiles' leases are keyed the same way, remote.py).
ID_MAX = 200
# Ended sessions remembered to tell their next call why (and refuse it).
ENDED_KEPT = 1000


@dataclass(frozen=True)
class EndReason:
    """Why a session ended: a stable ``code`` and the words an agent (and the activity
    log) is told: "this agent session was ended: <words>"."""

    code: str
    words: str
    # Its next call is refused with these words (a named client: once).
    tell: bool = True


CLIENT_ENDED = EndReason("client_ended", "its client ended it", tell=False)
PROCESS_EXITED = EndReason("process_exited", "the process it ran in (browserdeck mcp) exited")
STOPPED_BY_USER = EndReason("stopped_by_user", "stopped by you (the user) with Stop all agents")
SERVICE_STOPPING = EndReason("service_stopping", "browserdeck stopped", tell=False)


def idle(seconds: float, setting: str | None = None) -> EndReason:
    """A session that made no call for ``seconds`` (the limit ``setting`` sets)."""
    minutes = f"{seconds / 60:g} minute{'' if seconds == 60 else 's'}"
    why = f" (the {setting} setting)" if setting else ""
    return EndReason("idle", f"it made no call for {minutes}{why}")


@dataclass
class Session:
    """One agent session: who, how long it lives, and the tabs it opened or reused."""

    id: str
    label: str  # as views show the holder: "claude-code (stdio, pid 4242)", "cli:bob"
    kind: Kind
    pid: int | None = None  # the process it lives as long as (a bridge)
    idle_after: float | None = None  # seconds without a call (None: the setting, or never)
    last_used: float = field(default_factory=time.monotonic)
    opened: dict[str, set[str]] = field(default_factory=dict)  # profile -> targetIds
    reused: dict[str, set[str]] = field(default_factory=dict)

    def holds(self, profile: str, target_id: str) -> bool:
        return target_id in self.opened.get(profile, ()) or target_id in self.reused.get(
            profile, ()
        )


@dataclass(frozen=True)
class SessionEnded:
    """What ending one session did (``Sessions.end``; the ``session_ended`` event)."""

    session: str
    label: str
    kind: Kind
    reason: EndReason
    closed_tabs: int = 0  # tabs it opened, closed
    kept_tabs: int = 0  # tabs it opened that the user marked keep, left open
    given_back: int = 0  # tabs it reused (or opened and another session uses), left open


Hook = Callable[[Session, EndReason], "Awaitable[object] | None"]
# Ends the sessions a way in holds that ``Sessions`` does not know (an MCP session that
# made no call yet), telling them why; how many it ended.
AgentReleaser = Callable[[EndReason], Awaitable[int]]


class SessionEndedError(Conflict):
    """A call of a session that has ended: says why, and what to do."""

    code = "session_ended"


class EndedLog:
    """Why recently ended sessions ended, and who they were, by the key their next
    request names (bounded)."""

    def __init__(self) -> None:
        self._why: OrderedDict[str, tuple[EndReason, str | None]] = OrderedDict()

    def remember(self, key: str, reason: EndReason, who: str | None = None) -> None:
        """``who``: the client's name, to name the agent when its next call is refused."""
        self._why[key] = (reason, who)
        while len(self._why) > ENDED_KEPT:
            self._why.popitem(last=False)

    def why(self, key: str | None) -> EndReason | None:
        ended = self._why.get(key) if key is not None else None
        return ended[0] if ended is not None else None

    def who(self, key: str) -> str | None:
        ended = self._why.get(key)
        return ended[1] if ended is not None else None

    def take(self, key: str) -> EndReason | None:
        """Why ``key`` ended, forgotten as it is said (a name that may begin anew)."""
        ended = self._why.pop(key, None)
        return ended[0] if ended is not None else None


def ended_error(reason: EndReason, hint: str) -> SessionEndedError:
    """The refusal of a call of a session that ended: why, and what to do."""
    return SessionEndedError(f"this agent session was ended: {reason.words}", hint=hint)


def session_key(raw: str | None) -> str:
    """The id a session is known by (``X-Browserdeck-Session`` as sent, bounded)."""
    return (raw or "").strip()[:ID_MAX]


def client_label(client: str | None, session: str) -> str:
    """How views name a session that named itself: ``cli:bob``, ``bot (run-7)``."""
    sid = session_key(session)
    if sid.startswith("cli:") or not client:
        return sid[:60]
    return f"{client[:40]} ({sid[:40]})"
