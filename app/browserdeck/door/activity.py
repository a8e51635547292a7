"""The activity log: the first addon, one entry per call at the front door.

After each call it sends one ``events.ActivityEntry`` (``ServiceEvents.api_call``,
which the tray's activity list shows): who called, the call's name, the profile and
tab, what the request named (the act's kind, its refs and the element's role and
name, the key pressed, a navigation's URL) and how it ended. Typed text is noted by
its length only; a field's value never.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from browserdeck.door.call import Call
from browserdeck.errors import BrowserdeckError
from browserdeck.events import ActivityEntry, CallError, CallNotes, call_ended
from browserdeck.results import well_formed
from browserdeck.tabs import QUIET_CLIENTS

# The ways in say a call's status as HTTP does (the API's table, handed in by the
# composition root: this core module cannot import the API).
StatusOf = Callable[[BrowserdeckError], int]
_ELEMENT = "activity.element"


class ActivityLog:
    """Sends one ``ActivityEntry`` per call to ``send``; not for the tray's own calls
    (the panel watching a tab is no one acting: ``tabs.QUIET_CLIENTS``)."""

    def __init__(self, send: Callable[[ActivityEntry], None], status_of: StatusOf) -> None:
        self.send = send
        self.status_of = status_of

    async def before(self, call: Call[Any]) -> None:
        if call.caller.client in QUIET_CLIENTS:
            return
        # The element's role and name as the agent saw it, before the action changes the
        # page (a navigation empties the tab's refs).
        element = await call.element()
        if element is not None:
            call.data[_ELEMENT] = element.describe()

    async def after(self, call: Call[Any]) -> None:
        if call.caller.client in QUIET_CLIENTS:
            return
        error, exc = None, call.error
        if exc is None:
            status = 200
        elif isinstance(exc, BrowserdeckError):
            status = self.status_of(exc)
            # The message may quote page text (a lone surrogate): the log shows it cleaned.
            # The hint as the caller was told it: an MCP agent's row names the tool
            # (browser_snapshot), a CLI call's the command, not the HTTP route.
            via = call.caller.via
            hint = exc.hint_for("api" if via == "gui" else via)
            error = CallError(exc.code, well_formed(exc.message), well_formed(hint))
        elif isinstance(exc, asyncio.CancelledError):
            status = 0  # the caller went away: no answer
        else:
            status = 500
        self.send(
            call_ended(
                call.started,
                client=call.caller.label,
                call=call.name,
                profile=call.profile or "",
                status=status,
                detail=notes_of(call),
                error=error,
            )
        )


def notes_of(call: Call[Any]) -> CallNotes:
    """What the call named: its tab and page, the act's kind, refs and element, the key
    pressed, what was typed (its length only: it may be a password), options chosen."""
    request = call.request
    notes = CallNotes(
        profile=call.profile,
        element=call.data.get(_ELEMENT),
        approval=call.data.get("approval.decision"),  # door/approval/addon.py
    )
    named = getattr(request, "target_id", None)  # the tab asked for, if it was not found
    notes.target_id = call.tab.target_id if call.tab is not None else named
    kind = getattr(request, "kind", None) or getattr(request, "action", None)
    if isinstance(kind, str):
        notes.kind = kind
    for name in ("ref", "start_ref", "end_ref", "key"):
        value = getattr(request, name, None)
        if isinstance(value, str) and value:
            setattr(notes, name, value)
    text = getattr(request, "text", None)
    if kind == "type" and isinstance(text, str):
        notes.typed_chars = len(text)
    values = getattr(request, "values", None)
    if kind == "select" and isinstance(values, list):
        notes.values = [str(v)[:60] for v in values[:5]]
    url = None
    if call.name == "navigate" and kind == "goto":
        url = getattr(request, "url", None)
    elif call.name == "open-tab":  # where the tab went (after redirects), else what was asked
        url = getattr(call.answer, "url", None) or getattr(request, "url", None)
    notes.url = url if isinstance(url, str) and url else None
    return notes
