"""What routes need: the service, its front door (``Deck``) and who calls (``Caller``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import Request

from browserdeck.deck import Caller, Deck
from browserdeck.events import CallNotes

if TYPE_CHECKING:
    from browserdeck.profiles import ProfileContext
    from browserdeck.service import Service


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def deck_of(request: Request) -> Deck:
    deck: Deck = request.app.state.deck
    return deck


def caller_of(request: Request) -> Caller:
    """Who calls (X-Browserdeck-Client, X-Browserdeck-Session); what the deck notes about
    the call (``Caller.note``) goes into the request's activity entry, which the guard
    reports with the call (``api_call`` events)."""
    state = request.scope.setdefault("state", {})
    return Caller(
        client=request.headers.get("x-browserdeck-client"),
        session=request.headers.get("x-browserdeck-session"),
        notes=state.setdefault("activity", CallNotes()),
    )


def profile_of(request: Request, profile: str | None) -> ProfileContext:
    return deck_of(request).profile(caller_of(request), profile)

