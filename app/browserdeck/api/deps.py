"""What routes need: the service, its front door (``Deck``) and who calls (``Caller``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request

from browserdeck.deck import Caller, Deck

if TYPE_CHECKING:
    from browserdeck.engine import Engine
    from browserdeck.profiles import ProfileContext
    from browserdeck.service import Service


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def engine_of(request: Request) -> Engine:
    engine = service_of(request).engine
    assert engine is not None, "the engine is built before the API"
    return engine


def note(request: Request, **details: Any) -> None:
    """Say what this call did, for the activity log (tray panel, events).

    Kept in the request's scope state; the guard that reports every call
    (``api_call`` events) adds it to its entry. Never put secrets here: typed text
    goes in as its length only.
    """
    state = request.scope.setdefault("state", {})
    activity = state.setdefault("activity", {})
    activity.update({k: v for k, v in details.items() if v is not None})


def deck_of(request: Request) -> Deck:
    deck: Deck = request.app.state.deck
    return deck


def caller_of(request: Request) -> Caller:
    """Who calls (X-Browserdeck-Client, X-Browserdeck-Session); what the deck notes about
    the call goes into the request's activity entry (see ``note``)."""
    state = request.scope.setdefault("state", {})
    return Caller(
        client=request.headers.get("x-browserdeck-client"),
        session=request.headers.get("x-browserdeck-session"),
        notes=state.setdefault("activity", {}),
    )


def profile_of(request: Request, profile: str | None) -> ProfileContext:
    return deck_of(request).profile(caller_of(request), profile)


def client_of(request: Request) -> str | None:
    """Who is calling, for the default tab: X-Browserdeck-Session (the CLI sends
    ``cli:<BROWSERDECK_CLIENT>``), else X-Browserdeck-Client."""
    return caller_of(request).key
