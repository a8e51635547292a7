"""Plain-Python signals: how the core tells front-ends (tray, panel) what happened.

The core never imports Qt. The GUI connects to these and re-emits them as Qt
signals on its own thread (see gui/bridge.py). Receivers must be quick and must
not raise; an exception in one receiver is logged and does not stop the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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


@dataclass
class CallNotes:
    """What a call named, for the activity log (door/activity.py): the tab and page, the
    act's kind, its refs and the element's role and name, the key pressed. Never a
    secret: typed text is noted as its length only (``typed_chars``)."""

    profile: str | None = None
    target_id: str | None = None
    url: str | None = None
    kind: str | None = None  # the act's or navigation's kind: click, type, back …
    ref: str | None = None
    element: str | None = None  # what the ref points at: 'button "Save"'
    start_ref: str | None = None  # a drag's two refs
    end_ref: str | None = None
    key: str | None = None
    typed_chars: int | None = None
    values: list[str] | None = None  # a select's first values, each cut to 60 characters
    approval: str | None = None  # who allowed or denied it: "allowed once by you, in the tray"


@dataclass(frozen=True)
class CallError:
    """What a failed call answered: the error's stable ``code``, its message and hint."""

    code: str
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class ActivityEntry:
    """One call at the front door (``ServiceEvents.api_call``), built by ``call_ended``:
    ``call`` names it ("act", "open-tab" …: the request's ``name``), whichever way it
    came in. Frozen: one entry goes to every receiver, and to the GUI's thread as it is.
    """

    time: float  # when the call ended (epoch seconds)
    client: str  # X-Browserdeck-Client, a User-Agent product, or the MCP client's name
    status: int  # the HTTP status it answered (or, off HTTP, the one it would); 0: none
    ms: float  # how long it took
    call: str = ""
    profile: str = ""
    detail: CallNotes = field(default_factory=CallNotes)  # what the call said it did
    error: CallError | None = None


@dataclass(frozen=True)
class ApprovalEvent:
    """A risky action waiting for the person, or decided (``ServiceEvents.approval``):
    the activity log shows "waiting for your approval", then who decided what."""

    id: int
    time: float
    agent: str
    profile: str
    target_id: str
    action: str  # 'click button "Pay $49.00" on shop.example'
    why: str  # 'its name says "pay"'
    state: str  # waiting | once | site | denied | cancelled
    by: str = ""  # "you, in the tray", "no answer within 60 s"


def call_ended(
    started: float,
    *,
    client: str,
    status: int,
    detail: CallNotes | None = None,
    error: CallError | None = None,
    call: str = "",
    profile: str = "",
) -> ActivityEntry:
    """The activity entry of a call that began at ``started`` (``time.perf_counter()``)
    and ends now."""
    return ActivityEntry(
        time=time.time(),
        client=client,
        status=status,
        ms=round((time.perf_counter() - started) * 1000, 1),
        call=call,
        profile=profile,
        # A copy: the notes object is the caller's to change, an entry is final.
        detail=replace(detail, values=list(detail.values) if detail.values else None)
        if detail is not None
        else CallNotes(),
        error=error,
    )


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
        # ended=sessions.SessionEnded: an agent session ended (why, and what became of
        # its tabs: closed, kept, given back)
        self.session_ended = Signal("session_ended")
        # profile=str, connected=bool, detail=str|None
        self.extension = Signal("extension")
        # entry=ActivityEntry: one call at the front door, whichever way it came in
        self.api_call = Signal("api_call")
        # level=str ("info"|"warning"|"error"), title=str, message=str
        self.notice = Signal("notice")
        # session=str|None, step=int|None: a recorded session got or finished a step
        # (None: sessions came or went); the Sessions view follows it (recording/)
        self.recording = Signal("recording")
        # profile=str, taken=bool, detail=str|None: the user took a profile's browser over,
        # or handed it back (recording/takeover.py)
        self.takeover = Signal("takeover")
        # entry=ApprovalEvent: a risky action waits for the person, then was decided
        self.approval = Signal("approval")
        # (no kwargs) config saved and applied
        self.config_changed = Signal("config_changed")
